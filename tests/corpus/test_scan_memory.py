#!/usr/bin/env python3
"""The streaming claim of `icedruid scan`: memory per task is about one row group.

src/iceberg/reader.h promises "Memory per task: one row group of the projected columns
(plus key columns) and the task's delete index". This test builds, in a temp folder, a
table whose ONE data file is far larger than that: ~300 MB of Parquet (DuckDB,
tests/corpus/gen_big_parquet.mjs) in ~8 MB row groups, registered with the Python
Iceberg writer (tests/tools/icewriter) together with a position-delete file (every
997th row) and an equality-delete file (k in 7, 13). Then:

  * `icedruid scan TABLE --threads 1 --stats > /dev/null` must succeed and emit the
    number of rows DuckDB counts from the same file with the same predicates;
  * the scan's peak RSS (os.wait4 rusage of that one child) must stay below
        BOUND = 4 x (largest row group, uncompressed bytes) + 64 MiB
    - a row group's compressed chunk bytes, its decompressed pages and the batch
    arrays are each at most one row group, plus slack for the binary, libc, the metadata
    and the delete index - and below a quarter of the data file's size.

Skips (77) without the corpus folder's node packages (bash scripts/node-deps.sh) or
when $ICEDRUID is a sanitizer build (its shadow memory makes RSS meaningless).
Env: ICEDRUID, ICD_SOURCE_DIR. Runs in well under a minute on an idle machine.
"""
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile

SKIP = 77
ROWS = 5_400_000          # ~305 MB of Parquet with the columns gen_big_parquet.mjs writes
ROW_GROUP_ROWS = 131_072  # ~9 MB uncompressed / ~7.4 MB compressed per row group
POS_MOD = 997
EQ_KEYS = (7, 13)
PREFIX = "/tmp/icedruid-memtest/db/big"

SRC = os.environ.get("ICD_SOURCE_DIR") or os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(SRC, "tests", "tools"))


def skip(msg):
    print(f"test_scan_memory: SKIP: {msg}")
    sys.exit(SKIP)


def fail(msg):
    print(f"test_scan_memory: FAIL: {msg}")
    sys.exit(1)


def icedruid_cmd():
    cmd = os.environ.get("ICEDRUID") or os.path.join(SRC, "build", "icedruid")
    return shlex.split(cmd)


def is_sanitized(binary):
    try:
        with open(binary, "rb") as f:
            data = f.read()
    except OSError:
        return False
    return b"AddressSanitizer" in data or b"__asan_init" in data or b"__msan_init" in data


def node(*args):
    script = os.path.join(SRC, "tests", "corpus", "gen_big_parquet.mjs")
    p = subprocess.run(["node", script, *map(str, args)], capture_output=True, text=True)
    if p.returncode == 3:
        skip("@duckdb/node-api is not installed (bash scripts/node-deps.sh)")
    if p.returncode != 0:
        fail(f"gen_big_parquet.mjs {args[0]} failed: {p.stderr.strip()[:500]}")
    return json.loads(p.stdout.strip().splitlines()[-1])


def run_measured(cmd):
    """Runs cmd with stdout to /dev/null; returns (exit status, stderr, peak RSS KiB) of
    exactly that child (os.wait4, not RUSAGE_CHILDREN, which would include node)."""
    with open(os.devnull, "wb") as devnull, tempfile.TemporaryFile() as err:
        p = subprocess.Popen(cmd, stdout=devnull, stderr=err)
        _, status, ru = os.wait4(p.pid, 0)
        p.returncode = os.waitstatus_to_exitcode(status)
        err.seek(0)
        return p.returncode, err.read().decode("utf-8", "replace"), ru.ru_maxrss


def main():
    icd = icedruid_cmd()
    if not shutil.which(icd[0]) and not os.path.exists(icd[0]):
        skip(f"no icedruid at {icd[0]}")
    if is_sanitized(shutil.which(icd[0]) or icd[0]):
        skip("$ICEDRUID is a sanitizer build: peak RSS would measure shadow memory")
    if not shutil.which("node"):
        skip("node is not installed")
    from icewriter.iceberg import (DATA, DataFile, NestedField, Schema, Table)  # noqa: E402

    with tempfile.TemporaryDirectory(prefix="icd-scan-mem.") as tmp:
        root = os.path.join(tmp, "big")
        schema = Schema([NestedField(1, "id", "long", True), NestedField(2, "k", "int", True),
                         NestedField(3, "s", "string", True), NestedField(4, "d", "double", True)])
        t = Table.create(root, PREFIX, schema)
        rel = "data/00000-big.parquet"
        local = os.path.join(root, rel)
        os.makedirs(os.path.dirname(local), exist_ok=True)
        node("write", local, ROWS, ROW_GROUP_ROWS)
        size = os.path.getsize(local)

        # the file as icedruid's own inspect sees it (row-group sizes for the bound)
        info = json.loads(subprocess.check_output(icd + ["inspect", local]))
        if info["num_rows"] != ROWS:
            fail(f"DuckDB wrote {info['num_rows']} rows, not {ROWS}")
        rg_max = max(rg["total_byte_size"] for rg in info["row_groups"])
        rg_comp = max(sum(c["total_compressed_size"] for c in rg["columns"]) for rg in info["row_groups"])
        ngroups = len(info["row_groups"])

        data = DataFile(DATA, t.abs_path(rel), ROWS, size)
        t.append([data])
        pos = t.write_position_deletes([(data, p) for p in range(0, ROWS, POS_MOD)])
        eq = t.write_equality_deletes([{"k": k} for k in EQ_KEYS], ["k"])
        t.row_delta(deletes=[pos, eq])

        expected = node("expect", local, POS_MOD, ",".join(map(str, EQ_KEYS)))["rows"]
        cmd = icd + ["scan", root, "--remap", f"{PREFIX}={root}", "--threads", "1", "--stats"]
        rc, err, rss_kib = run_measured(cmd)
        if rc != 0:
            fail(f"scan failed (exit {rc}): {err.strip()[:500]}")
        stats = json.loads(err.strip().splitlines()[-1])
        if stats["rows_emitted"] != expected:
            fail(f"scan emitted {stats['rows_emitted']} rows, DuckDB counts {expected}")
        if stats["rows_read"] != ROWS:
            fail(f"scan read {stats['rows_read']} rows, the file has {ROWS}")

        mib = 1024 * 1024
        bound = 4 * rg_max + 64 * mib
        rss = rss_kib * 1024
        print(f"test_scan_memory: data file {size / mib:.1f} MiB in {ngroups} row groups "
              f"(largest {rg_max / mib:.1f} MiB uncompressed, {rg_comp / mib:.1f} MiB compressed); "
              f"{stats['rows_emitted']} rows emitted (DuckDB: {expected}); "
              f"peak RSS {rss / mib:.1f} MiB; bound {bound / mib:.1f} MiB")
        if size < 250 * mib:
            fail(f"the data file is only {size / mib:.1f} MiB: the test needs a file far above the bound")
        if rss > bound:
            fail(f"peak RSS {rss / mib:.1f} MiB exceeds 4 x row group + 64 MiB = {bound / mib:.1f} MiB")
        if rss > size / 4:
            fail(f"peak RSS {rss / mib:.1f} MiB is not far below the file size {size / mib:.1f} MiB")
    print("test_scan_memory: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
