#!/usr/bin/env python3
"""Tables of run.sh's timings: each variant beside base/, mean of the rounds
(with the largest round-to-round spread), and the difference from base.
Usage: summarize.py gemm|attn DIR  (DIR holds <variant>-r<round>.json)."""
import glob
import json
import os
import re
import statistics
import sys


def load(directory):
    runs = {}  # variant -> [json of each round]
    for path in sorted(glob.glob(os.path.join(directory, "*-r*.json"))):
        match = re.match(r"(.+)-r(\d+)\.json$", os.path.basename(path))
        with open(path) as f:
            runs.setdefault(match.group(1), []).append(json.load(f))
    if "base" not in runs:
        sys.exit(f"summarize: no base-r*.json in {directory}")
    return runs


def order(variants):
    return ["base"] + sorted(v for v in variants if v != "base")


def cell(values, base=None):
    values = [v for v in values if v is not None]
    if not values:
        return "-"
    mean = statistics.mean(values)
    text = f"{mean:.2f}"
    if len(values) > 1:
        text += f" ±{(max(values) - min(values)) / 2:.2f}"
    if base is not None:
        text += f" ({mean - base:+.2f})"
    return text


def mean_of(values):
    values = [v for v in values if v is not None]
    return statistics.mean(values) if values else None


def occupancy(row):
    """CTAs, CTAs an SM holds, waves (moss-bench's CTAs/SM/w), when known."""
    if row.get("ctas") is None:
        return "occupancy unknown"
    return f"{row['ctas']} CTAs, {row['ctas_per_sm']}/SM, {row['waves']} wave(s)"


def gemm(runs):
    columns = [("generated", "hot_us", "plain hot"),
               ("generated", "cold_us", "plain cold"),
               ("generated_pdl", "hot_us", "PDL hot"),
               ("generated_pdl", "cold_us", "PDL cold")]
    keys = []
    for result in runs["base"][0]["results"]:
        if result["selected"]:
            keys.append((result["m"], result["n"], result["k"], result["mode"]))
    print("# GEMM ablation (us per call; mean of rounds ±half-range "
          "(difference from base))\n")
    for key in keys:
        first = next(r for r in runs["base"][0]["results"]
                     if (r["m"], r["n"], r["k"], r["mode"]) == key)
        print(f"## {','.join(map(str, key))} ({occupancy(first)})\n")
        print("| variant | " + " | ".join(c[2] for c in columns) +
              " | fallback hot |")
        print("|---" * (len(columns) + 2) + "|")
        base_means = None
        for variant in order(runs):
            rows = [next(r for r in run["results"]
                         if (r["m"], r["n"], r["k"], r["mode"]) == key)
                    for run in runs[variant]]
            series = [[row[kind][field] for row in rows]
                      for kind, field, _ in columns]
            if variant == "base":
                base_means = [mean_of(s) for s in series]
            cells = [cell(s, None if variant == "base" else b)
                     for s, b in zip(series, base_means)]
            fallback = cell([row["fallback"]["hot_us"] for row in rows])
            print(f"| {variant} | " + " | ".join(cells) + f" | {fallback} |")
        print()


def attn(runs):
    columns = [("bthd_us", "plain"), ("bthd_pdl_us", "PDL")]
    cases = [(r["H"], r["S"], r["T"], r["B"]) for r in runs["base"][0]["results"]]
    variants = order(runs)
    for field, title in columns:
        print(f"# Attention ablation, {title} launch (us per call; mean of "
              "rounds ±half-range (difference from base))\n")
        print("| H:S:T:B | launch | " + " | ".join(variants) + " |")
        print("|---" * (len(variants) + 2) + "|")
        for case in cases:
            base_rows = [next(r for r in run["results"]
                              if (r["H"], r["S"], r["T"], r["B"]) == case)
                         for run in runs["base"]]
            launch = (f"{base_rows[0]['splits']}x{base_rows[0]['kv_groups']}, "
                      f"{occupancy(base_rows[0])}")
            base = mean_of([r[field] for r in base_rows])
            cells = []
            for variant in variants:
                rows = [next(r for r in run["results"]
                             if (r["H"], r["S"], r["T"], r["B"]) == case)
                        for run in runs[variant]]
                cells.append(cell([r[field] for r in rows],
                                  None if variant == "base" else base))
            print(f"| {':'.join(map(str, case))} | {launch} | " +
                  " | ".join(cells) + " |")
        print()


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] not in ("gemm", "attn"):
        sys.exit(__doc__)
    {"gemm": gemm, "attn": attn}[sys.argv[1]](load(sys.argv[2]))
