"""A data or delete file's format is its manifest entry's file_format, never its name.

Iceberg's spec makes `file_format` the rule; a file's name may have any extension or none
(Impala writes "000000_0"). Two copies of one table are written with tests/tools/icewriter:
one Parquet, one ORC and one Avro data file plus a Parquet position delete file, named
normally in the first copy and with misleading or no extensions in the second (the Parquet
files end in ".avro", the ORC file in ".parquet", the Avro file has no extension). The test
requires that `read` gives the same rows for both copies, that each row's values are the
ones Druid's reader for its file's real format gives (date: Parquet epoch millis, ORC the
DateTime text, Avro the int of days; timestamp: Parquet millis truncated toward zero, ORC
millis floored, Avro the raw micros; checked here against values written in the test), and
that `scan`, `tasks` and `diff` agree between the copies.
"""
import json
import os
import subprocess
import sys
import tempfile

ICEDRUID = os.environ.get("ICEDRUID", "build/icedruid")
SRC = os.path.abspath(os.environ.get("ICD_SOURCE_DIR",
                                     os.path.join(os.path.dirname(__file__), "..", "..")))
sys.path.insert(0, os.path.join(SRC, "tests", "tools"))
from icewriter.iceberg import NestedField, PartitionSpec, Schema, Table  # noqa: E402

DAY0 = 19875  # 2024-06-01
US0 = DAY0 * 86400 * 1000000
failures = []


def check(cond, msg):
    if not cond:
        failures.append(msg)
        print("FAIL:", msg)


def build(root, loc, misnamed):
    schema = Schema([NestedField(1, "id", "long", True), NestedField(2, "ts", "timestamp", False),
                     NestedField(3, "d", "date", False)])
    t = Table.create(root, loc, schema, PartitionSpec.unpartitioned())
    if misnamed:
        t.file_exts = {"parquet": "avro", "orc": "parquet", "avro": ""}
    files = {}
    for k, fmt in enumerate(("PARQUET", "ORC", "AVRO")):
        rows = [{"id": 10 * k + i, "ts": US0 + i * 1500 - 7_000_000_000 * (i % 2), "d": DAY0 + i}
                for i in range(5)]
        files[fmt] = t.write_data(rows, name="f" + fmt.lower(), file_format=fmt)
    t.append(files["PARQUET"] + files["ORC"] + files["AVRO"])
    pos = [(files[fmt][0], 2) for fmt in ("PARQUET", "ORC", "AVRO")]
    t.row_delta(deletes=[t.write_position_deletes([p]) for p in pos])
    md = json.load(open(os.path.join(root, "metadata", "v3.metadata.json")))
    return [s["snapshot-id"] for s in sorted(md["snapshots"], key=lambda s: s["sequence-number"])]


def run(args):
    p = subprocess.run([ICEDRUID] + args, capture_output=True, text=True)
    check(p.returncode == 0, "%s: exit %d: %s" % (" ".join(args[:2]), p.returncode, p.stderr.strip()))
    return p.stdout


def expected(row_id, fmt):
    """Druid's reader values for the row written above (id -> its file's format)."""
    i = row_id % 10
    us = US0 + i * 1500 - 7_000_000_000 * (i % 2)
    days = DAY0 + i
    if fmt == "PARQUET":
        return -(-us // 1000) if us < 0 else us // 1000, days * 86400000
    if fmt == "ORC":
        y, m, d = 2024, 6, 1 + i
        return us // 1000, "%04d-%02d-%02dT00:00:00.000Z" % (y, m, d)
    return us, days


def main():
    with tempfile.TemporaryDirectory() as tmp:
        out = {}
        for misnamed in (False, True):
            name = "misnamed" if misnamed else "named"
            loc = "/tmp/icedruid-fmt/db/" + name
            path = os.path.join(tmp, "db", name)
            snaps = build(path, loc, misnamed)
            data = sorted(os.listdir(os.path.join(path, "data")))
            if misnamed:
                check(not any(f.endswith(".orc") for f in data) and any("-forc.parquet" in f for f in data)
                      and any(f.endswith("-favro") for f in data), "misnamed files: %s" % data)
            spec = {"type": "index_parallel", "spec": {
                "dataSchema": {"dataSource": name, "timestampSpec": {"column": "ts", "format": "auto"},
                               "dimensionsSpec": {"dimensions": []},
                               "granularitySpec": {"segmentGranularity": "hour", "rollup": False}},
                "ioConfig": {"type": "index_parallel", "inputSource": {
                    "type": "iceberg", "tableName": name, "namespace": "db",
                    "icebergCatalog": {"type": "local", "warehousePath": tmp},
                    "warehouseSource": {"type": "local"}}, "inputFormat": {"type": "parquet"}},
                "tuningConfig": {"type": "index_parallel"}}}
            sp = os.path.join(tmp, name + ".spec.json")
            json.dump(spec, open(sp, "w"))
            remap = "%s=%s" % (loc, path)
            rows = [json.loads(line) for line in run(["read", "--spec", sp, "--remap", remap]).splitlines()]
            scan = sorted(run(["scan", path, "--remap", remap]).splitlines())
            tasks = json.loads(run(["tasks", path, "--remap", remap]) or "null")
            diff = json.loads(run(["diff", "--spec", sp, "--remap", remap, "--from-snapshot", str(snaps[0]),
                                   "--to-snapshot", str(snaps[1]), "--granularity", "HOUR"]) or "{}")
            out[misnamed] = (sorted(rows, key=lambda r: r["id"]), scan, diff, tasks)
            for r in rows:
                fmt = ("PARQUET", "ORC", "AVRO")[r["id"] // 10]
                want_ts, want_d = expected(r["id"], fmt)
                check(r.get("ts") == want_ts and r.get("d") == want_d and r["__time"] == want_ts,
                      "%s: row %d (%s file): ts %r d %r __time %r, want %r %r" % (
                          name, r["id"], fmt, r.get("ts"), r.get("d"), r["__time"], want_ts, want_d))
            check(len(rows) == 12, "%s: %d rows read, want 12" % (name, len(rows)))
        check(out[False][0] == out[True][0], "read differs between the named and misnamed copies")
        check(out[False][1] == out[True][1], "scan differs between the named and misnamed copies")
        fmts = [sorted([t["data_file"]["format"]] + [d.get("format") for d in t["delete_files"]])
                for t in (out[True][3] or {}).get("tasks", [])]
        check(sorted(fmts) == [["AVRO", "PARQUET"], ["ORC", "PARQUET"], ["PARQUET", "PARQUET"]],
              "tasks of the misnamed copy: formats %s" % fmts)
        check({k: v for k, v in out[False][2].items() if "napshot" not in k and k != "dataSource"}
              == {k: v for k, v in out[True][2].items() if "napshot" not in k and k != "dataSource"},
              "diff differs: %s vs %s" % (out[False][2], out[True][2]))
        print("rows per copy: %d; diff replaceIntervals: %s" % (len(out[True][0]),
                                                               out[True][2].get("replaceIntervals")))
    print("%d failures" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
