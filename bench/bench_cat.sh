#!/usr/bin/env bash
# The `cat` benchmark: exports every row of the bench2m data files to NDJSON with
# `icedruid cat FILE` (one process per file) and with DuckDB (bench/duckdb_export.mjs, one
# Node process, COPY ... (FORMAT json)), in the same run, and compares wall time, rows/s
# and peak RSS. Both outputs must hold the same number of rows.
#
# Usage: bash bench/bench_cat.sh
#   THREADS=1|2   DuckDB `SET threads`; icedruid runs that many files concurrently (default 1)
#   ICEDRUID=...  the icedruid binary (default build/icedruid; build with scripts/build.sh)
#   ICD_SHARED=.. the shared material (default ../shared next to the checkout)
#   DELETES=1     also export the position/equality delete files (default: data files only)
#   KEEP=1        keep the NDJSON outputs (printed path); by default they are removed
# Exit: 0 ok, 1 a run failed or the row counts differ, 2 something needed is missing,
#       3 `icedruid cat` cannot read Parquet yet.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
shared=${ICD_SHARED:-$root/../shared}
data=$shared/bench/bench2m/table/data
icedruid=${ICEDRUID:-$root/build/icedruid}
threads=${THREADS:-1}

fail() { echo "bench_cat: $*" >&2; exit "${code:-2}"; }
case "$threads" in 1|2) ;; *) fail "THREADS must be 1 or 2 (got '$threads')" ;; esac
[ -d "$data" ] || fail "no benchmark data at $data (set ICD_SHARED to the shared folder)"
[ -x "$icedruid" ] || fail "no icedruid binary at $icedruid (run: bash scripts/build.sh release)"
command -v node >/dev/null || fail "node is not installed (scripts/install-deps.sh)"

files=()
for f in "$data"/*.parquet; do
  case "$f" in *deletes.parquet) [ "${DELETES:-0}" = 1 ] || continue ;; esac
  files+=("$f")
done
[ ${#files[@]} -gt 0 ] || fail "no .parquet files in $data"

# icedruid must read Parquet; until the reader core lands, `cat` says "not implemented".
probe_err=$(mktemp)
if ! "$icedruid" cat "${files[0]}" >/dev/null 2>"$probe_err"; then
  msg=$(head -c 300 "$probe_err"); rm -f "$probe_err"
  if grep -qi "not implemented" <<<"$msg"; then
    code=3 fail "icedruid cat cannot read Parquet yet (the reader core is not in this build): $msg"
  fi
  code=1 fail "icedruid cat ${files[0]} failed: $msg"
fi
rm -f "$probe_err"

bash "$root/scripts/node-deps.sh" >/dev/null || fail "scripts/node-deps.sh failed (npm install of @duckdb/node-api)"

work=$(mktemp -d "${TMPDIR:-/tmp}/icd-bench-cat.XXXXXX")
if [ "${KEEP:-0}" != 1 ]; then trap 'rm -rf "$work"' EXIT; fi
mkdir -p "$work/icedruid" "$work/duckdb" "$work/time"

# measure RESULT OUT CMD...: runs CMD with stdout to OUT; RESULT gets "WALL_S MAXRSS_KIB".
measure() {
  local res=$1 out=$2; shift 2
  if [ -x /usr/bin/time ]; then
    /usr/bin/time -f "%e %M" -o "$res.raw" "$@" >"$out" || return 1
    tail -1 "$res.raw" >"$res"
  else # getrusage of the child, through python3
    python3 - "$res" "$out" "$@" <<'PY'
import resource, subprocess, sys, time
res, out, cmd = sys.argv[1], sys.argv[2], sys.argv[3:]
t = time.monotonic()
with open(out, "wb") as f:
    rc = subprocess.call(cmd, stdout=f)
wall = time.monotonic() - t
open(res, "w").write("%.2f %d\n" % (wall, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss))
sys.exit(rc)
PY
  fi
}
export -f measure
export icedruid work

now() { date +%s.%N; }

# ---- icedruid: one process per file, THREADS at a time ----
echo "bench_cat: ${#files[@]} files, THREADS=$threads, icedruid=$icedruid"
t0=$(now)
printf '%s\n' "${files[@]}" | xargs -P "$threads" -I{} bash -c '
  f={}; n=$(basename "$f" .parquet)
  measure "$work/time/$n" "$work/icedruid/$n.ndjson" "$icedruid" cat "$f" ||
    { echo "bench_cat: icedruid cat $f failed" >&2; exit 255; }' || { code=1 fail "icedruid run failed"; }
t1=$(now)
ice_wall=$(python3 -c "print($t1 - $t0)")
ice_rss=$(cat "$work"/time/* | awk '$2 > m { m = $2 } END { print m + 0 }')

# ---- DuckDB: one Node process, files in sequence, threads=THREADS ----
measure "$work/duck.time" "$work/duck.json" node "$root/bench/duckdb_export.mjs" "$threads" \
  "$work/duckdb" "${files[@]}" || code=1 fail "DuckDB export failed"
duck_wall=$(awk '{ print $1 }' "$work/duck.time")
duck_rss=$(awk '{ print $2 }' "$work/duck.time")
duck_inner=$(python3 -c 'import json,sys; print("%.2f" % json.load(open(sys.argv[1]))["seconds"])' "$work/duck.json")

# ---- row counts ----
bad=0 ice_rows=0 duck_rows=0
for f in "${files[@]}"; do
  n=$(basename "$f" .parquet)
  a=$(wc -l <"$work/icedruid/$n.ndjson"); b=$(wc -l <"$work/duckdb/$n.ndjson")
  ice_rows=$((ice_rows + a)); duck_rows=$((duck_rows + b))
  if [ "$a" != "$b" ]; then echo "bench_cat: $n: icedruid $a rows, DuckDB $b rows" >&2; bad=1; fi
done

python3 - "$ice_rows" "$ice_wall" "$ice_rss" "$duck_rows" "$duck_wall" "$duck_rss" "$duck_inner" "$threads" <<'PY'
import sys
ir, iw, irss, dr, dw, drss, dinner, th = sys.argv[1:]
ir, dr, iw, dw, dinner = int(ir), int(dr), float(iw), float(dw), float(dinner)
ips, dps = ir / iw, dr / dw
print(f"{'':22} {'rows':>10} {'wall s':>8} {'rows/s':>12} {'peak RSS MiB':>13}")
print(f"{'icedruid cat':22} {ir:>10} {iw:>8.2f} {ips:>12,.0f} {int(irss)/1024:>13.1f}")
print(f"{'DuckDB (threads=' + th + ')':22} {dr:>10} {dw:>8.2f} {dps:>12,.0f} {int(drss)/1024:>13.1f}")
print(f"throughput ratio icedruid/DuckDB: {ips / dps:.2f}x"
      f"  (DuckDB COPY time alone, without Node start-up: {dinner:.2f} s)")
print(f"peak RSS: icedruid {int(irss)/1024:.1f} MiB (largest single process), "
      f"DuckDB {int(drss)/1024:.1f} MiB (Node + DuckDB)")
PY
[ "${KEEP:-0}" = 1 ] && echo "outputs kept in $work"
if [ $bad = 1 ] || [ "$ice_rows" != "$duck_rows" ]; then
  echo "bench_cat: ROW COUNTS DIFFER (icedruid $ice_rows, DuckDB $duck_rows)" >&2
  exit 1
fi
echo "bench_cat: row counts agree ($ice_rows rows)"
