#!/usr/bin/env bash
# W's K slice prefetched into L2 by the TMA engine at each generated GEMM's
# start (w-prefetch.patch): the GPU tests of the patched kernels, then base
# against patched, alternating, on the keys of whitelist.json (tiles of
# configs/h200-tuned-pdl.json), hot and cold, plain and programmatic.
# Prepare on the compiler machine, from a clean tree at the patch's base:
#   build/bin/moss-aot --whitelist benchmarks/pending/w-prefetch/whitelist.json --out .cand/wpf/base
#   MOSS_PREPARE_WHITELIST=benchmarks/pending/w-prefetch/whitelist.json \
#     bash benchmarks/pending/prepare.sh benchmarks/pending/w-prefetch/w-prefetch.patch .cand/wpf/k
# Run on the device from the repository root (carry .devdeps and .cand/wpf):
#   bash benchmarks/pending/w-prefetch/run.sh
set -o pipefail
source benchmarks/device_common.sh
HERE=$MOSS_ROOT/benchmarks/pending/w-prefetch
WL=$HERE/whitelist.json BASE=$MOSS_ROOT/.cand/wpf/base NEW=$MOSS_ROOT/.cand/wpf/k
moss_device_begin
rm -rf $MOSS_RT_BUILD; moss_device_build "$R" "$MOSS_ROOT/.devdeps/prefix"
echo "built $(date +%T)"
T=$MOSS_RT_BUILD/unittests/Runtime/MossRuntimeTests
SAN=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
export MOSS_TEST_KERNELS_DIR=$NEW MOSS_TEST_WHITELIST=$WL
GEMM_TESTS='GeneratedGemm*:GraphCapture*:ConcurrentStreams*:ProgrammaticLaunch*'
timeout 200 $T --gtest_filter="$GEMM_TESTS" >"$R/t.log" 2>&1; echo "GEMM tests rc=$?"
grep -E "^\[  (FAILED|PASSED)|Failure" -A3 "$R/t.log" | head -12
MOSS_CODEC_GEMM_PDL=1 timeout 200 $T --gtest_filter="$GEMM_TESTS" >"$R/t-pdl.log" 2>&1
echo "GEMM tests (PDL) rc=$?"; grep -E "^\[  (FAILED|PASSED)" "$R/t-pdl.log" | head -4
timeout 150 $SAN --tool memcheck --error-exitcode 9 $T --gtest_filter='GeneratedGemm.EveryKey*' \
  >"$R/memcheck.log" 2>&1
echo "memcheck rc=$?"; grep -E "ERROR SUMMARY|^\[  (FAILED|PASSED)" "$R/memcheck.log" | head -3
echo "tests done $(date +%T)"
for round in 1 2; do
  for v in base new; do
    dir=$BASE; [ $v = new ] && dir=$NEW
    timeout 120 $MOSS_BENCH --kernels-dir "$dir" --whitelist "$WL" --m-list 1 \
      --json "$R/$v-r$round.json" >"$R/$v-r$round.txt" 2>&1 || echo "$v r$round rc=$?"
  done
done
# Per key, the means over the rounds: generated hot / cold, with PDL hot /
# cold, fallback hot / cold.
for key in $(grep -o '"[0-9,]*"' "$WL" | tr -d '"'); do
  printf "%-16s" "$key"
  for v in base new; do
    cat "$R/$v"-r*.txt | awk -v k="$key" -v v="$v" '$1==k && $2=="yes" {
      a+=$5; b+=$6; c+=$8; d+=$9; e+=$11; f+=$12; n++}
      END {if (n) printf "  %s %.2f/%.2f pdl %.2f/%.2f fb %.2f/%.2f", v, a/n, b/n, c/n, d/n, e/n, f/n}'
  done
  echo
done
