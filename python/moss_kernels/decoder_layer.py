"""One streaming decoder transformer layer of the codec, two ways.

    h = x + ls1 * out_proj(attention(rope(q), rope(k), v; ring cache, mask))
    y = h + ls2 * linear2(gelu(linear1(norm2(h))))       q, k, v = in_proj(norm1(x))

Pre-LayerNorm, fused QKV without bias, interleaved RoPE at absolute
positions, a ring KV cache (ring_cache.py), LayerScale residuals, erf-GELU
FFN without biases. `ReferenceKernels` is plain PyTorch as the codec runs it
in bf16; `MossFusedKernels` runs the whole step as five moss calls (RoPE
and the ring write fused into the QKV GEMM's epilogue, both LayerNorms into
the GEMMs after them); `MossKernels` the same with RoPE and the ring write
left to PyTorch; `MossFfnKernels` only the attention and the FFN's GEMMs.
Everything else is shared, so the layers differ only where moss computes.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from . import ops
from ._capi import Epilogue
from .qkv_ops import qkv_rope_cache
from .ring_cache import RingKvCache

_NONE = int(Epilogue.NONE)
_GELU = int(Epilogue.GELU)
_LAYERSCALE_RESIDUAL = int(Epilogue.LAYERSCALE_RESIDUAL)


class DecoderLayerParams(nn.Module):
    """The weights of one layer (torch layouts: Linear weights are [out, in])."""

    def __init__(self, d_model: int, num_heads: int, ffn_dim: int, device: torch.device,
                 dtype: torch.dtype = torch.bfloat16):
        super().__init__()
        if d_model % num_heads:
            raise ValueError(f"d_model {d_model} is not a multiple of num_heads {num_heads}")
        self.num_heads = num_heads
        self.head_dim = d_model // num_heads
        factory = {"device": device, "dtype": dtype}
        self.norm1 = nn.LayerNorm(d_model, eps=1e-5, **factory)
        self.in_proj = nn.Linear(d_model, 3 * d_model, bias=False, **factory)
        self.out_proj = nn.Linear(d_model, d_model, bias=False, **factory)
        self.layer_scale_1 = nn.Parameter(torch.ones(d_model, **factory))
        self.norm2 = nn.LayerNorm(d_model, eps=1e-5, **factory)
        self.linear1 = nn.Linear(d_model, ffn_dim, bias=False, **factory)
        self.linear2 = nn.Linear(ffn_dim, d_model, bias=False, **factory)
        self.layer_scale_2 = nn.Parameter(torch.ones(d_model, **factory))
        self.requires_grad_(False)

    @classmethod
    def synthetic(cls, d_model: int, num_heads: int, ffn_dim: int, device: torch.device,
                  seed: int = 0) -> "DecoderLayerParams":
        """Random weights of the codec's shapes. Unit-variance activations and
        layer scales near 1 keep both residual branches visible in the output,
        so a wrong attention or FFN cannot hide behind the skip connection."""
        params = cls(d_model, num_heads, ffn_dim, device)
        gen = torch.Generator().manual_seed(seed)

        def fill(t: Tensor, values: Tensor) -> None:
            t.copy_(values.to(t.dtype))

        for linear in (params.in_proj, params.out_proj, params.linear1, params.linear2):
            fan_in = linear.weight.shape[1]
            fill(linear.weight, torch.randn(linear.weight.shape, generator=gen) / math.sqrt(fan_in))
        for norm in (params.norm1, params.norm2):
            fill(norm.weight, 1 + 0.1 * torch.randn(d_model, generator=gen))
            fill(norm.bias, 0.1 * torch.randn(d_model, generator=gen))
        for scale in (params.layer_scale_1, params.layer_scale_2):
            fill(scale, 0.5 + 0.5 * torch.rand(d_model, generator=gen))
        return params


def apply_rope(x: Tensor, positions: Tensor, max_period: float = 10000.0) -> Tensor:
    """Interleaved rotary embedding: dims (2i, 2i+1) rotate by positions *
    exp(i * (-ln(max_period) * 2 / D)), the frequencies computed as the codec
    computes them (vLLM-Omni's apply_rope: FP32 exponent, then exp).
    x [B,T,H,D], positions [B,T]; FP32 math, result in x's dtype, contiguous
    [B,T,H,D]."""
    head_dim = x.shape[-1]
    pairs = torch.arange(head_dim // 2, device=x.device, dtype=torch.float32)
    inv_freq = torch.exp(pairs * (-math.log(max_period) * 2 / head_dim))
    angles = positions[:, :, None, None].to(torch.float32) * inv_freq  # [B,T,1,D/2]
    cos, sin = angles.cos(), angles.sin()
    pairs = x.to(torch.float32).unflatten(-1, (head_dim // 2, 2))
    even, odd = pairs[..., 0], pairs[..., 1]
    rotated = torch.stack((even * cos - odd * sin, even * sin + odd * cos), dim=-1)
    return rotated.flatten(-2).to(x.dtype)


class ReferenceKernels:
    """PyTorch as the codec runs it."""

    name = "reference"

    def qkv(self, x: Tensor, p: DecoderLayerParams) -> Tensor:
        return p.in_proj(p.norm1(x))

    def qkv_rope_cache(self, x: Tensor, p: DecoderLayerParams, cache: RingKvCache, positions: Tensor,
                       live: Tensor) -> Tensor:
        """q [B,T,H,D] turned by RoPE; k turned and v written into the ring."""
        batch, length, _ = x.shape
        qkv = self.qkv(x, p).view(batch, length, 3, p.num_heads, p.head_dim)
        q = apply_rope(qkv[:, :, 0], positions)
        k = apply_rope(qkv[:, :, 1], positions)
        cache.append(k, qkv[:, :, 2], positions, live)
        return q

    def attention(self, q: Tensor, cache: RingKvCache, positions: Tensor, live: Tensor) -> Tensor:
        mask = cache.mask(positions, live)
        out = F.scaled_dot_product_attention(q, cache.k, cache.v, attn_mask=mask)
        # A query without any allowed key (a padding frame) is 0/0 in
        # softmax; the layer's contract, like moss's, is zeros.
        return torch.where(mask.any(dim=-1, keepdim=True), out, 0.0)

    def out_projection(self, attended: Tensor, x: Tensor, p: DecoderLayerParams) -> Tensor:
        return x + p.layer_scale_1 * p.out_proj(attended)

    def feed_forward(self, h: Tensor, p: DecoderLayerParams, live: Tensor) -> Tensor:
        """The FFN and its residual; padding frames (live False) leave as
        zeros so they feed nothing downstream (a NaN would survive this)."""
        hidden = F.gelu(F.linear(p.norm2(h), p.linear1.weight))
        y = h + p.layer_scale_2 * F.linear(hidden, p.linear2.weight)
        return y * live[..., None].to(y.dtype)


class MossFfnKernels(ReferenceKernels):
    """moss::streaming_attention_positions (the mask built in the kernel from
    the ring's slot positions) and the FFN as two moss::ffn_gemm calls; the
    LayerNorms and the QKV and output projections stay PyTorch's."""

    name = "moss-ffn"

    def attention(self, q: Tensor, cache: RingKvCache, positions: Tensor, live: Tensor) -> Tensor:
        return ops.streaming_attention_positions(q, cache.k, cache.v, cache.slot_positions,
                                                 cache.query_positions(positions, live))

    def feed_forward(self, h: Tensor, p: DecoderLayerParams, live: Tensor) -> Tensor:
        hidden = ops.ffn_gemm(p.norm2(h), p.linear1.weight, None, None, _GELU)
        return ops.ffn_gemm(hidden, p.linear2.weight, p.layer_scale_2, h, _LAYERSCALE_RESIDUAL, live)


class MossMaskKernels(MossFfnKernels):
    """MossFfnKernels with the attention's mask built as a bool [B,1,T,S]
    tensor (RingKvCache.mask) and read by moss::streaming_attention: the
    layer before the mask came from positions, kept to measure the
    difference."""

    name = "moss-mask"

    def attention(self, q: Tensor, cache: RingKvCache, positions: Tensor, live: Tensor) -> Tensor:
        return ops.streaming_attention(q, cache.k, cache.v, cache.mask(positions, live))


class MossKernels(MossFfnKernels):
    """Every GEMM of the layer on moss, both LayerNorms fused into the GEMMs
    that read them: LayerNorm + QKV (moss::layernorm_gemm), attention from
    positions, out-projection + LayerScale + residual, LayerNorm + linear1 +
    GELU, linear2 + LayerScale + residual. RoPE and the ring write stay
    PyTorch's."""

    name = "moss"

    def qkv(self, x: Tensor, p: DecoderLayerParams) -> Tensor:
        return ops.layernorm_gemm(x, p.norm1.weight, p.norm1.bias, p.norm1.eps, p.in_proj.weight, _NONE)

    def out_projection(self, attended: Tensor, x: Tensor, p: DecoderLayerParams) -> Tensor:
        return ops.ffn_gemm(attended, p.out_proj.weight, p.layer_scale_1, x, _LAYERSCALE_RESIDUAL)

    def feed_forward(self, h: Tensor, p: DecoderLayerParams, live: Tensor) -> Tensor:
        hidden = ops.layernorm_gemm(h, p.norm2.weight, p.norm2.bias, p.norm2.eps, p.linear1.weight, _GELU)
        # The padding frames' zeros come out of FFN2's epilogue.
        return ops.ffn_gemm(hidden, p.linear2.weight, p.layer_scale_2, h, _LAYERSCALE_RESIDUAL, live)


class MossFusedKernels(MossKernels):
    """The layer step as five moss calls: LayerNorm + QKV + RoPE + ring write
    (moss::qkv_rope_cache), attention from positions, out-projection +
    LayerScale + residual, LayerNorm + linear1 + GELU, linear2 + LayerScale
    + residual."""

    name = "moss-fused"

    def qkv_rope_cache(self, x: Tensor, p: DecoderLayerParams, cache: RingKvCache, positions: Tensor,
                       live: Tensor) -> Tensor:
        return qkv_rope_cache(x, p.norm1.weight, p.norm1.bias, p.norm1.eps, p.in_proj.weight, positions, live,
                              cache.k, cache.v, cache.slot_positions)


class StreamingDecoderLayer(nn.Module):
    """forward(x [B,T,d], positions [B,T] int64, live [B,T] bool) -> [B,T,d].

    Owns its ring cache; `params` may be shared between layers."""

    def __init__(self, params: DecoderLayerParams, batch: int, capacity: int, kernels):
        super().__init__()
        self.params = params
        self.kernels = kernels
        self.cache = RingKvCache(batch, params.num_heads, capacity, params.head_dim,
                                 device=params.in_proj.weight.device, dtype=params.in_proj.weight.dtype)

    def forward(self, x: Tensor, positions: Tensor, live: Tensor) -> Tensor:
        p = self.params
        batch, length, d_model = x.shape
        q = self.kernels.qkv_rope_cache(x, p, self.cache, positions, live)
        attended = self.kernels.attention(q.transpose(1, 2), self.cache, positions, live)
        # [B,H,T,D] -> [B,T,H*D]: free for moss's [B,T,H,D] storage.
        attended = attended.transpose(1, 2).reshape(batch, length, d_model)
        h = self.kernels.out_projection(attended, x, p)
        return self.kernels.feed_forward(h, p, live)
