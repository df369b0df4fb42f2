"""The same deletes in each file format, through the one loader and merge-on-read step.

For each format F in Parquet, ORC and Avro, a table (tests/tools/icewriter) whose data
files AND delete files are all F:
  - data file A: 3,000 rows (several Parquet batches, several Avro batches of 1,024 and
    container blocks, ORC stripes of 700 rows), data file B: 50 rows;
  - one position delete file removing every 7th row of A and rows 0 and 49 of B (two
    referenced data files in one file: the sorted-by-path entry), a second one removing
    row 1 of B only (one referenced data file);
  - equality deletes on `id` (long) for 40 keys and on (`name`, `day`) (string, date) for
    25 tuples, a null `name` key among them (null equals null);
  - then an append of a data file C holding deleted keys again (higher sequence: kept).
The expected surviving rows are worked out here from what was written (spec "Scan
Planning": positions apply to seq <= S, equality deletes to seq < S), and `icedruid scan
--stats` must give exactly them, with the same removed-by-position / removed-by-equality
counts, for every format (the counts are also equal across formats)."""
import collections
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tests", "tools"))
from icewriter.iceberg import NestedField, Schema, Table  # noqa: E402

ICEDRUID = os.environ.get("ICEDRUID", "build/icedruid")
SCHEMA = Schema([NestedField(1, "id", "long", True), NestedField(2, "name", "string"),
                 NestedField(3, "day", "date"), NestedField(4, "v", "double")])
failures = []


def check(cond, msg):
    print(("ok: " if cond else "FAIL: ") + msg)
    if not cond:
        failures.append(msg)


def row(i):
    return {"id": i, "name": None if i % 97 == 5 else "n%d" % (i % 300), "day": 19000 + i % 50,
            "v": i * 0.5}


def build(root, fmt):
    t = Table.create(root, root, SCHEMA)
    a_rows = [row(i) for i in range(3000)]
    b_rows = [row(10000 + i) for i in range(50)]
    opts = {"file_format": fmt}
    if fmt != "AVRO":
        opts["row_group_rows"] = 700
    (a,) = t.write_data(a_rows, name="a", **opts)
    (b,) = t.write_data(b_rows, name="b", file_format=fmt)
    t.append([a, b])
    pos_ab = [(a, p) for p in range(0, 3000, 7)] + [(b, 0), (b, 49)]
    pos_b = [(b, 1)]
    eq_ids = [{"id": i} for i in range(100, 3000, 73)][:40]
    eq_nd = [{"name": "n%d" % k, "day": 19000 + k % 50} for k in range(0, 250, 10)]
    eq_nd[0] = {"name": None, "day": 19000 + 5 % 50}  # the null key: rows with name null, day 5
    dels = [t.write_position_deletes(pos_ab, file_format=fmt),
            t.write_position_deletes(pos_b, file_format=fmt),
            t.write_equality_deletes(eq_ids, ["id"], file_format=fmt),
            t.write_equality_deletes(eq_nd, ["name", "day"], file_format=fmt)]
    t.row_delta(deletes=dels)
    c_rows = [row(i) for i in (100, 173, 10, 5)]  # deleted keys again, later: kept
    (c,) = t.write_data(c_rows, name="c", file_format=fmt)
    t.append([c])
    # expected
    dead_pos = {("a", p) for _, p in pos_ab if _ is a} | {("b", p) for f, p in pos_ab + pos_b if f is b}
    ids = {k["id"] for k in eq_ids}
    nd = {(k["name"], k["day"]) for k in eq_nd}
    want, npos, neq = [], 0, 0
    for tag, rows in (("a", a_rows), ("b", b_rows)):
        for p, r in enumerate(rows):
            if (tag, p) in dead_pos:
                npos += 1
            elif r["id"] in ids or (r["name"], r["day"]) in nd:
                neq += 1
            else:
                want.append(r["id"])
    want += [r["id"] for r in c_rows]
    return sorted(want), npos, neq


def main():
    tmp = tempfile.mkdtemp(prefix="icd-delfmt-")
    counts = {}
    for fmt in ("PARQUET", "ORC", "AVRO"):
        root = os.path.join(tmp, fmt.lower())
        want, npos, neq = build(root, fmt)
        p = subprocess.run([ICEDRUID, "scan", root, "--stats", "--threads", "2"], capture_output=True,
                           text=True)
        if p.returncode != 0:
            check(False, "%s: scan failed: %s" % (fmt, p.stderr.strip()[-400:]))
            continue
        got = sorted(json.loads(l)["id"] for l in p.stdout.splitlines() if l.strip())
        st = json.loads([l for l in p.stderr.splitlines() if l.startswith("{")][-1])
        dup = [k for k, n in collections.Counter(got).items() if n > 1 and k not in (100, 173, 10, 5)]
        check(got == want and not dup, "%s: %d surviving rows as worked out (got %d)" % (fmt, len(want), len(got)))
        check(st["rows_removed_by_position_deletes"] == npos,
              "%s: %d removed by position (stats %d)" % (fmt, npos, st["rows_removed_by_position_deletes"]))
        check(st["rows_removed_by_equality_deletes"] == neq,
              "%s: %d removed by equality (stats %d)" % (fmt, neq, st["rows_removed_by_equality_deletes"]))
        check(st["delete_files_loaded"] == 4, "%s: 4 delete files loaded once each" % fmt)
        counts[fmt] = (len(got), st["rows_removed_by_position_deletes"], st["rows_removed_by_equality_deletes"])
    check(len(set(counts.values())) == 1, "the same counts for every format: %s" % counts)
    import shutil
    shutil.rmtree(tmp)
    print("%d failure(s)" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
