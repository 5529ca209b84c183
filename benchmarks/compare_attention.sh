#!/usr/bin/env bash
# One device call: times the attention kernels of several kernel folders
# (moss-aot outputs, e.g. .cand/NAME) side by side on the same cases, in two
# rounds (folders in order, then reversed) so that clock drift shows up as a
# round difference rather than as a kernel difference. Builds the runtime
# first. Prints one line per case: bthd us per call per folder and round.
# Usage: OUT=dir benchmarks/compare_attention.sh DIR... 
#   MOSS_COMPARE_CASES=H:S:T:B,... (default: the 36 cases of moss-bench --attention)
#   MOSS_COMPARE_WHITELIST=file: the whitelist the folders were built from
#   (default: moss-bench's, configs/h200-example.json)
set -o pipefail
source "$(dirname "${BASH_SOURCE[0]}")/device_common.sh"
[ $# -ge 1 ] || { echo "usage: OUT=dir $0 DIR..."; exit 2; }
moss_device_build "$OUT" "$MOSS_ROOT/.devdeps/prefix"
cases=${MOSS_COMPARE_CASES:-}
if [ -z "$cases" ]; then
  for hs in 20:125 12:250 12:400; do
    for t in 1 32 240 480; do for b in 1 4 16; do cases+="$hs:$t:$b,"; done; done
  done
  cases=${cases%,}
fi
dirs=("$@")
rev=()
for ((i = ${#dirs[@]} - 1; i >= 0; i--)); do rev+=("${dirs[i]}"); done
round=0
for order in "${dirs[*]}" "${rev[*]}"; do
  round=$((round + 1))
  for d in $order; do
    name=$(basename "$d")
    timeout 120 $MOSS_BENCH --kernels-dir "$d" --attention-cases "$cases" \
      ${MOSS_COMPARE_WHITELIST:+--whitelist "$MOSS_COMPARE_WHITELIST"} \
      >"$OUT/cmp-$name-r$round.txt" 2>&1 || echo "$name round $round: rc=$?"
  done
done
# Columns of moss-bench: H S T B ... sp ... bthd (field 8).
for d in "${dirs[@]}"; do
  name=$(basename "$d")
  for r in 1 2; do
    grep -E '^ +[0-9]' "$OUT/cmp-$name-r$r.txt" | awk -v n="$name.r$r" \
      '{print $1":"$2":"$3":"$4, n, $8}'
  done
done | awk '{k[$1]=1; v[$1" "$2]=$3; if (!($2 in seen)) {seen[$2]=1; cols[++nc]=$2}}
  END {printf "%-14s", "H:S:T:B"; for (i=1;i<=nc;i++) printf " %9s", cols[i]; print "";
       n=0; for (c in k) keys[++n]=c;
       for (i=1;i<=n;i++) {printf "%-14s", keys[i]; for (j=1;j<=nc;j++) printf " %9s", v[keys[i]" "cols[j]]; print ""}}' \
  | { IFS= read -r header; echo "$header"; sort -t: -k1,1nr -k2,2n -k3,3n -k4,4n; } | tee "$OUT/compare.txt"
# The device tool returns few files: the per-run outputs travel as one archive.
tar -czf "$OUT/compare-runs.tgz" -C "$OUT" $(cd "$OUT" && ls cmp-*.txt) && rm -f "$OUT"/cmp-*.txt
