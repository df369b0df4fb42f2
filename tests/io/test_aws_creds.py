"""The AWS default credential chain (src/io/aws_creds.c) against loopback servers speaking
STS, IMDSv2, the ECS container endpoint and S3 (aws_server.py), every accepted SigV4
signature (S3 and STS AssumeRole) recomputed by this suite's own signer and by botocore.

A corpus table with equality deletes is copied into the server's bucket; `scan` of the
s3:// table directory must print exactly the local scan for each source of the chain:
  env static keys; web identity (token file + AWS_ROLE_ARN -> AssumeRoleWithWebIdentity);
  profile with static keys (credentials file); profile role_arn + source_profile (STS
  AssumeRole signed with the source profile's keys); credential_process; ECS full URI
  with an authorization token file; IMDSv2 (session token required, region from IMDS).
The server asserts which source issued the keys each scan used (no other path could have
given working keys: issued keys are new each time).
Refresh: credentials that live 4 s and an S3 server that answers slowly: one `scan`
(2 threads) outlives several lifetimes, so it must fetch new credentials mid-run; expired
keys are refused by the server (400 ExpiredToken), so success means refresh happened
before expiry; the same for ECS and credential_process.
Errors (one stderr line each, exit 1): a wrong web identity token (STS's code quoted), a
missing profile, a failing credential_process, an ECS URI over plain http to a non-local
host. No secret (keys, session tokens, the web identity and ECS tokens) appears in any
stdout/stderr of any run, including `scan --stats`.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import botocheck  # noqa: E402

why = botocheck.need_debian_modules("botocore")
if why:
    print("skipped: " + why)
    sys.exit(77)

import aws_server  # noqa: E402

sys.path.insert(0, os.path.join(HERE, "..", "catalog"))
import glue_server  # noqa: E402
import rest_server  # noqa: E402

ICEDRUID = os.environ.get("ICEDRUID", "build/icedruid")
SHARED = os.environ.get("ICD_SHARED", "../shared")
TABLE = os.path.join(SHARED, "corpus", "impala", "hadoop_catalog", "ice",
                     "iceberg_v2_delete_equality")
LONG_AK, LONG_SK = "AKIDLONGTERM01", "long-term-secret-QWERTY"
WEB_TOKEN, ECS_TOKEN = "eyJ.web-identity-token.SIG", "ecs-auth-token-77"

failures = []
outputs = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


def main():
    if not os.path.isdir(TABLE):
        print("skipped: corpus not found at " + TABLE)
        return 77
    tmp = tempfile.mkdtemp(prefix="icd-creds-")
    try:
        return run_all(tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def run_all(tmp):
    root = os.path.join(tmp, "s3")
    shutil.copytree(TABLE, os.path.join(root, "wh", "t"))
    mfile = max((n for n in os.listdir(os.path.join(TABLE, "metadata"))
                 if n.endswith(".metadata.json")), key=lambda n: int(n[1:].split(".")[0]))
    with open(os.path.join(TABLE, "metadata", mfile)) as f:
        loc = json.load(f)["location"].rstrip("/")
    srv, port = aws_server.start(root, {LONG_AK: LONG_SK}, web_token=WEB_TOKEN,
                                 ecs_token=ECS_TOKEN)
    ep = f"http://127.0.0.1:{port}"
    home = os.path.join(tmp, "home")
    os.makedirs(home)

    def base_env(**extra):
        env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
        env.update({"HOME": home, "AWS_ENDPOINT_URL_S3": ep, "AWS_ENDPOINT_URL_STS": ep,
                    "AWS_REGION": "us-east-1", "AWS_EC2_METADATA_DISABLED": "true"})
        env.update(extra)
        return {k: v for k, v in env.items() if v is not None}

    def run(args, env, timeout=60):
        p = subprocess.run([ICEDRUID] + args, env=env, capture_output=True, text=True,
                           timeout=timeout)
        outputs.append(p.stdout + p.stderr)
        return p

    want = run(["scan", TABLE, "--remap", f"{loc}={TABLE}", "--threads", "1"], base_env())
    check(want.returncode == 0 and want.stdout.count("\n") > 0, "local scan (reference)")
    sargs = ["scan", "s3://wh/t", "--remap", f"{loc}=s3://wh/t", "--threads", "1"]

    def scan_as(name, env, source):
        before = len(srv.issued)
        p = run(sargs, env)
        check(p.returncode == 0 and p.stdout == want.stdout,
              f"{name}: scan over S3 equals the local scan" +
              ("" if p.returncode == 0 else " (stderr: " + p.stderr.strip()[:300] + ")"))
        got = [s for s, _ in srv.issued[before:]]
        if source:
            check(got and all(s == source for s in got), f"{name}: keys issued by {source}")
        return p

    # ---- environment ---------------------------------------------------------------
    scan_as("env", base_env(AWS_ACCESS_KEY_ID=LONG_AK, AWS_SECRET_ACCESS_KEY=LONG_SK), None)
    check(LONG_AK in srv.s3_keys, "env: S3 saw the long-term key")

    # ---- web identity ----------------------------------------------------------------
    tokfile = os.path.join(tmp, "web-token")
    with open(tokfile, "w") as f:
        f.write(WEB_TOKEN + "\n")
    web = base_env(AWS_WEB_IDENTITY_TOKEN_FILE=tokfile,
                   AWS_ROLE_ARN="arn:aws:iam::123456789012:role/icd")
    scan_as("web identity", web, "web-identity")
    bad = os.path.join(tmp, "bad-token")
    with open(bad, "w") as f:
        f.write("not-the-token")
    p = run(sargs, dict(web, AWS_WEB_IDENTITY_TOKEN_FILE=bad))
    lines = p.stderr.strip().splitlines()
    check(p.returncode == 1 and len(lines) == 1 and "InvalidIdentityToken" in p.stderr and
          "AssumeRoleWithWebIdentity" in p.stderr,
          "web identity: a wrong token fails with one line quoting STS (%r)" % p.stderr.strip())

    # ---- profiles --------------------------------------------------------------------
    cfg = os.path.join(tmp, "config")
    cred = os.path.join(tmp, "credentials")
    proc_script = os.path.join(tmp, "cred_proc.py")
    counter = os.path.join(tmp, "proc-count")
    with open(proc_script, "w") as f:
        f.write(f"""import json, sys, time, urllib.request
# asks the test server for fresh keys (an "ecs" issuance under another name would do too)
req = urllib.request.Request("{ep}/ecs/creds", headers={{"Authorization": "{ECS_TOKEN}"}})
c = json.load(urllib.request.urlopen(req))
with open({counter!r}, "a") as fh:
    fh.write("x")
print(json.dumps({{"Version": 1, "AccessKeyId": c["AccessKeyId"],
                  "SecretAccessKey": c["SecretAccessKey"], "SessionToken": c["Token"],
                  "Expiration": c["Expiration"]}}))
""")
    with open(cfg, "w") as f:
        f.write(f"""[default]
region = us-east-1

[profile ar]
role_arn = arn:aws:iam::123456789012:role/icd-reader
source_profile = base
role_session_name = icd-test

[profile proc]
credential_process = {sys.executable} {proc_script}

[profile failing]
credential_process = sh -c 'echo oops >&2; exit 3'

[sso-session ignored]
sso_region = us-east-1
""")
    with open(cred, "w") as f:
        f.write(f"""[stat]
aws_access_key_id = {LONG_AK}
aws_secret_access_key = {LONG_SK}

[base]
aws_access_key_id = {LONG_AK}
aws_secret_access_key = {LONG_SK}
""")
    prof = dict(AWS_CONFIG_FILE=cfg, AWS_SHARED_CREDENTIALS_FILE=cred)
    n = srv.s3_keys.count(LONG_AK)
    scan_as("profile static", base_env(AWS_PROFILE="stat", **prof), None)
    check(srv.s3_keys.count(LONG_AK) > n, "profile static: S3 saw the profile's key")
    signed = srv.sts_signed
    scan_as("profile assume-role", base_env(AWS_PROFILE="ar", **prof), "assume-role")
    check(srv.sts_signed == signed + 1,
          "profile assume-role: one AssumeRole, signed with source_profile's key (own + "
          "botocore check)")
    scan_as("credential_process", base_env(AWS_PROFILE="proc", **prof), "ecs")
    p = run(sargs, base_env(AWS_PROFILE="failing", **prof))
    check(p.returncode == 1 and len(p.stderr.strip().splitlines()) == 1 and
          "credential_process failed (exit status 3): oops" in p.stderr,
          "credential_process: a failing command is one line (%r)" % p.stderr.strip())
    p = run(sargs, base_env(AWS_PROFILE="nosuch", **prof))
    check(p.returncode == 1 and "AWS profile 'nosuch' is not in the shared config" in p.stderr
          and len(p.stderr.strip().splitlines()) == 1, "missing profile: one clear line")

    # ---- ECS ---------------------------------------------------------------------------
    ecs_tok = os.path.join(tmp, "ecs-token")
    with open(ecs_tok, "w") as f:
        f.write(ECS_TOKEN)
    ecs = base_env(AWS_CONTAINER_CREDENTIALS_FULL_URI=ep + "/ecs/creds",
                   AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE=ecs_tok)
    scan_as("ecs", ecs, "ecs")
    p = run(sargs, dict(ecs, AWS_CONTAINER_CREDENTIALS_FULL_URI="http://203.0.113.9/creds"))
    check(p.returncode == 1 and "must be https" in p.stderr,
          "ecs: plain http to a non-local host is refused before any request")

    # ---- IMDSv2 ------------------------------------------------------------------------
    imds = base_env(AWS_EC2_METADATA_DISABLED=None, AWS_REGION=None,
                    AWS_EC2_METADATA_SERVICE_ENDPOINT=ep)
    puts = sum(1 for r in srv.requests if r[0] == "PUT")
    scan_as("imds", imds, "imds")
    check(sum(1 for r in srv.requests if r[0] == "PUT") > puts,
          "imds: an IMDSv2 session token was requested (GETs without it are 401)")
    # without the endpoint variable, and on a machine whose DMI vendor is not EC2, nothing
    # asks the metadata service: no credentials, so the request goes unsigned (403)
    before = len(srv.requests)
    p = run(sargs, base_env(AWS_EC2_METADATA_DISABLED=None))
    check(p.returncode == 1 and "no S3 credentials found" in p.stderr and
          not any(r[1].startswith("/latest/") for r in srv.requests[before:]),
          "no source: unsigned request, a hint, and no metadata request")

    # ---- the same chain for Glue and for a SigV4-signed REST catalog ------------------------
    glue, gport = glue_server.start({"region": "us-east-1", "lookup": srv._lookup,
                                     "botocore": True, "tables": {"ice/t": {
                                         "metadata_location": f"s3://wh/t/metadata/{mfile}",
                                         "table_type": "ICEBERG", "location": loc}}})
    gcat = os.path.join(tmp, "glue.json")
    with open(gcat, "w") as f:
        json.dump({"type": "glue", "catalogProperties": {
            "glue.endpoint": f"http://127.0.0.1:{gport}"}}, f)
    gargs = ["scan", "--catalog", gcat, "ice.t", "--remap", f"{loc}=s3://wh/t", "--threads", "1"]
    before = len(srv.issued)
    p = run(gargs, base_env(AWS_PROFILE="ar", **prof))
    check(p.returncode == 0 and p.stdout == want.stdout and
          [s for s, _ in srv.issued[before:]] == ["assume-role"],
          "glue via profile assume-role: one AssumeRole serves Glue GetTable and S3 " +
          p.stderr.strip()[:300])
    check(glue.boto and all(glue.boto), "glue: botocore recomputed all %d signatures"
          % len(glue.boto))
    glue.shutdown()
    rsrv, rport = rest_server.start({
        "sigv4": {"access": LONG_AK, "secret": LONG_SK, "region": "eu-west-1",
                  "service": "glue"},
        "tables": {"ice/t": {"metadata-location": f"s3://wh/t/metadata/{mfile}",
                             "metadata-file": os.path.join(TABLE, "metadata", mfile)}}})
    rcat = {"type": "rest", "catalogUri": f"http://127.0.0.1:{rport}",
            "catalogProperties": {"rest.sigv4-enabled": "true", "rest.signing-name": "glue",
                                  "rest.signing-region": "eu-west-1"}}
    rfile = os.path.join(tmp, "rest.json")
    with open(rfile, "w") as f:
        json.dump(rcat, f)
    rargs = ["scan", "--catalog", rfile, "ice.t", "--remap", f"{loc}=s3://wh/t", "--threads", "1"]
    p = run(rargs, base_env(AWS_PROFILE="stat", **prof))
    st = rsrv.RequestHandlerClass.state
    check(p.returncode == 0 and p.stdout == want.stdout,
          "rest sigv4 (signing-name glue, region eu-west-1): scan equals local " +
          p.stderr.strip()[:300])
    check(st.sigv4_checked and all(a and b for a, b in st.sigv4_checked),
          "rest sigv4: %d requests, each signature recomputed by s3util and botocore"
          % len(st.sigv4_checked))
    with open(rfile, "w") as f:
        json.dump(dict(rcat, catalogProperties=dict(rcat["catalogProperties"],
                                                    **{"rest.signing-region": "us-west-2"})), f)
    p = run(rargs, base_env(AWS_PROFILE="stat", **prof))
    check(p.returncode == 1 and "HTTP 403" in p.stderr and len(p.stderr.strip().splitlines()) == 1,
          "rest sigv4: a request signed for another region is refused (one line)")
    p = run(rargs, base_env())
    check(p.returncode == 1 and "no AWS credentials were found" in p.stderr,
          "rest sigv4 without any credentials: one clear line")
    rsrv.shutdown()

    # ---- refresh before expiry ------------------------------------------------------------
    srv.lifetime = 4
    srv.delay = 0.35
    t0 = time.time()
    before = len(srv.issued)
    p = run(sargs[:-1] + ["2"], web, timeout=120)
    took = time.time() - t0
    fresh = srv.issued[before:]
    check(p.returncode == 0 and p.stdout == want.stdout,
          "refresh (web identity): a %.1f s scan with 4 s credentials equals the local scan%s"
          % (took, "" if p.returncode == 0 else " (" + p.stderr.strip()[:300] + ")"))
    check(took > 4 and len(fresh) >= 2,
          f"refresh (web identity): {len(fresh)} AssumeRoleWithWebIdentity calls in one run")
    used = [k for k in srv.s3_keys if k in {a for _, a in fresh}]
    check(len(set(used)) >= 2, "refresh: S3 saw requests signed by %d successive keys"
          % len(set(used)))
    before = len(srv.issued)
    p = run(sargs, ecs, timeout=120)
    check(p.returncode == 0 and p.stdout == want.stdout and len(srv.issued) - before >= 2,
          "refresh (ecs): %d fetches in one scan" % (len(srv.issued) - before))
    p = run(sargs + ["--stats"], base_env(AWS_PROFILE="proc", **prof), timeout=120)
    with open(counter) as f:
        nproc = len(f.read())
    check(p.returncode == 0 and nproc >= 3, "refresh (credential_process): run %d times%s" % (
        nproc, "" if p.returncode == 0 else " (exit %d: %s)" % (p.returncode, p.stderr.strip()[:400])))
    srv.delay = 0

    # ---- botocore and secrets ------------------------------------------------------------
    check(len(srv.boto) > 20 and all(srv.boto),
          f"botocore recomputed all {len(srv.boto)} accepted S3/STS signatures")
    leaked = [s for s in srv.all_secrets() if any(s in o for o in outputs)]
    check(not leaked, f"no secret in any output ({len(outputs)} runs)")
    srv.shutdown()
    print(f"{len(failures) == 0 and 'all' or len(failures)} checks {'passed' if not failures else 'failed'}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
