#!/usr/bin/env bash
# The "wide rows" benchmark (issue 17): tables of W columns (bench/gen_wide.py: longs,
# doubles, strings and nullable longs in turn; a position delete file per data file
# removing every 10th row) holding the same number of values at every width, read to
# NDJSON by
#   (a) icedruid scan TABLE --threads T
#   (b) DuckDB doing the same merge-on-read in SQL (bench/duckdb_scan.mjs)
# in the same run. Prints wall and CPU time, peak RSS, icedruid's CPU ns per value (flat
# in W when nothing depends on the width) and the ratios, by CPU time and against
# DuckDB's COPY alone (without Node and DuckDB start-up). Both outputs must hold the live
# rows.
#
# Usage: bash bench/bench_wide.sh [W...]     (default: 8 64 65 128 300)
#   VALUES=N values per table (default 30000000)   THREADS=T (default 1)
#   NOBUILD=1 (use build/icedruid as it is)   KEEP=1 (keep the tables)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
icedruid=$root/build/icedruid
threads=${THREADS:-1}
values=${VALUES:-30000000}
widths=${*:-8 64 65 128 300}
[ "${NOBUILD:-0}" = 1 ] || bash "$root/scripts/build.sh" release >/dev/null
bash "$root/scripts/node-deps.sh" >/dev/null
work=$(mktemp -d "${TMPDIR:-/tmp}/icd-bench-wide.XXXXXX")
[ "${KEEP:-0}" = 1 ] || trap 'rm -rf "$work"' EXIT

# run OUT CMD...: prints "WALL CPU MAXRSS_KIB" of CMD (stdout to OUT)
run() {
  local out=$1; shift
  /usr/bin/time -f "%e %U %S %M" -o "$work/time" "$@" >"$out"
  awk '{printf "%s %.2f %s\n", $1, $2 + $3, $4}' "$work/time"
}

printf "%-6s %-9s %8s %8s %9s %9s %10s\n" width side wall_s cpu_s rss_MiB rows ns/value
for w in $widths; do
  table=$work/w$w
  rows=$((values / w))
  info=$(python3 "$root/bench/gen_wide.py" "$table" "$w" "$rows")
  loc=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["location"])' "$info")
  live=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["live_rows"])' "$info")
  read -r iw ic ir < <(run "$work/icd.ndjson" "$icedruid" scan "$table" --remap "$loc=$table" \
    --threads "$threads")
  irows=$(wc -l <"$work/icd.ndjson")
  "$icedruid" tasks "$table" --remap "$loc=$table" >"$work/tasks.json"
  read -r dw dc dr < <(run "$work/duck.json" node "$root/bench/duckdb_scan.mjs" "$threads" \
    "$work/tasks.json" "$loc" "$table" "$work/duck.ndjson")
  copy=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["seconds"])' "$work/duck.json")
  drows=$(wc -l <"$work/duck.ndjson")
  nsv=$(awk -v c="$ic" -v n="$live" -v w="$w" 'BEGIN{printf "%.1f", c * 1e9 / (n * w)}')
  printf "%-6s %-9s %8s %8s %9.1f %9s %10s\n" "$w" icedruid "$iw" "$ic" "$(awk -v k="$ir" 'BEGIN{print k/1024}')" "$irows" "$nsv"
  printf "%-6s %-9s %8s %8s %9.1f %9s\n" "$w" duckdb "$dw" "$dc" "$(awk -v k="$dr" 'BEGIN{print k/1024}')" "$drows"
  if [ "$irows" != "$live" ] || [ "$drows" != "$live" ]; then
    echo "bench_wide: wrong row counts (want $live)" >&2; exit 1
  fi
  python3 -c 'import sys; w1,c1,r1,w2,c2,r2,cp=map(float,sys.argv[1:]); print(f"       ratios DuckDB/icedruid: wall {w2/w1:.2f}x, CPU {c2/max(c1,0.005):.2f}x, COPY alone/icedruid wall {cp/w1:.2f}x; RSS icedruid/DuckDB {r1/r2:.2f}")' \
    "$iw" "$ic" "$ir" "$dw" "$dc" "$dr" "$copy"
  rm -rf "$table"
done
