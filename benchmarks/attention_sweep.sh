#!/usr/bin/env bash
# One device call: builds the runtime (no MLIR), runs every runtime test against
# kernels_generated/, the attention benchmark, and a split-KV sweep
# (MOSS_ATTENTION_SPLITS) over the short-chunk cases. Usage: OUT=dir benchmarks/attention_sweep.sh
set -o pipefail; B=/tmp/rt
cmake -S . -B $B -G Ninja -DMOSS_BUILD_COMPILER=OFF -DMOSS_BUILD_RUNTIME=ON -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH=$PWD/.devdeps/prefix > $OUT/cfg.log 2>&1 && ninja -C $B > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
export MOSS_TEST_KERNELS_DIR=$PWD/kernels_generated MOSS_TEST_WHITELIST=$PWD/configs/h200-example.json
timeout 250 $B/unittests/Runtime/MossRuntimeTests > $OUT/t.log 2>&1; echo tests rc=$?; grep -E "^\[  (FAILED|PASSED)|Failure" -A3 $OUT/t.log | head -20
BENCH=$B/benchmarks/moss-bench/moss-bench
timeout 200 $BENCH --kernels-dir kernels_generated --attention --json $OUT/attention-bench.json > $OUT/bench.txt 2>&1; echo bench rc=$?
grep -E "^ +[0-9]" $OUT/bench.txt | awk '{print $1,$2,$3,$4,"sp",$6,"bthd",$8,"up",$12,"err",$14}'
C=20:125:1:1,20:125:1:16,20:125:32:4,12:250:1:1,12:250:32:4,12:400:1:1,12:400:1:16,12:400:32:1,12:400:32:4,12:400:32:16,12:400:240:4
for s in 1 2 3 4 7; do MOSS_ATTENTION_SPLITS=$s timeout 60 $BENCH --kernels-dir kernels_generated --attention-cases $C --samples 3 > $OUT/sweep$s.txt 2>&1; echo "splits=$s: $(grep -E '^ +[0-9]' $OUT/sweep$s.txt | awk '{printf "%s:%s:%s:%s=%s(%s) ", $1,$2,$3,$4,$8,$6}')"; done
