#!/usr/bin/env bash
# libicedruid as an installed library: `cmake --install` into a temporary prefix, then
#   - the shared library exports only the icd_* functions the public headers declare;
#   - every public header compiles alone as C99 -pedantic, as C17 and as C++;
#   - examples/api/count_rows.c builds against the installed tree through pkg-config
#     (shared, and static with --static) and through find_package(icedruid), and each
#     build counts the example table's surviving rows exactly as `icedruid scan` does;
#   - examples/api/changed_intervals.c (the Druid API) and column_summary.c (typed
#     batches) build both ways and print what the example table holds.
set -euo pipefail
: "${ICD_BUILD_DIR:?}" "${ICD_SOURCE_DIR:?}" "${ICEDRUID:?}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
checks=0 failed=0
ok() { checks=$((checks + 1)); echo "ok: $*"; }
bad() { checks=$((checks + 1)); failed=$((failed + 1)); echo "FAILED: $*"; }

cmake --install "$ICD_BUILD_DIR" --prefix "$tmp/prefix" >/dev/null
prefix=$tmp/prefix
libdir=$(dirname "$(find "$prefix" -name 'libicedruid.so' | head -1)")
[ -f "$libdir/libicedruid.so" ] && ok "installed $libdir/libicedruid.so" || bad "no libicedruid.so"
[ -f "$libdir/libicedruid.a" ] && ok "installed libicedruid.a" || bad "no libicedruid.a"
[ -f "$libdir/pkgconfig/libicedruid.pc" ] && ok "installed libicedruid.pc" || bad "no .pc"
[ -f "$libdir/cmake/icedruid/icedruidConfig.cmake" ] && ok "installed icedruidConfig.cmake" ||
  bad "no icedruidConfig.cmake"
soname=$(objdump -p "$libdir/libicedruid.so" | awk '/SONAME/ {print $2}')
[[ "$soname" =~ ^libicedruid\.so\.[0-9]+$ ]] && ok "soname $soname" || bad "soname '$soname'"

# Exports: exactly the ICD_EXTERN declarations of include/icedruid/*.h.
nm -D --defined-only "$libdir/libicedruid.so" | awk '$2 ~ /^[TDRBW]$/ {print $3}' | sort -u \
  >"$tmp/exported"
grep -ho '^ICD_EXTERN[^(]*(' "$prefix"/include/icedruid/*.h | sed -E 's/.*[ *]([a-z_0-9]+)\($/\1/' |
  sort -u >"$tmp/declared"
if diff "$tmp/declared" "$tmp/exported" >"$tmp/exports.diff"; then
  ok "exports = the $(wc -l <"$tmp/declared") public declarations, all icd_*"
else
  bad "exported symbols differ from the public declarations:"; cat "$tmp/exports.diff"
fi
grep -qv '^icd_' "$tmp/exported" && bad "a non-icd_ symbol is exported" || ok "every export is icd_*"

cc=${CC:-cc}
cxx=${CXX:-c++}
extra=()
if [ "${ICD_SANITIZE:-0}" = 1 ] || [ "${ICD_SANITIZE:-}" = ON ]; then
  cc=clang cxx=clang++ extra=(-fsanitize=address,undefined)
fi
command -v "$cxx" >/dev/null || cxx=""
for h in "$prefix"/include/icedruid/*.h; do
  name=icedruid/$(basename "$h")
  printf '#include <%s>\ntypedef int icd_test_nonempty_;\n' "$name" >"$tmp/h.c"
  if "$cc" -std=c99 -pedantic -Wall -Wextra -Werror -I"$prefix/include" -c "$tmp/h.c" -o "$tmp/h.o" &&
     "$cc" -std=c17 -Wall -Wextra -Werror -I"$prefix/include" -c "$tmp/h.c" -o "$tmp/h.o"; then
    ok "$name compiles alone (C99 -pedantic, C17)"
  else
    bad "$name does not compile alone"
  fi
  if [ -n "$cxx" ]; then
    cp "$tmp/h.c" "$tmp/h.cpp"
    if "$cxx" -std=c++11 -pedantic -Wall -Wextra -Werror -I"$prefix/include" -c "$tmp/h.cpp" \
        -o "$tmp/h.o"; then ok "$name compiles as C++"; else bad "$name does not compile as C++"; fi
  fi
done
[ -n "$cxx" ] || echo "note: no C++ compiler, the C++ header check was not run"

remap="/tmp/icedruid-example/warehouse=$ICD_SOURCE_DIR/examples/warehouse"
table=$ICD_SOURCE_DIR/examples/warehouse/demo/orders
want=$("$ICEDRUID" scan "$table" --remap "$remap" | wc -l)
check_run() { # label binary
  local out
  if out=$(LD_LIBRARY_PATH="$libdir" "$2" "$table" "$remap") && [[ "$out" == "$want rows in "* ]]; then
    ok "$1: $out"
  else
    bad "$1: got '$out', want $want rows"
  fi
}
export PKG_CONFIG_PATH=$libdir/pkgconfig
src=$ICD_SOURCE_DIR/examples/api/count_rows.c
# shellcheck disable=SC2046
"$cc" "${extra[@]}" -Wall -Werror "$src" $(pkg-config --cflags --libs libicedruid) -o "$tmp/count_shared" &&
  check_run "pkg-config (shared)" "$tmp/count_shared" || bad "pkg-config shared build"
# Static: libicedruid.a, then its dependencies (Requires.private, Libs.private) as shared
# libraries (`pkg-config --static` would also ask for the static libraries of libcurl's
# own dependencies, which a machine may not have).
private=$(pkg-config --print-requires-private libicedruid | awk '{print $1}' | tr '\n' ' ')
libs_private=$(sed -n 's/^Libs.private: //p' "$libdir/pkgconfig/libicedruid.pc")
# shellcheck disable=SC2046,SC2086
"$cc" "${extra[@]}" -Wall -Werror "$src" $(pkg-config --cflags libicedruid) "$libdir/libicedruid.a" \
    $(pkg-config --libs $private) $libs_private -o "$tmp/count_static" &&
  check_run "pkg-config --static" "$tmp/count_static" || bad "pkg-config static build"
if ldd "$tmp/count_static" | grep -q libicedruid; then bad "static build links libicedruid.so"; fi

# The Druid API: phase 2 of the example spec (A = the append; the deletes since then
# touched 2024-06-01 and removed 3 rows).
check_druid() { # label binary
  local out
  if out=$(cd "$ICD_SOURCE_DIR" && LD_LIBRARY_PATH="$libdir" "$2" examples/orders.spec.json \
             368824057566305891 http://icedruid:8000 "$remap") &&
     grep -qx 'replace 1717200000000/1717286400000 -3 +0' <<<"$out" &&
     grep -q '^REPLACE INTO "orders"' <<<"$out"; then
    ok "$1: the replaced interval and its statement"
  else
    bad "$1: got '$out'"
  fi
}
dsrc=$ICD_SOURCE_DIR/examples/api/changed_intervals.c
# shellcheck disable=SC2046
"$cc" "${extra[@]}" -Wall -Werror "$dsrc" $(pkg-config --cflags --libs libicedruid) -o "$tmp/changed" &&
  check_druid "Druid API, pkg-config" "$tmp/changed" || bad "changed_intervals build"

# Typed batches: the example table's surviving orders 1001 and 1003 (19.99 and 39.98).
check_summary() { # label binary
  local out
  if out=$(LD_LIBRARY_PATH="$libdir" "$2" "$table" "$remap") &&
     grep -qx 'order_id: 2 values, min 1001, max 1003' <<<"$out" &&
     grep -qx 'amount: 2 values, min 19.99, max 39.98' <<<"$out" &&
     grep -qx 'customer: 2 values' <<<"$out"; then
    ok "$1: typed batches"
  else
    bad "$1: got '$out'"
  fi
}
ssrc=$ICD_SOURCE_DIR/examples/api/column_summary.c
# shellcheck disable=SC2046
"$cc" "${extra[@]}" -Wall -Werror "$ssrc" $(pkg-config --cflags --libs libicedruid) -o "$tmp/summary" &&
  check_summary "batch API, pkg-config" "$tmp/summary" || bad "column_summary build"

mkdir -p "$tmp/cm"
cat >"$tmp/cm/CMakeLists.txt" <<CMAKE
cmake_minimum_required(VERSION 3.18)
project(count_rows C)
find_package(icedruid 0 REQUIRED)
add_executable(count_rows $src)
target_link_libraries(count_rows PRIVATE icedruid::icedruid)
add_executable(changed_intervals $dsrc)
target_link_libraries(changed_intervals PRIVATE icedruid::icedruid)
add_executable(column_summary $ssrc)
target_link_libraries(column_summary PRIVATE icedruid::icedruid)
CMAKE
if cmake -S "$tmp/cm" -B "$tmp/cm/build" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_C_COMPILER="$cc" \
     -DCMAKE_C_FLAGS="${extra[*]}" >"$tmp/cm.log" 2>&1 && cmake --build "$tmp/cm/build" >>"$tmp/cm.log" 2>&1; then
  check_run "find_package(icedruid)" "$tmp/cm/build/count_rows"
  check_druid "Druid API, find_package(icedruid)" "$tmp/cm/build/changed_intervals"
  check_summary "batch API, find_package(icedruid)" "$tmp/cm/build/column_summary"
else
  bad "find_package build"; cat "$tmp/cm.log"
fi

echo "$((checks - failed)) passed, $failed failed"
[ "$failed" = 0 ]
