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


# name -> (bn, bk, split for K >= 3072, largest bm)
FAMILIES = {
    "bn16_bk64": (16, 64, 4, 64),
    "bn16_bk128": (16, 128, 2, 32),
    "bn32_bk64": (32, 64, 2, 64),
    "bn64_bk64": (64, 64, 4, 64),
    # More rows of x: several CTAs along M instead of wider m tiles.
    "bn16_bk64_bm8": (16, 64, 4, 8),
    "bn16_bk64_bm16": (16, 64, 4, 16),
    "bn32_bk64_bm16": (32, 64, 2, 16),
    "bn16_bk128_bm16": (16, 128, 2, 16),
}


def main(out_dir):
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    for name, (bn, bk, big_k_split, bm_cap) in FAMILIES.items():
        table = {}
        for n, k, mode in SHAPES:
            split = big_k_split if k >= 3072 else 1
            for m in MS:
                table[f"{m},{n},{k},{mode}"] = [bm_for(m, bm_cap), bn, bk, split]
        (out / f"{name}.json").write_text(json.dumps(table, indent=1) + "\n")
        print(out / f"{name}.json")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "candidates")
