# shellcheck shell=bash
# Shared by the device scripts in benchmarks/: build the runtime on a GPU
# machine without MLIR, run its tests, run the attention benchmark. Sourced.
MOSS_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
MOSS_RT_BUILD=/tmp/moss-rt-build
MOSS_BENCH=$MOSS_RT_BUILD/benchmarks/moss-bench/moss-bench

# moss_device_begin: the start of a device script. Sets R=$OUT/r for its logs
# and results (packed into $OUT/results.tgz on exit, whatever happens) and
# writes the GPU's name, driver and clock into R/gpu.txt.
moss_device_begin() {
  R=$OUT/r
  mkdir -p "$R"
  trap moss_device_pack EXIT
  nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv >"$R/gpu.txt"
  cat "$R/gpu.txt"
}

# moss_device_pack [PHASE]: packs R into $OUT/results.tgz now, so that a call
# killed at its time limit (no EXIT trap runs then) still returns the phases
# that finished; with PHASE prints it and the seconds since the script began.
moss_device_pack() {
  tar -czf "$OUT/results.tgz" -C "$R" .
  [[ -z ${1:-} ]] || echo "[$1 ${SECONDS}s]"
}

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

# moss_device_attention_bench OUT [KERNELS_DIR]: moss-bench --attention on
# KERNELS_DIR (default kernels_generated) into OUT/attention-bench.json;
# prints one line per case.
moss_device_attention_bench() {
  local out=$1 dir=${2:-$MOSS_ROOT/kernels_generated}
  timeout 200 $MOSS_BENCH --kernels-dir "$dir" --attention \
    --json "$out/attention-bench.json" --commit "${MOSS_COMMIT:-unknown}" >"$out/bench.txt" 2>&1
  echo "bench rc=$?"
  grep -E "^ +[0-9]" "$out/bench.txt" \
    | awk '{print $1,$2,$3,$4,"sp",$6,"bthd",$8,"pdl",$9,"cp.async",$10,"bhtd+cp",$12,"up",$14,"err",$16}'
}

# moss_device_attention_targets OUT [KERNELS_DIR]: moss_device_attention_bench
# into OUT, then issue 6's attention targets (benchmarks/targets.py) into
# OUT/targets-attention.md; prints the met / missed count and packs.
moss_device_attention_targets() {
  moss_device_attention_bench "$@" >/dev/null
  python3 "$MOSS_ROOT/benchmarks/targets.py" "$1/attention-bench.json" >"$1/targets-attention.md"
  grep -E "met, .* missed" "$1/targets-attention.md"
  moss_device_pack attention-bench
}

# moss_device_attention_checks OUT KERNELS_DIR: the GPU checks of an attention
# kernel change on KERNELS_DIR (with the example whitelist): every runtime
# test, the attention, graph and programmatic tests with MOSS_ATTENTION_PDL=1,
# and memcheck over Attention.*; logs in OUT, summaries printed.
moss_device_attention_checks() {
  local out=$1 dir=$2
  local t=$MOSS_RT_BUILD/unittests/Runtime/MossRuntimeTests
  local san
  san=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
  export MOSS_TEST_KERNELS_DIR=$dir MOSS_TEST_WHITELIST=$MOSS_ROOT/configs/h200-example.json
  timeout 250 $t >"$out/t.log" 2>&1
  echo "runtime tests rc=$?"
  grep -E "^\[  (FAILED|PASSED)|Failure" -A3 "$out/t.log" | head -12
  MOSS_ATTENTION_PDL=1 timeout 100 $t --gtest_filter='Attention*:*Graph*:*Programmatic*' \
    >"$out/t-pdl.log" 2>&1
  echo "PDL tests rc=$?"
  grep -E "^\[  (FAILED|PASSED)" "$out/t-pdl.log" | head -5
  timeout 150 $san --tool memcheck --error-exitcode 9 $t --gtest_filter='Attention.*' \
    >"$out/memcheck.log" 2>&1
  echo "memcheck rc=$?"
  grep -E "ERROR SUMMARY|^\[  (FAILED|PASSED)" "$out/memcheck.log" | head -4
}

# moss_device_attention_start KERNELS_DIR: the start of a device script that
# checks an attention change: moss_device_begin, the runtime build and
# moss_device_attention_checks on KERNELS_DIR into R/checks, packing after
# each; creates R/checks, R/ab and R/final.
moss_device_attention_start() {
  moss_device_begin
  moss_device_build "$R" "$MOSS_ROOT/.devdeps/prefix"
  moss_device_pack built
  mkdir -p "$R/checks" "$R/ab" "$R/final"
  moss_device_attention_checks "$R/checks" "$1"
  moss_device_pack checks
}

# moss_device_attention_ab OUT CASES ROUNDS NAME=KERNELS_DIR[+VAR=VALUE,...]...:
# moss-bench --attention-cases CASES on each variant's kernels dir, with its
# environment variables if it names any, the variants alternating in each of
# ROUNDS rounds (OUT/NAME-rK.txt and .json), then moss_attention_means. A
# variant's MOSS_BENCH=PATH runs that moss-bench (a runtime built from other
# sources) instead of $MOSS_BENCH.
moss_device_attention_ab() {
  local out=$1 cases=$2 rounds=$3
  shift 3
  local round variant name rest spec bench names=()
  for round in $(seq "$rounds"); do
    for variant in "$@"; do
      name=${variant%%=*} rest=${variant#*=} spec='' bench=$MOSS_BENCH
      [[ $rest == *+* ]] && spec=${rest#*+}
      [[ ,$spec, =~ ,MOSS_BENCH=([^,]*), ]] && bench=${BASH_REMATCH[1]}
      env ${spec//,/ } timeout 120 "$bench" --kernels-dir "${rest%%+*}" --attention-cases "$cases" \
        --json "$out/$name-r$round.json" >"$out/$name-r$round.txt" 2>&1 \
        || echo "$name r$round rc=$?"
    done
  done
  for variant in "$@"; do names+=("${variant%%=*}"); done
  moss_attention_means "$out" "$cases" "${names[@]}"
}

# moss_device_attention_env_ab OUT CASES ROUNDS KERNELS_DIR NAME=ENV...:
# moss_device_attention_ab on one kernels dir, the variants differing in their
# environment (ENV: VAR=VALUE[,VAR=VALUE...], or - for none).
moss_device_attention_env_ab() {
  local out=$1 cases=$2 rounds=$3 dir=$4
  shift 4
  local variant variants=()
  for variant in "$@"; do
    if [ "${variant#*=}" = - ]; then
      variants+=("${variant%%=*}=$dir")
    else
      variants+=("${variant%%=*}=$dir+${variant#*=}")
    fi
  done
  moss_device_attention_ab "$out" "$cases" "$rounds" "${variants[@]}"
}

# moss_attention_means OUT CASES NAME...: per case (H:S:T:B) each variant's
# launch and its plain / PDL us per call, averaged over OUT/NAME-r*.txt.
moss_attention_means() {
  local out=$1 cases=$2
  shift 2
  local c h s t b name
  for c in ${cases//,/ }; do
    IFS=: read -r h s t b <<<"$c"
    printf "%s" "$c"
    for name in "$@"; do
      cat "$out/$name"-r*.txt | awk -v h="$h" -v s="$s" -v t="$t" -v b="$b" -v v="$name" \
        '$1==h && $2==s && $3==t && $4==b {l=$6; p+=$9; q+=$10; n++}
         END {if (n) printf "  %s %s %.2f/%.2f", v, l, p/n, q/n}'
    done
    echo
  done
}
