#!/usr/bin/env python3
"""Equality delete files loaded in units by the tasks that wait for them
(src/iceberg/deletes/delete_load.c, eq_job): a file of many Parquet row groups or ORC
stripes is read by every task that needs it, each claiming units in file order into its
own key set, the sets merged at the end.

For Parquet and ORC (12 units of 100 keys) and Avro (one unit), written by
tests/tools/icewriter, each table with 4 data files (4 tasks race for the delete file):
  - good: the surviving ids are exactly the ones computed here, with --threads 1, 2 and
    4 (four runs of 4);
  - bound: the manifest's upper bound of the key column is the largest key but two; the
    keys above it sit in units 5 and 9. Every run, whatever thread claims which unit,
    must report the error of unit 5's row (the first in file order, as a one-pass
    reading reports) and print no row;
  - nulls: the manifest records one null key where the file has none, a check of the
    whole file's count after the units are merged: an error naming the delete file.
Env: ICEDRUID, ICD_SOURCE_DIR. No external packages needed.
"""
import json
import os
import shlex
import subprocess
import sys
import tempfile

SRC = os.environ.get("ICD_SOURCE_DIR") or os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(SRC, "tests", "tools"))
from icewriter import icetypes  # noqa: E402
from icewriter.iceberg import NestedField, Schema, Table  # noqa: E402

ROWS = 4000
UNIT = 100
KEYS = 1200  # 12 units
BIG = (5 * UNIT + 37, 9 * UNIT + 11)  # rows of the delete file holding the keys above the bound
failures = []


def check(cond, msg):
    print(("ok: " if cond else "FAIL: ") + msg)
    if not cond:
        failures.append(msg)


def scan(icd, root, threads):
    return subprocess.run(icd + ["scan", root, "--columns", "id", "--threads", str(threads)],
                          capture_output=True, text=True)


def main():
    icd = shlex.split(os.environ.get("ICEDRUID") or os.path.join(SRC, "build", "icedruid"))
    schema = Schema([NestedField(1, "id", "long", required=True), NestedField(2, "k", "long")])
    rows = [{"id": i, "k": i} for i in range(ROWS)]
    # keys 0, 3, 6, ...; two rows hold keys far above the others (and above every k)
    keys = [3 * i for i in range(KEYS)]
    for r in BIG:
        keys[r] = 10_000_000 + r
    top = max(k for i, k in enumerate(keys) if i not in BIG)
    with tempfile.TemporaryDirectory(prefix="icd-equnits-") as tmp:
        for fmt in ("PARQUET", "ORC", "AVRO"):
            for case in ("good", "bound", "nulls"):
                root = os.path.join(tmp, fmt.lower(), case)
                t = Table.create(root, root, schema)
                data = []
                for f in range(4):
                    data += t.write_data(rows[f * ROWS // 4:(f + 1) * ROWS // 4], name=f"data-{f}",
                                         file_format=fmt)
                t.append(data)
                df = t.write_equality_deletes([{"k": k} for k in keys], ["k"], file_format=fmt,
                                              row_group_rows=UNIT)
                if case == "bound":
                    df.upper_bounds[2] = icetypes.single_value_bytes(icetypes.parse("long"), top)
                if case == "nulls":
                    df.null_value_counts[2] = 1
                t.row_delta(deletes=[df])
                dels = set(keys)
                want = [r["id"] for r in rows if r["k"] not in dels]
                for threads in (1, 2, 4, 4, 4, 4):
                    p = scan(icd, root, threads)
                    what = f"{fmt} {case} --threads {threads}"
                    if case == "good":
                        got = sorted(json.loads(line)["id"] for line in p.stdout.splitlines())
                        check(p.returncode == 0 and got == want,
                              f"{what}: {len(got)} rows survive, want {len(want)} "
                              f"(exit {p.returncode} {p.stderr.strip()[-200:]})")
                        continue
                    err = p.stderr.strip().splitlines()
                    line = err[-1] if err else ""
                    words = (f"equality delete row {BIG[0]}: the value of field id 2 is above the "
                             "upper bound" if case == "bound" else
                             "null values in field id 2 but its manifest entry says 1")
                    check(p.returncode != 0 and p.stdout == "" and
                          os.path.basename(df.path) in line and words in line,
                          f"{what}: one error naming the delete file and '{words}' ({line[-220:]})")
    print("%d failure(s)" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
