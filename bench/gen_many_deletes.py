#!/usr/bin/env python3
"""A table of N small data files, each with its own position delete file (the layout that
Flink and Spark merge-on-read writers leave after many small commits): the "many delete
files" axis of bench/bench_many_deletes.sh.

    python3 bench/gen_many_deletes.py OUT N [ROWS_PER_FILE]

Every data file has ROWS_PER_FILE rows (default 200: id long, name string, v double); its
delete file removes every 10th row. Written with the project's fixture writer
(tests/tools/icewriter) under the location /tmp/icedruid-bench/many/N (remap it to OUT).
Prints {"location", "rows", "live_rows"} as JSON.
"""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "tools"))
from icewriter.iceberg import NestedField, Schema, Table  # noqa: E402


def main():
    out, n = sys.argv[1], int(sys.argv[2])
    per = int(sys.argv[3]) if len(sys.argv) > 3 else 200
    location = f"/tmp/icedruid-bench/many/{n}"
    schema = Schema([NestedField(1, "id", "long", required=True), NestedField(2, "name", "string"),
                     NestedField(3, "v", "double")])
    t = Table.create(out, location, schema, codec="gzip")
    data = []
    for f in range(n):
        rows = [(f * per + i, f"name-{(f * per + i) % 977}", (f * per + i) * 0.5) for i in range(per)]
        data += t.write_data(rows, name=f"data-{f:06d}")
    t.append(data)
    deletes = [t.write_position_deletes([(d, p) for p in range(0, per, 10)], name=f"pos-{k:06d}")
               for k, d in enumerate(data)]
    t.row_delta(deletes=deletes)
    total = n * per
    print(json.dumps({"location": location, "rows": total, "live_rows": total - n * len(range(0, per, 10))}))


if __name__ == "__main__":
    main()
