#!/usr/bin/env bash
# Attention timeline probe (diagnostic, never lands): where the missed
# attention targets spend their time, warp by warp, trip by trip.
# Prepare on the compiler machine (the probe makes g1 and g1_split spill a
# little, which only a probe build allows):
#   MOSS_EXP_ALLOW_SPILL=1 bash benchmarks/pending/prepare.sh \
#     benchmarks/pending/attention-probe/attention-probe.patch .cand/aprobe/k --moss-attention-probe
# Run on the device from the repository root (carry .devdeps and .cand/aprobe):
#   bash benchmarks/pending/attention-probe/run.sh [CASES]
set -u
source benchmarks/device_common.sh
HERE=$MOSS_ROOT/benchmarks/pending/attention-probe
moss_device_begin
moss_device_build "$R" "$MOSS_ROOT/.devdeps/prefix" moss_runtime
MOSS_RUNTIME_LIB=$(find $MOSS_RT_BUILD -name libmoss_runtime.so | head -1)
export MOSS_RUNTIME_LIB MOSS_KERNELS_DIR=$MOSS_ROOT/.cand/aprobe/k
# The missed targets: decode steps, the T = 32 chunks and the long ones.
CASES=${1:-12:250:1:4,12:250:1:16,20:125:1:16,12:400:1:1,12:400:1:4,12:400:32:1,12:400:32:4,12:400:32:16,12:400:480:16,12:250:480:16}
for pdl in 0 1; do
  MOSS_ATTENTION_PDL=$pdl timeout 250 python3 "$HERE/probe_attention.py" "$CASES" "$R/probe-pdl$pdl.json" \
    >"$R/probe-pdl$pdl.txt" 2>&1
  echo "probe pdl=$pdl rc=$?"
  grep -E "^==|landed|computed|stored|wait done|error|Error" "$R/probe-pdl$pdl.txt" | head -150
done
gzip -f "$R"/probe-*.json
