#!/usr/bin/env bash
# ABI 14 (kv-barriers-rule.patch): g4_tma's K and V on mbarriers of their own
# in launches of more than 66 CTAs, chosen by a flags bit the runtime sets.
# The patch changes the runtime too, so it runs with a runtime built from the
# patched source, against the tree's (HEAD's) runtime and kernels: the GPU
# checks on the patched build, three alternating A/B rounds, then the full
# attention benchmark of the patched build (issue 6's targets).
# Prepare on the compiler machine, clean tree, build/ configured:
#   P=benchmarks/pending/kv-barriers-rule
#   bash benchmarks/pending/prepare.sh $P/kv-barriers-rule.patch .cand/kvr/k
#   rm -rf .cand/kvr/src && mkdir -p .cand/kvr/src
#   git archive HEAD | tar -x -C .cand/kvr/src
#   patch -p1 -d .cand/kvr/src <$P/kv-barriers-rule.patch
# then carry .devdeps, kernels_generated and .cand/kvr, and run from the root:
#   bash benchmarks/pending/kv-barriers-rule/run.sh
set -o pipefail
source benchmarks/device_common.sh
moss_device_begin
moss_device_build "$R" "$MOSS_ROOT/.devdeps/prefix"
NEW_RT=/tmp/moss-rt-kvr
cmake -S "$MOSS_ROOT/.cand/kvr/src" -B $NEW_RT -G Ninja -DMOSS_BUILD_COMPILER=OFF \
  -DMOSS_BUILD_RUNTIME=ON -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$MOSS_ROOT/.devdeps/prefix" >"$R/new-configure.log" 2>&1 &&
  ninja -C $NEW_RT >"$R/new-build.log" 2>&1 || { tail -30 "$R/new-build.log"; exit 1; }
moss_device_pack built
mkdir -p "$R/checks" "$R/ab" "$R/final"
MOSS_RT_BUILD=$NEW_RT moss_device_attention_checks "$R/checks" "$MOSS_ROOT/.cand/kvr/k"
moss_device_pack checks
moss_device_attention_ab "$R/ab" \
  12:250:1:1,12:250:1:4,12:250:1:5,12:250:1:6,12:250:1:8,12:250:1:11,12:250:8:4,12:250:8:8,12:250:16:4,20:125:1:4,12:400:32:16 \
  3 abi13="$MOSS_ROOT/kernels_generated" \
  abi14="$MOSS_ROOT/.cand/kvr/k+MOSS_BENCH=$NEW_RT/benchmarks/moss-bench/moss-bench"
moss_device_pack ab
MOSS_BENCH=$NEW_RT/benchmarks/moss-bench/moss-bench moss_device_attention_bench "$R/final" \
  "$MOSS_ROOT/.cand/kvr/k" >/dev/null
python3 benchmarks/targets.py "$R/final/attention-bench.json" >"$R/final/targets-attention.md"
tail -1 "$R/final/targets-attention.md"
moss_device_pack attention-bench
