# Table of README.md: run in this folder. Means of the two rounds; the fallback
# is the mean over all four runs (landed and new rounds).
import json, sys
def load(p):
    d=json.load(open(p)); return {(r['m'],r['n'],r['k'],r['mode']): r for r in d['results']}
B=[load(f'bench-base-r{i}.json') for i in (1,2)]; N=[load(f'bench-new-r{i}.json') for i in (1,2)]
def mean(rs, key, f):
    v=[r[key][f] for r in rs if r.get(key) and r[key].get(f) is not None]
    return sum(v)/len(v) if v else None
def fmt(x): return f"{x:.2f}" if x is not None else "-"
print("| M,N,K,mode | landed tile | landed PDL hot / cold | new tile | new PDL hot / cold | new plain hot / cold | fallback hot / cold | new PDL vs fallback hot / cold | rel. L2 new |")
print("|---|---|---|---|---|---|---|---|---|")
wlb=json.load(open('whitelist-landed.json')); wln=json.load(open('whitelist-new.json'))
order=[(n,k,mode) for (n,k,mode) in [(3072,768,1),(768,3072,2),(5120,1280,1),(1280,5120,2)]]
for (n,k,mode) in order:
  for m in (1,2,4,8,15,16,30,32,64):
    key=(m,n,k,mode); ks=f"{m},{n},{k},{mode}"
    b=[x[key] for x in B if key in x]; nn=[x[key] for x in N if key in x]
    if not nn: continue
    fb=[*[r['fallback'] for r in b], *[r['fallback'] for r in nn]]
    fbh=sum(x['hot_us'] for x in fb)/len(fb); fbc=sum(x['cold_us'] for x in fb)/len(fb)
    bh=mean(b,'generated_pdl','hot_us'); bc=mean(b,'generated_pdl','cold_us')
    nh=mean(nn,'generated_pdl','hot_us'); nc=mean(nn,'generated_pdl','cold_us')
    ph=mean(nn,'generated','hot_us'); pc=mean(nn,'generated','cold_us')
    err=max([r['generated_pdl']['rel_l2'] for r in nn if r.get('generated_pdl') and r['generated_pdl'].get('rel_l2') is not None] or [None]) if nh else None
    ratio=f"{fbh/nh:.2f}x / {fbc/nc:.2f}x" if nh else "-"
    print(f"| {ks} | {wlb.get(ks,'fallback')} | {fmt(bh)} / {fmt(bc)} | {wln.get(ks,'fallback')} | {fmt(nh)} / {fmt(nc)} | {fmt(ph)} / {fmt(pc)} | {fbh:.2f} / {fbc:.2f} | {ratio} | {err if err is not None else '-'} |")
