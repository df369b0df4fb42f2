"""A wide Iceberg table for the range-read test and benchmark (tests/tools/icewriter).

`write(root, location)` writes one unpartitioned v2 table of NCOLS columns (42 by
default: `a` long, `b` string, and c00..c39 of long, double and string) and ROWS rows in
one uncompressed Parquet file with several row groups, so the file is several MB and a
projection of `a,b` touches a small part of it. Column `b` sits in the middle of the
schema (not next to `a`), so the two projected column chunks are not adjacent.

The values are a pure function of the row number (`row(i)`), so a test can compute the
expected rows itself instead of trusting the reader.

Run as a script: `python3 wide_table.py OUT [--location L] [--rows N]` writes the table
into OUT and prints a JSON description (location, data file, size).
"""
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tools"))

from icewriter.iceberg import NestedField, Schema, Table  # noqa: E402

NFILLER = 40
ROWS = 12000
ROW_GROUP_ROWS = 4000
B_POSITION = 21  # index of `b` among the fields


def _filler_type(k):
    return ("long", "double", "string")[k % 3]


def schema():
    fields = [NestedField(1, "a", "long", required=True)]
    fid = 2
    for k in range(NFILLER):
        if len(fields) == B_POSITION:
            fields.append(NestedField(fid, "b", "string"))
            fid += 1
        fields.append(NestedField(fid, f"c{k:02d}", _filler_type(k)))
        fid += 1
    return Schema(fields)


def _mix(i, k):
    """A deterministic, poorly compressible 64-bit value for row i, column k."""
    x = (i * 0x9E3779B97F4A7C15 + k * 0xBF58476D1CE4E5B9) & 0xFFFFFFFFFFFFFFFF
    x ^= x >> 31
    x = (x * 0x94D049BB133111EB) & 0xFFFFFFFFFFFFFFFF
    return x ^ (x >> 29)


def row(i):
    r = {"a": i * 7 - 3, "b": f"b-{i:06d}-{_mix(i, 99) % 1000:03d}"}
    for k in range(NFILLER):
        v = _mix(i, k)
        t = _filler_type(k)
        if t == "long":
            r[f"c{k:02d}"] = (v >> 1) - (1 << 62)
        elif t == "double":
            r[f"c{k:02d}"] = (v % 10**9) / 1024.0
        else:
            r[f"c{k:02d}"] = f"{v:016x}{v % 9973:04d}"
    return r


def write(root, location, rows=ROWS):
    t = Table.create(root, location, schema(), table_uuid="5d1de7ab-1e00-4000-8000-000000000042")
    files = t.write_data([row(i) for i in range(rows)], row_group_rows=ROW_GROUP_ROWS,
                         page_rows=1000)
    t.append(files)
    f = files[0]
    rel = f.path[len(t.location) + 1:]
    return {"location": t.location, "data_file": f.path, "data_rel": rel,
            "size": os.path.getsize(os.path.join(root, rel)), "rows": rows,
            "columns": len(schema().fields)}


def main():
    import argparse
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--location", default="/tmp/icedruid-wide/wide")
    ap.add_argument("--rows", type=int, default=ROWS)
    a = ap.parse_args()
    print(json.dumps(write(a.out, a.location, a.rows), indent=2))


if __name__ == "__main__":
    main()
