"""S3 and HTTP(S) FileIO against servers on loopback.

1. s3rver (npm @20minutes/s3rver, verifies SigV4) on 127.0.0.1 with a random port; six
   corpus tables (equality deletes, position deletes, deletion vectors, partitioned,
   icebird merge-on-read) are uploaded into bucket "warehouse" with this test's own
   SigV4 signer (s3util.py). `icedruid inspect` over s3:// (table directory: version hint,
   HEAD and ListObjectsV2; and the metadata file itself) must print exactly what it
   prints for the local copy. Wrong secret / wrong key id / missing object / missing
   table give exit 1 and one clear line without the secret.
2. test_remote (the C unit test) compares every byte of every uploaded file read through
   icd_file_read_at in uneven chunks, tails and past-the-end reads, and the listings of
   the table directories; then counts requests for sequential 4 KiB reads of a 5 MiB
   object (read-ahead).
3. FakeS3 (s3util.py, also verifying SigV4): 500, 500, then 200 is retried; an object
   that always fails gives "HTTP 500 InternalError"; paginated listings; the session
   token is sent as x-amz-security-token and signed; the remote read policy (requests
   and bytes per access pattern, 300 mixed reads of a 5 MiB object byte-compared).
4. A plain http.server (no Range support) for http:// FileIO: byte comparison and
   inspect of a metadata file.
"""
import functools
import http.server
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
# two corpus tables record delete-file facts that are not the files' (see
# tests/corpus/test_scan_oracles.py SIZE_MISMATCH); this test is not about that
os.environ["ICEDRUID_SIZE_MISMATCH"] = "warn"

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import s3util  # noqa: E402

ICEDRUID = os.environ.get("ICEDRUID")
SHARED = os.environ.get("ICD_SHARED", "")
BUILD = os.environ.get("ICD_BUILD_DIR", "")
CORPUS = os.path.join(SHARED, "corpus")

TABLES = {
    "eq": "impala/hadoop_catalog/ice/iceberg_v2_delete_equality",
    "eqpos": "impala/hadoop_catalog/ice/iceberg_v2_delete_both_eq_and_pos",
    "pos": "impala/hadoop_catalog/ice/iceberg_v2_delete_positional",
    "dv": "impala/iceberg_v3/iceberg_v3_deletion_vectors",
    "part": "impala/hadoop_catalog/ice/iceberg_v2_partitioned_position_deletes",
    "mor": "icebird/a_partitioned_mor/table",
}

failures = []


def check(cond, what):
    if cond:
        print("ok:", what)
    else:
        print("FAILED:", what)
        failures.append(what)


def run(args, env):
    return subprocess.run([ICEDRUID] + args, env=env, capture_output=True, text=True,
                          timeout=300)


def inspect_json(args, env):
    r = run(["inspect"] + args, env)
    if r.returncode != 0:
        return None, r.stderr.strip()
    j = json.loads(r.stdout)
    mf = j.pop("metadata-file", None)
    return j, mf


def clean_env(**extra):
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    env.pop("ICEDRUID_S3_PATH_STYLE", None)
    env.update(extra)
    return env


def s3rver_part(tmp):
    proc, port = s3util.start_s3rver(os.path.join(tmp, "s3rver"), ["warehouse"])
    if proc is None:
        return port  # the reason
    try:
        client = s3util.S3Client(port, "S3RVER", "S3RVER")
        files = []  # (s3 location, local path)
        dirs = []
        for name, rel in TABLES.items():
            local = os.path.join(CORPUS, rel)
            for key in client.upload_tree("warehouse", "t/" + name, local):
                files.append(("s3://warehouse/" + key,
                              os.path.join(local, key[len("t/" + name) + 1:])))
            for sub in ("metadata", "data"):
                if os.path.isdir(os.path.join(local, sub)):
                    dirs.append((f"s3://warehouse/t/{name}/{sub}", os.path.join(local, sub) + "/"))
        big = os.urandom(5 * 1024 * 1024 + 12345)
        client.put("warehouse", "big/random.bin", big)
        print(f"uploaded {len(files)} files of {len(TABLES)} tables to s3rver on port {port}")

        env = clean_env(AWS_ACCESS_KEY_ID="S3RVER", AWS_SECRET_ACCESS_KEY="S3RVER",
                        AWS_ENDPOINT_URL=f"http://127.0.0.1:{port}", AWS_REGION="us-east-1")
        for name, rel in TABLES.items():
            local = os.path.join(CORPUS, rel)
            want, want_mf = inspect_json([local], env)
            got, got_mf = inspect_json([f"s3://warehouse/t/{name}"], env)
            check(want is not None and got == want,
                  f"inspect s3://warehouse/t/{name} == inspect local ({got_mf})")
            check(got_mf is not None and got_mf.startswith(f"s3://warehouse/t/{name}/metadata/v")
                  and os.path.basename(got_mf) == os.path.basename(want_mf or ""),
                  f"{name}: same current metadata file ({os.path.basename(want_mf or '')})")
            # the metadata file itself, through the s3a scheme
            mf = os.path.basename(want_mf)
            got2, _ = inspect_json([f"s3a://warehouse/t/{name}/metadata/{mf}"], env)
            check(got2 == want, f"inspect s3a://.../{name}/metadata/{mf} == local")

        target = "s3://warehouse/t/eq"
        r = run(["inspect", target], dict(env, AWS_SECRET_ACCESS_KEY="not-the-secret-xyz"))
        check(r.returncode == 1 and "HTTP 403 SignatureDoesNotMatch" in r.stderr
              and "not-the-secret-xyz" not in r.stderr and r.stderr.count("\n") == 1,
              f"wrong secret: exit 1, one clear line: {r.stderr.strip()}")
        r = run(["inspect", target + "/metadata/v1.metadata.json"],
                dict(env, AWS_ACCESS_KEY_ID="NOSUCHKEY"))
        check(r.returncode == 1 and "InvalidAccessKeyId" in r.stderr,
              f"wrong key id: {r.stderr.strip()}")
        r = run(["inspect", "s3://warehouse/t/eq/metadata/v99.metadata.json"], env)
        check(r.returncode == 1 and "HTTP 404 NoSuchKey" in r.stderr
              and "s3://warehouse/t/eq/metadata/v99.metadata.json" in r.stderr,
              f"missing object: {r.stderr.strip()}")
        r = run(["inspect", "s3://nobucket/t/x.metadata.json"], env)
        check(r.returncode == 1 and "NoSuchBucket" in r.stderr, f"missing bucket: {r.stderr.strip()}")

        # byte-level and listing comparison in C
        lst = os.path.join(tmp, "files.tsv")
        with open(lst, "w") as fh:
            for a, b in files + dirs:
                fh.write(f"{a}\t{b}\n")
        cenv = dict(env, ICD_S3_TEST_ENDPOINT=f"http://127.0.0.1:{port}", ICD_S3_TEST_KEY="S3RVER",
                    ICD_S3_TEST_SECRET="S3RVER", ICD_S3_TEST_FILES=lst,
                    ICD_S3_TEST_BIG="s3://warehouse/big/random.bin")
        r = subprocess.run([os.path.join(BUILD, "tests", "test_remote")], env=cenv,
                           capture_output=True, text=True, timeout=600)
        print(r.stdout + r.stderr)
        check(r.returncode == 0 and "compared" in r.stdout, "test_remote over s3rver")
    finally:
        proc.stdin.close()
        proc.kill()
        proc.wait()
    return None


def fake_part(tmp):
    root = os.path.join(tmp, "fake")
    for rel, data in {"bkt/flaky/f.bin": b"flaky content", "bkt/down/f.bin": b"down",
                      "bkt/many/a.txt": b"a", "bkt/many/b.txt": b"b", "bkt/many/c.txt": b"c",
                      "bkt/many/sub/x.txt": b"x", "bkt/many/z.txt": b"z"}.items():
        os.makedirs(os.path.dirname(os.path.join(root, rel)), exist_ok=True)
        with open(os.path.join(root, rel), "wb") as fh:
            fh.write(data)
    big_local = os.path.join(root, "bkt", "big", "random.bin")
    os.makedirs(os.path.dirname(big_local))
    with open(big_local, "wb") as fh:
        fh.write(os.urandom(5 * 1024 * 1024 + 4321))
    srv = s3util.start_fake(root)
    srv.fail_plan = {"flaky/f.bin": 2, "down/f.bin": 10**6}
    port = srv.server_address[1]
    try:
        env = clean_env(ICD_S3_TEST_FAKE=f"http://127.0.0.1:{port}",
                        ICD_S3_TEST_FAKE_BIG_LOCAL=big_local)
        r = subprocess.run([os.path.join(BUILD, "tests", "test_remote")], env=env,
                           capture_output=True, text=True, timeout=600)
        print(r.stdout + r.stderr)
        check(r.returncode == 0, "test_remote over FakeS3 (retries, pagination, bad secret)")
        reqs = srv.requests
        flaky = [q for q in reqs if q[1].startswith("/bkt/flaky/f.bin")]
        check(len(flaky) >= 3, f"flaky object asked {len(flaky)} times (2 failures + success)")
        down = [q for q in reqs if q[1].startswith("/bkt/down/f.bin")]
        check(len(down) == 4, f"failing object tried {len(down)} times (bounded retries)")
        tok = [q for q in reqs if q[2].get("x-amz-security-token") == "SESSION-TOKEN-123"
               and "x-amz-security-token" in q[2].get("authorization", "")]
        check(len(tok) > 0 and len(tok) == len([q for q in reqs if "authorization" in q[2]]),
              "session token sent and signed on every request")
        check(all(q[2].get("x-amz-content-sha256") == s3util.EMPTY_SHA256 for q in tok),
              "x-amz-content-sha256 is the empty-payload hash")
        ranged = [q for q in reqs if q[2].get("range", "").startswith("bytes=")]
        check(len(ranged) > 0, "reads use Range requests")
    finally:
        srv.shutdown()


def http_part(tmp):
    local = os.path.join(CORPUS, TABLES["eqpos"])
    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *a):
            pass

    handler = functools.partial(Quiet, directory=local)
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{srv.server_address[1]}"
    try:
        rels = []
        for d, _, fs in os.walk(local):
            rels += [os.path.relpath(os.path.join(d, f), local) for f in fs]
        env = clean_env(ICD_HTTP_TEST_BASE=base, ICD_HTTP_TEST_LOCAL=local,
                        ICD_HTTP_TEST_FILES=",".join(sorted(rels)))
        r = subprocess.run([os.path.join(BUILD, "tests", "test_remote")], env=env,
                           capture_output=True, text=True, timeout=600)
        print(r.stdout + r.stderr)
        check(r.returncode == 0 and "over http://" in r.stdout, "test_remote over http://")
        mf = sorted(x for x in rels if x.endswith(".metadata.json"))[-1]
        want, _ = inspect_json([os.path.join(local, mf)], env)
        got, got_mf = inspect_json([f"{base}/{mf}"], env)
        check(want is not None and got == want, f"inspect {base}/{mf} == local")
    finally:
        srv.shutdown()


def main():
    if not ICEDRUID or not BUILD:
        print("SKIP: run through ctest (ICEDRUID, ICD_BUILD_DIR)")
        return 77
    if not os.path.isdir(CORPUS):
        print(f"SKIP: corpus not found at {CORPUS}")
        return 77
    tmp = tempfile.mkdtemp(prefix="icd_s3_")
    try:
        skipped = s3rver_part(tmp)
        if skipped:
            print("s3rver part SKIPPED:", skipped)
        fake_part(tmp)
        http_part(tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"{len(failures)} failed")
    if failures:
        return 1
    return 77 if skipped else 0


if __name__ == "__main__":
    sys.exit(main())
