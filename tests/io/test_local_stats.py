"""`--stats` counts the bytes read from local files, as it counts remote ones.

Writes the wide table of wide_table.py (42 columns, one uncompressed Parquet file of
several MB, written by the fixture writer) to a local directory and runs `icedruid scan`
with `--stats`, once projecting `a,b` and once with every column. The counters must
follow what was read: no remote request; the full scan reads at least the data file and
at most the whole table folder (data and metadata) plus the footer read twice; the
projected scan reads more than the manifests but under 25% of the data file (the same
bound test_s3_range_reads.py checks over S3). `read --spec --stats` reports the counters
too (examples/orders.spec.json over the demo warehouse).
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import wide_table  # noqa: E402

ICEDRUID = os.environ.get("ICEDRUID")
SRC = os.path.dirname(os.path.dirname(HERE))
failures = []


def check(cond, what):
    print(("ok: " if cond else "FAILED: ") + what)
    if not cond:
        failures.append(what)


def last_json(stderr):
    return json.loads(stderr.strip().splitlines()[-1])


def folder_bytes(root):
    return sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(root) for f in fs)


def main():
    if not ICEDRUID:
        print("SKIP: run through ctest (ICEDRUID)")
        return 77
    tmp = tempfile.mkdtemp(prefix="icd_localstats_")
    try:
        root = os.path.join(tmp, "wide")
        info = wide_table.write(root, root, wide_table.ROWS)
        size, total = info["size"], folder_bytes(root)
        runs = {}
        for name, cols in (("projected", ["--columns", "a,b"]), ("full", [])):
            r = subprocess.run([ICEDRUID, "scan", root, "--threads", "1", "--stats"] + cols,
                               capture_output=True, text=True, timeout=600)
            check(r.returncode == 0, f"scan {name} ran {r.stderr[-300:]}")
            if r.returncode:
                return 1
            runs[name] = last_json(r.stderr)
        p, f = runs["projected"], runs["full"]
        print(f"data file {size} bytes, table folder {total} bytes; projected scan read "
              f"{p['local_bytes']} bytes in {p['local_reads']} reads, full scan "
              f"{f['local_bytes']} bytes in {f['local_reads']} reads")
        for name, s in runs.items():
            check(s["remote_requests"] == 0 and s["remote_bytes"] == 0,
                  f"{name}: a local table sends no remote request")
            check(s["local_reads"] > 0 and s["rows_emitted"] == info["rows"],
                  f"{name}: reads and rows counted")
        check(size <= f["local_bytes"] <= total + 256 * 1024,
              f"full scan: {size} <= {f['local_bytes']} <= table folder + one footer")
        meta = total - size
        check(meta < p["local_bytes"] < size // 4,
              f"projected scan: metadata ({meta}) < {p['local_bytes']} < a quarter of the file")

        demo = os.path.join(SRC, "examples", "warehouse", "demo", "orders")
        if os.path.isdir(demo):
            r = subprocess.run([ICEDRUID, "read", "--spec",
                                os.path.join(SRC, "examples", "orders.spec.json"), "--stats",
                                "--remap", "/tmp/icedruid-example/warehouse=" +
                                os.path.join(SRC, "examples", "warehouse")],
                               cwd=SRC, capture_output=True, text=True, timeout=600)
            check(r.returncode == 0, f"read --stats ran {r.stderr[-300:]}")
            if r.returncode == 0:
                s = last_json(r.stderr)
                check(0 < s["local_bytes"] <= folder_bytes(demo) + 256 * 1024 and
                      s["local_reads"] > 0 and s["remote_bytes"] == 0,
                      f"read --stats counts local bytes: {s}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"{len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
