# Best candidate per MMA kind in the first tune (results.json of this folder):
# mma.sync (bn <= 32), W-as-A wgmma with bn = 64 (all accurate), bm = 64.
# Candidates that failed the accuracy check (every W-as-A tile of bn >= 128
# but those of 128-k stages) are left out; run in this folder.
import json
r = json.load(open('results.json'))
print("| key | fallback hot / cold | best mma.sync (bn <= 32) | best wgmma, W as A (bn = 64) | bn >= 128 W-as-A tiles refused |")
print("|---|---|---|---|---|")
for k in r['keys']:
    fb = k['fallback']['runs'][0]
    best = {}; refused = 0
    for c in k['candidates']:
        bm, bn, bk, sp = c['tile']
        rl = c.get('rel_l2')
        ok = not c.get('error') and rl is not None and rl < 0.004
        if not ok:
            refused += bn >= 128 and bm < 64
            continue
        runs = [x for x in c['runs'] if x and x.get('hot_us') is not None]
        kind = 'bm64' if bm == 64 else ('wa' if bn == 64 else ('mma' if bn <= 32 else 'wide'))
        t = sum(x['hot_us'] for x in runs) / len(runs); tc = sum(x['cold_us'] for x in runs) / len(runs)
        if kind not in best or t < best[kind][0]:
            best[kind] = (t, tc, c['tile'])
    f = lambda v: f"{v[0]:.2f} / {v[1]:.2f} {v[2]}" if v else "-"
    print(f"| {k['key']} | {fb['hot_us']:.2f} / {fb['cold_us']:.2f} | {f(best.get('mma'))} | {f(best.get('wa'))} | {refused} |")
