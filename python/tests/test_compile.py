"""torch.compile(fullgraph=True, dynamic=True) keeps B and T symbolic
through both ops: one compilation for several batch and chunk sizes."""

import pytest

torch = pytest.importorskip("torch")

from moss_kernels import ffn_gemm, layernorm_gemm, streaming_attention  # noqa: E402


def _block(x, w1, w2, scale, k, v, mask):
    """Pre-LN FFN on x [B,T,d], then attention of x's heads over a cache."""
    b, t, d = x.shape
    ones = torch.ones(d, dtype=x.dtype, device=x.device)
    y = ffn_gemm(layernorm_gemm(x, ones, ones - 1, 1e-5, w1, 1), w2, scale, x, 2)
    q = y.view(b, t, d // 64, 64).transpose(1, 2)
    out = streaming_attention(q, k, v, mask)
    return out.transpose(1, 2).reshape(b, t, d)  # a view of moss's [B,T,H,D] storage


def test_one_compilation_for_many_shapes(cuda_device):
    from torch._dynamo.testing import CompileCounterWithBackend

    torch._dynamo.reset()
    counter = CompileCounterWithBackend("inductor")
    compiled = torch.compile(_block, backend=counter, fullgraph=True, dynamic=True)
    gen = torch.Generator(device=cuda_device).manual_seed(0)

    def randn(*shape, scale=1.0):
        return (scale * torch.randn(*shape, device=cuda_device, generator=gen)).to(torch.bfloat16)

    d, ffn, heads, capacity = 768, 3072, 12, 250
    w1, w2, scale = randn(ffn, d, scale=d**-0.5), randn(d, ffn, scale=ffn**-0.5), randn(d)
    for b, t in [(2, 5), (3, 7), (2, 30), (5, 9)]:
        x = randn(b, t, d)
        k, v = randn(b, heads, capacity, 64), randn(b, heads, capacity, 64)
        mask = torch.rand(b, 1, t, capacity, device=cuda_device, generator=gen) < 0.5
        with torch.no_grad():
            got, want = compiled(x, w1, w2, scale, k, v, mask), _block(x, w1, w2, scale, k, v, mask)
        assert got.shape == want.shape
        torch.testing.assert_close(got, want, rtol=0, atol=0)  # same kernels, same bits
    assert counter.frame_count == 1, f"recompiled: {counter.frame_count} compilations"
