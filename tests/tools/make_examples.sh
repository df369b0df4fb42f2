#!/usr/bin/env bash
# Regenerates the bundled example tables under examples/warehouse (deterministic: running it
# again gives byte-identical files, which tests/tools/test_make_examples.py checks).
#
#   bash tests/tools/make_examples.sh [OUT]      default OUT: <repo>/examples/warehouse
#
# The metadata inside the tables uses the location prefix /tmp/icedruid-example/warehouse;
# readers map it back with --remap /tmp/icedruid-example/warehouse=<repo>/examples/warehouse.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
out="${1:-$repo/examples/warehouse}"
# Start from an empty table directory so no stale file survives a change of the generator.
rm -rf "$out/demo/orders" "$out/demo/events"
PYTHONDONTWRITEBYTECODE=1 python3 "$here/make_fixture.py" examples "$out" \
  --location-prefix /tmp/icedruid-example/warehouse
