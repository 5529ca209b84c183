"""moss::qkv_rope_cache against its FP32/FP64 reference on a RingKvCache:
q and the cache rows within tolerance, the slot table and every slot the
chunk does not write exactly as RingKvCache.append leaves them; bad input
refused before anything is written; graph replays equal to eager calls;
opcheck."""

import pytest

torch = pytest.importorskip("torch")

import moss_kernels  # noqa: E402
from moss_kernels import qkv_rope_cache  # noqa: E402
from moss_kernels.ring_cache import RingKvCache  # noqa: E402
from numerics import qkv_rope_cache_reference, relative_l2  # noqa: E402

BF16 = torch.bfloat16


def _operands(batch, length, d, capacity, device, seed=0):
    gen = torch.Generator(device=device).manual_seed(seed)
    x = torch.randn(batch, length, d, device=device, generator=gen).to(BF16)
    gamma = (0.5 + torch.rand(d, device=device, generator=gen)).to(BF16)
    beta = (0.1 * torch.randn(d, device=device, generator=gen)).to(BF16)
    w = (torch.randn(3 * d, d, device=device, generator=gen) / d**0.5).to(BF16)
    # Row b resumes at a position that wraps the ring inside the chunk; the
    # last frame of row 0 is padding.
    start = 3 * capacity - 2 + 5 * torch.arange(batch, device=device)
    positions = start[:, None] + torch.arange(length, device=device)
    live = torch.ones(batch, length, dtype=torch.bool, device=device)
    live[0, -1] = length == 1
    return x, gamma, beta, w, positions, live


def _caches(batch, heads, capacity, device, seed=1):
    """Two identical rings holding some history (and some empty slots)."""
    gen = torch.Generator(device=device).manual_seed(seed)
    rings = [RingKvCache(batch, heads, capacity, 64, device) for _ in range(2)]
    k = torch.randn(batch, heads, capacity, 64, device=device, generator=gen).to(BF16)
    v = torch.randn(batch, heads, capacity, 64, device=device, generator=gen).to(BF16)
    table = torch.arange(batch * capacity, device=device).view(batch, capacity)
    table[:, ::3] = -1
    for ring in rings:
        ring.k.copy_(k)
        ring.v.copy_(v)
        ring.slot_positions.copy_(table)
    return rings


CASES = [(1, 1, 768, 250), (4, 1, 768, 250), (2, 15, 768, 20), (4, 15, 768, 250), (1, 16, 1280, 125)]


@pytest.mark.parametrize("batch,length,d,capacity", CASES)
def test_matches_the_reference_ring(cuda_device, batch, length, d, capacity):
    x, gamma, beta, w, positions, live = _operands(batch, length, d, capacity, cuda_device)
    reference, moss = _caches(batch, d // 64, capacity, cuda_device)
    expected_q = qkv_rope_cache_reference(x, gamma, beta, 1e-5, w, positions, live, reference)
    q = qkv_rope_cache(x, gamma, beta, 1e-5, w, positions, live, moss.k, moss.v, moss.slot_positions)
    assert q.shape == (batch, length, d // 64, 64) and q.is_contiguous()
    assert relative_l2(q, expected_q) < 4e-3
    assert torch.equal(moss.slot_positions, reference.slot_positions)
    written = torch.zeros(batch, capacity, dtype=torch.bool, device=cuda_device)
    written.scatter_(1, positions % capacity, True)
    for got, want in ((moss.k, reference.k), (moss.v, reference.v)):
        kept = ~written[:, None, :, None].expand_as(got)
        assert torch.equal(got[kept], want[kept]), "slots outside the chunk changed"
        assert relative_l2(got[~kept], want[~kept]) < 4e-3
    selected = moss_kernels.qkv_rope_cache_is_selected(batch, length, d, cuda_device)
    assert isinstance(selected, bool)


def test_bad_positions_are_refused_before_writing(cuda_device):
    x, gamma, beta, w, positions, live = _operands(2, 4, 768, 16, cuda_device)
    ring, _ = _caches(2, 12, 16, cuda_device)
    before = [t.clone() for t in (ring.k, ring.v, ring.slot_positions)]
    positions[1, 2] += 1  # not consecutive
    with pytest.raises(ValueError, match=r"batch rows \[1\]"):
        qkv_rope_cache(x, gamma, beta, 1e-5, w, positions, live, ring.k, ring.v, ring.slot_positions)
    positions[1] = -positions[1]
    with pytest.raises(ValueError, match="negative or not consecutive"):
        qkv_rope_cache(x, gamma, beta, 1e-5, w, positions, live, ring.k, ring.v, ring.slot_positions)
    for got, want in zip((ring.k, ring.v, ring.slot_positions), before):
        assert torch.equal(got, want)


@pytest.mark.parametrize("change,error,message", [
    ("long_chunk", ValueError, "does not fit a ring"),
    ("table_dtype", TypeError, "slot_positions must be torch.int64"),
    ("cache_shape", ValueError, "k_cache must be"),
    ("strided_cache", ValueError, "k_cache must be contiguous"),
    ("live_shape", ValueError, "live must be"),
])
def test_bad_input_is_named(cuda_device, change, error, message):
    x, gamma, beta, w, positions, live = _operands(2, 4, 768, 16, cuda_device)
    ring, _ = _caches(2, 12, 16, cuda_device)
    k, v, table = ring.k, ring.v, ring.slot_positions
    if change == "long_chunk":
        x, gamma, beta, w, positions, live = _operands(2, 17, 768, 16, cuda_device)
    elif change == "table_dtype":
        table = table.to(torch.int32)
    elif change == "cache_shape":
        k = k[:, :6]
    elif change == "strided_cache":
        k = torch.empty(2, 12, 64, 16, dtype=BF16, device=cuda_device).transpose(2, 3)
    elif change == "live_shape":
        live = live[:, :2]
    with pytest.raises(error, match=message):
        qkv_rope_cache(x, gamma, beta, 1e-5, w, positions, live, k, v, table)


def test_graph_replays_equal_eager_calls(cuda_device):
    x, gamma, beta, w, positions, live = _operands(4, 15, 768, 250, cuda_device)
    eager, captured = _caches(4, 12, 250, cuda_device)
    start = [t.clone() for t in (captured.k, captured.v, captured.slot_positions)]
    q_eager = qkv_rope_cache(x, gamma, beta, 1e-5, w, positions, live, eager.k, eager.v, eager.slot_positions)
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):  # the side stream's first call is not captured
        qkv_rope_cache(x, gamma, beta, 1e-5, w, positions, live, captured.k, captured.v, captured.slot_positions)
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph, stream=side):
        q = qkv_rope_cache(x, gamma, beta, 1e-5, w, positions, live, captured.k, captured.v,
                           captured.slot_positions)
    for _ in range(2):
        for t, s in zip((captured.k, captured.v, captured.slot_positions), start):
            t.copy_(s)
        graph.replay()
        torch.cuda.synchronize()
        assert torch.equal(q, q_eager)
        for got, want in zip((captured.k, captured.v, captured.slot_positions),
                             (eager.k, eager.v, eager.slot_positions)):
            assert torch.equal(got, want)


def test_opcheck(cuda_device):
    x, gamma, beta, w, positions, live = _operands(2, 3, 768, 16, cuda_device)
    ring, _ = _caches(2, 12, 16, cuda_device)
    torch.library.opcheck(qkv_rope_cache, (x, gamma, beta, 1e-5, w, positions, live, ring.k, ring.v,
                                           ring.slot_positions))
