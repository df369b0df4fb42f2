#!/usr/bin/env python3
"""A table with one big equality delete file: the "many equality-delete keys" axis of
bench/bench_eq_keys.sh.

    python3 bench/gen_eq_keys.py OUT KIND KEYS [ROWS [FILES]]

Data: ROWS rows (default max(2 * KEYS, 2,000,000): small key counts still scan enough rows
to measure more than process start-up), ids 0 .. ROWS-1, in FILES (default 8) Parquet
files, columns
id long, bucket long (id div 4), tag string ('a'..'d' from id mod 4), name string
('user-' and id on 10 digits), v double. One equality delete file (sequence 2, so it
applies to every data file) holds the keys of the KEYS even ids:
    KIND long    equality_ids [id]
    KIND string  equality_ids [name]
    KIND pair    equality_ids [bucket, tag]   (two columns: long + string)
so KEYS rows are deleted (half the rows when ROWS = 2 * KEYS). The Parquet files are
written by DuckDB (COPY ... FIELD_IDS, bench/duckdb_eq.mjs sql: a writer independent of
icedruid, and fast enough for 40M rows),
the metadata by the project's fixture writer (tests/tools/icewriter) under the location
/tmp/icedruid-bench/eq/KIND-KEYS (remap it to OUT). Prints {"location", "rows",
"live_rows", "keys", "data", "eq"} as JSON (data/eq: local paths).
"""
import json
import os
import subprocess
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "tests", "tools"))
from icewriter.iceberg import DataFile, EQUALITY_DELETES, DATA, NestedField, Schema, Table  # noqa: E402

COLS = {"long": ["id"], "string": ["name"], "pair": ["bucket", "tag"]}
IDS = {"id": 1, "bucket": 2, "tag": 3, "name": 4, "v": 5}
EXPR = {"id": "i", "bucket": "i // 4", "tag": "chr((97 + i % 4)::INTEGER)",
        "name": "printf('user-%010d', i)", "v": "i * 0.5"}


def main():
    out, kind, keys = sys.argv[1], sys.argv[2], int(sys.argv[3])
    rows = int(sys.argv[4]) if len(sys.argv) > 4 else max(2 * keys, 2_000_000)
    nfiles = int(sys.argv[5]) if len(sys.argv) > 5 else 8
    if rows < 2 * keys:
        sys.exit("gen_eq_keys: ROWS must be at least 2 * KEYS")
    cols = COLS[kind]
    location = f"/tmp/icedruid-bench/eq/{kind}-{keys}"
    schema = Schema([NestedField(1, "id", "long"), NestedField(2, "bucket", "long"),
                     NestedField(3, "tag", "string"), NestedField(4, "name", "string"),
                     NestedField(5, "v", "double")])
    t = Table.create(out, location, schema)
    os.makedirs(os.path.join(out, "data"), exist_ok=True)
    stmts, parts = [], []
    for f in range(nfiles):
        lo, hi = rows * f // nfiles, rows * (f + 1) // nfiles
        rel = f"data/data-{f:03d}.parquet"
        sel = ", ".join(f"{EXPR[c]} AS {c}" for c in IDS)
        ids = ", ".join(f"{c}: {i}" for c, i in IDS.items())
        stmts.append(f"COPY (SELECT {sel} FROM range({lo}, {hi}) t(i)) TO '{t.local_path(rel)}' "
                     f"(FORMAT parquet, FIELD_IDS {{{ids}}})")
        parts.append((rel, hi - lo))
    eq_rel = "data/eq-deletes.parquet"
    sel = ", ".join(f"{EXPR[c]} AS {c}" for c in cols)
    ids = ", ".join(f"{c}: {IDS[c]}" for c in cols)
    stmts.append(f"COPY (SELECT {sel} FROM range(0, {2 * keys}, 2) t(i)) TO '{t.local_path(eq_rel)}' "
                 f"(FORMAT parquet, FIELD_IDS {{{ids}}})")
    subprocess.run(["node", os.path.join(here, "duckdb_eq.mjs"), "sql", *stmts], check=True)
    data = [DataFile(DATA, t.abs_path(rel), record_count=n,
                     file_size_in_bytes=os.path.getsize(t.local_path(rel)))
            for rel, n in parts]
    t.append(data)
    eq = DataFile(EQUALITY_DELETES, t.abs_path(eq_rel), record_count=keys,
                  file_size_in_bytes=os.path.getsize(t.local_path(eq_rel)),
                  equality_ids=[IDS[c] for c in cols])
    t.row_delta(deletes=[eq])
    print(json.dumps({"location": location, "rows": rows, "live_rows": rows - keys,
                      "keys": ",".join(cols), "eq": t.local_path(eq_rel),
                      "data": [t.local_path(rel) for rel, _ in parts]}))


if __name__ == "__main__":
    main()
