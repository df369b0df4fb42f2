#!/usr/bin/env python3
"""Writes the seed corpus of fuzz_adapter (tests/fuzz/corpus/fuzz_adapter/): for Parquet,
ORC and Avro, a position delete file and a file of the seven typed columns fuzz_adapter.c
asks for (ids 1-7: long, string, date, decimal(9,2), timestamptz, double, binary), written
by tests/tools/icewriter, each behind the mode byte that reads it (see fuzz_adapter.c);
and the typed file in row groups / stripes of 4 rows read unit by unit (mode bit 4).
Usage: python3 tests/fuzz/gen_adapter_seeds.py
"""
import decimal
import os
import sys
import tempfile

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(here), "tools"))
from icewriter.iceberg import NestedField, Schema, Table  # noqa: E402

out = os.path.join(here, "corpus", "fuzz_adapter")
os.makedirs(out, exist_ok=True)
SCHEMA = Schema([NestedField(1, "a", "long", True), NestedField(2, "b", "string"),
                 NestedField(3, "c", "date"), NestedField(4, "d", "decimal(9, 2)"),
                 NestedField(5, "e", "timestamptz"), NestedField(6, "f", "double"),
                 NestedField(7, "g", "binary")])
rows = [{"a": i, "b": None if i == 3 else "s%d" % i, "c": 19000 + i,
         "d": decimal.Decimal("%d.25" % i), "e": 1700000000000000 + i, "f": i / 3,
         "g": bytes([i, 0, 255])} for i in range(12)]
with tempfile.TemporaryDirectory() as tmp:
    for k, fmt in enumerate(("PARQUET", "ORC", "AVRO")):
        t = Table.create(os.path.join(tmp, fmt), os.path.join(tmp, fmt), SCHEMA)
        (data,) = t.write_data(rows, file_format=fmt)
        pos = t.write_position_deletes([(data, 1), (data, 5), (data, 9)], file_format=fmt)
        (units,) = t.write_data(rows, file_format=fmt, row_group_rows=4, name="units")
        for mode, f in ((k | 8, data), (k | 4, pos), (k | 8 | 16, units)):
            with open(f.path, "rb") as fh:  # the table's location is its local root
                body = fh.read()
            name = "%s_%s" % (fmt.lower(), "units" if mode & 16 else "pos" if mode & 4 else "typed")
            with open(os.path.join(out, name), "wb") as fh:
                fh.write(bytes([mode]) + body)
print("wrote", len(os.listdir(out)), "seeds to", out)
