#!/usr/bin/env bash
# The Parquet writer's random files read by independent readers: runs the randomized
# round trip (tests/unit/parquet/test_writer_random.c, which already checks our reader
# and byte-for-byte determinism) with an output folder, then DuckDB and hyparquet must
# read every file and give exactly the generated rows (pq_writer_random.mjs).
# Exit 77 when node or the npm packages are missing.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bin=${ICD_BUILD_DIR:-build}/tests/test_writer_random
[ -x "$bin" ] || { echo "skipped: $bin is not built"; exit 77; }
command -v node >/dev/null || { echo "skipped: node is not installed"; exit 77; }
out=$(mktemp -d "${TMPDIR:-/tmp}/icd-pqw-random.XXXXXX")
trap 'rm -rf "$out"' EXIT
"$bin" "$out" || { echo "FAIL: the random round trip failed"; exit 1; }
node "$here/pq_writer_random.mjs" "$out"
rc=$?
if [ "$rc" = 3 ]; then echo "skipped: npm packages missing (bash scripts/node-deps.sh)"; exit 77; fi
exit "$rc"
