#!/usr/bin/env bash
# Installs the npm packages that tests and benchmarks use (never the product):
# DuckDB (@duckdb/node-api) as a peer/oracle, icebird and hyparquet as independent readers,
# @20minutes/s3rver as the S3-compatible test server (verifies SigV4 signatures),
# druid-query-toolkit (the SQL parser of Druid's console) for the emitted MSQ statements.
# Idempotent; a failure here is reported, and the tests that need a package skip clearly.
set -uo pipefail
cd "$(dirname "$0")/../tests/node"
if [ -d node_modules/@duckdb/node-api ] && [ -d node_modules/icebird ] && [ -d node_modules/hyparquet ] \
   && [ -d node_modules/@20minutes/s3rver ] && [ -d node_modules/druid-query-toolkit ]; then
  echo "node-deps: present"
  exit 0
fi
npm install --no-audit --no-fund --loglevel=error || { echo "node-deps: npm install failed" >&2; exit 1; }
