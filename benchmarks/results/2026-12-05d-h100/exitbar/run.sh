#!/bin/bash
# (Run as .cand/final/run3.sh, 2026-12-05d, H100.) The bulk hand-over with a cluster barrier before exit (exitbar) against
# the one without (landed): GPU tests of exitbar, timing of both (2 rounds).
set -u
cd "$(dirname "$0")/../.." || exit 1
source benchmarks/device_common.sh
R=$OUT/exitbar; mkdir -p "$R"
pack() { (cd "$OUT" && tar czf exitbar.tgz exitbar && rm -rf exitbar); }
trap pack EXIT
trap 'exit 143' TERM
t0=$(date +%s)
nvidia-smi --query-gpu=name,driver_version --format=csv >"$R/gpu.txt"; cat "$R/gpu.txt"
moss_device_build "$R" "$MOSS_ROOT/.devdeps/prefix" MossRuntimeTests moss-bench || exit 1
echo "built $(( $(date +%s) - t0 ))s"
H=$MOSS_ROOT/.cand/handover
for round in 1 2; do for v in landed exitbar; do
  timeout 60 "$MOSS_BENCH" --kernels-dir "$H/$v" --whitelist configs/h200-tuned-pdl.json --m-list 30 \
    --json "$R/gemm-$v-r$round.json" >"$R/gemm-$v-r$round.txt" 2>&1
  echo "round $round $v rc=$? $(( $(date +%s) - t0 ))s"
done; done
for v in landed exitbar; do echo "== $v"; grep -hE "^(30|32|64),(768|1280|5120),.* yes " "$R/gemm-$v-r1.txt" "$R/gemm-$v-r2.txt" | cut -c1-100; done
for pdl in 1 0; do
  MOSS_TEST_KERNELS_DIR=$H/exitbar MOSS_TEST_WHITELIST=$MOSS_ROOT/configs/h200-tuned-pdl.json MOSS_CODEC_GEMM_PDL=$pdl timeout 90 \
    $MOSS_RT_BUILD/unittests/Runtime/MossRuntimeTests \
    --gtest_filter='GeneratedGemm*:GraphCapture*:ConcurrentStreams*:ProgrammaticLaunch*' >"$R/t-exitbar-pdl$pdl.log" 2>&1
  echo "exitbar tests pdl=$pdl rc=$? $(grep -E '^\[  PASSED|^\[  FAILED' "$R/t-exitbar-pdl$pdl.log" | tr '\n' ' ') $(( $(date +%s) - t0 ))s"
done
