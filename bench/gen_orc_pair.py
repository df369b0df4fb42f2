#!/usr/bin/env python3
"""Writes two Iceberg tables with the same rows and the same deletes for bench_orc.sh:
OUT/orc (ORC data and delete files, icewriter/orc.py: uncompressed, RLE v1) and
OUT/parquet (Parquet data and delete files, icewriter/parquet.py: uncompressed, PLAIN).
Rows: id long, name string, price decimal(10,2), ts timestamptz, day date, score double;
FILES data files of ROWS/FILES rows (ORC stripes and Parquet row groups of 50,000 rows);
one position delete file removing every 10th row of each data file, one equality delete
file on id removing ids divisible by 7. Location prefix: /tmp/icedruid-bench-orc.
Usage: python3 bench/gen_orc_pair.py OUT [ROWS] [FILES]
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "tools"))
from icewriter.iceberg import NestedField, Schema, Table  # noqa: E402

PREFIX = "/tmp/icedruid-bench-orc"
SCHEMA = Schema([NestedField(1, "id", "long", True), NestedField(2, "name", "string"),
                 NestedField(3, "price", "decimal(10,2)"), NestedField(4, "ts", "timestamptz"),
                 NestedField(5, "day", "date"), NestedField(6, "score", "double")])


def row(i):
    return {"id": i, "name": None if i % 11 == 0 else "name-%d" % (i % 1000),
            "price": "%d.%02d" % (i % 100000, i % 100), "ts": 1_700_000_000_000_000 + i * 1_000_001,
            "day": 19000 + i % 3000, "score": i * 0.5}


def build(out, fmt, nrows, nfiles):
    t = Table.create(os.path.join(out, fmt.lower()), "%s/%s" % (PREFIX, fmt.lower()), SCHEMA)
    per = (nrows + nfiles - 1) // nfiles
    files = []
    for k in range(nfiles):
        rows = [row(i) for i in range(k * per, min(nrows, (k + 1) * per))]
        files += t.write_data(rows, file_format=fmt, row_group_rows=50_000, page_rows=10_000)
    t.append(files)
    pos = t.write_position_deletes([(f, p) for f in files for p in range(0, f.record_count, 10)],
                                   file_format=fmt)
    eq = t.write_equality_deletes([{"id": i} for i in range(0, nrows, 7)], ["id"], file_format=fmt)
    t.row_delta(deletes=[pos, eq])


def main():
    out = sys.argv[1]
    nrows = int(sys.argv[2]) if len(sys.argv) > 2 else 200_000
    nfiles = int(sys.argv[3]) if len(sys.argv) > 3 else 4
    for fmt in ("ORC", "PARQUET"):
        build(out, fmt, nrows, nfiles)


if __name__ == "__main__":
    main()
