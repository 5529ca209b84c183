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
t0=$(date +%s)
pack() { tar -czf "$OUT/results.tgz" -C "$R" .; echo "[$1 $(($(date +%s) - t0))s]"; }
moss_device_build "$R" "$MOSS_ROOT/.devdeps/prefix"
NEW_RT=/tmp/moss-rt-kvr
cmake -S "$MOSS_ROOT/.cand/kvr/src" -B $NEW_RT -G Ninja -DMOSS_BUILD_COMPILER=OFF \
  -DMOSS_BUILD_RUNTIME=ON -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$MOSS_ROOT/.devdeps/prefix" >"$R/new-configure.log" 2>&1 &&
  ninja -C $NEW_RT >"$R/new-build.log" 2>&1 || { tail -30 "$R/new-build.log"; exit 1; }
pack built
mkdir -p "$R/checks"
MOSS_RT_BUILD=$NEW_RT moss_device_attention_checks "$R/checks" "$MOSS_ROOT/.cand/kvr/k"
pack checks
C=12:250:1:1,12:250:1:4,12:250:1:5,12:250:1:6,12:250:1:8,12:250:1:11,12:250:8:4,12:250:8:8,12:250:16:4,20:125:1:4,12:400:32:16
mkdir -p "$R/ab"
for r in 1 2 3; do
  timeout 120 $MOSS_BENCH --kernels-dir "$MOSS_ROOT/kernels_generated" --attention-cases $C \
    --json "$R/ab/abi13-r$r.json" >"$R/ab/abi13-r$r.txt" 2>&1 || echo "abi13 r$r rc=$?"
  timeout 120 $NEW_RT/benchmarks/moss-bench/moss-bench --kernels-dir "$MOSS_ROOT/.cand/kvr/k" \
    --attention-cases $C --json "$R/ab/abi14-r$r.json" >"$R/ab/abi14-r$r.txt" 2>&1 || echo "abi14 r$r rc=$?"
done
moss_attention_means "$R/ab" $C abi13 abi14
pack ab
mkdir -p "$R/final"
timeout 200 $NEW_RT/benchmarks/moss-bench/moss-bench --kernels-dir "$MOSS_ROOT/.cand/kvr/k" --attention \
  --json "$R/final/attention-bench.json" --commit "${MOSS_COMMIT:-unknown}" >"$R/final/bench.txt" 2>&1
echo "bench rc=$?"
python3 benchmarks/targets.py "$R/final/attention-bench.json" >"$R/final/targets-attention.md"
tail -1 "$R/final/targets-attention.md"
pack attention-bench
