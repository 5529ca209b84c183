#!/usr/bin/env bash
# Decode pairs at T = 2 and 4: two groups by TMA against the rule's four.
set -o pipefail
source benchmarks/device_common.sh
R=$OUT/r; mkdir -p "$R"
trap 'tar -czf "$OUT/results.tgz" -C "$R" .' EXIT
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv >"$R/gpu.txt"; cat "$R/gpu.txt"
[ -x $MOSS_BENCH ] || moss_device_build "$R" "$MOSS_ROOT/.devdeps/prefix" moss-bench
echo "built $(date +%T)"
C=12:250:2:16,12:250:4:16,12:400:2:16,12:400:4:16,12:250:2:12,12:250:4:20,12:250:1:16,12:250:8:16
run() { local tag=$1; shift
  env "$@" timeout 60 $MOSS_BENCH --kernels-dir kernels_generated --attention-cases $C >"$R/$tag.txt" 2>&1 || echo "$tag rc=$?"
  grep -E "^ +[0-9]" "$R/$tag.txt" | awk -v t="${tag%-r*}" '{print $1":"$2":"$3":"$4, t, $6, $9, $10}' >>"$R/all.txt"; }
for round in 1 2 3; do
  run rule-r$round
  run g2tma-r$round MOSS_ATTENTION_KV_GROUPS=2 MOSS_ATTENTION_TMA=2
done
echo "sweep done $(date +%T)"
for c in $(echo $C | tr , ' '); do
  printf "%s" "$c"
  for t in rule g2tma; do
    grep "^$c $t " "$R/all.txt" | awk -v t=$t '{l=$3; p+=$4; q+=$5; n++} END {if (n) printf "  %s %s %.2f/%.2f", t, l, p/n, q/n}'
  done
  echo
done
