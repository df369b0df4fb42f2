#!/usr/bin/env bash
# `icedruid inspect` on Puffin files written by an independent encoder
# (tests/fuzz/gen_puffin_seeds.py): the deletion vectors decode to the cardinality their
# footer states, with valid CRCs; a damaged DV makes the command print the document, name
# the problem on stderr and exit 1.
set -euo pipefail
seeds="$ICD_SOURCE_DIR/tests/fuzz/corpus/fuzz_puffin"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

"$ICEDRUID" inspect "$seeds/puffin_two_dvs.puffin" >"$tmp/two.json"
python3 - "$tmp/two.json" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
dvs = [b for b in doc["blobs"] if b["type"] == "deletion-vector-v1"]
assert len(dvs) == 2, dvs
for b in dvs:
    assert b["deletion_vector"]["crc_ok"] is True
    assert b["deletion_vector"]["cardinality"] == int(b["properties"]["cardinality"])
assert dvs[0]["deletion_vector"]["first_positions"] == [0, 3, 7, 1000]
assert dvs[1]["deletion_vector"]["first_positions"][:2] == [10, 11]
print("two DVs ok")
PY

"$ICEDRUID" inspect "$seeds/puffin_lz4_footer.puffin" | grep -q '"compressed": true'
"$ICEDRUID" inspect "$seeds/puffin_codecs.puffin" | grep -q '"compression-codec": "zstd"'

# Change the high byte of the value 1000 of the first DV (blob at 4, values at 36..43)
# so the bitmap stays well-formed and only the CRC tells.
cp "$seeds/puffin_two_dvs.puffin" "$tmp/bad.puffin"
printf '\x55' | dd of="$tmp/bad.puffin" bs=1 seek=47 conv=notrunc status=none
if "$ICEDRUID" inspect "$tmp/bad.puffin" >"$tmp/bad.json" 2>"$tmp/bad.err"; then
  echo "inspect accepted a damaged deletion vector" >&2
  exit 1
fi
grep -q 'CRC-32 mismatch' "$tmp/bad.err" || { cat "$tmp/bad.err" >&2; exit 1; }
grep -q '"deletion_vector"' "$tmp/bad.json"
echo "damaged DV reported: $(cat "$tmp/bad.err")"
