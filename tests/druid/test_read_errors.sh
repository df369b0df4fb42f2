#!/usr/bin/env bash
# `icedruid read` failure modes on the bundled example tables (examples/README.md):
#   - parse exceptions: unparseable / missing timestamps are reported on stderr with the
#     row's file and position and skipped; more than maxParseExceptions fails the run;
#   - residualFilterMode: fail fails, warn warns and reads, ignore is silent;
#   - a missing or damaged delete file is a clear error and a non-zero exit, never a
#     silent skip (that would resurrect deleted rows);
#   - --split with a broken split file is a clear error.
set -euo pipefail
src="$ICD_SOURCE_DIR"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
remap="/tmp/icedruid-example/warehouse=$src/examples/warehouse"
fail=0
check() { # check DESCRIPTION COND...
    local what=$1; shift
    if "$@"; then echo "ok   $what"; else echo "FAIL $what"; fail=1; fi
}

# spec NAME BASE PYTHON-EDIT: a copy of an example spec with an edit applied to `s`
spec() {
    python3 - "$src/examples/$2.spec.json" "$tmp/$1.json" "$3" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
ds, io, tc = s["spec"]["dataSchema"], s["spec"]["ioConfig"], s["spec"]["tuningConfig"]
isrc = io["inputSource"]
isrc["icebergCatalog"]["warehousePath"] = sys.argv[1].rsplit("/", 1)[0] + "/warehouse"
exec(sys.argv[3])
json.dump(s, open(sys.argv[2], "w"))
PY
}

# ---- parse exceptions --------------------------------------------------------------
# `value` read as millis: event 6 has a null value -> one parse exception
# (data/event_ts_day=2024-06-02/00002-data.parquet, row 2)
spec pe0 events 'ds["timestampSpec"] = {"column": "value", "format": "millis"}; tc["maxParseExceptions"] = 0'
spec pe1 events 'ds["timestampSpec"] = {"column": "value", "format": "millis"}; tc["maxParseExceptions"] = 1'
set +e
"$ICEDRUID" read --spec "$tmp/pe0.json" --remap "$remap" >"$tmp/out0" 2>"$tmp/err0"; rc0=$?
"$ICEDRUID" read --spec "$tmp/pe1.json" --remap "$remap" >"$tmp/out1" 2>"$tmp/err1"; rc1=$?
set -e
check "maxParseExceptions=0 with one bad row fails" test "$rc0" -ne 0
check "the failure names the limit" grep -q 'Max parse exceptions\[0\] exceeded' "$tmp/err0"
check "maxParseExceptions=1 with one bad row succeeds" test "$rc1" -eq 0
check "five rows remain" test "$(wc -l <"$tmp/out1")" -eq 5
check "the exception names file and row" \
    grep -q 'icedruid: .*event_ts_day=2024-06-02/00002-data.parquet: row 2: Timestamp\[null\] is unparseable' "$tmp/err1"
check "one exception reported" test "$(grep -c unparseable "$tmp/err1")" -eq 1
check "event 6 skipped" bash -c "! grep -q '\"event_id\":6' '$tmp/out1'"
check "__time is the value as millis" grep -q '"__time":99,"event_id":4' "$tmp/out1"

# an ISO format on a string column: every row unparseable; unlimited by default
spec pe_all events 'ds["timestampSpec"] = {"column": "user_id", "format": "iso"}; del tc["maxParseExceptions"]'
"$ICEDRUID" read --spec "$tmp/pe_all.json" --remap "$remap" >"$tmp/out_all" 2>"$tmp/err_all"
check "default maxParseExceptions is unlimited" test "$(grep -c 'is unparseable' "$tmp/err_all")" -eq 6
check "no rows written" test ! -s "$tmp/out_all"
spec pe_missing events 'ds["timestampSpec"] = {"column": "nope"}; tc["maxParseExceptions"] = 2'
set +e
"$ICEDRUID" read --spec "$tmp/pe_missing.json" --remap "$remap" >/dev/null 2>"$tmp/err_m"; rcm=$?
set -e
check "a missing timestamp column without missingValue fails" test "$rcm" -eq 1
# checked against the schema before reading (issue 18), not found row by row
check "the column is named before any row is read" \
    grep -q "the timestampSpec column 'nope' is not a column of the table" "$tmp/err_m"
check "no row-by-row Timestamp[null]" bash -c "! grep -q 'is unparseable' '$tmp/err_m'"
spec pe_mv events 'ds["timestampSpec"] = {"column": "nope", "missingValue": "2020-01-01T00:00:00Z"}'
"$ICEDRUID" read --spec "$tmp/pe_mv.json" --remap "$remap" >"$tmp/out_mv"
check "missingValue fills __time" test "$(grep -c '"__time":1577836800000' "$tmp/out_mv")" -eq 6

# ---- residual filter modes ----------------------------------------------------------
# A filter on a non-partition column leaves a residual on every file.
for mode in fail warn ignore; do
    spec "res_$mode" events "isrc['residualFilterMode'] = '$mode'; isrc['icebergFilter'] = {'type': 'range', 'filterColumn': 'event_id', 'lower': 2}"
done
# The example's day-aligned interval on event_ts (partitioned by day(event_ts)) is decided
# by the partitions alone: no residual, so even 'fail' reads.
spec res_aligned events "isrc['residualFilterMode'] = 'fail'"
"$ICEDRUID" read --spec "$tmp/res_aligned.json" --remap "$remap" >"$tmp/out_ra" 2>"$tmp/err_ra"
check "an aligned interval on the partition column leaves no residual" test "$(wc -l <"$tmp/out_ra")" -eq 6
set +e
"$ICEDRUID" read --spec "$tmp/res_fail.json" --remap "$remap" >"$tmp/out_rf" 2>"$tmp/err_rf"; rcf=$?
"$ICEDRUID" plan --spec "$tmp/res_fail.json" --remap "$remap" >/dev/null 2>"$tmp/err_pf"; rcpf=$?
set -e
check "residualFilterMode=fail fails read" test "$rcf" -eq 1
check "residualFilterMode=fail fails plan" test "$rcpf" -eq 1
check "the failure explains the residual" grep -q 'residual' "$tmp/err_rf"
check "no rows on failure" test ! -s "$tmp/out_rf"
"$ICEDRUID" read --spec "$tmp/res_warn.json" --remap "$remap" >"$tmp/out_rw" 2>"$tmp/err_rw"
check "warn: a warning" grep -q 'warning: .*residual' "$tmp/err_rw"
check "warn: rows read" test "$(wc -l <"$tmp/out_rw")" -eq 6
"$ICEDRUID" read --spec "$tmp/res_ignore.json" --remap "$remap" >"$tmp/out_ri" 2>"$tmp/err_ri"
check "ignore: silent" test ! -s "$tmp/err_ri"
check "ignore: rows read" test "$(wc -l <"$tmp/out_ri")" -eq 6

# ---- missing / damaged delete files ----------------------------------------------------
cp -r "$src/examples/warehouse" "$tmp/wh"
spec copy orders "isrc['icebergCatalog']['warehousePath'] = '$tmp/wh'"
remap2="/tmp/icedruid-example/warehouse=$tmp/wh"
"$ICEDRUID" read --spec "$tmp/copy.json" --remap "$remap2" >"$tmp/out_ok"
check "the copy reads 2 rows" test "$(wc -l <"$tmp/out_ok")" -eq 2
rm "$tmp/wh/demo/orders/data/00003-eq-deletes.parquet"
set +e
"$ICEDRUID" read --spec "$tmp/copy.json" --remap "$remap2" >"$tmp/out_md" 2>"$tmp/err_md"; rcd=$?
set -e
check "a missing equality delete file fails" test "$rcd" -eq 1
check "the error names the delete file" grep -q '00003-eq-deletes.parquet' "$tmp/err_md"
check "one error line" test "$(wc -l <"$tmp/err_md")" -eq 1
check "no deleted row leaks" bash -c "! grep -q '\"order_id\":1005' '$tmp/out_md'"
head -c 100 "$src/examples/warehouse/demo/orders/data/00002-pos-deletes.parquet" \
    >"$tmp/wh/demo/orders/data/00002-pos-deletes.parquet"
cp "$src/examples/warehouse/demo/orders/data/00003-eq-deletes.parquet" "$tmp/wh/demo/orders/data/"
set +e
"$ICEDRUID" read --spec "$tmp/copy.json" --remap "$remap2" >/dev/null 2>"$tmp/err_tr"; rct=$?
set -e
check "a truncated position delete file fails" test "$rct" -eq 1
check "the error names it" grep -q '00002-pos-deletes.parquet' "$tmp/err_tr"

# ---- broken split files ---------------------------------------------------------------
echo '{"type":"icebergFileTask"}' >"$tmp/bad_split.json"
set +e
"$ICEDRUID" read --spec "$src/examples/orders.spec.json" --split "$tmp/bad_split.json" \
    >/dev/null 2>"$tmp/err_bs"; rcs=$?
echo '{not json' >"$tmp/bad_split2.json"
"$ICEDRUID" read --spec "$src/examples/orders.spec.json" --split "$tmp/bad_split2.json" \
    >/dev/null 2>"$tmp/err_bs2"; rcs2=$?
set -e
check "a split without dataFilePath fails" test "$rcs" -eq 1
check "the error names the field" grep -q 'split: dataFilePath: required field is missing' "$tmp/err_bs"
check "a split that is not JSON fails" test "$rcs2" -eq 1
check "the error says so" grep -q 'not valid JSON' "$tmp/err_bs2"

# a hand-made split whose equality delete file is not newer than its data file: the
# spec's rule would not apply it (rows written after a delete stay), so it is refused
spec ord orders ''
"$ICEDRUID" plan --spec "$tmp/ord.json" --remap "$remap" >"$tmp/plan.json"
python3 - "$tmp/plan.json" "$tmp/seq_split.json" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
for s in p["splits"]:
    eq = [d for d in s["deleteFiles"] if d["content"] == "EQUALITY_DELETES"]
    if eq:
        s = dict(p["splitCommon"], **s)
        s["dataSequenceNumber"] = max(d["sequenceNumber"] for d in eq)
        json.dump(s, open(sys.argv[2], "w"))
        break
else:
    sys.exit("no split with an equality delete file")
PY
set +e
"$ICEDRUID" read --spec "$tmp/ord.json" --remap "$remap" --split "$tmp/seq_split.json" \
    >"$tmp/out_seq" 2>"$tmp/err_seq"; rcq=$?
set -e
check "an equality delete not newer than its data file fails the split" test "$rcq" -eq 1
check "the error says it does not apply" grep -q 'does not apply to data file' "$tmp/err_seq"
check "no row read from that split" test ! -s "$tmp/out_seq"

# ---- usage ---------------------------------------------------------------------------
set +e
"$ICEDRUID" read >/dev/null 2>&1; rcu=$?
"$ICEDRUID" read --spec x --bogus 1 >/dev/null 2>&1; rcu2=$?
set -e
check "read without --spec is a usage error" test "$rcu" -eq 2
check "an unknown option is a usage error" test "$rcu2" -eq 2
exit $fail
