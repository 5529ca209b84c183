#!/usr/bin/env python3
"""Issue 6's targets against moss-bench JSON: which are met, by how much.

Usage: targets.py BENCH.json [BENCH.json ...]
  A GEMM run (moss-bench --json, a whitelist of the decoder's keys) and/or an
  attention run (moss-bench --attention --json). Prints a Markdown table per
  run and a summary line; exit 0 whatever is missed (it reports, it does not
  gate).

Targets (H200, protocol of DEVELOPERS.md, us per call, M = 1..32):
  3072 x 768 GELU: hot <= 2.4, cold <= 3.6.
  768 x 3072 LayerScale: hot <= 2.6, cold <= 3.8.
  5120 x 1280 GELU, 1280 x 5120 LayerScale: >= 1.6x the fallback (cuBLASLt +
    exact epilogue, same run), hot and cold.
  M = 64: no slower than the fallback, hot and cold.
  LayerNorm modes (3 layernorm, 4 layernorm_gelu): >= 1.6x the fallback
    (LayerNorm kernel, cuBLASLt and the exact epilogue, same run).
  Attention: T = 1 <= 3.0 us; T <= 32 >= 2x the upstream landmark; T >= 60
    >= 1.6x it (cases with a landmark). Accuracy gates every target: GEMM
    rel. L2 < 0.004, attention <= 3e-3.
A generated kernel counts with either launch (plain or programmatic); the
table says which met it.
"""
import json
import sys

ABSOLUTE = {(3072, 768, 1): (2.4, 3.6), (768, 3072, 2): (2.6, 3.8)}
RATIO = {(5120, 1280, 1): 1.6, (1280, 5120, 2): 1.6}
LAYERNORM_MODES, LAYERNORM_RATIO = (3, 4), 1.6


def ratio_of(shape):
    """The fallback speed-up a shape (n, k, mode) must reach, or None."""
    if shape[2] in LAYERNORM_MODES:
        return LAYERNORM_RATIO
    return RATIO.get(shape)
GEMM_TOL, ATTN_TOL = 0.004, 3e-3


def fmt(value):
    return "-" if value is None or value < 0 else f"{value:.2f}"


def measured(m):
    """(hot, cold) of a measurement, None when missing or inaccurate."""
    if not m or m.get("error") or m.get("hot_us") is None:
        return None
    rel = m.get("rel_l2")
    if rel is None or rel >= GEMM_TOL:
        return None
    return m["hot_us"], m["cold_us"]


def gemm_verdict(shape, m, times, fallback):
    """True/False for a (hot, cold) pair against the key's target."""
    if times is None:
        return False
    hot, cold = times
    if m == 64:
        return fallback is not None and hot <= fallback[0] and cold <= fallback[1]
    if shape in ABSOLUTE:
        hot_max, cold_max = ABSOLUTE[shape]
        return hot <= hot_max and cold <= cold_max
    if ratio_of(shape) and fallback is not None:
        need = ratio_of(shape)
        return fallback[0] / hot >= need and fallback[1] / cold >= need
    return False


def target_text(shape, m):
    if m == 64:
        return "<= fallback"
    if shape in ABSOLUTE:
        return "<= {} / {}".format(*ABSOLUTE[shape])
    return f">= {ratio_of(shape)}x fallback" if ratio_of(shape) else "-"


def gemm_table(run):
    print(f"## GEMM ({run.get('gpu')}, {run.get('date')}, whitelist "
          f"{run.get('whitelist')})\n")
    print("| M,N,K,mode | target | plain hot / cold | PDL hot / cold | "
          "fallback hot / cold | fallback / best (hot, cold) | met |")
    print("|---|---|---|---|---|---|---|")
    met = missed = 0
    rows = sorted(run["results"],
                  key=lambda r: (r["mode"], r["n"], r["k"], r["m"]))
    for r in rows:
        shape, m = (r["n"], r["k"], r["mode"]), r["m"]
        if m > 32 and m != 64 or (shape not in ABSOLUTE and not ratio_of(shape)):
            continue
        fallback = measured(r.get("fallback"))
        plain = measured(r.get("generated")) if r.get("selected") else None
        pdl = measured(r.get("generated_pdl")) if r.get("selected") else None
        launches = [name for name, t in (("plain", plain), ("PDL", pdl))
                    if gemm_verdict(shape, m, t, fallback)]
        if m == 64 and not r.get("selected"):
            launches = ["fallback runs"]
        ok = bool(launches)
        met += ok
        missed += not ok
        best = min((t for t in (plain, pdl) if t), default=None,
                   key=lambda t: t[0] + t[1])
        ratio = (f"{fallback[0] / best[0]:.2f}x, {fallback[1] / best[1]:.2f}x"
                 if best and fallback else "-")
        pair = lambda t: f"{fmt(t[0])} / {fmt(t[1])}" if t else "-"
        print(f"| {m},{r['n']},{r['k']},{r['mode']} | {target_text(shape, m)} "
              f"| {pair(plain)} | {pair(pdl)} | {pair(fallback)} | {ratio} | "
              f"{'met (' + ', '.join(launches) + ')' if ok else 'missed'} |")
    print(f"\nGEMM: {met} met, {missed} missed\n")
    return met, missed


def attention_table(run):
    print(f"## Attention ({run.get('gpu')}, {run.get('date')})\n")
    print("| H:S:T:B | target | bthd | bthd+PDL | positions | upstream | upstream / best | "
          "met |")
    print("|---|---|---|---|---|---|---|---|")
    met = missed = 0
    for r in run["results"]:
        t, up = r["T"], r.get("upstream_us")
        times = [(name, r.get(key)) for name, key in
                 (("plain", "bthd_us"), ("PDL", "bthd_pdl_us"))
                 if r.get(key) is not None and r.get(key) > 0]
        accurate = (r.get("error") is None and r.get("rel_l2_bthd") is not None
                    and 0 <= r["rel_l2_bthd"] <= ATTN_TOL)
        if t == 1:
            target, check = "<= 3.0 us", lambda us: us <= 3.0
        elif up and up > 0:
            need = 2.0 if t <= 32 else 1.6
            target, check = f">= {need}x upstream", lambda us: up / us >= need
        else:
            continue  # no target for this case
        launches = [name for name, us in times if accurate and check(us)]
        ok = bool(launches)
        met += ok
        missed += not ok
        best = min((us for _, us in times), default=None)
        ratio = f"{up / best:.2f}x" if up and best else "-"
        print(f"| {r['H']}:{r['S']}:{t}:{r['B']} | {target} | "
              f"{fmt(r.get('bthd_us'))} | {fmt(r.get('bthd_pdl_us'))} | "
              f"{fmt(r.get('bthd_positions_us'))} | {fmt(up)} | {ratio} | "
              f"{'met (' + ', '.join(launches) + ')' if ok else 'missed'} |")
    print(f"\nAttention: {met} met, {missed} missed\n")
    return met, missed


def main(paths):
    if not paths:
        sys.exit(__doc__)
    for path in paths:
        with open(path) as f:
            run = json.load(f)
        if run.get("benchmark") == "attention":
            attention_table(run)
        else:
            gemm_table(run)


if __name__ == "__main__":
    main(sys.argv[1:])
