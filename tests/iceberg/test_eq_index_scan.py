#!/usr/bin/env python3
"""Big equality delete files through the whole scan: the paths of the equality index
(src/iceberg/deletes/eq_index.c) that small tables never reach.

Writes (tests/tools/icewriter) one table of 4 data files, 320,000 rows (id long; k long,
optional, ~1% null; s string, optional), then, in separate snapshots/tables:
  - `long`: one equality delete file on k with 280,000 keys in 7 row groups (Bloom filter,
    32 partitions, fixed-width table plus the generic one for the null key), duplicates,
    keys that match no row, and a null key (null rows must go);
  - `pair`: one on (k, s) with 280,000 keys, some with a null s;
  - `two`: two delete files on k (140,000 keys each, overlapping): a row goes when any
    file holds its key.
Every table is scanned with --threads 1 and 2 (tasks racing for the same delete file);
the surviving ids must be exactly the ones computed here (null equals null).
Env: ICEDRUID, ICD_SOURCE_DIR. No external packages needed.
"""
import os
import random
import shlex
import subprocess
import sys
import tempfile

SRC = os.environ.get("ICD_SOURCE_DIR") or os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(SRC, "tests", "tools"))
from icewriter.iceberg import NestedField, Schema, Table  # noqa: E402

PREFIX = "/tmp/icedruid-eqindex"
ROWS = 320_000
KEYS = 280_000


def main():
    icd = shlex.split(os.environ.get("ICEDRUID") or os.path.join(SRC, "build", "icedruid"))
    rnd = random.Random(17)
    rows = []
    for i in range(ROWS):
        k = None if rnd.random() < 0.01 else rnd.randrange(0, 600_000)
        s = None if rnd.random() < 0.02 else f"s{rnd.randrange(0, 8)}"
        rows.append((i, k, s))
    schema = Schema([NestedField(1, "id", "long", required=True), NestedField(2, "k", "long"),
                     NestedField(3, "s", "string")])
    cases = {}
    # long keys: random values (many match nothing, some repeat) and one null key
    klong = [rnd.randrange(0, 600_000) for _ in range(KEYS - 1)] + [None]
    cases["long"] = [(["k"], [{"k": k} for k in klong])]
    # (k, s) pairs, some with a null s
    kpair = [(rnd.randrange(0, 600_000), None if rnd.random() < 0.05 else f"s{rnd.randrange(0, 8)}")
             for _ in range(KEYS)]
    cases["pair"] = [(["k", "s"], [{"k": a, "s": b} for a, b in kpair])]
    half = KEYS // 2
    cases["two"] = [(["k"], [{"k": k} for k in klong[:half + 5000]]),
                    (["k"], [{"k": k} for k in klong[half:]])]
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        for name, deletes in cases.items():
            root = os.path.join(tmp, name)
            loc = f"{PREFIX}/{name}"
            t = Table.create(root, loc, schema)
            data = []
            for f in range(4):
                part = rows[f * ROWS // 4:(f + 1) * ROWS // 4]
                data += t.write_data(part, name=f"data-{f}", row_group_rows=40_000)
            t.append(data)
            files = [eq_file(t, keys, cols, j) for j, (cols, keys) in enumerate(deletes)]
            t.row_delta(deletes=files)
            want = []
            sets = [({tuple(d[c] for c in cols) for d in keys}, cols) for cols, keys in deletes]
            for i, k, s in rows:
                vals = {"k": k, "s": s}
                if not any(tuple(vals[c] for c in cols) in ks for ks, cols in sets):
                    want.append(i)
            for threads in (1, 2):
                p = subprocess.run(icd + ["scan", root, "--remap", f"{loc}={root}", "--columns", "id",
                                          "--threads", str(threads)], capture_output=True, text=True)
                if p.returncode != 0:
                    print(f"FAIL {name} --threads {threads}: exit {p.returncode}: {p.stderr.strip()}")
                    failures += 1
                    continue
                ids = sorted(int(line.split(":")[1].rstrip("}")) for line in p.stdout.splitlines())
                if ids != want:
                    print(f"FAIL {name} --threads {threads}: {len(ids)} rows, want {len(want)}")
                    failures += 1
                else:
                    print(f"ok   {name} --threads {threads}: {len(ids)} of {ROWS} rows survive")
    return 1 if failures else 0


def eq_file(self, keys, cols, j):
    """An equality delete file written in row groups of 40,000 rows (7 for 280,000 keys)."""
    from icewriter.iceberg import EQUALITY_DELETES, DataFile
    delete_schema = Schema([f for f in self.schema.fields if f.name in cols], self.schema.schema_id)
    spec = self.specs[self.default_spec_id]
    rel, kw = self._write_file((spec, (), f"eq-{j}"), delete_schema,
                               self._rows_as_dicts(delete_schema, keys), "PARQUET",
                               row_group_rows=40_000)
    return DataFile(EQUALITY_DELETES, self.abs_path(rel), spec_id=spec.spec_id, partition=(),
                    equality_ids=[self.schema.field(c).id for c in cols], sort_order_id=0, **kw)


if __name__ == "__main__":
    sys.exit(main())
