"""torch.library custom ops over the C API.

    moss::ffn_gemm(x, w, scale, residual, mode, live=None) -> out [..., N]
    moss::layernorm_gemm(x, gamma, beta, eps, w, mode) -> out [..., N]
    moss::streaming_attention(q, k, v, mask, skip_empty_tiles=False) -> out [B,H,T,D]
    moss::streaming_attention_positions(q, k, v, slot_positions, query_positions,
                                        skip_empty_tiles=False) -> out [B,H,T,D]

Each op is one opaque call into libmoss_runtime on the current CUDA stream;
the runtime picks the generated kernel or the cuBLASLt fallback by shape, so
no dispatch logic is left for Dynamo to trace and B, T and M stay symbolic
under torch.compile(dynamic=True). The fake (meta) implementations return
exactly the shapes and strides of the real ones.

Checks here cover what only Python knows (dtype, device, rank, matching
shapes, contiguity the C API assumes without being able to see it); the C
API checks the rest (head size, alignment, strides, overlap, size limits) and
its message comes back as MossError.
"""

# No `from __future__ import annotations`: custom_op infers the schema from
# the annotations, which are plain objects this way.
import math
from typing import Callable, NoReturn, Optional, TypeVar

import torch
from torch import Tensor

from . import _capi
from .runtime import load_runtime

_Result = TypeVar("_Result")


def _exact_stride_tags() -> tuple:
    # The C API reads raw pointers and strides: Inductor must hand the ops
    # tensors laid out exactly as in eager (no padded or reordered strides).
    for name in ("needs_exact_strides", "needs_fixed_stride_order"):
        tag = getattr(torch.Tag, name, None)
        if tag is not None:
            return (tag,)
    return ()


_TAGS = _exact_stride_tags()


# ---------------------------------------------------------------- checks ---


def _fail(op: str, message: str) -> NoReturn:
    raise ValueError(f"{op}: {message}")


def _check_dtype(op: str, name: str, t: Tensor, dtype: torch.dtype = torch.bfloat16) -> None:
    if t.dtype != dtype:
        raise TypeError(f"{op}: {name} must be {dtype}, got {t.dtype}")


def _check_placement(op: str, named: dict[str, Optional[Tensor]]) -> None:
    """Real tensors only: every operand on the first one's CUDA device."""
    (first_name, first), *others = ((n, t) for n, t in named.items() if t is not None)
    if first.device.type != "cuda":
        _fail(op, f"{first_name} is on {first.device}; moss runs on CUDA devices (sm_90a)")
    for name, t in others:
        if t.device != first.device:
            _fail(op, f"{name} is on {t.device} but {first_name} on {first.device}")


def _check_contiguous(op: str, named: dict[str, Optional[Tensor]]) -> None:
    for name, t in named.items():
        if t is not None and not t.is_contiguous():
            _fail(
                op,
                f"{name} must be contiguous (row-major), got shape {tuple(t.shape)} with strides "
                f"{t.stride()}; call .contiguous() first",
            )


def _on_device(device: torch.device, call: Callable[[], _Result]) -> _Result:
    # The C API resolves the legacy default stream (handle 0) through the
    # current device, so that device must be the tensors'.
    if device.index == torch.cuda.current_device():
        return call()
    with torch.cuda.device(device):
        return call()


def _pointer(t: Optional[Tensor]) -> Optional[int]:
    return None if t is None else t.data_ptr()


# -------------------------------------------------------------- ffn_gemm ---


def _check_x_and_w(op: str, x: Tensor, w: Tensor) -> tuple[int, int]:
    """x [..., K] and w [N, K], bf16; returns (N, K)."""
    _check_dtype(op, "x", x)
    _check_dtype(op, "w", w)
    if x.dim() < 1:
        _fail(op, "x must be [..., K], got a 0-d tensor")
    if w.dim() != 2:
        _fail(op, f"w must be [N, K], got shape {tuple(w.shape)}")
    n, k = w.shape
    if x.shape[-1] != k:
        _fail(op, f"x is [..., {x.shape[-1]}] but w is [{n}, {k}]: K differs")
    return n, k


def _check_ffn_gemm(x: Tensor, w: Tensor, scale: Optional[Tensor], residual: Optional[Tensor], mode: int,
                    live: Optional[Tensor]) -> None:
    """Metadata checks shared by the real and the fake implementation."""
    op = "moss::ffn_gemm"
    if mode not in tuple(_capi.Epilogue):
        _fail(op, f"mode must be 0 (none), 1 (gelu) or 2 (layerscale_residual), got {mode}")
    n, _ = _check_x_and_w(op, x, w)
    if mode != _capi.Epilogue.LAYERSCALE_RESIDUAL:
        if scale is not None or residual is not None or live is not None:
            _fail(op, "scale, residual and live are read only by mode 2 (layerscale_residual); pass None with "
                  f"mode {mode}")
        return
    if live is not None:
        _check_dtype(op, "live", live, torch.bool)
        if tuple(live.shape) != tuple(x.shape[:-1]):
            _fail(op, f"live must be x's leading shape {tuple(x.shape[:-1])}, got {tuple(live.shape)}")
    if scale is None or residual is None:
        _fail(op, "mode 2 (layerscale_residual) needs scale [N] and residual [..., N]")
    _check_dtype(op, "scale", scale)
    _check_dtype(op, "residual", residual)
    if tuple(scale.shape) != (n,):
        _fail(op, f"scale must be [{n}], got shape {tuple(scale.shape)}")
    if tuple(residual.shape) != (*x.shape[:-1], n):
        _fail(op, f"residual must be [..., {n}] with x's leading shape {tuple(x.shape[:-1])}, got {tuple(residual.shape)}")


@torch.library.custom_op("moss::ffn_gemm", mutates_args=(), tags=_TAGS)
def ffn_gemm(x: Tensor, w: Tensor, scale: Optional[Tensor], residual: Optional[Tensor], mode: int,
             live: Optional[Tensor] = None) -> Tensor:
    """out[..., n] = epilogue(x[..., :] . w[n, :]), FP32 accumulation, bf16 out.

    x [..., K], w [N, K] (a torch Linear weight), bf16, contiguous.
    mode 0: v = bf16(acc); 1: exact erf-GELU of v; 2: y = bf16(bf16(v * scale) + residual)
    with scale [N] and residual [..., N] (None otherwise), and with live (bool,
    x's leading shape) y * live: a decoder layer's padding frames leave it as
    zeros.
    """
    _check_ffn_gemm(x, w, scale, residual, mode, live)
    named = {"x": x, "w": w, "scale": scale, "residual": residual, "live": live}
    return _run_gemm("moss::ffn_gemm", "moss_ffn_gemm_live", named, lambda m, n, k, out: (
        m, n, k, mode, x.data_ptr(), w.data_ptr(), _pointer(scale), _pointer(residual), _pointer(live),
        out.data_ptr()))


def _run_gemm(op: str, entry: str, named: dict[str, Optional[Tensor]],
              arguments: Callable[[int, int, int, Tensor], tuple]) -> Tensor:
    """The C API's GEMM entry point `entry` on the current stream:
    arguments(m, n, k, out) are its arguments between the handle and the
    stream; out is [..., N] for x [..., K] and w [N, K] of `named`."""
    _check_placement(op, named)
    _check_contiguous(op, named)
    x, w = named["x"], named["w"]
    n, k = w.shape
    out = x.new_empty((*x.shape[:-1], n))
    m = math.prod(x.shape[:-1])
    if m == 0:
        return out
    handle = load_runtime(x.device)
    stream = torch.cuda.current_stream(x.device).cuda_stream
    call = getattr(_capi.library(), entry)
    status = _on_device(x.device, lambda: call(handle, *arguments(m, n, k, out), stream))
    _capi.check(status, entry, handle)
    return out


@ffn_gemm.register_fake
def _ffn_gemm_fake(x: Tensor, w: Tensor, scale: Optional[Tensor], residual: Optional[Tensor], mode: int,
                   live: Optional[Tensor] = None) -> Tensor:
    _check_ffn_gemm(x, w, scale, residual, mode, live)
    return x.new_empty((*x.shape[:-1], w.shape[0]))


# -------------------------------------------------------- layernorm_gemm ---


def _check_layernorm_gemm(x: Tensor, gamma: Tensor, beta: Tensor, eps: float, w: Tensor, mode: int) -> None:
    """Metadata checks shared by the real and the fake implementation."""
    op = "moss::layernorm_gemm"
    if mode not in (_capi.Epilogue.NONE, _capi.Epilogue.GELU):
        _fail(op, f"mode must be 0 (none) or 1 (gelu) after the LayerNorm, got {mode}")
    if not (math.isfinite(eps) and eps >= 0):
        _fail(op, f"eps must be finite and >= 0, got {eps}")
    _, k = _check_x_and_w(op, x, w)
    for name, t in (("gamma", gamma), ("beta", beta)):
        _check_dtype(op, name, t)
        if tuple(t.shape) != (k,):
            _fail(op, f"{name} must be [{k}], got shape {tuple(t.shape)}")


@torch.library.custom_op("moss::layernorm_gemm", mutates_args=(), tags=_TAGS)
def layernorm_gemm(x: Tensor, gamma: Tensor, beta: Tensor, eps: float, w: Tensor, mode: int) -> Tensor:
    """out[..., n] = epilogue(LN(x)[..., :] . w[n, :]): F.layer_norm(x, [K], gamma,
    beta, eps) (FP32 statistics, rounded to bf16) fused into the GEMM.

    x [..., K], gamma and beta [K], w [N, K], bf16, contiguous; mode 0 (none)
    or 1 (exact erf-GELU).
    """
    _check_layernorm_gemm(x, gamma, beta, eps, w, mode)
    named = {"x": x, "gamma": gamma, "beta": beta, "w": w}
    return _run_gemm("moss::layernorm_gemm", "moss_layernorm_gemm", named, lambda m, n, k, out: (
        m, n, k, mode, x.data_ptr(), gamma.data_ptr(), beta.data_ptr(), eps, w.data_ptr(), out.data_ptr()))


@layernorm_gemm.register_fake
def _layernorm_gemm_fake(x: Tensor, gamma: Tensor, beta: Tensor, eps: float, w: Tensor, mode: int) -> Tensor:
    _check_layernorm_gemm(x, gamma, beta, eps, w, mode)
    return x.new_empty((*x.shape[:-1], w.shape[0]))


# --------------------------------------------------- streaming_attention ---


def _check_attention(q: Tensor, k: Tensor, v: Tensor, mask: Tensor) -> None:
    """Metadata checks shared by the real and the fake implementation."""
    op = "moss::streaming_attention"
    for name, t in (("q", q), ("k", k), ("v", v)):
        _check_dtype(op, name, t)
    _check_dtype(op, "mask", mask, torch.bool)
    for name, t in (("q", q), ("k", k), ("v", v), ("mask", mask)):
        if t.dim() != 4:
            _fail(op, f"{name} must be 4-d, got shape {tuple(t.shape)}")
    b, h, t_len, d = q.shape
    s = k.shape[2]
    if tuple(k.shape) != (b, h, s, d) or tuple(v.shape) != tuple(k.shape):
        _fail(op, f"k and v must be [B, H, S, D] = [{b}, {h}, S, {d}], got {tuple(k.shape)} and {tuple(v.shape)}")
    if tuple(mask.shape) != (b, 1, t_len, s):
        _fail(op, f"mask must be [B, 1, T, S] = [{b}, 1, {t_len}, {s}], got {tuple(mask.shape)}")


def _bthd_output(q: Tensor) -> Tensor:
    """Logical [B,H,T,D] over [B,T,H,D] storage: [B,T,H*D] is a free view."""
    b, h, t, d = q.shape
    return q.new_empty_strided((b, h, t, d), (t * h * d, d, h * d, 1))


def _outer_strides(t: Tensor, dims: tuple[int, ...]) -> tuple[int, ...]:
    # A size-1 dim's stride is never stepped; 0 keeps the C API's
    # "multiple of 8" check from tripping on whatever torch left there.
    return tuple(0 if t.shape[i] == 1 else t.stride(i) for i in dims)


@torch.library.custom_op("moss::streaming_attention", mutates_args=(), tags=_TAGS)
def streaming_attention(q: Tensor, k: Tensor, v: Tensor, mask: Tensor, skip_empty_tiles: bool = False) -> Tensor:
    """Masked attention over a ring KV cache, scale D^-0.5.

    q [B,H,T,D], k and v [B,H,S,D] bf16 (any strides with D innermost and
    the others multiples of 8), mask [B,1,T,S] bool (True: key allowed, any
    strides). Returns logical [B,H,T,D] bf16 stored as [B,T,H,D]
    (strides (T*H*D, D, H*D, 1)); a row with no allowed key is exactly zero.
    Keys the mask hides must hold finite values (zero-initialise a cache).
    skip_empty_tiles skips key tiles the mask hides entirely (same result).
    """
    _check_attention(q, k, v, mask)
    _check_placement("moss::streaming_attention", {"q": q, "k": k, "v": v, "mask": mask})
    out = _bthd_output(q)
    if out.numel() == 0:
        return out
    return _run_attention(q, k, v, out, skip_empty_tiles,
                          # bool is one byte: element strides are the byte strides the C API wants.
                          mask=mask.data_ptr(), mask_stride=_outer_strides(mask, (0, 2, 3)))


def _run_attention(q: Tensor, k: Tensor, v: Tensor, out: Tensor, skip_empty_tiles: bool, **mask_form) -> Tensor:
    """One moss_streaming_attention call; `mask_form` names the mask's fields."""
    b, h, t, d = q.shape
    args = _capi.AttentionArgs(
        B=b, H=h, T=t, S=k.shape[2], D=d,
        q=q.data_ptr(), q_stride=_outer_strides(q, (0, 1, 2)) + (q.stride(3),),
        k=k.data_ptr(), k_stride=_outer_strides(k, (0, 1, 2)) + (k.stride(3),),
        v=v.data_ptr(), v_stride=_outer_strides(v, (0, 1, 2)) + (v.stride(3),),
        out=out.data_ptr(), layout=_capi.Layout.BTHD, skip_empty_tiles=int(skip_empty_tiles), scale=0.0,
        **mask_form,
    )
    handle = load_runtime(q.device)
    stream = torch.cuda.current_stream(q.device).cuda_stream
    status = _on_device(q.device, lambda: _capi.library().moss_streaming_attention(handle, args, stream))
    _capi.check(status, "moss_streaming_attention", handle)
    return out


@streaming_attention.register_fake
def _streaming_attention_fake(q: Tensor, k: Tensor, v: Tensor, mask: Tensor, skip_empty_tiles: bool = False) -> Tensor:
    _check_attention(q, k, v, mask)
    return _bthd_output(q)


# ------------------------------------------ streaming_attention_positions ---


def _check_attention_positions(q: Tensor, k: Tensor, v: Tensor, slot_positions: Tensor,
                               query_positions: Tensor) -> None:
    """Metadata checks shared by the real and the fake implementation."""
    op = "moss::streaming_attention_positions"
    for name, t in (("q", q), ("k", k), ("v", v)):
        _check_dtype(op, name, t)
        if t.dim() != 4:
            _fail(op, f"{name} must be 4-d, got shape {tuple(t.shape)}")
    for name, t in (("slot_positions", slot_positions), ("query_positions", query_positions)):
        _check_dtype(op, name, t, torch.int64)
    b, h, t_len, d = q.shape
    s = k.shape[2]
    if tuple(k.shape) != (b, h, s, d) or tuple(v.shape) != tuple(k.shape):
        _fail(op, f"k and v must be [B, H, S, D] = [{b}, {h}, S, {d}], got {tuple(k.shape)} and {tuple(v.shape)}")
    if tuple(slot_positions.shape) != (b, s):
        _fail(op, f"slot_positions must be [B, S] = [{b}, {s}], got {tuple(slot_positions.shape)}")
    if tuple(query_positions.shape) != (b, t_len):
        _fail(op, f"query_positions must be [B, T] = [{b}, {t_len}], got {tuple(query_positions.shape)}")
    for name, t in (("slot_positions", slot_positions), ("query_positions", query_positions)):
        if t.shape[1] > 1 and t.stride(1) != 1:
            _fail(op, f"{name} must be contiguous along its last dim, got strides {t.stride()}")


@torch.library.custom_op("moss::streaming_attention_positions", mutates_args=(), tags=_TAGS)
def streaming_attention_positions(q: Tensor, k: Tensor, v: Tensor, slot_positions: Tensor, query_positions: Tensor,
                                  skip_empty_tiles: bool = False) -> Tensor:
    """streaming_attention with the mask built in the kernel from positions.

    slot_positions [B,S] int64: the absolute position of the frame each
    ring slot holds (negative: empty); query_positions [B,T] int64: each
    query frame's position (negative: a padding frame, whose row is zero).
    Key s is allowed for query t where 0 <= slot_positions[b,s] <=
    query_positions[b,t] < slot_positions[b,s] + S: RingKvCache.mask's rule,
    with the same result bit for bit and no [B,1,T,S] mask built.
    """
    _check_attention_positions(q, k, v, slot_positions, query_positions)
    _check_placement("moss::streaming_attention_positions", {
        "q": q, "k": k, "v": v, "slot_positions": slot_positions, "query_positions": query_positions})
    out = _bthd_output(q)
    if out.numel() == 0:
        return out
    return _run_attention(q, k, v, out, skip_empty_tiles,
                          slot_positions=slot_positions.data_ptr(),
                          slot_positions_stride_b=_outer_strides(slot_positions, (0,))[0],
                          query_positions=query_positions.data_ptr(),
                          query_positions_stride_b=_outer_strides(query_positions, (0,))[0])


@streaming_attention_positions.register_fake
def _streaming_attention_positions_fake(q: Tensor, k: Tensor, v: Tensor, slot_positions: Tensor,
                                        query_positions: Tensor, skip_empty_tiles: bool = False) -> Tensor:
    _check_attention_positions(q, k, v, slot_positions, query_positions)
    return _bthd_output(q)
