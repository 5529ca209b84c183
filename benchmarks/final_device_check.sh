#!/usr/bin/env bash
# One device call: builds the runtime (no MLIR), runs every runtime GPU test
# and the Python (PyTorch) tests against kernels_generated/, then the
# attention benchmark into $OUT/attention-bench.json.
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
