#!/usr/bin/env bash
# One device call (session 31): the grouped attention functions load and
# pack a trip's mask bits only where that trip exists (a CTA-uniform branch),
# so the loop's last two trips, a decode step's only one, skip packing the
# zeros of tiles past the end. GPU checks on the new kernels, three
# alternating rounds against 1d2b381's kernels (.cand/pf-base), then the full
# attention benchmark (issue 6's targets).
# Carry .devdeps, kernels_generated, .cand/pf-base; run from the root as
# MOSS_COMMIT=... bash run.sh. Results are packed after every phase.
set -o pipefail
source benchmarks/device_common.sh
moss_device_attention_start "$MOSS_ROOT/kernels_generated"
moss_device_attention_ab "$R/ab" \
  20:125:1:1,20:125:1:4,20:125:8:4,20:125:1:16,20:125:32:4,12:250:1:1,12:250:1:4,12:250:8:4,12:250:1:8,12:250:1:16,12:400:1:1,12:400:1:4,12:400:32:4,12:400:32:16,12:400:1:16,12:250:32:1 \
  3 base="$MOSS_ROOT/.cand/pf-base" tripmask="$MOSS_ROOT/kernels_generated"
moss_device_pack ab
moss_device_attention_targets "$R/final"
