#!/usr/bin/env bash
# Installs dependencies, builds icedruid, and runs it on the bundled example
# (examples/README.md): the Druid input rows of demo.orders — orders 1002 and 1004 were
# removed by a position delete file and 1005 by an equality delete file, so only 1001
# and 1003 remain — then Druid's v1/v2 decision for events (no deletes) and orders.
# Usage: bash scripts/example.sh
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh release >/dev/null
bin=build/icedruid
remap="/tmp/icedruid-example/warehouse=$PWD/examples/warehouse"
echo "== icedruid $($bin --version | cut -d' ' -f2) built at $bin"
echo "== icedruid read --spec examples/orders.spec.json --remap $remap"
"$bin" read --spec examples/orders.spec.json --remap "$remap"
echo "== icedruid plan --spec examples/events.spec.json (no delete files: v1)"
"$bin" plan --spec examples/events.spec.json --remap "$remap"
echo "== icedruid plan --spec examples/orders.spec.json (delete files: v2)"
"$bin" plan --spec examples/orders.spec.json --remap "$remap"
