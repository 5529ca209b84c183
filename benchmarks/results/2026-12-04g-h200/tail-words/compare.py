import re,sys
def load(f):
    d={}
    for l in open(f):
        m=re.match(r'\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s+\|\s+\S+\s+\|\s+([\d.]+)\s+([\d.]+)',l)
        if m: d[':'.join(m.groups()[:4])]=(float(m.group(5)),float(m.group(6)))
    return d
V=sys.argv[1:]
R={v:[load(f'bench-{v}-r{r}.txt') for r in (1,2)] for v in V}
keys=list(R[V[0]][0].keys())
print(f"{'case':14s} "+' '.join(f'{v:>13s}' for v in V))
tot={v:[0,0] for v in V}
for k in keys:
    row=[]
    for v in V:
        p=sum(R[v][r][k][0] for r in (0,1))/2; q=sum(R[v][r][k][1] for r in (0,1))/2
        row.append(f'{p:6.2f}/{q:6.2f}')
        tot[v][0]+=p; tot[v][1]+=q
    print(f'{k:14s} '+' '.join(row))
print('sum', {v:(round(t[0],2),round(t[1],2)) for v,t in tot.items()})
