#!/usr/bin/env bash
# g4_tma with K and V on mbarriers of their own (split-kv-barriers.patch): the
# GPU checks on the patched kernels and an A/B against the unpatched ones.
# Prepare on the compiler machine (both dirs are ignored; carry them, with
# .devdeps and kernels_generated):
#   ./build/bin/moss-aot --whitelist configs/h200-example.json --out .cand/kv/base-kernels
#   git apply benchmarks/results/2026-12-05f-h100/kv-barriers/split-kv-barriers.patch
#   cmake --build build && ./build/bin/moss-aot --whitelist configs/h200-example.json --out .cand/kv/k
# Run on the device from the repository root:
#   bash benchmarks/results/2026-12-05f-h100/kv-barriers/run.sh [NEW_DIR] [BASE_DIR]
set -o pipefail
source benchmarks/device_common.sh
NEW=$MOSS_ROOT/${1:-.cand/kv/k}
BASE=$MOSS_ROOT/${2:-.cand/kv/base-kernels}
R=$OUT/r; mkdir -p "$R"
trap 'tar -czf "$OUT/results.tgz" -C "$R" .' EXIT
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv >"$R/gpu.txt"; cat "$R/gpu.txt"
rm -rf $MOSS_RT_BUILD; moss_device_build "$R" "$MOSS_ROOT/.devdeps/prefix"
echo "built $(date +%T)"
moss_device_attention_checks "$R" "$NEW"
echo "tests done $(date +%T)"
moss_device_attention_ab "$R" 12:250:1:1,12:250:1:4,12:250:1:8,12:250:8:4,12:250:1:11,12:250:16:4,12:250:32:1,20:125:1:1 \
  3 base="$BASE" kv="$NEW"
