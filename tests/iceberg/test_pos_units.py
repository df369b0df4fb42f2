#!/usr/bin/env python3
"""Position delete files loaded in units by the tasks that wait for them
(src/iceberg/deletes/delete_load.c, pos_job): a file of many Parquet row groups or ORC
stripes is read by every task that needs it, each claiming units in file order into an
entry of its own; the loader then joins the entries in file order, checking the spec's
order (file_path, then pos) across every boundary and uniting the runs of a data file
that spans units.

For Parquet and ORC (units of 70 records) and Avro (one unit), written by
tests/tools/icewriter, each table with 4 data files of 1,000 rows (4 tasks race for the
delete file), one delete file holding 1,200 positions over all four:
  - good: the surviving ids are exactly the ones computed here, with --threads 1, 2 and 4
    (four runs of 4); every data file's run spans several units;
  - pos_order: at the start of unit 6 the position goes back (same data file): an error
    naming the delete file, "positions are not sorted", and that record's row, every run;
  - path_order: at the start of unit 9 the file_path goes back to the previous data file:
    "file_path values are not sorted" and that row;
  - first_error: unit 3 holds a negative position (the manifest's lower bound says 0) and
    unit 11 starts out of order: the negative position's error (the first in file order,
    as a one-pass reading reports), whatever thread reads which unit.
Every failing case prints no row. Env: ICEDRUID, ICD_SOURCE_DIR. No external packages.
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

FILES = 4
ROWS = 1000
UNIT = 70
PER_FILE = 300  # deleted positions per data file: ~4.3 units each
failures = []


def check(cond, msg):
    print(("ok: " if cond else "FAIL: ") + msg)
    if not cond:
        failures.append(msg)


def scan(icd, root, threads):
    return subprocess.run(icd + ["scan", root, "--columns", "id", "--threads", str(threads)],
                          capture_output=True, text=True)


def deletes_for(case, data):
    """The (DataFile, pos) records in file order, and (error words, row) for the bad cases."""
    recs = [(data[f], 3 * i + f) for f in range(FILES) for i in range(PER_FILE)]
    recs.sort(key=lambda r: (r[0].path.encode("utf-8"), r[1]))
    if case == "pos_order":  # unit 6's first record goes back within one data file
        r = 6 * UNIT
        assert recs[r][0] is recs[r - 1][0]
        recs[r] = (recs[r][0], recs[r - 1][1] - 2)
        return recs, ("positions are not sorted", r)
    if case == "path_order":  # unit 9's first record names the data file before
        r = 9 * UNIT
        prev = [d for d in sorted(data, key=lambda d: d.path) if d.path < recs[r][0].path]
        assert prev, "unit 9 must not start with the first data file"
        recs[r] = (prev[-1], recs[r][1])
        return recs, ("file_path values are not sorted", r)
    if case == "first_error":  # a negative position in unit 3, a bad boundary at unit 11
        r3, r11 = 3 * UNIT + 5, 11 * UNIT
        recs[r3] = (recs[r3][0], -1)
        recs[r11] = (recs[r11][0], recs[r11 - 1][1] - 2) if recs[r11][0] is recs[r11 - 1][0] \
            else (recs[r11 - 1][0], recs[r11][1])
        return recs, ("negative position -1 in row %d" % r3, r3)
    return recs, None


def main():
    icd = shlex.split(os.environ.get("ICEDRUID") or os.path.join(SRC, "build", "icedruid"))
    schema = Schema([NestedField(1, "id", "long", required=True)])
    with tempfile.TemporaryDirectory(prefix="icd-posunits-") as tmp:
        for fmt in ("PARQUET", "ORC", "AVRO"):
            for case in ("good", "pos_order", "path_order", "first_error"):
                root = os.path.join(tmp, fmt.lower(), case)
                t = Table.create(root, root, schema)
                data = []
                for f in range(FILES):
                    data += t.write_data([{"id": f * ROWS + i} for i in range(ROWS)],
                                         name=f"data-{f}", file_format=fmt)
                t.append(data)
                recs, bad = deletes_for(case, data)
                df = t.write_position_deletes(recs, file_format=fmt, row_group_rows=UNIT,
                                              sort=False)
                if case == "first_error" and POS_ID in df.lower_bounds:
                    # the manifest's bounds as a writer that skipped the bad record records
                    # them (a negative lower bound is refused at planning already)
                    df.lower_bounds[POS_ID] = icetypes.single_value_bytes(icetypes.parse("long"), 0)
                t.row_delta(deletes=[df])
                index = {d.path: f for f, d in enumerate(data)}
                gone = {index[d.path] * ROWS + p for d, p in recs}
                want = [i for i in range(FILES * ROWS) if i not in gone]
                for threads in (1, 2, 4, 4, 4, 4):
                    p = scan(icd, root, threads)
                    what = f"{fmt} {case} --threads {threads}"
                    if bad is None:
                        got = sorted(json.loads(line)["id"] for line in p.stdout.splitlines())
                        check(p.returncode == 0 and got == want,
                              f"{what}: {len(got)} rows survive, want {len(want)} "
                              f"(exit {p.returncode} {p.stderr.strip()[-200:]})")
                        continue
                    err = p.stderr.strip().splitlines()
                    line = err[-1] if err else ""
                    words, row = bad
                    check(p.returncode != 0 and p.stdout == "" and
                          os.path.basename(df.path) in line and words in line and
                          f"row {row}" in line,
                          f"{what}: one error naming the delete file, '{words}' and row {row} "
                          f"({line[-220:]})")
    print("%d failure(s)" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
