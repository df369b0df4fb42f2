#!/usr/bin/env python3
"""Which schema a read uses after a schema change (issue 14.1), for every way of selecting.

The rule (Java's SnapshotScan.useSnapshot / useRef / asOfTime and SnapshotUtil.schemaFor,
which pyiceberg and Spark follow): a read of the current state or of a branch head uses the
table's *current* schema; a read that selects a snapshot by id, by time or by a tag uses
that snapshot's `schema-id`.  Columns are matched by field id (spec "Column Projection"): a
column the data file lacks reads as its `initial-default`, else null; a renamed column keeps
its values under the new name; a dropped column is gone; a promoted int reads as a long.

Each table is written with tests/tools/icewriter:

  S1  append   schema 0 {id long, name string, qty int}: ids 1, 2, 3
  S2  delete   position delete of id 2 (so Druid's plan has splits carrying tableSchemaJson)
      tag t2 and branch b2 at S2
  --  ALTER    one schema change (schema 1)
  S3  append   only in the "later" variant: id 4 written with schema 1

and read with `scan` as: current, `--ref main`, `--ref b2` (branch), `--ref t2` (tag),
`--snapshot-id S2`, `--as-of` S2's time; `tasks` must report the same schema id; Druid's
`plan` (no snapshotTime / snapshotTime = S2) must put the same schema into tableSchemaJson
and `read` must give the same rows.  The expected rows are built here from the rule above
and the rows the test wrote, never from icedruid's output.
"""
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.environ.get("ICD_SOURCE_DIR", os.path.dirname(os.path.dirname(HERE)))
sys.path.insert(0, os.path.join(SRC, "tests", "tools"))
from icewriter.iceberg import NestedField, Schema, Table  # noqa: E402

ICEDRUID = os.environ.get("ICEDRUID", "")
if not ICEDRUID:
    print("ICEDRUID is not set")
    sys.exit(1)

PREFIX = "/tmp/icedruid-schema-evolution"  # location prefix in metadata, never touched

S0 = [NestedField(1, "id", "long", True), NestedField(2, "name", "string"),
      NestedField(3, "qty", "int")]
BASE_ROWS = [(1, "a", 10), (2, "b", 20), (3, "c", 30)]  # by field id order 1, 2, 3

# Each change: the schema-1 fields, and the row S3 writes with them ({field id: value}).
CHANGES = {
    "add_column": (S0 + [NestedField(4, "extra", "string")], {1: 4, 2: "d", 3: 40, 4: "x"}),
    "add_column_default": (S0 + [NestedField(5, "score", "long", initial_default=7,
                                             write_default=7)],
                           {1: 4, 2: "d", 3: 40, 5: 99}),
    "drop_column": ([S0[0], S0[2]], {1: 4, 3: 40}),
    "rename_column": ([S0[0], S0[1], NestedField(3, "quantity", "int")],
                      {1: 4, 2: "d", 3: 40}),
    "promote_int_long": ([S0[0], S0[1], NestedField(3, "qty", "long")],
                         {1: 4, 2: "d", 3: 5_000_000_000}),
}

failures = []


def check(cond, msg):
    if not cond:
        failures.append(msg)
        print("FAIL:", msg)


def run(*args, ok=True):
    r = subprocess.run([ICEDRUID, *args], capture_output=True, text=True, timeout=60)
    if ok and r.returncode != 0:
        raise AssertionError("icedruid %s failed (%d): %s" % (" ".join(args), r.returncode,
                                                              r.stderr.strip()))
    return r


def project(rows_by_id, fields):
    """Rows stored as {field id: value}, read with `fields` (the spec's projection by id)."""
    out = []
    for r in rows_by_id:
        row = {}
        for f in fields:
            if f.id in r:
                row[f.name] = r[f.id]
            else:
                row[f.name] = f.initial_default  # None when the field has none
        out.append(row)
    return sorted(out, key=lambda x: x["id"])


def rows_of(text):
    return sorted((json.loads(line) for line in text.splitlines() if line.strip()),
                  key=lambda x: x["id"])


def write_table(root, name, later):
    fields1, later_row = CHANGES[name]
    loc = "%s/%s_%s" % (PREFIX, name, "later" if later else "nolater")
    t = Table.create(root, loc, Schema(list(S0)))
    d1 = t.write_data(BASE_ROWS)
    s1 = t.append(d1)
    pos = t.write_position_deletes([(d1[0], 1)])  # row 1 of the file: id 2
    s2 = t.row_delta(deletes=[pos])
    t.set_ref("t2", s2.snapshot_id, "tag")
    t.set_ref("b2", s2.snapshot_id, "branch")
    t.evolve_schema(fields1)
    s3 = None
    if later:
        names = {f.id: f.name for f in fields1}
        s3 = t.append(t.write_data([{names[k]: v for k, v in later_row.items()}]))
    return t, loc, s1, s2, s3


def spec_file(tmp, root, snapshot_time_ms=None):
    """A Druid spec over a local catalog: warehouse = the table's parent, table = its dir."""
    wh, table = os.path.split(root)
    ns_dir, ns = os.path.split(wh)
    src = {"type": "iceberg", "tableName": table, "namespace": ns,
           "icebergCatalog": {"type": "local", "warehousePath": ns_dir},
           "warehouseSource": {"type": "local"}}
    if snapshot_time_ms is not None:
        src["snapshotTime"] = snapshot_time_ms
    spec = {"type": "index_parallel", "spec": {
        "dataSchema": {"dataSource": table,
                       "timestampSpec": {"column": "ts", "missingValue": "2000-01-01"},
                       "dimensionsSpec": {"dimensions": []},
                       "granularitySpec": {"segmentGranularity": "day", "rollup": False}},
        "ioConfig": {"type": "index_parallel", "inputSource": src,
                     "inputFormat": {"type": "parquet"}},
        "tuningConfig": {"type": "index_parallel"}}}
    path = os.path.join(tmp, "%s.%s.spec.json" % (table, snapshot_time_ms or "cur"))
    with open(path, "w") as f:
        json.dump(spec, f)
    return path


def main():
    with tempfile.TemporaryDirectory() as tmp:
        for name in CHANGES:
            fields1, later_row = CHANGES[name]
            for later in (False, True):
                tag = "%s/%s" % (name, "later" if later else "nolater")
                root = os.path.join(tmp, "wh", "db", "%s_%s" % (name, "later" if later else "x"))
                t, loc, s1, s2, s3 = write_table(root, name, later)
                remap = ["--remap", loc + "=" + root]
                s2_rows = [dict(zip((1, 2, 3), r)) for r in BASE_ROWS if r[0] != 2]
                cur_rows = s2_rows + ([later_row] if later else [])
                # (how, args, rows the snapshot holds, schema the rule picks)
                reads = [
                    ("current", [], cur_rows, fields1, 1),
                    ("--ref main", ["--ref", "main"], cur_rows, fields1, 1),
                    ("--ref b2 (branch)", ["--ref", "b2"], s2_rows, fields1, 1),
                    ("--ref t2 (tag)", ["--ref", "t2"], s2_rows, S0, 0),
                    ("--snapshot-id S2", ["--snapshot-id", str(s2.snapshot_id)], s2_rows, S0, 0),
                    ("--as-of S2", ["--as-of", str(s2.timestamp_ms)], s2_rows, S0, 0),
                ]
                if later:
                    reads.append(("--snapshot-id S3", ["--snapshot-id", str(s3.snapshot_id)],
                                  cur_rows, fields1, 1))
                for how, args, held, fields, sid in reads:
                    want = project(held, fields)
                    got = rows_of(run("scan", root, *args, *remap).stdout)
                    check(got == want, "%s scan %s: got %s, want %s" % (tag, how, got, want))
                    tasks = json.loads(run("tasks", root, *args, *remap).stdout)
                    got_sid = tasks.get("schema_id")
                    check(got_sid == sid, "%s tasks %s: schema_id %s, want %d"
                          % (tag, how, got_sid, sid))
                # Druid: no snapshotTime reads the current state; snapshotTime = S2's time
                # selects S2 by time (Druid's asOfTime): its own schema
                for st, held, fields, sid in ((None, cur_rows, fields1, 1),
                                              (s2.timestamp_ms, s2_rows, S0, 0)):
                    spec = spec_file(tmp, root, st)
                    plan = json.loads(run("plan", "--spec", spec, *remap).stdout)
                    check(plan.get("mode") == "v2", "%s plan: mode %s" % (tag, plan.get("mode")))
                    for sp in plan.get("splits", []):
                        sp = dict(plan["splitCommon"], **sp)
                        js = json.loads(sp["tableSchemaJson"])
                        check(js.get("schema-id") == sid and
                              [f["name"] for f in js["fields"]] == [f.name for f in fields],
                              "%s plan snapshotTime=%s: tableSchemaJson %s" % (tag, st, js))
                    got = rows_of(run("read", "--spec", spec, *remap).stdout)
                    want = project(held, fields)
                    # Druid input rows: the columns plus __time (missingValue), nothing else
                    check(all(r.pop("__time", None) == 946684800000 for r in got),
                          "%s read snapshotTime=%s: __time" % (tag, st))
                    check(got == want, "%s read snapshotTime=%s: got %s, want %s"
                          % (tag, st, got, want))
    if failures:
        print("%d failure(s)" % len(failures))
        sys.exit(1)
    print("ok: 5 schema changes x (with, without a later snapshot) x 6-7 reads")


if __name__ == "__main__":
    main()
