#!/usr/bin/env bash
# The command-line defects of issue 18, one check each: the exact command and the exact
# message or exit code (usage errors exit 2, runtime failures 1, everywhere).
set -uo pipefail
src="$ICD_SOURCE_DIR"
I="$ICEDRUID"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$src" # the example specs name examples/warehouse relative to the checkout
R="--remap /tmp/icedruid-example/warehouse=$src/examples/warehouse"
EV="$src/examples/warehouse/demo/events"
fail=0
ok() { echo "ok   $1"; }
bad() { echo "FAIL $1"; fail=1; }
# expect DESCRIPTION RC STDERR-SUBSTRING -- COMMAND...
expect() {
    local what=$1 rc=$2 msg=$3; shift 4
    "$@" >"$tmp/out" 2>"$tmp/err"
    local got=$?
    if [ "$got" != "$rc" ]; then bad "$what: exit $got, want $rc ($(head -c 300 "$tmp/err"))"; return; fi
    if [ -n "$msg" ] && ! grep -qF -- "$msg" "$tmp/err"; then
        bad "$what: stderr lacks [$msg]: $(head -c 400 "$tmp/err")"; return
    fi
    ok "$what"
}
# spec NAME BASE PYTHON-EDIT: a copy of an example spec with `s` edited
spec() {
    python3 - "$src/examples/$2.spec.json" "$tmp/$1.json" "$3" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
ds, io, tc = s["spec"]["dataSchema"], s["spec"]["ioConfig"], s["spec"]["tuningConfig"]
isrc = io["inputSource"]
exec(sys.argv[3])
json.dump(s, open(sys.argv[2], "w"))
PY
}

# ---- per-command help, from the one command table -----------------------------------
cmds=$("$I" --help | sed -n '/^commands:/,/^$/p' | awk 'NF && $1 != "commands:" && /^  [a-z]/ {print $1}')
[ "$(echo "$cmds" | wc -l)" -ge 16 ] && ok "--help lists $(echo $cmds | wc -w) commands" || bad "--help lists too few commands: $cmds"
for c in $cmds; do
    if "$I" "$c" --help >"$tmp/h" 2>&1 && grep -q "^usage: icedruid $c " "$tmp/h" && grep -q -- '--no-progress' "$tmp/h"; then
        ok "$c --help (exit 0, usage line, global options)"
    else
        bad "$c --help: $(head -3 "$tmp/h")"
    fi
    cat "$tmp/h" >>"$tmp/all_help"
done
"$I" --help >>"$tmp/all_help"
wide=$(awk 'length($0) > 80' "$tmp/all_help")
[ -z "$wide" ] && ok "help text fits 80 columns" || bad "help lines over 80 columns: $(echo "$wide" | head -2)"
# a one-letter first word keeps its space ("arequest header" before)
grep -q -- '--header-timeout S        a request header' "$tmp/all_help" && ok "a one-letter first word of a help text keeps its space" || bad "help text: a one-letter first word is glued to the next"
"$I" serve --help >"$tmp/serve_help" && grep -q -- '--listen HOST:PORT' "$tmp/serve_help" && ok "serve --help shows --listen" || bad "serve --help lacks --listen"
"$I" read --help >"$tmp/read_help" && grep -q -- '--limit N' "$tmp/read_help" && ok "read --help shows --limit" || bad "read --help lacks --limit"
"$I" diff --help >"$tmp/diff_help" && grep -q -- '--emit WHAT' "$tmp/diff_help" && ok "diff --help shows --emit" || bad "diff --help lacks --emit"
"$I" help scan >"$tmp/help_scan" && grep -q '^usage: icedruid scan TABLE' "$tmp/help_scan" && ok "icedruid help scan" || bad "icedruid help scan"
expect "icedruid help NOSUCH" 2 "icedruid: unknown command 'snapshot' (did you mean 'snapshots'?)" -- "$I" help snapshot
expect "--version from the CMake version" 0 "" -- "$I" --version
grep -q "^icedruid $(sed -n 's/^project(icedruid VERSION \([0-9.]*\).*/\1/p' "$src/CMakeLists.txt")$" "$tmp/out" && ok "--version prints project(VERSION)" || bad "--version: $(cat "$tmp/out")"

# ---- --opt=value, did you mean ------------------------------------------------------
"$I" scan "$EV" $R --columns event_id --threads 2 >"$tmp/a" 2>&1
"$I" scan "$EV" --remap="/tmp/icedruid-example/warehouse=$src/examples/warehouse" --columns=event_id --threads=2 >"$tmp/b" 2>&1
# (two threads: the order of the files' rows may differ between runs)
[ -s "$tmp/a" ] && cmp -s <(sort "$tmp/a") <(sort "$tmp/b") && ok "--opt=value equals --opt value" || bad "--opt=value differs: $(head -2 "$tmp/b")"
expect "mistyped command" 2 "icedruid: unknown command 'scna' (did you mean 'scan'?)" -- "$I" scna "$EV"
expect "mistyped option" 2 "icedruid scan: unknown option '--snapshot-idd' (did you mean '--snapshot-id'?)" -- "$I" scan "$EV" --snapshot-idd 1
expect "mistyped option with =" 2 "unknown option '--thread' (did you mean '--threads'?)" -- "$I" read --spec x --thread=2
expect "flag given a value" 2 "option '--stats' takes no value" -- "$I" scan "$EV" --stats=1
expect "missing value" 2 "icedruid scan: option '--columns' needs a value (a,b,c)" -- "$I" scan "$EV" --columns
expect "serve --decode-threads out of range" 2 "icedruid serve: --decode-threads expects a number from 1 to 4096, not '0'" -- "$I" serve --spec examples/events.spec.json $R --decode-threads 0

# ---- -o on scan / tasks ---------------------------------------------------------------
"$I" scan "$EV" $R >"$tmp/a.all"
"$I" scan "$EV" $R -o "$tmp/scan.ndjson" >"$tmp/out" 2>"$tmp/err"
[ $? = 0 ] && [ ! -s "$tmp/out" ] && [ -s "$tmp/a.all" ] && cmp -s "$tmp/scan.ndjson" "$tmp/a.all" && ok "scan -o FILE writes FILE, not stdout" || bad "scan -o: $(cat "$tmp/err")"
"$I" tasks "$EV" $R --output="$tmp/tasks.json" >"$tmp/out" 2>"$tmp/err"
[ $? = 0 ] && [ ! -s "$tmp/out" ] && python3 -c "import json,sys; json.load(open(sys.argv[1]))" "$tmp/tasks.json" && ok "tasks --output=FILE writes FILE" || bad "tasks -o: $(cat "$tmp/err")"
expect "scan -o into a missing directory keeps strerror" 1 "$tmp/no/such: cannot create the output file: No such file or directory" -- "$I" scan "$EV" $R -o "$tmp/no/such"

# ---- --serve-url without a scheme ----------------------------------------------------
expect "--serve-url without scheme refused" 2 "icedruid rewrite-spec: --serve-url expects an http:// or https:// URL, got '127.0.0.1:8200'" -- "$I" rewrite-spec --spec examples/orders.spec.json $R --serve-url 127.0.0.1:8200
expect "--serve-url with scheme accepted" 0 "" -- "$I" rewrite-spec --spec examples/orders.spec.json $R --serve-url http://127.0.0.1:8200

# ---- --remap vs warehouseSource -------------------------------------------------------
spec s3ws events 'isrc["warehouseSource"] = {"type": "s3"}'
expect "remapped local path into an s3 warehouseSource refused" 1 \
    "icedruid: the location '$src/examples/warehouse/demo/events/data/event_ts_day=2024-06-02/00002-data.parquet' handed to Druid does not fit the warehouseSource of type 's3', which takes s3:// or s3a:// URIs; it is what --remap made of '/tmp/icedruid-example/warehouse/demo/events/data/event_ts_day=2024-06-02/00002-data.parquet': give --druid-locations original" \
    -- "$I" plan --spec "$tmp/s3ws.json" $R
expect "rewrite-spec refuses it the same way" 1 "does not fit the warehouseSource of type 's3'" -- "$I" rewrite-spec --spec "$tmp/s3ws.json" $R
"$I" plan --spec examples/events.spec.json $R --druid-locations original >"$tmp/orig.json" 2>"$tmp/err"
python3 - "$tmp/orig.json" <<'PY' && ok "--druid-locations original hands Druid the table's own locations" || bad "--druid-locations original: $(cat "$tmp/err")"
import json, sys
files = json.load(open(sys.argv[1]))["inputSource"]["files"]
assert files and all(f.startswith("/tmp/icedruid-example/warehouse/demo/events/data/") for f in files), files
PY
"$I" plan --spec examples/events.spec.json $R >"$tmp/remapped.json" 2>"$tmp/err"
grep -qF "\"$src/examples/warehouse/demo/events/data/" "$tmp/remapped.json" && ok "default: Druid gets the remapped locations" || bad "default locations: $(head -c 300 "$tmp/remapped.json")"
expect "--druid-locations value checked" 2 "--druid-locations expects one of: remapped original; got 'mine'" -- "$I" plan --spec x --druid-locations mine

# ---- spec columns checked before reading ----------------------------------------------
spec tsbad events 'ds["timestampSpec"] = {"column": "nope"}; tc["maxParseExceptions"] = 1000000'
expect "timestamp column not in the schema" 1 "icedruid: the timestampSpec column 'nope' is not a column of the table (columns: event_id, event_ts, user_id, event_type, value)" -- "$I" read --spec "$tmp/tsbad.json" $R
[ ! -s "$tmp/out" ] && ! grep -q unparseable "$tmp/err" && ok "... before any row is read" || bad "rows were read"
spec dimbad events 'ds["dimensionsSpec"]["dimensions"].append("usr_id")'
expect "dimension not in the schema" 1 "dimension 'usr_id' is not a column of the table" -- "$I" plan --spec "$tmp/dimbad.json" $R
spec metbad events 'ds["metricsSpec"] = [{"type": "doubleSum", "name": "v", "fieldName": "valeu"}]'
expect "metric input not in the schema" 1 "the metrics' input field 'valeu' is not a column of the table" -- "$I" plan --spec "$tmp/metbad.json" $R
spec filtbad events 'ds["transformSpec"] = {"filter": {"type": "selector", "dimension": "evnt_type", "value": "x"}}'
expect "transformSpec filter column not in the schema" 1 "transformSpec filter column 'evnt_type' is not a column of the table" -- "$I" plan --spec "$tmp/filtbad.json" $R
spec tsxform events 'ds["timestampSpec"] = {"column": "ts2"}; ds["transformSpec"] = {"transforms": [{"type": "expression", "name": "ts2", "expression": "event_ts"}]}'
expect "a transform's output is a known column" 0 "" -- "$I" plan --spec "$tmp/tsxform.json" $R
spec flat events 'ds["dimensionsSpec"]["dimensions"].append("flat_user"); io["inputFormat"] = {"type": "parquet", "flattenSpec": {"fields": [{"type": "path", "name": "flat_user", "expr": "$.user_id"}]}}'
expect "a flattenSpec field is a known column" 0 "" -- "$I" plan --spec "$tmp/flat.json" $R
spec tsmv events 'ds["timestampSpec"] = {"column": "nope", "missingValue": "2020-01-01T00:00:00Z"}'
expect "an absent timestamp column with missingValue is fine" 0 "" -- "$I" plan --spec "$tmp/tsmv.json" $R

# ---- snapshot ids as strings, "no such snapshot" lists them ---------------------------
"$I" snapshots "$EV" --format json >"$tmp/snaps.json" 2>"$tmp/err"
python3 - "$tmp/snaps.json" <<'PY' && ok "snapshots --format json: ids also as strings" || bad "snapshot id strings"
import json, sys
rows = json.load(open(sys.argv[1]))
assert len(rows) == 2 and all(str(r["snapshot-id"]) == r["snapshot-id-str"] for r in rows), rows
assert rows[1]["parent-id-str"] == rows[0]["snapshot-id-str"]
PY
"$I" tasks "$EV" $R | python3 -c "import json,sys; j=json.load(sys.stdin); assert j['snapshot_id_str']==str(j['snapshot_id'])" && ok "tasks: snapshot_id_str" || bad "tasks snapshot_id_str"
"$I" plan --spec examples/orders.spec.json $R | python3 -c "import json,sys; j=json.load(sys.stdin); assert j['snapshotIdStr']==str(j['snapshotId'])" && ok "plan: snapshotIdStr" || bad "plan snapshotIdStr"
"$I" diff --spec examples/events.spec.json $R --from-snapshot 1472091673951529008 | python3 -c "import json,sys; j=json.load(sys.stdin); assert j['fromSnapshotStr']=='1472091673951529008' and j['toSnapshotStr']==str(j['toSnapshot'])" && ok "diff: fromSnapshotStr / toSnapshotStr" || bad "diff snapshot strings"
# the string from JSON feeds the next command unchanged (jq 1.6 would round the number)
id=$("$I" snapshots "$EV" | python3 -c "import json,sys; print(json.load(sys.stdin)[0]['snapshot-id-str'])")
expect "a snapshot-id-str feeds --snapshot-id" 0 "" -- "$I" scan "$EV" $R --snapshot-id "$id"
expect "scan --snapshot-id unknown lists the existing ones" 1 "no snapshot with id 5 (existing snapshots: 3445823506174961576, 1472091673951529008)" -- "$I" scan "$EV" $R --snapshot-id 5
expect "diff --from-snapshot unknown lists the existing ones" 1 "--from-snapshot 5: no such snapshot in the table (existing snapshots: 3445823506174961576, 1472091673951529008)" -- "$I" diff --spec examples/events.spec.json $R --from-snapshot 5

# ---- --as-of with a plain date --------------------------------------------------------
"$I" scan "$EV" $R --as-of 2024-06-03 >"$tmp/asof" 2>"$tmp/err"
cmp -s "$tmp/asof" "$tmp/a.all" && ok "--as-of 2024-06-03 (a plain date) reads the snapshot of that midnight" || bad "--as-of date: $(cat "$tmp/err")"
expect "--as-of a date before the first snapshot" 1 "no snapshot at or before 2020-06-03T00:00:00.000Z" -- "$I" scan "$EV" $R --as-of 2020-06-03

# ---- a missing --remap says why --------------------------------------------------------
expect "missing --remap suggests it" 1 "the table's metadata gives its location as '/tmp/icedruid-example/warehouse/demo/events' but it was found at '$EV': read it there with --remap /tmp/icedruid-example/warehouse/demo/events=$EV" -- "$I" scan "$EV"

# ---- exit codes: 2 usage, 1 runtime, on every command ---------------------------------
for c in cat inspect scan tasks plan read rewrite-spec serve diff sync snapshots files; do
    expect "$c --bogus exits 2" 2 "unknown option '--bogus'" -- "$I" $c --bogus
done
expect "inspect without FILE exits 2" 2 "icedruid inspect: expects a FILE" -- "$I" inspect
expect "cat without FILE exits 2" 2 "icedruid cat: expects a FILE" -- "$I" cat
expect "scan without TABLE exits 2" 2 "icedruid scan: expects a TABLE" -- "$I" scan
expect "inspect of a missing file exits 1 with strerror" 1 "icedruid: $tmp/nope: cannot open: No such file or directory" -- "$I" inspect "$tmp/nope"
expect "plan of a missing spec exits 1 with strerror" 1 "icedruid: $tmp/nope.json: cannot open the spec file: No such file or directory" -- "$I" plan --spec "$tmp/nope.json"
expect "read --split missing keeps strerror" 1 "cannot open the split file: No such file or directory" -- "$I" read --spec examples/events.spec.json $R --split "$tmp/nope.json"

# ---- --granularity fortnight -----------------------------------------------------------
expect "--granularity fortnight lists the valid ones" 2 "icedruid diff: --granularity expects one of NONE, SECOND, MINUTE, FIVE_MINUTE, TEN_MINUTE, FIFTEEN_MINUTE, THIRTY_MINUTE, HOUR, SIX_HOUR, EIGHT_HOUR, DAY, WEEK, MONTH, QUARTER, YEAR, ALL (any case) or a granularity JSON object, got 'fortnight'" -- "$I" diff --spec examples/events.spec.json $R --from-snapshot 1472091673951529008 --granularity fortnight

# ---- timeouts and retries: values checked ---------------------------------------------
expect "--retries checked" 2 "icedruid scan: --retries expects 0..100, got 'many'" -- "$I" scan "$EV" --retries many
expect "ICEDRUID_RETRIES checked" 2 "ICEDRUID_RETRIES expects 0..100, got '-1'" -- env ICEDRUID_RETRIES=-1 "$I" scan "$EV"
expect "--connect-timeout checked" 2 "--connect-timeout expects 1..86400 seconds, got '0'" -- "$I" tasks "$EV" --connect-timeout=0

# ---- plan --check, read --limit, --stats ----------------------------------------------
expect "plan --check passes on the example" 0 "" -- "$I" plan --check --spec examples/orders.spec.json $R
[ "$(grep -c '^ok   ' "$tmp/out")" = 5 ] && ok "plan --check: 5 ok lines" || bad "plan --check: $(cat "$tmp/out")"
expect "plan --check fails on a bad column" 1 "" -- "$I" plan --check --spec "$tmp/dimbad.json" $R
grep -q "^FAIL columns: dimension 'usr_id' is not a column" "$tmp/out" && ok "plan --check names the column" || bad "plan --check column: $(cat "$tmp/out")"
expect "plan --check without --remap fails the plan step" 1 "" -- "$I" plan --check --spec examples/orders.spec.json
grep -q "^FAIL plan: .*read it there with --remap" "$tmp/out" && ok "plan --check: the plan step says why" || bad "plan --check remap: $(cat "$tmp/out")"
"$I" read --spec examples/orders.spec.json $R --limit 2 >"$tmp/lim" 2>"$tmp/err"
[ $? = 0 ] && [ "$(wc -l <"$tmp/lim")" = 2 ] && ok "read --limit 2 prints 2 rows" || bad "read --limit: $(cat "$tmp/err")"
"$I" read --spec examples/orders.spec.json $R --stats >"$tmp/rows" 2>"$tmp/stats"
python3 - "$tmp/rows" "$tmp/stats" <<'PY' && ok "read --stats: rows_read - removed = emitted = rows written" || bad "read --stats: $(cat "$tmp/stats")"
import json, sys
n = sum(1 for _ in open(sys.argv[1]))
s = json.loads(open(sys.argv[2]).read().strip().splitlines()[-1])
removed = s["rows_removed_by_position_deletes"] + s["rows_removed_by_equality_deletes"] + s["rows_removed_by_deletion_vectors"]
assert removed > 0, s
assert s["rows_read"] - removed - s["rows_unparseable"] == s["rows_emitted"] == n, (s, n)
PY
"$I" scan "$src/examples/warehouse/demo/orders" $R --stats >"$tmp/rows" 2>"$tmp/stats"
python3 - "$tmp/rows" "$tmp/stats" <<'PY' && ok "scan --stats: the same accounting" || bad "scan --stats: $(cat "$tmp/stats")"
import json, sys
n = sum(1 for _ in open(sys.argv[1]))
s = json.loads(open(sys.argv[2]).read().strip().splitlines()[-1])
removed = s["rows_removed_by_position_deletes"] + s["rows_removed_by_equality_deletes"] + s["rows_removed_by_deletion_vectors"]
assert s["rows_read"] - removed == s["rows_emitted"] == n and s["data_files"] >= 1, (s, n)
PY
# no progress and no summary line on a pipe
grep -q 'ETA\|rows read,' "$tmp/stats" && bad "progress or summary on a pipe" || ok "no progress / summary line on a pipe"

exit $fail
