#!/usr/bin/env bash
# One device call (session 31), for the SASS of issue 6's missed targets:
# cuobjdump -sass of the attention cubin (kernels_generated, 1d2b381) and of
# the tuned H200 whitelist's GEMM cubins (.cand/tuned: `moss-aot --whitelist
# configs/h200-tuned-pdl.json --out .cand/tuned`), each listing gzipped, and
# benchmarks/sass_report.py's table of every function. Needs cuobjdump (the
# compiler machine has ptxas but not cuobjdump), no GPU.
# Carry kernels_generated and .cand/tuned; run from the root.
set -eo pipefail
export PATH=/usr/local/cuda/bin:$PATH
mkdir -p "$OUT/sass"
cuobjdump --version | tail -2 >"$OUT/sass/cuobjdump-version.txt"
cubins=(kernels_generated/streaming_attention_d64.*.cubin .cand/tuned/linear_*.cubin)
for c in "${cubins[@]}"; do
  cuobjdump -sass "$c" | gzip -9 >"$OUT/sass/$(basename "$c" .cubin).sass.gz"
done
python3 benchmarks/sass_report.py --top 12 "${cubins[@]}" >"$OUT/sass/report.md"
head -40 "$OUT/sass/report.md"
# One file back (the device returns a limited count of files).
tar -cf "$OUT/sass.tar" -C "$OUT" sass && rm -r "$OUT/sass"
