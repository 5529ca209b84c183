"""The streaming decoder-layer check: ten chunks, moss layer vs the PyTorch
reference, for a stage-2-like and a stage-1-like layer, B in {1, 4}, eager,
under CUDA graphs and under torch.compile(dynamic=True)."""

import pytest

torch = pytest.importorskip("torch")

from moss_kernels.streaming import CASES, MODES, run_streaming_check  # noqa: E402

REL_RMS_GATE = 0.03
# The residual branches alone (y - x), where bf16 rounding of the residual
# sums weighs more; a loose bound that still catches a wrong attention or FFN.
BRANCH_REL_RMS_BOUND = 0.1


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("batch", [1, 4])
@pytest.mark.parametrize("case", list(CASES.values()), ids=list(CASES))
def test_ten_chunks_match_the_reference(cuda_device, check_report, case, batch, mode):
    report = run_streaming_check(case, batch, mode, cuda_device)
    check_report(report.to_json())
    table = "\n".join(
        f"  chunk {c.index} T={c.length}: rel RMS {c.rel_rms:.2e}, branch {c.branch_rel_rms:.2e}, "
        f"padding frames {c.padding_frames} zero={c.padding_exact_zero}"
        + ("" if c.compilations is None else f", compilations {c.compilations}")
        for c in report.chunks)
    print(f"{case.name} B={batch} {mode}:\n{table}")
    assert len(report.chunks) == 10
    for chunk in report.chunks:
        assert chunk.rel_rms < REL_RMS_GATE, table
        assert chunk.branch_rel_rms < BRANCH_REL_RMS_BOUND, table
        assert chunk.padding_exact_zero, table
    assert sum(c.padding_frames for c in report.chunks) > 0
    if mode == "compile":
        # Whatever the first chunk cost (Dynamo may call the backend more
        # than once for its one frame), later chunks must compile nothing.
        first = report.chunks[0].compilations
        assert first >= 1 and all(c.compilations == first for c in report.chunks), \
            f"recompiled across chunks:\n{table}"
