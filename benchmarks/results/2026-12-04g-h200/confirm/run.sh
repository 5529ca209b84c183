#!/usr/bin/env bash
# Session 16 last call: the landed kernel (tail word path in g1 only) against base, tests + memcheck + short bench.
set -o pipefail
source benchmarks/device_common.sh
R=$OUT/conf; mkdir -p $R
moss_device_build "$R" "$MOSS_ROOT/.devdeps/prefix" moss-bench MossRuntimeTests
KD=$MOSS_ROOT/kernels_generated; BASE=$MOSS_ROOT/.cand/s16/base/kernels
MOSS_TEST_WHITELIST=$MOSS_ROOT/configs/h200-example.json MOSS_TEST_KERNELS_DIR=$KD timeout 100 $MOSS_RT_BUILD/unittests/Runtime/MossRuntimeTests >$R/t.log 2>&1
echo "tests rc=$?"; grep -E "^\[  (FAILED|PASSED)" $R/t.log | head -3
SAN=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
MOSS_TEST_KERNELS_DIR=$KD timeout 100 $SAN --tool memcheck --error-exitcode 9 $MOSS_RT_BUILD/unittests/Runtime/MossRuntimeTests --gtest_filter='Attention.*' >$R/memcheck.log 2>&1
echo "memcheck rc=$?"; grep -E "ERROR SUMMARY" $R/memcheck.log | head -2
C=20:125:1:1,20:125:1:4,20:125:1:16,20:125:32:1,20:125:240:16,20:125:480:16,12:250:1:1,12:250:32:4,12:250:480:16,12:400:240:16,12:400:480:16
timeout 60 $MOSS_BENCH --kernels-dir $BASE --attention-cases $C >$R/bench-base.txt 2>&1; timeout 60 $MOSS_BENCH --kernels-dir $KD --attention-cases $C >$R/bench-new.txt 2>&1
for f in base new; do echo "== $f"; grep -E "^ +[0-9]" $R/bench-$f.txt | awk '{print $1":"$2":"$3":"$4, $6, $8, $9, $16}'; done
tar -czf $OUT/conf.tgz -C $R .
