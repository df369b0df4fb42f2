#!/usr/bin/env bash
# Installs dependencies, checks formatting, builds, runs cppcheck (scripts/cppcheck.sh), then
# every test: the normal build (gcc), the ASan+UBSan build (clang), then each libFuzzer
# target for a bounded time.
# Usage: bash scripts/test.sh     (FUZZ_SECONDS=N to change the per-target fuzzing time)
set -uo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh || exit 1
bash scripts/node-deps.sh || exit 1

status=0
echo "== formatting (.clang-format)"
if command -v clang-format >/dev/null 2>&1; then
  unformatted=$(git ls-files '*.c' '*.h' | while read -r f; do
    clang-format --dry-run --Werror "$f" >/dev/null 2>&1 || echo "$f"; done)
  if [ -n "$unformatted" ]; then
    echo "not formatted with clang-format:"; echo "$unformatted"; status=1
  else
    echo "all C sources formatted"
  fi
fi
jobs=$(nproc 2>/dev/null || echo 2)

run_ctest() { # dir label
  echo "== tests: $2"
  (cd "$1" && ctest --output-on-failure -j "$jobs" --timeout 1200) || status=1
}

bash scripts/build.sh release || exit 1
echo "== static analysis (cppcheck)"
bash scripts/cppcheck.sh build && echo "cppcheck: no findings" || status=1
run_ctest build "normal build (gcc)"

export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:strict_string_checks=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
bash scripts/build.sh asan || exit 1
run_ctest build-asan "ASan+UBSan build (clang)"

echo "== fuzzing: ${FUZZ_SECONDS:=20}s per target"
bash scripts/build.sh fuzz || exit 1
bash scripts/fuzz.sh "$FUZZ_SECONDS" || status=1

if [ $status -eq 0 ]; then echo "ALL TESTS PASSED"; else echo "SOME TESTS FAILED"; fi
exit $status
