#!/usr/bin/env bash
set -o pipefail
source benchmarks/device_common.sh
S=.cand/s13
R=$(mktemp -d)
moss_device_build "$R" "$MOSS_ROOT/.devdeps/prefix" moss_runtime
export MOSS_RUNTIME_LIB=$MOSS_RT_BUILD/runtime/libmoss_runtime.so MOSS_KERNELS_DIR=$S/tuned-k \
  MOSS_CODEC_GEMM_CONFIG=$MOSS_ROOT/configs/h200-tuned-pdl.json MOSS_CODEC_GEMM_PDL=1
for apdl in 0 1; do
  t0=$(date +%s)
  MOSS_ATTENTION_PDL=$apdl timeout 250 python3 python/benchmarks/layer_step.py --out $OUT/layer-apdl$apdl --commit 9dd982f > $R/ls$apdl.log 2>&1
  echo "attention pdl=$apdl rc=$? $(( $(date +%s)-t0 ))s"; tail -3 $R/ls$apdl.log
done
