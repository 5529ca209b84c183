#!/usr/bin/env bash
# g4_tma with K and V on mbarriers of their own (split-kv-barriers.patch,
# rebased onto ABI 13): the GPU checks on the patched kernels and an A/B
# against the unpatched ones; then, on the unpatched kernels, g1_tma's grid
# condition (the rule against MOSS_ATTENTION_TMA=0: equal below 264 CTAs,
# where the rule keeps g1, faster above).
# Prepare on the compiler machine (README.md), carry .devdeps,
# kernels_generated and .cand/kv, and run on the device from the repository
# root:
#   bash benchmarks/pending/kv-barriers/run.sh [NEW_DIR] [BASE_DIR]
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
mkdir -p "$R/g1-rule"
moss_device_attention_env_ab "$R/g1-rule" 12:400:60:16,12:400:120:4,12:400:240:4,12:400:120:16,12:400:480:16 \
  2 "$BASE" rule=- cp=MOSS_ATTENTION_TMA=0
