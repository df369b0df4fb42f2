"""Hive Metastore and AWS Glue catalogs end to end, against the loopback servers of this
folder (hive_server.py: Thrift binary get_table, framed and unframed; glue_server.py:
GetTable with every request's SigV4 signature recomputed from the test's key).

- Every signature the Glue server accepts is also recomputed with botocore (Debian
  python3-botocore), the AWS SDK's own signer.
- The servers themselves: a request signed independently of curl passes, an unsigned or
  wrongly signed one is refused (so the checks below mean something).
- `plan` and `read` through a hive catalog (unframed and framed) and a glue catalog give
  the same output as through the `local` catalog for four corpus tables (equality deletes,
  position deletes, both, none), and the servers saw the calls (get_table(ice, T); GetTable
  with X-Amz-Target, a signed Authorization and the configured CatalogId).
- `scan` and `tasks` with --catalog (a bare icebergCatalog + NS.TABLE, or a Druid input
  source file) equal `scan`/`tasks` of the table directory.
- Errors, each exit 1 with one line on stderr naming the problem: unknown table,
  non-Iceberg table, wrong secret, unknown key, missing credentials, a table the policy
  denies, a metastore that is down, one that never answers (timeout), a transport
  mismatch (unframed client, framed server), incomplete Kerberos settings; and a metastore
  that drops the first connection is retried (reconnect) and succeeds.
Tables are named by their original `location` (remapped to the corpus with --remap, like
the corpus oracles do), so the metadata file itself goes through FileIO's remapping.
"""
import json
import os
import re
import socket
import subprocess
import sys
import tempfile
import time
# two corpus tables record delete-file facts that are not the files' (see
# tests/corpus/test_scan_oracles.py SIZE_MISMATCH); this test is not about that
os.environ["ICEDRUID_SIZE_MISMATCH"] = "warn"

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "io"))
import botocheck  # noqa: E402

NO_BOTOCORE = botocheck.need_debian_modules("botocore")  # re-executes under Debian's python
import glue_server  # noqa: E402
import hive_server  # noqa: E402

ICEDRUID = os.environ.get("ICEDRUID", "build/icedruid")
SHARED = os.environ.get("ICD_SHARED", "../shared")
HC = os.path.join(SHARED, "corpus", "impala", "hadoop_catalog")
TABLES = ["iceberg_v2_delete_equality", "iceberg_v2_delete_positional",
          "iceberg_v2_delete_both_eq_and_pos", "iceberg_v2_no_deletes"]
ACCESS, SECRET, REGION, ACCOUNT = "AKIDGLUETEST", "glue-secret-XYZ", "eu-west-3", "123456789012"


def current_metadata(tdir):
    names = os.listdir(os.path.join(tdir, "metadata"))
    return max((int(m.group(1)), n) for n in names
               if (m := re.match(r"v(\d+)\.metadata\.json$", n)))[1]


def spec(table, catalog):
    return {"type": "index_parallel", "spec": {
        "dataSchema": {"dataSource": "t",
                       "timestampSpec": {"column": "no_such_col", "format": "auto",
                                         "missingValue": "2024-01-01T00:00:00Z"},
                       "dimensionsSpec": {"dimensions": []}},
        "ioConfig": {"type": "index_parallel", "inputFormat": {"type": "parquet"},
                     "inputSource": {"type": "iceberg", "tableName": table, "namespace": "ice",
                                     "icebergCatalog": catalog,
                                     "warehouseSource": {"type": "local"}}},
        "tuningConfig": {"type": "index_parallel"}}}


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def main():
    if not os.path.isdir(HC):
        print("skipped: corpus not found at " + HC)
        return 77
    failures = []

    def check(cond, what):
        print(("ok   " if cond else "FAIL ") + what)
        if not cond:
            failures.append(what)

    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}

    def run(*a, timeout=120):
        return subprocess.run([ICEDRUID, *a], capture_output=True, text=True, timeout=timeout,
                              env=env)

    # Tables: catalog entries name the original metadata location; --remap maps it home.
    tables, remap = {}, []
    for t in TABLES:
        tdir = os.path.join(HC, "ice", t)
        mname = current_metadata(tdir)
        with open(os.path.join(tdir, "metadata", mname)) as f:
            loc = json.load(f)["location"].rstrip("/")
        tables["ice/" + t] = {"metadata_location": loc + "/metadata/" + mname,
                              "table_type": "ICEBERG", "location": loc}
        remap += ["--remap", loc + "=" + tdir]
    tables["ice/hive_plain"] = {"table_type": None, "location": "/warehouse/ice/hive_plain"}
    tables["ice/other_format"] = {"table_type": "DELTA", "metadata_location": "/x",
                                  "location": "/x"}
    tables["ice/denied"] = dict(tables["ice/" + TABLES[0]])

    hive, hport = hive_server.start({"framed": False, "tables": tables})
    hivef, hfport = hive_server.start({"framed": True, "tables": tables})
    glue, gport = glue_server.start({"access": ACCESS, "secret": SECRET, "region": REGION,
                                     "catalog_id": ACCOUNT, "tables": tables,
                                     "denied": ["ice/denied"], "botocore": not NO_BOTOCORE})
    servers = [hive, hivef, glue]
    try:
        # ---- the servers check what they claim to check ---------------------------------
        body = json.dumps({"DatabaseName": "ice", "Name": TABLES[0]}).encode()
        st, js = glue_server.signed_request(gport, ACCESS, SECRET, REGION, body)
        check(st == 200 and js["Table"]["Parameters"]["table_type"] == "ICEBERG",
              "glue server: a request signed independently of curl is answered")
        st, js = glue_server.signed_request(gport, ACCESS, "not-the-secret", REGION, body)
        check(st == 403 and js["__type"] == "InvalidSignatureException",
              "glue server: a wrong signature is refused (403 InvalidSignatureException)")
        st, js = glue_server.signed_request(gport, ACCESS, SECRET, REGION, body, sign=False)
        check(st == 403 and js["__type"] == "AccessDeniedException",
              "glue server: a request without Authorization is refused (403 AccessDenied)")
        raw = hive_server.call_get_table(hport, "ice", TABLES[0])
        check(raw.startswith(b"\x80\x01\x00\x02\x00\x00\x00\x09get_table") and
              tables["ice/" + TABLES[0]]["metadata_location"].encode() in raw,
              "hive server: get_table answers a strict binary REPLY with metadata_location")

        hive_cat = {"type": "hive", "warehousePath": "/test-warehouse",
                    "catalogUri": "thrift://127.0.0.1:%d" % hport,
                    "catalogProperties": {"hive.metastore.client.socket.timeout": "20s"}}
        hivef_cat = {"type": "hive", "warehousePath": "/test-warehouse",
                     "catalogUri": "thrift://127.0.0.1:%d" % hfport,
                     "catalogProperties": {
                         "hive.metastore.thrift.framed.transport.enabled": "true"}}
        glue_props = {"warehouse": "s3://bucket/wh", "glue.id": ACCOUNT,
                      "glue.endpoint": "http://127.0.0.1:%d" % gport, "client.region": REGION,
                      "s3.access-key-id": ACCESS, "s3.secret-access-key": SECRET}
        glue_cat = {"type": "glue", "catalogProperties": glue_props}
        local_cat = {"type": "local", "warehousePath": HC}

        with tempfile.TemporaryDirectory() as tmp:
            def write(name, obj):
                p = os.path.join(tmp, name)
                with open(p, "w") as f:
                    json.dump(obj, f)
                return p

            # ---- plan/read through each catalog == local ------------------------------
            modes = set()
            for t in TABLES:
                local = write("local_%s.json" % t, spec(t, local_cat))
                pl, rl = run("plan", "--spec", local, *remap), run("read", "--spec", local, *remap)
                check(pl.returncode == 0 and rl.returncode == 0 and rl.stdout.count("\n") > 0,
                      "%s: local plan/read work (%d rows)" % (t, rl.stdout.count("\n")))
                modes.add(json.loads(pl.stdout or "{}").get("mode"))
                for name, cat in (("hive", hive_cat), ("hive-framed", hivef_cat),
                                  ("glue", glue_cat)):
                    p = write("%s_%s.json" % (name, t), spec(t, cat))
                    pr = run("plan", "--spec", p, *remap)
                    check(pr.returncode == 0 and pr.stdout == pl.stdout,
                          "%s: %s plan equals the local plan %s" % (t, name, pr.stderr.strip()))
                    rr = run("read", "--spec", p, *remap)
                    check(rr.returncode == 0 and rr.stdout == rl.stdout,
                          "%s: %s read equals the local read %s" % (t, name, rr.stderr.strip()))
            check(modes == {"v1", "v2"}, "the tables cover both plan modes: %s" % sorted(modes))
            calls = hive.stats["calls"]
            check(["get_table", "ice", TABLES[0]] in calls and
                  ["get_table", "ice", TABLES[3]] in hivef.stats["calls"],
                  "the metastores saw get_table(ice, T) (unframed and framed)")
            posts = [e for e in glue.log if e["status"] == 200 and e["body"]]
            check(posts and all(e["headers"].get("x-amz-target") == "AWSGlue.GetTable" and
                                e["headers"].get("content-type") ==
                                "application/x-amz-json-1.1" and
                                e["headers"].get("authorization", "").startswith(
                                    "AWS4-HMAC-SHA256") for e in posts),
                  "Glue calls carry X-Amz-Target, the JSON 1.1 content type and a SigV4 header")
            check(any(json.loads(e["body"]) == {"CatalogId": ACCOUNT, "DatabaseName": "ice",
                                                "Name": TABLES[1]} for e in posts),
                  "GetTable body: CatalogId (glue.id), DatabaseName, Name")

            # ---- scan / tasks with --catalog ---------------------------------------------
            t = TABLES[0]
            tdir = os.path.join(HC, "ice", t)
            direct = run("scan", tdir, *remap)
            direct_tasks = run("tasks", tdir, *remap)
            hc_file = write("hive_catalog.json", hive_cat)
            gc_file = write("glue_input_source.json",
                            spec(t, glue_cat)["spec"]["ioConfig"]["inputSource"])
            for what, args in (("hive catalog + ice.T", ["--catalog", hc_file, "ice." + t]),
                               ("glue input source file", ["--catalog", gc_file])):
                s = run("scan", *args, *remap)
                check(s.returncode == 0 and s.stdout == direct.stdout and s.stdout,
                      "scan --catalog (%s) equals scan of the directory %s" %
                      (what, s.stderr.strip()))
                k = run("tasks", *args, *remap)
                check(k.returncode == 0 and k.stdout == direct_tasks.stdout and k.stdout,
                      "tasks --catalog (%s) equals tasks of the directory %s" %
                      (what, k.stderr.strip()))

            # caseSensitive=false (Druid's catalog option) applies to scan --columns too
            col = next(iter(json.loads(direct.stdout.splitlines()[0])))
            exact = run("scan", "--catalog", hc_file, "ice." + t, "--columns", col, *remap)
            ci_file = write("hive_catalog_ci.json", dict(hive_cat, caseSensitive=False))
            folded = run("scan", "--catalog", ci_file, "ice." + t, "--columns", col.upper(),
                         *remap)
            check(exact.returncode == 0 and exact.stdout and folded.returncode == 0 and
                  folded.stdout == exact.stdout,
                  "caseSensitive=false: --columns %s reads column %s %s" %
                  (col.upper(), col, folded.stderr.strip()))
            strict = run("scan", "--catalog", hc_file, "ice." + t, "--columns", col.upper(),
                         *remap)
            check(strict.returncode == 1 and "not in the table schema" in strict.stderr,
                  "case-sensitive by default: --columns %s is refused" % col.upper())

            # ---- errors: exit 1, one line ---------------------------------------------------
            def expect_error(what, args, *needles, timeout=60, max_s=None):
                t0 = time.monotonic()
                r = run(*args, timeout=timeout)
                took = time.monotonic() - t0
                lines = r.stderr.strip().splitlines()
                ok = (r.returncode == 1 and len(lines) == 1 and not r.stdout and
                      all(n.lower() in r.stderr.lower() for n in needles) and
                      SECRET not in r.stderr and (max_s is None or took <= max_s))
                check(ok, "%s: exit %d in %.1fs: %s" % (what, r.returncode, took,
                                                         r.stderr.strip()))

            def hive_with(**kw):
                c = json.loads(json.dumps(hive_cat))
                c["catalogProperties"].update(kw.pop("props", {}))
                c.update(kw)
                return write("h%d.json" % len(os.listdir(tmp)), c)

            def glue_with(**props):
                c = json.loads(json.dumps(glue_cat))
                for k, v in props.items():
                    if v is None:
                        c["catalogProperties"].pop(k, None)
                    else:
                        c["catalogProperties"][k] = v
                return write("g%d.json" % len(os.listdir(tmp)), c)

            expect_error("hive: unknown table",
                         ["scan", "--catalog", hc_file, "ice.nope"],
                         "NoSuchObjectException", "ice.nope")
            expect_error("hive: a Hive table that is not Iceberg",
                         ["scan", "--catalog", hc_file, "ice.hive_plain"],
                         "not an Iceberg table", "ice.hive_plain")
            expect_error("hive: table_type DELTA",
                         ["tasks", "--catalog", hc_file, "ice.other_format"],
                         "not an Iceberg table", "DELTA")
            down = free_port()
            expect_error("hive: metastore down (2 attempts)",
                         ["scan", "--catalog",
                          hive_with(catalogUri="thrift://127.0.0.1:%d" % down,
                                    props={"hive.metastore.connect.retries": "1",
                                           "hive.metastore.client.connect.retry.delay": "100ms"}),
                          "ice." + t], "cannot connect", "refused", "2 attempts",
                         "127.0.0.1:%d" % down)
            silent, sport = hive_server.start({"framed": False, "tables": tables,
                                               "silent": True})
            servers.append(silent)
            expect_error("hive: metastore never answers (timeout)",
                         ["scan", "--catalog",
                          hive_with(catalogUri="thrift://127.0.0.1:%d" % sport,
                                    props={"hive.metastore.client.socket.timeout": "1s",
                                           "hive.metastore.connect.retries": "0"}),
                          "ice." + t], "no reply within 1000 ms", max_s=15)
            expect_error("hive: unframed client, framed server",
                         ["scan", "--catalog",
                          hive_with(catalogUri="thrift://127.0.0.1:%d" % hfport,
                                    props={"hive.metastore.client.socket.timeout": "3s",
                                           "hive.metastore.connect.retries": "0"}),
                          "ice." + t], "framed", max_s=20)
            before = hive.stats["connections"]
            expect_error("hive: SASL without a service principal",
                         ["scan", "--catalog",
                          hive_with(props={"hive.metastore.sasl.enabled": "true"}),
                          "ice." + t], "hive.metastore.kerberos.principal")
            expect_error("hive: a keytab without a principal (Druid's fields)",
                         ["plan", "--spec",
                          write("krb.json", spec(t, dict(hive_cat, catalogProperties={
                              "hive.metastore.sasl.enabled": "true",
                              "hive.metastore.kerberos.principal": "hive/_HOST@EXAMPLE.COM",
                              "keytab": "/etc/druid.keytab"})))],
                         "keytab is set but principal is not", "ice." + t)
            check(hive.stats["connections"] == before,
                  "incomplete Kerberos settings are refused before connecting")
            expect_error("hive: plan with an unknown table names it like Druid",
                         ["plan", "--spec", write("hnope.json", spec("nope", hive_cat))],
                         "Failed to load iceberg table with identifier [ice.nope]",
                         "NoSuchObjectException")
            flaky, fport = hive_server.start({"framed": False, "tables": tables,
                                              "drop_first": 1})
            servers.append(flaky)
            r = run("scan", "--catalog",
                    hive_with(catalogUri="thrift://127.0.0.1:%d" % fport,
                              props={"hive.metastore.client.connect.retry.delay": "50ms"}),
                    "ice." + t, *remap)
            check(r.returncode == 0 and r.stdout == direct.stdout and
                  flaky.stats["connections"] == 2,
                  "hive: a dropped connection is retried on a new one (%d connections) %s" %
                  (flaky.stats["connections"], r.stderr.strip()))
            r = run("scan", "--catalog",
                    hive_with(catalogUri="thrift://127.0.0.1:%d, thrift://127.0.0.1:%d" %
                              (free_port(), hport),
                              props={"hive.metastore.client.connect.retry.delay": "0"}),
                    "ice." + t, *remap)
            check(r.returncode == 0 and r.stdout == direct.stdout,
                  "hive: the next URI of a list is tried when the first is down " +
                  r.stderr.strip())

            expect_error("glue: unknown table",
                         ["scan", "--catalog", glue_with(), "ice.nope"],
                         "EntityNotFoundException", "ice.nope")
            expect_error("glue: unknown database",
                         ["scan", "--catalog", glue_with(), "nodb.t"],
                         "EntityNotFoundException", "Database nodb not found")
            expect_error("glue: a table that is not Iceberg",
                         ["scan", "--catalog", glue_with(), "ice.hive_plain"],
                         "not an Iceberg table")
            expect_error("glue: wrong secret key",
                         ["scan", "--catalog",
                          glue_with(**{"s3.secret-access-key": "wrong-secret"}), "ice." + t],
                         "403", "InvalidSignatureException")
            expect_error("glue: unknown access key",
                         ["scan", "--catalog", glue_with(**{"s3.access-key-id": "AKIDNOPE"}),
                          "ice." + t], "403", "UnrecognizedClientException")
            expect_error("glue: signed for another region",
                         ["scan", "--catalog", glue_with(**{"client.region": "us-west-2"}),
                          "ice." + t], "InvalidSignatureException")
            expect_error("glue: AccessDenied",
                         ["scan", "--catalog", glue_with(), "ice.denied"],
                         "AccessDeniedException")
            expect_error("glue: another account's catalog",
                         ["scan", "--catalog", glue_with(**{"glue.id": "999999999999"}),
                          "ice." + t], "AccessDeniedException")
            n_before = len(glue.log)
            expect_error("glue: no credentials at all",
                         ["scan", "--catalog",
                          glue_with(**{"s3.access-key-id": None, "s3.secret-access-key": None}),
                          "ice." + t], "no AWS credentials")
            check(len(glue.log) == n_before, "no unsigned request is sent")
            expect_error("glue: assume-role is refused",
                         ["plan", "--spec", write("ar.json", spec(t, {
                             "type": "glue", "catalogProperties": dict(
                                 glue_props, **{"client.assume-role.arn": "arn:aws:iam::1:role/r"})
                         }))], "client.assume-role.arn", "not supported")
            tglue, tgport = glue_server.start({"access": ACCESS, "secret": SECRET,
                                               "region": REGION, "catalog_id": ACCOUNT,
                                               "token": "session-token-123", "tables": tables})
            servers.append(tglue)
            r = run("scan", "--catalog",
                    glue_with(**{"glue.endpoint": "http://127.0.0.1:%d" % tgport,
                                 "s3.session-token": "session-token-123"}), "ice." + t, *remap)
            check(r.returncode == 0 and r.stdout == direct.stdout and
                  tglue.log and tglue.log[-1]["headers"].get("x-amz-security-token") ==
                  "session-token-123",
                  "glue: a session token is sent (x-amz-security-token, signed) " +
                  r.stderr.strip())
            expect_error("glue: session credentials without their token",
                         ["scan", "--catalog",
                          glue_with(**{"glue.endpoint": "http://127.0.0.1:%d" % tgport}),
                          "ice." + t], "UnrecognizedClientException")
            r = subprocess.run([ICEDRUID, "scan", "--catalog", write("genv.json", {
                "type": "glue", "catalogProperties": {"glue.endpoint": "http://127.0.0.1:%d" %
                                                      gport}}), "ice." + t, *remap],
                               capture_output=True, text=True, timeout=60,
                               env=dict(env, AWS_ACCESS_KEY_ID=ACCESS,
                                        AWS_SECRET_ACCESS_KEY=SECRET, AWS_REGION=REGION))
            check(r.returncode == 0 and r.stdout == direct.stdout,
                  "glue: credentials and region from AWS_* variables " + r.stderr.strip())
            if NO_BOTOCORE:
                print("note: botocore not installed, Glue signatures checked by s3util only")
            else:
                check(glue.boto and all(glue.boto),
                      "glue: botocore recomputed all %d accepted signatures" % len(glue.boto))
    finally:
        for s in servers:
            s.shutdown()
    print("%d failed" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
