import os, sys, statistics as st
sys.path.insert(0, 'python')
import torch
from moss_kernels import ops
torch.manual_seed(0)
dev = torch.device('cuda')
cases = [(20,125,1,1),(20,125,1,4),(12,250,1,1),(12,400,1,1),(20,125,32,1),(12,250,32,1)]
names = {0:'entry',3:'wait',4:'Qcopy',5:'maskld',6:'kvcopy',7:'bits0',8:'bits1',9:'looptop',10:'kvready',
         11:'QKissued',12:'softmax',13:'PVissued',14:'afterloop',15:'merged',16:'handover',17:'clusterbar',19:'end'}
for H,S,T,B in cases:
    SA = S + 96
    k = (torch.randn(B,H,SA,64,device=dev)*0.5).to(torch.bfloat16)
    v = (torch.randn(B,H,SA,64,device=dev)*0.5).to(torch.bfloat16)
    v[:,:,S:] = 0
    q = torch.randn(B,H,T,64,device=dev).to(torch.bfloat16)
    mask = torch.ones(B,1,T,S,dtype=torch.bool,device=dev)
    kk, vv = k[:,:,:S], v[:,:,:S]
    for _ in range(20): ops.streaming_attention(q,kk,vv,mask)
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        for _ in range(3): ops.streaming_attention(q,kk,vv,mask)
    torch.cuda.synchronize()
    with torch.cuda.graph(g):
        outs = [ops.streaming_attention(q,kk,vv,mask) for _ in range(8)]
    for _ in range(20): g.replay()
    torch.cuda.synchronize()
    raw = v[:,:,S+16:S+80].contiguous().view(torch.int32).cpu().numpy()  # [B,H,64,32]
    import numpy as np
    raw = raw.astype(np.int64) & 0xffffffff
    rows = []
    for bi in range(B):
        for hi in range(H):
            for r in range(64):
                w = raw[bi,hi,r]
                if w[0] == 0: continue
                t0 = w[30] | (w[31] << 32); t1 = w[28] | (w[29] << 32)
                d = {e: ((w[e]-w[0]) & 0xffffffff) for e in names if e and w[e] != 0}
                rows.append((bi,hi,r,t0,t1,d))
    if not rows:
        print(H,S,T,B,'no stamps'); continue
    t0min = min(x[3] for x in rows); t1max = max(x[4] for x in rows)
    print(f"== H={H} S={S} T={T} B={B}: {len(rows)} warps; CTA starts spread {max(x[3] for x in rows)-t0min} ns; first start->last end {t1max-t0min} ns; median warp life {st.median(x[4]-x[3] for x in rows)} ns")
    for r in sorted(set(x[2] for x in rows)):
        sel = [x for x in rows if x[2]==r]
        line = []
        for e in sorted(names):
            if e==0: continue
            vals = [x[5][e] for x in sel if e in x[5]]
            if vals: line.append(f"{names[e]}={int(st.median(vals))}")
        print(f"  z{r//8} warp{r%8} (n={len(sel)}): " + " ".join(line))
