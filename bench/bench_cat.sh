#!/usr/bin/env bash
# The `cat` benchmark: exports every row of the bench2m data files to NDJSON with
#   (a) icedruid cat --threads N FILE...   (one process, output in file order, one stream)
#   (b) DuckDB (bench/duckdb_export.mjs: one Node process, SET threads = N, one
#       COPY (SELECT * FROM read_parquet(FILE)) TO ... (FORMAT json) per file)
# in the same run, for N = 1 and 2, and compares wall time, CPU time (user+sys), rows/s
# and peak RSS. Both outputs must hold the same number of rows with the same sum of ids.
#
# Usage: bash bench/bench_cat.sh
#   THREADS="1 2"  thread counts to run (default "1 2")
#   RUNS=N         runs of each measurement, the fastest (by wall time) is kept (default 3)
#   PERFILE=1      also time the old way, one `icedruid cat FILE` process per file
#                  (THREADS processes at a time)
#   NOBUILD=1      do not run scripts/build.sh release (use ICEDRUID or build/icedruid)
#   ICEDRUID=...   the icedruid binary (default build/icedruid)
#   ICD_SHARED=..  the shared material (default ../shared next to the checkout)
#   DELETES=1      also export the position/equality delete files (default: data files only)
#   KEEP=1         keep the work folder (outputs, timings)
# Exit: 0 ok and the goal met, 1 a run failed or the outputs disagree, 2 something needed
#       is missing, 4 outputs agree but the goal (icedruid >= 1.5x the rows/s of DuckDB's
#       COPY alone, lower peak RSS, at every thread count) was missed.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
shared=${ICD_SHARED:-$root/../shared}
data=$shared/bench/bench2m/table/data
icedruid=${ICEDRUID:-$root/build/icedruid}
threads_list=${THREADS:-"1 2"}
runs=${RUNS:-3}

fail() { echo "bench_cat: $*" >&2; exit "${code:-2}"; }
for th in $threads_list; do
  case "$th" in [1-9]|[1-9][0-9]) ;; *) fail "THREADS must list thread counts (got '$th')" ;; esac
done
[ -d "$data" ] || fail "no benchmark data at $data (set ICD_SHARED to the shared folder)"
command -v node >/dev/null || fail "node is not installed (scripts/install-deps.sh)"
command -v python3 >/dev/null || fail "python3 is not installed"
if [ "${NOBUILD:-0}" != 1 ] && [ -z "${ICEDRUID:-}" ]; then
  bash "$root/scripts/build.sh" release >/dev/null || fail "scripts/build.sh release failed"
fi
[ -x "$icedruid" ] || fail "no icedruid binary at $icedruid (run: bash scripts/build.sh release)"

files=()
for f in "$data"/*.parquet; do
  case "$f" in *deletes.parquet) [ "${DELETES:-0}" = 1 ] || continue ;; esac
  files+=("$f")
done
[ ${#files[@]} -gt 0 ] || fail "no .parquet files in $data"

bash "$root/scripts/node-deps.sh" >/dev/null || fail "scripts/node-deps.sh failed (npm install of @duckdb/node-api)"

work=$(mktemp -d "${TMPDIR:-/tmp}/icd-bench-cat.XXXXXX")
if [ "${KEEP:-0}" != 1 ]; then trap 'rm -rf "$work"' EXIT; fi
mkdir -p "$work/duckdb" "$work/perfile"

# measure RESULT OUT CMD...: runs CMD with stdout to OUT; RESULT gets
# "WALL_S USER_S SYS_S MAXRSS_KIB".
measure() {
  local res=$1 out=$2; shift 2
  if [ -x /usr/bin/time ]; then
    /usr/bin/time -f "%e %U %S %M" -o "$res.raw" "$@" >"$out" || return 1
    tail -1 "$res.raw" >"$res"
  else # getrusage of the child, through python3
    python3 - "$res" "$out" "$@" <<'PY'
import resource, subprocess, sys, time
res, out, cmd = sys.argv[1], sys.argv[2], sys.argv[3:]
t = time.monotonic()
with open(out, "wb") as f:
    rc = subprocess.call(cmd, stdout=f)
wall = time.monotonic() - t
ru = resource.getrusage(resource.RUSAGE_CHILDREN)
open(res, "w").write("%.2f %.2f %.2f %d\n" % (wall, ru.ru_utime, ru.ru_stime, ru.ru_maxrss))
sys.exit(rc)
PY
  fi
}
export -f measure

# keep_best NEW BEST: keeps, in BEST, the line of the fastest run (by wall time) so far.
keep_best() {
  local new=$1 best=$2
  if [ ! -s "$best" ] || awk -v a="$(awk '{print $1}' "$new")" -v b="$(awk '{print $1}' "$best")" \
       'BEGIN { exit !(a < b) }'; then cp "$new" "$best"; fi
}

# rows_ids FILE...: "ROWS SUM_OF_IDS" of NDJSON files (every line starts {"id":N).
rows_ids() {
  python3 - "$@" <<'PY'
import re, sys
pat = re.compile(rb'^\{"id":(-?\d+)[,}]')
rows = total = 0
for path in sys.argv[1:]:
    with open(path, "rb") as f:
        for line in f:
            m = pat.match(line)
            if not m:
                sys.exit(f"bench_cat: {path}: a line without a leading id: {line[:120]!r}")
            rows += 1
            total += int(m.group(1))
print(rows, total)
PY
}

now() { date +%s.%N; }

echo "bench_cat: ${#files[@]} files, threads: $threads_list, runs: $runs, $(nproc) CPUs, load: $(cut -d' ' -f1-3 /proc/loadavg)"
bad=0
for th in $threads_list; do
  for r in $(seq "$runs"); do
    measure "$work/ice.$th.t" "$work/ice.ndjson" "$icedruid" cat --threads "$th" "${files[@]}" ||
      code=1 fail "icedruid cat --threads $th failed"
    keep_best "$work/ice.$th.t" "$work/ice.$th.best"
    measure "$work/duck.$th.t" "$work/duck.$th.json" node "$root/bench/duckdb_export.mjs" "$th" \
      "$work/duckdb" "${files[@]}" || code=1 fail "DuckDB export (threads=$th) failed"
    # the COPY's own wall and CPU time (without Node and DuckDB start-up) as fields 5 and 6
    python3 -c 'import json,sys; d=json.load(open(sys.argv[2])); print(open(sys.argv[1]).read().strip(), "%.3f %.3f" % (d["seconds"], d["cpuSeconds"]))' \
      "$work/duck.$th.t" "$work/duck.$th.json" >"$work/duck.$th.t2" && mv "$work/duck.$th.t2" "$work/duck.$th.t"
    keep_best "$work/duck.$th.t" "$work/duck.$th.best"
    if [ "${PERFILE:-0}" = 1 ]; then
      t0=$(now)
      printf '%s\n' "${files[@]}" | xargs -P "$th" -I{} bash -c '
        f={}; n=$(basename "$f" .parquet)
        measure "'"$work"'/perfile/$n.t" "'"$work"'/perfile/$n.ndjson" "'"$icedruid"'" cat "$f"' ||
        code=1 fail "icedruid cat (one process per file) failed"
      t1=$(now)
      # wall of the whole loop, summed CPU, largest RSS
      cat "$work"/perfile/*.t | awk -v w="$(python3 -c "print($t1 - $t0)")" \
        '{ u += $2; s += $3; if ($4 > m) m = $4 } END { printf "%.2f %.2f %.2f %d\n", w, u, s, m }' \
        >"$work/pf.$th.t"
      keep_best "$work/pf.$th.t" "$work/pf.$th.best"
    fi
  done
  read -r ir ii < <(rows_ids "$work/ice.ndjson") || bad=1
  read -r dr di < <(rows_ids "$work"/duckdb/*.ndjson) || bad=1
  echo "bench_cat: threads=$th: icedruid $ir rows (sum of ids $ii), DuckDB $dr rows (sum of ids $di)"
  if [ "$ir" != "$dr" ] || [ "$ii" != "$di" ]; then bad=1; fi
  if [ "${PERFILE:-0}" = 1 ]; then
    read -r pr pi < <(rows_ids "$work"/perfile/*.ndjson) || bad=1
    if [ "$pr" != "$dr" ] || [ "$pi" != "$di" ]; then bad=1; fi
  fi
  [ "${KEEP:-0}" = 1 ] || rm -f "$work/ice.ndjson" "$work"/duckdb/*.ndjson "$work"/perfile/*.ndjson
done
[ $bad = 0 ] || code=1 fail "ROW COUNTS OR IDS DIFFER (see above)"

rc=0
python3 - "$work" "$ir" "${PERFILE:-0}" $threads_list <<'PY' || rc=$?
import sys
work, rows, perfile, ths = sys.argv[1], int(sys.argv[2]), sys.argv[3] == "1", sys.argv[4:]
def t(name):
    f = open(f"{work}/{name}.best").read().split()
    return float(f[0]), float(f[1]) + float(f[2]), int(f[3]) / 1024, f[4:]
goals = True
print()
print(f"{'threads':>7} {'run':<34} {'wall s':>7} {'cpu s':>7} {'rows/s (wall)':>14} {'peak RSS MiB':>13}")
summary = []
for th in ths:
    ice, duck = t(f"ice.{th}"), t(f"duck.{th}")
    copy_wall, copy_cpu = float(duck[3][0]), float(duck[3][1])
    print(f"{th:>7} {'icedruid cat --threads ' + th:<34} {ice[0]:>7.2f} {ice[1]:>7.2f} {rows / ice[0]:>14,.0f} {ice[2]:>13.1f}")
    print(f"{th:>7} {'DuckDB, Node process':<34} {duck[0]:>7.2f} {duck[1]:>7.2f} {rows / duck[0]:>14,.0f} {duck[2]:>13.1f}")
    print(f"{th:>7} {'  DuckDB COPY alone':<34} {copy_wall:>7.2f} {copy_cpu:>7.2f} {rows / copy_wall:>14,.0f}")
    if perfile:
        pf = t(f"pf.{th}")
        print(f"{th:>7} {'icedruid cat, a process per file':<34} {pf[0]:>7.2f} {pf[1]:>7.2f} {rows / pf[0]:>14,.0f} {pf[2]:>13.1f}")
    vs_copy = copy_wall / ice[0]
    ok = vs_copy >= 1.5 and ice[2] < duck[2]
    goals &= ok
    summary.append(f"threads={th}: rows/s icedruid/DuckDB {vs_copy:.2f}x against the COPY alone "
                   f"(goal >= 1.5; by CPU time {copy_cpu / ice[1]:.2f}x), {duck[0] / ice[0]:.2f}x end to end "
                   f"(by CPU time {duck[1] / ice[1]:.2f}x); peak RSS {ice[2]:.1f} vs {duck[2]:.1f} MiB "
                   f"-> {'met' if ok else 'MISSED'}")
print()
print("\n".join(summary))
print("icedruid's times include its process start-up; DuckDB's end-to-end times include Node and "
      "DuckDB start-up, the COPY alone does not. DuckDB's RSS is the Node process's.")
sys.exit(0 if goals else 4)
PY
[ "${KEEP:-0}" = 1 ] && echo "bench_cat: work folder kept in $work"
exit $rc
