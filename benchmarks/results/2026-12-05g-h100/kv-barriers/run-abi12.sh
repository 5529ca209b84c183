#!/usr/bin/env bash
# g4_tma with K and V on mbarriers of their own (split-kv-barriers.patch): the
# GPU checks on the patched kernels and an A/B against the unpatched ones.
# Prepare on the compiler machine (applies the patch, builds its kernels into
# the ignored .cand/kv/k, restores the tree and build/); the base kernels are
# the base tree's kernels_generated. Carry .devdeps, kernels_generated and
# .cand/kv:
#   bash benchmarks/pending/prepare.sh \
#     benchmarks/results/2026-12-05f-h100/kv-barriers/split-kv-barriers.patch .cand/kv/k
# Run on the device from the repository root:
#   bash benchmarks/results/2026-12-05f-h100/kv-barriers/run.sh [NEW_DIR] [BASE_DIR]
set -o pipefail
source benchmarks/device_common.sh
NEW=$MOSS_ROOT/${1:-.cand/kv/k}
BASE=$MOSS_ROOT/${2:-kernels_generated}
moss_device_begin
rm -rf $MOSS_RT_BUILD; moss_device_build "$R" "$MOSS_ROOT/.devdeps/prefix"
echo "built $(date +%T)"
moss_device_attention_checks "$R" "$NEW"
echo "tests done $(date +%T)"
moss_device_attention_ab "$R" 12:250:1:1,12:250:1:4,12:250:1:8,12:250:8:4,12:250:1:11,12:250:16:4,12:250:32:1,20:125:1:1 \
  3 base="$BASE" kv="$NEW"
