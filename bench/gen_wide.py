#!/usr/bin/env python3
"""A wide table for the "wide rows" axis of bench/bench_wide.sh.

    python3 bench/gen_wide.py OUT COLUMNS ROWS [FILES [ROW_GROUP_ROWS]]

COLUMNS columns c0 .. c{COLUMNS-1} (field ids 1 .. COLUMNS), cycling through four kinds
so that every width has the same mix: long (i * k), double (i * 0.25 + k), string
('s' + (i mod 1000) + '-' + k) and a nullable long (null on odd rows). ROWS rows in FILES
(default 4) Parquet files (row groups of ROW_GROUP_ROWS rows, default DuckDB's 122,880)
written by DuckDB (COPY ... FIELD_IDS: a writer independent of
icedruid), the metadata by the project's fixture writer (tests/tools/icewriter) under the
location /tmp/icedruid-bench/wide/COLUMNS (remap it to OUT). One position delete file per
data file removes every 10th row, so the scan is a merge-on-read. Prints {"location",
"rows", "live_rows"} as JSON.
"""
import json
import os
import subprocess
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "tests", "tools"))
from icewriter.iceberg import DATA, POSITION_DELETES, DataFile, NestedField, Schema, Table  # noqa: E402

KINDS = ("long", "double", "string", "long")


def expr(k):
    kind = k % 4
    if kind == 0:
        return f"i * {k + 1}"
    if kind == 1:
        return f"i * 0.25 + {k}"
    if kind == 2:
        return f"'s' || (i % 1000)::VARCHAR || '-{k}'"
    return f"CASE WHEN i % 2 = 1 THEN NULL ELSE i + {k} END"


def main():
    out, ncols, rows = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    nfiles = int(sys.argv[4]) if len(sys.argv) > 4 else 4
    rg = f", ROW_GROUP_SIZE {int(sys.argv[5])}" if len(sys.argv) > 5 else ""
    location = f"/tmp/icedruid-bench/wide/{ncols}"
    schema = Schema([NestedField(k + 1, f"c{k}", KINDS[k % 4]) for k in range(ncols)])
    t = Table.create(out, location, schema)
    os.makedirs(os.path.join(out, "data"), exist_ok=True)
    stmts, parts = [], []
    sel = ", ".join(f"({expr(k)})::{'BIGINT' if k % 4 in (0, 3) else 'DOUBLE' if k % 4 == 1 else 'VARCHAR'} AS c{k}"
                    for k in range(ncols))
    ids = ", ".join(f"c{k}: {k + 1}" for k in range(ncols))
    for f in range(nfiles):
        lo, hi = rows * f // nfiles, rows * (f + 1) // nfiles
        rel = f"data/data-{f:03d}.parquet"
        stmts.append(f"COPY (SELECT {sel} FROM range({lo}, {hi}) t(i)) TO '{t.local_path(rel)}' "
                     f"(FORMAT parquet, FIELD_IDS {{{ids}}}{rg})")
        parts.append((rel, hi - lo))
    # position deletes: every 10th row of each file (rows 0, 10, 20, ...)
    for f, (rel, n) in enumerate(parts):
        prel = f"data/pos-{f:03d}.parquet"
        path = t.abs_path(rel).replace("'", "''")
        stmts.append(f"COPY (SELECT '{path}' AS file_path, (p * 10)::BIGINT AS pos "
                     f"FROM range(0, {(n + 9) // 10}) t(p)) TO '{t.local_path(prel)}' "
                     f"(FORMAT parquet, FIELD_IDS {{file_path: 2147483546, pos: 2147483545}})")
    subprocess.run(["node", os.path.join(here, "duckdb_eq.mjs"), "sql", *stmts], check=True)
    data = [DataFile(DATA, t.abs_path(rel), record_count=n,
                     file_size_in_bytes=os.path.getsize(t.local_path(rel)))
            for rel, n in parts]
    t.append(data)
    dels = [DataFile(POSITION_DELETES, t.abs_path(f"data/pos-{f:03d}.parquet"),
                     record_count=(n + 9) // 10,
                     file_size_in_bytes=os.path.getsize(t.local_path(f"data/pos-{f:03d}.parquet")))
            for f, (_rel, n) in enumerate(parts)]
    t.row_delta(deletes=dels)
    live = sum(n - (n + 9) // 10 for _rel, n in parts)
    print(json.dumps({"location": location, "rows": rows, "live_rows": live}))


if __name__ == "__main__":
    main()
