#!/usr/bin/env bash
# Builds every kernels folder the pending device scripts carry (README.md),
# from a clean tree with build/ configured. Then carry .devdeps,
# kernels_generated and .cand/kv.
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
build=${MOSS_BUILD_DIR:-build}
P=benchmarks/pending
cmake --build "$build" --target moss-aot moss-kernels
bash $P/prepare.sh $P/kv-barriers/split-kv-barriers.patch .cand/kv/k
du -sh .cand/kv .devdeps kernels_generated
