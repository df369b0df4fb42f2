#!/usr/bin/env bash
# Benchmark of the HTTP split server: runs `wrk` against /splits/N for a bounded time and
# reports requests/s, MB/s and the server's RSS sampled every second.
#
# usage: bash bench/bench_serve.sh [options]
#   --rows N         rows per split of the synthetic provider (default 100000)
#   --splits K       splits (default 16)
#   --threads T      server worker threads (default 4)
#   --connections C  wrk connections (default 4)
#   --duration S     seconds of load (default 10)
#   --split N        the split requested (default 0; "all" spreads over every split)
#   --prebuilt       the synthetic provider repeats one pre-formatted chunk, so the figures
#                    show the server's own cost (HTTP, chunking, copies) without row making
#   --build DIR      build directory (default build)
# The server is tool_serve_bench (bench/tool_serve_bench.c: the server over a synthetic
# provider). To measure the real thing, set SERVER_CMD to any command that prints the
# base URL on its first stdout line and serves until SIGTERM, e.g.
#   SERVER_CMD="build/icedruid serve --spec SPEC.json --listen 127.0.0.1:0" bash bench/bench_serve.sh
set -euo pipefail
cd "$(dirname "$0")/.."

rows=100000 splits=16 threads=4 conns=4 duration=10 split=0 build=build prebuilt=
while [ $# -gt 0 ]; do
  case "$1" in
    --rows) rows=$2; shift 2 ;;
    --splits) splits=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    --connections) conns=$2; shift 2 ;;
    --duration) duration=$2; shift 2 ;;
    --split) split=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    --prebuilt) prebuilt=--prebuilt; shift ;;
    *) echo "bench_serve.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
command -v wrk >/dev/null || { echo "bench_serve.sh: wrk is not installed" >&2; exit 77; }

if [ -z "${SERVER_CMD:-}" ]; then
  if [ ! -d "$build" ]; then
    cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
  fi
  cmake --build "$build" -j 2 --target tool_serve_bench >/dev/null
  SERVER_CMD="$build/bench/tool_serve_bench --rows $rows --splits $splits --threads $threads $prebuilt"
  what="synthetic provider${prebuilt:+ (prebuilt chunks)}, $rows rows/split, $splits splits, $threads threads"
  synthetic=1
else
  synthetic=
  what="$SERVER_CMD"
fi

work=$(mktemp -d /tmp/icd_bench_serve.XXXXXX)
server_pid=
cleanup() {
  if [ -n "$server_pid" ] && kill -0 "$server_pid" 2>/dev/null; then
    kill -TERM "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT

# shellcheck disable=SC2086  # SERVER_CMD is a command line
$SERVER_CMD >"$work/url" 2>"$work/server.err" &
server_pid=$!
for _ in $(seq 100); do
  [ -s "$work/url" ] && break
  kill -0 "$server_pid" 2>/dev/null || { cat "$work/server.err" >&2; exit 1; }
  sleep 0.1
done
base=$(head -n 1 "$work/url")
[ -n "$base" ] || { echo "bench_serve.sh: the server printed no URL" >&2; exit 1; }

# One split's size, and a check that it downloads completely.
one=$(curl -sS --noproxy '*' -o /dev/null -w '%{size_download} %{time_total}' "$base/splits/0")
read -r split_bytes split_secs <<<"$one"

# wrk: fixed split, or every split in turn (a Lua script rotating the path).
args=(-t 2 -c "$conns" -d "${duration}s" --timeout 60s --latency)
if [ "$split" = all ]; then
  cat >"$work/rotate.lua" <<EOF
local n = 0
request = function()
  local path = "/splits/" .. (n % $splits)
  n = n + 1
  return wrk.format("GET", path)
end
EOF
  args+=(-s "$work/rotate.lua")
  target="$base/"
else
  target="$base/splits/$split"
fi

rss_kb() { awk '/^VmRSS:/ {print $2}' "/proc/$server_pid/status" 2>/dev/null || echo 0; }
rss0=$(rss_kb)
wrk "${args[@]}" "$target" >"$work/wrk.out" 2>&1 &
wrk_pid=$!
: >"$work/rss"
t=0
while kill -0 "$wrk_pid" 2>/dev/null; do
  sleep 1
  t=$((t + 1))
  echo "$t $(rss_kb)" >>"$work/rss"
done
wait "$wrk_pid" || { cat "$work/wrk.out" >&2; exit 1; }
rss_end=$(rss_kb)

reqs=$(awk '/^Requests\/sec:/ {print $2}' "$work/wrk.out")
transfer=$(awk '/^Transfer\/sec:/ {print $2}' "$work/wrk.out")
errors=$(grep -E 'Non-2xx|Socket errors' "$work/wrk.out" || true)
# wrk prints Transfer/sec with a unit (KB, MB, GB): convert to MB/s.
mbs=$(awk -v t="$transfer" 'BEGIN {
  v = t + 0; u = t; sub(/^[0-9.]+/, "", u);
  if (u == "GB") v *= 1024; else if (u == "KB") v /= 1024; else if (u == "B") v /= 1048576;
  printf "%.1f", v }')
rows_s=$(awk -v r="$reqs" -v n="$rows" 'BEGIN { printf "%.0f", r * n }')

echo "server:        $what"
echo "load:          wrk, $conns connections, ${duration}s, target $target"
echo "split 0:       $split_bytes bytes, single download ${split_secs}s"
echo "requests/s:    $reqs"
echo "throughput:    $mbs MB/s"
if [ -n "$synthetic" ]; then
  echo "rows/s:        $rows_s (synthetic rows of ~$((split_bytes / rows)) bytes)"
fi
[ -n "$errors" ] && echo "wrk errors:    $errors"
echo "latency:       $(awk '/^    Latency/ {print "avg " $2 ", stdev " $3 ", max " $4}' "$work/wrk.out")"
echo "RSS (MB):      start $(awk -v k="$rss0" 'BEGIN {printf "%.1f", k/1024}')," \
     "end $(awk -v k="$rss_end" 'BEGIN {printf "%.1f", k/1024}')"
echo "RSS over time: $(awk '{printf "%ss=%.1f ", $1, $2/1024}' "$work/rss")"
