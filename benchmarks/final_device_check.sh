#!/usr/bin/env bash
# One device call: builds the runtime (no MLIR), runs every runtime GPU test
# and the Python (PyTorch) tests against kernels_generated/, then the
# attention benchmark into $OUT/attention-bench.json.
# Usage: OUT=dir benchmarks/final_device_check.sh
set -o pipefail
B=/tmp/rt
cmake -S . -B $B -G Ninja -DMOSS_BUILD_COMPILER=OFF -DMOSS_BUILD_RUNTIME=ON -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH=$PWD/.devdeps/prefix > $OUT/cfg.log 2>&1 && ninja -C $B > $OUT/build.log 2>&1 \
  || { tail -30 $OUT/build.log; exit 1; }
export MOSS_TEST_KERNELS_DIR=$PWD/kernels_generated MOSS_TEST_WHITELIST=$PWD/configs/h200-example.json
timeout 250 $B/unittests/Runtime/MossRuntimeTests > $OUT/t.log 2>&1; echo "runtime tests rc=$?"
grep -E "^\[  (FAILED|PASSED)|Failure" -A3 $OUT/t.log | head -20
MOSS_RUNTIME_LIB=$B/runtime/libmoss_runtime.so MOSS_KERNELS_DIR=$PWD/kernels_generated \
  MOSS_CODEC_GEMM_CONFIG=$PWD/configs/h200-example.json timeout 240 scripts/test-python.sh -q -x > $OUT/py.log 2>&1
echo "python tests rc=$?"; tail -5 $OUT/py.log
timeout 200 $B/benchmarks/moss-bench/moss-bench --kernels-dir kernels_generated --attention \
  --json $OUT/attention-bench.json --commit "${MOSS_COMMIT:-unknown}" > $OUT/bench.txt 2>&1; echo "bench rc=$?"
grep -E "^ +[0-9]" $OUT/bench.txt | awk '{print $1,$2,$3,$4,"sp",$6,"bthd",$8,"bhtd+cp",$10,"up",$12,"err",$14}'
