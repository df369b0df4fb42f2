#!/usr/bin/env bash
# Peak memory of `icedruid serve --rows` with N concurrent split streams of bench2m
# (issue 17): starts the server, opens N `curl`s of /splits/K at once (K = 0..10 in turn,
# every response to /dev/null) and prints the server's peak RSS (VmHWM) once all are done,
# its RSS half a second later (what the idle server keeps) and the wall time of the batch.
#
# usage: bash bench/bench_serve_mem.sh [--streams N] [--bin ICEDRUID] [-- SERVE OPTIONS...]
#   e.g. bash bench/bench_serve_mem.sh --streams 64 --bin /tmp/icedruid.before
#        bash bench/bench_serve_mem.sh --streams 64 -- --stream-memory 256K
set -euo pipefail
cd "$(dirname "$0")/.."
shared=${ICD_SHARED:-../shared}
table="$shared/bench/bench2m/table"
[ -d "$table" ] || { echo "bench_serve_mem.sh: $table not found" >&2; exit 77; }
streams=16 bin=build/icedruid
while [ $# -gt 0 ]; do
  case "$1" in
    --streams) streams=$2; shift 2 ;;
    --bin) bin=$2; shift 2 ;;
    --) shift; break ;;
    *) echo "bench_serve_mem.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
work=$(mktemp -d /tmp/icd_bench_mem.XXXXXX)
pid=
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null; wait 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT
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
"$bin" serve --rows --spec "$work/spec.json" --remap "$remap" --listen 127.0.0.1:0 \
  --threads 2 --max-streams 100 "$@" >"$work/url" 2>"$work/err" &
pid=$!
for _ in $(seq 100); do [ -s "$work/url" ] && break; sleep 0.1; done
url=$(head -1 "$work/url")
[ -n "$url" ] || { cat "$work/err" >&2; exit 1; }
start=$(date +%s.%N)
for i in $(seq 0 $((streams - 1))); do
  curl -sf -o /dev/null -w "%{size_download}\n" "$url/splits/$((i % 11))" >>"$work/sizes" &
done
wait $(jobs -p | grep -v "^$pid\$") 2>/dev/null || true
end=$(date +%s.%N)
hwm=$(awk '/VmHWM/ {print $2}' "/proc/$pid/status")
sleep 0.5 # the streams closed: what the idle server keeps
rss=$(awk '/VmRSS/ {print $2}' "/proc/$pid/status")
printf '%s streams=%d peak_rss=%d MiB idle_rss=%d MiB wall=%.1f s\n' "$bin $*" "$streams" \
  $((hwm / 1024)) $((rss / 1024)) "$(echo "$end - $start" | bc)"
awk '{n++; s += $1} END {printf "  %d responses, %.1f MB\n", n, s / 1e6}' "$work/sizes"
