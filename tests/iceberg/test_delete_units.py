#!/usr/bin/env python3
"""Delete files loaded in units by the tasks that wait for them
(src/iceberg/deletes/delete_load.c, eq_job and pos_job): a file of many Parquet row groups
or ORC stripes is read by every task that needs it, each claiming units in file order,
and the parts are joined at the end. Tables written by tests/tools/icewriter, each with 4
data files (4 tasks race for the delete file), scanned with --threads 1, 2 and 4 (four
runs of 4); every failing case must print no row and one error naming the delete file.

Equality deletes (12 units of 100 keys; Avro: one unit), each task's keys in a set of its
own, the sets merged:
  - good: the surviving ids are exactly the ones computed here;
  - bound: the manifest's upper bound of the key column is the largest key but two; the
    keys above it sit in units 5 and 9. Every run, whatever thread claims which unit, must
    report the error of unit 5's row (the first in file order, as a one-pass reading
    reports);
  - nulls: the manifest records one null key where the file has none, a check of the whole
    file's count after the units are merged.

Position deletes (1,200 positions over the 4 data files in units of 70; Avro: one unit),
each unit's records in an entry of its own, joined in file order: the spec's order
(file_path, then pos) checked across every boundary, the runs of a data file that spans
units united:
  - good: the surviving ids exactly; every data file's run spans several units;
  - pos_order: at the start of unit 6 the position goes back (same data file): "positions
    are not sorted" and that record's row;
  - path_order: at the start of unit 9 the file_path goes back to the previous data file:
    "file_path values are not sorted" and that row;
  - first_error: unit 3 holds a negative position (the manifest's lower bound says 0) and
    unit 11 starts out of order: the negative position's error, the first in file order.
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
from icewriter.iceberg import POS_ID, NestedField, Schema, Table  # noqa: E402

FORMATS = ("PARQUET", "ORC", "AVRO")
THREADS = (1, 2, 4, 4, 4, 4)
LONG = icetypes.parse("long")

EQ_ROWS = 4000
EQ_UNIT = 100
EQ_KEYS = 1200  # 12 units
EQ_BIG = (5 * EQ_UNIT + 37, 9 * EQ_UNIT + 11)  # rows of the delete file holding the keys above the bound

POS_FILES = 4
POS_ROWS = 1000
POS_UNIT = 70
POS_PER_FILE = 300  # deleted positions per data file: ~4.3 units each

failures = []


def check(cond, msg):
    print(("ok: " if cond else "FAIL: ") + msg)
    if not cond:
        failures.append(msg)


def scan(icd, root, threads):
    return subprocess.run(icd + ["scan", root, "--columns", "id", "--threads", str(threads)],
                          capture_output=True, text=True)


def check_runs(icd, root, what, want, bad, delete_path):
    """Scans root with each thread count: the ids `want`, or (bad = words, row or None)
    one error line naming the delete file with those words (and row) and no output."""
    for threads in THREADS:
        p = scan(icd, root, threads)
        label = f"{what} --threads {threads}"
        if bad is None:
            got = sorted(json.loads(line)["id"] for line in p.stdout.splitlines())
            check(p.returncode == 0 and got == want,
                  f"{label}: {len(got)} rows survive, want {len(want)} "
                  f"(exit {p.returncode} {p.stderr.strip()[-200:]})")
            continue
        err = p.stderr.strip().splitlines()
        line = err[-1] if err else ""
        words, row = bad
        check(p.returncode != 0 and p.stdout == "" and os.path.basename(delete_path) in line and
              words in line and (row is None or f"row {row}" in line),
              f"{label}: one error naming the delete file and '{words}' ({line[-220:]})")


def equality_cases(icd, tmp):
    schema = Schema([NestedField(1, "id", "long", required=True), NestedField(2, "k", "long")])
    rows = [{"id": i, "k": i} for i in range(EQ_ROWS)]
    # keys 0, 3, 6, ...; two rows hold keys far above the others (and above every k)
    keys = [3 * i for i in range(EQ_KEYS)]
    for r in EQ_BIG:
        keys[r] = 10_000_000 + r
    top = max(k for i, k in enumerate(keys) if i not in EQ_BIG)
    for fmt in FORMATS:
        for case in ("good", "bound", "nulls"):
            root = os.path.join(tmp, "eq", fmt.lower(), case)
            t = Table.create(root, root, schema)
            data = []
            for f in range(4):
                data += t.write_data(rows[f * EQ_ROWS // 4:(f + 1) * EQ_ROWS // 4], name=f"data-{f}",
                                     file_format=fmt)
            t.append(data)
            df = t.write_equality_deletes([{"k": k} for k in keys], ["k"], file_format=fmt,
                                          row_group_rows=EQ_UNIT)
            if case == "bound":
                df.upper_bounds[2] = icetypes.single_value_bytes(LONG, top)
            if case == "nulls":
                df.null_value_counts[2] = 1
            t.row_delta(deletes=[df])
            dels = set(keys)
            want = [r["id"] for r in rows if r["k"] not in dels]
            bad = None
            if case == "bound":
                bad = (f"equality delete row {EQ_BIG[0]}: the value of field id 2 is above the "
                       "upper bound", None)
            if case == "nulls":
                bad = ("null values in field id 2 but its manifest entry says 1", None)
            check_runs(icd, root, f"equality {fmt} {case}", want, bad, df.path)


def position_records(case, data):
    """The (DataFile, pos) records in file order, and (error words, row) for the bad cases."""
    recs = [(data[f], 3 * i + f) for f in range(POS_FILES) for i in range(POS_PER_FILE)]
    recs.sort(key=lambda r: (r[0].path.encode("utf-8"), r[1]))
    if case == "pos_order":  # unit 6's first record goes back within one data file
        r = 6 * POS_UNIT
        assert recs[r][0] is recs[r - 1][0]
        recs[r] = (recs[r][0], recs[r - 1][1] - 2)
        return recs, ("positions are not sorted", r)
    if case == "path_order":  # unit 9's first record names the data file before
        r = 9 * POS_UNIT
        prev = [d for d in sorted(data, key=lambda d: d.path) if d.path < recs[r][0].path]
        assert prev, "unit 9 must not start with the first data file"
        recs[r] = (prev[-1], recs[r][1])
        return recs, ("file_path values are not sorted", r)
    if case == "first_error":  # a negative position in unit 3, a bad boundary at unit 11
        r3, r11 = 3 * POS_UNIT + 5, 11 * POS_UNIT
        recs[r3] = (recs[r3][0], -1)
        recs[r11] = (recs[r11][0], recs[r11 - 1][1] - 2) if recs[r11][0] is recs[r11 - 1][0] \
            else (recs[r11 - 1][0], recs[r11][1])
        return recs, ("negative position -1 in row %d" % r3, r3)
    return recs, None


def position_cases(icd, tmp):
    schema = Schema([NestedField(1, "id", "long", required=True)])
    for fmt in FORMATS:
        for case in ("good", "pos_order", "path_order", "first_error"):
            root = os.path.join(tmp, "pos", fmt.lower(), case)
            t = Table.create(root, root, schema)
            data = []
            for f in range(POS_FILES):
                data += t.write_data([{"id": f * POS_ROWS + i} for i in range(POS_ROWS)],
                                     name=f"data-{f}", file_format=fmt)
            t.append(data)
            recs, bad = position_records(case, data)
            df = t.write_position_deletes(recs, file_format=fmt, row_group_rows=POS_UNIT, sort=False)
            if case == "first_error" and POS_ID in df.lower_bounds:
                # the manifest's bounds as a writer that skipped the bad record records them
                # (a negative lower bound is refused at planning already)
                df.lower_bounds[POS_ID] = icetypes.single_value_bytes(LONG, 0)
            t.row_delta(deletes=[df])
            index = {d.path: f for f, d in enumerate(data)}
            gone = {index[d.path] * POS_ROWS + p for d, p in recs}
            want = [i for i in range(POS_FILES * POS_ROWS) if i not in gone]
            check_runs(icd, root, f"position {fmt} {case}", want, bad, df.path)


def main():
    icd = shlex.split(os.environ.get("ICEDRUID") or os.path.join(SRC, "build", "icedruid"))
    with tempfile.TemporaryDirectory(prefix="icd-delunits-") as tmp:
        equality_cases(icd, tmp)
        position_cases(icd, tmp)
    print("%d failure(s)" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
