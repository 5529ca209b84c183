#!/usr/bin/env python3
"""Writes candidate whitelists for the decoder's FFN GEMMs, one tile family
per file, so moss-bench can time each family against the fallback and the
fastest legal tile per key can be kept (see benchmarks/README.md)."""
import json
import sys
from pathlib import Path

SHAPES = [(3072, 768, 1), (5120, 1280, 1), (768, 3072, 2), (1280, 5120, 2)]
MS = [1, 2, 4, 8, 15, 16, 30, 32, 64]


def bm_for(m, cap):
    bm = 8
    while bm < m and bm < cap:
        bm *= 2
    return bm


BIG_M = [30, 32, 64]
MID_M = [15, 16, 30, 32, 64]

# name -> (bn, bk, split for K < 3072, split for K >= 3072, largest bm, Ms)
FAMILIES = {
    "bn16_bk64": (16, 64, 1, 4, 64, MS),
    "bn16_bk128": (16, 128, 1, 2, 32, MS),
    "bn32_bk64": (32, 64, 1, 2, 64, MS),
    "bn64_bk64": (64, 64, 1, 4, 64, MS),
    # More rows of x: several CTAs along M instead of wider m tiles.
    "bn16_bk64_bm8": (16, 64, 1, 4, 8, MS),
    "bn16_bk64_bm16": (16, 64, 1, 4, 16, MS),
    "bn32_bk64_bm16": (32, 64, 1, 2, 16, MS),
    "bn16_bk128_bm16": (16, 128, 1, 2, 16, MS),
    # Larger M: fewer CTAs re-reading x, K split across CTAs instead.
    "bn64_bk64_s2": (64, 64, 2, 4, 32, BIG_M),
    "bn64_bk64_s4": (64, 64, 4, 8, 32, BIG_M),
    "bn32_bk64_s2": (32, 64, 2, 4, 32, BIG_M),
    "bn128_bk64_s4": (128, 64, 4, 8, 16, BIG_M),
    # Shorter k blocks: more warps share a CTA's K range.
    "bn16_bk32": (16, 32, 1, 4, 64, MID_M),
    "bn32_bk32": (32, 32, 1, 2, 64, MID_M),
    "bn16_bk32_bm16": (16, 32, 1, 4, 16, MID_M),
    "bn32_bk32_bm32": (32, 32, 1, 2, 32, MID_M),
}

# Split-K reduced inside the kernel (2026-12-03): the second launch is gone,
# so wide m tiles can split K to keep enough CTAs and short x re-reads.
SPLIT_M = [15, 16, 30, 32, 64]
SPLIT_FAMILIES = {
    "sk_bn16_bk64_s2s4_bm32": (16, 64, 2, 4, 32, SPLIT_M),
    "sk_bn16_bk64_s4s8_bm64": (16, 64, 4, 8, 64, SPLIT_M),
    "sk_bn32_bk64_s2s4_bm32": (32, 64, 2, 4, 32, SPLIT_M),
    "sk_bn32_bk64_s2s4_bm64": (32, 64, 2, 4, 64, SPLIT_M),
    "sk_bn32_bk32_s4s8_bm64": (32, 32, 4, 8, 64, SPLIT_M),
    "sk_bn64_bk64_s2s4_bm64": (64, 64, 2, 4, 64, SPLIT_M),
    "sk_bn64_bk32_s4s8_bm64": (64, 32, 4, 8, 64, SPLIT_M),
    "sk_bn128_bk32_s4s8_bm32": (128, 32, 4, 8, 32, SPLIT_M),
}


# Explicit per-key alternatives around the split-K tiles chosen from the
# families above (2026-12-03): split 2/4/8, wider bn, longer bk, bm 16 x 2.
DOWN = [(768, 3072, 2), (1280, 5120, 2)]
def _explicit(small, mid, m30_768, m64_768):
    table = {}
    for n, k, mode in DOWN:
        for m in (1, 2, 4, 8):
            table[(m, n, k, mode)] = small
        for m in (15, 16):
            table[(m, n, k, mode)] = mid
    table[(30, 768, 3072, 2)] = table[(32, 768, 3072, 2)] = m30_768
    table[(64, 768, 3072, 2)] = m64_768
    return table
EXPLICIT_FAMILIES = {
    "skx_s8": _explicit([8, 16, 64, 8], [16, 32, 64, 8], [32, 32, 64, 8], [64, 32, 64, 8]),
    "skx_bn_wide": _explicit([8, 32, 64, 4], [16, 64, 64, 4], [32, 64, 64, 4], [64, 64, 64, 4]),
    "skx_bk128": _explicit([8, 16, 128, 4], [16, 32, 128, 4], [16, 32, 64, 4], [64, 16, 64, 4]),
    "skx_s2": _explicit([8, 16, 64, 2], [16, 16, 64, 4], [32, 16, 64, 8], [64, 32, 32, 8]),
}


def legal(m, n, k, bm, bn, bk, split):
    """The tile rule of docs/kernel-abi.md (moss::config::deriveGemmLaunch
    and checkSplitRows), so a family skips keys its tile cannot serve."""
    if k % (bk * split) or n % bn or bk * split > k:
        return False
    warps_n = bn // 16
    k_blocks = k // (bk * split)
    warps_k = min(k_blocks, max(1, 8 // warps_n))
    bm8 = 8 * -(-bm // 8)
    if warps_n * warps_k > 16 or warps_k * bm8 * bn * 4 > 48 * 1024:
        return False
    if (bk // 32) * (2 + -(-bm // 8)) > 32:
        return False
    return split == 1 or (n // bn) * -(-m // bm) <= 16384


def main(out_dir, only=None):
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    families = {**FAMILIES, **SPLIT_FAMILIES}
    for name, (bn, bk, small_k_split, big_k_split, bm_cap, ms) in families.items():
        if only and name not in only:
            continue
        table = {}
        for n, k, mode in SHAPES:
            split = big_k_split if k >= 3072 else small_k_split
            for m in ms:
                tile = [bm_for(m, bm_cap), bn, bk, split]
                if legal(m, n, k, *tile):
                    table[f"{m},{n},{k},{mode}"] = tile
        (out / f"{name}.json").write_text(json.dumps(table, indent=1) + "\n")
        print(out / f"{name}.json")
    for name, tiles in EXPLICIT_FAMILIES.items():
        if only and name not in only:
            continue
        table = {f"{m},{n},{k},{mode}": tile
                 for (m, n, k, mode), tile in tiles.items()
                 if legal(m, n, k, *tile)}
        (out / f"{name}.json").write_text(json.dumps(table, indent=1) + "\n")
        print(out / f"{name}.json")


if __name__ == "__main__":
    # make_candidates.py [OUT_DIR [FAMILY...]]: all families unless named.
    main(sys.argv[1] if len(sys.argv) > 1 else "candidates", set(sys.argv[2:]))
