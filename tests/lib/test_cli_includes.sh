#!/usr/bin/env bash
# The icedruid command is the first client of libicedruid's public API: every src/cli/*.c
# file except the inspection commands' must reach, through its whole #include closure (the
# preprocessor's dependency list, so headers included by headers count), only
#   - the public headers (include/icedruid/*.h, and the generated icedruid/version.h),
#   - the cli headers that themselves use the public API only (PUBLIC_CLI_HEADERS),
#   - system headers (libc, jansson for the JSON a command parses itself).
# The inspection commands (INSPECTION: cat, inspect, tasks, the table information
# commands and their helpers in cli/inspect.h) read formats and metadata below the API
# and may include internals. No base/ helper is allowed to the public-API files: they use
# the public API's equivalents (icd_redact_userinfo, icd_set_warn_handler, icd_storage_*,
# icd_timestamp_parse) and cli_fail for their own errors.
set -euo pipefail
: "${ICD_SOURCE_DIR:?}" "${ICD_BUILD_DIR:?}"
src=$(cd "$ICD_SOURCE_DIR" && pwd -P)
build=$(cd "$ICD_BUILD_DIR" && pwd -P)
cc=${CC:-cc}
command -v "$cc" >/dev/null || cc=gcc

INSPECTION="avro_cmds.c cat_files.c cmd_cat.c cmd_table_info.c cmd_tasks.c inspect_common.c
  metadata_cmds.c orc_cmds.c parquet_cmds.c puffin_cmds.c"
PUBLIC_CLI_HEADERS="cli.h commands.h serve_common.h spec_args.h table_args.h"

checks=0 failed=0
ok() { checks=$((checks + 1)); echo "ok: $*"; }
bad() { checks=$((checks + 1)); failed=$((failed + 1)); echo "FAILED: $*"; }

# The headers outside the allowed set that `file` reaches, one per line.
internal_headers() {
  local deps
  deps=$("$cc" -std=c17 -D_GNU_SOURCE -I"$src/include" -I"$src/src" -I"$build/generated" \
    -M "$1" | sed -e 's/^[^:]*://' -e 's/\\$//' | tr ' ' '\n' | sed '/^$/d')
  local self real name
  self=$(realpath "$1")
  while read -r real; do
    [ "$real" = "$self" ] && continue
    case "$real" in
    "$src"/include/icedruid/*.h | "$build"/generated/icedruid/*.h) continue ;;
    "$src"/src/cli/*.h)
      name=${real##*/}
      [[ " $PUBLIC_CLI_HEADERS " == *" $name "* ]] && continue
      echo "${real#"$src"/}" ;;
    "$src"/* | "$build"/*) echo "${real#"$src"/}" ;;
    esac
  done < <(xargs realpath <<<"$deps")
}

n=0
for f in "$src"/src/cli/*.c; do
  base=${f##*/}
  [[ " $(echo $INSPECTION) " == *" $base "* ]] && continue
  n=$((n + 1))
  found=$(internal_headers "$f") || { bad "$base does not preprocess"; continue; }
  if [ -z "$found" ]; then
    ok "$base reaches public headers only"
  else
    bad "$base reaches internal headers: $(echo $found)"
  fi
done
[ "$n" -ge 10 ] && ok "$n public-API files checked" || bad "only $n files checked"

# Every public-only cli header, alone.
for h in $PUBLIC_CLI_HEADERS; do
  found=$(internal_headers "$src/src/cli/$h") || { bad "cli/$h does not preprocess"; continue; }
  [ -z "$found" ] && ok "cli/$h reaches public headers only" ||
    bad "cli/$h reaches internal headers: $(echo $found)"
done

# The check itself sees internals where they are (an inspection command).
found=$(internal_headers "$src/src/cli/cmd_tasks.c")
grep -q '^src/iceberg/' <<<"$found" && ok "the check sees cmd_tasks.c's internal headers" ||
  bad "the check does not see cmd_tasks.c's internal headers"
for f in $INSPECTION; do
  [ -f "$src/src/cli/$f" ] || bad "the inspection list names a missing file: $f"
done

echo "$((checks - failed)) passed, $failed failed"
[ "$failed" = 0 ]
