#!/usr/bin/env bash
set -o pipefail
source benchmarks/device_common.sh
R=$(mktemp -d)
moss_device_build "$R" "$MOSS_ROOT/.devdeps/prefix"
export MOSS_TEST_KERNELS_DIR=$MOSS_ROOT/kernels_generated MOSS_TEST_WHITELIST=$MOSS_ROOT/configs/h200-example.json
for cw in 3 1; do
  MOSS_ATTENTION_COPY_WARPS=$cw timeout 200 $MOSS_RT_BUILD/unittests/Runtime/MossRuntimeTests --gtest_filter='*ttention*:*Graph*' >"$R/t$cw.log" 2>&1
  echo "tests copy_warps=$cw rc=$? $(grep -E '^\[  PASSED|^\[  FAILED' $R/t$cw.log | head -3 | tr '\n' ' ')"
  grep -E "Failure" -A4 $R/t$cw.log | head -20
done
C=20:125:1:1,20:125:1:4,20:125:1:16,12:250:1:1,12:250:1:4,12:250:1:16,12:400:1:1,12:400:1:4,12:400:1:16,20:125:8:1,12:250:8:1,12:400:8:1,20:125:32:1,12:250:32:1,12:400:32:1,12:400:32:4,12:400:32:16,20:125:32:16
run() { # label kernels env...
  local label=$1 k=$2; shift 2
  env "$@" timeout 90 $MOSS_BENCH --kernels-dir "$k" --attention-cases $C --samples 5 >"$R/b.txt" 2>&1
  echo "$label: $(grep -E '^ +[0-9]' "$R/b.txt" | awk '{printf "%s:%s:%s:%s=%s/%s(%s) ", $1,$2,$3,$4,$8,$9,$6}')"
}
for round in 1 2; do
  run "base rule" .cand/s13/base-k X=1
  run "new cw0" kernels_generated X=1
  run "new cw1" kernels_generated MOSS_ATTENTION_COPY_WARPS=1
  run "new cw2" kernels_generated MOSS_ATTENTION_COPY_WARPS=2
  run "new cw3" kernels_generated MOSS_ATTENTION_COPY_WARPS=3
done
for sg in "4 1" "4 2" "2 1" "2 2" "8 1"; do
  set -- $sg
  run "new s$1 g$2 cw3" kernels_generated MOSS_ATTENTION_SPLITS=$1 MOSS_ATTENTION_KV_GROUPS=$2 MOSS_ATTENTION_COPY_WARPS=3
  run "new s$1 g$2 cw0" kernels_generated MOSS_ATTENTION_SPLITS=$1 MOSS_ATTENTION_KV_GROUPS=$2
done
