#!/usr/bin/env bash
# Planning benchmark: `icedruid tasks` on a generated v2 table with 10,000 data files and
# 1,000 delete files in 100 manifests (90 data, 10 delete), written by
# build/bench/tool_gen_manifests with Apache Avro C (libavro), see that file for the layout.
#
#   bash bench/bench_plan.sh                 # defaults below
#   RUNS=9 DATA=20000 DELETES=2000 bash bench/bench_plan.sh
#   RUNS=3 DATA=1000000 DELETES=100000 LAYOUT=linear LIMIT=2 bash bench/bench_plan.sh
#
# LAYOUT=linear writes the generator's linear layout (pairs linear in the table size, see
# tool_gen_manifests.c) and also times `icedruid plan --spec` (a local-catalog spec over
# the same table: the full v2 plan with its splits, printed to /dev/null). Peak RSS of the
# runs is printed (getrusage of the children).
#
# Checks the plan once (10,000 tasks; the number of (data, delete) pairs equals the count
# the generator derived by brute force from the spec's rules), then times RUNS runs of
# `icedruid tasks TABLE --threads 1` pinned to one core (taskset -c 0 when available) and
# RUNS runs with --threads 2 (taskset -c 0,1), stdout to /dev/null. Prints wall and CPU
# (user+sys) seconds per run and their medians; exits non-zero if the one-thread median
# wall time is 1 s or more (LIMIT=seconds to change it).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-$ROOT/build}
ICEDRUID=${ICEDRUID:-$BUILD/icedruid}
GEN=$BUILD/bench/tool_gen_manifests
RUNS=${RUNS:-7}
DATA=${DATA:-10000}
DELETES=${DELETES:-1000}
DATA_MANIFESTS=${DATA_MANIFESTS:-90}
DELETE_MANIFESTS=${DELETE_MANIFESTS:-10}
LIMIT=${LIMIT:-1.0}
LAYOUT=${LAYOUT:-}

if [ ! -x "$ICEDRUID" ] || [ ! -x "$GEN" ]; then
    echo "build first: bash scripts/build.sh release (tool_gen_manifests needs libavro-dev)" >&2
    exit 2
fi
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
TABLE=$TMP/wh/ns/plan_table
mkdir -p "$TMP/wh/ns"
cat >"$TMP/spec.json" <<SPEC
{"type":"index_parallel","spec":{"dataSchema":{"dataSource":"t","timestampSpec":{"column":"day","format":"auto"},
"dimensionsSpec":{"dimensions":["region"]},"granularitySpec":{"segmentGranularity":"day","rollup":false}},
"ioConfig":{"type":"index_parallel","inputSource":{"type":"iceberg","tableName":"plan_table","namespace":"ns",
"icebergCatalog":{"type":"local","warehousePath":"$TMP/wh","catalogProperties":{}},"warehouseSource":{"type":"local"}},
"inputFormat":{"type":"parquet"}},"tuningConfig":{"type":"index_parallel"}}}
SPEC

gen_line=$("$GEN" "$TABLE" "$DATA" "$DELETES" "$DATA_MANIFESTS" "$DELETE_MANIFESTS" $LAYOUT)
echo "generated: $gen_line"
echo "metadata size: $(du -sh "$TABLE/metadata" | cut -f1) in $(ls "$TABLE/metadata" | wc -l) files"
expected_pairs=${gen_line##*pairs=}

PIN1=() PIN2=()
if command -v taskset >/dev/null 2>&1; then
    PIN1=(taskset -c 0)
    if [ "$(nproc)" -ge 2 ]; then PIN2=(taskset -c 0,1); fi
fi

# Correctness of the plan being timed.
# (streamed, one task per line: the whole document does not fit in Python at a million
# tasks)
"$ICEDRUID" tasks "$TABLE" --threads 1 >"$TMP/plan.json"
python3 - "$TMP/plan.json" "$DATA" "$expected_pairs" <<'EOF'
import json, sys
ndata, pairs = int(sys.argv[2]), int(sys.argv[3])
tasks = got_pairs = 0
paths = set()
for line in open(sys.argv[1]):
    if line.startswith('{"data_file"'):
        t = json.loads(line.rstrip().rstrip(","))
        tasks += 1
        got_pairs += len(t["delete_files"])
        paths.add(t["data_file"]["path"])
print("plan: %d tasks, %d (data, delete) pairs" % (tasks, got_pairs))
if tasks != ndata or len(paths) != ndata or got_pairs != pairs:
    sys.exit("plan check FAILED: expected %d tasks and %d pairs" % (ndata, pairs))
EOF
rm -f "$TMP/plan.json"

# time_runs THREADS PIN...: one line per run "wall cpu", via getrusage of the child.
time_runs() {
    local threads=$1
    shift
    python3 - "$RUNS" "$threads" "$@" -- "$ICEDRUID" ${CMD:-tasks "$TABLE"} --threads "$threads" <<'EOF'
import os, resource, subprocess, sys, time
runs, threads = int(sys.argv[1]), sys.argv[2]
sep = sys.argv.index("--")
cmd = sys.argv[3:sep] + sys.argv[sep + 1:]
walls, cpus = [], []
for _ in range(runs):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, check=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    walls.append(wall)
    cpus.append(cpu)
med = lambda v: sorted(v)[len(v) // 2]
print("--threads %s: runs wall %s" % (threads, " ".join("%.3f" % w for w in walls)))
print("--threads %s: runs cpu  %s" % (threads, " ".join("%.3f" % c for c in cpus)))
print("--threads %s: MEDIAN wall %.3f s, cpu %.3f s (%s)" % (threads, med(walls), med(cpus), " ".join(cmd[:3]) if cmd[0] == "taskset" else "unpinned"))
print("--threads %s: peak RSS %.1f MiB" % (threads, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024))
print("MEDIAN_WALL=%.6f" % med(walls))
EOF
}

echo "== one core, --threads 1"
out1=$(time_runs 1 "${PIN1[@]}")
echo "$out1" | grep -v '^MEDIAN_WALL='
echo "== --threads 2"
out2=$(time_runs 2 "${PIN2[@]}")
echo "$out2" | grep -v '^MEDIAN_WALL='

# (the linear layout only: there every data file has a delete, so `plan` decides every
# file from metadata; the default layout has delete-free files, whose footers `plan`
# reads, and the generator writes no data files)
if [ "$LAYOUT" = linear ]; then
    echo "== plan --spec (the full v2 plan, splits included), one core, --threads 1"
    out3=$(CMD="plan --spec $TMP/spec.json" time_runs 1 "${PIN1[@]}")
    echo "$out3" | grep -v '^MEDIAN_WALL='
fi

median1=$(echo "$out1" | sed -n 's/^MEDIAN_WALL=//p')
if python3 -c "import sys; sys.exit(0 if float(sys.argv[1]) < float(sys.argv[2]) else 1)" "$median1" "$LIMIT"; then
    echo "PASS: median one-thread planning time ${median1}s < ${LIMIT}s"
else
    echo "FAIL: median one-thread planning time ${median1}s >= ${LIMIT}s"
    exit 1
fi
