"""The REST catalog client against tests/catalog/rest_server.py on loopback.

Starts the catalog (and, when installed, s3rver holding the table's files so that the
vended credentials are used for a real read), runs the C test test_rest with the
catalog's address, then checks from the server's own request log what the client sent:
scope "catalog" in every token request, header.X-Tenant on every catalog call,
X-Iceberg-Access-Delegation on load-table, the two-level namespace as db%1Fsales, and
never a client secret in a URL; a 503 answered once (load-table, token endpoint) was
retried; a token the server issued, used after its lifetime, is refused (checked in C).
The prefix comes from the server's config overrides (the client sets none).
"""
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import shutil
import urllib.parse
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "io"))
import rest_server  # noqa: E402
import s3util  # noqa: E402

SHARED = os.environ.get("ICD_SHARED", "")
BUILD = os.environ.get("ICD_BUILD_DIR", "")
CORPUS = os.path.join(SHARED, "corpus")
ORDERS = "impala/hadoop_catalog/ice/iceberg_v2_delete_equality"
DV = "impala/iceberg_v3/iceberg_v3_deletion_vectors"


def current_metadata(table_dir):
    names = os.listdir(os.path.join(table_dir, "metadata"))
    vs = [(int(m.group(1)), n) for n in names
          if (m := re.match(r"v(\d+)\.metadata\.json$", n))]
    return max(vs)[1]


def main():
    if not BUILD:
        print("SKIP: run through ctest (ICD_BUILD_DIR)")
        return 77
    if not os.path.isdir(CORPUS):
        print(f"SKIP: corpus not found at {CORPUS}")
        return 77
    failures = []

    def check(cond, what):
        print(("ok: " if cond else "FAILED: ") + what)
        if not cond:
            failures.append(what)

    tmp = tempfile.mkdtemp(prefix="icd_rest_")
    s3proc, s3port = s3util.start_s3rver(os.path.join(tmp, "s3"), ["warehouse"])
    orders_dir = os.path.join(CORPUS, ORDERS)
    mname = current_metadata(orders_dir)
    s3file = None
    if s3proc is None:
        print("note: no s3rver:", s3port)
        s3port = 9  # vended endpoint that is never contacted
    else:
        keys = s3util.S3Client(s3port, "S3RVER", "S3RVER").upload_tree(
            "warehouse", "t/orders", orders_dir)
        s3file = "s3://warehouse/" + next(k for k in keys if k.endswith(".parquet"))
    vended = {"s3.access-key-id": "S3RVER", "s3.secret-access-key": "S3RVER",
              "s3.endpoint": f"http://127.0.0.1:{s3port}", "s3.path-style-access": "true",
              "client.region": "us-east-1"}
    dv_dir = os.path.join(CORPUS, DV)
    cfg = {
        "warehouse": "wh", "prefix": "ws1",
        "clients": {"client1": "s3cret-client-XYZ"},
        "static_tokens": ["static-tok-ABC"],
        "token_ttl": 2,
        "defaults": {"a": "default", "b": "default", "c": "default-only"},
        "overrides": {"b": "override", "prefix": "ws1"},
        "required_headers": {"X-Tenant": "acme"},
        "tables": {
            "db\x1fsales/orders": {
                "metadata-location": f"s3://warehouse/t/orders/metadata/{mname}",
                "metadata-file": os.path.join(orders_dir, "metadata", mname),
                "config": vended},
            "a.b/t": {
                "metadata-location": "s3://warehouse/t/dv/metadata/" + current_metadata(dv_dir),
                "metadata-file": os.path.join(dv_dir, "metadata", current_metadata(dv_dir))},
        },
    }
    srv, port = rest_server.start(cfg)
    uri = f"http://127.0.0.1:{port}"
    try:
        env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
        env.update(ICD_REST_TEST_URI=uri, ICD_REST_TEST_WAREHOUSE="wh",
                   ICD_REST_TEST_CLIENT="client1:s3cret-client-XYZ",
                   ICD_REST_TEST_STATIC="static-tok-ABC", ICD_REST_TEST_TTL="2",
                   ICD_REST_TEST_MD_LOCAL=os.path.join(orders_dir, "metadata", mname),
                   ICD_REST_TEST_MD_LOCATION=f"s3://warehouse/t/orders/metadata/{mname}")
        if s3file:
            env["ICD_REST_TEST_S3_FILE"] = s3file
        # a token the server issued, used after its lifetime (token_ttl 2 s)
        req = urllib.request.Request(
            uri + "/v1/oauth/tokens", method="POST",
            data=urllib.parse.urlencode({"grant_type": "client_credentials",
                                         "client_id": "client1",
                                         "client_secret": "s3cret-client-XYZ",
                                         "scope": "catalog"}).encode(),
            headers={"Content-Type": "application/x-www-form-urlencoded"})
        env["ICD_REST_TEST_EXPIRED"] = json.load(urllib.request.urlopen(req))["access_token"]
        time.sleep(3)
        r = subprocess.run([os.path.join(BUILD, "tests", "test_rest")], env=env,
                           capture_output=True, text=True, timeout=300)
        print(r.stdout + r.stderr)
        check(r.returncode == 0 and "skipped" not in r.stdout, "test_rest against rest_server.py")

        stats = json.load(urllib.request.urlopen(uri + "/test/stats"))
        reqs = stats["requests"]
        check(stats["token_requests"] >= 4 and all(s == "catalog" for s in stats["scopes"]),
              f"{stats['token_requests']} token requests, all with scope=catalog")
        catalog_calls = [q for q in reqs if q["path"].startswith("/v1/")
                         and not q["path"].startswith("/v1/oauth")]
        with_tenant = [q for q in catalog_calls if q["headers"].get("x-tenant") == "acme"]
        check(len(with_tenant) >= len(catalog_calls) - 1,  # one call leaves the header out
              "header.X-Tenant forwarded on catalog calls")
        loads = [q for q in catalog_calls if "/tables/" in q["path"]]
        check(loads and all(q["headers"].get("x-iceberg-access-delegation") ==
                            "vended-credentials" for q in loads),
              "load-table asks for vended credentials")
        check(any(q["path"] == "/v1/ws1/namespaces/db%1Fsales/tables/orders" for q in loads),
              "two-level namespace sent as db%1Fsales under the configured prefix")
        check(any(q["path"] == "/v1/ws1/namespaces/a.b/tables/t" for q in loads),
              "a dotted one-level namespace stays one level")
        check(all("s3cret" not in q["path"] and "tok-ABC" not in q["path"] for q in reqs),
              "no secret or token in any URL")
        check(any(q["path"] == "/v1/config?warehouse=wh" for q in reqs),
              "config asked with ?warehouse=wh")
        served = stats["failures_served"]
        load = "/v1/ws1/namespaces/db%1Fsales/tables/orders"
        check([load, 503] in served and ["/v1/oauth/tokens", 503] in served,
              f"503 answered once for load-table and for the token endpoint: {served}")
        paths = [q["path"] for q in reqs]
        retried = [i for i in range(len(paths) - 1)
                   if paths[i] == load and paths[i + 1] == load]
        check(len(retried) >= 1, "load-table sent again right after its 503")
        check(not any(q["path"].startswith("/v1/") and "expired" in q["path"] for q in reqs),
              "expired token never in a URL")
    finally:
        srv.shutdown()
        if s3proc is not None:
            s3proc.stdin.close()
            s3proc.kill()
            s3proc.wait()
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"{len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
