"""moss::ffn_gemm and moss::streaming_attention against FP32 references,
their input checks, C API errors, CUDA graph capture and opcheck."""

import json
import os

import pytest

torch = pytest.importorskip("torch")

import moss_kernels  # noqa: E402
from moss_kernels import (  # noqa: E402
    Epilogue, MossError, MossStatus, ffn_gemm, layernorm_gemm, streaming_attention, streaming_attention_positions)
from moss_kernels.ring_cache import RingKvCache  # noqa: E402
from numerics import attention_reference, gemm_reference, layernorm_gemm_reference, relative_l2  # noqa: E402

BF16 = torch.bfloat16


def _whitelist_keys() -> set:
    with open(os.environ["MOSS_CODEC_GEMM_CONFIG"]) as f:
        return set(json.load(f))


def _gemm_operands(lead, n, k, mode, device, seed=0):
    gen = torch.Generator(device=device).manual_seed(seed)
    x = torch.randn(*lead, k, device=device, generator=gen).to(BF16)
    w = (torch.randn(n, k, device=device, generator=gen) / k**0.5).to(BF16)
    if mode != Epilogue.LAYERSCALE_RESIDUAL:
        return x, w, None, None
    scale = (0.5 + torch.rand(n, device=device, generator=gen)).to(BF16)
    residual = torch.randn(*lead, n, device=device, generator=gen).to(BF16)
    return x, w, scale, residual


# The decoder's FFN shapes, generated (whitelisted) and fallback, with
# leading shapes [M], [B, T] and none.
GEMM_CASES = [
    ((2, 15), 3072, 768, Epilogue.GELU),
    ((120,), 3072, 768, Epilogue.GELU),
    ((4, 8), 768, 3072, Epilogue.LAYERSCALE_RESIDUAL),
    ((16,), 5120, 1280, Epilogue.GELU),
    ((1, 3), 1280, 5120, Epilogue.LAYERSCALE_RESIDUAL),
    ((), 768, 768, Epilogue.NONE),
]


@pytest.mark.parametrize("lead,n,k,mode", GEMM_CASES)
def test_ffn_gemm_matches_contract(cuda_device, lead, n, k, mode):
    x, w, scale, residual = _gemm_operands(lead, n, k, mode, cuda_device)
    out = ffn_gemm(x, w, scale, residual, int(mode))
    assert out.shape == (*lead, n) and out.dtype == BF16 and out.is_contiguous()
    m = x.numel() // k
    selected = moss_kernels.gemm_is_selected(m, n, k, mode, cuda_device)
    assert selected == (f"{m},{n},{k},{int(mode)}" in _whitelist_keys())
    assert relative_l2(out, gemm_reference(x, w, scale, residual, mode)) < 4e-3


@pytest.mark.parametrize("lead,n,k", [((4, 8), 768, 3072), ((1, 3), 1280, 5120), ((2, 15), 768, 768)])
def test_ffn_gemm_live_zeroes_padding_rows(cuda_device, lead, n, k):
    """live: the layer's last epilogue; live rows as without it, padding
    rows y * 0 (zeros), under a CUDA graph too."""
    x, w, scale, residual = _gemm_operands(lead, n, k, Epilogue.LAYERSCALE_RESIDUAL, cuda_device)
    live = torch.arange(x.numel() // k, device=cuda_device).view(lead) % 3 != 1
    plain = ffn_gemm(x, w, scale, residual, 2)
    out = ffn_gemm(x, w, scale, residual, 2, live)
    assert torch.equal(out, plain * live[..., None].to(BF16))
    assert (out[~live] == 0).all()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        captured = ffn_gemm(x, w, scale, residual, 2, live)
    captured.fill_(float("nan"))
    graph.replay()
    assert torch.equal(captured, out)


def _layernorm_operands(lead, n, k, device, seed=0):
    gen = torch.Generator(device=device).manual_seed(seed)
    # Rows with a mean and spread of their own, as the decoder's residual stream has.
    x = (3 * torch.randn(*lead, k, device=device, generator=gen) + 0.5).to(BF16)
    gamma = (0.5 + torch.rand(k, device=device, generator=gen)).to(BF16)
    beta = (torch.rand(k, device=device, generator=gen) - 0.5).to(BF16)
    w = (torch.randn(n, k, device=device, generator=gen) / k**0.5).to(BF16)
    return x, gamma, beta, w


# The layer's QKV (mode 0 after the LayerNorm) and FFN1 (GELU) shapes.
LAYERNORM_CASES = [
    ((4,), 2304, 768, Epilogue.NONE),
    ((2, 8), 3072, 768, Epilogue.GELU),
    ((1, 30), 3840, 1280, Epilogue.NONE),
    ((7,), 5120, 1280, Epilogue.GELU),
    ((), 2304, 768, Epilogue.NONE),
]


@pytest.mark.parametrize("lead,n,k,mode", LAYERNORM_CASES)
def test_layernorm_gemm_matches_contract(cuda_device, lead, n, k, mode):
    x, gamma, beta, w = _layernorm_operands(lead, n, k, cuda_device)
    out = layernorm_gemm(x, gamma, beta, 1e-5, w, int(mode))
    assert out.shape == (*lead, n) and out.dtype == BF16 and out.is_contiguous()
    m = x.numel() // k
    selected = moss_kernels.layernorm_gemm_is_selected(m, n, k, mode, cuda_device)
    assert selected == (f"{m},{n},{k},{int(mode) + 3}" in _whitelist_keys())
    assert relative_l2(out, layernorm_gemm_reference(x, gamma, beta, 1e-5, w, mode)) < 4e-3


@pytest.mark.parametrize("change,error,message", [
    (lambda a: a | {"gamma": a["gamma"].float()}, TypeError, "gamma must be torch.bfloat16"),
    (lambda a: a | {"beta": a["beta"][:10]}, ValueError, "beta must be"),
    (lambda a: a | {"mode": 2}, ValueError, "mode must be 0"),
    (lambda a: a | {"eps": float("nan")}, ValueError, "eps must be finite"),
    (lambda a: a | {"eps": -1.0}, ValueError, "eps must be finite"),
    (lambda a: a | {"w": a["w"][:, :512]}, ValueError, "K differs"),
    (lambda a: a | {"gamma": a["gamma"].cpu()}, ValueError, "gamma is on cpu"),
])
def test_layernorm_gemm_rejects_bad_inputs(cuda_device, change, error, message):
    x, gamma, beta, w = _layernorm_operands((8,), 2304, 768, cuda_device)
    args = change({"x": x, "gamma": gamma, "beta": beta, "eps": 1e-5, "w": w, "mode": 0})
    with pytest.raises(error, match=message):
        layernorm_gemm(args["x"], args["gamma"], args["beta"], args["eps"], args["w"], args["mode"])


def test_ffn_gemm_with_no_rows_is_empty(cuda_device):
    x, w, _, _ = _gemm_operands((0, 5), 3072, 768, Epilogue.GELU, cuda_device)
    assert ffn_gemm(x, w, None, None, 1).shape == (0, 5, 3072)


@pytest.mark.parametrize("change,error,message", [
    (lambda a: a | {"x": a["x"].float()}, TypeError, "x must be torch.bfloat16"),
    (lambda a: a | {"x": a["x"].cpu()}, ValueError, "x is on cpu"),
    (lambda a: a | {"x": a["x"].t().contiguous().t()}, ValueError, "x must be contiguous"),
    (lambda a: a | {"w": a["w"][:, :512]}, ValueError, "K differs"),
    (lambda a: a | {"mode": 3}, ValueError, "mode must be 0"),
    (lambda a: a | {"residual": None}, ValueError, "needs scale"),
    (lambda a: a | {"residual": a["residual"][:4]}, ValueError, "residual must be"),
    (lambda a: a | {"mode": 1}, ValueError, "read only by mode 2"),
    (lambda a: a | {"live": a["live"].to(torch.uint8)}, TypeError, "live must be torch.bool"),
    (lambda a: a | {"live": a["live"][:4]}, ValueError, "live must be x's leading shape"),
    (lambda a: a | {"live": a["live"].cpu()}, ValueError, "live is on cpu"),
])
def test_ffn_gemm_rejects_bad_inputs(cuda_device, change, error, message):
    x, w, scale, residual = _gemm_operands((8,), 768, 768, Epilogue.LAYERSCALE_RESIDUAL, cuda_device)
    live = torch.ones(8, dtype=torch.bool, device=cuda_device)
    args = change({"x": x, "w": w, "scale": scale, "residual": residual, "mode": 2, "live": live})
    with pytest.raises(error, match=message):
        ffn_gemm(args["x"], args["w"], args["scale"], args["residual"], args["mode"], args["live"])


def _attention_operands(b, h, t, s, device, d=64, seed=0):
    """q as the codec makes it: a view of a fused [B,T,3,H,D] projection."""
    gen = torch.Generator(device=device).manual_seed(seed)
    qkv = torch.randn(b, t, 3, h, d, device=device, generator=gen).to(BF16)
    q = qkv[:, :, 0].transpose(1, 2)
    k = torch.randn(b, h, s, d, device=device, generator=gen).to(BF16)
    v = torch.randn(b, h, s, d, device=device, generator=gen).to(BF16)
    mask = torch.rand(b, 1, t, s, device=device, generator=gen) < 0.7
    if t > 1:
        mask[-1, 0, t // 2] = False  # a query without any key: exact zeros
    return q, k, v, mask


@pytest.mark.parametrize("b,h,t,s", [(2, 12, 37, 250), (1, 20, 1, 125), (4, 12, 32, 250), (3, 20, 240, 125)])
def test_streaming_attention_matches_reference(cuda_device, b, h, t, s):
    q, k, v, mask = _attention_operands(b, h, t, s, cuda_device)
    out = streaming_attention(q, k, v, mask)
    assert out.shape == (b, h, t, 64) and out.dtype == BF16
    assert out.stride() == (t * h * 64, 64, h * 64, 1)  # [B,T,H,D] storage
    assert relative_l2(out, attention_reference(q, k, v, mask)) < 1e-2
    if t > 1:
        assert torch.equal(out[-1, :, t // 2], torch.zeros_like(out[-1, :, t // 2]))
    assert torch.equal(streaming_attention(q, k, v, mask, skip_empty_tiles=True), out)
    # Any mask strides: a broadcast (stride-0) mask gives the same bits.
    shared = mask[:1].expand(b, 1, t, s)
    assert torch.equal(streaming_attention(q, k, v, shared), streaming_attention(q, k, v, shared.contiguous()))


def _ring_operands(b, h, t, s, device, seed=0):
    """A ring cache after a few chunks: wrapped slots, empty slots, a
    released row and padding frames; positions as RingKvCache keeps them."""
    gen = torch.Generator(device="cpu").manual_seed(seed)
    cache = RingKvCache(b, h, s, 64, device=device)
    start = torch.randint(0, 3 * s, (b,), generator=gen)
    start[0] = 0  # a fresh stream: most slots still empty
    for chunk in range(3):
        positions = (start[:, None] + chunk * t + torch.arange(t)[None, :]).to(device)
        live = torch.rand(b, t, generator=gen) > 0.1
        live[:, 0] = True
        live = live.to(device)
        kv = torch.randn(b, t, h, 64, generator=gen).to(device=device, dtype=BF16)
        cache.append(kv, kv, positions, live)
    q = torch.randn(b, t, h, 64, generator=gen).to(device=device, dtype=BF16).transpose(1, 2)
    return q, cache, positions, live


@pytest.mark.parametrize("b,h,t,s", [(1, 12, 1, 250), (4, 12, 2, 400), (2, 20, 15, 125), (3, 12, 60, 400),
                                     (2, 12, 240, 400), (64, 12, 8, 400)])
def test_attention_from_positions_equals_the_bool_mask(cuda_device, b, h, t, s):
    """The kernel's mask from positions is RingKvCache.mask bit for bit, so
    the two calls give the same bits (and padding rows are zeros)."""
    q, cache, positions, live = _ring_operands(b, h, t, s, cuda_device, seed=b * 1000 + t)
    mask = cache.mask(positions, live)
    query = RingKvCache.query_positions(positions, live)
    out = streaming_attention_positions(q, cache.k, cache.v, cache.slot_positions, query)
    assert torch.equal(out, streaming_attention(q, cache.k, cache.v, mask))
    assert torch.equal(streaming_attention_positions(q, cache.k, cache.v, cache.slot_positions, query,
                                                     skip_empty_tiles=True), out)
    assert relative_l2(out, attention_reference(q, cache.k, cache.v, mask)) < 1e-2
    padding = ~live
    assert torch.equal(out.transpose(1, 2)[padding], torch.zeros_like(out.transpose(1, 2)[padding]))


def test_attention_from_positions_rejects_bad_inputs(cuda_device):
    q, cache, positions, live = _ring_operands(2, 12, 4, 64, cuda_device)
    query = RingKvCache.query_positions(positions, live)
    with pytest.raises(TypeError, match="slot_positions must be torch.int64"):
        streaming_attention_positions(q, cache.k, cache.v, cache.slot_positions.int(), query)
    with pytest.raises(ValueError, match=r"query_positions must be \[B, T\]"):
        streaming_attention_positions(q, cache.k, cache.v, cache.slot_positions, query[:, :2])
    with pytest.raises(ValueError, match="contiguous along its last dim"):
        wide = torch.zeros(2, 128, device=cuda_device, dtype=torch.int64)[:, ::2]
        streaming_attention_positions(q, cache.k, cache.v, wide, query)


def test_streaming_attention_does_not_depend_on_earlier_calls(cuda_device):
    """Nothing of a split-KV call may leak into the next one of another shape:
    a call gives the same bits before and after it (every key allowed, so
    every split holds data)."""
    small = _attention_operands(1, 12, 32, 250, cuda_device, seed=3)
    large = _attention_operands(4, 12, 56, 250, cuda_device, seed=4)
    for _, _, _, mask in (small, large):
        mask.fill_(True)
    before = streaming_attention(*small)
    streaming_attention(*large)
    after = streaming_attention(*small)
    assert relative_l2(before, attention_reference(*small)) < 1e-2
    assert torch.equal(after, before)


def test_streaming_attention_rejects_bad_inputs(cuda_device):
    q, k, v, mask = _attention_operands(2, 12, 8, 64, cuda_device)
    with pytest.raises(TypeError, match="mask must be torch.bool"):
        streaming_attention(q, k, v, mask.to(torch.uint8))
    with pytest.raises(ValueError, match=r"mask must be \[B, 1, T, S\]"):
        streaming_attention(q, k, v, mask.transpose(2, 3))
    with pytest.raises(ValueError, match="k and v must be"):
        streaming_attention(q, k, v[:, :, :32], mask)


def test_c_api_errors_carry_the_runtime_message(cuda_device):
    q, k, v, mask = _attention_operands(1, 12, 8, 64, cuda_device, d=32)
    with pytest.raises(MossError, match="D must be 64") as caught:
        streaming_attention(q, k, v, mask)
    assert caught.value.status == MossStatus.INVALID_ARGUMENT
    # Rows 68 elements apart are not 16-byte aligned: the C API names the stride.
    wide = torch.zeros(1, 12, 8, 68, device=cuda_device, dtype=BF16)
    q, k, v, mask = _attention_operands(1, 12, 8, 64, cuda_device)
    with pytest.raises(MossError, match="not a multiple of 8"):
        streaming_attention(wide[..., :64], k, v, mask)


def test_ops_capture_into_cuda_graphs(cuda_device):
    """The ops run on the current stream: captured on a side stream and
    replayed with new inputs, they match eager calls."""
    x, w1, _, _ = _gemm_operands((30,), 3072, 768, Epilogue.GELU, cuda_device)
    _, w2, scale, _ = _gemm_operands((30,), 768, 3072, Epilogue.LAYERSCALE_RESIDUAL, cuda_device)
    q, k, v, mask = _attention_operands(2, 12, 15, 250, cuda_device)
    _, gamma, beta, _ = _layernorm_operands((30,), 3072, 768, cuda_device)

    def step():
        y = ffn_gemm(layernorm_gemm(x, gamma, beta, 1e-5, w1, 1), w2, scale, x, 2)
        return y, streaming_attention(q, k, v, mask)

    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        step()
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph, stream=side):
        captured = step()
    for seed in (1, 2):
        gen = torch.Generator(device=cuda_device).manual_seed(seed)
        for t in (x, q, k, v):
            t.copy_(torch.randn(t.shape, device=cuda_device, generator=gen))
        graph.replay()
        for got, want in zip(captured, step()):
            torch.testing.assert_close(got, want, rtol=1e-2, atol=1e-2)


def test_opcheck(cuda_device):
    """Schema, fake (shapes and strides) and AOT dispatch with dynamic shapes."""
    x, w, scale, residual = _gemm_operands((3, 5), 768, 3072, Epilogue.LAYERSCALE_RESIDUAL, cuda_device)
    torch.library.opcheck(ffn_gemm, (x, w, scale, residual, 2))
    x, w, _, _ = _gemm_operands((7,), 3072, 768, Epilogue.GELU, cuda_device)
    torch.library.opcheck(ffn_gemm, (x, w, None, None, 1))
    xl, gamma, beta, wl = _layernorm_operands((2, 8), 3072, 768, cuda_device)
    torch.library.opcheck(layernorm_gemm, (xl, gamma, beta, 1e-5, wl, 1))
    q, k, v, mask = _attention_operands(2, 12, 9, 100, cuda_device)
    torch.library.opcheck(streaming_attention, (q, k, v, mask, True))
