#!/usr/bin/env bash
# The `scan` benchmark: merge-on-read of the bench2m table (2,020,000 rows in 11 data
# files, one position-delete file, one equality-delete file) to NDJSON by
#   (a) icedruid scan TABLE --threads N
#   (b) DuckDB doing the same merge-on-read in SQL (bench/duckdb_scan.mjs, SET threads = N)
#   (c) icedruid scan of the same data files WITHOUT the delete files (a copy of the
#       metadata whose manifest list holds only the data manifests, bench/nodelete_variant.py)
# in the same run, for N = 1 and 2, and compares rows/s, CPU time and peak RSS. Both
# merge-on-read outputs must hold 1,819,104 rows whose ids sum to 1,839,299,213,850
# (bench/README.md, $ICD_SHARED/bench/README.md).
#
# Usage: bash bench/bench_scan.sh
#   THREADS="1 2"  thread counts to run (default "1 2")
#   RUNS=N         runs of each measurement, the fastest is kept (default 3)
#   NOBUILD=1      do not run scripts/build.sh release (use ICEDRUID or build/icedruid)
#   ICEDRUID=...   the icedruid binary (default build/icedruid)
#   ICD_SHARED=..  the shared material (default ../shared next to the checkout)
#   KEEP=1         keep the work folder (outputs, timings)
# Exit: 0 ok and all goals met, 1 a run failed or the outputs are wrong, 2 something
#       needed is missing, 4 outputs right but a goal was missed.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
shared=${ICD_SHARED:-$root/../shared}
table=$shared/bench/bench2m/table
prefix=/tmp/icedruid-corpus/bench2m/table
icedruid=${ICEDRUID:-$root/build/icedruid}
threads_list=${THREADS:-"1 2"}
runs=${RUNS:-3}
want_rows=1819104
want_idsum=1839299213850

fail() { echo "bench_scan: $*" >&2; exit "${code:-2}"; }
[ -d "$table/metadata" ] || fail "no benchmark table at $table (set ICD_SHARED to the shared folder)"
command -v node >/dev/null || fail "node is not installed (scripts/install-deps.sh)"
command -v python3 >/dev/null || fail "python3 is not installed"

bash "$root/scripts/node-deps.sh" >/dev/null || fail "scripts/node-deps.sh failed (npm install of @duckdb/node-api)"
if [ "${NOBUILD:-0}" != 1 ]; then
  bash "$root/scripts/build.sh" release >/dev/null || fail "scripts/build.sh release failed"
fi
[ -x "$icedruid" ] || fail "no icedruid binary at $icedruid"

work=$(mktemp -d "${TMPDIR:-/tmp}/icd-bench-scan.XXXXXX")
if [ "${KEEP:-0}" != 1 ]; then trap 'rm -rf "$work"' EXIT; fi

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

# best RESULT: keeps, in RESULT, the line of the fastest run (by wall time) so far.
keep_best() {
  local new=$1 best=$2
  if [ ! -s "$best" ] || awk -v a="$(awk '{print $1}' "$new")" -v b="$(awk '{print $1}' "$best")" \
       'BEGIN { exit !(a < b) }'; then cp "$new" "$best"; fi
}

# check NAME FILE: row count and sum of ids of an NDJSON output (every line starts {"id":N).
check() {
  python3 - "$1" "$2" "$want_rows" "$want_idsum" <<'PY' || return 1
import re, sys
name, path, want_rows, want_sum = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
pat = re.compile(rb'"id":(-?\d+)[,}]')
rows = total = 0
with open(path, "rb") as f:
    for line in f:
        m = pat.search(line)
        if not m:
            sys.exit(f"bench_scan: {name}: a line without an id: {line[:120]!r}")
        rows += 1
        total += int(m.group(1))
ok = rows == want_rows and total == want_sum
print(f"bench_scan: {name}: {rows} rows, sum(id) {total} -> {'ok' if ok else 'WRONG'}")
sys.exit(0 if ok else 1)
PY
}

remap=(--remap "$prefix=$table")
"$icedruid" tasks "$table" "${remap[@]}" >"$work/tasks.json" || code=1 fail "icedruid tasks failed"
python3 "$root/bench/nodelete_variant.py" "$icedruid" "$table" "$prefix" "$work" >/dev/null ||
  code=1 fail "could not write the no-delete metadata variant"
nodel=$work/nodeletes.metadata.json

echo "bench_scan: bench2m, threads: $threads_list, runs: $runs, $(nproc) CPUs, load: $(cut -d' ' -f1-3 /proc/loadavg)"
bad=0
for th in $threads_list; do
  for r in $(seq "$runs"); do
    measure "$work/ice.$th.t" "$work/ice.ndjson" "$icedruid" scan "$table" "${remap[@]}" --threads "$th" ||
      code=1 fail "icedruid scan --threads $th failed"
    keep_best "$work/ice.$th.t" "$work/ice.$th.best"
    measure "$work/duck.$th.t" "$work/duck.$th.json" node "$root/bench/duckdb_scan.mjs" "$th" \
      "$work/tasks.json" "$prefix" "$table" "$work/duck.ndjson" || code=1 fail "DuckDB (threads=$th) failed"
    # the COPY's own time (without Node and DuckDB start-up) as a fifth field
    python3 -c 'import json,sys; print(open(sys.argv[1]).read().strip(), "%.3f" % json.load(open(sys.argv[2]))["seconds"])' \
      "$work/duck.$th.t" "$work/duck.$th.json" >"$work/duck.$th.t2" && mv "$work/duck.$th.t2" "$work/duck.$th.t"
    keep_best "$work/duck.$th.t" "$work/duck.$th.best"
    measure "$work/nodel.$th.t" "$work/nodel.ndjson" "$icedruid" scan "$nodel" "${remap[@]}" --threads "$th" ||
      code=1 fail "icedruid scan (no deletes) --threads $th failed"
    keep_best "$work/nodel.$th.t" "$work/nodel.$th.best"
  done
  check "icedruid --threads $th" "$work/ice.ndjson" || bad=1
  check "DuckDB threads=$th" "$work/duck.ndjson" || bad=1
  nd=$(wc -l <"$work/nodel.ndjson")
  [ "$nd" = 2020000 ] || { echo "bench_scan: no-delete scan gave $nd rows, not 2020000" >&2; bad=1; }
  rm -f "$work/ice.ndjson" "$work/duck.ndjson" "$work/nodel.ndjson"
done
[ $bad = 0 ] || code=1 fail "wrong output (see above)"

rc=0
python3 - "$work" "$want_rows" $threads_list <<'PY' || rc=$?
import sys
work, rows, ths = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
def t(name):
    w, u, s, m = open(f"{work}/{name}.best").read().split()[:4]
    return float(w), float(u) + float(s), int(m) / 1024
def copy_only(th):
    return float(open(f"{work}/duck.{th}.best").read().split()[4])
goals = True
print()
print(f"{'threads':>7} {'run':<26} {'wall s':>7} {'cpu s':>7} {'rows/s (wall)':>14} {'peak RSS MiB':>13}")
summary = []
for th in ths:
    ice, duck, nod = t(f"ice.{th}"), t(f"duck.{th}"), t(f"nodel.{th}")
    for name, v, n in (("icedruid scan", ice, rows), ("DuckDB merge-on-read SQL", duck, rows),
                       ("icedruid scan, no deletes", nod, 2020000)):
        print(f"{th:>7} {name:<26} {v[0]:>7.2f} {v[1]:>7.2f} {n / v[0]:>14,.0f} {v[2]:>13.1f}")
    print(f"{th:>7} {'  (DuckDB COPY alone)':<26} {copy_only(th):>7.2f} {'':>7} {rows / copy_only(th):>14,.0f}")
    speed = duck[0] / ice[0]
    cpu = duck[1] / ice[1]
    rss = ice[2] / duck[2]
    dr = ice[0] / nod[0]
    drc = ice[1] / nod[1]
    ok = speed >= 2 and rss <= 0.5 and dr <= 1.15
    goals &= ok
    summary.append(f"threads={th}: rows/s icedruid/DuckDB {speed:.2f}x (goal >= 2; by CPU time "
                   f"{cpu:.2f}x, vs the COPY alone {copy_only(th) / ice[0]:.2f}x), peak RSS icedruid/DuckDB {rss:.2f} (goal <= 0.5), "
                   f"deletes/no-deletes time {dr:.2f} (goal <= 1.15; by CPU time {drc:.2f}) -> {'met' if ok else 'MISSED'}")
print()
print("\n".join(summary))
print("DuckDB wall/CPU include Node and DuckDB start-up (the COPY alone is shown too); "
      "icedruid's include its start-up and planning. DuckDB's RSS is the Node process's.")
sys.exit(0 if goals else 4)
PY
[ "${KEEP:-0}" = 1 ] && echo "bench_scan: work folder kept in $work"
exit $rc
