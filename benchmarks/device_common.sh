# shellcheck shell=bash
# Shared by the device scripts in benchmarks/: build the runtime on a GPU
# machine without MLIR, run its tests, run the attention benchmark. Sourced.
MOSS_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
MOSS_RT_BUILD=/tmp/moss-rt-build
MOSS_BENCH=$MOSS_RT_BUILD/benchmarks/moss-bench/moss-bench

# moss_device_build OUT DEPS [ninja targets...]: configure (runtime only) and
# build into $MOSS_RT_BUILD; logs in OUT; exits the script on failure.
moss_device_build() {
  local out=$1 deps=$2
  shift 2
  cmake -S "$MOSS_ROOT" -B $MOSS_RT_BUILD -G Ninja -DMOSS_BUILD_COMPILER=OFF \
    -DMOSS_BUILD_RUNTIME=ON -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$deps" \
    >"$out/configure.log" 2>&1 || { tail -30 "$out/configure.log"; exit 1; }
  ninja -C $MOSS_RT_BUILD "$@" >"$out/build.log" 2>&1 \
    || { grep -E "error" -A6 "$out/build.log" | head -60; exit 1; }
}

# moss_device_runtime_tests OUT: every runtime test against kernels_generated/
# and the example whitelist; prints the summary.
moss_device_runtime_tests() {
  local out=$1
  export MOSS_TEST_KERNELS_DIR=$MOSS_ROOT/kernels_generated
  export MOSS_TEST_WHITELIST=$MOSS_ROOT/configs/h200-example.json
  timeout 250 $MOSS_RT_BUILD/unittests/Runtime/MossRuntimeTests >"$out/t.log" 2>&1
  echo "runtime tests rc=$?"
  grep -E "^\[  (FAILED|PASSED)|Failure" -A3 "$out/t.log" | head -20
}

# moss_device_attention_bench OUT: moss-bench --attention into
# OUT/attention-bench.json; prints one line per case.
moss_device_attention_bench() {
  local out=$1
  timeout 200 $MOSS_BENCH --kernels-dir "$MOSS_ROOT/kernels_generated" --attention \
    --json "$out/attention-bench.json" --commit "${MOSS_COMMIT:-unknown}" >"$out/bench.txt" 2>&1
  echo "bench rc=$?"
  grep -E "^ +[0-9]" "$out/bench.txt" \
    | awk '{print $1,$2,$3,$4,"sp",$6,"bthd",$8,"pdl",$9,"cp.async",$10,"bhtd+cp",$12,"up",$14,"err",$16}'
}
