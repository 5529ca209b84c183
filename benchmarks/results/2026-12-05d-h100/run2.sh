#!/bin/bash
# Second device call (2026-12-05d, H100; run as .cand/final/run2.sh): the runtime tests after the AttentionProgrammaticLaunch case fix.
set -u
cd "$(dirname "$0")/../.." || exit 1
source benchmarks/device_common.sh
R=$OUT/final2; mkdir -p "$R"
pack() { (cd "$OUT" && tar czf final2.tgz final2 && rm -rf final2); }
trap pack EXIT
trap 'exit 143' TERM
t0=$(date +%s)
nvidia-smi --query-gpu=name,driver_version --format=csv >"$R/gpu.txt"; cat "$R/gpu.txt"
moss_device_build "$R" "$MOSS_ROOT/.devdeps/prefix" MossRuntimeTests || exit 1
echo "built $(( $(date +%s) - t0 ))s"
moss_device_runtime_tests "$R"
MOSS_ATTENTION_PDL=1 timeout 100 $MOSS_RT_BUILD/unittests/Runtime/MossRuntimeTests \
  --gtest_filter='Attention*:GraphCapture*' >"$R/t-attention-pdl.log" 2>&1
echo "attention tests with MOSS_ATTENTION_PDL=1 rc=$? $(grep -E '^\[  PASSED|^\[  FAILED' "$R/t-attention-pdl.log" | tr '\n' ' ')"
echo "done $(( $(date +%s) - t0 ))s"
