#!/bin/bash
# The device call of 2026-12-05b (run then from benchmarks/early-trigger/,
# with early-trigger.patch applied): the runtime tests on kernels_generated/,
# then moss-bench --attention twice a round, MOSS_ATTENTION_EARLY_TRIGGER=1
# (the rule) and 0 (every launch triggers after its last key tile, as ABI 10
# did), two rounds interleaved; issue 6's attention targets of the rule's
# first round, and moss-l2-probe (the floor of a programmatic chain). Runs
# from here as well. Carry: .devdeps/prefix, kernels_generated. Output:
# $OUT/early-trigger.tgz.
set -u
cd "$(dirname "$0")/../../../.." || exit 1
source benchmarks/device_common.sh
R=$OUT/early-trigger; mkdir -p "$R"
# One archive comes back even when the call runs past its limit.
pack() { (cd "$OUT" && tar czf early-trigger.tgz early-trigger && rm -rf early-trigger); }
trap pack EXIT
trap 'exit 143' TERM
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv >"$R/gpu.txt"
t0=$(date +%s)
moss_device_build "$R" "$MOSS_ROOT/.devdeps/prefix" all moss-bench moss-l2-probe || exit 1
echo "built $(( $(date +%s) - t0 ))s"
moss_device_runtime_tests "$R"
MOSS_ATTENTION_PDL=1 timeout 200 $MOSS_RT_BUILD/unittests/Runtime/MossRuntimeTests \
  --gtest_filter='Attention*:GraphCapture*' >"$R/t-attention-pdl.log" 2>&1
echo "attention tests with MOSS_ATTENTION_PDL=1 rc=$? $(grep -E '^\[  PASSED|^\[  FAILED' "$R/t-attention-pdl.log" | tr '\n' ' ')"
for round in 1 2; do
  for mode in 1 0; do
    MOSS_ATTENTION_EARLY_TRIGGER=$mode timeout 150 "$MOSS_BENCH" \
      --kernels-dir "$MOSS_ROOT/kernels_generated" --attention \
      --json "$R/bench-t$mode-r$round.json" >"$R/bench-t$mode-r$round.txt" 2>&1
    echo "round $round trigger $mode rc=$? $(( $(date +%s) - t0 ))s"
  done
done
timeout 120 $MOSS_RT_BUILD/benchmarks/l2-probe/moss-l2-probe --json "$R/l2-probe.json" >"$R/l2-probe.txt" 2>&1
echo "l2 probe rc=$?"; grep -E "chain|empty" "$R/l2-probe.txt"
python3 benchmarks/targets.py "$R/bench-t1-r1.json" >"$R/targets-attention.md"
tail -1 "$R/targets-attention.md"
