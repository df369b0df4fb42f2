#!/usr/bin/env bash
# What icedruid shows on a terminal and only there (issue 18), driven through tmux:
#   - scan/read draw a progress line on stderr (percentage, files, rows, rows/s, ETA) and
#     end with the row-accounting summary line; with stderr on a pipe or a file, neither;
#     --no-progress turns both off on a terminal too;
#   - the inspection commands print an aligned table on a terminal and JSON on a pipe.
set -uo pipefail
command -v tmux >/dev/null || { echo "skip: tmux is not installed (scripts/install-deps.sh)"; exit 77; }
I="$ICEDRUID"
src="$ICD_SOURCE_DIR"
T="$ICD_SHARED/corpus/icebird/g_many_small_files/table"
[ -d "$T" ] || { echo "skip: corpus table $T missing"; exit 77; }
R="--remap /tmp/icedruid-corpus/g_many_small_files/table=$T"
tmp=$(mktemp -d)
sock="icd-tty-$$"
trap 'tmux -L "$sock" kill-server 2>/dev/null; rm -rf "$tmp"' EXIT
fail=0
ok() { echo "ok   $1"; }
bad() { echo "FAIL $1"; fail=1; }

# on_tty NAME COMMAND: runs COMMAND in a fresh 200x50 tmux window (a terminal), waits for
# it to end, saves the screen to $tmp/NAME.screen
on_tty() {
    local name=$1 cmd=$2
    tmux -L "$sock" new-session -d -s "$name" -x 200 -y 50 \
        "bash -c '$cmd; echo __DONE__ rc=\$?; sleep 600'"
    for _ in $(seq 1 300); do
        tmux -L "$sock" capture-pane -p -J -S - -t "$name" >"$tmp/$name.screen" 2>/dev/null
        grep -q '__DONE__' "$tmp/$name.screen" && break
        sleep 0.1
    done
    tmux -L "$sock" kill-session -t "$name" 2>/dev/null
}

# ---- the progress line of scan, on a terminal ----------------------------------------
on_tty scan "$I scan $T $R --threads 2 >$tmp/scan.out"
s="$tmp/scan.screen"
grep -q '__DONE__ rc=0' "$s" && ok "scan on a terminal exits 0" || bad "scan: $(cat "$s")"
nfiles=$(grep -o '"data_files":[0-9]*' <("$I" scan "$T" $R --stats 2>&1 >/dev/null) | cut -d: -f2)
grep -qE "^icedruid scan: 100% \($nfiles/$nfiles files, [0-9.]+ [KMG]?i?B/[0-9.]+ [KMG]?i?B\), 17411 rows, [0-9]+ rows/s, ETA 0:00" "$s" \
    && ok "scan progress: 100%, $nfiles/$nfiles files, bytes, 17411 rows, rows/s, ETA" || bad "scan progress line: $(cat "$s")"
grep -q '^icedruid: 18000 rows read, 589 removed by position deletes, 0 by equality deletes, 0 by deletion vectors, 0 unparseable, 17411 emitted$' "$s" \
    && ok "scan summary line at the end on a terminal (18000 read, 589 removed, 17411 emitted)" || bad "scan summary: $(cat "$s")"
[ "$(wc -l <"$tmp/scan.out")" = 17411 ] && ok "the rows went to stdout untouched (17411)" || bad "scan rows: $(wc -l <"$tmp/scan.out")"
! grep -q 'ETA' "$tmp/scan.out" && ok "no progress in the output" || bad "progress in stdout"

# ---- the same with stderr on a pipe / a file: nothing --------------------------------
on_tty scanpipe "$I scan $T $R 2>&1 >/dev/null | cat >$tmp/pipe.err"
grep -q '__DONE__ rc=0' "$tmp/scanpipe.screen" && [ ! -s "$tmp/pipe.err" ] \
    && ok "stderr on a pipe: no progress, no summary line" || bad "pipe stderr: $(cat "$tmp/pipe.err")"
on_tty nop "$I scan $T $R --no-progress >/dev/null"
! grep -q 'ETA\|rows read' "$tmp/nop.screen" && grep -q '__DONE__ rc=0' "$tmp/nop.screen" \
    && ok "--no-progress on a terminal: nothing on stderr" || bad "--no-progress: $(cat "$tmp/nop.screen")"

# ---- read: progress and summary ---------------------------------------------------------
python3 - "$src/examples/orders.spec.json" "$tmp/orders.json" "$src/examples/warehouse" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
s["spec"]["ioConfig"]["inputSource"]["icebergCatalog"]["warehousePath"] = sys.argv[3]
json.dump(s, open(sys.argv[2], "w"))
PY
on_tty read "$I read --spec $tmp/orders.json --remap /tmp/icedruid-example/warehouse=$src/examples/warehouse >$tmp/read.out"
grep -qE '^icedruid read: 100% \(1/1 files, .*\), [0-9]+ rows, [0-9]+ rows/s, ETA 0:00' "$tmp/read.screen" \
    && ok "read progress line on a terminal" || bad "read progress: $(cat "$tmp/read.screen")"
grep -qE '^icedruid: [0-9]+ rows read, [0-9]+ removed by position deletes, [0-9]+ by equality deletes' "$tmp/read.screen" \
    && ok "read summary line" || bad "read summary: $(cat "$tmp/read.screen")"

# ---- stage: progress over the materialized files, then the summary ----------------------
on_tty stage "$I stage --spec $tmp/orders.json --to $tmp/staged --remap /tmp/icedruid-example/warehouse=$src/examples/warehouse >$tmp/stage.out"
grep -qE '^icedruid stage: 100% \(1/1 files, .*\), [0-9]+ rows, [0-9]+ rows/s, ETA 0:00' "$tmp/stage.screen" && grep -q '__DONE__ rc=0' "$tmp/stage.screen" \
    && ok "stage progress line on a terminal" || bad "stage progress: $(cat "$tmp/stage.screen")"
grep -qE '^icedruid: [0-9]+ rows read, [1-9][0-9]* removed by position deletes' "$tmp/stage.screen" \
    && ok "stage summary line" || bad "stage summary: $(cat "$tmp/stage.screen")"
"$I" stage --spec "$tmp/orders.json" --to "$tmp/staged2" --remap "/tmp/icedruid-example/warehouse=$src/examples/warehouse" 2>"$tmp/stage.err" >/dev/null
[ "$(wc -l <"$tmp/stage.err")" = 1 ] && ! grep -q 'ETA' "$tmp/stage.err" && ok "stage on a pipe: the JSON summary only" || bad "stage pipe: $(cat "$tmp/stage.err")"

# ---- diff: progress over the changed files -----------------------------------------------
cat >"$tmp/g.json" <<JSON
{"type":"index_parallel","spec":{"dataSchema":{"dataSource":"g","timestampSpec":{"column":"ts","missingValue":"2024-01-01T00:00:00Z"},"dimensionsSpec":{"dimensions":["bucket"]},"granularitySpec":{"segmentGranularity":"day"}},"ioConfig":{"type":"index_parallel","inputSource":{"type":"iceberg","tableName":"table","namespace":"g_many_small_files","icebergCatalog":{"type":"local","warehousePath":"$ICD_SHARED/corpus/icebird"},"warehouseSource":{"type":"local"}}},"tuningConfig":{"type":"index_parallel"}}}
JSON
first=$("$I" snapshots "$T" $R --format json | python3 -c "import json,sys; print(json.load(sys.stdin)[0]['snapshot-id-str'])")
on_tty diff "$I diff --spec $tmp/g.json $R --from-snapshot $first >$tmp/diff.out"
grep -qE '^icedruid diff: 100% \([0-9]+/[0-9]+ files\), ETA 0:00' "$tmp/diff.screen" && grep -q '__DONE__ rc=0' "$tmp/diff.screen" \
    && ok "diff progress line on a terminal" || bad "diff progress: $(cat "$tmp/diff.screen")"
"$I" diff --spec "$tmp/g.json" $R --from-snapshot "$first" 2>"$tmp/diff.err" >"$tmp/diff2.out"
[ ! -s "$tmp/diff.err" ] && cmp -s "$tmp/diff.out" "$tmp/diff2.out" && ok "diff on a pipe: no progress, same output" || bad "diff pipe: $(cat "$tmp/diff.err")"

# ---- inspection: table on a terminal, JSON on a pipe -----------------------------------
on_tty snaps "$I snapshots $T $R"
grep -qE '^ *snapshot-id +parent-id +timestamp +operation +sequence-number +schema-id +current +manifest-list' "$tmp/snaps.screen" \
    && ok "snapshots on a terminal: a header of aligned columns" || bad "snapshots table: $(head -3 "$tmp/snaps.screen")"
grep -qE '^ *3870117123220064 +[0-9]+ +20[0-9-]+T[0-9:.+-]+ +delete +30 ' "$tmp/snaps.screen" \
    && ok "snapshots on a terminal: the current snapshot's row" || bad "snapshots row: $(grep 3870117123220064 "$tmp/snaps.screen")"
! grep -q '{' "$tmp/snaps.screen" && ok "no JSON on the terminal" || bad "JSON on the terminal"
on_tty snapspipe "$I snapshots $T $R | cat"
grep -q '^\[{"snapshot-id":' "$tmp/snapspipe.screen" && ok "snapshots on a pipe: JSON" || bad "snapshots pipe: $(head -2 "$tmp/snapspipe.screen")"
on_tty schema "$I schema $T $R"
grep -qE '^field-id +name +type +required' "$tmp/schema.screen" && ok "schema on a terminal: a table" || bad "schema: $(head -3 "$tmp/schema.screen")"
on_tty files "$I files $T $R --format json | head -c 300"
grep -q '^\[{"content":"data"' "$tmp/files.screen" && ok "--format json on a terminal is JSON" || bad "files json: $(head -2 "$tmp/files.screen")"
"$I" history "$T" $R >"$tmp/h.json" && python3 -c "import json,sys; r=json.load(open(sys.argv[1])); assert len(r)==30 and r[-1]['is-current-ancestor'] is True" "$tmp/h.json" \
    && ok "history on a pipe: 30 JSON rows" || bad "history json"
"$I" files "$T" $R --format table | sed -n 1p | grep -qE '^content +format +record-count +file-size +sequence-number +path' \
    && ok "--format table on a pipe is a table" || bad "files table on a pipe"

exit $fail
