"""`icedruid diff`'s statistics shortcut against reading the rows and against Druid's rules,
for every data file format and timestamp type.

diff decides a removed or added file without reading it when the column bounds of the
timestamp column put every row in one bucket. The bounds are Iceberg values (micros); the
rows reach Druid through the reader of the file's format, which gives different values:
Druid's Parquet reader (ParquetGroupConverter, TIMESTAMP_MICROS) millis truncated toward
zero, its ORC reader (OrcStructConverter: OrcTimestamp.getTime) millis floored, its Avro
reader (a GenericRecord without logical-type conversions) the raw long of micros. For each
format (PARQUET, AVRO, ORC) x type (timestamp, timestamptz), two copies of one table are
written with tests/tools/icewriter: one whose manifests carry the timestamp bounds (the
shortcut is taken where it can be) and one without any bounds (every file is read). Files:
rows inside one hour, rows over several days, rows an hour before the epoch with sub-millisecond
parts (-1.5 ms .. -1 us off: one bucket when floored, two when truncated toward zero) and rows
whose micros read as millis fall in one hour. Snapshots: S1 append three files, S2 delete a
whole file, S3 append a file, S4 position deletes, S5 delete another whole file.

For consecutive snapshots, S1->S3 and S1->S5, every timestampSpec format (auto, micro, millis) and HOUR/DAY
granularity the test requires: diff on the table with bounds == diff on the table without
== the intervals computed here from each row's __time, which the Druid-side oracle
(tests/druid/oracle/DruidTimestampOracle.java, Joda-Time) gives for the value the file's
reader hands to Druid's timestamp parser. It also checks that the shortcut was taken
(filesDecidedByStatistics > 0) on the table with bounds. Exit 77 without the JDK or Joda-Time.
"""
import collections
import dataclasses
import json
import os
import subprocess
import sys
import tempfile

ICEDRUID = os.environ.get("ICEDRUID", "build/icedruid")
BUILD = os.environ.get("ICD_BUILD_DIR", "build")
SRC = os.path.abspath(os.environ.get("ICD_SOURCE_DIR",
                                     os.path.join(os.path.dirname(__file__), "..", "..")))
JODA = "/usr/share/java/joda-time.jar"
sys.path.insert(0, os.path.join(SRC, "tests", "tools"))
for need in (JODA, "/usr/bin/javac"):
    if not os.path.exists(need):
        print("SKIP: %s not installed" % need)
        sys.exit(77)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from java_oracle import compile_oracle  # noqa: E402
out_dir = compile_oracle(BUILD, ["DruidTimestampOracle"], [JODA])

from icewriter.iceberg import NestedField, PartitionSpec, Schema, Table  # noqa: E402

import test_diff  # noqa: E402  (its independent UTC bucket arithmetic)

H = 3600 * 1000000
DAY0 = 1717200000000000  # 2024-06-01T00:00:00Z in micros
SPEC_FORMATS = ["auto", "micro", "millis"]
GRANS = ["HOUR", "DAY"]
PAIRS = [(0, 1), (1, 2), (2, 3), (3, 4), (0, 2), (0, 4)]  # snapshot indexes (A, B)


def reader_value(micros, file_format):
    """The Java Long Druid's reader for the file's format gives for a timestamp column."""
    if file_format == "PARQUET":  # TimeUnit.MILLISECONDS.convert(micros, MICROSECONDS)
        return -(-micros // 1000) if micros < 0 else micros // 1000
    if file_format == "ORC":  # java.sql.Timestamp.getTime(): floor
        return micros // 1000
    return micros  # AVRO: the raw long


def file_rows():
    """(name, rows) of the table's data files; ids are unique."""
    f1 = [{"id": i, "ts": DAY0 + 5 * H + i * 1000} for i in range(0, 40)]  # one hour (all readings)
    f2 = [{"id": i, "ts": DAY0 + (i - 40) * 7 * H} for i in range(40, 60)]  # several days
    # an hour before the epoch, sub-millisecond parts: one hour bucket floored, two when
    # truncated toward zero (not within a second of the epoch: see icewriter/orc.py)
    f3 = [{"id": 60, "ts": -H - 1500}, {"id": 61, "ts": -H - 1001}, {"id": 62, "ts": -H - 999},
          {"id": 63, "ts": -H - 1}]
    f4 = [{"id": i, "ts": DAY0 + 30 * H + (i - 100) * 17} for i in range(100, 130)]  # one hour
    return [("f1", f1), ("f2", f2), ("f3", f3), ("f4", f4)]


def build(root, loc, file_format, ttype, bounds):
    schema = Schema([NestedField(1, "id", "long", True), NestedField(2, "ts", ttype, False)])
    t = Table.create(root, loc, schema, PartitionSpec.unpartitioned())
    t.orc_metrics = True

    def write(name, rows):
        fs = t.write_data(rows, name=name, file_format=file_format)
        if not bounds:
            fs = [dataclasses.replace(f, lower_bounds={}, upper_bounds={}) for f in fs]
        return fs
    files = {name: write(name, rows) for name, rows in file_rows()}
    t.append(files["f1"] + files["f2"] + files["f3"])          # S1
    t.delete_files(files["f1"])                                 # S2: a whole file removed
    t.append(files["f4"])                                       # S3: a file added
    pos = t.write_position_deletes([(files["f2"][0], p) for p in (1, 4, 9)])
    t.row_delta(deletes=[pos])                                  # S4: deletes in a live file
    t.delete_files(files["f3"])                                 # S5: another whole file
    md = json.load(open(os.path.join(root, "metadata", "v6.metadata.json")))
    return [s["snapshot-id"] for s in sorted(md["snapshots"], key=lambda s: s["sequence-number"])]


def live_ids():
    """The ids live after S1..S5 (independent of icedruid)."""
    rows = dict(file_rows())
    f2_ids = [r["id"] for r in rows["f2"]]
    s1 = {r["id"] for n in ("f1", "f2", "f3") for r in rows[n]}
    s2 = s1 - {r["id"] for r in rows["f1"]}
    s3 = s2 | {r["id"] for r in rows["f4"]}
    s4 = s3 - {f2_ids[p] for p in (1, 4, 9)}
    s5 = s4 - {r["id"] for r in rows["f3"]}
    return [s1, s2, s3, s4, s5]


def oracle_times(file_format):
    """{(spec format, id): __time} from the Java oracle; a missing key = a parse exception."""
    ts = {r["id"]: r["ts"] for _, rows in file_rows() for r in rows}
    lines, keys = [], []
    for fmt in SPEC_FORMATS:
        for i, us in sorted(ts.items()):
            keys.append((fmt, i))
            lines.append("%d\t%s\tlong\t%s\n" % (len(keys) - 1, fmt.encode().hex(),
                                                 str(reader_value(us, file_format)).encode().hex()))
    res = subprocess.run(["java", "-cp", JODA + ":" + out_dir, "DruidTimestampOracle"],
                         input="".join(lines), capture_output=True, text=True, check=True).stdout
    out = {}
    for line in res.splitlines():
        p = line.split("\t")
        if p[1] == "OK":
            out[keys[int(p[0])]] = int(p[2])
    return out


def bucket_text(ms, gran):
    return test_diff.interval_text(test_diff.bucket(ms, gran))  # years past 9999 too


def main():
    failures, compared, shortcut_files = [], 0, collections.Counter()
    live = live_ids()
    with tempfile.TemporaryDirectory() as tmp:
        for file_format in ("PARQUET", "AVRO", "ORC"):
            times = oracle_times(file_format)
            for ttype in ("timestamp", "timestamptz"):
                tables = {}
                for bounds in (True, False):
                    name = "%s_%s_%s" % (file_format.lower(), ttype, "bounds" if bounds else "nobounds")
                    loc = "/tmp/icedruid-bounds/db/" + name
                    path = os.path.join(tmp, "db", name)
                    tables[bounds] = (name, loc, path, build(path, loc, file_format, ttype, bounds))
                for fmt in SPEC_FORMATS:
                    for gran in GRANS:
                        for a, b in PAIRS:
                            label = "%s/%s/%s/%s S%d->S%d" % (file_format, ttype, fmt, gran, a + 1, b + 1)
                            rem = collections.Counter(bucket_text(times[(fmt, i)], gran)
                                                      for i in live[a] - live[b] if (fmt, i) in times)
                            add = collections.Counter(bucket_text(times[(fmt, i)], gran)
                                                      for i in live[b] - live[a] if (fmt, i) in times)
                            want = {"replaceIntervals": sorted(rem), "rowsRemoved": dict(rem),
                                    "appendIntervals": sorted(k for k in add if k not in rem),
                                    "rowsAdded": {k: add[k] for k in add if k not in rem}}
                            got = {}
                            for bounds, (name, loc, path, snaps) in tables.items():
                                spec = {"type": "index_parallel", "spec": {
                                    "dataSchema": {"dataSource": name,
                                                   "timestampSpec": {"column": "ts", "format": fmt},
                                                   "dimensionsSpec": {"dimensions": []},
                                                   "granularitySpec": {"segmentGranularity": gran.lower(),
                                                                       "rollup": False}},
                                    "ioConfig": {"type": "index_parallel", "inputSource": {
                                        "type": "iceberg", "tableName": name, "namespace": "db",
                                        "icebergCatalog": {"type": "local", "warehousePath": tmp},
                                        "warehouseSource": {"type": "local"}},
                                        "inputFormat": {"type": {"PARQUET": "parquet", "ORC": "orc",
                                                                 "AVRO": "avro_ocf"}[file_format]}},
                                    "tuningConfig": {"type": "index_parallel",
                                                     "maxParseExceptions": 1000000}}}
                                sp = os.path.join(tmp, name + ".spec.json")
                                json.dump(spec, open(sp, "w"))
                                p = subprocess.run([ICEDRUID, "diff", "--spec", sp, "--from-snapshot",
                                                    str(snaps[a]), "--to-snapshot", str(snaps[b]),
                                                    "--granularity", gran, "--remap", "%s=%s" % (loc, path)],
                                                   capture_output=True, text=True)
                                if p.returncode:
                                    failures.append("%s: diff failed: %s" % (label, p.stderr.strip()))
                                    continue
                                d = json.loads(p.stdout)
                                if bounds:
                                    shortcut_files[file_format] += d.get("filesDecidedByStatistics", 0)
                                added = d.get("rowsAdded", {})
                                got[bounds] = {"replaceIntervals": sorted(d["replaceIntervals"]),
                                               "rowsRemoved": d.get("rowsRemoved", {}),
                                               "appendIntervals": sorted(d["appendIntervals"]),
                                               "rowsAdded": {k: v for k, v in added.items()
                                                             if k in d["appendIntervals"]}}
                            compared += 1
                            for bounds in got:
                                if got[bounds] != want:
                                    failures.append("%s (%s): got %s\n  want %s" % (
                                        label, "bounds" if bounds else "no bounds",
                                        json.dumps(got[bounds]), json.dumps(want)))
        for f in failures:
            print("FAIL:", f)
        for k in ("PARQUET", "AVRO", "ORC"):
            print("%s: %d file decisions from statistics" % (k, shortcut_files[k]))
            if not shortcut_files[k]:
                failures.append("%s: the statistics shortcut was never taken" % k)
                print("FAIL: %s: the statistics shortcut was never taken" % k)
        print("%d diff cases (x2 tables), %d failed" % (compared, len(failures)))
        return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
