#!/usr/bin/env bash
# Static analysis of the library and the command (src/) with cppcheck: the warning and
# portability checks plus cppcheck's errors. A finding fails; true false positives are
# listed, each with its reason, in scripts/cppcheck-suppressions.txt.
# Usage: bash scripts/cppcheck.sh [BUILD_DIR]   (BUILD_DIR/generated holds the protoc-c
# header of the ORC reader; default build/)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
jobs=$(nproc 2>/dev/null || echo 2)
exec cppcheck -q -j "$jobs" --std=c11 --enable=warning,portability --inline-suppr \
  --error-exitcode=1 -D_GNU_SOURCE -I src -I include -I "$build/generated" \
  --suppress=missingIncludeSystem --suppressions-list=scripts/cppcheck-suppressions.txt src
