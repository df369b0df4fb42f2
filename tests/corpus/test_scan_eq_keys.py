#!/usr/bin/env python3
"""Equality deletes keyed on every primitive type, with nulls and multi-column keys.

The reader skips the canonical key and the hash-map probe for rows whose cheap key hash
misses the equality index's Bloom filter (src/iceberg/deletes/eq_index.c); a false negative
there would silently keep a deleted row. This test writes (tests/tools/icewriter) one
table with 4,000 rows of boolean, int, long, float, double, date, time, timestamp,
timestamptz, string, binary and decimal columns (nulls in the optional ones; several row
groups, pages, dictionary and plain encodings), then one equality-delete file per
column but the boolean (keys that occur, keys that do not, null keys for four columns) plus two multi-column key files
(one of them including the decimal column, which has no quick hash: no filter). The
surviving ids of `icedruid scan` must be exactly the ones computed here in Python:
a row is deleted when, for some delete file, its values of that file's columns equal a
key row (null equals null).
Env: ICEDRUID, ICD_SOURCE_DIR. No external packages needed.
"""
import decimal
import json
import os
import random
import shlex
import subprocess
import sys
import tempfile

SRC = os.environ.get("ICD_SOURCE_DIR") or os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(SRC, "tests", "tools"))
from icewriter.iceberg import NestedField, Schema, Table  # noqa: E402

PREFIX = "/tmp/icedruid-eqkeys/db/t"
N = 4000

COLUMNS = [  # (id, name, type, required, value generator)
    (2, "b", "boolean", False, lambda r: r.random() < 0.5),
    (3, "i", "int", False, lambda r: r.randrange(-300, 300)),
    (4, "l", "long", True, lambda r: r.randrange(-2**40, 2**40) // 977 * 977),
    (5, "f", "float", False, lambda r: r.randrange(1, 500) / 8.0),
    (6, "d", "double", False, lambda r: r.randrange(1, 2000) / 7.0),
    (7, "dt", "date", False, lambda r: r.randrange(-800, 20000)),
    (8, "tm", "time", False, lambda r: r.randrange(0, 86400) * 1_000_000),
    (9, "ts", "timestamp", False, lambda r: r.randrange(0, 400) * 3_600_000_000 + 17),
    (10, "tz", "timestamptz", False, lambda r: r.randrange(0, 400) * 60_000_000),
    (11, "s", "string", False, lambda r: "s%03d" % r.randrange(0, 600) + ("é" if r.random() < 0.1 else "")),
    (12, "bin", "binary", False, lambda r: bytes([r.randrange(0, 256) for _ in range(r.randrange(0, 5))])),
    (13, "dec", "decimal(9,2)", False, lambda r: decimal.Decimal(r.randrange(-5000, 5000)) / 100),
]


def main():
    icd = shlex.split(os.environ.get("ICEDRUID") or os.path.join(SRC, "build", "icedruid"))
    rnd = random.Random(20240601)
    rows = []
    for k in range(N):
        row = {"id": k}
        for _, name, _, required, gen in COLUMNS:
            row[name] = None if (not required and rnd.random() < 0.08) else gen(rnd)
        rows.append(row)
    schema = Schema([NestedField(1, "id", "long", True)] +
                    [NestedField(fid, name, typ, req) for fid, name, typ, req, _ in COLUMNS])
    canon = {}  # name -> function giving the value as the table stores it (for comparing)
    from icewriter import icetypes
    for f in schema.fields:
        canon[f.name] = (lambda t: (lambda v: icetypes.normalize(t, v)))(f.type)

    # delete keys per column (not the boolean, which would delete half the table): 4 values
    # that occur, 3 that do not, and for a few optional columns a null key
    key_sets = []
    for fid, name, typ, required, gen in COLUMNS:
        if typ == "boolean":
            continue
        present = [rows[rnd.randrange(N)][name] for _ in range(4)]
        if name in ("i", "s", "tz", "bin"):
            present.append(None)
        absent = [gen(random.Random(f"{name}-{j}")) for j in range(3)]
        key_sets.append(([name], [{name: v} for v in present + absent]))
    for cols in (["i", "s", "dt"], ["l", "dec", "b"]):
        picks = [rows[rnd.randrange(N)] for _ in range(25)]
        key_sets.append((cols, [{c: r[c] for c in cols} for r in picks]))

    with tempfile.TemporaryDirectory(prefix="icd-eqkeys.") as tmp:
        root = os.path.join(tmp, "t")
        t = Table.create(root, PREFIX, schema)
        files = t.write_data(rows, dictionary={"s", "i", "d"}, row_group_rows=1500, page_rows=400)
        t.append(files)
        deletes = [t.write_equality_deletes(keys, cols, name=f"eq-{'-'.join(cols)}") for cols, keys in key_sets]
        t.row_delta(deletes=deletes)

        deleted = set()
        for cols, keys in key_sets:
            want = {tuple(canon[c](k[c]) for c in cols) for k in keys}
            for r in rows:
                if tuple(canon[c](r[c]) for c in cols) in want:
                    deleted.add(r["id"])
        expected = sorted(r["id"] for r in rows if r["id"] not in deleted)

        for threads in ("1", "2"):
            p = subprocess.run(icd + ["scan", root, "--remap", f"{PREFIX}={root}", "--columns", "id",
                                      "--threads", threads], capture_output=True, text=True)
            if p.returncode != 0:
                print(f"test_scan_eq_keys: FAIL: scan exit {p.returncode}: {p.stderr.strip()[:400]}")
                return 1
            got = sorted(json.loads(line)["id"] for line in p.stdout.splitlines())
            if got != expected:
                extra = sorted(set(got) - set(expected))[:10]
                missing = sorted(set(expected) - set(got))[:10]
                print(f"test_scan_eq_keys: FAIL (threads={threads}): {len(got)} rows, expected "
                      f"{len(expected)}; kept but deleted: {extra}; deleted but expected: {missing}")
                return 1
    print(f"test_scan_eq_keys: ok ({N} rows, {len(key_sets)} equality delete files, "
          f"{N - len(expected)} rows deleted, {len(expected)} kept)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
