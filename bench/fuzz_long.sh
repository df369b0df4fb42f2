#!/usr/bin/env bash
# Long fuzzing: builds build-fuzz/ (clang, libFuzzer + ASan/UBSan) and runs EVERY fuzz
# target for SECONDS each through scripts/fuzz.sh (the one copy of the run logic: seeds
# from tests/fuzz/corpus/NAME, crashes left in build-fuzz/crashes/NAME). Prints runs per
# target; a crash fails the run. Optional NAME filters (substrings) limit the targets.
# Usage: bash bench/fuzz_long.sh SECONDS [NAME...]     e.g. bash bench/fuzz_long.sh 600
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:?usage: bench/fuzz_long.sh SECONDS [NAME...]}
shift
bash scripts/build.sh fuzz >/dev/null
ICD_FUZZ_ONLY="$*" exec bash scripts/fuzz.sh "$secs"
