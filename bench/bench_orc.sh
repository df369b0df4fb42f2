#!/usr/bin/env bash
# ORC figures (DuckDB has no ORC reader, so the peer is icedruid's own Parquet path on the
# same rows):
#   1. `icedruid cat` on every ORC file of the Impala corpus, on airports (3376 rows) as
#      ORC and as Parquet, and on one data file of the generated pair (3.) in each format;
#   2. `icedruid scan` of the corpus ORC tables next to their Parquet twins (same rows,
#      written by Impala/Hive: e.g. airports_orc / airports_parquet,
#      iceberg_v2_partitioned_position_deletes_orc / ..._position_deletes; the ORC and
#      Parquet outputs must be the same rows);
#   3. `icedruid scan` of a generated pair (bench/gen_orc_pair.py: ROWS rows in 4 files,
#      a position delete file and an equality delete file, once all ORC, once all
#      Parquet); both outputs must be the same multiset of rows.
# Corpus files are tiny, so their figures are dominated by process start-up; the
# generated pair gives the reader throughput. Each measurement is the best of RUNS runs;
# rows/s is given on wall time and on CPU time (user + sys: the machine is shared, wall
# time moves with the load).
# Usage: bash bench/bench_orc.sh      ROWS=200000 RUNS=3 NOBUILD=1 ICD_SHARED=... KEEP=1
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
shared=${ICD_SHARED:-$root/../shared}
corpus=$shared/corpus/impala
icedruid=$root/build/icedruid
rows_gen=${ROWS:-200000}
runs=${RUNS:-3}
[ -d "$corpus" ] || { echo "bench_orc: no corpus at $corpus (set ICD_SHARED)" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "bench_orc: /usr/bin/time is needed" >&2; exit 2; }
if [ "${NOBUILD:-0}" != 1 ]; then
  bash "$root/scripts/build.sh" release >/dev/null
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/icd-bench-orc.XXXXXX")
if [ "${KEEP:-0}" != 1 ]; then trap 'rm -rf "$work"' EXIT; fi

# best OUT CMD...: runs CMD RUNS times (stdout to OUT); prints "WALL_S CPU_S" of the
# fastest run (by wall time).
best() {
  local out=$1; shift
  local b=""
  for _ in $(seq "$runs"); do
    /usr/bin/time -f "%e %U %S" -o "$work/t" "$@" >"$out"
    local r
    r=$(awk '{ printf "%.3f %.3f", $1, $2 + $3 }' "$work/t")
    if [ -z "$b" ] || awk -v a="${r%% *}" -v c="${b%% *}" 'BEGIN { exit !(a < c) }'; then b=$r; fi
  done
  echo "$b"
}

# rate ROWS "WALL CPU" -> "wall X ms, cpu Y ms, A rows/s wall, B rows/s cpu"
rate() {
  awk -v n="$1" -v w="${2%% *}" -v c="${2##* }" 'BEGIN {
    printf "%8.1f ms wall %8.1f ms cpu %11.0f rows/s wall %11.0f rows/s cpu", w * 1000, c * 1000,
      (w > 0 ? n / w : 0), (c > 0 ? n / c : 0) }'
}

# loc DIR: the location of a corpus table's current metadata (remapped to DIR)
loc() {
  local m
  m=$(ls "$1"/metadata/v*.metadata.json | sort -V | tail -1)
  python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["location"])' "$m"
}

python3 "$root/bench/gen_orc_pair.py" "$work/pair" "$rows_gen" 4

echo "== 1. icedruid cat"
mapfile -t files < <(find "$corpus" -type f -not -path '*/metadata/*' \
  -exec sh -c 'head -c3 "$1" | grep -q ORC && echo "$1"' _ {} \; | sort)
{ for f in "${files[@]}"; do printf '%q cat %q\n' "$icedruid" "$f"; done; } >"$work/cat_all.sh"
n=$(bash "$work/cat_all.sh" | wc -l)
printf "%-44s %8d rows %s\n" "all ${#files[@]} corpus ORC files" "$n" "$(rate "$n" "$(best "$work/o" bash "$work/cat_all.sh")")"
for f in hadoop_catalog/ice/airports_orc/000000_0 hadoop_catalog/ice/airports_parquet/000000_0; do
  n=$("$icedruid" cat "$corpus/$f" | wc -l)
  printf "%-44s %8d rows %s\n" "$(dirname "$f" | xargs basename)" "$n" "$(rate "$n" "$(best "$work/o" "$icedruid" cat "$corpus/$f")")"
done

for fmt in orc parquet; do
  f=$(find "$work/pair/$fmt/data" -name "00001-*" | head -1)
  n=$("$icedruid" cat "$f" | wc -l)
  printf "%-44s %8d rows %s\n" "generated data file ($fmt)" "$n" "$(rate "$n" "$(best "$work/o" "$icedruid" cat "$f")")"
done

echo "== 2. icedruid scan: corpus ORC tables and their Parquet twins"
pairs="hadoop_catalog/ice/airports_orc:hadoop_catalog/ice/airports_parquet
hadoop_catalog/iceberg_partitioned_orc/functional_parquet/iceberg_partitioned_orc:iceberg_partitioned:id,user,action
hadoop_catalog/ice/iceberg_alltypes_part_orc:hadoop_catalog/ice/iceberg_alltypes_part
hadoop_catalog/ice/iceberg_v2_partitioned_position_deletes_orc:hadoop_catalog/ice/iceberg_v2_partitioned_position_deletes
hadoop_catalog/ice/iceberg_v2_positional_not_all_data_files_have_delete_files_orc:hadoop_catalog/ice/iceberg_v2_positional_not_all_data_files_have_delete_files
hadoop_catalog/ice/iceberg_legacy_partition_schema_evolution_orc:hadoop_catalog/ice/iceberg_legacy_partition_schema_evolution
iceberg_migrated_alter_test_orc:iceberg_migrated_alter_test"
status=0
while IFS=: read -r o p cols; do
  args=()
  [ -n "$cols" ] && args=(--columns "$cols")
  ocmd=("$icedruid" scan "$corpus/$o" --remap "$(loc "$corpus/$o")=$corpus/$o" "${args[@]}")
  pcmd=("$icedruid" scan "$corpus/$p" --remap "$(loc "$corpus/$p")=$corpus/$p" "${args[@]}")
  "${ocmd[@]}" | sort >"$work/so"
  "${pcmd[@]}" | sort >"$work/sp"
  same=same; cmp -s "$work/so" "$work/sp" || { same=DIFFERENT; status=1; }
  n=$(wc -l <"$work/so")
  printf "%-44.44s %6d rows ORC     %s\n" "$(basename "$o")" "$n" "$(rate "$n" "$(best "$work/o" "${ocmd[@]}")")"
  printf "%-44.44s %6d rows Parquet %s (%s rows)\n" "$(basename "$p")" "$n" "$(rate "$n" "$(best "$work/o" "${pcmd[@]}")")" "$same"
done <<<"$pairs"

echo "== 3. icedruid scan: generated pair, $rows_gen rows, position + equality deletes"
for fmt in orc parquet; do
  r=$(best "$work/out.$fmt" "$icedruid" scan "$work/pair/$fmt" --remap "/tmp/icedruid-bench-orc=$work/pair")
  n=$(wc -l <"$work/out.$fmt")
  printf "%-44s %8d rows %s\n" "scan $fmt ($rows_gen rows read)" "$n" "$(rate "$rows_gen" "$r")"
done
if [ "$(sort "$work/out.orc" | md5sum)" = "$(sort "$work/out.parquet" | md5sum)" ]; then
  echo "ORC and Parquet outputs: the same rows"
else
  echo "ORC and Parquet outputs DIFFER"; status=1
fi
exit $status
