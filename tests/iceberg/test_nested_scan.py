#!/usr/bin/env python3
"""`icedruid scan` of struct / list / map columns, on Parquet files written by DuckDB
(write_nested_parquet.mjs) under Iceberg metadata written by tests/tools/icewriter.

The Iceberg schema differs from the Parquet one the way table evolution makes it differ:
struct children renamed (matched by field id, or by the name mapping when the file has no
ids), a child added later with an initial-default (v3), a Parquet child dropped from the
table, int -> long and float -> double promotions inside structs and lists, a struct whose
only Iceberg child is missing from the file (its nulls still come from the file), and
TIMESTAMP(MILLIS) inside a struct read as an Iceberg timestamp (micros). A position delete
removes one row (the nested columns skip it). The expected rows are written by hand from the
values the writer script inserts and design.md section 3.

Variant columns: a DuckDB struct of metadata/value blobs (hand-encoded bytes) read as an
Iceberg `variant`: the good row decodes to {"k":7}; the truncated one fails the scan with a
corrupt-file error naming the file and row (unless a position delete removed it); a group
with typed_value is refused as a shredded variant.

Skips (77) without Node.js and @duckdb/node-api (scripts/node-deps.sh).
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.environ.get("ICD_SOURCE_DIR", os.path.dirname(os.path.dirname(HERE)))
sys.path.insert(0, os.path.join(SRC, "tests", "tools"))
from icewriter.iceberg import DataFile, NestedField, Schema, Table  # noqa: E402

PREFIX = "/tmp/icedruid-nested-test"

SCHEMA = {"type": "struct", "schema-id": 0, "fields": [
    {"id": 1, "name": "id", "required": False, "type": "long"},
    {"id": 2, "name": "rec", "required": False, "type": {"type": "struct", "fields": [
        {"id": 10, "name": "x_renamed", "required": False, "type": "long"},
        {"id": 11, "name": "label", "required": False, "type": "string"},
        {"id": 12, "name": "when", "required": False, "type": "timestamp"},
        {"id": 20, "name": "added", "required": False, "type": "int", "initial-default": 7}]}},
    {"id": 3, "name": "items", "required": False, "type": {
        "type": "list", "element-id": 13, "element-required": False, "element": {
            "type": "struct", "fields": [
                {"id": 14, "name": "key_num", "required": False, "type": "long"},
                {"id": 15, "name": "weight", "required": False, "type": "double"}]}}},
    {"id": 4, "name": "m", "required": False, "type": {
        "type": "map", "key-id": 16, "key": "int", "value-id": 17, "value-required": False,
        "value": "string"}},
    {"id": 5, "name": "ll", "required": False, "type": {
        "type": "list", "element-id": 18, "element-required": False, "element": {
            "type": "list", "element-id": 19, "element-required": False, "element": "int"}}},
    {"id": 6, "name": "ghost", "required": False, "type": {"type": "struct", "fields": [
        {"id": 21, "name": "new_field", "required": False, "type": "string",
         "initial-default": "dflt"}]}},
]}

# Parquet names -> field ids, for the file without ids.
NAME_MAPPING = [
    {"field-id": 1, "names": ["id"]},
    {"field-id": 2, "names": ["s"], "fields": [
        {"field-id": 10, "names": ["x"]}, {"field-id": 11, "names": ["y"]},
        {"field-id": 12, "names": ["ts"]}, {"field-id": 23, "names": ["gone"]}]},
    {"field-id": 3, "names": ["l"], "fields": [{"field-id": 13, "names": ["element"], "fields": [
        {"field-id": 14, "names": ["k"]}, {"field-id": 15, "names": ["w"]}]}]},
    {"field-id": 4, "names": ["m"], "fields": [
        {"field-id": 16, "names": ["key"]}, {"field-id": 17, "names": ["value"]}]},
    {"field-id": 5, "names": ["ll"], "fields": [{"field-id": 18, "names": ["element"], "fields": [
        {"field-id": 19, "names": ["element"]}]}]},
    {"field-id": 6, "names": ["g"], "fields": [{"field-id": 22, "names": ["q"]}]},
]

NULLS = {"rec": None, "items": None, "m": None, "ll": None, "ghost": None}
EXPECTED = [
    {"id": 1,
     "rec": {"x_renamed": 1, "label": "a", "when": "2024-01-02T03:04:05.678000", "added": 7},
     "items": [{"key_num": 1, "weight": 1.5}, None, {"key_num": None, "weight": None}],
     "m": [{"key": 1, "value": "one"}, {"key": 2, "value": None}],
     "ll": [[1, 2], [], None],
     "ghost": {"new_field": "dflt"}},
    dict({"id": 2}, **NULLS),
    {"id": 3,
     "rec": {"x_renamed": None, "label": None, "when": None, "added": 7},
     "items": [], "m": [], "ll": [None], "ghost": {"new_field": "dflt"}},
    {"id": 4,
     "rec": {"x_renamed": -7, "label": "\u00e9\"\n", "when": "1969-12-31T23:59:59.999000",
             "added": 7},
     "items": [{"key_num": 2147483647, "weight": -0.25}],
     "m": [{"key": -1, "value": "neg"}], "ll": [[None, 3]], "ghost": None},
]


def node_ready():
    mods = os.environ.get("ICD_NODE_MODULES") or os.path.join(SRC, "tests", "node", "node_modules")
    return shutil.which("node") and os.path.isdir(os.path.join(mods, "@duckdb", "node-api"))


VARIANT_SCHEMA = {"type": "struct", "schema-id": 0, "fields": [
    {"id": 1, "name": "id", "required": False, "type": "long"},
    {"id": 2, "name": "v", "required": False, "type": "variant"}]}


def make_table(root, name, ids, mode=None, schema=SCHEMA, rows=4, delete_pos=2):
    location = PREFIX + "/" + name
    t = Table.create(os.path.join(root, name), location,
                     Schema([NestedField(1, "id", "long")]), format_version=2)
    os.makedirs(os.path.join(root, name, "data"), exist_ok=True)
    local = os.path.join(root, name, "data", "nested.parquet")
    cmd = ["node", os.path.join(HERE, "write_nested_parquet.mjs"), local]
    cmd += [mode] if mode else [] if ids else ["--no-ids"]
    subprocess.run(cmd, check=True)
    df = DataFile(0, location + "/data/nested.parquet", rows, os.path.getsize(local))
    t.append([df])
    t.row_delta([t.write_position_deletes([(df, delete_pos)])])
    # The placeholder schema becomes the nested v3 schema (icewriter writes flat schemas
    # and v1/v2 only; nothing else in these files depends on the schema).
    meta = os.path.join(root, name, "metadata", "v%d.metadata.json" % t.version)
    with open(meta) as f:
        md = json.load(f)
    md["format-version"] = 3
    md["next-row-id"] = 0
    md["schemas"] = [schema]
    md["last-column-id"] = 23
    if not ids:
        md.setdefault("properties", {})["schema.name-mapping.default"] = json.dumps(NAME_MAPPING)
    with open(meta, "w") as f:
        json.dump(md, f)
    return os.path.join(root, name), location, [s.snapshot_id for s in t.snapshots]


def scan(exe, table, location, extra):
    p = subprocess.run(exe + ["scan", table, "--remap", location + "=" + table] + extra,
                       capture_output=True, text=True, timeout=120)
    if p.returncode:
        return None, p.stderr.strip()
    return [json.loads(x) for x in p.stdout.splitlines()], None


def main():
    if not node_ready():
        print("skipped: node or @duckdb/node-api missing (bash scripts/node-deps.sh)")
        return 77
    exe = os.environ.get("ICEDRUID", "icedruid").split()
    bad = 0
    with tempfile.TemporaryDirectory() as root:
        for name, ids in (("with_ids", True), ("name_mapped", False)):
            table, location, snaps = make_table(root, name, ids)
            cases = [("snapshot 1", ["--snapshot-id", str(snaps[0])], EXPECTED),
                     ("after the delete", [], [r for r in EXPECTED if r["id"] != 3]),
                     ("columns ghost,ll", ["--columns", "ghost,ll"],
                      [{"ll": r["ll"], "ghost": r["ghost"]} for r in EXPECTED if r["id"] != 3])]
            for what, extra, want in cases:
                got, err = scan(exe, table, location, extra)
                if json.dumps(got) != json.dumps(want):  # key order matters too
                    bad += 1
                    print("FAIL %s, %s: %s" % (name, what, err or ""))
                    for g, w in zip(got or [], want):
                        if g != w:
                            print("  got      %s\n  expected %s" % (json.dumps(g), json.dumps(w)))
                    if got is not None and len(got) != len(want):
                        print("  %d rows, expected %d" % (len(got), len(want)))
                else:
                    print("ok %s, %s" % (name, what))
        bad += check_variants(exe, root)
        bad += check_range(exe, root)
    return 1 if bad else 0


RANGE_SCHEMA = {"type": "struct", "schema-id": 0, "fields": [
    {"id": 1, "name": "id", "required": False, "type": "long"},
    {"id": 2, "name": "s", "required": False, "type": {"type": "struct", "fields": [
        {"id": 10, "name": "d", "required": False, "type": "timestamp"}]}}]}


def check_range(exe, root):
    """A date promoted to timestamp inside a struct that int64 micros cannot hold (issue
    14.3): the read fails naming the file, the field (in its column) and the row - as for
    a top-level value; once a position delete removes that row, the rest reads."""
    bad = 0
    table, location, snaps = make_table(root, "range", True, "--range", RANGE_SCHEMA, 2, 1)
    got, err = scan(exe, table, location, ["--snapshot-id", str(snaps[0])])
    want = ("icedruid: %s/data/nested.parquet: column d (in s), row 1: date 200000000 (days) is "
            "outside the range of Iceberg type timestamp (int64 microseconds: about 290,000 "
            "years either side of 1970)" % location)
    if got is not None or (err or "").strip().splitlines()[-1:] != [want]:
        bad += 1
        print("FAIL nested range: %s / %r, want %r" % (got, err, want))
    else:
        print("ok nested range error (%s)" % want)
    got, err = scan(exe, table, location, [])
    if got != [{"id": 1, "s": {"d": "2022-01-08T00:00:00.000000"}}]:
        bad += 1
        print("FAIL nested range, row deleted: %s %s" % (got, err or ""))
    return bad


def check_variants(exe, root):
    bad = 0
    table, location, snaps = make_table(root, "variant", True, "--variant", VARIANT_SCHEMA, 2, 1)
    got, err = scan(exe, table, location, [])
    if got != [{"id": 1, "v": {"k": 7}}]:
        bad += 1
        print("FAIL variant: %s %s" % (got, err or ""))
    got, err = scan(exe, table, location, ["--snapshot-id", str(snaps[0])])
    want = ["nested.parquet", "column v: corrupt variant in row 1", "truncated primitive"]
    if got is not None or not all(w in err for w in want):
        bad += 1
        print("FAIL variant, corrupt row: %s / %s" % (got, err))
    else:
        print("ok variant (%s)" % err)
    table, location, snaps = make_table(root, "shredded", True, "--shredded", VARIANT_SCHEMA, 2, 1)
    got, err = scan(exe, table, location, [])
    if got is not None or "shredded variant" not in err or "not supported" not in err:
        bad += 1
        print("FAIL shredded variant: %s / %s" % (got, err))
    else:
        print("ok shredded (%s)" % err)
    return bad


if __name__ == "__main__":
    sys.exit(main())
