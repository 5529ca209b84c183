#!/usr/bin/env bash
# The safety net of kernel-code refactors: rebuilds every kernel that the
# whitelists in configs/ produce (and the attention kernel, which every build
# has) with moss-aot, and compares the sha256 of each kernel's PTX with
# scripts/ptx-digests.txt. A change that means to leave the kernels as they
# are proves it here; one that changes a kernel on purpose records the new
# digests with --update and says why in its commit.
#
#   scripts/check-ptx-digests.sh            compare (exit 1 on a difference)
#   scripts/check-ptx-digests.sh --update   rewrite scripts/ptx-digests.txt
#
# Needs a built moss-aot (MOSS_BUILD_DIR, default build/) and the CUDA
# toolkit's ptxas; without ptxas it says so and exits 0 (skipped).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${MOSS_BUILD_DIR:-$ROOT/build}"
DIGESTS="$ROOT/scripts/ptx-digests.txt"
AOT="$BUILD/bin/moss-aot"
CUDA="${MOSS_CUDA_PATH:-/usr/local/cuda}"

update=0
case "${1:-}" in
  --update) update=1 ;;
  "") ;;
  *) echo "usage: $0 [--update]" >&2; exit 2 ;;
esac
if [[ ! -x "$CUDA/bin/ptxas" ]]; then
  echo "skipped: PTX digests: no ptxas under $CUDA (set MOSS_CUDA_PATH)"
  exit 0
fi
[[ -x "$AOT" ]] || { echo "error: no moss-aot at $AOT: build moss first" >&2; exit 2; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# One build per whitelist, two at a time; each writes only its own folder.
pids=()
for wl in "$ROOT"/configs/*.json; do
  name=$(basename "$wl" .json)
  "$AOT" --whitelist "$wl" --out "$work/$name" --cuda-path "$CUDA" \
    >"$work/$name.log" 2>&1 &
  pids+=($!)
  if ((${#pids[@]} >= 2)); then
    wait "${pids[0]}" || { cat "$work"/*.log >&2; exit 2; }
    pids=("${pids[@]:1}")
  fi
done
for pid in "${pids[@]}"; do wait "$pid" || { cat "$work"/*.log >&2; exit 2; }; done

# "<sha256 of the PTX>  <kernel>", one line a kernel; the file name is
# "<kernel>.<12 hex digits of the cubin's sha256>.ptx".
for ptx in "$work"/*/*.ptx; do
  file=$(basename "$ptx")
  echo "$(sha256sum <"$ptx" | cut -d' ' -f1)  ${file%.*.ptx}"
done | sort -k2 -u >"$work/digests"
# One kernel name must have one PTX whichever whitelist built it.
if [[ $(cut -d' ' -f3 "$work/digests" | uniq -d | wc -l) -ne 0 ]]; then
  echo "error: a kernel built from two whitelists gave two PTX texts:" >&2
  cut -d' ' -f3 "$work/digests" | uniq -d >&2
  exit 1
fi

if ((update)); then
  cp "$work/digests" "$DIGESTS"
  echo "wrote $DIGESTS ($(wc -l <"$DIGESTS") kernels)"
  exit 0
fi
if ! diff -u "$DIGESTS" "$work/digests"; then
  echo "FAILED: PTX digests differ from scripts/ptx-digests.txt (above: - recorded, + built)" >&2
  exit 1
fi
echo "PTX digests: $(wc -l <"$DIGESTS") kernels unchanged"
