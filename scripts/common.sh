# shellcheck shell=bash
# Shared by setup.sh and test.sh: install what a fresh machine lacks, then
# configure and build. Sourced, not run.
set -euo pipefail
MOSS_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
MOSS_BUILD="${MOSS_BUILD_DIR:-$MOSS_ROOT/build}"
MOSS_JOBS="${MOSS_JOBS:-$(nproc)}"

moss_install_deps() {
  local pkgs=(llvm-22-dev libmlir-22-dev mlir-22-tools llvm-22-tools
              nlohmann-json3-dev libgtest-dev ninja-build cmake g++
              python3-setuptools python3-wheel python3-pip)
  local missing=()
  for p in "${pkgs[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" \
      || missing+=("$p")
  done
  if ((${#missing[@]})); then
    echo "moss: installing ${missing[*]}"
    local sudo=""
    [[ $(id -u) -ne 0 ]] && sudo="sudo"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
  fi
}

moss_build() {
  if [[ ! -f "$MOSS_BUILD/build.ninja" ]]; then
    cmake -G Ninja -S "$MOSS_ROOT" -B "$MOSS_BUILD" -DCMAKE_BUILD_TYPE=Release \
      -DLLVM_EXTERNAL_LIT=/usr/lib/llvm-22/bin/lit >"$MOSS_BUILD.configure.log" 2>&1 \
      || { cat "$MOSS_BUILD.configure.log"; return 1; }
  fi
  cmake --build "$MOSS_BUILD" -j "$MOSS_JOBS"
}
