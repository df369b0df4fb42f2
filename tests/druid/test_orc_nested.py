#!/usr/bin/env python3
"""Nested ORC values as Druid's ORC reader gives them (issue 20), on a table written here
with tests/tools/icewriter (its ORC writer now writes struct, list and map columns, with
Java's layout: struct children hold the fields of the present rows only; list and map
children the elements of the present ones).

Druid's ORC reader (OrcStructFlattenerMaker: toPlainJavaType(converter.convertRootField))
converts nested values at every depth with the rules of OrcStructConverter.convertPrimitive:
a struct becomes a map of its fields by name, a list a list (nulls kept), a map a map
whose keys are converted primitives (JSON object keys are their text); int and long stay
integers, double a double, string a string, date a Joda DateTime at midnight UTC (its text
"YYYY-MM-DDT00:00:00.000Z"), timestamp epoch millis (floor), decimal HiveDecimal's double,
binary base64. The expected rows are computed here from the values written, by those
rules, not from icedruid; `icedruid read` (the NDJSON rows the served path for ORC tables
gives too) must equal them, row by row, null at every level included. `icedruid cat` of
the file must give the values written (the reader reads what the fixture writer wrote)."""
import base64
import datetime as dt
import json
import os
import shutil
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.environ.get("ICD_SOURCE_DIR", os.path.dirname(os.path.dirname(HERE)))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(SRC, "tests", "tools"))
import stage_check as sc  # noqa: E402
from icewriter import icetypes as it  # noqa: E402
from icewriter.iceberg import NestedField, Schema, Table  # noqa: E402

PREFIX = "/tmp/icedruid-orc-nested"
failures = []


def check(cond, msg):
    print(("ok: " if cond else "FAIL: ") + msg)
    if not cond:
        failures.append(msg)


S = it.StructType(((101, "a", "int", False), (102, "b", "string", False), (103, "d", "date", False),
                   (104, "t", "timestamp", False), (105, "dec", "decimal(9,2)", False),
                   (106, "bin", "binary", False)))
LS = it.ListType(110, it.StructType(((111, "x", "int", False), (112, "y", "double", False))), False)
FIELDS = [NestedField(1, "id", "long", True), NestedField(2, "ts", "timestamp"),
          NestedField(3, "s", S), NestedField(4, "l", it.ListType(107, "long", False)),
          NestedField(5, "ls", LS), NestedField(6, "m", it.MapType(108, "string", 109, "date", False)),
          NestedField(7, "mi", it.MapType(113, "int", 114, "string", False)),
          NestedField(8, "ll", it.ListType(115, it.ListType(116, "long", False), False))]
T0 = 1717245296789012  # 2024-06-01T12:34:56.789012Z, micros
D0 = 19875             # 2024-06-01, days

ROWS = [
    (1, T0, {"a": 1, "b": "x", "d": D0, "t": T0, "dec": 12345, "bin": b"\x00\xff"}, [1, 2, 3],
     [{"x": 1, "y": 1.5}, {"x": 2, "y": -0.25}], [("k", D0), ("j", D0 - 1)], [(1, "one"), (-2, "minus")],
     [[1], [], [2, 3]]),
    (2, T0 + 1, None, None, None, None, None, None),
    (3, T0 + 2, {"a": None, "b": None, "d": None, "t": None, "dec": None, "bin": None}, [None, 5],
     [None, {"x": None, "y": None}], [("z", None)], [(7, None)], [None, [None]]),
    (4, T0 + 3, {"a": -7, "b": "é\"q", "d": -1, "t": -1_500_250, "dec": -5, "bin": b""}, [], [], [], [],
     []),
]


def druid_prim(t, v):
    """What Druid's ORC reader gives for a primitive value v of Iceberg type t."""
    k = t.kind
    if k == "date":
        return (dt.date(1970, 1, 1) + dt.timedelta(days=v)).strftime("%Y-%m-%dT00:00:00.000Z")
    if k in ("timestamp", "timestamptz"):
        return v // 1000
    if k == "decimal":
        return v / 10 ** t.scale
    if k == "binary":
        return base64.b64encode(v).decode()
    return v


def druid_value(t, v):
    """Druid's value: nested values converted at every depth, a map's keys as JSON text."""
    return it.convert(t, v, druid_prim, lambda kv: {str(a): b for a, b in kv})


def cat_value(t, v):
    """icedruid cat's rendering (scan conventions: maps as key/value lists; an ORC
    timestamp with its nine fraction digits)."""
    def prim(pt, pv):
        text = it.to_json(pt, pv)
        return text + "000" if pt.kind in ("timestamp", "timestamptz") else text
    return it.convert(t, v, prim, lambda kv: [{"key": a, "value": b} for a, b in kv])


def main():
    tmp = tempfile.mkdtemp(prefix="icd-test-orc-nested-")
    try:
        wh = os.path.join(tmp, "wh")
        root = os.path.join(wh, "ns", "nested")
        t = Table.create(root, PREFIX + "/nested", Schema(FIELDS))
        t.append(t.write_data(ROWS, file_format="ORC"))
        rm = ["--remap", PREFIX + "/nested=" + root]
        names = [f.name for f in FIELDS]
        norm = [{f.name: it.normalize(f.type, v) for f, v in zip(FIELDS, r)} for r in ROWS]

        # the file reads back as written
        orc_files = [os.path.join(dp, f) for dp, _, fs in os.walk(os.path.join(root, "data"))
                     for f in fs if f.endswith(".orc")]
        cat = [json.loads(x) for x in sc.run(["cat"] + orc_files).stdout.splitlines() if x.strip()]
        want_cat = [{f.name: cat_value(f.type, r[f.name]) for f in FIELDS} for r in norm]
        check(len(orc_files) == 1 and cat == want_cat,
              "icedruid cat gives the nested values written (%d rows)" % len(cat))

        # read: Druid's ORC values at every depth
        path = sc.write_spec(tmp, wh, "nested")
        with open(path) as f:
            spec = json.load(f)
        ds = spec["spec"]["dataSchema"]
        ds["timestampSpec"] = {"column": "ts", "format": "auto"}
        ds["dimensionsSpec"] = {"dimensions": [n for n in names if n != "ts"]}
        spec["spec"]["ioConfig"]["inputFormat"] = {"type": "orc"}
        with open(path, "w") as f:
            json.dump(spec, f)
        got = {}
        for line in sc.run(["read", "--spec", path] + rm).stdout.splitlines():
            if line.strip():
                row = json.loads(line)
                got[row["id"]] = row
        for r in norm:
            want = {n: druid_value(f.type, r[n]) for f, n in zip(FIELDS, names)}
            want["__time"] = r["ts"] // 1000
            have = got.get(r["id"], {})
            detail = "" if have == want else "\n   want %s\n   have %s" % (
                json.dumps(want, sort_keys=True), json.dumps(have, sort_keys=True))
            check(have == want, "row %d: Druid's ORC values at every depth%s" % (r["id"], detail))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if failures:
        print("%d failure(s)" % len(failures))
        return 1
    print("ok: nested ORC values are Druid's")
    return 0


if __name__ == "__main__":
    sys.exit(main())
