#!/usr/bin/env python3
"""A scan on more threads than it has tasks reads a Parquet file in parts, ranges of its row
groups, on several threads at once (src/api/scan.c parts_per_task,
ice_scan_reader_read_task_part). Every part must apply the deletes by the rows' positions
in the whole file, and the counters must add up to those of a whole read.

Writes (tests/tools/icewriter) one table: a Parquet file of 12,000 rows in 12 row groups,
a small Parquet file (one row group), an ORC file of 4,200 rows in 6 stripes and an Avro
file (not split: part 0 reads it whole); a position delete file over all four (positions
in every row group and stripe), and an equality delete file on k. Scans with --threads 1, 2, 3, 5 and 8 (1 to 8 parts a file,
some of them empty): the surviving ids must be exactly the ones computed here, and
--stats the same for every thread count (data files counted once, rows read, row groups,
rows removed by each kind of delete).
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
from icewriter.iceberg import NestedField, Schema, Table  # noqa: E402

PREFIX = "/tmp/icedruid-scan-parts"
STATS = ["data_files", "rows_read", "rows_removed_by_position_deletes",
         "rows_removed_by_equality_deletes", "rows_emitted", "row_groups_read",
         "row_groups_skipped", "delete_files_loaded"]


def main():
    icd = shlex.split(os.environ.get("ICEDRUID") or os.path.join(SRC, "build", "icedruid"))
    schema = Schema([NestedField(1, "id", "long", required=True), NestedField(2, "k", "long"),
                     NestedField(3, "s", "string")])
    big = [(i, i % 997, f"s{i % 13}") for i in range(12_000)]
    small = [(20_000 + i, i % 991, "small") for i in range(500)]
    avro = [(30_000 + i, i % 983, None) for i in range(800)]
    orcrows = [(40_000 + i, i % 977, f"o{i % 5}") for i in range(4_200)]
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        root = os.path.join(tmp, "t")
        t = Table.create(root, PREFIX, schema)
        fbig = t.write_data(big, name="big", row_group_rows=1_000)
        fsmall = t.write_data(small, name="small")
        favro = t.write_data(avro, name="avro", file_format="AVRO")
        forc = t.write_data(orcrows, name="orc", file_format="ORC", row_group_rows=700)
        assert len(fbig) == len(fsmall) == len(favro) == len(forc) == 1
        t.append(fbig + fsmall + favro + forc)
        # positions: in every row group of the big file (including each first and last row)
        dels = [(fbig[0], p) for p in range(12_000) if p % 7 == 3 or p % 1000 in (0, 999)]
        dels += [(fsmall[0], p) for p in (0, 17, 499)] + [(favro[0], p) for p in (1, 2, 799)]
        dels += [(forc[0], p) for p in range(4_200) if p % 11 == 5 or p % 700 in (0, 699)]
        pos = t.write_position_deletes(dels, name="pos")
        eq_keys = [5, 77, 500, 990]
        eq = t.write_equality_deletes([{"k": k} for k in eq_keys], ["k"], name="eq")
        t.row_delta(deletes=[pos, eq])
        gone_pos = {"big": {p for f, p in dels if f is fbig[0]},
                    "small": {p for f, p in dels if f is fsmall[0]},
                    "avro": {p for f, p in dels if f is favro[0]},
                    "orc": {p for f, p in dels if f is forc[0]}}
        want = []
        for name, rows in (("big", big), ("small", small), ("avro", avro), ("orc", orcrows)):
            for p, (i, k, _) in enumerate(rows):
                if p not in gone_pos[name] and k not in eq_keys:
                    want.append(i)
        want.sort()
        base = None
        for threads in (1, 2, 3, 5, 8):
            p = subprocess.run(icd + ["scan", root, "--remap", f"{PREFIX}={root}", "--columns", "id",
                                      "--threads", str(threads), "--stats"],
                               capture_output=True, text=True)
            if p.returncode != 0:
                print(f"FAIL --threads {threads}: exit {p.returncode}: {p.stderr.strip()}")
                failures += 1
                continue
            ids = sorted(int(line.split(":")[1].rstrip("}")) for line in p.stdout.splitlines())
            stats = json.loads(p.stderr.strip().splitlines()[-1])
            got = {k: stats.get(k) for k in STATS}
            if ids != want:
                print(f"FAIL --threads {threads}: {len(ids)} rows, want {len(want)}")
                failures += 1
                continue
            if base is None:
                base = got
                ok = (got["data_files"] == 4 and got["rows_read"] == 17_500 and
                      got["rows_emitted"] == len(want) and got["row_groups_read"] == 19)
                print(("ok   " if ok else "FAIL ") + f"--threads 1: counters {got}")
                failures += not ok
            elif got != base:
                print(f"FAIL --threads {threads}: counters {got}, one thread gave {base}")
                failures += 1
                continue
            print(f"ok   --threads {threads}: {len(ids)} of 17500 rows survive, counters as one thread")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
