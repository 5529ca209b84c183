#!/usr/bin/env bash
# One device call: builds the runtime and moss-bench (no MLIR needed), then
# profiles the generated GEMM kernels of a kernels folder with Nsight Compute
# (full set, one launch each) and dumps their SASS; packs it into profile.tgz.
# Clocks are left alone (--clock-control none).
# Usage: benchmarks/profile_gemm.sh OUT_DIR KERNELS_DIR WHITELIST M_LIST [DEPS]
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/device_common.sh"
ROOT=$MOSS_ROOT
OUT=${1:?output folder}
KDIR=${2:?kernels dir}
WL=${3:?whitelist}
MLIST=${4:?M list}
DEPS=${5:-$ROOT/.devdeps/prefix}
mkdir -p "$OUT"
moss_device_build "$OUT" "$DEPS" moss-bench
for cubin in "$KDIR"/linear_*.cubin; do
  cuobjdump --dump-sass "$cubin" >"$OUT/$(basename "$cubin" .cubin).sass" 2>&1
done
tag=$(basename "$KDIR")
timeout 300 ncu --clock-control none --set full -k regex:linear_ --launch-count 1 \
  --print-details all "$MOSS_BENCH" --kernels-dir "$KDIR" --whitelist "$WL" \
  --m-list "$MLIST" --samples 1 --replays 1 --no-cold >"$OUT/ncu-$tag.txt" 2>&1
echo "ncu $tag: rc=$?"
grep -E "Duration|Registers Per|Compute \(SM\) Throughput|Memory Throughput|L2 Cache Throughput|L1/TEX Cache Throughput|DRAM Throughput|Executed Ipc A|Issue Slots Busy|No Eligible|Shared Memory" \
  "$OUT/ncu-$tag.txt" | head -30
tar -czf "$OUT/profile-$tag.tgz" -C "$OUT" $(cd "$OUT" && ls *.txt *.sass 2>/dev/null) \
  && rm -f "$OUT"/*.txt "$OUT"/*.sass
