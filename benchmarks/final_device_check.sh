#!/usr/bin/env bash
# One device call: builds the runtime (no MLIR), runs every runtime GPU test
# and the Python (PyTorch) tests against kernels_generated/, then the
# attention benchmark into $OUT/attention-bench.json.
# With MOSS_CHECK_GEMM_KERNELS=DIR (moss-aot output of a whitelist, e.g.
# configs/h200-tuned-pdl.json; MOSS_CHECK_GEMM_WHITELIST names it) it also
# times that folder's GEMMs with moss-bench, and prints issue 6's targets
# (benchmarks/targets.py) for both runs.
# Usage: OUT=dir benchmarks/final_device_check.sh
set -o pipefail
source "$(dirname "${BASH_SOURCE[0]}")/device_common.sh"
moss_device_build "$OUT" "$MOSS_ROOT/.devdeps/prefix"
moss_device_runtime_tests "$OUT"
MOSS_RUNTIME_LIB=$MOSS_RT_BUILD/runtime/libmoss_runtime.so MOSS_KERNELS_DIR=$MOSS_ROOT/kernels_generated \
  MOSS_CODEC_GEMM_CONFIG=$MOSS_ROOT/configs/h200-example.json \
  timeout 240 "$MOSS_ROOT/scripts/test-python.sh" -q -x >"$OUT/py.log" 2>&1
echo "python tests rc=$?"; tail -5 "$OUT/py.log"
moss_device_attention_bench "$OUT"
python3 "$MOSS_ROOT/benchmarks/targets.py" "$OUT/attention-bench.json" >"$OUT/targets-attention.md" \
  && grep -E "met, .* missed" "$OUT/targets-attention.md"
if [[ -n "${MOSS_CHECK_GEMM_KERNELS:-}" ]]; then
  timeout 200 $MOSS_BENCH --kernels-dir "$MOSS_CHECK_GEMM_KERNELS" \
    --whitelist "${MOSS_CHECK_GEMM_WHITELIST:-$MOSS_ROOT/configs/h200-tuned-pdl.json}" \
    --json "$OUT/gemm-bench.json" --commit "${MOSS_COMMIT:-unknown}" >"$OUT/gemm-bench.txt" 2>&1
  echo "gemm bench rc=$?"
  python3 "$MOSS_ROOT/benchmarks/targets.py" "$OUT/gemm-bench.json" >"$OUT/targets-gemm.md" \
    && grep -E "met, .* missed" "$OUT/targets-gemm.md"
fi
