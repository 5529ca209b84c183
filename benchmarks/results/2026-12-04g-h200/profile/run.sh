#!/usr/bin/env bash
# Session 16 call 1: Nsight Compute of long-chunk / T=32 attention and of the M=30 GEMM keys.
set -o pipefail
source benchmarks/device_common.sh
R=$OUT/p1; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv >"$R/gpu.txt"
moss_device_build "$R" "$MOSS_ROOT/.devdeps/prefix" moss-bench
P=$MOSS_ROOT/.cand/s16/prof1
KD=$MOSS_ROOT/kernels_generated
cuobjdump --dump-sass $KD/streaming_attention*.cubin >$R/attn.sass 2>&1
for c in 12:400:480:16 20:125:240:16 12:400:32:16 12:400:32:4; do
  tag=${c//:/_}
  timeout 120 ncu --clock-control none --set full -k regex:streaming_attention --launch-count 1 \
    --print-details all $MOSS_BENCH --kernels-dir $KD --attention-cases $c --samples 1 --replays 1 >$R/ncu-$tag.txt 2>&1
  echo "== $c rc=$?"
  grep -E "Duration|Registers Per|Achieved Occupancy|Theoretical Occupancy|Compute \(SM\) Throughput|Memory Throughput|L2 Cache Throughput|L1/TEX Cache Throughput|DRAM Throughput|Executed Ipc A|Issue Slots Busy|No Eligible|Block Size|Grid Size|Dynamic Shared" $R/ncu-$tag.txt | head -20
done
timeout 120 ncu --clock-control none --section SourceCounters --section WarpStateStats -k regex:streaming_attention \
  --launch-count 1 --page source --print-source sass --csv $MOSS_BENCH --kernels-dir $KD --attention-cases 12:400:480:16 \
  --samples 1 --replays 1 >$R/src-12_400_480_16.csv 2>&1; echo "src rc=$?"
for w in 30_3072_768_1 30_768_3072_2 30_1280_5120_2 16_5120_1280_1; do
  m=${w%%_*}
  cuobjdump --dump-sass $P/wl-$w/linear_*.cubin >$R/gemm-$w.sass 2>&1
  MOSS_CODEC_GEMM_PDL=1 timeout 120 ncu --clock-control none --set full -k regex:linear_ --launch-count 1 --print-details all \
    $MOSS_BENCH --kernels-dir $P/wl-$w --whitelist $P/wl-$w.json --m-list $m --samples 1 --replays 1 --no-cold >$R/ncu-g$w.txt 2>&1
  echo "== gemm $w rc=$?"
  grep -E "Duration|Registers Per|Compute \(SM\) Throughput|Memory Throughput|L2 Cache Throughput|DRAM Throughput|Executed Ipc A|No Eligible|Grid Size|Block Size" $R/ncu-g$w.txt | head -12
done
tar -czf $OUT/p1.tgz -C $R .
