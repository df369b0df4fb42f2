#!/usr/bin/env python3
"""The merge-on-read reader hands a Parquet data file's surviving rows to the Parquet
writer sink (what `stage` and `serve` write) in one of two ways: whole batches, column by
column (ice_row_sink.columns: values the written leaf stores alike are copied, others
converted one by one), whenever no column of the read schema is nested; row by row
otherwise. Both must write the same bytes for the same file, so a materialized file does
not depend on which way was taken.

tests/tools/pqw_paths_tool writes every Parquet data file of a table both ways and
compares the bytes. Tables:

  * a fixture written here with tests/tools/icewriter (7 data files) that reaches every
    branch of the whole-batch path: a column missing from a file (identity partition value, a constant),
    promotions since the file was written (int -> long, float -> double, decimal(9,2) ->
    decimal(18,2): converted), a renamed column, INT96 timestamps (converted), every other
    primitive type stored as written (copied: boolean, long, date, time, timestamp,
    timestamptz, string with and without dictionary, binary, uuid, fixed, decimal), nulls,
    files of several batches, position deletes (kept rows not contiguous) and equality
    deletes, a file with every row deleted;
  * an INT96 timestamp outside the int64 microsecond range: both ways fail with the same
    message, naming the row;
  * with $ICD_SHARED: every corpus table (Impala, icebird) and bench2m.
"""
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.environ.get("ICD_SOURCE_DIR", os.path.dirname(os.path.dirname(HERE)))
sys.path.insert(0, os.path.join(SRC, "tests", "tools"))
sys.path.insert(0, os.path.join(SRC, "tests", "corpus"))
sys.path.insert(0, os.path.join(SRC, "tests", "druid"))
import stage_check as sc  # noqa: E402
from icewriter import parquet  # noqa: E402
from icewriter.iceberg import (DATA, DataFile, NestedField, PartitionField,  # noqa: E402
                               PartitionSpec, Schema, Table)

BUILD = os.environ.get("ICD_BUILD_DIR", "build")
TOOL = os.path.join(BUILD, "tests", "pqw_paths_tool")
SHARED = os.environ.get("ICD_SHARED", "")
PREFIX = "/tmp/icedruid-pqw-paths"
JD_EPOCH = 2440588

failures = []


def check(cond, msg):
    print(("ok: " if cond else "FAIL: ") + msg)
    if not cond:
        failures.append(msg)


def run_tool(root, remaps):
    args = [TOOL, sc.current_metadata_path(root)]
    for frm, to in remaps:
        args += ["--remap", frm + "=" + to]
    r = subprocess.run(args, capture_output=True, text=True)
    lines = r.stdout.splitlines()
    return r.returncode, lines, r.stderr.strip()


FIELDS0 = [NestedField(1, "id", "long", True), NestedField(2, "part", "string"),
           NestedField(3, "i", "int"), NestedField(4, "f", "float"),
           NestedField(5, "d", "decimal(9,2)"), NestedField(6, "s", "string"),
           NestedField(7, "sd", "string"), NestedField(8, "b", "binary"),
           NestedField(9, "u", "uuid"), NestedField(10, "fx", "fixed[4]"),
           NestedField(11, "dt", "date"), NestedField(12, "ts", "timestamp"),
           NestedField(13, "tz", "timestamptz"), NestedField(14, "tm", "time"),
           NestedField(15, "bo", "boolean"), NestedField(16, "dl", "decimal(30,4)")]


def row0(k):
    """Row k in schema 0's field order; every 7th optional value null."""
    def opt(v, m=7):
        return None if k % m == 3 else v
    return (k, "p%d" % (k % 2), opt(k * 3 - 5000), opt(k / 8.0), opt(k * 101 - 70000),
            opt("s%d" % (k * 7919 % 10007)), opt("dict%d" % (k % 13), 11),
            opt(bytes([k % 256, (k >> 8) % 256])), opt(k.to_bytes(16, "big")),
            opt(k.to_bytes(4, "big")), opt(k - 3000), opt(k * 1_000_003 - 10**9),
            opt(k * 999_983), opt(k * 1_000_000 % 86_400_000_000), opt(k % 3 == 0),
            opt(k * 123_456_789 - 10**12))


def fixture(root):
    """The table of the docstring; returns (Table, location)."""
    loc = PREFIX + "/mixed"
    spec = PartitionSpec([PartitionField(2, 1000, "part", "identity")])
    t = Table.create(root, loc, Schema(FIELDS0), spec)
    # two files of 5,000 rows (several batches each), sd dictionary-encoded
    f_main = t.write_data([row0(k) for k in range(10_000)], dictionary=("sd",), name="main")
    # a file as Impala writes identity partitions: no `part` column in the file
    rel = "data/part=p9/00001-nopart.parquet"
    os.makedirs(os.path.dirname(t.local_path(rel)), exist_ok=True)
    cols = [parquet.Column(f.name, f.type, f.id, f.required) for f in FIELDS0 if f.name != "part"]
    rows = [tuple(v for j, v in enumerate(row0(k)) if j != 1) for k in range(20_000, 26_000)]
    info = parquet.write_parquet(t.local_path(rel), cols, rows, page_rows=1000)
    nopart = DataFile(DATA, t.abs_path(rel), spec_id=0, partition=("p9",),
                      record_count=info.num_rows, file_size_in_bytes=info.size)
    t.append(f_main + [nopart])
    # position deletes: every 3rd row of the first file, all rows of nothing else yet
    target = f_main[0]
    pos = t.write_position_deletes([(target, p) for p in range(0, 5_000, 3)])
    eq = t.write_equality_deletes([{"id": k, "part": "p9"} for k in range(20_000, 21_500)], ["id"],
                                  partition=("p9",))
    t.row_delta(deletes=[pos, eq])
    # ALTER: promotions and a rename; then a file written with the new types
    fields1 = list(FIELDS0)
    fields1[2] = NestedField(3, "i", "long")
    fields1[3] = NestedField(4, "f", "double")
    fields1[4] = NestedField(5, "d", "decimal(18,2)")
    fields1[5] = NestedField(6, "s_renamed", "string")
    t.evolve_schema(fields1)
    later = t.write_data([row0(k) for k in range(30_000, 30_500)], name="later")
    t.append(later)
    # INT96 timestamps (Spark / Impala): converted on both paths
    rel = "data/part=p0/00002-int96.parquet"
    cols = [parquet.Column("id", "long", 1, True), parquet.Column("part", "string", 2),
            parquet.Column("ts", "timestamp", 12, int96=True)]
    rows = [(40_000 + k, "p0", None if k % 5 == 1 else (JD_EPOCH + k, k * 1_000_001))
            for k in range(4_500)]
    info = parquet.write_parquet(t.local_path(rel), cols, rows)
    i96 = DataFile(DATA, t.abs_path(rel), spec_id=0, partition=("p0",),
                   record_count=info.num_rows, file_size_in_bytes=info.size)
    t.append([i96])
    # a file whose every row is deleted (even ids: one partition)
    gone = t.write_data([row0(k) for k in range(50_000, 50_020, 2)], name="gone")
    t.append(gone)
    t.row_delta(deletes=[t.write_position_deletes([(gone[0], p) for p in range(10)])])
    return t, loc


def out_of_range(root):
    loc = PREFIX + "/range"
    t = Table.create(root, loc, Schema([NestedField(1, "id", "long", True),
                                        NestedField(2, "ts", "timestamp")]))
    rel = "data/00001-far.parquet"
    os.makedirs(os.path.dirname(t.local_path(rel)), exist_ok=True)
    cols = [parquet.Column("id", "long", 1, True), parquet.Column("ts", "timestamp", 2, int96=True)]
    rows = [(k, (JD_EPOCH + k, 0)) for k in range(5000)]
    rows[4321] = (4321, (JD_EPOCH + 10**9, 0))  # far beyond int64 microseconds
    info = parquet.write_parquet(t.local_path(rel), cols, rows)
    t.append([DataFile(DATA, t.abs_path(rel), spec_id=0, partition=(),
                       record_count=info.num_rows, file_size_in_bytes=info.size)])
    return t, loc


def summary(lines):
    same = [x for x in lines if x.startswith("same ")]
    batched = [x for x in same if x.split()[2] != "0"]
    other = [x for x in lines if not x.startswith(("same ", "files "))]
    return same, batched, other


def main():
    if not os.path.exists(TOOL):
        print("%s is not built" % TOOL)
        return 1
    tmp = tempfile.mkdtemp(prefix="icd-test-pqw-paths-")
    root = os.path.join(tmp, "mixed")
    _, loc = fixture(root)
    rc, lines, err = run_tool(root, [(loc, root)])
    same, batched, other = summary(lines)
    check(rc == 0 and len(same) == 7 and not other,
          "fixture: all 7 data files written alike both ways: %s %s" % (lines, err))
    by_name = {os.path.basename(x.split()[3]): int(x.split()[2]) for x in same}
    multi = [n for n, b in by_name.items() if "main" in n]
    check(len(multi) == 2 and all(by_name[n] >= 2 for n in multi),
          "fixture: the 5,000-row files went as several whole batches: %s" % by_name)
    check(all(b >= 1 for n, b in by_name.items() if "gone" not in n) and
          [b for n, b in by_name.items() if "gone" in n] == [0],
          "fixture: every file with surviving rows went as whole batches, the file with "
          "none gave no batch: %s" % by_name)

    root = os.path.join(tmp, "range")
    _, loc = out_of_range(root)
    rc, lines, err = run_tool(root, [(loc, root)])
    check(rc == 0 and len(lines) == 2 and lines[0].startswith("error SAME ") and
          "row 4321" in lines[0] and "ts" in lines[0],
          "an INT96 beyond int64 micros fails alike both ways, naming column and row: %s" % lines)

    if SHARED and os.path.isdir(os.path.join(SHARED, "corpus")):
        sys.path.insert(0, os.path.join(SRC, "bench"))
        os.environ.setdefault("ICD_SOURCE_DIR", SRC)
        import stage_corpus  # noqa: E402
        from test_scan_oracles import compute_remaps  # noqa: E402
        tables = files = alike = nbatched = 0
        for name, tdir in stage_corpus.corpus_tables():
            rc, lines, err = run_tool(tdir, compute_remaps(tdir))
            same, batched, other = summary(lines)
            # the corpus has damaged and unsupported files: they must fail alike
            bad = [x for x in other if not x.startswith("error SAME ")]
            check(rc == 0 and not bad and lines and lines[-1].startswith("files "),
                  "%s: %s" % (name, lines[-1] if lines else err))
            tables += 1
            files += len(same) + len(other)
            alike += len(same)
            nbatched += len(batched)
        check(nbatched > 400, "corpus: %d tables, %d Parquet data files, %d written alike both "
              "ways, %d of them as whole batches" % (tables, files, alike, nbatched))
    else:
        print("skipped: the corpus part ($ICD_SHARED/corpus is not there)")
    if failures:
        print("%d check(s) failed" % len(failures))
        return 1
    print("all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
