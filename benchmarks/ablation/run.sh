#!/usr/bin/env bash
# GPU machine: times the kernels build.sh wrote, each variant beside base/ in
# the same run, two rounds with the variants interleaved (README.md here).
# Usage: OUT=dir benchmarks/ablation/run.sh [gemm|attn|l2|all] [KERNELS]
#   l2: moss-l2-probe (benchmarks/l2-probe), the rate at which grids of 16 to
#   264 CTAs stream the decoder's weights from L2 and from HBM.
#   KERNELS defaults to .cand/ablate; carry it, .devdeps/prefix (scripts/
#   device-deps.sh) and benchmarks/ablation. Writes OUT/<family>/summary.md.
set -uo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$HERE/../device_common.sh"
MOSS_BENCH=${ABLATE_BENCH:-$MOSS_BENCH} # a stand-in, to check this script
FAMILIES=${1:-all}
[[ $FAMILIES == all ]] && FAMILIES="gemm attn l2"
K=${2:-$MOSS_ROOT/.cand/ablate}
ROUNDS=${ROUNDS:-2}
# T = 1 decode steps of the three (H, S) of the decoder, and H=12 S=400 T=32.
CASES=${ATTN_CASES:-20:125:1:1,20:125:1:4,20:125:1:16,12:250:1:1,12:250:1:4,12:250:1:16,12:400:1:1,12:400:1:4,12:400:1:16,12:400:32:1,12:400:32:4,12:400:32:16}

mkdir -p "$OUT"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv >"$OUT/gpu.txt" 2>&1
PROBE=$MOSS_RT_BUILD/benchmarks/l2-probe/moss-l2-probe
if [[ ! -x $MOSS_BENCH || ! -x $PROBE ]]; then
  moss_device_build "$OUT" "$MOSS_ROOT/.devdeps/prefix" moss-bench moss-l2-probe
fi
t0=$(date +%s)
for family in $FAMILIES; do
  R=$OUT/$family
  if [[ $family == l2 ]]; then
    mkdir -p "$R"
    timeout 200 "$PROBE" --json "$R/l2-probe.json" | tee "$R/l2-probe.txt"
    echo "l2 probe rc=${PIPESTATUS[0]} $(( $(date +%s) - t0 )) s"
    continue
  fi
  mkdir -p "$R"
  variants=$(cd "$K/$family" && ls -d */ | tr -d / | sort)
  for round in $(seq 1 "$ROUNDS"); do
    for v in $variants; do
      dir=$K/$family/$v
      if [[ $family == gemm ]]; then
        args=(--kernels-dir "$dir" --whitelist "$dir/whitelist.json" --m-list 30)
      else
        args=(--kernels-dir "$dir" --attention-cases "$CASES")
      fi
      # Ablated kernels compute wrong results: moss-bench's exit code says
      # so (3); only a timeout or a crash matters here.
      timeout 120 "$MOSS_BENCH" "${args[@]}" --json "$R/$v-r$round.json" \
        >"$R/$v-r$round.txt" 2>&1
      rc=$?
      [[ $rc == 0 || $rc == 3 ]] || echo "$family/$v round $round: rc=$rc" >&2
    done
    echo "$family round $round: $(( $(date +%s) - t0 )) s"
  done
  python3 "$HERE/summarize.py" "$family" "$R" >"$R/summary.md" && cat "$R/summary.md"
done
