#!/usr/bin/env bash
# g1_tma (attention ABI 13, g1-tma.patch): the GPU checks of the patched
# runtime and kernels, and g1_tma against g1 (MOSS_ATTENTION_TMA=0) on the
# launches the patched rule moves to it, alternating, three rounds.
# Prepare on the compiler machine (applies the patch, builds the kernels,
# restores the tree and build/):
#   bash benchmarks/pending/prepare.sh benchmarks/pending/g1-tma/g1-tma.patch .cand/g1tma/k
# Run on the device from the repository root (carry .devdeps and .cand/g1tma):
#   bash benchmarks/pending/g1-tma/run.sh
set -o pipefail
source benchmarks/device_common.sh
PATCH=$MOSS_ROOT/benchmarks/pending/g1-tma/g1-tma.patch
KERNELS=$MOSS_ROOT/.cand/g1tma/k
moss_device_begin
# The runtime must match the kernels' ABI (13): patch the device's copy.
(cd "$MOSS_ROOT" && { git apply "$PATCH" 2>/dev/null || patch -p1 -s <"$PATCH"; }) \
  || { echo "patch failed"; exit 1; }
rm -rf $MOSS_RT_BUILD; moss_device_build "$R" "$MOSS_ROOT/.devdeps/prefix"
echo "built $(date +%T)"
moss_device_attention_checks "$R" "$KERNELS"
echo "tests done $(date +%T)"
# Long chunks the rule moves to g1_tma (S >= 193, more than two trips), the
# decode steps and short chunks of 64 streams (one row warp or two past 396
# CTAs, one group), and 20:125:480:16 (two trips, stays g1) as the control.
CASES=12:400:480:16,12:250:480:16,12:400:240:16,12:400:120:16,12:400:60:16,12:400:480:4,12:400:120:4,12:400:1:64,12:250:1:64,12:400:8:64,12:400:32:64,20:125:480:16
moss_device_attention_env_ab "$R" "$CASES" 3 "$KERNELS" tma=- cp=MOSS_ATTENTION_TMA=0
grep -h "error" "$R"/*-r*.txt | head -5
