#!/usr/bin/env bash
# Runs every libFuzzer target of build-fuzz/ for SECONDS each, starting from its seed
# corpus (tests/fuzz/corpus/NAME), with tests/fuzz/NAME.dict when there is one. A crash fails the run and leaves the input in
# build-fuzz/crashes/NAME/ — copy it into the seed corpus to keep it as a regression test.
# Usage: bash scripts/fuzz.sh [SECONDS]   (ICD_FUZZ_ONLY="a b": only targets whose name
# contains one of the words; bench/fuzz_long.sh builds and runs this for a long time)
set -uo pipefail
cd "$(dirname "$0")/.."
secs=${1:-30}
status=0 count=0
for t in build-fuzz/tests/fuzz_*; do
  [ -x "$t" ] || continue
  name=$(basename "$t")
  if [ -n "${ICD_FUZZ_ONLY:-}" ]; then
    keep=0
    for w in $ICD_FUZZ_ONLY; do [[ $name == *"$w"* ]] && keep=1; done
    [ $keep = 1 ] || continue
  fi
  seeds=tests/fuzz/corpus/$name
  work=build-fuzz/corpus/$name
  crashes=build-fuzz/crashes/$name
  mkdir -p "$work" "$crashes"
  dict=()
  [ -f "tests/fuzz/$name.dict" ] && dict=(-dict="tests/fuzz/$name.dict")
  echo "-- $name (${secs}s)"
  if "$t" "${dict[@]}" -max_total_time="$secs" -max_len=262144 -rss_limit_mb=2048 -timeout=20 \
       -artifact_prefix="$crashes/" -print_final_stats=0 "$work" "$seeds" \
       >"build-fuzz/$name.log" 2>&1; then
    # libFuzzer's closing line; '#N' patterns also occur in the recommended dictionary
    runs=$(sed -n 's/^Done \([0-9]*\) runs.*/\1/p' "build-fuzz/$name.log" | tail -1)
    cov=$(grep -Eo 'cov: [0-9]+' "build-fuzz/$name.log" | tail -1)
    echo "   ok: $runs runs ($(( ${runs:-0} / secs )) runs/s), $cov"
  else
    echo "   FAILED: see build-fuzz/$name.log and $crashes/"
    tail -30 "build-fuzz/$name.log"
    status=1
  fi
  count=$((count + 1))
done
echo "fuzz: $count targets, $([ $status -eq 0 ] && echo no crashes || echo CRASHES)"
exit $status
