#!/usr/bin/env bash
# At-once merge of 3-4 key groups: tests, memcheck, bench base vs new (same runtime).
set -o pipefail
source benchmarks/device_common.sh
R=$OUT/r; mkdir -p "$R"
trap 'tar -czf "$OUT/results.tgz" -C "$R" .' EXIT
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv >"$R/gpu.txt"; cat "$R/gpu.txt"
moss_device_build "$R" "$MOSS_ROOT/.devdeps/prefix"
echo "built $(date +%T)"
export MOSS_TEST_KERNELS_DIR=$MOSS_ROOT/kernels_generated
export MOSS_TEST_WHITELIST=$MOSS_ROOT/configs/h200-example.json
T=$MOSS_RT_BUILD/unittests/Runtime/MossRuntimeTests
timeout 200 $T >"$R/t.log" 2>&1; echo "runtime tests rc=$?"
grep -E "^\[  (FAILED|PASSED)|Failure" -A3 "$R/t.log" | head -20
MOSS_ATTENTION_PDL=1 timeout 100 $T --gtest_filter='Attention*:*Graph*:*Programmatic*' >"$R/t-pdl.log" 2>&1
echo "PDL tests rc=$?"; grep -E "^\[  (FAILED|PASSED)" "$R/t-pdl.log" | head -5
SAN=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
timeout 200 $SAN --tool memcheck --error-exitcode 9 $T --gtest_filter='Attention.*:AttentionArgs.*' >"$R/memcheck.log" 2>&1
echo "memcheck rc=$?"; grep -E "ERROR SUMMARY|^\[  (FAILED|PASSED)" "$R/memcheck.log" | head -4
echo "tests done $(date +%T)"
C=${CASES:-20:125:1:1,20:125:1:4,20:125:1:16,20:125:240:16,12:250:1:1,12:250:1:4,12:250:1:16,12:250:480:16,12:400:1:1,12:400:1:4,12:400:1:16,12:400:32:1,12:400:32:4,12:400:32:16,12:400:480:16,12:250:8:1,12:250:8:4,12:250:8:16,12:400:8:4,12:400:16:4}
for v in base new b; do
  $(command -v cuobjdump || echo /usr/local/cuda/bin/cuobjdump) -sass .cand/wide/$v-kernels/streaming_attention_d64.*.cubin 2>/dev/null | gzip >"$R/sass-$v.txt.gz"
done
for round in 1 2 3; do
  for v in base new b; do
    K=.cand/wide/$v-kernels
    timeout 90 $MOSS_BENCH --kernels-dir $K --attention-cases $C \
      --json "$R/$v-r$round.json" >"$R/$v-r$round.txt" 2>&1 || echo "$v r$round rc=$?"
  done
done
echo "bench done $(date +%T)"
for r in 1 2 3; do
paste <(grep -E "^ +[0-9]" "$R/base-r$r.txt" | awk '{print $1":"$2":"$3":"$4, $6, $9, $10}') \
      <(grep -E "^ +[0-9]" "$R/new-r$r.txt" | awk '{print "new", $9, $10}') \
      <(grep -E "^ +[0-9]" "$R/b-r$r.txt" | awk '{print "b", $9, $10}')
done
grep -iE "error|differ" "$R"/new-r1.txt | head
