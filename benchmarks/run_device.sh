#!/usr/bin/env bash
# The one device script: on a GPU machine with the CUDA toolkit and no MLIR,
# builds the runtime, its GPU tests and moss-bench, runs every runtime test
# (also under compute-sanitizer memcheck for attention) and the Python tests,
# then benchmarks the GEMMs of a tuned whitelist and the attention cases and
# writes the latest results as OUT/<gpu>/<benchmark>.{json,md}: copy them over
# benchmarks/results/<gpu>/ (git is the history).
#
#   benchmarks/run_device.sh OUT [TUNED_KERNELS_DIR TUNED_WHITELIST]
#
# Kernels are built beforehand on the compiler machine: kernels_generated/
# from configs/h200-example.json (the tests), and TUNED_KERNELS_DIR from
# TUNED_WHITELIST (default .cand/tuned and configs/h200-tuned-pdl.json; the
# GEMM benchmark is skipped when that folder is missing). GoogleTest and
# nlohmann/json come from .devdeps/prefix (scripts/device-deps.sh) when the
# machine lacks them. .cand/layernorm (from unittests/Runtime/Inputs/
# layernorm-whitelist.json) adds the LayerNorm modes' tests and timings, .cand/qkv and
# .cand/layer the fused layer's (layer_tests below). MOSS_COMMIT is recorded in the JSON.
# The layer step's timings take longer than one device call leaves: run
# python/benchmarks/layer_step.py on its own (benchmarks/README.md).
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
OUT=${1:?usage: benchmarks/run_device.sh OUT [TUNED_KERNELS_DIR TUNED_WHITELIST]}
TUNED=${2:-$ROOT/.cand/tuned}
TUNED_WL=${3:-$ROOT/configs/h200-tuned-pdl.json}
BUILD=/tmp/moss-rt-build
mkdir -p "$OUT"
cd "$ROOT" || exit 1

gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
case $gpu in *H200*) tag=h200 ;; *H100*) tag=h100 ;; *) tag=$(echo "$gpu" | tr -c 'a-zA-Z0-9\n' '-') ;; esac
RES=$OUT/$tag
mkdir -p "$RES"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv | tee "$OUT/gpu.txt"

cmake -S "$ROOT" -B $BUILD -G Ninja -DMOSS_BUILD_COMPILER=OFF -DMOSS_BUILD_RUNTIME=ON \
  -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$ROOT/.devdeps/prefix" >"$OUT/configure.log" 2>&1 \
  || { tail -30 "$OUT/configure.log"; exit 1; }
ninja -C $BUILD >"$OUT/build.log" 2>&1 || { grep -E "error" -A6 "$OUT/build.log" | head -60; exit 1; }
echo "built runtime, tests, moss-bench"
T=$BUILD/unittests/Runtime/MossRuntimeTests
BENCH=$BUILD/benchmarks/moss-bench/moss-bench

export MOSS_TEST_KERNELS_DIR=$ROOT/kernels_generated
export MOSS_TEST_WHITELIST=$ROOT/configs/h200-example.json
status=0
step() { # step NAME COMMAND...: runs it, logs to OUT/NAME.log, prints the verdict
  local name=$1
  shift
  "$@" >"$OUT/$name.log" 2>&1
  local rc=$?
  echo "$name: rc=$rc $(grep -E '^\[  (PASSED|FAILED)|ERROR SUMMARY|passed|failed' "$OUT/$name.log" | head -3 | tr '\n' ' ')"
  ((rc == 0)) || status=1
}
step runtime-tests timeout 300 $T
step runtime-tests-pdl env MOSS_ATTENTION_PDL=1 MOSS_CODEC_GEMM_PDL=1 timeout 200 $T \
  --gtest_filter='Attention*:*Graph*:*Programmatic*'
step python-tests env MOSS_RUNTIME_LIB=$BUILD/runtime/libmoss_runtime.so timeout 200 "$ROOT/scripts/test-python.sh"

# gemm_set NAME KERNELS WHITELIST TEST_FILTER: the GPU tests of a kernels
# folder, then its GEMM benchmark as RES/NAME.{json,md}.
gemm_set() {
  local name=$1 kernels=$2 whitelist=$3 filter=$4
  if [[ ! -f $kernels/manifest.json ]]; then
    echo "$name: skipped, no kernels in $kernels (moss-aot --whitelist $whitelist --out $kernels)"
    return
  fi
  step "$name-tests" env MOSS_TEST_KERNELS_DIR="$kernels" MOSS_TEST_WHITELIST="$whitelist" timeout 300 $T \
    --gtest_filter="$filter"
  step "$name-bench" timeout 300 $BENCH --kernels-dir "$kernels" --whitelist "$whitelist" \
    --json "$RES/$name.json" --commit "${MOSS_COMMIT:-unknown}"
  python3 "$ROOT/benchmarks/targets.py" "$RES/$name.json" >"$RES/$name.md"
  grep -E "met, .* missed" "$RES/$name.md"
}
gemm_set gemm "$TUNED" "$TUNED_WL" 'GeneratedGemm*'
# The LayerNorm modes: their tests (graphs and programmatic launches too) and
# timings beside the fallback.
gemm_set gemm-layernorm "$ROOT/.cand/layernorm" "$ROOT/unittests/Runtime/Inputs/layernorm-whitelist.json" \
  'GeneratedGemm*:*Graph*:*Programmatic*'
# The fused layer's kernels: the QKV epilogue (mode 5, also under memcheck)
# and the padding rows of the last epilogue, on the layer whitelist's
# kernels (.cand/layer from configs/layer-step.json, .cand/qkv from
# unittests/Runtime/Inputs/qkv-rope-cache-whitelist.json); then the layer's
# Python tests on them.
layer_tests() {
  local qkv=$ROOT/.cand/qkv layer=$ROOT/.cand/layer
  local qkv_wl=$ROOT/unittests/Runtime/Inputs/qkv-rope-cache-whitelist.json layer_wl=$ROOT/configs/layer-step.json
  if [[ ! -f $qkv/manifest.json || ! -f $layer/manifest.json ]]; then
    echo "layer: skipped, no kernels in $qkv or $layer (moss-aot --whitelist $qkv_wl --out $qkv, and $layer_wl)"
    return
  fi
  step qkv-tests env MOSS_TEST_KERNELS_DIR="$qkv" MOSS_TEST_WHITELIST="$qkv_wl" timeout 200 $T \
    --gtest_filter='QkvRopeCache*'
  step qkv-memcheck env MOSS_TEST_KERNELS_DIR="$qkv" MOSS_TEST_WHITELIST="$qkv_wl" timeout 200 \
    compute-sanitizer --tool memcheck --error-exitcode 9 $T --gtest_filter='QkvRopeCache*'
  step layer-tests env MOSS_TEST_KERNELS_DIR="$layer" MOSS_TEST_WHITELIST="$layer_wl" timeout 300 $T \
    --gtest_filter='RowLive*:GeneratedGemm*'
  step layer-python-tests env MOSS_RUNTIME_LIB=$BUILD/runtime/libmoss_runtime.so MOSS_TEST_KERNELS_DIR="$layer" \
    MOSS_TEST_WHITELIST="$layer_wl" timeout 300 "$ROOT/scripts/test-python.sh"
}
layer_tests
step attention-bench timeout 300 $BENCH --attention --json "$RES/attention.json" \
  --commit "${MOSS_COMMIT:-unknown}"
python3 "$ROOT/benchmarks/targets.py" "$RES/attention.json" >"$RES/attention.md"
grep -E "met, .* missed" "$RES/attention.md"

step memcheck timeout 200 compute-sanitizer --tool memcheck --error-exitcode 9 $T --gtest_filter='Attention.*:AttentionPositions.*'

# The device tool returns a handful of files: the logs travel as one archive.
tar -czf "$OUT/logs.tgz" -C "$OUT" $(cd "$OUT" && ls ./*.log ./*.txt)
rm -f "$OUT"/*.log
exit $status
