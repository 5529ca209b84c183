#!/usr/bin/env bash
# One device call: the attention kernel of this tree against one of another
# ABI (a source tree of an earlier commit, e.g. `git archive <commit>`, and
# the kernels its moss-aot built), each with its own runtime. Runs every
# runtime GPU test, the attention/graph/programmatic tests with
# MOSS_ATTENTION_PDL=1, the attention tests under compute-sanitizer memcheck
# and the Python tests on this tree, then moss-bench
# --attention in two rounds (base, new, base, new).
# Usage: OUT=dir benchmarks/compare_attention_abi.sh BASE_SRC BASE_KERNELS [BASE_COMMIT]
set -o pipefail
source "$(dirname "${BASH_SOURCE[0]}")/device_common.sh"
BASE_SRC=${1:?base source tree}
BASE_KERNELS=${2:?base kernels dir}
BASE_COMMIT=${3:-base}
R=${OUT:?output folder}/r
mkdir -p "$R"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv >"$R/gpu.txt"
moss_device_build "$R" "$MOSS_ROOT/.devdeps/prefix"
BASE_BUILD=/tmp/moss-rt-base
cmake -S "$BASE_SRC" -B $BASE_BUILD -G Ninja -DMOSS_BUILD_COMPILER=OFF -DMOSS_BUILD_RUNTIME=ON \
  -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$MOSS_ROOT/.devdeps/prefix" >"$R/base-configure.log" 2>&1 &&
  ninja -C $BASE_BUILD moss-bench >"$R/base-build.log" 2>&1 || { tail -20 "$R/base-build.log"; exit 1; }
BASE_BENCH=$BASE_BUILD/benchmarks/moss-bench/moss-bench
moss_device_runtime_tests "$R"
MOSS_ATTENTION_PDL=1 MOSS_TEST_KERNELS_DIR=$MOSS_ROOT/kernels_generated timeout 90 \
  $MOSS_RT_BUILD/unittests/Runtime/MossRuntimeTests --gtest_filter='*ttention*:*Graph*:*Programmatic*' \
  >"$R/t-pdl.log" 2>&1
echo "PDL tests rc=$?"; grep -E "^\[  (FAILED|PASSED)" "$R/t-pdl.log" | head -8
# Every attention test under compute-sanitizer memcheck: the kernels read and
# write only the tensors' bytes (about 20 s on an H200).
SAN=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
MOSS_TEST_KERNELS_DIR=$MOSS_ROOT/kernels_generated timeout 240 $SAN --tool memcheck --error-exitcode 9 \
  $MOSS_RT_BUILD/unittests/Runtime/MossRuntimeTests --gtest_filter='Attention.*:AttentionArgs.*' \
  >"$R/memcheck.log" 2>&1
echo "memcheck rc=$?"; grep -E "ERROR SUMMARY|^\[  (FAILED|PASSED)" "$R/memcheck.log" | head -4
MOSS_RUNTIME_LIB=$MOSS_RT_BUILD/runtime/libmoss_runtime.so MOSS_KERNELS_DIR=$MOSS_ROOT/kernels_generated \
  MOSS_CODEC_GEMM_CONFIG=$MOSS_ROOT/configs/h200-example.json \
  timeout 200 "$MOSS_ROOT/scripts/test-python.sh" -q -x >"$R/py.log" 2>&1
echo "python tests rc=$?"; tail -1 "$R/py.log"
for round in 1 2; do
  timeout 100 $BASE_BENCH --kernels-dir "$BASE_KERNELS" --attention --json "$R/bench-base-r$round.json" \
    --commit "$BASE_COMMIT" >"$R/bench-base-r$round.txt" 2>&1 || echo "base round $round: rc=$?"
  timeout 100 $MOSS_BENCH --kernels-dir "$MOSS_ROOT/kernels_generated" --attention \
    --json "$R/bench-new-r$round.json" --commit "${MOSS_COMMIT:-unknown}" >"$R/bench-new-r$round.txt" 2>&1 ||
    echo "new round $round: rc=$?"
done
# The device tool returns few files: everything travels as one archive.
tar -czf "$OUT/results.tgz" -C "$R" .
