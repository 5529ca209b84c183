#!/usr/bin/env bash
# Builds moss and runs every test: lit (compiler), ctest (unit and GPU
# tests; GPU tests report themselves skipped without a GPU), the PTX digests
# of every shipped kernel (scripts/check-ptx-digests.sh), the Python tests
# (skipped, with a line saying so, without pytest and torch) and the wheel's
# build and contents (scripts/build-wheel.sh, scripts/check-wheel.py).
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
moss_install_deps
moss_build
status=0
/usr/lib/llvm-22/bin/lit -sv "$MOSS_BUILD/test" || status=1
ctest --test-dir "$MOSS_BUILD" --output-on-failure || status=1
"$MOSS_ROOT/scripts/check-ptx-digests.sh" || status=1
"$MOSS_ROOT/scripts/test-python.sh" || status=1
# The wheel: built from this build and checked without installing it.
if [[ -e $MOSS_BUILD/runtime/libmoss_runtime.so ]]; then
  "$MOSS_ROOT/scripts/build-wheel.sh" "$MOSS_BUILD/dist" \
    && "$MOSS_ROOT/scripts/check-wheel.py" "$MOSS_BUILD"/dist/moss_kernels-*.whl || status=1
else
  echo "skipped: wheel (this build has no runtime: no CUDA toolkit)"
fi
exit $status
