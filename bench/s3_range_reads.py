#!/usr/bin/env python3
"""Bytes and requests an `icedruid scan` costs over S3, projected vs full.

Usage: python3 bench/s3_range_reads.py [ICEDRUID] [--rows N]

Writes the wide table of tests/io/wide_table.py (42 columns; 12000 rows by default, one
uncompressed Parquet file of ~6.6 MB in row groups of 4000 rows), uploads it to s3rver
(npm @20minutes/s3rver on loopback, tests/node) and runs, with --threads 1 and --stats:
  scan --columns a,b     (two columns that are not adjacent in the file)
  scan --columns a       (one column)
  scan                   (all 42 columns)
and prints a Markdown table of remote_bytes (response body bytes of every request of
the run, metadata and manifests included), remote_requests, and bytes as a share of the
data file. Needs `bash scripts/node-deps.sh` once.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "io"))
os.environ.setdefault("ICD_SOURCE_DIR", ROOT)
import s3util  # noqa: E402
import wide_table  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("icedruid", nargs="?", default=os.path.join(ROOT, "build", "icedruid"))
    ap.add_argument("--rows", type=int, default=wide_table.ROWS)
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="icd_bench_s3_")
    proc = None
    try:
        root = os.path.join(tmp, "wide")
        info = wide_table.write(root, "/tmp/icedruid-wide/wide", a.rows)
        proc, port = s3util.start_s3rver(os.path.join(tmp, "s3rver"), ["warehouse"])
        if proc is None:
            print("cannot start s3rver:", port)
            return 1
        s3util.S3Client(port, "S3RVER", "S3RVER").upload_tree("warehouse", "wide", root)
        env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
        env.update(AWS_ACCESS_KEY_ID="S3RVER", AWS_SECRET_ACCESS_KEY="S3RVER",
                   AWS_ENDPOINT_URL=f"http://127.0.0.1:{port}", AWS_REGION="us-east-1")
        size = info["size"]
        print(f"wide table: {info['columns']} columns, {info['rows']} rows, "
              f"data file {size} bytes\n")
        print("| scan | remote bytes | requests | share of the data file | seconds |")
        print("|---|---:|---:|---:|---:|")
        for cols in ("a,b", "a", None):
            args = [a.icedruid, "scan", "s3://warehouse/wide", "--remap",
                    f"{info['location']}=s3://warehouse/wide", "--threads", "1", "--stats"]
            if cols:
                args += ["--columns", cols]
            t0 = time.monotonic()
            r = subprocess.run(args, env=env, capture_output=True, text=True)
            secs = time.monotonic() - t0
            if r.returncode != 0:
                print(r.stderr)
                return 1
            st = json.loads(r.stderr.strip().splitlines()[-1])
            label = f"--columns {cols}" if cols else "all columns"
            print(f"| {label} | {st['remote_bytes']} | {st['remote_requests']} | "
                  f"{100 * st['remote_bytes'] / size:.1f}% | {secs:.2f} |")
    finally:
        if proc is not None:
            proc.stdin.close()
            proc.kill()
            proc.wait()
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
