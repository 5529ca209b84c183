# Plain launches: configs/h200-tuned.json as landed before (whitelist-landed.json)
# against the re-tune (whitelist.json), one runtime, two rounds each (mean);
# the fallback is the mean of all four runs. Run in this folder.
import json
def load(p):
    d = json.load(open(p)); return {(r['m'], r['n'], r['k'], r['mode']): r for r in d['results']}
O = [load(f'bench-plain-old-r{i}.json') for i in (1, 2)]; N = [load(f'bench-plain-new-r{i}.json') for i in (1, 2)]
wo = json.load(open('whitelist-landed.json')); wn = json.load(open('whitelist.json'))
def m(rs, f):
    v = [r['generated'][f] for r in rs if r.get('generated') and r['generated'].get(f) is not None]
    return sum(v) / len(v) if v else None
print("| M,N,K,mode | landed tile | landed hot / cold | new tile | new hot / cold | fallback hot / cold |")
print("|---|---|---|---|---|---|")
for (n, k, mode) in [(3072, 768, 1), (768, 3072, 2), (5120, 1280, 1), (1280, 5120, 2)]:
    for mm in (1, 2, 4, 8, 15, 16, 30, 32, 64):
        key = (mm, n, k, mode); ks = f"{mm},{n},{k},{mode}"
        o = [x[key] for x in O if key in x]; nn = [x[key] for x in N if key in x]
        if not o and not nn: continue
        fb = [r['fallback'] for r in o + nn]
        f = lambda a, b: f"{a:.2f} / {b:.2f}" if a is not None else "-"
        print(f"| {ks} | {wo.get(ks, 'fallback')} | {f(m(o, 'hot_us'), m(o, 'cold_us'))} | {wn.get(ks, 'fallback')} | "
              f"{f(m(nn, 'hot_us'), m(nn, 'cold_us'))} | {sum(x['hot_us'] for x in fb) / len(fb):.2f} / {sum(x['cold_us'] for x in fb) / len(fb):.2f} |")
