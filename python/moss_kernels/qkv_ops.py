"""moss::qkv_rope_cache: a decoder layer's LayerNorm, QKV projection, RoPE
and ring-cache write in one call (moss_qkv_rope_cache, whitelist mode 5).

    q = moss::qkv_rope_cache(x, gamma, beta, eps, w_qkv, positions, live,
                             k_cache, v_cache, slot_positions)

It computes what the reference layer does with
`in_proj(norm1(x))`, `apply_rope` on q and k and `RingKvCache.append`
(python/moss_kernels/decoder_layer.py, ring_cache.py), with the rounding
points stated in moss_runtime.h, and mutates the three cache tensors in
place (so torch.compile functionalizes them like any in-place op).
"""

# No `from __future__ import annotations`: custom_op reads the annotations.
import ctypes

import torch
from torch import Tensor

from . import _capi
from .ops import _TAGS, _check_contiguous, _check_dtype, _check_placement, _fail, _on_device
from .runtime import load_runtime

_OP = "moss::qkv_rope_cache"
_HEAD_DIM = 64  # moss::config::kRopeHeadDim


def _check_qkv_rope_cache(x: Tensor, gamma: Tensor, beta: Tensor, eps: float, w: Tensor, positions: Tensor,
                          live: Tensor, k_cache: Tensor, v_cache: Tensor, slot_positions: Tensor) -> None:
    """Metadata checks shared by the real and the fake implementation."""
    for name, t in (("x", x), ("gamma", gamma), ("beta", beta), ("w", w), ("k_cache", k_cache),
                    ("v_cache", v_cache)):
        _check_dtype(_OP, name, t)
    _check_dtype(_OP, "positions", positions, torch.int64)
    _check_dtype(_OP, "slot_positions", slot_positions, torch.int64)
    _check_dtype(_OP, "live", live, torch.bool)
    if x.dim() != 3:
        _fail(_OP, f"x must be [B, T, d], got shape {tuple(x.shape)}")
    b, t, d = x.shape
    if d % _HEAD_DIM != 0:
        _fail(_OP, f"d = {d} must be a multiple of {_HEAD_DIM} (heads of {_HEAD_DIM})")
    h = d // _HEAD_DIM
    expected = {"gamma": (d,), "beta": (d,), "w": (3 * d, d), "positions": (b, t), "live": (b, t)}
    for name, tensor in (("gamma", gamma), ("beta", beta), ("w", w), ("positions", positions), ("live", live)):
        if tuple(tensor.shape) != expected[name]:
            _fail(_OP, f"{name} must be {list(expected[name])}, got shape {tuple(tensor.shape)}")
    if k_cache.dim() != 4 or tuple(k_cache.shape[:2]) != (b, h) or k_cache.shape[3] != _HEAD_DIM:
        _fail(_OP, f"k_cache must be [B, H, S, 64] = [{b}, {h}, S, 64], got shape {tuple(k_cache.shape)}")
    s = k_cache.shape[2]
    if tuple(v_cache.shape) != tuple(k_cache.shape):
        _fail(_OP, f"v_cache must be shaped as k_cache {tuple(k_cache.shape)}, got {tuple(v_cache.shape)}")
    if tuple(slot_positions.shape) != (b, s):
        _fail(_OP, f"slot_positions must be [B, S] = [{b}, {s}], got shape {tuple(slot_positions.shape)}")
    if t > s:
        _fail(_OP, f"a chunk of T = {t} frames does not fit a ring of S = {s} slots")
    _check_contiguous(_OP, {"x": x, "gamma": gamma, "beta": beta, "w": w, "positions": positions, "live": live,
                            "k_cache": k_cache, "v_cache": v_cache, "slot_positions": slot_positions})


def _check_positions_on_host(positions: Tensor) -> None:
    """Eager calls only (a CUDA graph capture cannot read device data): the
    kernel leaves a batch row with bad positions out of the cache without a
    word, so eager use gets the error."""
    if positions.numel() == 0 or torch.cuda.is_current_stream_capturing():
        return
    first = positions[:, :1]
    steps = torch.arange(positions.shape[1], device=positions.device)
    bad = (positions < 0).any(dim=1) | (positions != first + steps).any(dim=1)
    rows = bad.nonzero().flatten().tolist()
    if rows:
        _fail(_OP, f"positions of batch rows {rows} are negative or not consecutive; nothing was written")


@torch.library.custom_op(_OP, mutates_args=("k_cache", "v_cache", "slot_positions"), tags=_TAGS)
def qkv_rope_cache(x: Tensor, gamma: Tensor, beta: Tensor, eps: float, w: Tensor, positions: Tensor, live: Tensor,
                   k_cache: Tensor, v_cache: Tensor, slot_positions: Tensor) -> Tensor:
    """Returns q [B, T, H, 64] (contiguous: the attention's BTHD q) and
    writes k and v into the ring caches at slot position % S and each
    frame's slot-table entry (-1 for a padding frame, live False).

    x [B, T, d], gamma and beta [d], w [3d, d], caches [B, H, S, 64] bf16;
    positions [B, T] int64 (>= 0, consecutive along T), live [B, T] bool,
    slot_positions [B, S] int64; all contiguous, T <= S.
    """
    _check_qkv_rope_cache(x, gamma, beta, eps, w, positions, live, k_cache, v_cache, slot_positions)
    _check_placement(_OP, {"x": x, "gamma": gamma, "beta": beta, "w": w, "positions": positions, "live": live,
                           "k_cache": k_cache, "v_cache": v_cache, "slot_positions": slot_positions})
    b, t, d = x.shape
    q = x.new_empty((b, t, d // _HEAD_DIM, _HEAD_DIM))
    if q.numel() == 0:
        return q
    _check_positions_on_host(positions)
    cache = _capi.RingCache(k=k_cache.data_ptr(), v=v_cache.data_ptr(), slot_positions=slot_positions.data_ptr(),
                            capacity=k_cache.shape[2])
    handle = load_runtime(x.device)
    stream = torch.cuda.current_stream(x.device).cuda_stream
    status = _on_device(x.device, lambda: _capi.library().moss_qkv_rope_cache(
        handle, b, t, d, x.data_ptr(), gamma.data_ptr(), beta.data_ptr(), eps, w.data_ptr(), positions.data_ptr(),
        live.data_ptr(), q.data_ptr(), ctypes.byref(cache), stream))
    _capi.check(status, "moss_qkv_rope_cache", handle)
    return q


@qkv_rope_cache.register_fake
def _qkv_rope_cache_fake(x: Tensor, gamma: Tensor, beta: Tensor, eps: float, w: Tensor, positions: Tensor,
                         live: Tensor, k_cache: Tensor, v_cache: Tensor, slot_positions: Tensor) -> Tensor:
    _check_qkv_rope_cache(x, gamma, beta, eps, w, positions, live, k_cache, v_cache, slot_positions)
    b, t, d = x.shape
    return x.new_empty((b, t, d // _HEAD_DIM, _HEAD_DIM))
