#!/usr/bin/env bash
# ABI 14: g4_tma_kv, g4_tma with K and V on mbarriers of their own, a
# function apart, which the rule picks for g4_tma launches of more than 66
# CTAs. g4_tma's PTX is byte-identical to ABI 13's, so MOSS_ATTENTION_SPLIT_KV=0
# (every such launch on g4_tma) is ABI 13's behaviour on the same cubin and
# runtime: the GPU checks, three alternating rounds of the rule against 0
# and 2 (g4_tma_kv everywhere); with FULL=1 then the full attention
# benchmark (issue 6's targets; g4_tma_kv serves none of their launches).
# Carry .devdeps and kernels_generated; run from the root.
set -o pipefail
source benchmarks/device_common.sh
moss_device_attention_start "$MOSS_ROOT/kernels_generated"
moss_device_attention_env_ab "$R/ab" \
  12:250:1:1,12:250:1:4,12:250:1:5,12:250:1:6,12:250:1:7,12:250:1:8,12:250:1:10,12:250:1:11,12:250:2:8,12:250:8:4,12:250:8:8,12:250:16:4,12:250:16:8,20:125:1:4 \
  3 "$MOSS_ROOT/kernels_generated" rule=- g4tma=MOSS_ATTENTION_SPLIT_KV=0 kv=MOSS_ATTENTION_SPLIT_KV=2
moss_device_pack ab
[[ ${FULL:-0} == 1 ]] || exit 0
moss_device_attention_bench "$R/final" >/dev/null
python3 benchmarks/targets.py "$R/final/attention-bench.json" >"$R/final/targets-attention.md"
tail -3 "$R/final/targets-attention.md"
moss_device_pack attention-bench
