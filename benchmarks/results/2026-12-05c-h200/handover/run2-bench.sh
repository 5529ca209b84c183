#!/bin/bash
# Second device call (as run): base vs stores vs bulk GEMM timing of the
# tuned whitelist (2 rounds interleaved) and on an H200 the attention targets. Carry .devdeps/prefix, .cand/handover.
set -u
cd "$(dirname "$0")/../.." || exit 1
source benchmarks/device_common.sh
R=$OUT/ho; mkdir -p "$R"
pack() { (cd "$OUT" && tar czf ho.tgz ho && rm -rf ho); }
trap pack EXIT
trap 'exit 143' TERM
t0=$(date +%s)
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv >"$R/gpu.txt"
cat "$R/gpu.txt"
moss_device_build "$R" "$MOSS_ROOT/.devdeps/prefix" moss-dsmem-probe moss-bench MossRuntimeTests || exit 1
echo "built $(( $(date +%s) - t0 ))s"
H=.cand/handover
for round in 1 2; do
  for v in base stores bulk; do
    timeout 100 "$MOSS_BENCH" --kernels-dir "$MOSS_ROOT/$H/$v" --whitelist configs/h200-tuned-pdl.json \
      --m-list 30 --json "$R/gemm-$v-r$round.json" >"$R/gemm-$v-r$round.txt" 2>&1
    echo "round $round $v rc=$? $(( $(date +%s) - t0 ))s"
  done
done
for v in base stores bulk; do echo "== $v"; grep -hE "^(1|8|16|30),.* yes " "$R/gemm-$v-r1.txt" "$R/gemm-$v-r2.txt" | cut -c1-100 ; done
if grep -q H200 "$R/gpu.txt"; then
  moss_device_attention_bench "$R" | head -40
  python3 benchmarks/targets.py "$R/attention-bench.json" >"$R/targets-attention.md" 2>&1; tail -3 "$R/targets-attention.md"
fi
echo "done $(( $(date +%s) - t0 ))s"
