#!/usr/bin/env bash
# The confirmation call of run.sh's A/B: the same kernels and cases, three
# more rounds with the variants in the other order (trip-mask first).
# Carry .devdeps, kernels_generated, .cand/pf-base; run from the root.
set -o pipefail
source benchmarks/device_common.sh
moss_device_begin
moss_device_build "$R" "$MOSS_ROOT/.devdeps/prefix"
mkdir -p "$R/ab2"
moss_device_attention_ab "$R/ab2" \
  20:125:1:1,20:125:1:4,20:125:8:4,20:125:1:16,20:125:32:4,12:250:1:1,12:250:1:4,12:250:8:4,12:250:1:8,12:250:1:16,12:400:1:1,12:400:1:4,12:400:32:4,12:400:32:16,12:400:1:16,12:250:32:1 \
  3 tripmask="$MOSS_ROOT/kernels_generated" base="$MOSS_ROOT/.cand/pf-base"
