"""S3 test helpers (Python standard library only).

- sigv4_headers(): AWS Signature Version 4 for a request, written from the AWS
  specification independently of curl, so uploads to the S3 test server do not depend
  on the code under test.
- S3Client: PUT objects (uploads a corpus table into a bucket) over one keep-alive
  connection.
- FakeS3: a small S3-compatible server for the failure cases a real server cannot be
  asked to produce: it verifies SigV4 signatures against its own key pair, serves GET
  (with Range), HEAD and ListObjectsV2 from a directory, answers 500 a set number of
  times for chosen keys, and records the headers of every request.
- start_s3rver(): starts the npm package @20minutes/s3rver (tests/node) on 127.0.0.1
  with a random port.

Run as a script, `python3 s3util.py fake --root DIR` starts a FakeS3 and prints its port.
"""
import datetime
import hashlib
import hmac
import http.client
import http.server
import json
import os
import re
import subprocess
import sys
import threading
import time
import urllib.parse

EMPTY_SHA256 = hashlib.sha256(b"").hexdigest()


def uri_encode(s, keep_slash):
    safe = "-_.~" + ("/" if keep_slash else "")
    return urllib.parse.quote(s, safe=safe)


def canonical_query(query):
    """Canonical query string from a raw query: decoded, re-encoded, sorted by name."""
    pairs = []
    if query:
        for part in query.split("&"):
            k, _, v = part.partition("=")
            k = urllib.parse.unquote(k)
            v = urllib.parse.unquote(v)
            pairs.append((uri_encode(k, False), uri_encode(v, False)))
    pairs.sort()
    return "&".join(f"{k}={v}" for k, v in pairs)


def _hmac(key, msg):
    return hmac.new(key, msg.encode(), hashlib.sha256).digest()


def signing_key(secret, date, region, service):
    k = _hmac(("AWS4" + secret).encode(), date)
    k = _hmac(k, region)
    k = _hmac(k, service)
    return _hmac(k, "aws4_request")


def string_to_sign(method, raw_path, query, headers, signed, payload_hash, amz_date, scope):
    canon_headers = "".join(f"{h}:{' '.join(headers[h].strip().split())}\n" for h in signed)
    creq = "\n".join([method, raw_path, canonical_query(query), canon_headers,
                      ";".join(signed), payload_hash])
    return "\n".join(["AWS4-HMAC-SHA256", amz_date, scope,
                      hashlib.sha256(creq.encode()).hexdigest()])


def sigv4_headers(method, host, raw_path, query, body, access, secret, region,
                  token=None, now=None):
    now = now or datetime.datetime.now(datetime.timezone.utc)
    amz_date = now.strftime("%Y%m%dT%H%M%SZ")
    date = amz_date[:8]
    payload_hash = hashlib.sha256(body or b"").hexdigest()
    headers = {"host": host, "x-amz-date": amz_date, "x-amz-content-sha256": payload_hash}
    if token:
        headers["x-amz-security-token"] = token
    signed = sorted(headers)
    scope = f"{date}/{region}/s3/aws4_request"
    sts = string_to_sign(method, raw_path, query, headers, signed, payload_hash, amz_date, scope)
    sig = hmac.new(signing_key(secret, date, region, "s3"), sts.encode(),
                   hashlib.sha256).hexdigest()
    headers["authorization"] = (f"AWS4-HMAC-SHA256 Credential={access}/{scope}, "
                                f"SignedHeaders={';'.join(signed)}, Signature={sig}")
    return headers


class S3Client:
    """Path-style PUTs to an S3 endpoint on loopback."""

    def __init__(self, port, access, secret, region="us-east-1"):
        self.port, self.access, self.secret, self.region = port, access, secret, region
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)

    def put(self, bucket, key, data):
        path = "/" + uri_encode(bucket, False) + "/" + uri_encode(key, True)
        h = sigv4_headers("PUT", f"127.0.0.1:{self.port}", path, "", data,
                          self.access, self.secret, self.region)
        h["content-length"] = str(len(data))
        self.conn.request("PUT", path, body=data, headers=h)
        r = self.conn.getresponse()
        body = r.read()
        if r.status != 200:
            raise RuntimeError(f"PUT {path}: HTTP {r.status} {body[:300]!r}")

    def upload_tree(self, bucket, prefix, root):
        """Uploads every file under root as prefix/relative/path; returns the keys."""
        keys = []
        for d, _, files in os.walk(root):
            for f in sorted(files):
                p = os.path.join(d, f)
                key = prefix + "/" + os.path.relpath(p, root).replace(os.sep, "/")
                with open(p, "rb") as fh:
                    self.put(bucket, key, fh.read())
                keys.append(key)
        return keys


def xml_escape(s):
    return (s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
            .replace('"', "&quot;"))


class FakeS3(http.server.ThreadingHTTPServer):
    """Serves ROOT/BUCKET/KEY. See the module comment."""

    daemon_threads = True

    def __init__(self, root, access="FAKEKEY", secret="FAKESECRET", region="us-east-1"):
        super().__init__(("127.0.0.1", 0), _FakeHandler)
        self.root, self.access, self.secret, self.region = root, access, secret, region
        self.fail_plan = {}  # key -> number of 500 answers still to give
        # Optional: lookup(access) -> (secret, token) | "expired" | None replaces the one
        # key pair (temporary credentials of aws_server.py); boto, a list, turns on the
        # botocore recomputation of every accepted signature (botocheck.py), one bool each.
        self.lookup = None
        self.boto = None
        self.requests = []   # (method, raw path, headers dict)
        self.lock = threading.Lock()


class _FakeHandler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def _send(self, status, body=b"", ctype="application/xml", extra=None):
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        for k, v in (extra or {}).items():
            self.send_header(k, v)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _error(self, status, code, msg):
        body = (f'<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>{code}</Code>'
                f"<Message>{xml_escape(msg)}</Message></Error>").encode()
        self._send(status, body)

    def _check_auth(self, raw_path, query):
        srv = self.server
        auth = self.headers.get("Authorization")
        if not auth:
            return self._error(403, "AccessDenied", "Anonymous access is forbidden") or False
        m = re.match(r"AWS4-HMAC-SHA256 Credential=([^/]+)/(\d{8})/([^/]+)/s3/aws4_request,"
                     r"\s*SignedHeaders=([^,]+),\s*Signature=([0-9a-f]{64})$", auth)
        if not m:
            return self._error(400, "AuthorizationHeaderMalformed", "bad header") or False
        access, date, region, signed, sig = m.groups()
        secret, token = srv.secret, None
        if srv.lookup:
            found = srv.lookup(access)
            if found == "expired":
                return self._error(400, "ExpiredToken", "The provided token has expired.") or False
            if found is None:
                return self._error(403, "InvalidAccessKeyId", "unknown access key") or False
            secret, token = found
            if token is not None and self.headers.get("x-amz-security-token") != token:
                return self._error(403, "InvalidToken", "The provided token is malformed or "
                                   "otherwise invalid.") or False
        elif access != srv.access:
            return self._error(403, "InvalidAccessKeyId", "unknown access key") or False
        payload = self.headers.get("x-amz-content-sha256")
        if payload is None:
            return self._error(400, "InvalidRequest", "missing x-amz-content-sha256") or False
        signed_list = signed.split(";")
        if "host" not in signed_list:
            return self._error(403, "AccessDenied", "host is not signed") or False
        hdrs = {}
        for h in signed_list:
            v = self.headers.get(h)
            if v is None:
                return self._error(403, "AccessDenied", f"signed header {h} missing") or False
            hdrs[h] = v
        amz_date = self.headers.get("x-amz-date", "")
        scope = f"{date}/{region}/s3/aws4_request"
        sts = string_to_sign(self.command, raw_path, query, hdrs, signed_list, payload,
                             amz_date, scope)
        want = hmac.new(signing_key(secret, date, region, "s3"), sts.encode(),
                        hashlib.sha256).hexdigest()
        if not hmac.compare_digest(want, sig):
            return self._error(403, "SignatureDoesNotMatch",
                               "The request signature we calculated does not match") or False
        if srv.boto is not None:
            import botocheck
            ok = botocheck.verify(self.command, self.path,
                                  {k.lower(): v for k, v in self.headers.items()}, b"", secret,
                                  token)
            with srv.lock:
                srv.boto.append(ok)
            if not ok:
                return self._error(403, "SignatureDoesNotMatch", "botocore computes another "
                                   "signature") or False
        return True

    def _handle(self):
        srv = self.server
        raw_path, _, query = self.path.partition("?")
        with srv.lock:
            srv.requests.append((self.command, self.path, {k.lower(): v for k, v in
                                                           self.headers.items()}))
        if raw_path == "/_requests":  # test control: what was asked so far
            with srv.lock:
                body = json.dumps(srv.requests).encode()
            return self._send(200, body, "application/json")
        if not self._check_auth(raw_path, query):
            return
        parts = urllib.parse.unquote(raw_path).lstrip("/").split("/", 1)
        bucket = parts[0]
        key = parts[1] if len(parts) > 1 else ""
        with srv.lock:
            left = srv.fail_plan.get(key, 0)
            if left:
                srv.fail_plan[key] = left - 1
        if left:
            return self._error(500, "InternalError", "planned failure")
        bdir = os.path.join(srv.root, bucket)
        if not os.path.isdir(bdir):
            return self._error(404, "NoSuchBucket", "The specified bucket does not exist")
        if not key:
            return self._list(bdir, urllib.parse.parse_qs(query))
        p = os.path.join(bdir, key)
        if not os.path.isfile(p):
            return self._error(404, "NoSuchKey", "The specified key does not exist.")
        with open(p, "rb") as fh:
            data = fh.read()
        rng = self.headers.get("Range")
        if rng:
            m = re.match(r"bytes=(\d*)-(\d*)$", rng)
            n = len(data)
            if m.group(1) == "":
                a, b = max(0, n - int(m.group(2))), n - 1
            else:
                a = int(m.group(1))
                b = min(int(m.group(2)), n - 1) if m.group(2) else n - 1
            if a >= n or a > b:
                return self._send(416, b"", extra={"Content-Range": f"bytes */{n}"})
            return self._send(206, data[a:b + 1], "application/octet-stream",
                              {"Content-Range": f"bytes {a}-{b}/{n}"})
        return self._send(200, data, "application/octet-stream")

    def _list(self, bdir, q):
        prefix = q.get("prefix", [""])[0]
        delim = q.get("delimiter", [""])[0]
        keys = []
        for d, _, files in os.walk(bdir):
            for f in files:
                keys.append(os.path.relpath(os.path.join(d, f), bdir).replace(os.sep, "/"))
        keys = sorted(k for k in keys if k.startswith(prefix))
        contents, prefixes = [], []
        for k in keys:
            rest = k[len(prefix):]
            if delim and delim in rest:
                cp = prefix + rest.split(delim, 1)[0] + delim
                if cp not in prefixes:
                    prefixes.append(cp)
            else:
                contents.append(k)
        # Pages of 2 entries, so that continuation tokens are exercised.
        entries = [("k", k) for k in contents] + [("p", p) for p in prefixes]
        entries.sort(key=lambda e: e[1])
        start = int(q.get("continuation-token", ["0"])[0])
        page = entries[start:start + 2]
        more = start + 2 < len(entries)
        xml = ['<?xml version="1.0" encoding="UTF-8"?>',
               '<ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">',
               f"<Prefix>{xml_escape(prefix)}</Prefix><KeyCount>{len(page)}</KeyCount>",
               f"<IsTruncated>{'true' if more else 'false'}</IsTruncated>"]
        if more:
            xml.append(f"<NextContinuationToken>{start + 2}</NextContinuationToken>")
        for kind, name in page:
            if kind == "k":
                xml.append(f"<Contents><Key>{xml_escape(name)}</Key><Size>1</Size></Contents>")
            else:
                xml.append(f"<CommonPrefixes><Prefix>{xml_escape(name)}</Prefix>"
                           "</CommonPrefixes>")
        xml.append("</ListBucketResult>")
        self._send(200, "".join(xml).encode())

    do_GET = _handle
    do_HEAD = _handle


def start_fake(root, **kw):
    srv = FakeS3(root, **kw)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv


class _BotoProxyHandler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def _forward(self):
        srv = self.server
        n = int(self.headers.get("Content-Length", "0") or 0)
        body = self.rfile.read(n) if n else b""
        conn = http.client.HTTPConnection("127.0.0.1", srv.target, timeout=60)
        conn.putrequest(self.command, self.path, skip_host=True, skip_accept_encoding=True)
        for k, v in self.headers.items():
            conn.putheader(k, v)
        conn.endheaders(body or None)
        resp = conn.getresponse()
        try:
            data = b"" if self.command == "HEAD" else resp.read()
        except http.client.IncompleteRead as e:  # s3rver's empty-object ranges (see http.c)
            data = e.partial
        if resp.status != 403 and self.headers.get("Authorization"):
            import botocheck
            ok = botocheck.verify(self.command, self.path,
                                  {k.lower(): v for k, v in self.headers.items()}, body,
                                  srv.secret)
            with srv.lock:
                srv.boto.append(ok)
        self.send_response(resp.status)
        for k, v in resp.getheaders():
            if k.lower() not in ("transfer-encoding", "connection", "content-length"):
                self.send_header(k, v)
        self.send_header("Content-Length", resp.getheader("Content-Length", str(len(data)))
                         if self.command == "HEAD" else str(len(data)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)
        conn.close()

    do_GET = do_HEAD = do_PUT = do_POST = do_DELETE = _forward


def start_boto_proxy(target_port, secret):
    """A forwarding proxy in front of a real S3 server (s3rver) on 127.0.0.1: every request
    it passes on unchanged (Host header included, so the signature still verifies there)
    whose answer is not 403 has its SigV4 signature recomputed by botocore with `secret`;
    the verdicts collect in .boto. Returns (server, port)."""
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _BotoProxyHandler)
    srv.daemon_threads = True
    srv.target, srv.secret, srv.boto, srv.lock = target_port, secret, [], threading.Lock()
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv, srv.server_address[1]


def node_dir():
    src = os.environ.get("ICD_SOURCE_DIR") or os.path.join(os.path.dirname(__file__), "..", "..")
    return os.path.join(src, "tests", "node")


def start_s3rver(data_dir, buckets):
    """Starts @20minutes/s3rver; returns (process, port) or (None, reason)."""
    pkg = os.path.join(node_dir(), "node_modules", "@20minutes", "s3rver")
    if not os.path.isdir(pkg):
        return None, "npm package @20minutes/s3rver is not installed (bash scripts/node-deps.sh)"
    launcher = os.path.join(os.path.dirname(os.path.abspath(__file__)), "s3rver_launch.js")
    proc = subprocess.Popen(["node", launcher, pkg, data_dir] + list(buckets),
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    line = proc.stdout.readline()
    m = re.match(r"PORT (\d+)", line or "")
    if not m:
        proc.kill()
        return None, "s3rver did not start: " + (line + proc.stderr.read())[:500]
    return proc, int(m.group(1))


if __name__ == "__main__" and len(sys.argv) >= 2 and sys.argv[1] == "fake":
    root = sys.argv[sys.argv.index("--root") + 1]
    s = start_fake(root)
    print(f"PORT {s.server_address[1]}", flush=True)
    while True:
        time.sleep(3600)
