#!/usr/bin/env bash
# Every Iceberg primitive and the mirrored legacy forms (INT96, TIMESTAMP_MILLIS, binary
# strings, decimal on BYTE_ARRAY, 2-level list) written through the row sink by
# tests/unit/parquet/test_writer_iceberg.c, then read by DuckDB (values compared with the
# emitted ones) and hyparquet (pq_writer_types.mjs). Exit 77 when node or the npm
# packages are missing.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bin=${ICD_BUILD_DIR:-build}/tests/test_writer_iceberg
[ -x "$bin" ] || { echo "skipped: $bin is not built"; exit 77; }
command -v node >/dev/null || { echo "skipped: node is not installed"; exit 77; }
out=$(mktemp -d "${TMPDIR:-/tmp}/icd-pqw-types.XXXXXX")
trap 'rm -rf "$out"' EXIT
PQW_OUT_DIR=$out "$bin" || { echo "FAIL: test_writer_iceberg failed"; exit 1; }
node "$here/pq_writer_types.mjs" "$out"
rc=$?
if [ "$rc" = 3 ]; then echo "skipped: npm packages missing (bash scripts/node-deps.sh)"; exit 77; fi
exit "$rc"
