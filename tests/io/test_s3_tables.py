"""`scan`, `plan` and `read` over s3:// give exactly the local results.

s3rver (npm @20minutes/s3rver, verifies SigV4) on 127.0.0.1 holds seven corpus tables
under s3://warehouse/wh/ice/<table>/ (uploaded with this suite's own SigV4 signer,
s3util.py): equality deletes, equality + position deletes, position deletes, deletion
vectors (v3), partitioned position deletes, icebird's merge-on-read table and a table
without deletes (the v1 path). A local warehouse TMP/wh/ice/<table> (symlinks to the
corpus) is the reference.

The corpus metadata names the tables' original locations (/test-warehouse/...,
hdfs://..., /tmp/...), so each run maps that location L: locally `--remap L=TMP/wh/ice/T`,
over S3 `--remap L=s3://warehouse/wh/ice/T` (a remote remap target).

For every table:
  * `scan TABLE_DIR` (s3:// table directory: version hint, listing) prints the same
    bytes as the local scan;
  * `plan --spec` with a `local` catalog whose warehousePath is s3://warehouse/wh and a
    warehouseSource {"type": "s3"} equals the plan of the local spec (warehousePath
    TMP/wh, warehouseSource {"type": "local"}) after this normalisation, and nothing
    else: each v2 split's `warehouseSource` is checked to be the spec's own and then
    dropped; a v1 `inputSource` must be {"type": "s3", "uris": [...]} whose uris, with
    the prefix s3://warehouse/wh/ replaced by TMP/wh/, are the local source's `files`;
  * `read --spec` prints the same bytes as the local read;
  * the same plan and read through a `rest` catalog (tests/catalog/rest_server.py,
    OAuth2) whose metadata-location is on s3:// and which vends s3rver's keys and
    endpoint in the table config: the process has no AWS_* variables, so the data can
    only be read with the vended credentials.
icedruid reaches s3rver through a forwarding proxy (s3util.start_boto_proxy) that
recomputes every signature s3rver accepts with botocore, the AWS SDK's signer.
Wrong keys (a wrong secret in the environment for scan/plan/read; a wrong vended secret
through REST) give exit 1 and one line naming the HTTP 403 auth failure, never the
secret.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
# two corpus tables record delete-file facts that are not the files' (see
# tests/corpus/test_scan_oracles.py SIZE_MISMATCH); this test is not about that
os.environ["ICEDRUID_SIZE_MISMATCH"] = "warn"

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "catalog"))
import rest_server  # noqa: E402
import s3util  # noqa: E402
import botocheck  # noqa: E402

NO_BOTOCORE = botocheck.need_debian_modules("botocore")

ICEDRUID = os.environ.get("ICEDRUID")
SHARED = os.environ.get("ICD_SHARED", "")
CORPUS = os.path.join(SHARED, "corpus")

TABLES = {
    "iceberg_v2_delete_equality": "impala/hadoop_catalog/ice/iceberg_v2_delete_equality",
    "iceberg_v2_delete_both_eq_and_pos":
        "impala/hadoop_catalog/ice/iceberg_v2_delete_both_eq_and_pos",
    "iceberg_v2_delete_positional": "impala/hadoop_catalog/ice/iceberg_v2_delete_positional",
    "iceberg_v3_deletion_vectors": "impala/iceberg_v3/iceberg_v3_deletion_vectors",
    "iceberg_v2_partitioned_position_deletes":
        "impala/hadoop_catalog/ice/iceberg_v2_partitioned_position_deletes",
    "a_partitioned_mor": "icebird/a_partitioned_mor/table",
    "iceberg_v2_no_deletes": "impala/hadoop_catalog/ice/iceberg_v2_no_deletes",
}
NS = "ice"
BUCKET = "warehouse"
S3_WH = f"s3://{BUCKET}/wh"
SECRET_BAD = "not-the-secret-QZ7"

failures = []
checks = 0


def check(cond, what):
    global checks
    checks += 1
    print(("ok: " if cond else "FAILED: ") + what)
    if not cond:
        failures.append(what)


def run(args, env):
    return subprocess.run([ICEDRUID] + args, env=env, capture_output=True, text=True,
                          timeout=600)


def clean_env(**extra):
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    env.pop("ICEDRUID_S3_PATH_STYLE", None)
    env.update(extra)
    return env


def current_metadata(table_dir):
    names = os.listdir(os.path.join(table_dir, "metadata"))
    return max((int(m.group(1)), n) for n in names
               if (m := re.match(r"v(\d+)\.metadata\.json$", n)))[1]


def table_location(table_dir):
    with open(os.path.join(table_dir, "metadata", current_metadata(table_dir))) as f:
        return json.load(f)["location"].rstrip("/")


def write_spec(path, table, catalog, wsource):
    spec = {"type": "index_parallel", "spec": {
        "dataSchema": {"dataSource": table,
                       "timestampSpec": {"column": "no_such_column",
                                         "missingValue": "2001-02-03T04:05:06Z"},
                       "dimensionsSpec": {"dimensions": []},
                       "granularitySpec": {"segmentGranularity": "day", "rollup": False}},
        "ioConfig": {"type": "index_parallel", "inputFormat": {"type": "parquet"},
                     "inputSource": {"type": "iceberg", "tableName": table, "namespace": NS,
                                     "icebergCatalog": catalog,
                                     "warehouseSource": wsource}},
        "tuningConfig": {"type": "index_parallel"}}}
    with open(path, "w") as f:
        json.dump(spec, f)
    return path


def one_auth_line(r, what):
    err = r.stderr
    check(r.returncode == 1 and err.count("\n") == 1 and "HTTP 403" in err
          and ("SignatureDoesNotMatch" in err or "InvalidAccessKeyId" in err)
          and SECRET_BAD not in err and "S3RVER" not in err,
          f"{what}: exit {r.returncode}, one auth line without the secret: {err.strip()}")


def normalise_plan(plan, wsource, local_wh, table):
    """The normalisation described in the module comment; returns the plan or None."""
    if plan.get("mode") == "v1":
        src = plan.get("inputSource", {})
        if wsource["type"] == "s3":
            if set(src) != {"type", "uris"} or src["type"] != "s3":
                check(False, f"{table}: v1 s3 inputSource {src}")
                return None
            files = []
            for u in src["uris"]:
                if not u.startswith(S3_WH + "/"):
                    check(False, f"{table}: v1 uri {u} outside {S3_WH}")
                    return None
                files.append(local_wh + u[len(S3_WH):])
            plan["inputSource"] = {"type": "local", "files": files}
        return plan
    common = plan.get("splitCommon")
    if common is not None:
        if common.get("warehouseSource") != wsource:
            check(False, f"{table}: split warehouseSource {common.get('warehouseSource')}")
            return None
        del common["warehouseSource"]
    return plan


def main():
    if not ICEDRUID:
        print("SKIP: run through ctest (ICEDRUID)")
        return 77
    if not os.path.isdir(CORPUS):
        print(f"SKIP: corpus not found at {CORPUS}")
        return 77
    tmp = tempfile.mkdtemp(prefix="icd_s3t_")
    proc, port = s3util.start_s3rver(os.path.join(tmp, "s3rver"), [BUCKET])
    if proc is None:
        print("SKIP:", port)
        shutil.rmtree(tmp, ignore_errors=True)
        return 77
    srv = None
    try:
        srv = body(tmp, port)
    finally:
        if srv is not None:
            srv.shutdown()
        proc.stdin.close()
        proc.kill()
        proc.wait()
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"{checks} checks, {len(failures)} failed")
    return 1 if failures else 0


def body(tmp, port):
    client = s3util.S3Client(port, "S3RVER", "S3RVER")
    local_wh = os.path.join(tmp, "wh")
    os.makedirs(os.path.join(local_wh, NS))
    # icedruid talks to s3rver through a proxy that recomputes every accepted signature
    # with botocore (uploads go straight to s3rver)
    proxy, pport = s3util.start_boto_proxy(port, "S3RVER")
    endpoint = f"http://127.0.0.1:{pport}"
    nfiles = 0
    for name, rel in TABLES.items():
        src = os.path.join(CORPUS, rel)
        os.symlink(src, os.path.join(local_wh, NS, name))
        nfiles += len(client.upload_tree(BUCKET, f"wh/{NS}/{name}", src))
    print(f"uploaded {nfiles} files of {len(TABLES)} tables to s3rver on port {port}")

    s3env = clean_env(AWS_ACCESS_KEY_ID="S3RVER", AWS_SECRET_ACCESS_KEY="S3RVER",
                      AWS_ENDPOINT_URL=endpoint, AWS_REGION="us-east-1")
    badenv = dict(s3env, AWS_SECRET_ACCESS_KEY=SECRET_BAD)
    localenv = clean_env()

    # The REST catalog: metadata-location on s3://, vended credentials + endpoint.
    vended = {"s3.access-key-id": "S3RVER", "s3.secret-access-key": "S3RVER",
              "s3.endpoint": endpoint, "s3.path-style-access": "true",
              "client.region": "us-east-1"}
    tables = {}
    for name, rel in TABLES.items():
        src = os.path.join(CORPUS, rel)
        m = current_metadata(src)
        tables[f"{NS}/{name}"] = {"metadata-location": f"{S3_WH}/{NS}/{name}/metadata/{m}",
                                  "metadata-file": os.path.join(src, "metadata", m),
                                  "config": vended}
    first = next(iter(TABLES))
    tables[f"{NS}/badkeys"] = dict(tables[f"{NS}/{first}"],
                                   config=dict(vended, **{"s3.secret-access-key": SECRET_BAD}))
    srv, rport = rest_server.start({"warehouse": "wh", "clients": {"druid": "s3cret-cl"},
                                    "token_ttl": 600, "overrides": {"prefix": "px"},
                                    "prefix": "px", "tables": tables})
    rest_catalog = {"type": "rest", "catalogUri": f"http://127.0.0.1:{rport}",
                    "catalogProperties": {"warehouse": "wh", "credential": "druid:s3cret-cl"}}

    v2_tables = 0
    for name, rel in TABLES.items():
        src = os.path.join(CORPUS, rel)
        loc = table_location(src)
        lremap = ["--remap", f"{loc}={local_wh}/{NS}/{name}"]
        sremap = ["--remap", f"{loc}={S3_WH}/{NS}/{name}"]

        # scan
        want = run(["scan", os.path.join(local_wh, NS, name), "--threads", "1"] + lremap,
                   localenv)
        got = run(["scan", f"{S3_WH}/{NS}/{name}", "--threads", "1"] + sremap, s3env)
        nrows = want.stdout.count("\n")
        check(want.returncode == 0 and got.returncode == 0 and got.stdout == want.stdout,
              f"{name}: scan over s3:// == local ({nrows} rows){got.stderr.strip()}")

        # plan and read with a local catalog
        lspec = write_spec(os.path.join(tmp, f"{name}.local.json"), name,
                           {"type": "local", "warehousePath": local_wh}, {"type": "local"})
        sspec = write_spec(os.path.join(tmp, f"{name}.s3.json"), name,
                           {"type": "local", "warehousePath": S3_WH}, {"type": "s3"})
        rspec = write_spec(os.path.join(tmp, f"{name}.rest.json"), name, rest_catalog,
                           {"type": "s3"})
        lp = run(["plan", "--spec", lspec] + lremap, localenv)
        sp = run(["plan", "--spec", sspec] + sremap, s3env)
        rp = run(["plan", "--spec", rspec] + sremap, clean_env())
        check(lp.returncode == 0 and sp.returncode == 0 and rp.returncode == 0,
              f"{name}: plan local/s3/rest exit {lp.returncode}/{sp.returncode}/"
              f"{rp.returncode} {lp.stderr.strip()} {sp.stderr.strip()} {rp.stderr.strip()}")
        if lp.returncode == 0 and sp.returncode == 0 and rp.returncode == 0:
            lplan = json.loads(lp.stdout)
            v2_tables += lplan["mode"] == "v2"
            want_plan = normalise_plan(lplan, {"type": "local"}, local_wh, name)
            s_plan = normalise_plan(json.loads(sp.stdout), {"type": "s3"}, local_wh, name)
            r_plan = normalise_plan(json.loads(rp.stdout), {"type": "s3"}, local_wh, name)
            check(want_plan is not None and s_plan == want_plan,
                  f"{name}: plan ({lplan['mode']}, {lplan['dataFiles']} data files, "
                  f"{lplan['deleteFiles']} delete files) over s3:// == local")
            check(want_plan is not None and r_plan == want_plan,
                  f"{name}: plan through the REST catalog (vended credentials) == local")
        lr = run(["read", "--spec", lspec, "--threads", "1"] + lremap, localenv)
        sr = run(["read", "--spec", sspec, "--threads", "1"] + sremap, s3env)
        rr = run(["read", "--spec", rspec, "--threads", "1"] + sremap, clean_env())
        n = lr.stdout.count("\n")
        check(lr.returncode == 0 and sr.returncode == 0 and sr.stdout == lr.stdout and n > 0,
              f"{name}: read over s3:// == local ({n} rows) {sr.stderr.strip()}")
        check(rr.returncode == 0 and rr.stdout == lr.stdout,
              f"{name}: read through the REST catalog == local {rr.stderr.strip()}")

        if name == first:
            one_auth_line(run(["scan", f"{S3_WH}/{NS}/{name}"] + sremap, badenv), "scan")
            one_auth_line(run(["plan", "--spec", sspec] + sremap, badenv), "plan")
            one_auth_line(run(["read", "--spec", sspec] + sremap, badenv), "read")
            bspec = write_spec(os.path.join(tmp, "badkeys.rest.json"), "badkeys",
                               rest_catalog, {"type": "s3"})
            one_auth_line(run(["plan", "--spec", bspec] + sremap, clean_env()),
                          "plan, REST vending a wrong secret")
            one_auth_line(run(["read", "--spec", bspec] + sremap, clean_env()),
                          "read, REST vending a wrong secret")
    check(v2_tables >= 6, f"{v2_tables} tables planned as v2 (with deletes)")
    if NO_BOTOCORE:
        print("note: botocore not installed; s3rver's own verification only")
    else:
        check(len(proxy.boto) > 50 and all(proxy.boto),
              f"botocore recomputed all {len(proxy.boto)} signatures s3rver accepted")
    proxy.shutdown()
    return srv


if __name__ == "__main__":
    sys.exit(main())
