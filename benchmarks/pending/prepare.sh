#!/usr/bin/env bash
# Builds the kernels of a pending experiment's patch on the compiler machine:
#   bash benchmarks/pending/prepare.sh PATCH OUT_DIR [MOSS_AOT_ARGS...]
# applies PATCH to the (clean) working tree, builds moss-aot, writes the AOT
# build of configs/h200-example.json (MOSS_PREPARE_WHITELIST overrides) into
# OUT_DIR (ignored; carry it to the device) with any further arguments passed
# to moss-aot, then restores the tree and rebuilds, so the tree and build/ are
# the base again. Uses build/ (MOSS_BUILD_DIR overrides).
set -euo pipefail
patch=$1 out=$2
shift 2
root=$(git rev-parse --show-toplevel)
build=${MOSS_BUILD_DIR:-$root/build}
cd "$root"
if ! git diff --quiet HEAD; then
  echo "prepare.sh: the working tree has changes; commit or stash them first" >&2
  exit 1
fi
git apply "$patch"
restore() { git checkout -- . && cmake --build "$build" >/dev/null; }
trap restore EXIT
cmake --build "$build" --target moss-aot
rm -rf "$out"
"$build/bin/moss-aot" "$@" --whitelist "${MOSS_PREPARE_WHITELIST:-configs/h200-example.json}" \
  --out "$out"
