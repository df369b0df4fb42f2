#!/usr/bin/env python3
"""INT96 timestamps outside the int64-nanosecond range (issue 14.3).

Spark and Impala write timestamps as INT96: 8 bytes of nanoseconds of the day, then a
4-byte Julian day number (little-endian).  Read as nanoseconds since the epoch in an int64
such a value overflows outside 1677-09-21 .. 2262-04-11, but an Iceberg `timestamp` is in
microseconds, which cover about 290,000 years.  So:

  * a `timestamp`/`timestamptz` column decodes every INT96 value exactly (nanos floored to
    micros), far-future and far-past dates included;
  * a value outside even int64 microseconds (a Julian day ~ 10^8) fails the read with one
    line naming the file, the column and the row; exit status 1, nothing wrapped printed.

The same rule for every other conversion that scales a time up: a `date` column promoted
to `timestamp` (v3) holding a date far beyond int64 microseconds fails the same way, in
Parquet, Avro and ORC data files; read as of the write (the snapshot's schema: a date) the
ordinary row is exact.

The table is written with tests/tools/icewriter (parquet.Column(int96=True)); the expected
texts are computed here from the Julian day and nanos with Python's datetime, not from
icedruid's output.
"""
import datetime as dt
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.environ.get("ICD_SOURCE_DIR", os.path.dirname(os.path.dirname(HERE)))
sys.path.insert(0, os.path.join(SRC, "tests", "tools"))
from icewriter import parquet  # noqa: E402
from icewriter.iceberg import DATA, DataFile, NestedField, Schema, Table  # noqa: E402

ICEDRUID = os.environ.get("ICEDRUID", "")
if not ICEDRUID:
    print("ICEDRUID is not set")
    sys.exit(1)

PREFIX = "/tmp/icedruid-int96"
JD_EPOCH = 2440588  # Julian day number of 1970-01-01
NS_DAY = 86_400_000_000_000

failures = []


def check(cond, msg):
    if not cond:
        failures.append(msg)
        print("FAIL:", msg)


def int96_of(d: dt.datetime, extra_ns=0):
    """(Julian day, nanos of day) of a naive UTC datetime plus extra nanoseconds."""
    days = (d.date() - dt.date(1970, 1, 1)).days
    nanos = ((d.hour * 60 + d.minute) * 60 + d.second) * 10**9 + d.microsecond * 1000 + extra_ns
    return (JD_EPOCH + days, nanos)


def text_of(julian, nanos, tz):
    """The instant as icedruid prints an Iceberg timestamp: micros, nanos floored."""
    t = dt.datetime(1970, 1, 1) + dt.timedelta(days=julian - JD_EPOCH,
                                               microseconds=nanos // 1000)
    s = "%04d-%s" % (t.year, t.strftime("%m-%dT%H:%M:%S.%f"))  # %Y does not pad year 1
    return s + "+00:00" if tz else s


def make_table(root, name, values):
    """One data file: id long, ts timestamp (INT96), tz timestamptz (INT96)."""
    loc = "%s/%s" % (PREFIX, name)
    schema = Schema([NestedField(1, "id", "long", True), NestedField(2, "ts", "timestamp"),
                     NestedField(3, "tz", "timestamptz")])
    t = Table.create(root, loc, schema)
    cols = [parquet.Column("id", "long", 1, True), parquet.Column("ts", "timestamp", 2, int96=True),
            parquet.Column("tz", "timestamptz", 3, int96=True)]
    rel = "data/00001-int96.parquet"
    rows = [(i + 1, v, v) for i, v in enumerate(values)]
    info = parquet.write_parquet(t.local_path(rel), cols, rows)
    t.append([DataFile(DATA, t.abs_path(rel), spec_id=0, partition=(),
                       record_count=info.num_rows, file_size_in_bytes=info.size)])
    return t, loc


def run(*args):
    return subprocess.run([ICEDRUID, *args], capture_output=True, text=True, timeout=60)


def equality_key_cases(tmp):
    """Equality-delete keys follow the same range rule as data values, on both sides: a
    delete file's key (a date promoted to timestamp) beyond int64 microseconds fails the
    read naming the delete file, the column and its row; so does a data row whose key is,
    when a delete file makes the reader build its key - even with the column not read for
    output (`--columns id`), where a wrapped or zero key could delete the wrong row. In
    Parquet, Avro and ORC files."""
    for fmt, ext in (("PARQUET", "parquet"), ("AVRO", "avro"), ("ORC", "orc")):
        for side in ("delete", "data"):
            name = "eq_%s_%s" % (side, ext)
            root = os.path.join(tmp, name)
            loc = PREFIX + "/" + name
            t = Table.create(root, loc, Schema([NestedField(1, "id", "long", True),
                                                NestedField(2, "d", "date")]))
            data = [(1, 19000), (2, 200_000_000 if side == "data" else 19001)]
            t.append(t.write_data(data, file_format=fmt))
            key = 200_000_000 if side == "delete" else 19000
            t.row_delta(deletes=[t.write_equality_deletes([{"d": key}], ["d"], file_format=fmt)])
            t.evolve_schema([NestedField(1, "id", "long", True), NestedField(2, "d", "timestamp")])
            r = run("scan", root, "--remap", loc + "=" + root, "--columns", "id")
            f = loc + ("/data/00001-data." if side == "data" else "/data/00002-eq-deletes.") + ext
            want_err = ("icedruid: %s: column d, row %d: date 200000000 (days) is outside the "
                        "range of Iceberg type timestamp (int64 microseconds: about 290,000 "
                        "years either side of 1970)" % (f, 1 if side == "data" else 0))
            check(r.returncode == 1 and r.stderr.strip().splitlines()[-1:] == [want_err],
                  "equality key, %s side, %s: exit %d stderr %r, want %r"
                  % (side, fmt, r.returncode, r.stderr.strip(), want_err))
            check(all(json.loads(x)["id"] != 2 for x in r.stdout.splitlines()),
                  "equality key, %s side, %s: row 2 printed" % (side, fmt))


def druid_millis_cases(tmp):
    """What `read` gives Druid for an INT96 column is what Druid's Parquet reader computes
    (ParquetGroupConverter.convertInt96BinaryToTimestamp, Java long arithmetic):
    (julian - 2440588) * 86400000 + nanos_of_day / 1000000 - millis floored, where the
    TIMESTAMP_MICROS rule truncates toward zero: the two differ before 1970 with a
    sub-millisecond part. Checked for the column's value and for __time taken from it."""
    vals = [
        int96_of(dt.datetime(1969, 12, 31, 23, 59, 59, 999500)),        # -500 us
        int96_of(dt.datetime(1969, 12, 31, 23, 59, 59, 999999), 500),    # -0.5 us
        int96_of(dt.datetime(1969, 12, 31, 23, 59, 59, 999000)),        # -1 ms exactly
        int96_of(dt.datetime(1960, 5, 17, 8, 1, 2, 123456), 789),
        int96_of(dt.datetime(1500, 3, 1, 6, 0, 0, 250)),
        int96_of(dt.datetime(1970, 1, 1)),
        int96_of(dt.datetime(2024, 6, 1, 12, 34, 56, 789012), 345),
    ]
    root = os.path.join(tmp, "wh", "ns", "int96d")
    _, loc = make_table(root, "int96d", vals)
    spec = {"type": "index_parallel", "spec": {
        "dataSchema": {"dataSource": "t", "timestampSpec": {"column": "ts", "format": "auto"},
                       "dimensionsSpec": {"dimensions": []}},
        "ioConfig": {"type": "index_parallel", "inputSource": {
            "type": "iceberg", "tableName": "int96d", "namespace": "ns",
            "icebergCatalog": {"type": "local", "warehousePath": os.path.join(tmp, "wh")},
            "warehouseSource": {"type": "local"}}, "inputFormat": {"type": "parquet"}}}}
    path = os.path.join(tmp, "int96d.spec.json")
    with open(path, "w") as f:
        json.dump(spec, f)
    r = run("read", "--spec", path, "--remap", loc + "=" + root)
    check(r.returncode == 0, "druid read: exit %d: %s" % (r.returncode, r.stderr.strip()))
    got = sorted((json.loads(x) for x in r.stdout.splitlines() if x.strip()), key=lambda x: x["id"])
    for i, (j, n) in enumerate(vals):
        q = abs(n) // 1_000_000 * (1 if n >= 0 else -1)  # Java's long division
        want = (j - JD_EPOCH) * 86_400_000 + q
        row = got[i] if i < len(got) else {}
        check(row.get("tz") == want and row.get("__time") == want,
              "druid read, INT96 %s: tz %s, __time %s, want %d (Druid's rule)"
              % ((j, n), row.get("tz"), row.get("__time"), want))
    print("druid read: %d INT96 values as Druid's Parquet reader gives them" % len(vals))


def main():
    good = [
        int96_of(dt.datetime(1970, 1, 1)),
        int96_of(dt.datetime(2024, 6, 1, 12, 34, 56, 789012), extra_ns=345),  # sub-micro part
        int96_of(dt.datetime(2262, 4, 12)),          # just past the int64-nanos maximum
        int96_of(dt.datetime(3000, 1, 1, 0, 0, 0, 1)),
        int96_of(dt.datetime(9999, 12, 31, 23, 59, 59, 999999), extra_ns=999),
        int96_of(dt.datetime(1677, 9, 21)),          # just before the int64-nanos minimum
        int96_of(dt.datetime(1500, 3, 1, 6, 0, 0)),
        int96_of(dt.datetime(1, 1, 1)),              # Julian day 1721426
    ]
    with tempfile.TemporaryDirectory() as tmp:
        root = os.path.join(tmp, "good")
        _, loc = make_table(root, "good", good)
        r = run("scan", root, "--remap", loc + "=" + root)
        check(r.returncode == 0, "good: exit %d: %s" % (r.returncode, r.stderr.strip()))
        got = sorted((json.loads(x) for x in r.stdout.splitlines() if x.strip()),
                     key=lambda x: x["id"])
        want = [{"id": i + 1, "ts": text_of(j, n, False), "tz": text_of(j, n, True)}
                for i, (j, n) in enumerate(good)]
        check(got == want, "good: got %s, want %s" % (got, want))

        # Julian day 10^8 + the epoch's: 10^8 days = 8.64e18 us ... still fits; 2*10^8 does not
        bad = [int96_of(dt.datetime(2024, 1, 1)), (JD_EPOCH + 200_000_000, 0)]
        root = os.path.join(tmp, "bad")
        _, loc = make_table(root, "bad", bad)
        r = run("scan", root, "--remap", loc + "=" + root)
        f = loc + "/data/00001-int96.parquet"  # the location as the metadata names it
        want_err = ("icedruid: %s: column ts, row 1: INT96 timestamp (Julian day %d) is outside "
                    "the range of Iceberg type timestamp (int64 microseconds: about 290,000 "
                    "years either side of 1970)" % (f, JD_EPOCH + 200_000_000))
        check(r.returncode == 1, "bad: exit %d, want 1" % r.returncode)
        check(r.stderr.strip().splitlines()[-1:] == [want_err],
              "bad: stderr %r, want %r" % (r.stderr.strip(), want_err))
        for line in r.stdout.splitlines():  # rows before the bad one may stream out; never it
            check(json.loads(line)["id"] != 2, "bad: row 2 printed: %s" % line)
        # the same rule for a date promoted to timestamp (v3 allows date -> timestamp):
        # a date far beyond int64 microseconds is a range error, an ordinary one exact
        # (Parquet, Avro and ORC data files)
        for fmt, ext in (("PARQUET", "parquet"), ("AVRO", "avro"), ("ORC", "orc")):
            root = os.path.join(tmp, "promoted_" + ext)
            ploc = PREFIX + "/promoted_" + ext
            t = Table.create(root, ploc, Schema([NestedField(1, "id", "long", True),
                                                 NestedField(2, "d", "date")]))
            t.append(t.write_data([(1, 19000), (2, 200_000_000)], file_format=fmt))
            t.evolve_schema([NestedField(1, "id", "long", True),
                             NestedField(2, "d", "timestamp")])
            r = run("scan", root, "--remap", ploc + "=" + root)
            f = ploc + "/data/00001-data." + ext
            want_err = ("icedruid: %s: column d, row 1: date 200000000 (days) is outside the "
                        "range of Iceberg type timestamp (int64 microseconds: about 290,000 "
                        "years either side of 1970)" % f)
            check(r.returncode == 1 and r.stderr.strip().splitlines()[-1:] == [want_err],
                  "promoted %s: exit %d stderr %r, want %r"
                  % (fmt, r.returncode, r.stderr.strip(), want_err))
            check(all(json.loads(x)["id"] != 2 for x in r.stdout.splitlines()),
                  "promoted %s: row 2 printed" % fmt)
            r = run("scan", root, "--remap", ploc + "=" + root, "--snapshot-id",
                    str(t.snapshots[0].snapshot_id))  # the snapshot's own schema: dates
            got = [json.loads(x) for x in r.stdout.splitlines()]
            check(r.returncode == 0 and {"id": 1, "d": "2022-01-08"} in got,
                  "promoted %s, as of the write: %d %s %s"
                  % (fmt, r.returncode, got, r.stderr.strip()))
        equality_key_cases(tmp)
        druid_millis_cases(tmp)
    if failures:
        print("%d failure(s)" % len(failures))
        sys.exit(1)
    print("ok: %d INT96 values decoded exactly; out-of-range value is a range error (data "
          "values, nested values, equality-delete keys on both sides)" % len(good))


if __name__ == "__main__":
    main()
