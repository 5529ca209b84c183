#!/usr/bin/env bash
# One device call: builds the runtime (no MLIR), runs every runtime test against
# kernels_generated/, the attention benchmark, and a split-KV sweep
# (MOSS_ATTENTION_SPLITS) over the short-chunk cases.
# Usage: OUT=dir benchmarks/attention_sweep.sh
set -o pipefail
source "$(dirname "${BASH_SOURCE[0]}")/device_common.sh"
moss_device_build "$OUT" "$MOSS_ROOT/.devdeps/prefix"
moss_device_runtime_tests "$OUT"
moss_device_attention_bench "$OUT"
C=20:125:1:1,20:125:1:16,20:125:32:4,12:250:1:1,12:250:32:4,12:400:1:1,12:400:1:16,12:400:32:1,12:400:32:4,12:400:32:16,12:400:240:4
for s in 1 2 3 4 7; do
  MOSS_ATTENTION_SPLITS=$s timeout 60 $MOSS_BENCH --kernels-dir "$MOSS_ROOT/kernels_generated" \
    --attention-cases $C --samples 3 >"$OUT/sweep$s.txt" 2>&1
  echo "splits=$s: $(grep -E '^ +[0-9]' "$OUT/sweep$s.txt" | awk '{printf "%s:%s:%s:%s=%s(%s) ", $1,$2,$3,$4,$8,$6}')"
done
