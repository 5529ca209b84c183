#!/usr/bin/env bash
# One device call: builds the runtime (no MLIR), runs every runtime test against
# kernels_generated/, the attention benchmark, and a sweep of split-KV counts
# (MOSS_ATTENTION_SPLITS) and key groups (MOSS_ATTENTION_KV_GROUPS) over the
# short-chunk cases (MOSS_SWEEP_GROUPS="" skips it). MOSS_SWEEP_TESTS=0 skips
# the tests and the benchmark;
# MOSS_PROFILE_CASES=H:S:T:B,... adds an Nsight Compute summary per case.
# Logs, sweep tables and Nsight reports end up in logs.tgz, sweep.tgz, ncu.tgz.
# Usage: OUT=dir benchmarks/attention_sweep.sh
set -o pipefail
source "$(dirname "${BASH_SOURCE[0]}")/device_common.sh"
moss_device_build "$OUT" "$MOSS_ROOT/.devdeps/prefix"
# A smoke test first: a kernel that hangs stops here, not in every step.
MOSS_TEST_KERNELS_DIR=$MOSS_ROOT/kernels_generated MOSS_TEST_WHITELIST=$MOSS_ROOT/configs/h200-example.json \
  timeout 60 $MOSS_RT_BUILD/unittests/Runtime/MossRuntimeTests \
  --gtest_filter='Attention.DecoderCasesMatchReference' >"$OUT/smoke.log" 2>&1
rc=$?
echo "smoke rc=$rc"
if [ $rc != 0 ]; then grep -E "Failure|FAILED" -A4 "$OUT/smoke.log" | head -40; exit 1; fi
if [ "${MOSS_SWEEP_TESTS:-1}" != 0 ]; then
  moss_device_runtime_tests "$OUT"
  moss_device_attention_bench "$OUT"
fi
C=${MOSS_SWEEP_CASES:-20:125:1:1,20:125:1:16,20:125:32:4,12:250:1:1,12:250:32:4,12:400:1:1,12:400:1:4,12:400:1:16,12:400:32:1,12:400:32:4,12:400:32:16}
for g in ${MOSS_SWEEP_GROUPS-1 2 4}; do
  for s in ${MOSS_SWEEP_SPLITS:-1 2 4 7}; do
    MOSS_ATTENTION_KV_GROUPS=$g MOSS_ATTENTION_SPLITS=$s timeout 60 $MOSS_BENCH \
      --kernels-dir "$MOSS_ROOT/kernels_generated" --attention-cases $C --samples 3 \
      >"$OUT/sweep-g$g-s$s.txt" 2>&1
    echo "groups=$g splits=$s: $(grep -E '^ +[0-9]' "$OUT/sweep-g$g-s$s.txt" | awk '{printf "%s:%s:%s:%s=%s(%s) ", $1,$2,$3,$4,$8,$6}')"
  done
done
IFS=, read -ra profiled <<<"${MOSS_PROFILE_CASES:-}"
for c in "${profiled[@]}"; do
  timeout 120 ncu --clock-control none --section SpeedOfLight --section Occupancy \
    --section LaunchStats --section InstructionStats --section WarpStateStats \
    --section SchedulerStats -k regex:streaming_attention --launch-count 1 \
    "$MOSS_BENCH" --kernels-dir "$MOSS_ROOT/kernels_generated" --attention-cases "$c" \
    --samples 1 --replays 1 >"$OUT/ncu-${c//:/_}.txt" 2>&1
  echo "ncu $c: rc=$?"
  grep -E "Duration|Registers Per|Achieved Occupancy|Theoretical Occupancy|Executed Instructions  |Executed Ipc A|Issue Slots Busy|No Eligible|Warp Cycles Per Issued|Dynamic Shared|Block Limit" "$OUT/ncu-${c//:/_}.txt" | head -20
done
# The device tool returns a handful of files: logs, sweep tables and Nsight
# reports travel as archives (bench.txt and attention-bench.json stay).
cd "$OUT" || exit 1
pack() { # pack ARCHIVE GLOB: the matching files into ARCHIVE, then removed
  local archive=$1
  shift
  compgen -G "$1" >/dev/null && tar -czf "$archive" $1 && rm -f $1
}
pack sweep.tgz 'sweep-g*.txt'
pack ncu.tgz 'ncu-*.txt'
pack logs.tgz '*.log'
exit 0
