#!/usr/bin/env bash
# Benchmark of `icedruid serve` on a real table: bench2m (2 million rows, 11 data files,
# position and equality deletes; ../shared/bench/README.md) through a Druid spec with a
# local catalog. Runs wrk against /splits/N via bench/bench_serve.sh's SERVER_CMD hook and
# reports requests/s, MB/s, latency and the server's RSS sampled every second (RSS must
# stay flat: each stream holds a bounded chunk queue plus one row group).
#
# usage: bash bench/bench_serve_real.sh [--split N|all] [--connections C] [--duration S]
#                                       [--threads T] [--build DIR]
# Every split is one 200,000-row data file (about 40 MB of NDJSON), so one request is a
# large download: requests/s x rows/split = rows/s.
set -euo pipefail
cd "$(dirname "$0")/.."
shared=${ICD_SHARED:-../shared}
table="$shared/bench/bench2m/table"
[ -d "$table" ] || { echo "bench_serve_real.sh: $table not found" >&2; exit 77; }
split=0 conns=4 duration=20 threads=4 build=build
while [ $# -gt 0 ]; do
  case "$1" in
    --split) split=$2; shift 2 ;;
    --connections) conns=$2; shift 2 ;;
    --duration) duration=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    *) echo "bench_serve_real.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
[ -x "$build/icedruid" ] || bash scripts/build.sh release >/dev/null
work=$(mktemp -d /tmp/icd_bench_real.XXXXXX)
trap 'rm -rf "$work"' EXIT
warehouse=$(cd "$shared/bench" && pwd)
cat >"$work/spec.json" <<JSON
{"type": "index_parallel", "spec": {
  "dataSchema": {"dataSource": "bench2m",
                 "timestampSpec": {"column": "event_time", "format": "auto"},
                 "dimensionsSpec": {"dimensions": []},
                 "granularitySpec": {"segmentGranularity": "day", "rollup": false}},
  "ioConfig": {"type": "index_parallel",
    "inputSource": {"type": "iceberg", "tableName": "table", "namespace": "bench2m",
      "icebergCatalog": {"type": "local", "warehousePath": "$warehouse"},
      "warehouseSource": {"type": "local"}},
    "inputFormat": {"type": "parquet"}},
  "tuningConfig": {"type": "index_parallel"}}}
JSON
remap="/tmp/icedruid-corpus/bench2m/table=$(cd "$table" && pwd)"
splits=$("$build/icedruid" plan --spec "$work/spec.json" --remap "$remap" |
         python3 -c 'import json,sys; print(len(json.load(sys.stdin)["splits"]))')
echo "bench2m: $splits splits (v2), 200,000 rows per split before deletes"
SERVER_CMD="$build/icedruid serve --spec $work/spec.json --remap $remap --listen 127.0.0.1:0 --threads $threads" \
  bash bench/bench_serve.sh --split "$split" --splits "$splits" --connections "$conns" \
  --duration "$duration"
