"""Values out of their type's range, in each file format, through the format-neutral batch.

For each format F in Parquet, ORC and Avro, a table (tests/tools/icewriter) whose column `d`
was a date and became a timestamp (the date -> timestamp promotion; icewriter writes v2
tables, and the reader applies the promotion whatever the version): data file A, written
while `d` was a date, holds in row 3 the date 200,000,000 days, which int64 microseconds
cannot hold. The batch marks that value instead of converting it, and it fails only where
a row that survives the deletes uses it:

  - snapshot 2 (A, and B written after the promotion): `scan` fails naming file A, the
    column and the row, also with only some columns (the scan's writer takes whole
    batches), and so does Druid's `read` (its writer takes rows one by one): both
    emission paths;
  - snapshot 3: a position delete removes A's row 3: every other row reads, `d` of A's
    rows promoted to midnight timestamps, through `scan` and through `read`;
  - a second table of the same shape: an equality delete on `id` = 3 removes the row
    instead: the row's bad `d` is never used, the scan succeeds;
  - a third one: an equality delete keyed on `d` itself: probing A's row 3 needs its key,
    which has no value: the scan fails naming the row, as for output.
"""
import datetime
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tests", "tools"))
from icewriter.iceberg import NestedField, Schema, Table  # noqa: E402

ICEDRUID = os.environ.get("ICEDRUID", "build/icedruid")
BAD_DAYS = 200000000
failures = []


def check(cond, msg):
    print(("ok: " if cond else "FAIL: ") + msg)
    if not cond:
        failures.append(msg)


def read(warehouse, name):
    """Druid's `read` of table db.NAME in a local warehouse: (rows or None, stderr)."""
    spec = {"type": "index_parallel", "spec": {
        "dataSchema": {"dataSource": name, "timestampSpec": {"column": "id", "format": "millis"},
                       "dimensionsSpec": {"dimensions": []},
                       "granularitySpec": {"segmentGranularity": "day", "rollup": False}},
        "ioConfig": {"type": "index_parallel", "inputSource": {
            "type": "iceberg", "tableName": name, "namespace": "db",
            "icebergCatalog": {"type": "local", "warehousePath": warehouse},
            "warehouseSource": {"type": "local"}}, "inputFormat": {"type": "parquet"}},
        "tuningConfig": {"type": "index_parallel"}}}
    sp = os.path.join(warehouse, name + ".spec.json")
    with open(sp, "w") as f:
        json.dump(spec, f)
    p = subprocess.run([ICEDRUID, "read", "--spec", sp], capture_output=True, text=True)
    rows = [json.loads(x) for x in p.stdout.splitlines()] if p.returncode == 0 else None
    return rows, p.stderr.strip()


def scan(table, *extra):
    p = subprocess.run([ICEDRUID, "scan", table, *extra], capture_output=True, text=True)
    rows = [json.loads(x) for x in p.stdout.splitlines()] if p.returncode == 0 else None
    return rows, p.stderr.strip()


def build(root, fmt):
    """Table with A (date era) and B (timestamp era); returns (table, A)."""
    t = Table.create(root, root, Schema([NestedField(1, "id", "long", True),
                                         NestedField(2, "d", "date")]))
    a_rows = [{"id": i, "d": BAD_DAYS if i == 3 else 19000 + i} for i in range(8)]
    (a,) = t.write_data(a_rows, name="a", file_format=fmt)
    t.append([a])
    t.evolve_schema([NestedField(1, "id", "long", True), NestedField(2, "d", "timestamp")])
    (b,) = t.write_data([{"id": 100, "d": 19000 * 86400 * 10**6}], name="b", file_format=fmt)
    t.append([b])
    return t, a


def midnight(days):
    d = datetime.date(1970, 1, 1) + datetime.timedelta(days=days)
    return d.isoformat() + "T00:00:00.000000"


def last_line(err):
    return err.splitlines()[-1:] or err


def main():
    if not os.path.exists(ICEDRUID):
        print("no icedruid binary at %s" % ICEDRUID)
        return 1
    with tempfile.TemporaryDirectory() as tmp:
        for fmt in ("PARQUET", "ORC", "AVRO"):
            name = fmt.lower()
            root = os.path.join(tmp, "db", name)
            t, a = build(root, fmt)
            want_err = ("row 3: date %d (days) is outside the range of Iceberg type timestamp"
                        % BAD_DAYS)
            for cols in ([], ["--columns", "id,d"], ["--columns", "d"]):
                rows, err = scan(root, *cols)
                check(rows is None and want_err in err and "column d" in err
                      and os.path.basename(a.path) in err,
                      "%s scan %s: the surviving out-of-range value fails (%s)"
                      % (fmt, " ".join(cols) or "(all columns)", last_line(err)))
            rows, err = read(tmp, name)
            check(rows is None and want_err in err,
                  "%s read (row by row): the out-of-range value fails (%s)" % (fmt, last_line(err)))

            # a position delete removes the row: the rest reads
            pos = t.write_position_deletes([(a, 3)], file_format=fmt)
            t.row_delta(deletes=[pos])
            rows, err = scan(root)
            want = sorted([{"id": i, "d": midnight(19000 + i)} for i in range(8) if i != 3]
                          + [{"id": 100, "d": midnight(19000)}], key=lambda r: r["id"])
            check(rows is not None and sorted(rows, key=lambda r: r["id"]) == want,
                  "%s scan: row deleted by position: the other 8 rows read (%s)" % (fmt, err))
            rows, err = read(tmp, name)
            check(rows is not None
                  and sorted(r["id"] for r in rows) == [0, 1, 2, 4, 5, 6, 7, 100],
                  "%s read: row deleted by position: the other 8 rows read (%s)" % (fmt, err))

            # an equality delete removes the row: its bad `d` is never used
            root2 = os.path.join(tmp, "db", name + "-eq")
            t2, _ = build(root2, fmt)
            eq = t2.write_equality_deletes([{"id": 3}], ["id"], file_format=fmt)
            t2.row_delta(deletes=[eq])
            rows, err = scan(root2)
            check(rows is not None and len(rows) == 8 and all(r["id"] != 3 for r in rows),
                  "%s: row deleted by an equality delete on id: the rest reads (%s)" % (fmt, err))

            # an equality delete keyed on `d`: the probe needs row 3's key
            root3 = os.path.join(tmp, "db", name + "-eqd")
            t3, _ = build(root3, fmt)
            eqd = t3.write_equality_deletes([{"d": 19005 * 86400 * 10**6}], ["d"],
                                            file_format=fmt)
            t3.row_delta(deletes=[eqd])
            rows, err = scan(root3)
            check(rows is None and want_err in err,
                  "%s: an equality key on the out-of-range column fails the probe (%s)"
                  % (fmt, last_line(err)))
    if failures:
        print("%d failure(s)" % len(failures))
        return 1
    print("all passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
