"""GEMM timeline probe (diagnostic, never lands): kernels built with
`moss-aot --moss-gemm-probe` store, from thread 0 of each CTA, %clock stamps
(int32 slots 0..12) and %globaltimer (int64 at int32 slots 20, 22, 24: entry,
after griddepcontrol.wait, end) into x row m + CTA index. Eight calls per CUDA
graph, programmatic launches (MOSS_CODEC_GEMM_PDL=1), hot weights; calls
cycle through three padded x buffers, so calls 5 and 6 (which has a
successor, as in steady state) keep their stamps.
Usage: python3 probe_gemm.py WHITELIST
"""
import json, math, os, statistics as st, sys

sys.path.insert(0, "python")
import numpy as np
import torch
from moss_kernels import ops

NAMES = {1: "armed", 2: "W issued", 3: "wait done", 4: "x issued", 5: "stage0 ready",
         6: "last stage ready", 7: "MMAs done", 8: "partials summed", 9: "cluster wait",
         10: "pushed", 11: "received", 12: "stored"}

def stamps(buf, m, ctas):
    raw = buf[m:m + ctas].contiguous().view(torch.int32).cpu().numpy().astype(np.int64) & 0xFFFFFFFF
    timer = lambda w, s: int(w[s] | (w[s + 1] << 32))
    return [dict(clk={i: int(w[i]) for i in range(13)}, t0=timer(w, 20), twait=timer(w, 22),
                 tend=timer(w, 24)) for w in raw]

def main():
    wl = json.load(open(sys.argv[1]))
    torch.manual_seed(0)
    dev = torch.device("cuda")
    out = {}
    for key, tile in wl.items():
        m, n, k, mode = map(int, key.split(","))
        bm, bn, bk, split = tile
        ctas = (n // bn) * math.ceil(m / bm) * split
        pad = m + ctas + 8
        xa = (torch.randn(pad, k, device=dev) * 0.5).to(torch.bfloat16)
        xb, xc = xa.clone(), xa.clone()
        w = (torch.randn(n, k, device=dev) * 0.05).to(torch.bfloat16)
        scale = (torch.rand(n, device=dev) * 0.1).to(torch.bfloat16) if mode == 2 else None
        res = torch.randn(m, n, device=dev).to(torch.bfloat16) if mode == 2 else None
        call = lambda x: ops.ffn_gemm(x[:m], w, scale, res, mode)
        for _ in range(3):
            call(xa); call(xb)
        torch.cuda.synchronize()
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            for _ in range(3):
                call(xa)
        torch.cuda.current_stream().wait_stream(s)
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            outs = [call((xa, xb, xc)[i % 3]) for i in range(8)]
        for _ in range(3):
            g.replay()
        torch.cuda.synchronize()
        times = []
        for _ in range(5):
            e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            e0.record()
            for _ in range(20):
                g.replay()
            e1.record()
            torch.cuda.synchronize()
            times.append(e0.elapsed_time(e1) * 1000 / 160)
        xa[m:].zero_(); xb[m:].zero_(); xc[m:].zero_()
        torch.cuda.synchronize()
        g.replay()
        torch.cuda.synchronize()
        # Call 6 (xa), which has a successor, after call 5 (xc).
        prev, last = stamps(xc, m, ctas), stamps(xa, m, ctas)
        cyc = sum((c["clk"][12] - c["clk"][0]) & 0xFFFFFFFF for c in last)
        ns = sum(c["tend"] - c["t0"] for c in last)
        ghz = cyc / ns if ns > 0 else 1.98
        prev_end = max(c["tend"] for c in prev)
        rows = {}
        for i, name in NAMES.items():
            vals = [((c["clk"][i] - c["clk"][0]) & 0xFFFFFFFF) / ghz for c in last if c["clk"][i]]
            if vals:
                rows[name] = (min(vals), st.median(vals), max(vals))
        rel = lambda f: [f(c) for c in last]
        entry = rel(lambda c: c["t0"] - prev_end)
        wait = rel(lambda c: c["twait"] - prev_end)
        end = rel(lambda c: c["tend"] - prev_end)
        print(f"== {key} tile {tile}: {ctas} CTAs, {st.median(times):.2f} us per call "
              f"(median of 5 x 20 replays x 8 calls), clock {ghz:.2f} GHz")
        print(f"   vs the previous call's last CTA end (globaltimer ns): entry min/med/max "
              f"{min(entry)}/{int(st.median(entry))}/{max(entry)}, wait done {min(wait)}/"
              f"{int(st.median(wait))}/{max(wait)}, end {min(end)}/{int(st.median(end))}/{max(end)}")
        print("   since this CTA's entry (ns, min / median / max over CTAs):")
        for name, (lo, med, hi) in rows.items():
            print(f"     {name:18s} {lo:7.0f} {med:7.0f} {hi:7.0f}")
        # Absolute times (ns after the previous call's last CTA end): this
        # CTA's globaltimer after the wait plus its clock since the wait.
        absolute = []
        for c in last:
            row = {}
            for i, name in NAMES.items():
                if c["clk"][i] and i >= 3:
                    row[name] = c["twait"] - prev_end + ((c["clk"][i] - c["clk"][3]) & 0xFFFFFFFF) / ghz
            absolute.append(row)
        gx = n // bn
        print(f"   absolute (ns after the previous call's last CTA end, min / median / max over CTAs):")
        for name in NAMES.values():
            vals = [r[name] for r in absolute if name in r]
            if vals:
                print(f"     {name:18s} {min(vals):7.0f} {st.median(vals):7.0f} {max(vals):7.0f}")
        if split > 1:
            transit, skew = [], []
            for cluster in range(ctas // split):
                ranks = [absolute[z * gx * math.ceil(m / bm) + cluster] for z in range(split)]
                pushed = [r["pushed"] for r in ranks]
                skew.append(max(pushed) - min(pushed))
                for z, r in enumerate(ranks):
                    others = max(p for j, p in enumerate(pushed) if j != z)
                    transit.append(r["received"] - max(others, r["pushed"]))
            print(f"   split-K: pushed skew within a cluster min/med/max {min(skew):.0f}/{st.median(skew):.0f}/"
                  f"{max(skew):.0f} ns; received - max(own, partners' pushed) {min(transit):.0f}/"
                  f"{st.median(transit):.0f}/{max(transit):.0f} ns")
        out[key] = dict(tile=tile, ctas=ctas, us=st.median(times), ghz=ghz, entry=entry, wait=wait,
                        end=end, stages={k2: list(v) for k2, v in rows.items()}, absolute=absolute,
                        raw_last=last, raw_prev=prev)
    if len(sys.argv) > 2:
        json.dump(out, open(sys.argv[2], "w"), indent=1)

main()
