#!/usr/bin/env python3
"""Delete files that cannot be understood, in each format, through the one loader.

Delete files of every format are read by one loader (src/iceberg/deletes/delete_load.c)
over the format adapter (src/iceberg/adapter.h). For each format F in Parquet, ORC and
Avro, a table (tests/tools/icewriter) whose data file is F gets ONE bad delete file of
format F per case, and `icedruid scan` must fail with one line naming that delete file and
saying why, print no row, and never return the rows the file was meant to delete:

  eq_type     an equality delete on `id` (long) whose file stores `id` as a string
              -> "cannot be read as long"
  eq_missing  an equality delete on `id` whose file holds only `name` -> "equality delete
              file lacks a column for field id 1 (id)"
  pos_missing a position delete file without the pos column -> "position delete file
              lacks the file_path (string) and pos (long) columns"
  nested_key  (a good case; ORC and Avro, icewriter writes no nested Parquet) an equality
              delete on `s.k`, a long inside a struct, stored as an int (a promotion): rows
              with those keys are removed, the others survive.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tests", "tools"))
from icewriter import icetypes  # noqa: E402
from icewriter.iceberg import (EQUALITY_DELETES, FILE_PATH_ID, POSITION_DELETES,  # noqa: E402
                               DataFile, NestedField, Schema, Table)

ICEDRUID = os.environ.get("ICEDRUID", "build/icedruid")
SCHEMA = Schema([NestedField(1, "id", "long", True), NestedField(2, "name", "string")])
failures = []


def check(cond, msg):
    print(("ok: " if cond else "FAIL: ") + msg)
    if not cond:
        failures.append(msg)


def bad_delete(t, fmt, content, schema, rows, name, equality_ids=None):
    """A delete file written with `schema` (not the table's), added to the table."""
    spec = t.specs[t.default_spec_id]
    rel, kw = t._write_file((spec, (), name), schema, rows, fmt,
                            record_name="position_delete" if content == POSITION_DELETES else "table")
    extra = {"equality_ids": equality_ids} if equality_ids else {}
    df = DataFile(content, t.abs_path(rel), spec_id=spec.spec_id, partition=(), **kw, **extra)
    t.row_delta(deletes=[df])
    return t.abs_path(rel)


def scan(root):
    return subprocess.run([ICEDRUID, "scan", root], capture_output=True, text=True)


def expect_error(fmt, case, root, path, words):
    p = scan(root)
    err = p.stderr.strip().splitlines()
    line = err[-1] if err else ""
    check(p.returncode != 0, "%s %s: exit %d" % (fmt, case, p.returncode))
    check(p.stdout == "", "%s %s: no row printed" % (fmt, case))
    check(os.path.basename(path) in line and words in line,
          "%s %s: one line naming the delete file and '%s' (%s)" % (fmt, case, words, line[-200:]))


def main():
    tmp = tempfile.mkdtemp(prefix="icd-delerr-")
    rows = [{"id": i, "name": "n%d" % i} for i in range(20)]
    for fmt in ("PARQUET", "ORC", "AVRO"):
        def table(case):
            root = os.path.join(tmp, fmt.lower(), case)
            t = Table.create(root, root, SCHEMA)
            files = t.write_data(rows, file_format=fmt)
            t.append(files)
            return root, t, files[0]

        root, t, _ = table("eq_type")
        s = Schema([NestedField(1, "id", "string", True)])
        path = bad_delete(t, fmt, EQUALITY_DELETES, s, [{"id": "3"}], "eqt", [1])
        expect_error(fmt, "eq_type", root, path, "cannot be read as long")

        root, t, _ = table("eq_missing")
        s = Schema([NestedField(2, "name", "string")])
        path = bad_delete(t, fmt, EQUALITY_DELETES, s, [{"name": "n3"}], "eqm", [1])
        expect_error(fmt, "eq_missing", root, path,
                     "equality delete file lacks a column for field id 1 (id)")

        root, t, data = table("pos_missing")
        s = Schema([NestedField(FILE_PATH_ID, "file_path", "string", True)])
        path = bad_delete(t, fmt, POSITION_DELETES, s, [{"file_path": data.path}], "posm")
        expect_error(fmt, "pos_missing", root, path,
                     "position delete file lacks the file_path (string) and pos (long) columns")

        # a key inside a struct, stored as int, read as long (icewriter writes no nested
        # Parquet columns: the Parquet adapter's struct path is the data path's leaf lookup)
        if fmt == "PARQUET":
            continue
        root = os.path.join(tmp, fmt.lower(), "nested_key")
        st = icetypes.StructType([(4, "k", "long", True)])
        nschema = Schema([NestedField(1, "id", "long", True), NestedField(3, "s", st)])
        t = Table.create(root, root, nschema)
        t.append(t.write_data([{"id": i, "s": {"k": i * 10}} for i in range(20)], file_format=fmt))
        dst = icetypes.StructType([(4, "k", "int", True)])
        ds = Schema([NestedField(3, "s", dst)])
        bad_delete(t, fmt, EQUALITY_DELETES, ds, [{"s": {"k": 30}}, {"s": {"k": 70}}], "eqn", [4])
        p = scan(root)
        got = sorted(json.loads(l)["id"] for l in p.stdout.splitlines() if l.strip())
        check(p.returncode == 0 and got == [i for i in range(20) if i not in (3, 7)],
              "%s nested_key: rows 3 and 7 removed by a key inside a struct (exit %d, %s)"
              % (fmt, p.returncode, p.stderr.strip()[-200:]))
    shutil.rmtree(tmp)
    print("%d failure(s)" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
