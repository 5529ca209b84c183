"""Early-trigger rule (MOSS_ATTENTION_EARLY_TRIGGER=1) against late triggering
(=0): bthd+PDL us per case, two rounds interleaved; the rule triggers early
where 2 x CTAs <= 132."""
import json, sys, statistics
d = sys.argv[1]
def load(mode, r):
    js = json.load(open(f"{d}/bench-t{mode}-r{r}.json"))
    return {(x["H"], x["S"], x["T"], x["B"]): x for x in js["results"]}
runs = {(m, r): load(m, r) for m in (0, 1) for r in (1, 2)}
print("| H:S:T:B | CTAs | early by rule | late r1 / r2 | rule r1 / r2 | change (mean) | plain late / rule (r1) |")
print("|---|---|---|---|---|---|---|")
early_changes, late_changes = [], []
for key, x in runs[(1, 1)].items():
    early = 2 * x["ctas"] <= 132
    late = [runs[(0, r)][key]["bthd_pdl_us"] for r in (1, 2)]
    rule = [runs[(1, r)][key]["bthd_pdl_us"] for r in (1, 2)]
    ch = statistics.mean(rule) - statistics.mean(late)
    (early_changes if early else late_changes).append(ch)
    print(f"| {':'.join(map(str, key))} | {x['ctas']} | {'yes' if early else 'no'} | "
          f"{late[0]:.2f} / {late[1]:.2f} | {rule[0]:.2f} / {rule[1]:.2f} | {ch:+.2f} | "
          f"{runs[(0, 1)][key]['bthd_us']:.2f} / {x['bthd_us']:.2f} |")
for name, c in (("early by rule", early_changes), ("late (unchanged kernels' path)", late_changes)):
    if c:
        print(f"\n{name}: {len(c)} cases, change min {min(c):+.2f} max {max(c):+.2f} mean {statistics.mean(c):+.3f} us")
