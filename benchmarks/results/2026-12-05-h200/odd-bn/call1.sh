#!/bin/bash
# Device call 1 (with bn-48-80-96.patch applied): every runtime test on kernels_generated/, the
# GEMM tests over the bn = 48/80/96 test whitelist (plain and programmatic),
# then moss-tune over bn 48-128 candidates of the missed keys.
# Carry: .devdeps/prefix, kernels_generated, .cand/odd.
set -u
cd "$(dirname "$0")/../.." || exit 1
source benchmarks/device_common.sh
C=$MOSS_ROOT/.cand/odd
R=$OUT/c1; mkdir -p "$R"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv >"$R/gpu.txt"
t0=$(date +%s)
moss_device_build "$R" "$MOSS_ROOT/.devdeps/prefix" || exit 1
echo "built $(( $(date +%s) - t0 ))s"
moss_device_runtime_tests "$R"
echo "runtime tests $(( $(date +%s) - t0 ))s"
T=$MOSS_RT_BUILD/unittests/Runtime/MossRuntimeTests
ok=1
for pdl in 0 1; do
  MOSS_CODEC_GEMM_PDL=$pdl MOSS_TEST_KERNELS_DIR=$C/k \
    MOSS_TEST_WHITELIST=$MOSS_ROOT/unittests/Runtime/Inputs/odd-bn-whitelist.json \
    timeout 120 $T --gtest_filter='GeneratedGemm*:GraphCapture*:ConcurrentStreams*:ProgrammaticLaunch*:OccupancyModel*' \
    >"$R/t-odd-pdl$pdl.log" 2>&1
  rc=$?; [ $rc = 0 ] || ok=0
  echo "odd-bn pdl=$pdl rc=$rc $(grep -E '^\[  PASSED|^\[  FAILED|SKIPPED \]' "$R/t-odd-pdl$pdl.log" | head -3 | tr '\n' ' ')"
done
grep -E "Failure|Expected|Which is|relativeL2" "$R/t-odd-pdl0.log" | head -30
echo "tests $(( $(date +%s) - t0 ))s"
if [ $ok = 1 ]; then
  MOSS_CODEC_GEMM_PDL=1 timeout $(( 570 - ($(date +%s) - t0) )) \
    $MOSS_RT_BUILD/benchmarks/moss-tune/moss-tune --candidates "$C/tune" --out "$R/tune" >"$R/tune.log" 2>&1
  echo "tune rc=$? $(( $(date +%s) - t0 ))s"; tail -3 "$R/tune.log"
fi
