#!/bin/bash
# First device call (as run; its GEMM timing found no kernels: the subset
# whitelist split.json does not match the manifests' cache key, and
# kernels_generated was not carried; run2-bench.sh redid both): moss-dsmem-probe, SASS of the hand-over transports, tests of
# the remote-store hand-over kernels, base vs stores GEMM timing (2 rounds),
# and on an H200 the attention targets. Carry .devdeps/prefix, .cand/handover.
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
P=$MOSS_RT_BUILD/benchmarks/dsmem-probe/moss-dsmem-probe
timeout 100 $P --bytes 16,1024,4096,8192,16384 --clusters 1,48,66 --json "$R/dsmem.json" >"$R/dsmem.txt" 2>&1
echo "dsmem rc=$?"; cat "$R/dsmem.txt"
H=.cand/handover
for f in $P $H/{base,stores,bulk}/linear_n3072_k768_gelu_bm32_bn64_bk32_s2.*.cubin; do
  echo "== $f"; cuobjdump -sass "$f" 2>&1 | grep -oE "MEMBAR[.A-Z]*|FENCE[.A-Z]*|SYNCS[.A-Z0-9]*|UBLKCP[.A-Z]*|STAS[.A-Z0-9]*|CCTL[.A-Z]*|ERRBAR" | sort | uniq -c
done >"$R/sass.txt" 2>&1
cat "$R/sass.txt"
cuobjdump -sass $P >"$R/probe.sass" 2>&1
export MOSS_TEST_WHITELIST=$MOSS_ROOT/configs/h200-tuned-pdl.json
for v in stores bulk; do for pdl in 1 0; do
  MOSS_TEST_KERNELS_DIR=$MOSS_ROOT/$H/$v MOSS_CODEC_GEMM_PDL=$pdl timeout 100 \
    $MOSS_RT_BUILD/unittests/Runtime/MossRuntimeTests \
    --gtest_filter='GeneratedGemm*:GraphCapture*:ConcurrentStreams*:ProgrammaticLaunch*' >"$R/t-$v-pdl$pdl.log" 2>&1
  echo "$v tests pdl=$pdl rc=$? $(grep -E '^\[  PASSED|^\[  FAILED' "$R/t-$v-pdl$pdl.log" | tr '\n' ' ') $(( $(date +%s) - t0 ))s"
done; done
echo "tested $(( $(date +%s) - t0 ))s"
for round in 1 2; do
  for v in base stores bulk; do
    timeout 100 "$MOSS_BENCH" --kernels-dir "$MOSS_ROOT/$H/$v" --whitelist "$H/split.json" \
      --m-list 30 --json "$R/gemm-$v-r$round.json" >"$R/gemm-$v-r$round.txt" 2>&1
    echo "round $round $v rc=$? $(( $(date +%s) - t0 ))s"
  done
done
for v in base stores bulk; do echo "== $v"; grep -E "^(1|8|16|30)," "$R/gemm-$v-r1.txt" "$R/gemm-$v-r2.txt" | grep " yes " ; done
if grep -q H200 "$R/gpu.txt"; then
  moss_device_attention_bench "$R" | head -40
  python3 benchmarks/targets.py "$R/attention-bench.json" >"$R/targets-attention.md" 2>&1; tail -3 "$R/targets-attention.md"
fi
echo "done $(( $(date +%s) - t0 ))s"
