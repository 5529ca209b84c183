#!/bin/bash
# Device call (2026-12-05d, H100; run as .cand/final/run.sh): the landed moss-aot's kernels of the tuned
# whitelist (.cand/handover/landed): GPU tests with and without PDL and the
# GEMM targets; then every runtime test on kernels_generated/.
set -u
cd "$(dirname "$0")/../.." || exit 1
source benchmarks/device_common.sh
R=$OUT/final; mkdir -p "$R"
pack() { (cd "$OUT" && tar czf final.tgz final && rm -rf final); }
trap pack EXIT
trap 'exit 143' TERM
t0=$(date +%s)
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv >"$R/gpu.txt"; cat "$R/gpu.txt"
moss_device_build "$R" "$MOSS_ROOT/.devdeps/prefix" all moss-bench || exit 1
echo "built $(( $(date +%s) - t0 ))s"
L=$MOSS_ROOT/.cand/handover/landed
for pdl in 1 0; do
  MOSS_TEST_KERNELS_DIR=$L MOSS_TEST_WHITELIST=$MOSS_ROOT/configs/h200-tuned-pdl.json MOSS_CODEC_GEMM_PDL=$pdl timeout 100 \
    $MOSS_RT_BUILD/unittests/Runtime/MossRuntimeTests \
    --gtest_filter='GeneratedGemm*:GraphCapture*:ConcurrentStreams*:ProgrammaticLaunch*' >"$R/t-tuned-pdl$pdl.log" 2>&1
  echo "tuned tests pdl=$pdl rc=$? $(grep -E '^\[  PASSED|^\[  FAILED' "$R/t-tuned-pdl$pdl.log" | tr '\n' ' ') $(( $(date +%s) - t0 ))s"
done
timeout 100 "$MOSS_BENCH" --kernels-dir "$L" --whitelist configs/h200-tuned-pdl.json --m-list 30 \
  --json "$R/gemm-landed.json" >"$R/gemm-landed.txt" 2>&1
echo "bench rc=$? $(( $(date +%s) - t0 ))s"
python3 benchmarks/targets.py "$R/gemm-landed.json" >"$R/targets-gemm.md" 2>&1; grep -E "^\| (30|32)," "$R/targets-gemm.md"; tail -1 "$R/targets-gemm.md"
moss_device_runtime_tests "$R"
echo "done $(( $(date +%s) - t0 ))s"
