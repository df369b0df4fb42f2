"""Druid specs with a `rest` icebergCatalog (catalogUri + catalogProperties) against the
test REST catalog server (tests/catalog/rest_server.py, OAuth2 client credentials and a
required header) on loopback: `icedruid plan` and `read` load the table through the
catalog and give the same plan and rows as the same table through a `local` catalog;
a wrong credential or an unknown table is a clear error naming the table."""
import json
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "catalog"))
import rest_server  # noqa: E402

ICEDRUID = os.environ.get("ICEDRUID", "build/icedruid")
SHARED = os.environ.get("ICD_SHARED", "../shared")
HC = os.path.join(SHARED, "corpus", "impala", "hadoop_catalog")
TABLE = "iceberg_v2_delete_pos_and_multi_eq_ids"


def current_metadata(tdir):
    names = os.listdir(os.path.join(tdir, "metadata"))
    return max((int(m.group(1)), n) for n in names
               if (m := re.match(r"v(\d+)\.metadata\.json$", n)))[1]


def spec(catalog):
    return {"type": "index_parallel", "spec": {
        "dataSchema": {"dataSource": "t", "timestampSpec": {"column": "d", "format": "auto"},
                       "dimensionsSpec": {"dimensions": []}},
        "ioConfig": {"type": "index_parallel", "inputFormat": {"type": "parquet"},
                     "inputSource": {"type": "iceberg", "tableName": TABLE, "namespace": "ice",
                                     "icebergCatalog": catalog,
                                     "warehouseSource": {"type": "local"}}},
        "tuningConfig": {"type": "index_parallel"}}}


def main():
    tdir = os.path.join(HC, "ice", TABLE)
    if not os.path.isdir(tdir):
        print("skipped: corpus not found")
        return 77
    failures = []

    def check(cond, what):
        print(("ok   " if cond else "FAIL ") + what)
        if not cond:
            failures.append(what)

    mname = current_metadata(tdir)
    mfile = os.path.join(tdir, "metadata", mname)
    with open(mfile) as f:
        loc = json.load(f)["location"]
    cfg = {"warehouse": "wh", "prefix": "p1", "clients": {"druid": "s3cret"},
           "token_ttl": 60, "defaults": {}, "overrides": {"prefix": "p1"},
           "required_headers": {"X-Tenant": "acme"},
           "tables": {"ice/" + TABLE: {"metadata-location": loc + "/metadata/" + mname,
                                       "metadata-file": mfile, "config": {}}}}
    srv, port = rest_server.start(cfg)
    remap = ["--remap", loc + "=" + tdir]
    with tempfile.TemporaryDirectory() as tmp:
        def write(name, catalog):
            p = os.path.join(tmp, name)
            with open(p, "w") as f:
                json.dump(spec(catalog), f)
            return p

        rest = write("rest.json", {"type": "rest", "catalogUri": "http://127.0.0.1:%d" % port,
                                   "catalogProperties": {"warehouse": "wh",
                                                         "credential": "druid:s3cret",
                                                         "header.X-Tenant": "acme"}})
        local = write("local.json", {"type": "local", "warehousePath": HC})

        def run(*a):
            return subprocess.run([ICEDRUID, *a], capture_output=True, text=True, timeout=120)

        pr, pl = run("plan", "--spec", rest, *remap), run("plan", "--spec", local, *remap)
        check(pr.returncode == 0, "plan through the REST catalog: " + pr.stderr.strip())
        check(pr.stdout == pl.stdout and json.loads(pr.stdout or "{}").get("mode") == "v2",
              "the REST plan equals the local plan (v2)")
        rr, rl = run("read", "--spec", rest, *remap), run("read", "--spec", local, *remap)
        check(rr.returncode == 0 and rr.stdout == rl.stdout and rr.stdout.count("\n") > 0,
              "read through the REST catalog equals the local read")
        bad = write("bad.json", {"type": "rest", "catalogUri": "http://127.0.0.1:%d" % port,
                                 "catalogProperties": {"warehouse": "wh",
                                                       "credential": "druid:wrong",
                                                       "header.X-Tenant": "acme"}})
        r = run("plan", "--spec", bad, *remap)
        check(r.returncode == 1 and "ice." + TABLE in r.stderr and "wrong" not in r.stderr,
              "a wrong credential fails, naming the table, without the secret: " +
              r.stderr.strip())
        sp = spec({"type": "rest", "catalogUri": "http://127.0.0.1:%d" % port,
                   "catalogProperties": {"warehouse": "wh", "credential": "druid:s3cret",
                                         "header.X-Tenant": "acme"}})
        sp["spec"]["ioConfig"]["inputSource"]["tableName"] = "nope"
        p = os.path.join(tmp, "nope.json")
        with open(p, "w") as f:
            json.dump(sp, f)
        r = run("plan", "--spec", p, *remap)
        check(r.returncode == 1 and "ice.nope" in r.stderr, "an unknown table: " +
              r.stderr.strip())
    srv.shutdown()
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
