#!/usr/bin/env bash
# Installs dependencies, builds icedruid, and runs it on the bundled example.
# Usage: bash scripts/example.sh
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh release >/dev/null
bin=build/icedruid
echo "== icedruid $($bin --version | cut -d' ' -f2) built at $bin"
if [ -d examples/warehouse ]; then
  f=$(find examples/warehouse -name '*.parquet' | sort | head -1)
  echo "== icedruid cat $f"
  "$bin" cat "$f"
else
  echo "no bundled example yet"
fi
