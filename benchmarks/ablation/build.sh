#!/usr/bin/env bash
# Compiler machine: builds the ablation kernels (README.md here). Applies
# ablate.patch to a worktree of HEAD (or $ABLATE_BASE), builds its moss-aot,
# and writes one kernels folder per variant under OUT (default .cand/ablate):
#   OUT/gemm/<variant>/  the GEMM keys of gemm-whitelist.json
#   OUT/attn/<variant>/  the example whitelist (its attention kernel is timed)
# base/ of each is built with no ablation and must be byte-identical to what
# the unpatched compiler builds (checked against build/bin/moss-aot when it
# was built from the same lib/ and include/). The worktree ($SRC) stays for
# the next run; `git worktree remove --force $SRC` drops it.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
OUT=${1:-$ROOT/.cand/ablate}
BASE=${ABLATE_BASE:-HEAD}
SRC=${ABLATE_SRC:-/tmp/moss-ablate-src}
BUILD=${ABLATE_BUILD:-/tmp/moss-ablate-build}
GEMM_VARIANTS=${GEMM_VARIANTS:-"base x w wait mma reduce store x,w xca"}
ATTN_VARIANTS=${ATTN_VARIANTS:-"base wait kv merge store kv,merge,store early"}

sha=$(git -C "$ROOT" rev-parse "$BASE")
# Reuse the worktree of an earlier run: a checkout rewrites only the patched
# files, so the compiler's build stays incremental.
if git -C "$SRC" rev-parse --git-dir >/dev/null 2>&1; then
  git -C "$SRC" checkout -q -f --detach "$sha"
  git -C "$SRC" clean -fdq
else
  rm -rf "$SRC"
  git -C "$ROOT" worktree add --detach "$SRC" "$sha" >/dev/null
fi
git -C "$SRC" apply "$HERE/ablate.patch" || {
  echo "ablate.patch does not apply to $sha: rebase it (README.md)" >&2
  exit 1
}
cmake -G Ninja -S "$SRC" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release \
  -DMOSS_BUILD_RUNTIME=OFF -DMOSS_BUILD_TESTS=OFF >"$BUILD.configure.log" 2>&1 \
  || { tail -20 "$BUILD.configure.log"; exit 1; }
cmake --build "$BUILD" --target moss-aot >"$BUILD.log" 2>&1 || { tail -30 "$BUILD.log"; exit 1; }
AOT=$BUILD/bin/moss-aot

build_variants() { # family env whitelist variants...
  local family=$1 env=$2 wl=$3
  shift 3
  for v in "$@"; do
    local dir=$OUT/$family/${v//,/-} value=$v
    [[ $v == base ]] && value=""
    rm -rf "$dir"
    env "$env=$value" "$AOT" --whitelist "$wl" --out "$dir" >"$dir.log" 2>&1 \
      || { cat "$dir.log"; exit 1; }
    cp "$wl" "$dir/whitelist.json"
    echo "$family/${v//,/-}: $(ls "$dir"/*.cubin | wc -l) cubins"
  done
}
mkdir -p "$OUT/gemm" "$OUT/attn"
build_variants gemm MOSS_GEMM_ABLATE "$HERE/gemm-whitelist.json" $GEMM_VARIANTS
build_variants attn MOSS_ATTN_ABLATE "$ROOT/configs/h200-example.json" $ATTN_VARIANTS

# base/ against the unpatched compiler.
if [[ -x $ROOT/build/bin/moss-aot ]] && git -C "$ROOT" diff --quiet "$sha" -- lib include; then
  for family in gemm attn; do
    wl=$HERE/gemm-whitelist.json
    [[ $family == attn ]] && wl=$ROOT/configs/h200-example.json
    ref=$OUT/$family/unpatched
    rm -rf "$ref"
    "$ROOT/build/bin/moss-aot" --whitelist "$wl" --out "$ref" >"$ref.log" 2>&1
    for f in "$ref"/*.cubin; do
      cmp -s "$f" "$OUT/$family/base/$(basename "$f")" \
        || { echo "$family/base/$(basename "$f") differs from the unpatched build" >&2; exit 1; }
    done
    rm -rf "$ref" "$ref.log"
    echo "$family/base: byte-identical to the unpatched compiler's cubins"
  done
else
  echo "warning: base/ not compared (build/bin/moss-aot missing or lib/ differs from $sha)" >&2
fi
echo "ablation kernels in $OUT ($(du -sh "$OUT" | cut -f1))"
