#!/usr/bin/env python3
"""A failed existence check is an error, never "absent" (issue 15.1 and 15.2), over http://
and s3:// through a fault-injecting loopback server.

The table (tests/tools/icewriter), in the Hadoop layout:
  v1  create (no snapshot)
  v2  append ids 1, 2, 3
  v3  position delete of id 2            -> the current state: ids 1 and 3
with a *stale* version-hint.text saying 2 (normal for Hadoop tables: the hint is written
after the metadata file).  Resolving the table HEADs v3.metadata.json to step forward.

The server (http.server, 127.0.0.1) serves the directory with Range support, and answers
the HEAD of metadata/v3.metadata.json with a status the case chooses.  Expected:

  HEAD v3 -> 200 (no fault)          rows 1, 3                 exit 0
  HEAD v3 -> 404 (genuinely absent)  rows 1, 2, 3 (v2 current) exit 0
  HEAD v3 -> 503 on every attempt    one error line naming v3 and "HTTP 503", exit 1
  HEAD v3 -> 500 / 403               the same with 500 / 403, exit 1
  GET version-hint.text -> 500       an error naming the hint, exit 1
  hint says 4, v4 is 404             "metadata file for version 4 is missing", exit 1

The row sets follow from what the test wrote (id 2 deleted in v3), not from icedruid.
Over s3:// (path-style endpoint, the same server under /bucket/...) S3's 404 means absent,
403 and 503 are errors; a HEAD has no body, so after a 403 icedruid asks once more with a
1-byte GET, whose error body names S3's code ("HTTP 403 Injected" here), and which finds the
object when only HEAD was refused.  The exact error line is compared.
"""
import http.server
import json
import os
import re
import subprocess
import sys
import tempfile
import threading

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.environ.get("ICD_SOURCE_DIR", os.path.dirname(os.path.dirname(HERE)))
sys.path.insert(0, os.path.join(SRC, "tests", "tools"))
from icewriter.iceberg import NestedField, Schema, Table  # noqa: E402

ICEDRUID = os.environ.get("ICEDRUID", "")
if not ICEDRUID:
    print("ICEDRUID is not set")
    sys.exit(1)

PREFIX = "/tmp/icedruid-exists-faults"
failures = []


def check(cond, msg):
    if not cond:
        failures.append(msg)
        print("FAIL:", msg)


class State:
    root = ""
    faults = {}  # (method, path suffix) -> status
    log = []


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def _local(self):
        path = self.path.split("?", 1)[0]
        if path.startswith("/bucket/"):  # S3 path-style
            path = path[len("/bucket"):]
        return os.path.join(State.root, path.lstrip("/")), path

    def _fault(self, method, path):
        for (m, suffix), status in State.faults.items():
            if m == method and path.endswith(suffix):
                return status
        return None

    def _send(self, status, body=b"", headers=()):
        self.send_response(status)
        for k, v in headers:
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _serve(self):
        local, path = self._local()
        State.log.append((self.command, path))
        status = self._fault(self.command, path)
        if status:
            body = b"<Error><Code>Injected</Code></Error>" if status != 404 else b""
            if status == 404 and self.path.startswith("/bucket/"):
                body = b"<Error><Code>NoSuchKey</Code></Error>"
            return self._send(status, body)
        if not os.path.isfile(local):
            return self._send(404, b"<Error><Code>NoSuchKey</Code></Error>")
        with open(local, "rb") as f:
            data = f.read()
        rng = self.headers.get("Range")
        m = re.fullmatch(r"bytes=(\d+)-(\d*)", rng or "")
        if m:
            a = int(m.group(1))
            b = int(m.group(2)) if m.group(2) else len(data) - 1
            b = min(b, len(data) - 1)
            part = data[a:b + 1]
            return self._send(206, part, [("Content-Range", "bytes %d-%d/%d" % (a, b, len(data)))])
        self._send(200, data)

    do_GET = _serve
    do_HEAD = _serve


def make_table(root):
    loc = PREFIX + "/t"
    t = Table.create(root, loc, Schema([NestedField(1, "id", "long", True)]))
    d = t.write_data([(1,), (2,), (3,)])
    t.append(d)
    t.row_delta(deletes=[t.write_position_deletes([(d[0], 1)])])
    with open(os.path.join(root, "metadata", "version-hint.text"), "w") as f:
        f.write("2")  # stale
    return loc


def run(args, env=None):
    e = dict(os.environ)
    e.update(env or {})
    return subprocess.run([ICEDRUID, *args], capture_output=True, text=True, timeout=120, env=e)


def ids(out):
    return sorted(json.loads(x)["id"] for x in out.splitlines() if x.strip())


def main():
    with tempfile.TemporaryDirectory() as tmp:
        State.root = os.path.join(tmp, "t")
        loc = make_table(State.root)
        srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=srv.serve_forever, daemon=True).start()
        port = srv.server_address[1]
        base = "http://127.0.0.1:%d" % port
        s3env = {"AWS_ENDPOINT_URL": base, "ICEDRUID_S3_PATH_STYLE": "1",
                 "AWS_ACCESS_KEY_ID": "test", "AWS_SECRET_ACCESS_KEY": "test",
                 "AWS_REGION": "us-east-1"}
        for scheme, table, remap_to, env in (
                ("http", base, base, None),
                ("s3", "s3://bucket", "s3://bucket", s3env)):
            remap = ["--remap", loc + "=" + remap_to]
            v3 = table + "/metadata/v3.metadata.json"
            hint = table + "/metadata/version-hint.text"
            cases = [
                ("no fault", {}, 0, [1, 3], None),
                ("404 on v3: absent", {("HEAD", "/metadata/v3.metadata.json"): 404}, 0,
                 [1, 2, 3], None),
                ("503 on v3", {("HEAD", "/metadata/v3.metadata.json"): 503}, 1, None,
                 (v3, "503")),
                ("500 on v3", {("HEAD", "/metadata/v3.metadata.json"): 500}, 1, None,
                 (v3, "500")),
                ("403 on v3", {("HEAD", "/metadata/v3.metadata.json"): 403,
                               ("GET", "/metadata/v3.metadata.json"): 403}, 1, None,
                 (v3, "403")),
                ("500 on the hint", {("GET", "/metadata/version-hint.text"): 500,
                                     ("HEAD", "/metadata/version-hint.text"): 500}, 1, None,
                 (hint, "500")),
            ]
            if scheme == "s3":  # HEAD refused, the GET probe reads it: it exists
                cases.append(("403 on HEAD only", {("HEAD", "/metadata/v3.metadata.json"): 403},
                              0, [1, 3], None))
            for name, faults, want_rc, want_ids, want_err in cases:
                State.faults = faults
                State.log = []
                r = run(["scan", table, *remap], env)
                tag = "%s: %s" % (scheme, name)
                check(r.returncode == want_rc, "%s: exit %d, want %d; stderr %s"
                      % (tag, r.returncode, want_rc, r.stderr.strip()))
                if want_ids is not None:
                    check(r.returncode == 0 and ids(r.stdout) == want_ids,
                          "%s: ids %s, want %s" % (tag, r.stdout.split(), want_ids))
                else:
                    # each retry is said on its own line (issue 18); the error is the rest
                    lines = [l for l in r.stderr.strip().splitlines() if "; retrying in " not in l]
                    f, status = want_err
                    want = "icedruid: %s: HTTP %s" % (f, status)
                    if status == "403" and scheme == "http":  # no body on a HEAD
                        want += " AccessDenied (check the credentials and region)"
                    elif status == "403":  # S3: a 1-byte GET fetched the error code
                        want += " Injected"
                    check(lines == [want], "%s: stderr %r, want exactly %r"
                          % (tag, r.stderr.strip(), want))
                    check(r.stdout == "", "%s: rows printed: %r" % (tag, r.stdout[:200]))
                    print("ok   %s: %s" % (tag, lines[0] if lines else ""))
            # 15.2: the hint names a version whose file is absent (404): fail, no fallback
            State.faults = {}
            hint_path = os.path.join(State.root, "metadata", "version-hint.text")
            with open(hint_path, "w") as f:
                f.write("4")
            r = run(["scan", table, *remap], env)
            want = ("icedruid: %s/metadata/v4.metadata.json: metadata file for version 4 is "
                    "missing (version-hint.text names version 4; no v4.gz.metadata.json or "
                    "v4.metadata.json.gz either)" % table)
            check(r.returncode == 1 and r.stderr.strip() == want,
                  "%s: hint 4: exit %d stderr %r, want %r" % (scheme, r.returncode,
                                                             r.stderr.strip(), want))
            with open(hint_path, "w") as f:
                f.write("2")
        srv.shutdown()
    if failures:
        print("%d failure(s)" % len(failures))
        sys.exit(1)
    print("ok: failed existence checks are errors over http:// and s3://")


if __name__ == "__main__":
    main()
