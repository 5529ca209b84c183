#!/usr/bin/env bash
# Split merge at once: tests on the new kernels, bits against base, bench base/k2/k4.
set -o pipefail
source benchmarks/device_common.sh
R=$OUT/r; mkdir -p "$R"
trap 'tar -czf "$OUT/results.tgz" -C "$R" .' EXIT
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv >"$R/gpu.txt"; cat "$R/gpu.txt"
moss_device_build "$R" "$MOSS_ROOT/.devdeps/prefix"
echo "built $(date +%T)"
W=$MOSS_ROOT/configs/h200-example.json
nvcc -O2 -std=c++17 -I include .cand/smerge/bits.cu -o /tmp/bits -L$MOSS_RT_BUILD/runtime -lmoss_runtime -Xlinker -rpath=$MOSS_RT_BUILD/runtime >"$R/bits-build.log" 2>&1 || { echo "bits build failed"; tail "$R/bits-build.log"; }
for sp in rule 3 8; do
  for kd in .cand/smerge/k4; do :; done
  if [ $sp = rule ]; then unset MOSS_ATTENTION_SPLITS; else export MOSS_ATTENTION_SPLITS=$sp; fi
  /tmp/bits .cand/smerge/base-kernels kernels_generated $W >"$R/bits-k2-$sp.txt" 2>&1; echo "bits k2 $sp rc=$? $(tail -1 $R/bits-k2-$sp.txt)"
  /tmp/bits .cand/smerge/base-kernels .cand/smerge/k4 $W >"$R/bits-k4-$sp.txt" 2>&1; echo "bits k4 $sp rc=$? $(tail -1 $R/bits-k4-$sp.txt)"
done
unset MOSS_ATTENTION_SPLITS
grep -h differ "$R"/bits-*.txt | grep -v " 0 of" | head -8
moss_device_runtime_tests "$R"
T=$MOSS_RT_BUILD/unittests/Runtime/MossRuntimeTests
MOSS_ATTENTION_PDL=1 timeout 100 $T --gtest_filter='Attention*:*Graph*:*Programmatic*' >"$R/t-pdl.log" 2>&1
echo "PDL tests rc=$?"; grep -E "^\[  (FAILED|PASSED)" "$R/t-pdl.log" | head -5
SAN=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
timeout 150 $SAN --tool memcheck --error-exitcode 9 $T --gtest_filter='Attention.*' >"$R/memcheck.log" 2>&1
echo "memcheck rc=$?"; grep -E "ERROR SUMMARY|^\[  (FAILED|PASSED)" "$R/memcheck.log" | head -4
echo "tests done $(date +%T)"
C=12:400:1:1,12:400:1:4,12:400:8:4,12:400:32:1,12:400:32:4,12:250:32:1,12:250:32:4,12:400:240:1,12:400:60:4,12:250:1:1,12:400:1:16
for round in 1 2 3; do
  for v in base k2 k4; do
    d=.cand/smerge/$v; [ $v = k2 ] && d=kernels_generated
    timeout 80 $MOSS_BENCH --kernels-dir $d --attention-cases $C --json "$R/$v-r$round.json" >"$R/$v-r$round.txt" 2>&1 || echo "$v r$round rc=$?"
  done
done
echo "bench done $(date +%T)"
for r in 1 2 3; do
paste <(grep -E "^ +[0-9]" "$R/base-r$r.txt" | awk '{print $1":"$2":"$3":"$4, $6, $9, $10}') \
      <(grep -E "^ +[0-9]" "$R/k2-r$r.txt" | awk '{print "k2", $9, $10}') \
      <(grep -E "^ +[0-9]" "$R/k4-r$r.txt" | awk '{print "k4", $9, $10}')
done
