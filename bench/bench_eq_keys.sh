#!/usr/bin/env bash
# The "many equality-delete keys" benchmark (issue 17): a table whose one equality delete
# file holds KEYS keys (bench/gen_eq_keys.py: long, string or two-column keys; data
# max(2 * KEYS, 2M) rows in 8 files, KEYS of them deleted), read by
#   (a) icedruid scan TABLE --columns id --threads T -o /dev/null --stats
#   (b) DuckDB: COPY (SELECT id FROM data ANTI JOIN (SELECT DISTINCT keys FROM eq) ON
#       IS NOT DISTINCT FROM) TO '/dev/null' (FORMAT json), SET threads = T
#       (bench/duckdb_eq.mjs scan)
#   (c) optionally an older icedruid binary (BEFORE=path) for before/after figures
# in the same run. Only `id` is written so the figures measure reading the key columns and
# the delete index rather than JSON formatting. Both sides must emit the live row count.
#
# Usage: bash bench/bench_eq_keys.sh [KEYS...]      (default: 100000 1000000 5000000 20000000)
#   KINDS="long string pair"  THREADS="1 2"  RUNS=3 (best of, by wall time)
#   NOBUILD=1 (use build/icedruid as it is)  BEFORE=path/to/old/icedruid  KEEP=1
#   WORK=dir (where the tables are written; default a mktemp folder under $TMPDIR)
# Prints per (kind, keys, threads, side): wall s, CPU s (user + sys), peak RSS MiB, rows;
# then the ratios: DuckDB time / icedruid time, end to end (the node process) and against
# the COPY alone (no Node/DuckDB start-up), RSS icedruid / DuckDB, and icedruid's speed-up
# from 1 to 2 threads. Exit 1 when a row count is wrong, 2 when something is missing.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
icedruid=${ICEDRUID:-$root/build/icedruid}
threads_list=${THREADS:-"1 2"}
kinds=${KINDS:-"long string pair"}
runs=${RUNS:-3}
sizes=${*:-100000 1000000 5000000 20000000}
before=${BEFORE:-}
[ "${NOBUILD:-0}" = 1 ] || bash "$root/scripts/build.sh" release >/dev/null
bash "$root/scripts/node-deps.sh" >/dev/null
[ -x "$icedruid" ] || { echo "bench_eq_keys: no icedruid at $icedruid" >&2; exit 2; }
work=${WORK:-$(mktemp -d "${TMPDIR:-/tmp}/icd-bench-eq.XXXXXX")}
mkdir -p "$work"
[ "${KEEP:-0}" = 1 ] || trap 'rm -rf "$work"' EXIT

# best RUNS CMD...: runs CMD (stdout to $work/out) RUNS times; prints the fastest run by
# wall time as "WALL CPU MAXRSS_KIB", and leaves that run's stdout/stderr in $work/best.*
best() {
  local n=$1 i bw=
  shift
  for ((i = 0; i < n; i++)); do
    /usr/bin/time -f "%e %U %S %M" -o "$work/time" "$@" >"$work/out" 2>"$work/err" || {
      cat "$work/err" >&2; return 1; }
    read -r w u s m < <(tail -1 "$work/time")
    if [ -z "$bw" ] || awk -v a="$w" -v b="$bw" 'BEGIN{exit !(a < b)}'; then
      bw=$w; bc=$(awk -v u="$u" -v s="$s" 'BEGIN{printf "%.2f", u + s}'); bm=$m
      cp "$work/out" "$work/best.out"; cp "$work/err" "$work/best.err"
    fi
  done
  echo "$bw $bc $bm"
}

json() { python3 -c 'import json,sys; v=json.loads(sys.argv[1])[sys.argv[2]]; print(" ".join(v) if isinstance(v, list) else v)' "$1" "$2"; }
emitted() { python3 -c 'import json,sys; print(json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])["rows_emitted"])' "$1"; }

printf "%-6s %9s %3s %-16s %7s %7s %8s %9s\n" kind keys thr side wall_s cpu_s rss_MiB rows
status=0
for keys in $sizes; do
  for kind in $kinds; do
    table=$work/$kind-$keys
    rm -rf "$table"
    info=$(python3 "$root/bench/gen_eq_keys.py" "$table" "$kind" "$keys")
    loc=$(json "$info" location); live=$(json "$info" live_rows)
    eq=$(json "$info" eq); kcols=$(json "$info" keys); read -r -a data <<<"$(json "$info" data)"
    declare -A wall=() cpu=() rss=()
    for t in $threads_list; do
      sides="icedruid duckdb"
      [ -n "$before" ] && sides="before $sides"
      for side in $sides; do
        case $side in
          icedruid|before)
            bin=$icedruid; [ "$side" = before ] && bin=$before
            read -r w c m < <(best "$runs" "$bin" scan "$table" --remap "$loc=$table" \
              --columns id --threads "$t" -o /dev/null --stats)
            rows=$(emitted "$work/best.err") ;;
          duckdb)
            read -r w c m < <(best "$runs" node "$root/bench/duckdb_eq.mjs" scan "$t" /dev/null \
              "$eq" "$kcols" "${data[@]}")
            rows=$(json "$(cat "$work/best.out")" rows)
            copy=$(json "$(cat "$work/best.out")" seconds)
            wall[copy$t]=$copy ;;
        esac
        wall[$side$t]=$w; cpu[$side$t]=$c; rss[$side$t]=$m
        printf "%-6s %9s %3s %-16s %7s %7s %8.1f %9s\n" "$kind" "$keys" "$t" "$side" "$w" "$c" \
          "$(awk -v k="$m" 'BEGIN{print k/1024}')" "$rows"
        if [ "$rows" != "$live" ]; then
          echo "bench_eq_keys: $side emitted $rows rows, want $live" >&2; status=1
        fi
      done
      printf "%-6s %9s %3s %-16s %7.2f\n" "$kind" "$keys" "$t" "(DuckDB COPY)" "${wall[copy$t]}"
      python3 - "${wall[icedruid$t]}" "${cpu[icedruid$t]}" "${rss[icedruid$t]}" "${wall[duckdb$t]}" \
        "${cpu[duckdb$t]}" "${rss[duckdb$t]}" "${wall[copy$t]}" "${wall[before$t]:-0}" <<'PY'
import sys
iw, ic, ir, dw, dc, dr, cw, bw = map(float, sys.argv[1:])
m = lambda a, b: a / max(b, 0.005)
line = (f"       ratios: DuckDB/icedruid wall {m(dw, iw):.2f}x (CPU {m(dc, ic):.2f}x), "
        f"vs COPY alone {m(cw, iw):.2f}x; RSS icedruid/DuckDB {ir / dr:.2f}")
if bw: line += f"; before/after wall {m(bw, iw):.2f}x"
print(line)
PY
    done
    read -r t1 t2 _ <<<"$threads_list"
    if [ -n "${t2:-}" ]; then
      python3 -c 'import sys; a, b = map(float, sys.argv[1:3]); print(f"       icedruid speed-up {sys.argv[3]} -> {sys.argv[4]} threads: {a / max(b, 0.005):.2f}x")' \
        "${wall[icedruid$t1]}" "${wall[icedruid$t2]}" "$t1" "$t2"
    fi
    unset wall cpu rss
    [ "${KEEP:-0}" = 1 ] || rm -rf "$table"
  done
done
exit $status
