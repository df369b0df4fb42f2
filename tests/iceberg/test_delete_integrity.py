#!/usr/bin/env python3
"""Delete files that disagree with their manifest entry, and null file_path records.

Tables are built in a temp dir with tests/tools/icewriter (Parquet); each case changes ONE
thing and checks the exact outcome of `icedruid scan`:

  null_path     a position delete file whose optional file_path column holds nulls in 2 of
                its 4 records (issue 14.2): a null file_path names no data file, so those
                records delete nothing; the other two delete rows 1 and 3 of the data file.
                Expected: ids 0,2,4..9, exit 0, ONE warning line naming the delete file.
  replaced      the position delete file is replaced by a valid file with fewer records
                (issue 15.3): error "the file has N bytes but its manifest entry says M".
  count         the manifest entry's record_count is one more than the file holds: error.
  pos_bounds    the entry's pos upper bound is below a position in the file (15.4).
  path_bounds   the entry's file_path bounds name another file (15.4).
  unsorted      positions written out of order (the spec requires file_path, pos order).
  unsorted_paths  two data files' runs in descending file_path order.
  path_bounds_run the bounds hold the first file's run but not the second's.
  eq_bounds     an equality delete key above the upper bound the entry records (15.4).
  eq_missing_id an equality field id in no schema of the table (15.10: the leak fixed in
                read_equality_file_parquet; under ASan LeakSanitizer checks the exit).

Expected rows are derived here by the spec rule (a position delete (path, pos) removes row
pos of that data file), never from icedruid's output.
"""
import json
import os
import struct
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.environ.get("ICD_SOURCE_DIR", os.path.dirname(os.path.dirname(HERE)))
sys.path.insert(0, os.path.join(SRC, "tests", "tools"))
from icewriter.iceberg import (FILE_PATH_ID, POS_ID, DataFile, NestedField,  # noqa: E402
                               POSITION_DELETES, Schema, Table)

ICEDRUID = os.environ.get("ICEDRUID", "")
if not ICEDRUID:
    print("ICEDRUID is not set")
    sys.exit(1)

PREFIX = "/tmp/icedruid-delete-integrity"  # location written into metadata, never touched
SCHEMA = Schema([NestedField(1, "id", "long", True), NestedField(2, "name", "string")])
# file_path optional: some engines write nulls there
NULLABLE_POS_SCHEMA = Schema([
    NestedField(FILE_PATH_ID, "file_path", "string", required=False),
    NestedField(POS_ID, "pos", "long", required=True),
])

def LONG(v):
    return struct.pack("<q", v)  # single-value serialization of a long (spec Appendix D)


failures = []
checks = 0


def check(cond, what):
    global checks
    checks += 1
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def scan(t, root, name):
    p = subprocess.run([ICEDRUID, "scan", t.root, "--remap", f"{PREFIX}/{name}={root}/{name}"],
                       capture_output=True, text=True, timeout=60)
    return p.returncode, p.stdout, p.stderr


def base_table(root, name):
    t = Table.create(os.path.join(root, name), f"{PREFIX}/{name}", SCHEMA)
    data = t.write_data([{"id": i, "name": "n%d" % i} for i in range(10)])
    t.append(data)
    return t, data[0]


def two_file_table(root, name):
    """base_table plus a second data file (ids 10..14); also their paths, lower first."""
    t, d = base_table(root, name)
    d2 = t.write_data([{"id": 10 + i, "name": "m%d" % i} for i in range(5)])[0]
    t.append([d2])
    lo, hi = sorted([d.path, d2.path])
    return t, d, d2, lo, hi


def pos_file(t, rows, schema=None, name="pos-deletes"):
    """A Parquet position delete file of (path, pos) rows written in the order given."""
    part = ()
    rel, kw = t._write_file((t.specs[0], part, name), schema or NULLABLE_POS_SCHEMA,
                            [{"file_path": p, "pos": q} for p, q in rows], "PARQUET")
    return DataFile(POSITION_DELETES, t.abs_path(rel), spec_id=0, partition=part, **kw)


def expect_error(label, rc, out, err, want):
    lines = err.splitlines()
    check(rc == 1, f"{label}: exit {rc}, want 1 (stderr {err!r})")
    check(out == "", f"{label}: rows printed before the error: {out[:200]!r}")
    check(len(lines) == 1 and want in lines[0], f"{label}: stderr {err!r}, want one line with {want!r}")


def ids(out):
    return sorted(json.loads(line)["id"] for line in out.splitlines())


def main():
    with tempfile.TemporaryDirectory(prefix="icd-delint-") as root:
        # --- null_path (14.2)
        t, d = base_table(root, "null_path")
        df = pos_file(t, [(None, 7), (None, 8), (d.path, 1), (d.path, 3)])
        t.row_delta(deletes=[df])
        rc, out, err = scan(t, root, "null_path")
        check(rc == 0, f"null_path: exit {rc}: {err}")
        check(ids(out) == [0, 2, 4, 5, 6, 7, 8, 9] if rc == 0 else False,
              f"null_path: rows {out[:300]!r}")
        want = (f"icedruid: warning: {df.path}: 2 of 4 position delete records have a null "
                "file_path and delete nothing (skipped)")
        check(err.splitlines() == [want], f"null_path: stderr {err!r}, want {want!r}")

        # --- replaced: a valid, smaller delete file in the place of the recorded one
        t, d = base_table(root, "replaced")
        df = pos_file(t, [(d.path, 1), (d.path, 3), (d.path, 5)], name="pos")
        t.row_delta(deletes=[df])
        local = t.local_path(df.path[len(t.location) + 1:])
        keep = pos_file(t, [(d.path, 1)], name="other")
        os.replace(t.local_path(keep.path[len(t.location) + 1:]), local)
        rc, out, err = scan(t, root, "replaced")
        expect_error("replaced", rc, out, err,
                     f"{df.path}: the file has {keep.file_size_in_bytes} bytes but its manifest "
                     f"entry says {df.file_size_in_bytes} (truncated or replaced; ICEDRUID_SIZE_MISMATCH=warn reads it if its record count and bounds agree)")

        # --- count: record_count one more than the file holds
        t, d = base_table(root, "count")
        df = pos_file(t, [(d.path, 1), (d.path, 3)])
        df.record_count = 3
        t.row_delta(deletes=[df])
        rc, out, err = scan(t, root, "count")
        expect_error("count", rc, out, err,
                     f"{df.path}: the file has 2 records but its manifest entry says 3")

        # --- pos_bounds: the entry says positions are <= 2, the file has 3
        t, d = base_table(root, "pos_bounds")
        df = pos_file(t, [(d.path, 1), (d.path, 3)])
        df.upper_bounds[POS_ID] = LONG(2)
        t.row_delta(deletes=[df])
        rc, out, err = scan(t, root, "pos_bounds")
        expect_error("pos_bounds", rc, out, err,
                     f"{df.path}: row 1: position 3 is outside the bounds its manifest entry "
                     "records")

        # --- path_bounds: bounds of another data file (a flipped file_path byte looks so)
        t, d = base_table(root, "path_bounds")
        df = pos_file(t, [(d.path, 1)])
        other = (d.path[:-8] + "zzz.parquet").encode()
        df.lower_bounds[FILE_PATH_ID] = df.upper_bounds[FILE_PATH_ID] = other
        t.row_delta(deletes=[df])
        rc, out, err = scan(t, root, "path_bounds")
        # the planner may also use the bounds to match the file: either way no row may go
        if rc == 0:
            check(ids(out) == list(range(10)), f"path_bounds: rows {out[:200]!r}")
        else:
            expect_error("path_bounds", rc, out, err,
                         f"{df.path}: row 0: file_path '{d.path}' is outside the bounds")

        # --- unsorted positions
        t, d = base_table(root, "unsorted")
        df = pos_file(t, [(d.path, 5), (d.path, 2)])
        t.row_delta(deletes=[df])
        rc, out, err = scan(t, root, "unsorted")
        expect_error("unsorted", rc, out, err,
                     f"{df.path}: row 1: positions are not sorted (2 after 5; the spec requires "
                     "order by file_path, pos)")

        # --- unsorted_paths: two data files' runs in descending file_path order
        t, d, d2, lo, hi = two_file_table(root, "unsorted_paths")
        df = pos_file(t, [(hi, 1), (hi, 2), (lo, 0)])
        t.row_delta(deletes=[df])
        rc, out, err = scan(t, root, "unsorted_paths")
        expect_error("unsorted_paths", rc, out, err,
                     f"{df.path}: row 2: file_path values are not sorted (the spec requires "
                     "order by file_path, pos)")

        # --- path_bounds_run: the second file's run lies above the recorded upper bound
        # (the bounds are checked for every run, not only for the file's first record)
        t, d, d2, lo, hi = two_file_table(root, "path_bounds_run")
        df = pos_file(t, [(lo, 1), (lo, 2), (hi, 0)])
        df.lower_bounds[FILE_PATH_ID] = df.upper_bounds[FILE_PATH_ID] = lo.encode()
        t.row_delta(deletes=[df])
        rc, out, err = scan(t, root, "path_bounds_run")
        # the delete file is read for the lower file's task and holds a record outside its
        # bounds: an error (the other data file's rows may precede the error line)
        lines = err.splitlines()
        check(rc == 1, f"path_bounds_run: exit {rc}, want 1 (stderr {err!r})")
        check(len(lines) == 1 and
              f"{df.path}: row 2: file_path '{hi}' is outside the bounds" in lines[0],
              f"path_bounds_run: stderr {err!r}")
        check(not set(ids(out)) & set(range(10) if lo == d.path else range(10, 15)),
              f"path_bounds_run: rows of the file the delete file covers: {out[:200]!r}")

        # --- eq_bounds: key 7 above the recorded upper bound 6
        t, d = base_table(root, "eq_bounds")
        eq = t.write_equality_deletes([{"id": 7}], ["id"])
        eq.lower_bounds[1] = LONG(1)
        eq.upper_bounds[1] = LONG(6)
        t.row_delta(deletes=[eq])
        rc, out, err = scan(t, root, "eq_bounds")
        expect_error("eq_bounds", rc, out, err,
                     f"{eq.path}: equality delete row 0: the value of field id 1 is above the "
                     "upper bound its manifest entry records")

        # --- eq_missing_id: an equality field id no schema has (the leak of 15.10)
        t, d = base_table(root, "eq_missing")
        eq = t.write_equality_deletes([{"id": 7}], ["id"])
        eq.equality_ids = [99]
        t.row_delta(deletes=[eq])
        rc, out, err = scan(t, root, "eq_missing")
        expect_error("eq_missing_id", rc, out, err,
                     f"{eq.path}: equality field id 99 is in no schema of the table")

    print(f"test_delete_integrity: {checks} checks, {len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
