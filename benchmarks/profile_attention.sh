#!/usr/bin/env bash
# One device call: builds the runtime and moss-bench (no MLIR needed), then
# profiles the attention kernels with Nsight Compute for the given cases and
# dumps their SASS. Clocks are left alone (--clock-control none).
# Usage: benchmarks/profile_attention.sh OUT_DIR KERNELS_DIR H:S:T:B[,...] [DEPS]
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/device_common.sh"
ROOT=$MOSS_ROOT
OUT=${1:?output folder}
KDIR=${2:?kernels dir}
CASES=${3:?cases H:S:T:B,...}
DEPS=${4:-$ROOT/.devdeps/prefix}
mkdir -p "$OUT"
moss_device_build "$OUT" "$DEPS" moss-bench
BENCH=$MOSS_BENCH
for cubin in "$KDIR"/streaming_attention*.cubin; do
  cuobjdump --dump-sass "$cubin" >"$OUT/$(basename "$cubin" .cubin).sass" 2>&1
done
IFS=, read -ra list <<<"$CASES"
for c in "${list[@]}"; do
  tag=${c//:/_}
  timeout 240 ncu --clock-control none --set full -k regex:streaming_attention \
    --launch-count 2 --print-details all \
    "$BENCH" --kernels-dir "$KDIR" --attention-cases "$c" --samples 1 --replays 1 \
    >"$OUT/ncu-$tag.txt" 2>&1
  echo "ncu $c: rc=$?"
  grep -E "Duration|Registers Per|Achieved Occupancy|Compute \(SM\) Throughput|Memory Throughput|Executed Ipc A|Issue Slots Busy|No Eligible" "$OUT/ncu-$tag.txt" | head -24
done
# Per-instruction stall samples (SASS) of the first case's main kernel.
first=${list[0]}
timeout 240 ncu --clock-control none --section SourceCounters --section WarpStateStats \
  -k regex:streaming_attention_d64_g --launch-count 1 --page source --print-source sass --csv \
  "$BENCH" --kernels-dir "$KDIR" --attention-cases "$first" --samples 1 --replays 1 \
  >"$OUT/ncu-source-${first//:/_}.csv" 2>&1
echo "ncu source $first: rc=$?"
tar -czf "$OUT/profile.tgz" -C "$OUT" $(cd "$OUT" && ls *.txt *.sass *.csv 2>/dev/null) && rm -f "$OUT"/*.txt "$OUT"/*.sass "$OUT"/*.csv "$OUT"/*.log
