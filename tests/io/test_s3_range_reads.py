"""Range reads over S3: projecting two columns of a wide table fetches a small part of it.

Writes the wide table of wide_table.py (42 columns, 12000 rows, 3 row groups, one
uncompressed Parquet file of several MB) with the fixture writer, uploads it to s3rver,
then runs `icedruid scan s3://... --columns a,b --stats`. The rows must be exactly the
generator's values of `a` and `b` (computed here from wide_table.row, not read back), and
`remote_bytes` of --stats (response body bytes of every request of the run: metadata,
manifest list, manifest and the data file) must be under 25% of the data file's size.
A full scan is also run to show the contrast (it must fetch at least the file size).
Prints the figures; bench/s3_range_reads.py reports the same ones as a benchmark.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import s3util  # noqa: E402
import wide_table  # noqa: E402

ICEDRUID = os.environ.get("ICEDRUID")
LOCATION = "/tmp/icedruid-wide/wide"
MAX_FRACTION = 0.25

failures = []


def check(cond, what):
    print(("ok: " if cond else "FAILED: ") + what)
    if not cond:
        failures.append(what)


def scan_stats(icedruid, args, env):
    r = subprocess.run([icedruid, "scan"] + args + ["--stats"], env=env, capture_output=True,
                       text=True, timeout=600)
    stats = None
    if r.returncode == 0:
        stats = json.loads(r.stderr.strip().splitlines()[-1])
    return r, stats


def measure(icedruid, port, info, table_s3):
    """Runs the projected and the full scan; returns (projected run, stats, full stats)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    env.update(AWS_ACCESS_KEY_ID="S3RVER", AWS_SECRET_ACCESS_KEY="S3RVER",
               AWS_ENDPOINT_URL=f"http://127.0.0.1:{port}", AWS_REGION="us-east-1")
    remap = ["--remap", f"{info['location']}={table_s3}"]
    proj, pstats = scan_stats(icedruid, [table_s3, "--columns", "a,b", "--threads", "1"] + remap, env)
    full, fstats = scan_stats(icedruid, [table_s3, "--threads", "1"] + remap, env)
    return proj, pstats, full, fstats


def setup(tmp, rows=wide_table.ROWS):
    """Writes and uploads the wide table; returns (s3rver process, port, info, s3 location)
    or (None, reason, None, None)."""
    root = os.path.join(tmp, "wide")
    info = wide_table.write(root, LOCATION, rows)
    proc, port = s3util.start_s3rver(os.path.join(tmp, "s3rver"), ["warehouse"])
    if proc is None:
        return None, port, None, None
    s3util.S3Client(port, "S3RVER", "S3RVER").upload_tree("warehouse", "wide", root)
    return proc, port, info, "s3://warehouse/wide"


def main():
    if not ICEDRUID:
        print("SKIP: run through ctest (ICEDRUID)")
        return 77
    tmp = tempfile.mkdtemp(prefix="icd_s3range_")
    proc = None
    try:
        proc, port, info, table_s3 = setup(tmp)
        if proc is None:
            print("SKIP:", port)
            return 77
        proj, ps, full, fs = measure(ICEDRUID, port, info, table_s3)
        check(proj.returncode == 0 and ps is not None, f"projected scan ran {proj.stderr[-300:]}")
        check(full.returncode == 0 and fs is not None, f"full scan ran {full.stderr[-300:]}")
        if failures:
            return 1
        want = "".join(json.dumps({"a": r["a"], "b": r["b"]}, separators=(",", ":")) + "\n"
                       for r in (wide_table.row(i) for i in range(info["rows"])))
        got_rows = [json.loads(x) for x in proj.stdout.splitlines()]
        want_rows = [json.loads(x) for x in want.splitlines()]
        check(got_rows == want_rows, f"scan --columns a,b gives the {info['rows']} generated rows")
        size = info["size"]
        frac = ps["remote_bytes"] / size
        print(f"wide table: {info['columns']} columns, {info['rows']} rows, data file "
              f"{size} bytes")
        print(f"scan --columns a,b: {ps['remote_bytes']} bytes in {ps['remote_requests']} "
              f"requests = {100 * frac:.1f}% of the data file")
        print(f"full scan:          {fs['remote_bytes']} bytes in {fs['remote_requests']} "
              f"requests = {100 * fs['remote_bytes'] / size:.1f}% of the data file")
        check(frac < MAX_FRACTION, f"projection fetched {100 * frac:.1f}% < "
              f"{100 * MAX_FRACTION:.0f}% of the file")
        check(fs["remote_bytes"] >= size, "a full scan fetches at least the whole file")
        check(ps["rows_emitted"] == info["rows"], "stats count the rows")
    finally:
        if proc is not None:
            proc.stdin.close()
            proc.kill()
            proc.wait()
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"{len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
