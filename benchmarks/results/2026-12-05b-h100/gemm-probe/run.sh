#!/bin/bash
# Device call of the GEMM timeline probe (diagnostic, never lands). On the
# compiler machine first: `git apply` gemm-probe.patch, rebuild moss-aot, and
#   build/bin/moss-aot --moss-gemm-probe --whitelist <this folder>/whitelist.json \
#     --out .cand/probe/kernels
# then revert the patch. Carry .devdeps/prefix and .cand/probe. Output:
# $OUT/probe.tgz (probe.txt, probe.json). With `confirm`, also the
# early-trigger comparison of ../early-trigger/run.sh.
set -u
HERE="$(cd "$(dirname "$0")" && pwd)"
cd "$HERE/../../../.." || exit 1
source benchmarks/device_common.sh
R=$OUT/probe; mkdir -p "$R"
pack() { (cd "$OUT" && tar czf probe.tgz probe && rm -rf probe); }
trap pack EXIT
trap 'exit 143' TERM
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv >"$R/gpu.txt"
moss_device_build "$R" "$MOSS_ROOT/.devdeps/prefix" all moss-bench moss-l2-probe || exit 1
MOSS_RUNTIME_LIB=$(find $MOSS_RT_BUILD -name libmoss_runtime.so | head -1)
export MOSS_RUNTIME_LIB
MOSS_KERNELS_DIR=$MOSS_ROOT/.cand/probe/kernels \
MOSS_CODEC_GEMM_CONFIG=$HERE/whitelist.json MOSS_CODEC_GEMM_PDL=1 \
  timeout 150 python3 "$HERE/probe_gemm.py" "$HERE/whitelist.json" "$R/probe.json" >"$R/probe.txt" 2>&1
echo "probe rc=$?"; tail -120 "$R/probe.txt"
if [ "${1:-}" = confirm ]; then
  bash "$HERE/../early-trigger/run.sh"
  mv "$OUT/early-trigger.tgz" "$R/" 2>/dev/null
fi
