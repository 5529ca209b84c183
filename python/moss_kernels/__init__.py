"""moss kernels from PyTorch: custom ops over libmoss_runtime's C API.

    import moss_kernels                      # registers torch.ops.moss.*
    y = moss_kernels.ffn_gemm(x, w, None, None, moss_kernels.Epilogue.GELU)
    u = moss_kernels.layernorm_gemm(x, gamma, beta, 1e-5, w, moss_kernels.Epilogue.GELU)
    o = moss_kernels.streaming_attention(q, k_cache, v_cache, mask)
    o = moss_kernels.streaming_attention_positions(q, k_cache, v_cache, slot_positions, query_positions)
    q = moss_kernels.qkv_rope_cache(x, gamma, beta, 1e-5, w_qkv, positions, live, k_cache, v_cache, slot_positions)

Environment: MOSS_RUNTIME_LIB (path of libmoss_runtime.so; default: the
wheel's, a build of this checkout, then the dynamic loader), MOSS_KERNELS_DIR
(moss-aot output) and MOSS_CODEC_GEMM_CONFIG (the whitelist it was built
from; with neither set, the wheel's bundled kernels).
"""

from ._version import __version__
from ._capi import CacheKey, Epilogue, LibraryMismatch, LibraryNotFound, MossError, MossStatus, cache_key, runtime_version
from .ops import ffn_gemm, layernorm_gemm, streaming_attention, streaming_attention_positions
from .qkv_ops import qkv_rope_cache
from .runtime import gemm_is_selected, layernorm_gemm_is_selected, load_runtime, qkv_rope_cache_is_selected

__all__ = [
    "__version__",
    "CacheKey",
    "Epilogue",
    "LibraryMismatch",
    "LibraryNotFound",
    "MossError",
    "MossStatus",
    "cache_key",
    "ffn_gemm",
    "gemm_is_selected",
    "layernorm_gemm",
    "layernorm_gemm_is_selected",
    "load_runtime",
    "qkv_rope_cache",
    "qkv_rope_cache_is_selected",
    "runtime_version",
    "streaming_attention",
    "streaming_attention_positions",
]
