"""Attention timeline probe (diagnostic, never lands): kernels built with
`moss-aot --moss-attention-probe` store, from lane 0 of every warp, %clock
stamps (int32 slots) and %globaltimer (int64 at int32 slots 40, 42, 44:
entry, after griddepcontrol.wait, end) into 64 int32 a warp past the output's
B*T*H*64 elements. Slots: 0 entry, 1 wait done, 2 prologue done (trip 0
issued, mask bits of trips 0 and 1), per trip k (k >= 7 share trip 7's):
4+4k trip landed, 5+4k trip barrier passed and trip k+1 issued, 6+4k tile
computed, 7+4k mask of trip k+2 packed; 36 loop done, 37 groups merged, 38
stored. Eight calls per CUDA graph cycling three output buffers, so call 6
(which has a successor, as in steady state) keeps its stamps and call 5's
tell when the previous call ended.
Usage: python3 probe_attention.py H:S:T:B[,H:S:T:B...] OUT.json
"""
import json, math, statistics as st, sys

sys.path.insert(0, "python")
import numpy as np
import torch
from moss_kernels import _capi
from moss_kernels.runtime import load_runtime

D = 64
STEPS = {0: "entry", 1: "wait done", 2: "prologue done"}
for k in range(8):
    STEPS.update({4 + 4 * k: f"t{k} landed", 5 + 4 * k: f"t{k} barrier+next",
                  6 + 4 * k: f"t{k} computed", 7 + 4 * k: f"t{k} mask+2"})
STEPS.update({36: "loop done", 37: "groups merged", 38: "stored"})


def ring_mask(b, t, s, gen):
    """moss-bench's full-window ring mask: query t sees positions (t, S + t]."""
    mask = torch.zeros(b, 1, t, s, dtype=torch.bool)
    newest = s + t - 1
    for bi in range(b):
        roll = int(torch.randint(s, (1,), generator=gen))
        slot = torch.arange(s)
        base = (slot - roll) % s
        pos = newest - (newest - base) % s
        rows = torch.arange(t).unsqueeze(1)
        mask[bi, 0] = (pos.unsqueeze(0) <= s + rows) & (pos.unsqueeze(0) > rows)
    return mask


def read(buf, out_elems, warps):
    raw = buf[out_elems:out_elems + warps * 128].contiguous().view(torch.int32)
    raw = raw.view(warps, 64).cpu().numpy().astype(np.int64) & 0xFFFFFFFF
    timer = lambda w, s: int(w[s] | (w[s + 1] << 32))
    rows = []
    for w in raw:
        if timer(w, 40) == 0:
            continue  # no such warp in this launch
        rows.append(dict(clk={i: int(w[i]) for i in STEPS if w[i] or i == 0}, t0=timer(w, 40),
                         twait=timer(w, 42), tend=timer(w, 44)))
    return rows


def probe(h, s, t, b, gen):
    dev = torch.device("cuda")
    q = (torch.rand(b, h, t, D, generator=gen) * 4 - 2).to(torch.bfloat16).to(dev)
    k = (torch.rand(b, h, s, D, generator=gen) * 4 - 2).to(torch.bfloat16).to(dev)
    v = (torch.rand(b, h, s, D, generator=gen) * 4 - 2).to(torch.bfloat16).to(dev)
    mask = ring_mask(b, t, s, gen).to(dev)
    out_elems = b * t * h * D
    max_warps = b * h * math.ceil(t / 16) * 8 * 4
    outs = [torch.zeros(out_elems + max_warps * 128, dtype=torch.bfloat16, device=dev) for _ in range(3)]
    handle = load_runtime(dev)

    def call(out):
        args = _capi.AttentionArgs(
            B=b, H=h, T=t, S=s, D=D,
            q=q.data_ptr(), q_stride=(h * t * D, t * D, D, 1),
            k=k.data_ptr(), k_stride=(h * s * D, s * D, D, 1),
            v=v.data_ptr(), v_stride=(h * s * D, s * D, D, 1),
            mask=mask.data_ptr(), mask_stride=(t * s, s, 1),
            out=out.data_ptr(), layout=_capi.Layout.BTHD, skip_empty_tiles=0, scale=0.0)
        stream = torch.cuda.current_stream().cuda_stream
        _capi.check(_capi.library().moss_streaming_attention(handle, args, stream),
                    "moss_streaming_attention", handle)

    for _ in range(3):
        call(outs[0])
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        call(outs[0])
    torch.cuda.current_stream().wait_stream(side)
    with torch.cuda.graph(g):
        for i in range(8):
            call(outs[i % 3])
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
    for o in outs:
        o[out_elems:].zero_()
    torch.cuda.synchronize()
    g.replay()
    torch.cuda.synchronize()
    # Call 6 wrote outs[0] (i = 6), call 5 outs[2].
    prev, last = read(outs[2], out_elems, max_warps), read(outs[0], out_elems, max_warps)
    cyc = sum((w["clk"][38] - w["clk"][0]) & 0xFFFFFFFF for w in last if 38 in w["clk"])
    ns = sum(w["tend"] - w["t0"] for w in last if 38 in w["clk"])
    ghz = cyc / ns if ns > 0 else 1.98
    prev_end = max(w["tend"] for w in prev)
    rel = {}
    for i, name in STEPS.items():
        vals = [((w["clk"][i] - w["clk"][0]) & 0xFFFFFFFF) / ghz for w in last if i in w["clk"]]
        if vals:
            rel[name] = (min(vals), st.median(vals), max(vals), len(vals))
    absolute = []
    for w in last:
        row = {name: w["twait"] - prev_end + ((w["clk"][i] - w["clk"][1]) & 0xFFFFFFFF) / ghz
               for i, name in STEPS.items() if i in w["clk"] and i >= 1}
        row["entry"] = w["t0"] - prev_end
        absolute.append(row)
    print(f"== H={h} S={s} T={t} B={b}: {len(last)} warps, {st.median(times):.2f} us per call "
          f"(median of 5 x 20 replays x 8 calls), clock {ghz:.2f} GHz")
    print("   ns since the warp's entry (min / median / max over warps, warps) | "
          "ns after the previous call's last warp ended (min / median / max)")
    for name in STEPS.values():
        if name in rel:
            lo, med, hi, n = rel[name]
            a = [r[name] for r in absolute if name in r]
            print(f"     {name:18s} {lo:7.0f} {med:7.0f} {hi:7.0f} {n:5d} | "
                  f"{min(a):7.0f} {st.median(a):7.0f} {max(a):7.0f}")
    return dict(us=st.median(times), ghz=ghz, steps=rel, absolute=absolute, raw=last,
                prev_end=prev_end)


def main():
    gen = torch.Generator().manual_seed(0)
    results = {}
    for case in sys.argv[1].split(","):
        h, s, t, b = map(int, case.split(":"))
        results[case] = probe(h, s, t, b, gen)
    if len(sys.argv) > 2:
        json.dump(results, open(sys.argv[2], "w"))


main()
