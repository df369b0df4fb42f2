#!/usr/bin/env python3
"""Writes OUT/prune: a v2 table with one ORC data file of 100 rows in 4 stripes of 25
(tests/unit/iceberg/test_reader_orc.c prunes its stripes). Row i: id = i, ts (timestamptz)
= 2023-11-14T22:13:20Z + i hours, day = 1970-01-01 + 19000 + i days, price
(decimal(10,2)) = i.50, name = "n%03d" % i. Stripe k holds rows 25k .. 25k+24, so every
column's stripe ranges are disjoint and increasing. Location prefix /tmp/icedruid-orc-prune.
Usage: python3 tests/tools/make_orc_prune_table.py OUT
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from icewriter.iceberg import NestedField, Schema, Table  # noqa: E402

SCHEMA = Schema([NestedField(1, "id", "long", True), NestedField(2, "ts", "timestamptz"),
                 NestedField(3, "day", "date"), NestedField(4, "price", "decimal(10,2)"),
                 NestedField(5, "name", "string")])


def main():
    out = sys.argv[1]
    t = Table.create(os.path.join(out, "prune"), "/tmp/icedruid-orc-prune/prune", SCHEMA)
    rows = [{"id": i, "ts": 1_700_000_000_000_000 + i * 3_600_000_000, "day": 19000 + i,
             "price": "%d.50" % i, "name": "n%03d" % i} for i in range(100)]
    t.append(t.write_data(rows, file_format="ORC", row_group_rows=25))


if __name__ == "__main__":
    main()
