#!/usr/bin/env bash
# `icedruid serve` end to end with a real HTTP client (curl):
#   - a corpus table with delete files (4 splits) served on 127.0.0.1 with a random port
#     (--listen 127.0.0.1:0 prints the URL); /health, /splits, /spec (the rewritten spec
#     pointing at this server); 16 concurrent downloads (each split 4 times) each equal
#     `icedruid read --split` of that split, and one download per split equals `read`;
#   - with a decode-memory budget that admits one stream at a time, 16 concurrent
#     downloads wait for it and all equal `read --split`; /metrics shows the charge back at 0;
#   - unknown paths and splits 404; basic auth (password from the environment): no or
#     wrong credentials 401, right ones 200, and /spec carries the user and a
#     PasswordProvider (never the password);
#   - a client that disconnects mid-stream (bench2m's 200,000-row split) leaves the server
#     serving; SIGTERM then stops it with exit 0 and, in the ASan build, no leak or error
#     report.
set -euo pipefail
shared="${ICD_SHARED:-}"
table_rel=impala/hadoop_catalog/ice/iceberg_v2_positional_not_all_data_files_have_delete_files
tdir="$shared/corpus/$table_rel"
if [[ -z "$shared" || ! -d "$tdir" ]]; then
    echo "skipped: the corpus is not available (ICD_SHARED=$shared)"
    exit 77
fi
command -v curl >/dev/null || { echo "skipped: curl missing"; exit 77; }
tmp=$(mktemp -d)
pids=()
cleanup() {
    for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$tmp"
}
trap cleanup EXIT
fail=0
check() {
    local what=$1; shift
    if "$@"; then echo "ok   $what"; else echo "FAIL $what"; fail=1; fi
}

loc=$(python3 -c "
import glob, json, os, sys
best = max(glob.glob(sys.argv[1] + '/metadata/v*.metadata.json'),
           key=lambda p: int(os.path.basename(p)[1:].split('.')[0]))
print(json.load(open(best))['location'])" "$tdir")
remap=(--remap "$loc=$tdir")
cat >"$tmp/spec.json" <<EOF
{"type": "index_parallel", "spec": {
  "dataSchema": {"dataSource": "t", "timestampSpec": {"column": "i", "format": "millis"},
                 "dimensionsSpec": {"dimensions": []}},
  "ioConfig": {"type": "index_parallel",
    "inputSource": {"type": "iceberg", "tableName": "$(basename "$tdir")", "namespace": "ice",
      "icebergCatalog": {"type": "local", "warehousePath": "$shared/corpus/impala/hadoop_catalog"},
      "warehouseSource": {"type": "local"}},
    "inputFormat": {"type": "parquet"}},
  "tuningConfig": {"type": "index_parallel"}}}
EOF

# start_server NAME ARGS...: starts `icedruid serve`, sets URL
start_server() {
    local name=$1; shift
    "$ICEDRUID" serve --rows --spec "$tmp/spec.json" "${remap[@]}" --listen 127.0.0.1:0 "$@" \
        >"$tmp/$name.out" 2>"$tmp/$name.err" &
    pids+=($!)
    PID=$!
    for _ in $(seq 1 200); do
        [[ -s "$tmp/$name.out" ]] && break
        sleep 0.05
    done
    URL=$(head -1 "$tmp/$name.out")
    [[ "$URL" == http://127.0.0.1:* ]] || { echo "FAIL server $name did not start"; cat "$tmp/$name.err"; exit 1; }
}

# stop_server PID NAME: SIGTERM, exit status 0, no sanitizer report
stop_server() {
    kill -TERM "$1"
    local rc=0
    wait "$1" || rc=$?
    check "$2: exits 0 on SIGTERM" test "$rc" -eq 0
    check "$2: no sanitizer report" bash -c "! grep -qE 'LeakSanitizer|AddressSanitizer|runtime error' '$tmp/$2.err'"
}

"$ICEDRUID" plan --spec "$tmp/spec.json" "${remap[@]}" >"$tmp/plan.json"
nsplits=$(python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert d['mode']=='v2'; print(len(d['splits']))" "$tmp/plan.json")
check "the table plans as v2 with 4 splits" test "$nsplits" -eq 4
python3 - "$tmp/plan.json" "$tmp" <<'PY'
import json, sys
plan = json.load(open(sys.argv[1]))
for i, s in enumerate(plan["splits"]):  # a split = the plan's splitCommon + its own fields
    json.dump(dict(plan["splitCommon"], **s), open("%s/split%d.json" % (sys.argv[2], i), "w"))
PY
for i in $(seq 0 $((nsplits - 1))); do
    "$ICEDRUID" read --spec "$tmp/spec.json" "${remap[@]}" --split "$tmp/split$i.json" >"$tmp/read$i.ndjson"
done
"$ICEDRUID" read --spec "$tmp/spec.json" "${remap[@]}" >"$tmp/read_all.ndjson"

start_server main
check "health" bash -c "curl -sf '$URL/health' | grep -q '\"splits\":4'"
curl -sf "$URL/splits" >"$tmp/splits.json"
check "/splits lists the 4 split URIs" python3 -c "
import json,sys; d=json.load(open('$tmp/splits.json'))
assert d['splits'] == ['$URL/splits/%d' % i for i in range(4)], d"
curl -sf "$URL/spec" >"$tmp/served_spec.json"
check "/spec reads this server's splits as json with __time" python3 -c "
import json; d=json.load(open('$tmp/served_spec.json'))['spec']
io = d['ioConfig']
assert io['inputSource'] == {'type': 'http', 'uris': ['$URL/splits/%d' % i for i in range(4)]}, io
assert io['inputFormat'] == {'type': 'json', 'keepNullColumns': True, 'featureSpec': {'ALLOW_NON_NUMERIC_NUMBERS': True}}, io
assert d['dataSchema']['timestampSpec'] == {'column': '__time', 'format': 'millis'}
assert d['dataSchema']['dimensionsSpec']['dimensionExclusions'] == ['i']"

# 16 concurrent downloads: every split 4 times
for k in $(seq 0 15); do
    i=$((k % nsplits))
    curl -sf "$URL/splits/$i" -o "$tmp/dl$k.ndjson" &
done
wait_ok=0
for job in $(jobs -p); do
    [[ " ${pids[*]} " == *" $job "* ]] && continue
    wait "$job" || wait_ok=1
done
check "16 concurrent downloads succeed" test "$wait_ok" -eq 0
same=0
for k in $(seq 0 15); do
    cmp -s "$tmp/dl$k.ndjson" "$tmp/read$((k % nsplits)).ndjson" || { same=1; echo "split $((k % nsplits)) download $k differs"; }
done
check "every download equals read --split" test "$same" -eq 0
cat "$tmp"/dl0.ndjson "$tmp"/dl1.ndjson "$tmp"/dl2.ndjson "$tmp"/dl3.ndjson >"$tmp/dl_all.ndjson"
check "the splits together equal read" cmp -s "$tmp/dl_all.ndjson" "$tmp/read_all.ndjson"
check "rows were served" test "$(wc -l <"$tmp/dl_all.ndjson")" -gt 0

code() { curl -s -o /dev/null -w '%{http_code}' "$@"; }
check "unknown path 404" test "$(code "$URL/nope")" = 404
check "split out of range 404" test "$(code "$URL/splits/4")" = 404
check "split not a number 404" test "$(code "$URL/splits/x")" = 404
stop_server "$PID" main

# ---- decode memory: a budget one stream fills, so streams read one at a time ----------
# (--decode-memory 1: every stream is charged more; the others wait in the slot queue,
# holding no thread, and each is admitted when the one reading ends)
start_server budget --decode-memory 1 --stream-memory 4K --max-streams 8
for k in $(seq 0 15); do
    curl -sf "$URL/splits/$((k % nsplits))" -o "$tmp/bdl$k.ndjson" &
done
wait_ok=0
for job in $(jobs -p); do
    [[ " ${pids[*]} " == *" $job "* ]] && continue
    wait "$job" || wait_ok=1
done
check "decode budget: 16 concurrent downloads succeed (they wait, not fail)" test "$wait_ok" -eq 0
same=0
for k in $(seq 0 15); do
    cmp -s "$tmp/bdl$k.ndjson" "$tmp/read$((k % nsplits)).ndjson" || same=1
done
check "decode budget: every download equals read --split" test "$same" -eq 0
curl -sf "$URL/metrics" >"$tmp/budget_metrics.txt"
check "decode budget: nothing charged once every stream ended" \
    grep -qx 'icedruid_decode_memory_bytes 0' "$tmp/budget_metrics.txt"
check "decode budget: the streams' decode memory was measured" \
    grep -qE '^icedruid_stream_decode_memory_max_bytes [1-9]' "$tmp/budget_metrics.txt"
stop_server "$PID" budget

# ---- basic auth ---------------------------------------------------------------------
ICEDRUID_SERVE_PASSWORD=s3cret start_server auth --auth-user druid
check "no credentials 401" test "$(code "$URL/splits/0")" = 401
check "wrong password 401" test "$(code -u druid:nope "$URL/splits/0")" = 401
check "wrong user 401" test "$(code -u other:s3cret "$URL/health")" = 401
check "right credentials 200" test "$(code -u druid:s3cret "$URL/splits/0")" = 200
curl -sf -u druid:s3cret "$URL/splits/1" -o "$tmp/auth1.ndjson"
check "authenticated download equals read --split" cmp -s "$tmp/auth1.ndjson" "$tmp/read1.ndjson"
curl -sf -u druid:s3cret "$URL/spec" >"$tmp/auth_spec.json"
check "/spec names the user and a PasswordProvider, not the password" python3 -c "
import json; t=open('$tmp/auth_spec.json').read(); s=json.loads(t)['spec']['ioConfig']['inputSource']
assert s['httpAuthenticationUsername'] == 'druid', s
assert s['httpAuthenticationPassword'] == {'type': 'environment', 'variable': 'ICEDRUID_SERVE_PASSWORD'}, s
assert 's3cret' not in t"
set +e
"$ICEDRUID" serve --spec "$tmp/spec.json" --auth-password s3cret >/dev/null 2>"$tmp/pw.err"; rcpw=$?
set -e
check "--auth-password on the command line is refused" test "$rcpw" -eq 2
stop_server "$PID" auth

# ---- a delete file that disappears after planning: the split fails, never truncated ---
cp -r "$tdir" "$tmp/copy"
saved_remap=("${remap[@]}")
remap=(--remap "$loc=$tmp/copy")
start_server gone
victim=$(python3 -c "
import json,sys
for i, s in enumerate(json.load(open(sys.argv[1]))['splits']):
    if s['deleteFiles']:
        print(i, s['deleteFiles'][0]['path'].rsplit('/', 1)[1]); break" "$tmp/plan.json")
read -r vsplit vname <<<"$victim"
find "$tmp/copy" -name "$vname" -delete
check "a split whose delete file is gone answers 500" test "$(code "$URL/splits/$vsplit")" = 500
check "the 500 body names the delete file" bash -c "curl -s '$URL/splits/$vsplit' | grep -q '$vname'"
stop_server "$PID" gone
remap=("${saved_remap[@]}")

# ---- a client that disconnects mid-stream ------------------------------------------------
bench="$shared/bench/bench2m/table"
if [[ -d "$bench" ]]; then
    sed -e "s|\"tableName\": \"[^\"]*\"|\"tableName\": \"table\"|" \
        -e "s|\"namespace\": \"ice\"|\"namespace\": \"bench2m\"|" \
        -e "s|$shared/corpus/impala/hadoop_catalog|$shared/bench|" \
        -e 's|"column": "i", "format": "millis"|"column": "event_time", "format": "auto"|' \
        "$tmp/spec.json" >"$tmp/bench_spec.json"
    cp "$tmp/bench_spec.json" "$tmp/spec.json"
    remap=(--remap "/tmp/icedruid-corpus/bench2m/table=$bench")
    start_server big --threads 2
    set +e
    curl -s "$URL/splits/0" | head -c 100000 >"$tmp/partial.ndjson"
    curl -s --max-time 0.5 "$URL/splits/1" -o /dev/null
    curl -s "$URL/splits/2" | head -c 10 >/dev/null
    set -e
    check "the partial download got rows" test "$(head -1 "$tmp/partial.ndjson" | cut -c1-9)" = '{"__time"'
    sleep 0.5
    check "the server still answers after disconnects" bash -c "curl -sf '$URL/health' | grep -q ok"
    check "and still streams a split's beginning" bash -c "curl -s '$URL/splits/3' | head -c 200 | grep -q __time"
    stop_server "$PID" big
else
    echo "note: $bench absent, mid-stream disconnect not exercised"
fi
exit $fail
