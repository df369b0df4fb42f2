#!/usr/bin/env bash
# Cross-check against an independent writer: files written by Apache's libavro (codecs
# null, deflate, snappy; several blocks) must come out of `icedruid cat` exactly as the
# writer says (libavro_writer.c prints the expected NDJSON from the values it wrote), and
# libavro's lzma codec must be refused with a clear "not supported" error.
set -euo pipefail
: "${ICEDRUID:?ICEDRUID is not set}"
src=$(cd "$(dirname "$0")" && pwd)
if ! pkg-config --exists avro-c 2>/dev/null; then
  echo "SKIP: libavro (avro-c) is not installed"; exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cc -O1 -o "$tmp/w" "$src/libavro_writer.c" $(pkg-config --cflags --libs avro-c)
pass=0 fail=0
for codec in null deflate snappy; do
  "$tmp/w" "$tmp/$codec.avro" "$codec" 3000 > "$tmp/$codec.expected"
  if "$ICEDRUID" cat "$tmp/$codec.avro" > "$tmp/$codec.got" && cmp -s "$tmp/$codec.expected" "$tmp/$codec.got"; then
    blocks=$("$ICEDRUID" inspect "$tmp/$codec.avro" | python3 -c 'import json,sys; print(json.load(sys.stdin)["blocks"])')
    if [ "$blocks" -gt 1 ]; then pass=$((pass + 1)); else echo "FAIL: $codec: expected several blocks, got $blocks"; fail=$((fail + 1)); fi
  else
    echo "FAIL: $codec: cat output differs from libavro's values"
    diff "$tmp/$codec.expected" "$tmp/$codec.got" | head -5 || true
    fail=$((fail + 1))
  fi
done
"$tmp/w" "$tmp/lzma.avro" lzma 10 > /dev/null
if "$ICEDRUID" cat "$tmp/lzma.avro" > /dev/null 2> "$tmp/lzma.err"; then
  echo "FAIL: lzma: cat succeeded"; fail=$((fail + 1))
elif grep -q "codec 'lzma' is not supported" "$tmp/lzma.err"; then
  pass=$((pass + 1))
else
  echo "FAIL: lzma: unexpected error: $(cat "$tmp/lzma.err")"; fail=$((fail + 1))
fi
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
