#!/bin/bash
# Device call: the GEMM timeline probe (probe_gemm.py on kernels built with
# --moss-gemm-probe), then the early-trigger comparison of 2026-12-05b.
set -u
cd "$(dirname "$0")/../.." || exit 1
source benchmarks/device_common.sh
R=$OUT/probe; mkdir -p "$R"
pack() { (cd "$OUT" && tar czf probe.tgz probe && rm -rf probe); }
trap pack EXIT
trap 'exit 143' TERM
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv >"$R/gpu.txt"
moss_device_build "$R" "$MOSS_ROOT/.devdeps/prefix" all moss-bench moss-l2-probe || exit 1
export MOSS_RUNTIME_LIB=$(find $MOSS_RT_BUILD -name libmoss_runtime.so | head -1)
echo "lib $MOSS_RUNTIME_LIB"
MOSS_KERNELS_DIR=$MOSS_ROOT/.cand/probe/kernels \
MOSS_CODEC_GEMM_CONFIG=$MOSS_ROOT/.cand/probe/whitelist.json MOSS_CODEC_GEMM_PDL=1 \
  timeout 150 python3 .cand/probe/probe_gemm.py .cand/probe/whitelist.json "$R/probe.json" >"$R/probe.txt" 2>&1
echo "probe rc=$?"; cat "$R/probe.txt" | tail -120
if [ "${1:-}" = confirm ]; then
  bash benchmarks/results/2026-12-05b-h100/early-trigger/run.sh
  mv "$OUT/early-trigger.tgz" "$R/" 2>/dev/null
fi
