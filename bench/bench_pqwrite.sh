#!/usr/bin/env bash
# The Parquet writer benchmark: the data rows of bench2m (2,020,000 rows in 11 data files;
# the delete files are ignored so that both sides write the same rows) written to Parquet
#   (a) by icedruid's native writer: bench/tool_pqwrite --ignore-deletes --no-verify (the
#       Iceberg reader's rows through iceberg/pq_write.h, one output file per data file,
#       the original schemas mirrored), single-threaded
#   (b) by DuckDB: COPY (SELECT * FROM read_parquet([data files])) TO '...parquet'
#       (FORMAT parquet, COMPRESSION codec) (bench/duckdb_copy.mjs), SET threads = 1 and 2
# in the same run, same codec. Both sides include reading the input files. Prints wall
# time, CPU time (user + sys) and peak RSS of each, and the ratios. On a loaded machine
# (several processes per core) wall time mostly measures waiting: the CPU-time ratio is the
# one to read then.
#
# Usage: bash bench/bench_pqwrite.sh
#   CODEC=snappy   snappy | zstd | gzip | uncompressed (default snappy)
#   RUNS=N         runs of each measurement, the fastest is kept (default 3)
#   NOBUILD=1      do not run scripts/build.sh release
#   ICD_SHARED=..  the shared material (default ../shared next to the checkout)
# Goals (issue 13): speed >= 1.5x DuckDB, peak RSS <= 0.5x DuckDB. Exit 0 goals met, 1 a run
# failed or the row counts differ, 2 something is missing, 4 a goal was missed.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
shared=${ICD_SHARED:-$root/../shared}
table=$shared/bench/bench2m/table
prefix=/tmp/icedruid-corpus/bench2m/table
codec=${CODEC:-snappy}
runs=${RUNS:-3}
tool=$root/build/bench/tool_pqwrite

fail() { echo "bench_pqwrite: $*" >&2; exit "${code:-2}"; }
[ -d "$table/metadata" ] || fail "no benchmark table at $table (set ICD_SHARED)"
[ -x /usr/bin/time ] || fail "/usr/bin/time is missing (apt-get install time)"
command -v node >/dev/null || fail "node is not installed"
if [ "${NOBUILD:-0}" != 1 ]; then
  bash "$root/scripts/build.sh" release >/dev/null || fail "scripts/build.sh release failed"
fi
[ -x "$tool" ] || fail "no $tool"
md=$(ls "$table"/metadata/v*.metadata.json | sort -V | tail -1)
mapfile -t files < <(ls "$table"/data/*.parquet | grep -v -e '-deletes\.parquet$' -e '-eq-deletes\.parquet$')

work=$(mktemp -d "${TMPDIR:-/tmp}/icd-bench-pqwrite.XXXXXX")
trap 'rm -rf "$work"' EXIT

# best RESULTVAR CMD...: the fastest (wall) of $runs runs as "wall cpu rss_kib rows"
best() {
  local var=$1; shift
  local bw= line
  for ((i = 0; i < runs; i++)); do
    rm -rf "$work/out" && mkdir -p "$work/out"
    /usr/bin/time -f "%e %U %S %M" -o "$work/time" "$@" >"$work/stdout" 2>"$work/stderr" ||
      { cat "$work/stderr" >&2; code=1 fail "run failed: $*"; }
    read -r w u s m <"$work/time"
    local rows
    rows=$(grep -ho '"rows":[0-9]*' "$work/stdout" "$work/stderr" | tail -1 | cut -d: -f2)
    line="$w $(echo "$u + $s" | bc -l) $m $rows"
    if [ -z "$bw" ] || (($(echo "$w < $bw" | bc -l))); then bw=$w; printf -v "$var" '%s' "$line"; fi
  done
}

best ours "$tool" "$md" "$work/out" --remap "$prefix=$table" --no-verify --ignore-deletes --codec "$codec"
best duck1 node "$root/bench/duckdb_copy.mjs" 1 "$codec" "$work/out/duck.parquet" "${files[@]}"
best duck2 node "$root/bench/duckdb_copy.mjs" 2 "$codec" "$work/out/duck.parquet" "${files[@]}"

read -r ow oc om orows <<<"$ours"
status=0
printf '%-22s %9s %9s %10s %9s\n' writer wall_s cpu_s rss_MiB rows
printf '%-22s %9.2f %9.2f %10.1f %9s\n' "icedruid (1 thread)" "$ow" "$oc" "$(echo "$om/1024" | bc -l)" "$orows"
for d in duck1 duck2; do
  read -r dw dc dm drows <<<"${!d}"
  printf '%-22s %9.2f %9.2f %10.1f %9s\n' "duckdb threads=${d#duck}" "$dw" "$dc" "$(echo "$dm/1024" | bc -l)" "$drows"
  [ "$drows" = "$orows" ] || { echo "row counts differ: $orows vs $drows" >&2; status=1; }
  sw=$(echo "$dw / $ow" | bc -l); sc=$(echo "$dc / $oc" | bc -l); rr=$(echo "$om / $dm" | bc -l)
  printf '  vs duckdb threads=%s: speed %.2fx (wall), %.2fx (CPU time); RSS %.2fx\n' "${d#duck}" "$sw" "$sc" "$rr"
  if [ "$status" = 0 ] && { (($(echo "$sc < 1.5" | bc -l))) || (($(echo "$rr > 0.5" | bc -l))); }; then
    status=4
  fi
done
exit "$status"
