"""Rule sweep table: for each case, every launch measured (by the launch
moss-bench reports, `splits x groups`, whichever knobs forced it; a launch
measured more than once shows the mean), the old rule's pick (sweep-0-0.txt,
the 2026-12-04g runtime) and the new rule's (new-rule-launches.txt).
Usage: python3 table.py > table.md"""
import glob, os, re
here = os.path.dirname(os.path.abspath(__file__))
runs = {}  # case -> launch -> [(plain, pdl)]
for f in sorted(glob.glob(os.path.join(here, 'sweep-*.txt'))):
    for line in open(f):
        p = line.split()
        if len(p) > 12 and p[0].isdigit() and p[4] == '|':
            case = ':'.join(p[:4])
            runs.setdefault(case, {}).setdefault(p[5], []).append((float(p[7]), float(p[8])))
old = {}
for line in open(os.path.join(here, 'sweep-0-0.txt')):
    p = line.split()
    if len(p) > 12 and p[0].isdigit() and p[4] == '|':
        old[':'.join(p[:4])] = p[5]
new = {}
for line in open(os.path.join(here, 'new-rule-launches.txt')):
    case, launch, _ = line.split()
    new[case] = launch
mean = lambda xs: sum(xs) / len(xs)
print('| H:S:T:B | old rule | new rule | ' + 'launches measured (plain / PDL, µs) |')
print('|---|---|---|---|')
for case in runs:
    cells = []
    for launch, xs in sorted(runs[case].items(), key=lambda kv: mean([x[0] for x in kv[1]])):
        cells.append(f'{launch} {mean([x[0] for x in xs]):.2f} / {mean([x[1] for x in xs]):.2f}')
    o, n = old[case], new[case]
    fmt = lambda l: f'{l} {mean([x[0] for x in runs[case][l]]):.2f} / {mean([x[1] for x in runs[case][l]]):.2f}'
    print(f'| {case} | {fmt(o)} | {"**" + fmt(n) + "**" if n != o else "same"} | {"; ".join(cells)} |')
