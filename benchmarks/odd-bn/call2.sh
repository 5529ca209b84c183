#!/bin/bash
# Device call 2: the stage ablation (GEMM and attention, one
# round each unless ROUNDS is set) and the L2/HBM probe, then issue 6's
# target tables from moss-bench runs of the tuned programmatic whitelist and
# the attention cases. Carry: .devdeps/prefix, kernels_generated, .cand/ablate,
# .cand/k/tuned-pdl. Reuses the runtime build of call 1 when the machine is
# still warm.
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
left=$(( 580 - ($(date +%s) - t0) ))
if (( left > 60 )); then
  timeout $(( left / 2 )) $MOSS_BENCH --kernels-dir "$MOSS_ROOT/kernels_generated" --attention \
    --json "$R/attention-bench.json" >"$R/attention-bench.txt" 2>&1
  echo "attention bench rc=$? $(( $(date +%s) - t0 ))s"
  python3 benchmarks/targets.py "$R/attention-bench.json" >"$R/targets-attention.md" && tail -1 "$R/targets-attention.md"
fi
