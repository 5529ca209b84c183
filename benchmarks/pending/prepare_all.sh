#!/usr/bin/env bash
# Builds every kernels folder the pending device scripts carry (README.md,
# "Order for a device session"), from a clean tree with build/ configured:
# about 15 minutes on two cores. Then carry .devdeps plus, per script,
# .cand/aprobe, .cand/g1tma, kernels_generated and .cand/kv, or .cand/wpf.
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
build=${MOSS_BUILD_DIR:-build}
P=benchmarks/pending
cmake --build "$build" --target moss-aot moss-kernels
MOSS_EXP_ALLOW_SPILL=1 bash $P/prepare.sh $P/attention-probe/attention-probe.patch .cand/aprobe/k \
  --moss-attention-probe
bash $P/prepare.sh $P/g1-tma/g1-tma.patch .cand/g1tma/k
bash $P/prepare.sh benchmarks/results/2026-12-05f-h100/kv-barriers/split-kv-barriers.patch .cand/kv/k
rm -rf .cand/wpf/base
"$build/bin/moss-aot" --whitelist $P/w-prefetch/whitelist.json --out .cand/wpf/base
MOSS_PREPARE_WHITELIST=$P/w-prefetch/whitelist.json bash $P/prepare.sh $P/w-prefetch/w-prefetch.patch .cand/wpf/k
du -sh .cand/aprobe .cand/g1tma .cand/kv .cand/wpf .devdeps kernels_generated
