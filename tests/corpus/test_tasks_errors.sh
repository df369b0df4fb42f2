#!/usr/bin/env bash
# Corrupt inputs for `icedruid tasks`: a small corpus table (impala
# iceberg_v2_delete_pos_and_multi_eq_ids: metadata JSON, a deflate manifest list, data and
# delete manifests) is copied into a temp dir, then its manifest list, a data manifest, a
# delete manifest and the current metadata JSON are in turn truncated, corrupted (bytes
# overwritten in the header, in a data block, in the sync marker) and deleted. Every time
# `icedruid tasks` must exit with a non-zero code below 128 (no signal, no sanitizer abort),
# print nothing on stdout and exactly ONE line on stderr that names the damaged file.
# Under the ASan build CTest points $ICEDRUID at the instrumented binary, so a memory error
# or leak shows up as extra stderr lines / a sanitizer exit code.
# Exit 77 when ICD_SHARED is absent.
set -u

if [ -z "${ICD_SHARED:-}" ] || [ ! -d "$ICD_SHARED/corpus/impala" ]; then
    echo "skipped: ICD_SHARED/corpus not found (set ICD_SHARED to the shared folder)"
    exit 77
fi
: "${ICEDRUID:?ICEDRUID is not set}"

SRC_TABLE="$ICD_SHARED/corpus/impala/hadoop_catalog/ice/iceberg_v2_delete_pos_and_multi_eq_ids"
LOCATION=/test-warehouse/iceberg_test/hadoop_catalog/ice/iceberg_v2_delete_pos_and_multi_eq_ids
CURRENT=v5.metadata.json # highest vN (checked below)
MLIST=snap-152862018760071153-1-c0500e2e-00c0-48fb-9c29-31bbafc91d57.avro
DATA_MANIFEST=c0500e2e-00c0-48fb-9c29-31bbafc91d57-m0.avro
DELETE_MANIFEST=103b5b20-fb15-41bb-a97d-1e2ddc147650-m0.avro

TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
T="$TMP/table"
pass=0
failed=0

fresh() {
    rm -rf "$T"
    cp -r "$SRC_TABLE" "$T"
    chmod -R u+w "$T"
}

# expect_error LABEL DAMAGED_NAME: runs tasks and checks the error contract.
expect_error() {
    local label=$1 name=$2
    "$ICEDRUID" tasks "$T" --remap "$LOCATION=$T" >"$TMP/out" 2>"$TMP/err"
    local rc=$?
    local lines
    lines=$(grep -c . "$TMP/err")
    if [ "$rc" -ne 0 ] && [ "$rc" -lt 128 ] && [ "$lines" -eq 1 ] && [ ! -s "$TMP/out" ] &&
        grep -qF "$name" "$TMP/err"; then
        pass=$((pass + 1))
        echo "ok   $label: $(cat "$TMP/err")"
    else
        failed=$((failed + 1))
        echo "FAIL $label: rc=$rc, $lines stderr lines, stdout $(wc -c <"$TMP/out") bytes; want one line naming $name"
        head -c 2000 "$TMP/err"
    fi
}

# patch FILE OFFSET HEXBYTES: overwrite bytes in place (negative offset = from the end).
patch() {
    python3 - "$1" "$2" "$3" <<'EOF'
import sys
path, off, hexbytes = sys.argv[1], int(sys.argv[2]), bytes.fromhex(sys.argv[3])
data = bytearray(open(path, "rb").read())
if off < 0:
    off += len(data)
data[off:off + len(hexbytes)] = hexbytes
open(path, "wb").write(bytes(data))
EOF
}

# truncate_to FILE FRACTION_PERCENT
truncate_to() {
    local size
    size=$(stat -c %s "$1")
    truncate -s $((size * $2 / 100)) "$1"
}

# first_block_offset FILE: where the first data block's bytes start (after the header,
# the block count and the block size): used to damage compressed data, not the header.
first_block_offset() {
    python3 - "$1" <<'EOF'
import sys
d = open(sys.argv[1], "rb").read()
i = 4
def long():
    global i
    shift = acc = 0
    while True:
        b = d[i]; i += 1
        acc |= (b & 0x7F) << shift
        if not b & 0x80:
            return (acc >> 1) ^ -(acc & 1)
        shift += 7
while True:
    n = long()
    if n == 0:
        break
    if n < 0:
        n = -n; long()
    for _ in range(2 * n):
        ln = long(); i += ln
i += 16  # sync
long(); long()  # count, size
print(i)
EOF
}

fresh
if [ ! -f "$T/metadata/$CURRENT" ] || [ -f "$T/metadata/v6.metadata.json" ]; then
    echo "FAIL: corpus table layout changed ($CURRENT is not the current metadata)"
    exit 1
fi
# The intact copy plans (sanity: the damage below is what fails).
if ! "$ICEDRUID" tasks "$T" --remap "$LOCATION=$T" >/dev/null 2>"$TMP/err"; then
    echo "FAIL: the intact copy does not plan: $(cat "$TMP/err")"
    exit 1
fi

for f in "$MLIST" "$DATA_MANIFEST" "$DELETE_MANIFEST"; do
    p="$T/metadata/$f"
    fresh; truncate_to "$p" 50;             expect_error "$f truncated to 50%" "$f"
    fresh; truncate_to "$p" 0;              expect_error "$f truncated to 0 bytes" "$f"
    fresh; truncate -s -17 "$p";            expect_error "$f missing its last sync marker" "$f"
    fresh; patch "$p" 0 "00000000";         expect_error "$f bad magic" "$f"
    fresh; patch "$p" -8 "0000000000000000"; expect_error "$f damaged sync marker" "$f"
    fresh; off=$(first_block_offset "$p"); patch "$p" "$off" "ffffffffffffffffffffffffffffffff"
    expect_error "$f garbage in the first block" "$f"
    fresh; rm "$p";                         expect_error "$f deleted" "$f"
done

p="$T/metadata/$CURRENT"
fresh; truncate_to "$p" 50;              expect_error "$CURRENT truncated to 50%" "$CURRENT"
fresh; truncate_to "$p" 0;               expect_error "$CURRENT empty" "$CURRENT"
fresh; patch "$p" 0 "5b";                expect_error "$CURRENT starts with '['" "$CURRENT"
fresh; patch "$p" 40 "ff fe 00 01";      expect_error "$CURRENT invalid bytes" "$CURRENT"
fresh; sed -i 's/"format-version" : 2/"format-version" : 9/' "$p"
expect_error "$CURRENT unknown format version" "$CURRENT"
fresh; sed -i 's/"current-snapshot-id" : [0-9]*/"current-snapshot-id" : 42/' "$p"
expect_error "$CURRENT current snapshot id unknown" "$CURRENT"
# Deleting the current metadata file, named explicitly as TABLE: a clear error naming it.
fresh; rm "$p"
"$ICEDRUID" tasks "$p" --remap "$LOCATION=$T" >"$TMP/out" 2>"$TMP/err"
rc=$?
if [ "$rc" -ne 0 ] && [ "$rc" -lt 128 ] && [ "$(grep -c . "$TMP/err")" -eq 1 ] &&
    grep -qF "$CURRENT" "$TMP/err"; then
    pass=$((pass + 1)); echo "ok   $CURRENT deleted (named as TABLE): $(cat "$TMP/err")"
else
    failed=$((failed + 1)); echo "FAIL $CURRENT deleted (named as TABLE): rc=$rc $(head -c 500 "$TMP/err")"
fi
# Deleted while version-hint.text still says 5: Java's HadoopTableOperations.refresh fails
# ("Metadata file for version 5 is missing"), and so does icedruid's local catalog (issue
# 15.2; it used to fall back to v4, an older table state).
fresh; rm "$p"
expect_error "$CURRENT deleted under a hint of 5" "metadata file for version 5 is missing"
# The manifest list named by the metadata but pointing outside the table.
fresh; sed -i "s#$LOCATION/metadata/$MLIST#/nonexistent/dir/$MLIST#" "$p"
expect_error "$CURRENT manifest list path unresolvable" "$MLIST"

echo "$pass passed, $failed failed"
[ "$failed" -eq 0 ]
