#!/usr/bin/env bash
# One device call (session 29): kv-barriers on ABI 13 (GPU checks on its
# kernels, A/B against kernels_generated), then HEAD's full attention
# benchmark and the tuned whitelist's GEMM benchmark (issue 6's targets),
# then g1_tma's grid condition. Results are packed after every phase, so a
# call cut off by its limit still returns what finished.
# Carry .devdeps, kernels_generated, .cand/kv, .cand/tuned. Prepared at aecc1d8
# with benchmarks/pending/prepare_all.sh (.cand/kv/k: kv/split-kv-barriers-always.patch
# applied; removed since) and `moss-aot --whitelist configs/h200-tuned-pdl.json
# --out .cand/tuned`. Ran as: MOSS_COMMIT=aecc1d8 bash run.sh (from the root).
set -o pipefail
source benchmarks/device_common.sh
moss_device_begin
pack() { tar -czf "$OUT/results.tgz" -C "$R" .; echo "[$1 $(( $(date +%s) - t0 ))s]"; }
t0=$(date +%s)
moss_device_build "$R" "$MOSS_ROOT/.devdeps/prefix"; pack built
mkdir -p "$R/kv"
moss_device_attention_checks "$R/kv" "$MOSS_ROOT/.cand/kv/k"; pack kv-tests
moss_device_attention_ab "$R/kv" 12:250:1:1,12:250:1:4,12:250:1:8,12:250:8:4,12:250:1:11,12:250:16:4,12:250:32:1,20:125:1:1 \
  3 base="$MOSS_ROOT/kernels_generated" kv="$MOSS_ROOT/.cand/kv/k"; pack kv-ab
mkdir -p "$R/final"
moss_device_attention_bench "$R/final" >/dev/null
python3 benchmarks/targets.py "$R/final/attention-bench.json" >"$R/final/targets-attention.md"
tail -1 "$R/final/targets-attention.md"; pack attention-bench
L=$MOSS_ROOT/.cand/tuned
timeout 150 "$MOSS_BENCH" --kernels-dir "$L" --whitelist configs/h200-tuned-pdl.json --commit "${MOSS_COMMIT:-unknown}" \
  --json "$R/final/gemm-bench.json" >"$R/final/gemm-bench.txt" 2>&1
echo "gemm bench rc=$?"
python3 benchmarks/targets.py "$R/final/gemm-bench.json" >"$R/final/targets-gemm.md"; tail -1 "$R/final/targets-gemm.md"; pack gemm-bench
mkdir -p "$R/g1-rule"
moss_device_attention_env_ab "$R/g1-rule" 12:400:60:16,12:400:120:4,12:400:240:4,12:400:120:16,12:400:480:16 \
  2 "$MOSS_ROOT/kernels_generated" rule=- cp=MOSS_ATTENTION_TMA=0; pack g1-rule
