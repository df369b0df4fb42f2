"""`icedruid stage --to s3://...` against s3rver (npm @20minutes/s3rver, which checks
SigV4 signatures), for a table with deletes (icebird's a_partitioned_mor):

  - every staged object is byte-identical to the file `stage` writes to a local
    directory (same content-addressed names), with --part-size 4096 so that the larger
    files go up as multipart uploads (CreateMultipartUpload / UploadPart /
    CompleteMultipartUpload) and the small ones as one PUT;
  - the printed spec's s3 source lists those s3:// URIs;
  - an upload that fails at part 2 (ICEDRUID_TEST_S3_FAIL_AT_PART=2, as a dropped
    connection would) exits 1 with one line and leaves no object
    visible (the upload is aborted: not observable on s3rver, which does not implement
    AbortMultipartUpload); rerunning without the fault publishes every object;
  - a rerun writes nothing (HEAD finds every object);
  - --gc removes a stale object of this table's prefix (DELETE) and keeps the needed ones.
Skips (77) when the corpus or s3rver is absent."""
import json
import os
import shutil
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "io"))
import s3util  # noqa: E402
import stage_check as sc  # noqa: E402

SHARED = os.environ.get("ICD_SHARED", "../shared")
TABLE = os.path.join(SHARED, "corpus", "icebird", "a_partitioned_mor", "table")
BUCKET = "stage"

failures = []
checks = 0


def check(cond, msg):
    global checks
    checks += 1
    print(("ok: " if cond else "FAIL: ") + msg)
    if not cond:
        failures.append(msg)


def objects(data_dir, prefix):
    """key -> bytes of the objects s3rver stored under BUCKET/prefix (its on-disk layout:
    DIR/BUCKET/KEY._S3rver_object)."""
    out = {}
    root = os.path.join(data_dir, BUCKET)
    for d, _, files in os.walk(root):
        for f in files:
            if f.endswith("._S3rver_object"):
                key = os.path.relpath(os.path.join(d, f), root)[: -len("._S3rver_object")]
                if key.startswith(prefix + "/"):
                    with open(os.path.join(d, f), "rb") as fh:
                        out[key[len(prefix) + 1:]] = fh.read()
    return out


def main():
    if not os.path.isdir(TABLE):
        print("skip: corpus table not found:", TABLE)
        return 77
    tmp = tempfile.mkdtemp(prefix="icd-test-stage-s3-")
    data_dir = os.path.join(tmp, "s3rver")
    proc, port = s3util.start_s3rver(data_dir, [BUCKET])
    if proc is None:
        print("skip:", port)
        shutil.rmtree(tmp, ignore_errors=True)
        return 77
    try:
        env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
        env.update(AWS_ACCESS_KEY_ID="S3RVER", AWS_SECRET_ACCESS_KEY="S3RVER",
                   AWS_ENDPOINT_URL="http://127.0.0.1:%d" % port, AWS_REGION="us-east-1")
        wh = sc.link_table(tmp, TABLE, "mor")
        rm = sc.remaps(TABLE)
        local_spec = sc.write_spec(tmp, wh, "mor")
        _, lsum, _ = sc.stage(local_spec, os.path.join(tmp, "local"), rm)
        local = {n: open(os.path.join(tmp, "local", n), "rb").read()
                 for n in os.listdir(os.path.join(tmp, "local"))}
        big = [n for n, b in local.items() if len(b) > 4096]
        check(len(local) >= 2 and big, "reference: %d staged files, %d over one 4 KiB part" % (
            len(local), len(big)))

        s3_spec = os.path.join(tmp, "s3.spec.json")
        with open(local_spec) as fh:
            doc = json.load(fh)
        doc["spec"]["ioConfig"]["inputSource"]["warehouseSource"] = {"type": "s3"}
        with open(s3_spec, "w") as fh:
            json.dump(doc, fh)

        # an upload that fails at part 2: nothing visible, nothing stored
        fenv = dict(env, ICEDRUID_TEST_S3_FAIL_AT_PART="2")
        _, _, r = sc.stage(s3_spec, "s3://%s/p" % BUCKET, rm, ["--part-size", "4096"], env=fenv, ok=False)
        check(r.returncode == 1 and len(r.stderr.strip().splitlines()) == 1 and "part 2" in r.stderr,
              "a failed part: exit 1, one line: " + r.stderr.strip()[:200])
        left = objects(data_dir, "p")
        check(not any(n in left for n in big), "no partial object after the failed multipart upload")
        # (icedruid then sends AbortMultipartUpload; s3rver 4.0.4 does not implement it and
        # keeps the parts in its upload area, so that part is not observable here)

        # the retry publishes everything, identical to the local files
        out, summ, r = sc.stage(s3_spec, "s3://%s/p" % BUCKET, rm, ["--part-size", "4096"], env=env)
        got = objects(data_dir, "p")
        check(set(got) == set(local) and all(got[n] == local[n] for n in local),
              "retry: every staged object equals the local file (%d objects)" % len(got))
        uris = out["spec"]["ioConfig"]["inputSource"]["uris"]
        check(sorted(u for u in uris if u.startswith("s3://")) ==
              sorted("s3://%s/p/%s" % (BUCKET, n) for n in local),
              "the spec's s3 source lists the staged objects")
        check(summ["stagedFiles"] == lsum["stagedFiles"], "same number of staged files as local")
        _, again, _ = sc.stage(s3_spec, "s3://%s/p" % BUCKET, rm, ["--part-size", "4096"], env=env)
        check(again["writtenFiles"] == 0, "rerun on S3 writes nothing")

        # gc deletes a stale object with this table's prefix
        name = sorted(local)[0]
        stale = name[: len("icd-12345678-")] + "0" * 32 + ".parquet"
        s3util.S3Client(port, "S3RVER", "S3RVER").put(BUCKET, "p/" + stale, b"stale")
        md = sc.current_metadata(TABLE)
        first = min(md["snapshots"], key=lambda s: s["sequence-number"])["snapshot-id"]
        r = sc.run(["stage", "--spec", s3_spec, "--to", "s3://%s/p" % BUCKET, "--gc", str(first)] + rm,
                   env=env)
        got = objects(data_dir, "p")
        check(stale not in got and set(got) == set(local), "gc on S3 removed only the stale object")
    finally:
        proc.stdin.close()
        proc.wait(timeout=10)
        shutil.rmtree(tmp, ignore_errors=True)
    print("%d checks, %d failed" % (checks, len(failures)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
