#!/usr/bin/env bash
# Builds moss and runs every test: lit (compiler), ctest (unit and GPU
# tests; GPU tests report themselves skipped without a GPU), the PTX digests
# of every shipped kernel (scripts/check-ptx-digests.sh) and the Python tests
# (skipped, with a line saying so, without pytest and torch).
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
moss_install_deps
moss_build
status=0
/usr/lib/llvm-22/bin/lit -sv "$MOSS_BUILD/test" || status=1
ctest --test-dir "$MOSS_BUILD" --output-on-failure || status=1
"$MOSS_ROOT/scripts/check-ptx-digests.sh" || status=1
"$MOSS_ROOT/scripts/test-python.sh" || status=1
exit $status
