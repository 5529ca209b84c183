# The landed one-group function against the experiment (S = Q K^T by wgmma
# m64n64k16, experiment.patch, MOSS_EXP_G1_WGMMA=1 at build time), one
# runtime, two rounds each, alternating; means of the rounds. Run here.
import json
def load(p):
    return {(r['H'], r['S'], r['T'], r['B']): r for r in json.load(open(p))['results']}
b = [load(f'att-base-r{i}.json') for i in (1, 2)]; e = [load(f'att-exp-r{i}.json') for i in (1, 2)]
mean = lambda rs, f: sum(r[f] for r in rs) / len(rs)
print("| H:S:T:B | landed bthd / PDL | wgmma scores bthd / PDL | change (bthd) | rel. L2 (exp) |")
print("|---|---|---|---|---|")
for key in b[0]:
    bb = [x[key] for x in b]; ee = [x[key] for x in e]
    print(f"| {':'.join(map(str, key))} | {mean(bb, 'bthd_us'):.2f} / {mean(bb, 'bthd_pdl_us'):.2f} | "
          f"{mean(ee, 'bthd_us'):.2f} / {mean(ee, 'bthd_pdl_us'):.2f} | {mean(ee, 'bthd_us') - mean(bb, 'bthd_us'):+.2f} | "
          f"{max(r['rel_l2_bthd'] for r in ee):.1e} |")
