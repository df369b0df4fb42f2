#!/usr/bin/env python3
"""`diff --emit native|msq --stage-to DIR` stages only the materialized files its statements
read, i.e. the files of the touched intervals (issue 13 item 5), on a table written snapshot
by snapshot with tests/tools/icewriter (partitioned by day):

  S1  day 1: X; day 2: A, B; day 3: C, D       (all raw)
  S2  position deletes in A                    -> A materialized
  S3  position deletes in C                    -> A and C materialized

  - diff S2 -> S3 touches day 3 only: exactly one file is staged, C's (named as `stage`
    names it at S3), not A's, although A is materialized in S3 too; the warehouseSource
    lists D (raw) and staged C only, and DuckDB / hyparquet reading those files give
    exactly scan's rows of day 3;
  - --emit msq: the same single file staged, the EXTERN lists it, and not A's; the
    statement parses (druid-query-toolkit) with one `local` source;
  - --serve-url: native gets combining(local, http); MSQ, whose slicer cannot read a
    `combining` source (ExternalInputSpecSlicer.splitsToSlice), is refused in one line;
  - diff S1 -> S3 touches days 2 and 3: A's and C's files staged (2), and the files read
    give scan's rows of days 2 and 3;
  - staging again finds the file there (0 written).
Exit 77 when the npm readers are missing.
"""
import datetime as dt
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.abspath(os.environ.get("ICD_SOURCE_DIR", os.path.join(HERE, "..", "..")))
ICEDRUID = os.environ.get("ICEDRUID", os.path.join(SRC, "build", "icedruid"))
sys.path.insert(0, os.path.join(SRC, "tests", "tools"))
sys.path.insert(0, HERE)
os.environ.setdefault("ICEDRUID", ICEDRUID)
import stage_check as sc  # noqa: E402
from icewriter.iceberg import NestedField, PartitionField, PartitionSpec, Schema, Table  # noqa: E402

UTC = dt.timezone.utc
PREFIX = "/tmp/icedruid-diff-stage-test/wh"
failures = []
checks = [0]


def check(cond, msg):
    checks[0] += 1
    print(("ok: " if cond else "FAIL: ") + msg)
    if not cond:
        failures.append(msg)


SCHEMA = Schema([
    NestedField(1, "id", "long", required=True),
    NestedField(2, "ts", "timestamptz", required=True),
    NestedField(3, "name", "string"),
])


def rows(day, ids):
    base = dt.datetime(2024, 6, day, tzinfo=UTC)
    return [(i, base + dt.timedelta(seconds=11 * k), "n%d" % i) for k, i in enumerate(ids)]


def write_spec(path, wh):
    spec = {"type": "index_parallel", "spec": {
        "dataSchema": {"dataSource": "ev",
                       "timestampSpec": {"column": "ts", "format": "auto"},
                       "dimensionsSpec": {"dimensions": [{"type": "long", "name": "id"}, "name"]},
                       "granularitySpec": {"segmentGranularity": "day", "rollup": False}},
        "ioConfig": {"type": "index_parallel",
                     "inputSource": {"type": "iceberg", "tableName": "ev", "namespace": "shop",
                                     "icebergCatalog": {"type": "local", "warehousePath": wh},
                                     "warehouseSource": {"type": "local"}},
                     "inputFormat": {"type": "parquet"}},
        "tuningConfig": {"type": "index_parallel"}}}
    with open(path, "w") as f:
        json.dump(spec, f)


def staged_names(d):
    return sorted(x for x in os.listdir(d) if not x.startswith(".")) if os.path.isdir(d) else []


def on_days(*days):
    prefixes = tuple("2024-06-%02d" % d for d in days)

    def keep(row):
        v = row["ts"]
        if isinstance(v, (int, float)):  # micros
            v = dt.datetime.fromtimestamp(v / 1e6, UTC).isoformat()
        return str(v).startswith(prefixes)
    return keep


def main():
    if not os.path.exists(ICEDRUID):
        print("skip: icedruid not built")
        return 77
    if not sc.node_ready():
        print("skip: npm readers missing (bash scripts/node-deps.sh)")
        return 77
    tmp = tempfile.mkdtemp(prefix="icd-test-diff-stage-")
    try:
        wh = os.path.join(tmp, "wh")
        tdir = os.path.join(wh, "shop", "ev")
        spec = os.path.join(tmp, "ev.spec.json")
        write_spec(spec, wh)
        remap = ["--remap", PREFIX + "=" + wh]
        t = Table.create(tdir, PREFIX + "/shop/ev", SCHEMA,
                         PartitionSpec([PartitionField(2, 1000, "ts_day", "day")]),
                         properties={"write.delete.mode": "merge-on-read"})
        x = t.write_data(rows(1, range(0, 200)), name="x")[0]
        a = t.write_data(rows(2, range(200, 500)), name="a")[0]
        b = t.write_data(rows(2, range(500, 600)), name="b")[0]
        c = t.write_data(rows(3, range(600, 900)), name="c")[0]
        d = t.write_data(rows(3, range(900, 1000)), name="d")[0]
        s1 = t.append([x, a, b, c, d])
        s2 = t.row_delta(deletes=[t.write_position_deletes([(a, 0), (a, 7)])])
        a_dir = os.path.join(tmp, "at-s2")  # `stage` at S2: A's file (unchanged in S3)
        sc.stage(spec, a_dir, remap)
        a_names = staged_names(a_dir)
        t.row_delta(deletes=[t.write_position_deletes([(c, 3), (c, 4), (c, 299)])])
        local = lambda f: f.path.replace(PREFIX, wh)  # noqa: E731
        whole = os.path.join(tmp, "whole")
        sc.stage(spec, whole, remap)
        names = staged_names(whole)
        c_names = [n for n in names if n not in a_names]
        check(len(a_names) == 1 and len(names) == 2 and len(c_names) == 1,
              "stage names A's file at S2 %s and A's + C's at S3 %s" % (a_names, names))

        # ---- S2 -> S3, native: day 3 only
        sdir = os.path.join(tmp, "staged-native")
        r = sc.run(["diff", "--spec", spec, "--from-snapshot", str(s2.snapshot_id), "--emit", "native",
                    "--stage-to", sdir] + remap)
        task = json.loads(r.stdout)
        iv = task["spec"]["dataSchema"]["granularitySpec"].get("intervals")
        check(iv == ["2024-06-03T00:00:00.000Z/2024-06-04T00:00:00.000Z"], "S2 -> S3 re-ingests day 3: %s" % iv)
        got = staged_names(sdir)
        check(got == c_names, "exactly one file staged, C's (not A's, also materialized): %s" % got)
        src = task["spec"]["ioConfig"]["inputSource"]
        files = src.get("files", [])
        check(src["type"] == "local" and sorted(files) == sorted([local(d), os.path.join(sdir, got[0] if got else "")]),
              "the warehouseSource lists D (raw) and the staged file only: %s" % files)
        check("staged 1 materialized file " in r.stderr and "(1 written, 0 already there)" in r.stderr,
              "diff says what it staged: %s" % r.stderr.strip().splitlines()[-1:])
        problems, counted = sc.compare_table(tdir, spec, files, remap, scan_rows=on_days(3))
        check(not problems and counted.get("duckdb") == 100 + 300 - 3,
              "DuckDB and hyparquet read exactly scan's live rows of day 3: %s %s" % (counted, problems))
        r = sc.run(["diff", "--spec", spec, "--from-snapshot", str(s2.snapshot_id), "--emit", "native",
                    "--stage-to", sdir] + remap)
        check("(0 written, 1 already there)" in r.stderr and staged_names(sdir) == got,
              "a second run finds it staged (0 written)")

        # ---- S2 -> S3, MSQ: the same one file
        mdir = os.path.join(tmp, "staged-msq")
        r = sc.run(["diff", "--spec", spec, "--from-snapshot", str(s2.snapshot_id), "--emit", "msq",
                    "--stage-to", mdir] + remap)
        mgot = staged_names(mdir)
        in_sql = sorted(set(re.findall(r"icd-[0-9a-f]{8}-[0-9a-f]{32}\.parquet", r.stdout)))
        check(mgot == got and in_sql == got and r.stdout.count("REPLACE INTO") == 1,
              "--emit msq: one statement, the same single file staged and listed: %s %s" % (mgot, in_sql))

        # the statement parses (druid-query-toolkit) and reads one `local` source, not `combining`
        parsed = json.loads(subprocess.run(["node", os.path.join(SRC, "tests", "node", "parse_msq.cjs")],
                                           input=json.dumps([r.stdout.rstrip().rstrip(";")]), capture_output=True,
                                           text=True, check=True, cwd=os.path.join(SRC, "tests", "node")).stdout)[0]
        esrc = json.loads(parsed["extern"][0]) if parsed.get("ok") and parsed.get("extern") else {}
        check(esrc.get("type") == "local" and sorted(esrc.get("files", [])) ==
              sorted([local(d), os.path.join(mdir, got[0] if got else "")]),
              "--emit msq --stage-to: EXTERN reads one local source (D + staged C): %s" % json.dumps(esrc)[:300])

        # ---- raw + served files: `combining`, which native reads and MSQ's slicer cannot
        base = "http://127.0.0.1:8399"
        r = sc.run(["diff", "--spec", spec, "--from-snapshot", str(s2.snapshot_id), "--emit", "native",
                    "--serve-url", base] + remap)
        nsrc = json.loads(r.stdout)["spec"]["ioConfig"]["inputSource"]
        check(nsrc["type"] == "combining" and [x["type"] for x in nsrc["delegates"]] == ["local", "http"],
              "--emit native --serve-url: combining(local D, http C)")
        r = sc.run(["diff", "--spec", spec, "--from-snapshot", str(s2.snapshot_id), "--emit", "msq",
                    "--serve-url", base] + remap, ok=False)
        lines = r.stderr.strip().splitlines()
        check(r.returncode == 1 and r.stdout == "" and len(lines) == 1 and "combining" in lines[0] and
              "--emit native" in lines[0] and "--stage-to" in lines[0],
              "--emit msq --serve-url with raw + served files: refused in one line: %s" % r.stderr.strip())

        # ---- S1 -> S3: days 2 and 3, A's and C's files
        bdir = os.path.join(tmp, "staged-both")
        r = sc.run(["diff", "--spec", spec, "--from-snapshot", str(s1.snapshot_id), "--emit", "native",
                    "--stage-to", bdir] + remap)
        task = json.loads(r.stdout)
        iv = task["spec"]["dataSchema"]["granularitySpec"].get("intervals")
        both = staged_names(bdir)
        check(iv == ["2024-06-02T00:00:00.000Z/2024-06-04T00:00:00.000Z"] and both == names,
              "S1 -> S3 re-ingests days 2-3 and stages A's and C's files: %s %s" % (iv, both))
        files = task["spec"]["ioConfig"]["inputSource"]["files"]
        check(local(x) not in files and local(b) in files and local(d) in files and len(files) == 4,
              "and lists B and D raw, not day 1's X: %d files" % len(files))
        problems, counted = sc.compare_table(tdir, spec, files, remap, scan_rows=on_days(2, 3))
        check(not problems and counted.get("duckdb") == 400 - 2 + 400 - 3,
              "the files read give exactly scan's live rows of days 2-3: %s %s" % (counted, problems))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("%d checks, %d failed" % (checks[0], len(failures)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
