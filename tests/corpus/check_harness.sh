#!/bin/bash
# Self-test of test_scan_oracles.py against fake_scan.py (not a CTest test: it tests the
# harness, not icedruid). Usage: bash tests/corpus/check_harness.sh [SHARED_DIR]
# Every oracle must pass through the fake, and each kind of misbehaviour the fake can
# simulate must make the harness fail with the matching message.
set -u
here=$(cd "$(dirname "$0")" && pwd)
shared=${1:-${ICD_SHARED:-$here/../../../shared}}
harness="$here/test_scan_oracles.py"
export ICD_SHARED="$shared" ICEDRUID="$here/fake_icedruid.sh"
unset FAKE_SCAN_BREAK ICD_ORACLE_VERBOSE
failures=0
out=$(mktemp)
trap 'rm -f "$out"' EXIT

# expect NAME WANT_RC PATTERN [env assignments...] -- [harness args...]
expect() {
  local name=$1 want=$2 pattern=$3
  shift 3
  local envs=()
  while [ $# -gt 0 ] && [ "$1" != "--" ]; do envs+=("$1"); shift; done
  [ $# -gt 0 ] && shift
  env "${envs[@]}" python3 "$harness" "$@" >"$out" 2>&1
  local rc=$?
  if [ "$rc" -ne "$want" ] || ! grep -Eq -- "$pattern" "$out"; then
    echo "FAIL $name: exit $rc (want $want), output lacks /$pattern/:"
    tail -n 5 "$out" | cut -c1-300
    failures=$((failures + 1))
  else
    echo "ok   $name: $(tail -n 1 "$out")"
  fi
}

[ -d "$shared/corpus" ] || { echo "SKIP: no corpus at $shared/corpus"; exit 77; }
expect "all oracles pass through the fake" 0 '^[0-9]+ passed, 0 failed$'
expect "ORC tables compared like the others" 0 '^[0-9]+ passed, 0 failed$' -- _orc
expect "no corpus: skip" 77 '^SKIP: corpus not found' ICD_SHARED=/nonexistent
expect "a missing row" 1 'missing \{"i": 3, "s": "z"\}' FAKE_SCAN_BREAK=drop-row
expect "a missing row (count)" 1 'expected 3 rows \(count\(\*\)\), got 2' FAKE_SCAN_BREAK=drop-row
expect "Impala formats instead of section 3" 1 'timestamp value "[^"]*": expected YYYY-MM-DDTHH:MM:SS.ffffff' \
  FAKE_SCAN_BREAK=impala-format
expect "Impala decimal as number" 1 'decimal\(6,3\) value 123.321: expected a string' FAKE_SCAN_BREAK=impala-format
expect "keys out of schema order" 1 "has keys \['s', 'i'\], expected \['i', 's'\]" FAKE_SCAN_BREAK=key-order
expect "floats off by 0.1%" 1 'FAIL icebird/a_partitioned_mor: expected 6146 rows, got 6146' FAKE_SCAN_BREAK=float-off
expect "floats off by 0.1% (Impala)" 1 'FAIL impala/iceberg_alltypes_part: expected 2 rows, got 2: 2 missing, 2 extra' \
  FAKE_SCAN_BREAK=float-off
expect "a missing ORC row" 1 'FAIL impala/iceberg_partitioned_orc: expected' FAKE_SCAN_BREAK=drop-row -- _orc
expect "timeout" 1 'timed out after 1' FAKE_SCAN_BREAK=sleep ICD_SCAN_TIMEOUT=1 -- iceberg_v2_no_deletes
expect "remaps ignored" 1 'exit 1: icedruid: scan: .*check --remap' FAKE_SCAN_BREAK=no-remap
if python3 "$here/check_nested.py" >"$out" 2>&1; then
  echo "ok   round trip of value kinds no oracle holds yet (check_nested.py)"
else
  echo "FAIL check_nested.py:"; cat "$out"; failures=$((failures + 1))
fi
if [ $failures -ne 0 ]; then
  echo "$failures harness self-test(s) failed"
  exit 1
fi
echo "harness self-test passed"
