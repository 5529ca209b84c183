"""One moss runtime per process and CUDA device, created on first use.

The runtime reads its kernels from $MOSS_KERNELS_DIR and its GEMM whitelist
from $MOSS_CODEC_GEMM_CONFIG (the C API reads that variable itself). With
neither set, an installed wheel's bundled kernels and their whitelist serve;
without those either, no generated kernels: every GEMM takes the cuBLASLt
fallback and attention is unavailable. Creating it loads modules and reserves workspace, which a
CUDA graph capture cannot record: call `load_runtime` (or any op, eagerly)
before capturing.

Runtimes live as long as the process: graphs captured with them keep using
their workspace, and destroying one at interpreter exit would race with
CUDA's own teardown.
"""

from __future__ import annotations

import threading
from typing import Optional, Union

import torch

from . import _capi

_lock = threading.Lock()
_handles: dict[int, int] = {}

DeviceLike = Union[torch.device, str, int, None]




def _device_index(device: DeviceLike) -> int:
    if device is None:
        return torch.cuda.current_device()
    device = torch.device(device)
    if device.type != "cuda":
        raise ValueError(f"moss runs on CUDA devices, not {device}")
    return torch.cuda.current_device() if device.index is None else device.index


def load_runtime(device: DeviceLike = None) -> int:
    """The runtime handle of `device`, created in its primary context on the
    first call. Raises MossError (manifest, cache key, CUDA) on failure."""
    index = _device_index(device)
    handle = _handles.get(index)
    if handle is not None:
        return handle
    with _lock:
        if index not in _handles:
            with torch.cuda.device(index):
                if torch.cuda.is_current_stream_capturing():
                    raise RuntimeError(
                        f"moss: the runtime of cuda:{index} does not exist yet and cannot be "
                        "created during CUDA graph capture (it loads modules and reserves "
                        "workspace); call moss_kernels.load_runtime() or run the op once "
                        "eagerly before capturing"
                    )
                _handles[index] = _capi.create(*_capi.kernels_and_whitelist())
        return _handles[index]


def gemm_is_selected(m: int, n: int, k: int, mode: int, device: DeviceLike = None) -> bool:
    """True when moss::ffn_gemm of this shape runs a generated kernel (given
    16-byte aligned tensors), False when it takes the cuBLASLt fallback."""
    handle = load_runtime(device)
    return bool(_capi.library().moss_gemm_is_selected(handle, m, n, k, int(mode)))


def layernorm_gemm_is_selected(m: int, n: int, k: int, mode: int, device: DeviceLike = None) -> bool:
    """gemm_is_selected for moss::layernorm_gemm (mode: its epilogue, 0 or 1)."""
    handle = load_runtime(device)
    return bool(_capi.library().moss_layernorm_gemm_is_selected(handle, m, n, k, int(mode)))


def qkv_rope_cache_is_selected(batch: int, length: int, d_model: int, device: DeviceLike = None) -> bool:
    """True when moss::qkv_rope_cache of these sizes runs a generated kernel."""
    handle = load_runtime(device)
    return bool(_capi.library().moss_qkv_rope_cache_is_selected(handle, batch, length, d_model))
