#!/usr/bin/env bash
# rows/s of `icedruid cat` on the ORC files of the Impala corpus (DuckDB has no ORC
# reader, so there is no peer ratio). Two figures: every corpus ORC file once per round
# (51 small files: process start-up dominates), and the largest file (airports_orc,
# 3376 rows x 7 columns, ZLIB) alone.
# Usage: bash bench/bench_orc_cat.sh [ICEDRUID] [ROUNDS]
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-build/icedruid}
rounds=${2:-20}
corpus=${ICD_SHARED:-../shared}/corpus/impala
[ -d "$corpus" ] || { echo "skipped: $corpus not found"; exit 0; }
mapfile -t files < <(find "$corpus" -type f -exec sh -c 'head -c3 "$1" | grep -q ORC && echo "$1"' _ {} \; | sort)
rows=0
for f in "${files[@]}"; do rows=$((rows + $("$bin" cat "$f" | wc -l))); done
t0=$(date +%s.%N)
for _ in $(seq "$rounds"); do for f in "${files[@]}"; do "$bin" cat "$f" >/dev/null; done; done
t1=$(date +%s.%N)
awk -v r="$rows" -v n="$rounds" -v a="$t0" -v b="$t1" -v k="${#files[@]}" \
  'BEGIN { printf "all corpus ORC files: %d files, %d rows, %.1f ms per round, %.0f rows/s\n", k, r, (b-a)*1000/n, r*n/(b-a) }'
big="$corpus/hadoop_catalog/ice/airports_orc/000000_0"
brows=$("$bin" cat "$big" | wc -l)
t0=$(date +%s.%N)
for _ in $(seq $((rounds * 5))); do "$bin" cat "$big" >/dev/null; done
t1=$(date +%s.%N)
awk -v r="$brows" -v n="$((rounds * 5))" -v a="$t0" -v b="$t1" \
  'BEGIN { printf "airports_orc: %d rows, %.2f ms per cat, %.0f rows/s (including process start)\n", r, (b-a)*1000/n, r*n/(b-a) }'
