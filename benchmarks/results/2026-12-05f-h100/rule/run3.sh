#!/usr/bin/env bash
# New launch rule (decode pairs, g2 TMA walks): tests, A/B against the old rule's runtime, full attention bench.
set -o pipefail
source benchmarks/device_common.sh
R=$OUT/r; mkdir -p "$R"
trap 'tar -czf "$OUT/results.tgz" -C "$R" .' EXIT
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv >"$R/gpu.txt"; cat "$R/gpu.txt"
rm -rf $MOSS_RT_BUILD
moss_device_build "$R" "$MOSS_ROOT/.devdeps/prefix" &
BB=/tmp/moss-rt-base
(cmake -S .cand/rule/base-src -B $BB -G Ninja -DMOSS_BUILD_COMPILER=OFF -DMOSS_BUILD_RUNTIME=ON \
  -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$MOSS_ROOT/.devdeps/prefix" >"$R/base-configure.log" 2>&1 &&
  ninja -C $BB moss-bench >"$R/base-build.log" 2>&1) || echo "base build failed"
wait || exit 1
echo "built $(date +%T)"
moss_device_runtime_tests "$R"
T=$MOSS_RT_BUILD/unittests/Runtime/MossRuntimeTests
MOSS_ATTENTION_PDL=1 timeout 100 $T --gtest_filter='Attention*:*Graph*:*Programmatic*' >"$R/t-pdl.log" 2>&1
echo "PDL tests rc=$?"; grep -E "^\[  (FAILED|PASSED)" "$R/t-pdl.log" | head -5
SAN=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
timeout 150 $SAN --tool memcheck --error-exitcode 9 $T --gtest_filter='Attention.*' >"$R/memcheck.log" 2>&1
echo "memcheck rc=$?"; grep -E "ERROR SUMMARY|^\[  (FAILED|PASSED)" "$R/memcheck.log" | head -4
echo "tests done $(date +%T)"
C=12:250:1:12,12:250:1:16,12:250:1:20,12:400:1:16,12:400:1:20,12:400:30:8,12:400:32:8,12:400:30:16,12:400:32:16,12:400:1:32,12:400:8:32,12:400:16:32,12:250:1:8,12:250:8:16,12:250:32:16,20:125:1:16
for round in 1 2 3; do
  timeout 60 $BB/benchmarks/moss-bench/moss-bench --kernels-dir kernels_generated --attention-cases $C \
    --json "$R/base-r$round.json" >"$R/base-r$round.txt" 2>&1 || echo "base r$round rc=$?"
  timeout 60 $MOSS_BENCH --kernels-dir kernels_generated --attention-cases $C \
    --json "$R/new-r$round.json" >"$R/new-r$round.txt" 2>&1 || echo "new r$round rc=$?"
done
echo "ab done $(date +%T)"
for c in $(echo $C | tr , ' '); do
  IFS=: read h s t b <<<"$c"
  printf "%s" "$c"
  for v in base new; do
    cat "$R"/$v-r?.txt | awk -v h=$h -v s=$s -v t=$t -v b=$b -v v=$v '$1==h && $2==s && $3==t && $4==b {l=$6; p+=$9; q+=$10; n++} END {printf "  %s %s %.2f/%.2f", v, l, p/n, q/n}'
  done
  echo
done
MOSS_COMMIT=${MOSS_COMMIT:-rule} moss_device_attention_bench "$R" | tail -40
echo "all done $(date +%T)"
