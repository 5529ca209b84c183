#!/bin/bash
# Device call 2: the L2/HBM probe and the stage ablation (GEMM and
# attention, one round each unless ROUNDS is set), then the attention
# benchmark and issue 6's attention targets. Carry: .devdeps/prefix,
# kernels_generated, .cand/ablate. Reuses the runtime build of call 1 when
# the machine is still warm.
set -u
cd "$(dirname "$0")/../.." || exit 1
source benchmarks/device_common.sh
R=$OUT/c2; mkdir -p "$R"
t0=$(date +%s)
if [[ ! -x $MOSS_BENCH ]]; then
  moss_device_build "$R" "$MOSS_ROOT/.devdeps/prefix" moss-bench moss-l2-probe || exit 1
fi
echo "built $(( $(date +%s) - t0 ))s"
ROUNDS=${ROUNDS:-1} OUT=$R/ablation timeout 330 benchmarks/ablation/run.sh "${FAMILIES:-l2 gemm attn}" 2>&1 \
  | grep -E "round|rc=|^\|" | head -80
echo "ablation $(( $(date +%s) - t0 ))s"
if (( $(date +%s) - t0 < 360 )); then
  moss_device_attention_bench "$R"
  python3 benchmarks/targets.py "$R/attention-bench.json" >"$R/targets-attention.md" && tail -1 "$R/targets-attention.md"
fi
