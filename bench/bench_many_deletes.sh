#!/usr/bin/env bash
# The "many delete files" benchmark (issue: scaling cliffs): N data files with one
# position delete file each (bench/gen_many_deletes.py), read to NDJSON by
#   (a) icedruid scan TABLE --threads T
#   (b) DuckDB doing the same merge-on-read in SQL (bench/duckdb_scan.mjs)
# in the same run; prints wall and CPU time, peak RSS and the ratios. Both outputs must
# hold the table's live rows.
#
# Usage: bash bench/bench_many_deletes.sh [N...]     (default: 2000 10000)
#   THREADS=T (default 1)   NOBUILD=1 (use build/icedruid as it is)   KEEP=1 (keep the tables)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
icedruid=$root/build/icedruid
threads=${THREADS:-1}
sizes=${*:-2000 10000}
[ "${NOBUILD:-0}" = 1 ] || bash "$root/scripts/build.sh" release >/dev/null
bash "$root/scripts/node-deps.sh" >/dev/null
work=$(mktemp -d "${TMPDIR:-/tmp}/icd-bench-many.XXXXXX")
[ "${KEEP:-0}" = 1 ] || trap 'rm -rf "$work"' EXIT

# run OUT CMD...: prints "WALL CPU MAXRSS_KIB" of CMD (stdout to OUT)
run() {
  local out=$1; shift
  /usr/bin/time -f "%e %U %S %M" -o "$work/time" "$@" >"$out"
  awk '{printf "%s %.2f %s\n", $1, $2 + $3, $4}' "$work/time"
}

printf "%-7s %-10s %8s %8s %10s %9s\n" files side wall_s cpu_s rss_MiB rows
for n in $sizes; do
  table=$work/t$n
  info=$(python3 "$root/bench/gen_many_deletes.py" "$table" "$n")
  loc=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["location"])' "$info")
  live=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["live_rows"])' "$info")
  read -r iw ic ir < <(run "$work/icd.ndjson" "$icedruid" scan "$table" --remap "$loc=$table" \
    --threads "$threads")
  irows=$(wc -l <"$work/icd.ndjson")
  "$icedruid" tasks "$table" --remap "$loc=$table" >"$work/tasks.json"
  read -r dw dc dr < <(run "$work/duck.json" node "$root/bench/duckdb_scan.mjs" "$threads" \
    "$work/tasks.json" "$loc" "$table" "$work/duck.ndjson")
  drows=$(wc -l <"$work/duck.ndjson")
  printf "%-7s %-10s %8s %8s %10.1f %9s\n" "$n" icedruid "$iw" "$ic" "$(awk -v k="$ir" 'BEGIN{print k/1024}')" "$irows"
  printf "%-7s %-10s %8s %8s %10.1f %9s\n" "$n" duckdb "$dw" "$dc" "$(awk -v k="$dr" 'BEGIN{print k/1024}')" "$drows"
  if [ "$irows" != "$live" ] || [ "$drows" != "$live" ]; then
    echo "bench_many_deletes: wrong row counts (want $live)" >&2; exit 1
  fi
  python3 -c 'import sys; w1,c1,r1,w2,c2,r2=map(float,sys.argv[1:]); print(f"        ratios: wall {w2/w1:.2f}x, CPU {c2/max(c1,0.005):.2f}x, RSS icedruid/duckdb {r1/r2:.2f}")' \
    "$iw" "$ic" "$ir" "$dw" "$dc" "$dr"
  rm -rf "$table"
done
