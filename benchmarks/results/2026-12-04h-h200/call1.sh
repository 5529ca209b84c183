#!/bin/bash
# Session 17, device call 1: wide W-as-A GEMM tiles (tests, then moss-tune
# when they pass) and the attention launch-rule sweep.
set -u
cd "$(dirname "$0")/../.."
source benchmarks/device_common.sh
S=$MOSS_ROOT/.cand/s17
R=$OUT/c1; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv >"$R/gpu.txt"
t0=$(date +%s)
moss_device_build "$R" "$MOSS_ROOT/.devdeps/prefix" moss-bench moss-tune MossRuntimeTests || exit 1
echo "built $(( $(date +%s) - t0 ))s"
T=$MOSS_RT_BUILD/unittests/Runtime/MossRuntimeTests
ok=1
for pdl in 0 1; do
  MOSS_CODEC_GEMM_PDL=$pdl MOSS_TEST_KERNELS_DIR=$S/k-wide \
    MOSS_TEST_WHITELIST=$MOSS_ROOT/unittests/Runtime/Inputs/wgmma-weights-a-wide-whitelist.json \
    timeout 120 $T --gtest_filter='GeneratedGemm*:GraphCapture*:ConcurrentStreams*:ProgrammaticLaunch*' >"$R/t-wide-pdl$pdl.log" 2>&1
  rc=$?; [ $rc = 0 ] || ok=0
  echo "wide pdl=$pdl rc=$rc $(grep -E '^\[  PASSED|^\[  FAILED' "$R/t-wide-pdl$pdl.log" | head -3 | tr '\n' ' ')"
done
grep -E "key |Failure|Expected|Which is|relativeL2" "$R/t-wide-pdl0.log" | head -40
echo "tests $(( $(date +%s) - t0 ))s"
if [ $ok = 1 ]; then
  MOSS_CODEC_GEMM_PDL=1 timeout 260 $MOSS_RT_BUILD/benchmarks/moss-tune/moss-tune --candidates $S/tune --out $R/tune >"$R/tune.log" 2>&1
  echo "tune rc=$? $(( $(date +%s) - t0 ))s"; tail -3 "$R/tune.log"
fi
CASES=""
for hs in 20:125 12:250 12:400; do for t in 1 8 32; do for b in 1 4 16; do
  CASES="$CASES,${hs%:*}:${hs#*:}:$t:$b"; done; done; done
CASES=${CASES#,}
for cfg in 0:0 1:1 1:2 1:4 2:1 2:2 2:4 4:1 4:2 4:4 8:1 8:2; do
  [ $(( $(date +%s) - t0 )) -gt 540 ] && { echo "sweep stopped at $cfg (time)"; break; }
  sp=${cfg%:*}; g=${cfg#*:}
  if [ "$cfg" = 0:0 ]; then envs=""; else envs="MOSS_ATTENTION_SPLITS=$sp MOSS_ATTENTION_KV_GROUPS=$g"; fi
  env $envs timeout 60 $MOSS_BENCH --kernels-dir kernels_generated --attention \
    --attention-cases "$CASES" > $R/sweep-$sp-$g.txt 2>&1
  echo "cfg $cfg rc=$? $(( $(date +%s) - t0 ))s"
done
tar -czf "$OUT/c1.tgz" -C "$R" .
