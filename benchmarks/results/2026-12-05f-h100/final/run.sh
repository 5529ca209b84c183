#!/usr/bin/env bash
# Final check of HEAD: issue 6's attention targets (full benchmark) and GEMM targets (tuned whitelist), GEMM GPU tests.
set -o pipefail
source benchmarks/device_common.sh
R=$OUT/r; mkdir -p "$R"
trap 'tar -czf "$OUT/results.tgz" -C "$R" .' EXIT
t0=$(date +%s)
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv >"$R/gpu.txt"; cat "$R/gpu.txt"
moss_device_build "$R" "$MOSS_ROOT/.devdeps/prefix"
echo "built $(( $(date +%s) - t0 ))s"
MOSS_COMMIT=$(cat .cand/final2/commit) moss_device_attention_bench "$R" >/dev/null
python3 benchmarks/targets.py "$R/attention-bench.json" >"$R/targets-attention.md"; tail -1 "$R/targets-attention.md"
echo "attention $(( $(date +%s) - t0 ))s"
L=$MOSS_ROOT/.cand/final2/tuned
MOSS_TEST_KERNELS_DIR=$L MOSS_TEST_WHITELIST=$MOSS_ROOT/configs/h200-tuned-pdl.json MOSS_CODEC_GEMM_PDL=1 timeout 100 \
  $MOSS_RT_BUILD/unittests/Runtime/MossRuntimeTests --gtest_filter='GeneratedGemm*:GraphCapture*:ConcurrentStreams*:ProgrammaticLaunch*' >"$R/t-tuned-pdl1.log" 2>&1
echo "tuned tests rc=$? $(grep -E '^\[  PASSED|^\[  FAILED' "$R/t-tuned-pdl1.log" | tr '\n' ' ')"
timeout 300 "$MOSS_BENCH" --kernels-dir "$L" --whitelist configs/h200-tuned-pdl.json --commit "$(cat .cand/final2/commit)" \
  --json "$R/gemm-bench.json" >"$R/gemm-bench.txt" 2>&1
echo "gemm bench rc=$? $(( $(date +%s) - t0 ))s"
python3 benchmarks/targets.py "$R/gemm-bench.json" >"$R/targets-gemm.md"; tail -1 "$R/targets-gemm.md"
