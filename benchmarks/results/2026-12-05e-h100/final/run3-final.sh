#!/usr/bin/env bash
# Landed attention kernels (at-once merge) against ABI 11's, every moss-bench
# attention case, two rounds interleaved; the target table.
set -o pipefail
source benchmarks/device_common.sh
R=$OUT/r; mkdir -p "$R"
trap 'tar -czf "$OUT/results.tgz" -C "$R" .' EXIT
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv >"$R/gpu.txt"; cat "$R/gpu.txt"
moss_device_build "$R" "$MOSS_ROOT/.devdeps/prefix"
echo "built $(date +%T)"
export MOSS_TEST_KERNELS_DIR=$MOSS_ROOT/kernels_generated
export MOSS_TEST_WHITELIST=$MOSS_ROOT/configs/h200-example.json
timeout 200 $MOSS_RT_BUILD/unittests/Runtime/MossRuntimeTests >"$R/t.log" 2>&1; echo "runtime tests rc=$?"
grep -E "^\[  (FAILED|PASSED)|Failure" -A3 "$R/t.log" | head -10
for round in 1 2; do
  for v in base new; do
    K=kernels_generated; [ $v = base ] && K=.cand/wide/base-kernels
    timeout 150 $MOSS_BENCH --kernels-dir $K --attention --json "$R/$v-r$round.json" \
      --commit "${MOSS_COMMIT:-unknown}" >"$R/$v-r$round.txt" 2>&1 || echo "$v r$round rc=$?"
  done
done
echo "bench done $(date +%T)"
python3 benchmarks/targets.py "$R/new-r1.json" >"$R/targets-new-r1.md" 2>&1
python3 benchmarks/targets.py "$R/new-r2.json" >"$R/targets-new-r2.md" 2>&1
tail -22 "$R/targets-new-r1.md"; tail -3 "$R/targets-new-r2.md"
paste <(grep -E "^ +[0-9]" "$R/base-r1.txt" | awk '{print $1":"$2":"$3":"$4, $6, $9, $10}') \
      <(grep -E "^ +[0-9]" "$R/new-r1.txt" | awk '{print "new", $9, $10}') \
      <(grep -E "^ +[0-9]" "$R/base-r2.txt" | awk '{print "| base", $9, $10}') \
      <(grep -E "^ +[0-9]" "$R/new-r2.txt" | awk '{print "new", $9, $10}')
