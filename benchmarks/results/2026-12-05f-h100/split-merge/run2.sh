#!/usr/bin/env bash
set -o pipefail
source benchmarks/device_common.sh
R=$OUT/r; mkdir -p "$R"
trap 'tar -czf "$OUT/results.tgz" -C "$R" .' EXIT
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv >"$R/gpu.txt"; cat "$R/gpu.txt"
[ -x $MOSS_BENCH ] || moss_device_build "$R" "$MOSS_ROOT/.devdeps/prefix" moss-bench
C=${CASES:-12:400:1:1,12:400:1:4,12:400:8:4,12:400:32:1,12:400:32:4,12:250:32:1,12:250:32:4,12:400:240:1,12:400:60:4,12:250:1:1,12:400:1:16}
for round in 1 2 3; do
  for v in base-kernels k2 k4; do
    d=.cand/smerge/$v; [ $v = k2 ] && d=kernels_generated
    timeout 80 $MOSS_BENCH --kernels-dir $d --attention-cases $C --json "$R/$v-r$round.json" >"$R/$v-r$round.txt" 2>&1 || echo "$v r$round rc=$?"
  done
done
echo "bench done $(date +%T)"
for r in 1 2 3; do
paste <(grep -E "^ +[0-9]" "$R/base-kernels-r$r.txt" | awk '{print $1":"$2":"$3":"$4, $6, $9, $10}') \
      <(grep -E "^ +[0-9]" "$R/k2-r$r.txt" | awk '{print "k2", $9, $10}') \
      <(grep -E "^ +[0-9]" "$R/k4-r$r.txt" | awk '{print "k4", $9, $10}')
done
