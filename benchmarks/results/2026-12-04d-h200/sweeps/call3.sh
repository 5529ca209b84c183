#!/usr/bin/env bash
set -o pipefail
source benchmarks/device_common.sh
R=$(mktemp -d)
moss_device_build "$R" "$MOSS_ROOT/.devdeps/prefix" moss-bench
C=20:125:1:1,20:125:1:16,12:250:1:1,12:400:1:1,12:250:8:1,20:125:32:16,12:400:32:4
run() { # label kernels env...
  local label=$1 k=$2; shift 2
  env "$@" timeout 90 $MOSS_BENCH --kernels-dir "$k" --attention-cases $C --samples 5 >"$R/b.txt" 2>&1
  echo "$label: $(grep -E '^ +[0-9]' "$R/b.txt" | awk '{printf "%s:%s:%s:%s=%s/%s(%s) ", $1,$2,$3,$4,$8,$9,$6}')"
}
for round in 1 2; do
  for k in base var3 var2 var1; do run "$k" .cand/s13/$k-k X=1; done
  run "A" kernels_generated X=1
done
