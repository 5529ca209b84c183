#!/usr/bin/env bash
# Copies this machine's GoogleTest and nlohmann/json (headers, static libraries,
# CMake package files) into a prefix that a GPU machine without them can use:
# the device scripts in benchmarks/ configure the runtime with
# -DCMAKE_PREFIX_PATH=.devdeps/prefix. Carry that folder to the device call.
# Usage: scripts/device-deps.sh [PREFIX]   (default: .devdeps/prefix)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PREFIX=${1:-$ROOT/.devdeps/prefix}
ARCH_LIB=lib/$(gcc -print-multiarch)

need() { [ -e "$1" ] || { echo "device-deps: $1 is missing; run scripts/setup.sh first" >&2; exit 1; }; }
need /usr/include/gtest/gtest.h
need /usr/include/nlohmann/json.hpp
need /usr/$ARCH_LIB/cmake/GTest/GTestConfig.cmake
need /usr/share/cmake/nlohmann_json/nlohmann_jsonConfig.cmake

# Build into a fresh folder and rename it into place, so an interrupted run
# never leaves a half-filled prefix that a device build would accept.
mkdir -p "$(dirname "$PREFIX")"
tmp=$(mktemp -d "$(dirname "$PREFIX")/.prefix.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/include" "$tmp/$ARCH_LIB/cmake" "$tmp/share/cmake"
cp -r /usr/include/gtest /usr/include/gmock /usr/include/nlohmann "$tmp/include/"
cp /usr/$ARCH_LIB/libgtest.a /usr/$ARCH_LIB/libgtest_main.a \
  /usr/$ARCH_LIB/libgmock.a /usr/$ARCH_LIB/libgmock_main.a "$tmp/$ARCH_LIB/"
cp -r /usr/$ARCH_LIB/cmake/GTest "$tmp/$ARCH_LIB/cmake/"
cp -r /usr/share/cmake/nlohmann_json "$tmp/share/cmake/"
rm -rf "$PREFIX"
mv "$tmp" "$PREFIX"
trap - EXIT
echo "device-deps: $PREFIX ($(du -sh "$PREFIX" | cut -f1))"
