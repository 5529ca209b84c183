#!/usr/bin/env python3
"""Builds a whitelist from moss-bench results of candidate tile families.

For every key, keeps the candidate with the lowest hot + cold time, and only
if it is more than 5 % faster than the fallback (cuBLASLt + exact epilogue)
both hot and cold and within the accuracy bound; other keys stay on the
fallback. Prints a Markdown table of the choice.

Usage: select_whitelist.py OUT.json CANDIDATE_WHITELIST_DIR BENCH.json...
(each BENCH file is named bench-<family>.json after its whitelist <family>.json)
"""
import json
import sys
from pathlib import Path

MARGIN = 0.95
TOLERANCE = 0.004


def main(out_path, wl_dir, bench_paths):
    families = {}
    for path in bench_paths:
        family = Path(path).stem.removeprefix("bench-")
        results = json.loads(Path(path).read_text())["results"]
        tiles = json.loads((Path(wl_dir) / f"{family}.json").read_text())
        families[family] = (tiles, {(r["m"], r["n"], r["k"], r["mode"]): r
                                    for r in results})
    keys = sorted({k for _, rs in families.values() for k in rs},
                  key=lambda k: (k[3], k[1], k[2], k[0]))
    chosen = {}
    print("| M,N,K,mode | tile | generated hot / cold µs | fallback hot / cold µs | kept |")
    print("|---|---|---|---|---|")
    for key in keys:
        text = ",".join(map(str, key))
        best = None
        for family, (tiles, results) in families.items():
            r = results.get(key)
            if not r or r["generated"]["error"] or r["fallback"]["error"]:
                continue
            g = r["generated"]
            if g["rel_l2"] is None or g["rel_l2"] >= TOLERANCE:
                continue
            score = g["hot_us"] + g["cold_us"]
            if best is None or score < best[0]:
                best = (score, family, r)
        if best is None:
            continue
        _, family, r = best
        g, fb = r["generated"], r["fallback"]
        keep = (g["hot_us"] < MARGIN * fb["hot_us"]
                and g["cold_us"] < MARGIN * fb["cold_us"])
        tile = families[family][0][text]
        if keep:
            chosen[text] = tile
        print(f"| {text} | {tile} | {g['hot_us']:.2f} / {g['cold_us']:.2f} | "
              f"{fb['hot_us']:.2f} / {fb['cold_us']:.2f} | {'yes' if keep else 'no (fallback)'} |")
    lines = ",\n".join(f'  "{k}": {json.dumps(v)}'
                       for k, v in chosen.items())
    Path(out_path).write_text("{\n" + lines + "\n}\n")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3:])
