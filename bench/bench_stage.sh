#!/usr/bin/env bash
# `icedruid stage` on bench2m (2,020,000 rows in 11 data files; a position delete file and
# an equality delete file apply to the 10 original files, not to the late file) against,
# in the same run:
#   - `icedruid scan` of the table to /dev/null (the read alone),
#   - DuckDB: COPY of the anti-join (the 10 files minus position- and equality-deleted
#     rows) to one Parquet file (bench/duckdb_antijoin.mjs), SET threads = 1 and 2.
# Reports files staged vs files with deletes, bytes written / table bytes, wall and CPU
# time and peak RSS of each, the ratios to DuckDB at 1 and 2 threads (goals of issue 13:
# speed >= 1.5x, peak RSS <= 0.5x; exit 4 when missed), and checks that both sides wrote
# the same number of rows.
# Codec: zstd on both sides (Iceberg's default, which stage uses for this table).
#
# Usage: bash bench/bench_stage.sh      (RUNS=N best of N, default 2; NOBUILD=1)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
shared=${ICD_SHARED:-$root/../shared}
table=$shared/bench/bench2m/table
prefix=/tmp/icedruid-corpus/bench2m/table
runs=${RUNS:-2}
icd=$root/build/icedruid
fail() { echo "bench_stage: $*" >&2; exit 2; }
[ -d "$table/metadata" ] || fail "no benchmark table at $table (set ICD_SHARED)"
[ -x /usr/bin/time ] || fail "/usr/bin/time is missing"
[ "${NOBUILD:-0}" = 1 ] || bash "$root/scripts/build.sh" release >/dev/null || fail "build failed"
work=$(mktemp -d "${TMPDIR:-/tmp}/icd-bench-stage.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/wh/ns"
ln -s "$table" "$work/wh/ns/bench2m"
cat >"$work/spec.json" <<JSON
{"type":"index_parallel","spec":{"dataSchema":{"dataSource":"bench2m",
 "timestampSpec":{"column":"event_time","format":"auto"},"dimensionsSpec":{"dimensions":[]},
 "granularitySpec":{"segmentGranularity":"day","rollup":false}},
 "ioConfig":{"type":"index_parallel","inputSource":{"type":"iceberg","tableName":"bench2m",
 "namespace":"ns","icebergCatalog":{"type":"local","warehousePath":"$work/wh"},
 "warehouseSource":{"type":"local"}},"inputFormat":{"type":"parquet"}}}}
JSON
remap=(--remap "$prefix=$table")
posdel=$(ls "$table"/data/*-deletes.parquet | grep -v -e '-eq-deletes')
eqdel=$(ls "$table"/data/*-eq-deletes.parquet)
mapfile -t withdel < <("$icd" plan --spec "$work/spec.json" "${remap[@]}" |
  python3 -c 'import json,sys; [print(f["path"]) for f in json.load(sys.stdin)["files"] if f["decision"] != "raw"]' |
  sed "s#^$prefix#$table#")

# best NAME CMD...: fastest of $runs runs -> "wall cpu rss_mib"
best() {
  local name=$1; shift
  local b=
  for ((i = 0; i < runs; i++)); do
    rm -rf "$work/out" && mkdir -p "$work/out"
    /usr/bin/time -f "%e %U %S %M" -o "$work/time" "$@" >"$work/stdout" 2>"$work/stderr" ||
      { cat "$work/stderr" >&2; fail "$name failed"; }
    read -r e u s m <"$work/time"
    line=$(awk -v e="$e" -v u="$u" -v s="$s" -v m="$m" 'BEGIN{printf "%.2f %.2f %.0f", e, u + s, m / 1024}')
    if [ -z "$b" ] || awk -v a="${line%% *}" -v b="${b%% *}" 'BEGIN{exit !(a < b)}'; then b=$line; fi
    cp "$work/stdout" "$work/stdout.$name"; cp "$work/stderr" "$work/stderr.$name"
  done
  printf '%-34s wall %7ss  cpu %7ss  peak RSS %6s MiB\n' "$name" $b
  results[$name]=$b
}
declare -A results

table_bytes=$(du -cb "$table"/data/*.parquet | tail -1 | cut -f1)
best "icedruid scan --threads 2" "$icd" scan "$table" "${remap[@]}" --threads 2
for t in 1 2; do
  best "icedruid stage --threads $t" "$icd" stage --spec "$work/spec.json" --to "$work/out" --threads $t "${remap[@]}"
done
summary=$(tail -1 "$work/stderr.icedruid stage --threads 2")
for t in 1 2; do
  best "duckdb COPY anti-join threads=$t" node "$root/bench/duckdb_antijoin.mjs" $t zstd "$work/out/duck.parquet" \
    "$prefix" "$table" "$posdel" "$eqdel" user_id "${withdel[@]}"
done
duck_rows=$(cat "$work/stdout.duckdb COPY anti-join threads=2")
python3 - "$summary" "$table_bytes" "$duck_rows" "${#withdel[@]}" \
  "${results[icedruid stage --threads 1]}" "${results[duckdb COPY anti-join threads=1]}" \
  "${results[icedruid stage --threads 2]}" "${results[duckdb COPY anti-join threads=2]}" <<'PY'
import json, sys
s = json.loads(sys.argv[1]); tb = int(sys.argv[2]); duck = int(sys.argv[3]); nd = int(sys.argv[4])
goals = True
for t, (i, d) in enumerate(((sys.argv[5], sys.argv[6]), (sys.argv[7], sys.argv[8])), 1):
    iw, ic, ir = map(float, i.split()); dw, dc, dr = map(float, d.split())
    speed, rss = dw / iw, ir / dr
    goals &= speed >= 1.5 and rss <= 0.5
    print("threads=%d: speed %.2fx DuckDB (CPU time %.2fx), peak RSS %.2fx  [goals: >= 1.5x, <= 0.5x]"
          % (t, speed, dc / ic, rss))
print("files: %d raw, %d staged (data files with deletes: %d)" % (s["rawFiles"], s["stagedFiles"], nd))
print("bytes written %d = %.1f%% of the table's data bytes %d (%.1f%% of the source files' bytes)" % (
    s["bytesWritten"], 100 * s["bytesWritten"] / tb, tb, 100 * s["bytesWritten"] / s["materializedSourceBytes"]))
print("rows written: icedruid %d, DuckDB %d -> %s" % (s["rowsWritten"], duck, "same" if duck == s["rowsWritten"] else "DIFFERENT"))
if duck != s["rowsWritten"] or s["stagedFiles"] != nd:
    sys.exit(1)
if not goals:
    print("goals missed")
    sys.exit(4)
PY
