#!/usr/bin/env bash
# g2_tma (ABI 12) against ABI 11 (edb200d runtime + kernels): tests, bench.
set -o pipefail
source benchmarks/device_common.sh
R=$OUT/r; mkdir -p "$R"
trap 'tar -czf "$OUT/results.tgz" -C "$R" .' EXIT
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv >"$R/gpu.txt"; cat "$R/gpu.txt"
moss_device_build "$R" "$MOSS_ROOT/.devdeps/prefix" &
BB=/tmp/moss-rt-base
(cmake -S .cand/wide/base-src -B $BB -G Ninja -DMOSS_BUILD_COMPILER=OFF -DMOSS_BUILD_RUNTIME=ON \
  -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$MOSS_ROOT/.devdeps/prefix" >"$R/base-configure.log" 2>&1 &&
  ninja -C $BB moss-bench >"$R/base-build.log" 2>&1) || echo "base build failed"
wait || exit 1
echo "built $(date +%T)"
export MOSS_TEST_KERNELS_DIR=$MOSS_ROOT/kernels_generated
export MOSS_TEST_WHITELIST=$MOSS_ROOT/configs/h200-example.json
T=$MOSS_RT_BUILD/unittests/Runtime/MossRuntimeTests
timeout 200 $T >"$R/t.log" 2>&1; echo "runtime tests rc=$?"
grep -E "^\[  (FAILED|PASSED)|Failure" -A3 "$R/t.log" | head -24
MOSS_ATTENTION_PDL=1 timeout 100 $T --gtest_filter='Attention*:*Graph*:*Programmatic*' >"$R/t-pdl.log" 2>&1
echo "PDL tests rc=$?"; grep -E "^\[  (FAILED|PASSED)" "$R/t-pdl.log" | head -5
SAN=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
timeout 200 $SAN --tool memcheck --error-exitcode 9 $T --gtest_filter='Attention.*:AttentionArgs.*' >"$R/memcheck.log" 2>&1
echo "memcheck rc=$?"; grep -E "ERROR SUMMARY|^\[  (FAILED|PASSED)" "$R/memcheck.log" | head -4
C=20:125:1:1,20:125:1:4,20:125:1:8,20:125:1:16,20:125:8:1,20:125:8:4,20:125:16:4,20:125:16:16,12:250:1:1,12:250:32:4,12:400:1:1,12:400:32:16,20:125:32:4
for round in 1 2 3; do
  timeout 60 $BB/benchmarks/moss-bench/moss-bench --kernels-dir .cand/wide/base-kernels --attention-cases $C \
    --json "$R/base-r$round.json" >"$R/base-r$round.txt" 2>&1 || echo "base r$round rc=$?"
  timeout 60 $MOSS_BENCH --kernels-dir kernels_generated --attention-cases $C \
    --json "$R/new-r$round.json" >"$R/new-r$round.txt" 2>&1 || echo "new r$round rc=$?"
done
echo "bench done $(date +%T)"
for r in 1 2 3; do
paste <(grep -E "^ +[0-9]" "$R/base-r$r.txt" | awk '{print $1":"$2":"$3":"$4, $6, $7, $9, $10}') \
      <(grep -E "^ +[0-9]" "$R/new-r$r.txt" | awk '{print "new", $6, $7, $9, $10, $11, $16}')
done
grep -iE "error|differ" "$R"/new-r1.txt | head -5
