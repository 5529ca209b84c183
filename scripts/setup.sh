#!/usr/bin/env bash
# Installs what is needed, builds moss, and runs the main job: the AOT build
# of the example whitelist into kernels_generated/.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
moss_install_deps
moss_build
cmake --build "$MOSS_BUILD" --target moss-kernels
