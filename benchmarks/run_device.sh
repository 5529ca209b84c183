#!/usr/bin/env bash
# One device call: builds the runtime, its GPU tests, moss-bench and the C
# example on a GPU machine that has the CUDA toolkit but no MLIR, then runs
#  - every runtime test against kernels_generated/ (the example whitelist),
#  - the generated-GEMM tests against each candidate kernels dir (split 1, 2, 4;
#    modes 1 and 2; all decoder shapes); a dir named test_* (e.g. the split-K
#    test whitelist unittests/Runtime/Inputs/split-k-whitelist.json) also gets
#    the graph-capture and concurrent-stream tests and no benchmark,
#  - moss-bench (hot and cold weights, beside the fallback) for each other dir.
# Kernels are built beforehand with moss-aot on the compiler machine.
# Usage: benchmarks/run_device.sh OUT_DIR [CANDIDATES_DIR] [DEPS_PREFIX]
# Environment: MOSS_RUNTIME_TEST_FILTER (gtest filter of the example-whitelist
# run, default all), MOSS_BENCH_MLIST (moss-bench --m-list for candidate dirs),
# MOSS_COMMIT (recorded in the JSON).
set -uo pipefail
shopt -s nullglob
source "$(dirname "${BASH_SOURCE[0]}")/device_common.sh"
ROOT=$MOSS_ROOT
OUT=${1:?output folder}
CAND=${2:-$ROOT/.cand}
DEPS=${3:-$ROOT/.devdeps/prefix}
mkdir -p "$OUT"
cd "$ROOT" || exit 1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv | tee "$OUT/gpu.txt"

moss_device_build "$OUT" "$DEPS"
B=$MOSS_RT_BUILD
echo "built runtime, tests, bench"
T=$B/unittests/Runtime/MossRuntimeTests
BENCH=$B/benchmarks/moss-bench/moss-bench
EX=$B/examples/moss_c_api_example

export MOSS_TEST_KERNELS_DIR=$ROOT/kernels_generated
export MOSS_TEST_WHITELIST=$ROOT/configs/h200-example.json
timeout 300 $T --gtest_filter="${MOSS_RUNTIME_TEST_FILTER:-*}" >"$OUT/tests-example.log" 2>&1
echo "runtime tests (example whitelist): rc=$?"
grep -E "^\[  (FAILED|SKIPPED) |^\[  PASSED|tests ran" "$OUT/tests-example.log" | head -20
$EX "$MOSS_TEST_KERNELS_DIR" "$MOSS_TEST_WHITELIST"; echo "example rc=$?"

MLIST=()
[ -n "${MOSS_BENCH_MLIST:-}" ] && MLIST=(--m-list "$MOSS_BENCH_MLIST")
for dir in "$CAND"/k/*/; do
  name=$(basename "$dir")
  filter='GeneratedGemm*'
  case $name in test_*) filter='GeneratedGemm*:GraphCapture*:ConcurrentStreams*' ;; esac
  MOSS_TEST_KERNELS_DIR=$dir MOSS_TEST_WHITELIST=$CAND/wl/$name.json \
    timeout 200 $T --gtest_filter="$filter" >"$OUT/tests-$name.log" 2>&1
  echo "generated GEMM tests ($name): rc=$? $(grep -E '^\[  PASSED|^\[  FAILED' "$OUT/tests-$name.log" | head -3 | tr '\n' ' ')"
  case $name in test_*) continue ;; esac
  timeout 200 $BENCH --kernels-dir "$dir" --whitelist "$CAND/wl/$name.json" "${MLIST[@]}" \
    --json "$OUT/bench-$name.json" --commit "${MOSS_COMMIT:-unknown}" >"$OUT/bench-$name.log" 2>&1
  echo "bench ($name): rc=$?"
done
# Logs travel back as one archive (the device tool returns few files).
tar -czf "$OUT/logs.tgz" -C "$OUT" $(cd "$OUT" && ls *.log *.txt 2>/dev/null)
rm -f "$OUT"/*.log
