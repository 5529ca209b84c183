#!/usr/bin/env bash
set -o pipefail
source benchmarks/device_common.sh
R=$(mktemp -d)
moss_device_build "$R" "$MOSS_ROOT/.devdeps/prefix"
export MOSS_TEST_KERNELS_DIR=$MOSS_ROOT/kernels_generated MOSS_TEST_WHITELIST=$MOSS_ROOT/configs/h200-example.json
for cw in rule 3; do
  if [ $cw = rule ]; then unset MOSS_ATTENTION_COPY_WARPS; else export MOSS_ATTENTION_COPY_WARPS=$cw; fi
  timeout 200 $MOSS_RT_BUILD/unittests/Runtime/MossRuntimeTests --gtest_filter='*ttention*:*Graph*:*Programmatic*' >"$R/t$cw.log" 2>&1
  echo "tests copy_warps=$cw rc=$? $(grep -E '^\[  PASSED|^\[  FAILED' $R/t$cw.log | head -3 | tr '\n' ' ')"
  grep -E "Failure" -A4 $R/t$cw.log | head -20
done
unset MOSS_ATTENTION_COPY_WARPS
C=20:125:1:1,20:125:1:4,20:125:8:1,20:125:16:4,12:250:1:1,12:250:1:4,12:250:8:1,12:400:1:1,12:400:1:4,12:400:8:1,12:400:32:1,12:250:32:1,20:125:32:4,12:400:32:16,20:125:1:16
run() { # label kernels env...
  local label=$1 k=$2; shift 2
  env "$@" timeout 90 $MOSS_BENCH --kernels-dir "$k" --attention-cases $C --samples 5 >"$R/b.txt" 2>&1
  echo "$label: $(grep -E '^ +[0-9]' "$R/b.txt" | awk '{printf "%s:%s:%s:%s=%s/%s(%s) ", $1,$2,$3,$4,$8,$9,$6}')"
}
for round in 1 2; do
  run base .cand/s13/base-k MOSS_ATTENTION_COPY_WARPS=0
  run "vec rule" kernels_generated X=1
  run "scal rule" .cand/s13/scal-k X=1
  run "vec cw0" kernels_generated MOSS_ATTENTION_COPY_WARPS=0
  run "scal cw0" .cand/s13/scal-k MOSS_ATTENTION_COPY_WARPS=0
done
run "vec s4g2" kernels_generated MOSS_ATTENTION_SPLITS=4 MOSS_ATTENTION_KV_GROUPS=2
run "scal s4g2" .cand/s13/scal-k MOSS_ATTENTION_SPLITS=4 MOSS_ATTENTION_KV_GROUPS=2
run "vec s2g2" kernels_generated MOSS_ATTENTION_SPLITS=2 MOSS_ATTENTION_KV_GROUPS=2
run "vec s4g3" kernels_generated MOSS_ATTENTION_SPLITS=3 MOSS_ATTENTION_KV_GROUPS=3
MOSS_ATTENTION_COPY_WARPS=0 timeout 200 $MOSS_BENCH --kernels-dir .cand/s13/base-k --attention >"$OUT/full-base.txt" 2>&1; echo "base rc=$?"
timeout 200 $MOSS_BENCH --kernels-dir kernels_generated --attention >"$OUT/full-vec.txt" 2>&1; echo "vec rc=$?"
