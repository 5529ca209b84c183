#!/usr/bin/env bash
# One device call (session 31): the TMA functions prefetch their two tensor
# maps (prefetch.param.tensormap, thread 0, before griddepcontrol.wait).
# GPU checks on the new kernels (every runtime test, the attention, graph and
# programmatic tests with PDL, memcheck), three alternating rounds against
# the same tree's kernels without the prefetch (.cand/pf-base, ABI 14 as
# landed at 1d2b381), then issue 6's targets: the full attention benchmark
# on the new kernels and the tuned whitelist's GEMMs (.cand/tuned:
# `moss-aot --whitelist configs/h200-tuned-pdl.json --out .cand/tuned`).
# Carry .devdeps, kernels_generated, .cand/pf-base, .cand/tuned; run from the
# root as MOSS_COMMIT=... bash run.sh. Results are packed after every phase.
set -o pipefail
source benchmarks/device_common.sh
moss_device_attention_start "$MOSS_ROOT/kernels_generated"
moss_device_attention_ab "$R/ab" \
  20:125:1:1,20:125:1:4,20:125:8:1,20:125:1:16,12:250:1:1,12:250:1:4,12:250:8:4,12:250:1:8,12:250:1:16,12:400:1:16,12:400:120:16,12:400:1:1,12:400:32:4 \
  3 base="$MOSS_ROOT/.cand/pf-base" prefetch="$MOSS_ROOT/kernels_generated"
moss_device_pack ab
moss_device_attention_bench "$R/final" >/dev/null
python3 benchmarks/targets.py "$R/final/attention-bench.json" >"$R/final/targets-attention.md"
tail -1 "$R/final/targets-attention.md"
moss_device_pack attention-bench
timeout 150 "$MOSS_BENCH" --kernels-dir "$MOSS_ROOT/.cand/tuned" --whitelist configs/h200-tuned-pdl.json \
  --commit "${MOSS_COMMIT:-unknown}" --json "$R/final/gemm-bench.json" >"$R/final/gemm-bench.txt" 2>&1
echo "gemm bench rc=$?"
python3 benchmarks/targets.py "$R/final/gemm-bench.json" >"$R/final/targets-gemm.md"
tail -1 "$R/final/targets-gemm.md"
moss_device_pack gemm-bench
