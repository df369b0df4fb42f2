#!/usr/bin/env bash
# libicedruid.a links into programs together with other libraries: no global symbol it
# defines may also be defined by a library a program is likely to link next to it (its
# own dependencies, and the C libraries of the same formats: Debian's libavro, liborc,
# libroaring, libpq). The Avro module once exported avro_reader_free, avro_skip and
# avro_writer_free, libavro's own names. Each library found is checked; one not
# installed is named as not checked; libavro (scripts/install-deps.sh) must be there.
set -euo pipefail
: "${ICD_BUILD_DIR:?}"
lib="$ICD_BUILD_DIR/libicedruid.a"
[ -f "$lib" ] || { echo "FAILED: no $lib"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
nm -g --defined-only "$lib" 2>/dev/null | awk 'NF >= 3 && $2 ~ /^[TDRBWV]$/ {print $3}' |
  sort -u >"$tmp/ours"
[ -s "$tmp/ours" ] || { echo "FAILED: nm found no symbols in $lib"; exit 1; }
echo "libicedruid.a defines $(wc -l <"$tmp/ours") global symbols"

multiarch=$(gcc -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)
find_lib() { # name -> path of the shared library, or nothing
  local d
  for d in "/usr/lib/$multiarch" /usr/lib /usr/local/lib; do
    [ -e "$d/lib$1.so" ] && { readlink -f "$d/lib$1.so"; return; }
    local f
    f=$(ls "$d/lib$1.so."* 2>/dev/null | head -1 || true)
    [ -n "$f" ] && { readlink -f "$f"; return; }
  done
  return 0
}

failed=0 checked=0 avro_seen=0
for name in avro roaring orc-0.4 pq jansson zstd lz4 snappy brotlidec z curl microhttpd \
  xxhash protobuf-c ssl crypto gssapi_krb5; do
  so=$(find_lib "$name")
  if [ -z "$so" ]; then
    echo "not checked: lib$name is not installed"
    continue
  fi
  [ "$name" = avro ] && avro_seen=1
  checked=$((checked + 1))
  nm -D --defined-only "$so" 2>/dev/null | awk 'NF >= 3 {print $3}' | sed 's/@.*//' |
    sort -u >"$tmp/theirs"
  comm -12 "$tmp/ours" "$tmp/theirs" >"$tmp/both"
  if [ -s "$tmp/both" ]; then
    failed=$((failed + 1))
    echo "FAILED: libicedruid.a and $so both define: $(tr '\n' ' ' <"$tmp/both")"
  else
    echo "ok: no symbol shared with $so"
  fi
done
if [ "$avro_seen" = 0 ]; then
  echo "FAILED: libavro is not installed (scripts/install-deps.sh installs libavro-dev)"
  failed=$((failed + 1))
fi
echo "$checked libraries checked, $failed failed"
[ "$failed" = 0 ]
