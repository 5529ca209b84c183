#!/usr/bin/env bash
# Builds dist/moss_kernels-<version>-<python>-<platform>.whl from a build of
# this checkout (scripts/setup.sh): bundles libmoss_runtime.so, the kernels
# of the shipped whitelists (moss-aot, here: no MLIR is needed where the
# wheel is installed) and the whitelists into python/moss_kernels/_bundled,
# then runs `pip wheel --no-build-isolation .` with an interpreter that has
# setuptools and wheel (Debian's python3-setuptools and python3-wheel).
# Usage: scripts/build-wheel.sh [OUT_DIR (default dist)]
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${MOSS_BUILD_DIR:-$ROOT/build}"
OUT="${1:-$ROOT/dist}"
BUNDLE="$ROOT/python/moss_kernels/_bundled"
# Shipped kernels: name (the folder and whitelist name in the wheel) and
# whitelist. The first is what the runtime loads by default.
SHIPPED=("h200-tuned-pdl:configs/h200-tuned-pdl.json" "h200-example:configs/h200-example.json")

lib="$BUILD/runtime/libmoss_runtime.so"
[[ -e $lib ]] || { echo "build-wheel: no $lib (build the runtime first: scripts/setup.sh)" >&2; exit 1; }
[[ -x $BUILD/bin/moss-aot ]] || { echo "build-wheel: no $BUILD/bin/moss-aot (build the compiler first)" >&2; exit 1; }

python=""
for candidate in "${PYTHON:-python3}" /usr/bin/python3; do
  if "$candidate" -c "import setuptools, wheel, pip" 2>/dev/null; then python=$candidate; break; fi
done
[[ -n $python ]] || { echo "build-wheel: no python3 with setuptools, wheel and pip (apt-get install python3-setuptools python3-wheel python3-pip)" >&2; exit 1; }

# The bundle lives only while the wheel is built: left in the checkout, its
# library would shadow the build's (moss_kernels prefers a bundled one).
cleanup() { rm -rf "$BUNDLE" "$ROOT/build-wheel" "$ROOT/python/moss_kernels.egg-info"; }
trap cleanup EXIT
cleanup
mkdir -p "$BUNDLE/lib" "$BUNDLE/kernels" "$BUNDLE/whitelists"
# The library under its plain name; its SONAME (libmoss_runtime.so.<C API
# version>) travels inside the file.
cp -L "$lib" "$BUNDLE/lib/libmoss_runtime.so"
for shipped in "${SHIPPED[@]}"; do
  name=${shipped%%:*} whitelist=$ROOT/${shipped#*:}
  cp "$whitelist" "$BUNDLE/whitelists/$name.json"
  "$BUILD/bin/moss-aot" --whitelist "$BUNDLE/whitelists/$name.json" --out "$BUNDLE/kernels/$name" >/dev/null
done

mkdir -p "$OUT"
rm -f "$OUT"/moss_kernels-*.whl
(cd "$ROOT" && "$python" -m pip wheel --no-build-isolation --no-deps --quiet -w "$OUT" .)
ls "$OUT"/moss_kernels-*.whl
