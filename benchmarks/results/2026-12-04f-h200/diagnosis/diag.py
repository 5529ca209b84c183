# Which W element does each output of a wgmma-W-as-A tile read? x rows are
# one-hot at k_m; W encodes (n, k) in exact small integers over three runs.
import torch, json, sys, collections
from moss_kernels import ops  # registers torch.ops.moss
N, K = 3072, 768
torch.manual_seed(0)
def run(M, w):
    ks = torch.tensor([(37 * m * 13 + 5 * m + 3) % K for m in range(M)])
    x = torch.zeros(M, K, dtype=torch.bfloat16, device="cuda")
    x[torch.arange(M), ks] = 1
    out = torch.ops.moss.ffn_gemm(x, w, None, None, 0)
    torch.cuda.synchronize()
    return out.float().cpu(), ks
n_idx = torch.arange(N).view(N, 1).expand(N, K)
k_idx = torch.arange(K).view(1, K).expand(N, K)
enc = {"n_lo": n_idx % 128, "n_hi": n_idx // 128, "k_lo": k_idx % 128, "k_hi": k_idx // 128}
for M in (8, 9, 10, 11, 12):
    res = {}
    for name, e in enc.items():
        w = (e.float() + 1).to(torch.bfloat16).cuda()  # +1: 0 means "nothing read"
        res[name], ks = run(M, w)
    dn = (res["n_hi"] - 1) * 128 + (res["n_lo"] - 1)
    dk = (res["k_hi"] - 1) * 128 + (res["k_lo"] - 1)
    want_n = torch.arange(N).view(1, N).expand(M, N).float()
    want_k = ks.view(M, 1).expand(M, N).float()
    bad = (dn != want_n) | (dk != want_k)
    print(f"M={M}: {int(bad.sum())} of {M*N} outputs wrong")
    if bad.any():
        # pattern over n % 256 and m
        cols = bad.any(0).nonzero().flatten()
        print("  wrong columns mod 256:", sorted(set((cols % 256).tolist()))[:80])
        print("  wrong rows:", sorted(set(bad.any(1).nonzero().flatten().tolist())))
        cnt = collections.Counter()
        for m, n in bad.nonzero().tolist()[:4000]:
            cnt[(int(dn[m, n]) - n, int(dk[m, n]) - int(ks[m]), int(res["n_lo"][m, n] == 0))] += 1
        print("  (dn - n, dk - k_m, zero) most common:", cnt.most_common(12))
        for m, n in bad.nonzero().tolist()[:6]:
            print("   m", m, "n", n, "k_m", int(ks[m]), "-> read n'", float(dn[m, n]), "k'", float(dk[m, n]))
