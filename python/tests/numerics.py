"""FP32 references of the ops' contracts (docs/design.md), for the tests."""

import torch
import torch.nn.functional as F
from torch import Tensor


def gemm_reference(x: Tensor, w: Tensor, scale, residual, mode: int) -> Tensor:
    """v = bf16(x . w^T in FP32); GELU and LayerScale+residual rounded as the contract says."""
    v = (x.float() @ w.float().T).to(torch.bfloat16)
    if mode == 1:
        return F.gelu(v.float()).to(torch.bfloat16)
    if mode == 2:
        scaled = (v.float() * scale.float()).to(torch.bfloat16)
        return (scaled.float() + residual.float()).to(torch.bfloat16)
    return v


def layernorm_gemm_reference(x: Tensor, gamma: Tensor, beta: Tensor, eps: float, w: Tensor, mode: int) -> Tensor:
    """F.layer_norm in FP64 on the bf16 input, rounded to bf16, then gemm_reference."""
    normalised = F.layer_norm(x.double(), (x.shape[-1],), gamma.double(), beta.double(), eps).to(torch.bfloat16)
    return gemm_reference(normalised, w, None, None, mode)


def attention_reference(q: Tensor, k: Tensor, v: Tensor, mask: Tensor) -> Tensor:
    """Masked softmax attention in FP32, scale D^-0.5, rows without keys zero."""
    scores = (q.float() @ k.float().transpose(-1, -2)) * q.shape[-1] ** -0.5
    probs = torch.softmax(scores.masked_fill(~mask, float("-inf")), dim=-1).nan_to_num(0.0)
    return probs @ v.float()


def relative_l2(actual: Tensor, expected: Tensor) -> float:
    expected = expected.float()
    return ((actual.float() - expected).norm() / expected.norm().clamp_min(1e-30)).item()


def qkv_rope_cache_reference(x: Tensor, gamma: Tensor, beta: Tensor, eps: float, w: Tensor, positions: Tensor,
                             live: Tensor, cache) -> Tensor:
    """moss::qkv_rope_cache's contract on a RingKvCache: the LayerNorm GEMM
    reference, apply_rope in FP32 on its bf16 q and k, RingKvCache.append.
    Returns q [B,T,H,D]."""
    from moss_kernels.decoder_layer import apply_rope

    batch, length, d = x.shape
    heads = d // 64
    qkv = layernorm_gemm_reference(x, gamma, beta, eps, w, 0).view(batch, length, 3, heads, 64)
    q = apply_rope(qkv[:, :, 0], positions)
    cache.append(apply_rope(qkv[:, :, 1], positions), qkv[:, :, 2], positions, live)
    return q
