#!/usr/bin/env bash
# Early trigger (0/1/2) and copy warps (0..2) on the missed targets, HEAD kernels and rule.
set -o pipefail
source benchmarks/device_common.sh
R=$OUT/r; mkdir -p "$R"
trap 'tar -czf "$OUT/results.tgz" -C "$R" .' EXIT
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv >"$R/gpu.txt"; cat "$R/gpu.txt"
[ -x $MOSS_BENCH ] || moss_device_build "$R" "$MOSS_ROOT/.devdeps/prefix" moss-bench
echo "built $(date +%T)"
C=12:400:1:1,12:400:1:4,12:400:32:1,12:400:32:4,12:250:1:4,12:250:1:16,20:125:1:16,12:400:32:16,12:400:1:16,12:250:32:1,20:125:32:1
run() { local tag=$1; shift
  env "$@" timeout 60 $MOSS_BENCH --kernels-dir kernels_generated --attention-cases $C >"$R/$tag.txt" 2>&1 || echo "$tag rc=$?"
  grep -E "^ +[0-9]" "$R/$tag.txt" | awk -v t="${tag%-r*}" '{print $1":"$2":"$3":"$4, t, $6, $9, $10}' >>"$R/all.txt"; }
for round in 1 2 3; do
  run rule-r$round
  run et0-r$round MOSS_ATTENTION_EARLY_TRIGGER=0
  run et2-r$round MOSS_ATTENTION_EARLY_TRIGGER=2
  run cw0-r$round MOSS_ATTENTION_COPY_WARPS=0
  run cw1-r$round MOSS_ATTENTION_COPY_WARPS=1
  run s4g2-r$round MOSS_ATTENTION_SPLITS=4 MOSS_ATTENTION_KV_GROUPS=2
done
echo "sweep done $(date +%T)"
for c in $(echo $C | tr , ' '); do
  printf "%s" "$c"
  for t in rule et0 et2 cw0 cw1 s4g2; do
    grep "^$c $t " "$R/all.txt" | awk -v t=$t '{l=$3; p+=$4; q+=$5; n++} END {if (n) printf "  %s %s %.2f/%.2f", t, l, p/n, q/n}'
  done
  echo
done
