#!/usr/bin/env bash
# Configures and builds one flavour of icedruid.
# Usage: bash scripts/build.sh [release|asan|fuzz]   (builds into build/, build-asan/, build-fuzz/)
set -euo pipefail
cd "$(dirname "$0")/.."
flavour=${1:-release}
jobs=$(nproc 2>/dev/null || echo 2)
case "$flavour" in
  release) dir=build;      args=(-DCMAKE_BUILD_TYPE=RelWithDebInfo) ;;
  asan)    dir=build-asan; args=(-DCMAKE_BUILD_TYPE=Debug -DICD_SANITIZE=ON -DCMAKE_C_COMPILER=clang) ;;
  fuzz)    dir=build-fuzz; args=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DICD_FUZZ=ON -DCMAKE_C_COMPILER=clang) ;;
  *) echo "build.sh: unknown flavour '$flavour'" >&2; exit 2 ;;
esac
# ccache, when installed, makes rebuilds in several checkouts of the tree cheap; builds
# without it are unchanged.
if command -v ccache >/dev/null 2>&1; then args+=(-DCMAKE_C_COMPILER_LAUNCHER=ccache); fi
cmake -S . -B "$dir" "${args[@]}" >/dev/null
cmake --build "$dir" -j "$jobs"
