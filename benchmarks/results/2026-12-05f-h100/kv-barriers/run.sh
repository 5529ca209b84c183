#!/usr/bin/env bash
# g4_tma: K and V on mbarriers of their own, every K box first: tests on those kernels, A/B against HEAD kernels.
set -o pipefail
source benchmarks/device_common.sh
R=$OUT/r; mkdir -p "$R"
trap 'tar -czf "$OUT/results.tgz" -C "$R" .' EXIT
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv >"$R/gpu.txt"; cat "$R/gpu.txt"
rm -rf $MOSS_RT_BUILD; moss_device_build "$R" "$MOSS_ROOT/.devdeps/prefix"
echo "built $(date +%T)"
export MOSS_TEST_KERNELS_DIR=$MOSS_ROOT/.cand/kv/k MOSS_TEST_WHITELIST=$MOSS_ROOT/configs/h200-example.json
T=$MOSS_RT_BUILD/unittests/Runtime/MossRuntimeTests
timeout 200 $T >"$R/t.log" 2>&1; echo "runtime tests rc=$?"; grep -E "^\[  (FAILED|PASSED)|Failure" -A3 "$R/t.log" | head -12
MOSS_ATTENTION_PDL=1 timeout 100 $T --gtest_filter="Attention.Tma*:*Graph*:*Programmatic*" >"$R/t-pdl.log" 2>&1
echo "PDL tests rc=$?"; grep -E "^\[  (FAILED|PASSED)" "$R/t-pdl.log" | head -5
SAN=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
timeout 150 $SAN --tool memcheck --error-exitcode 9 $T --gtest_filter='Attention.*' >"$R/memcheck.log" 2>&1
echo "memcheck rc=$?"; grep -E "ERROR SUMMARY|^\[  (FAILED|PASSED)" "$R/memcheck.log" | head -4
echo "tests done $(date +%T)"
C=12:250:1:1,12:250:1:4,12:250:1:8,12:250:8:4,12:250:1:11,12:250:16:4,12:250:32:1,20:125:1:1
for round in 1 2 3; do
  for v in base kv; do
    d=.cand/kv/base-kernels; [ $v = kv ] && d=.cand/kv/k
    timeout 60 $MOSS_BENCH --kernels-dir $d --attention-cases $C --json "$R/$v-r$round.json" >"$R/$v-r$round.txt" 2>&1 || echo "$v r$round rc=$?"
  done
done
echo "ab done $(date +%T)"
for c in $(echo $C | tr , ' '); do
  IFS=: read h s t b <<<"$c"
  printf "%s" "$c"
  for v in base kv; do
    cat "$R"/$v-r?.txt | awk -v h=$h -v s=$s -v t=$t -v b=$b -v v=$v '$1==h && $2==s && $3==t && $4==b {l=$6; p+=$9; q+=$10; n++} END {printf "  %s %s %.2f/%.2f", v, l, p/n, q/n}'
  done
  echo
done
