#!/usr/bin/env bash
# (1) g2 one-pass multi-trip launches by TMA (MOSS_ATTENTION_TMA=2 on cases whose rule launch is g2);
# (2) one row warp: 2 groups by TMA instead of 4 (KV_GROUPS=2 + TMA=2) on g4 one-pass cases.
set -o pipefail
source benchmarks/device_common.sh
R=$OUT/r; mkdir -p "$R"
trap 'tar -czf "$OUT/results.tgz" -C "$R" .' EXIT
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv >"$R/gpu.txt"; cat "$R/gpu.txt"
[ -x $MOSS_BENCH ] || moss_device_build "$R" "$MOSS_ROOT/.devdeps/prefix" moss-bench
echo "built $(date +%T)"
C1=12:250:1:32,12:250:8:32,12:250:16:32,12:250:30:8,12:250:32:8,12:250:30:16,12:250:32:16,12:400:1:32,12:400:8:32,12:400:16:32,12:400:30:8,12:400:32:8,12:400:30:16,12:400:32:16,12:250:32:64
C2=12:250:1:8,12:250:1:16,12:250:8:8,12:250:8:16,12:250:16:16,12:400:1:8,12:400:1:16,12:400:8:16,12:400:16:16,12:250:1:12,12:250:1:20
run() { # tag cases env...
  local tag=$1 cases=$2; shift 2
  env "$@" timeout 60 $MOSS_BENCH --kernels-dir kernels_generated --attention-cases $cases >"$R/$tag.txt" 2>&1 || echo "$tag rc=$?"
  grep -E "^ +[0-9]" "$R/$tag.txt" | awk -v t="$tag" '{print $1":"$2":"$3":"$4, t, $6, $9, $10}' >>"$R/all.txt"
}
for round in 1 2 3; do
  run rule1-r$round $C1
  run tma2-r$round $C1 MOSS_ATTENTION_TMA=2
  run rule2-r$round $C2
  run g2tma-r$round $C2 MOSS_ATTENTION_KV_GROUPS=2 MOSS_ATTENTION_TMA=2
  run g2cp-r$round $C2 MOSS_ATTENTION_KV_GROUPS=2
done
echo "sweep done $(date +%T)"
for c in $(echo $C1,$C2 | tr , ' '); do
  printf "%s" "$c"
  for t in rule1 tma2 rule2 g2tma g2cp; do
    grep "^$c $t-" "$R/all.txt" | awk -v t=$t '{l=$3; p+=$4; q+=$5; n++} END {if (n) printf "  %s %s %.2f/%.2f", t, l, p/n, q/n}'
  done
  echo
done
