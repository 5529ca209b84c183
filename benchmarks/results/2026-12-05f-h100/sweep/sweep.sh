#!/usr/bin/env bash
# Forced (splits, groups[, tma]) launches of the missed-target cases against the rule, ABI 12 + at-once split merge.
set -o pipefail
source benchmarks/device_common.sh
R=$OUT/r; mkdir -p "$R"
trap 'tar -czf "$OUT/results.tgz" -C "$R" .' EXIT
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv >"$R/gpu.txt"; cat "$R/gpu.txt"
[ -x $MOSS_BENCH ] || moss_device_build "$R" "$MOSS_ROOT/.devdeps/prefix" moss-bench
echo "built $(date +%T)"
C1=12:400:1:1,12:400:1:4,12:400:1:16,12:400:8:4,12:250:1:4,12:250:1:16,20:125:1:16
C2=12:400:32:1,12:400:32:4,12:400:32:16,12:250:32:4,20:125:32:16
run() { # tag cases env...
  local tag=$1 cases=$2; shift 2
  env "$@" timeout 60 $MOSS_BENCH --kernels-dir kernels_generated --attention-cases $cases >"$R/$tag.txt" 2>&1 || echo "$tag rc=$?"
  grep -E "^ +[0-9]" "$R/$tag.txt" | awk -v t="$tag" '{print $1":"$2":"$3":"$4, t, $6, $9, $10}' >>"$R/all.txt"
}
for round in 1 2; do
  run rule-r$round "$C1,$C2"
  for s in 1 2 3 4 7; do
    for g in 1 2 3 4; do run s${s}g${g}-r$round $C1 MOSS_ATTENTION_SPLITS=$s MOSS_ATTENTION_KV_GROUPS=$g; done
    for g in 1 2; do run s${s}g${g}-r$round $C2 MOSS_ATTENTION_SPLITS=$s MOSS_ATTENTION_KV_GROUPS=$g; done
  done
  run tma2-r$round "$C1,$C2" MOSS_ATTENTION_TMA=2
  run rule-b-r$round "$C1,$C2"
done
echo "sweep done $(date +%T)"
sort -k1,1 -k5,5n "$R/all.txt" | awk '{k=$1; n[k]++; if (n[k]<=4) print}'
