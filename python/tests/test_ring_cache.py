"""The ring cache's mask and the streaming check's chunk plan (CPU, torch only)."""

import pytest

torch = pytest.importorskip("torch")

from moss_kernels.ring_cache import RingKvCache  # noqa: E402
from moss_kernels.streaming import CASES, default_spans, plan_chunks  # noqa: E402


def _append(cache, start, length, live=None, batch=1):
    positions = (start + torch.arange(length)).repeat(batch, 1)
    live = torch.ones(batch, length, dtype=torch.bool) if live is None else live
    kv = torch.randn(batch, length, 2, 8).to(torch.bfloat16)
    cache.append(kv, kv, positions, live)
    return cache.mask(positions, live), positions


def _visible(mask, row, t, cache):
    """Positions query t of `row` may attend to."""
    return sorted(cache.slot_positions[row][mask[row, 0, t]].tolist())


def test_mask_is_the_causal_window_of_the_ring():
    cache = RingKvCache(batch=1, heads=2, capacity=6, head_dim=8, device=torch.device("cpu"))
    _append(cache, 0, 4)
    mask, _ = _append(cache, 4, 4)  # positions 4..7 wrap: slots 4, 5, 0, 1
    assert _visible(mask, 0, 0, cache) == [2, 3, 4]  # 0 and 1 were overwritten by 6 and 7
    assert _visible(mask, 0, 3, cache) == [2, 3, 4, 5, 6, 7]
    assert cache.slot_positions[0].tolist() == [6, 7, 2, 3, 4, 5]


def test_padding_frames_see_nothing_and_are_never_seen():
    cache = RingKvCache(batch=1, heads=2, capacity=8, head_dim=8, device=torch.device("cpu"))
    live = torch.tensor([[True, True, False]])
    mask, _ = _append(cache, 0, 3, live)
    assert not mask[0, 0, 2].any()
    mask, _ = _append(cache, 3, 2)
    assert _visible(mask, 0, 1, cache) == [0, 1, 3, 4]


def test_released_slot_starts_a_fresh_stream():
    cache = RingKvCache(batch=2, heads=2, capacity=8, head_dim=8, device=torch.device("cpu"))
    _append(cache, 0, 5, batch=2)
    cache.release(1)
    positions = torch.tensor([[5, 6], [0, 1]])
    kv = torch.randn(2, 2, 2, 8).to(torch.bfloat16)
    live = torch.ones(2, 2, dtype=torch.bool)
    cache.append(kv, kv, positions, live)
    mask = cache.mask(positions, live)
    assert _visible(mask, 0, 1, cache) == list(range(7))
    assert _visible(mask, 1, 1, cache) == [0, 1]  # nothing of the old stream


def test_query_positions_mark_padding_frames():
    positions = torch.tensor([[7, 8, 9]])
    live = torch.tensor([[True, False, True]])
    assert RingKvCache.query_positions(positions, live).tolist() == [[7, -1, 9]]


@pytest.mark.parametrize("batch", [1, 4])
@pytest.mark.parametrize("case", list(CASES.values()), ids=list(CASES))
def test_plan_wraps_the_ring_recycles_a_slot_and_pads(case, batch):
    plans = plan_chunks(batch, case.first_chunk, case.steady_chunk, default_spans(batch), chunks=10)
    assert len(plans) == 10 and plans[0].length == case.first_chunk
    assert all(p.length == case.steady_chunk for p in plans[1:])
    recycled = 0 if batch == 1 else 1
    released = [p for p in plans if p.released_rows]
    assert [p.released_rows for p in released] == [(recycled,)]
    before = plans[released[0].index - 1]
    assert before.positions[recycled, -1] >= case.capacity, "the first stream never wrapped the ring"
    assert not before.live[recycled, -1] and before.live[recycled, 0]
    assert released[0].positions[recycled, 0] == 0
    if batch >= 4:
        assert not any(p.live[batch - 1].any() for p in plans)  # the idle padding row
