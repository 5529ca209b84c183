#!/usr/bin/env bash
# Decode pairs up to T = 4: runtime tests, PDL tests, memcheck, and the rule's launches of the sweep4 cases.
set -o pipefail
source benchmarks/device_common.sh
R=$OUT/r; mkdir -p "$R"
trap 'tar -czf "$OUT/results.tgz" -C "$R" .' EXIT
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv >"$R/gpu.txt"; cat "$R/gpu.txt"
rm -rf $MOSS_RT_BUILD
moss_device_build "$R" "$MOSS_ROOT/.devdeps/prefix"
echo "built $(date +%T)"
moss_device_runtime_tests "$R"
T=$MOSS_RT_BUILD/unittests/Runtime/MossRuntimeTests
MOSS_ATTENTION_PDL=1 timeout 100 $T --gtest_filter='Attention*:*Graph*:*Programmatic*' >"$R/t-pdl.log" 2>&1
echo "PDL tests rc=$?"; grep -E "^\[  (FAILED|PASSED)" "$R/t-pdl.log" | head -5
SAN=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
timeout 150 $SAN --tool memcheck --error-exitcode 9 $T --gtest_filter='Attention.*' >"$R/memcheck.log" 2>&1
echo "memcheck rc=$?"; grep -E "ERROR SUMMARY|^\[  (FAILED|PASSED)" "$R/memcheck.log" | head -4
C=12:250:2:16,12:250:4:16,12:400:2:16,12:400:4:16,12:250:2:12,12:250:4:20,12:250:1:16,12:250:8:16
for round in 1 2 3; do
  timeout 60 $MOSS_BENCH --kernels-dir kernels_generated --attention-cases $C --json "$R/new-r$round.json" >"$R/new-r$round.txt" 2>&1 || echo "r$round rc=$?"
done
for c in $(echo $C | tr , ' '); do
  IFS=: read h s t b <<<"$c"
  cat "$R"/new-r?.txt | awk -v c=$c -v h=$h -v s=$s -v t=$t -v b=$b '$1==h && $2==s && $3==t && $4==b {l=$6; p+=$9; q+=$10; n++} END {printf "%s new %s %.2f/%.2f\n", c, l, p/n, q/n}'
done
