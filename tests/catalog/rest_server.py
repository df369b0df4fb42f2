"""A small Iceberg REST catalog server for tests (Python standard library only).

It follows the Iceberg REST OpenAPI spec for the calls a reader makes, and is strict so
that a wrong client fails:

  POST /v1/oauth/tokens   OAuth2 client credentials (form body: grant_type, client_id,
                          client_secret, scope). Issues tokens that expire after
                          `token_ttl` seconds. Bad client: 401 {"error": "invalid_client"}.
  GET  /v1/config         ?warehouse=W (must match), answers defaults / overrides.
  GET  /v1/{prefix}/namespaces/{ns}/tables/{table}
                          namespace levels joined by %1F in the path; answers
                          metadata-location, metadata (read from a local file) and config.
  Every catalog call needs "Authorization: Bearer T" with an issued, unexpired token or a
  static token, and every header in `required_headers`; errors use the ErrorModel
  {"error": {"message", "type", "code"}}. 404 for unknown warehouse, prefix, namespace or
  table.
  Test control: GET /test/stats (token requests, scopes, request log without
  Authorization values, planned failures served), POST /test/revoke (forget all issued
  tokens), POST /test/fail with a JSON body {"path": P, "count": N, "status": S}: the
  next N requests whose path (query excluded) starts with P are answered with status S
  (an ErrorModel ServiceUnavailableException) before any other check.

Usage: python3 rest_server.py CONFIG.json   prints "PORT <n>" once listening on
127.0.0.1. CONFIG keys: warehouse, prefix, clients {id: secret}, static_tokens [..],
token_ttl, defaults {}, overrides {}, required_headers {name: value}, sigv4 {access,
secret, token, region, service} (every request must be SigV4-signed with that key instead
of carrying a bearer token; checked by s3util's signer and by botocore),
tables {"ns1\\u001fns2/table": {"metadata-location", "metadata-file", "config"}}.
"""
import http.server
import json
import secrets
import sys
import threading
import time
import urllib.parse


class State:
    def __init__(self, cfg):
        self.cfg = cfg
        self.tokens = {}  # token -> expiry (time.monotonic)
        self.token_requests = 0
        self.scopes = []
        self.log = []
        self.fail_plan = []  # [path prefix, answers left, status]
        self.failures_served = []  # (path, status)
        self.sigv4_checked = []  # (own signer agrees, botocore agrees) per signed request
        self.lock = threading.Lock()


def error_model(status, typ, msg):
    return status, {"error": {"message": msg, "type": typ, "code": status}}


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    state = None

    def log_message(self, *a):
        pass

    def _reply(self, status, obj):
        body = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _record(self):
        hdrs = {k.lower(): v for k, v in self.headers.items()}
        if "authorization" in hdrs:
            hdrs["authorization"] = hdrs["authorization"].split(" ")[0] + " <redacted>"
        with self.state.lock:
            self.state.log.append({"method": self.command, "path": self.path, "headers": hdrs})

    def _planned_failure(self):
        """Answers a planned failure (POST /test/fail) and returns True, or False."""
        st = self.state
        path = urllib.parse.urlsplit(self.path).path
        with st.lock:
            for plan in st.fail_plan:
                if plan[1] > 0 and path.startswith(plan[0]):
                    plan[1] -= 1
                    st.failures_served.append((path, plan[2]))
                    status = plan[2]
                    break
            else:
                return False
        self._reply(*error_model(status, "ServiceUnavailableException", "planned failure"))
        return True

    def _sigv4(self, cfg):
        """SigV4 (rest.sigv4-enabled): the signature recomputed by s3util's signer and by
        botocore with cfg's secret; None when both agree with the request."""
        import hashlib
        import hmac
        import os
        here = os.path.dirname(os.path.abspath(__file__))
        sys.path.insert(0, os.path.join(here, "..", "io"))
        import botocheck
        import s3util
        hdrs = {k.lower(): v for k, v in self.headers.items()}
        m = botocheck.AUTH_RE.match(hdrs.get("authorization", ""))
        if not m:
            return error_model(403, "NotAuthorizedException", "SigV4 Authorization required")
        access, date, region, service, signed, sig = m.groups()
        if access != cfg["access"] or region != cfg["region"] or service != cfg["service"]:
            return error_model(403, "NotAuthorizedException",
                               f"credential scope {access}/{region}/{service} not accepted")
        if cfg.get("token") and hdrs.get("x-amz-security-token") != cfg["token"]:
            return error_model(403, "NotAuthorizedException", "bad security token")
        signed_list = signed.split(";")
        if not {"host", "x-amz-date"} <= set(signed_list) or \
                any(h not in hdrs for h in signed_list):
            return error_model(403, "NotAuthorizedException", "unsigned or missing headers")
        raw_path, _, query = self.path.partition("?")
        payload = hashlib.sha256(b"").hexdigest()
        sts = s3util.string_to_sign(self.command, raw_path, query, hdrs, signed_list, payload,
                                    hdrs["x-amz-date"], f"{date}/{region}/{service}/aws4_request")
        want = hmac.new(s3util.signing_key(cfg["secret"], date, region, service), sts.encode(),
                        hashlib.sha256).hexdigest()
        boto = botocheck.verify(self.command, self.path, hdrs, b"", cfg["secret"],
                                cfg.get("token"))
        with self.state.lock:
            self.state.sigv4_checked.append((hmac.compare_digest(want, sig), boto))
        if not hmac.compare_digest(want, sig) or not boto:
            return error_model(403, "NotAuthorizedException", "SigV4 signature mismatch")
        return None

    def _auth(self):
        """None when authorised, else (status, body)."""
        st = self.state
        if st.cfg.get("sigv4"):
            return self._sigv4(st.cfg["sigv4"])
        auth = self.headers.get("Authorization", "")
        if not auth.startswith("Bearer "):
            return error_model(401, "NotAuthorizedException", "Authentication required")
        tok = auth[7:]
        with st.lock:
            exp = st.tokens.get(tok)
        if tok in st.cfg.get("static_tokens", []):
            pass
        elif exp is None:
            return error_model(401, "NotAuthorizedException", "Invalid or revoked token")
        elif time.monotonic() >= exp:
            return error_model(401, "NotAuthorizedException", "Token expired")
        for name, value in st.cfg.get("required_headers", {}).items():
            if self.headers.get(name) != value:
                return error_model(400, "BadRequestException", f"Missing or wrong header {name}")
        return None

    def do_POST(self):
        self._record()
        st = self.state
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length).decode()
        path = urllib.parse.urlsplit(self.path).path
        if path == "/test/revoke":
            with st.lock:
                st.tokens.clear()
            return self._reply(200, {})
        if path == "/test/fail":
            f = json.loads(body)
            with st.lock:
                st.fail_plan.append([f["path"], int(f.get("count", 1)), int(f.get("status", 503))])
            return self._reply(200, {})
        if self._planned_failure():
            return
        if path != "/v1/oauth/tokens":
            return self._reply(*error_model(404, "NotFoundException", "No such route"))
        if not self.headers.get("Content-Type", "").startswith(
                "application/x-www-form-urlencoded"):
            return self._reply(400, {"error": "invalid_request",
                                     "error_description": "form body expected"})
        form = dict(urllib.parse.parse_qsl(body, keep_blank_values=True))
        with st.lock:
            st.token_requests += 1
            st.scopes.append(form.get("scope"))
        if form.get("grant_type") != "client_credentials":
            return self._reply(400, {"error": "unsupported_grant_type",
                                     "error_description": "only client_credentials"})
        cid, sec = form.get("client_id"), form.get("client_secret")
        if st.cfg.get("clients", {}).get(cid) != sec or sec is None:
            return self._reply(401, {"error": "invalid_client",
                                     "error_description": "Client authentication failed"})
        tok = secrets.token_hex(16)
        ttl = int(st.cfg.get("token_ttl", 3600))
        with st.lock:
            st.tokens[tok] = time.monotonic() + ttl
        return self._reply(200, {"access_token": tok, "token_type": "bearer",
                                 "expires_in": ttl,
                                 "issued_token_type":
                                     "urn:ietf:params:oauth:token-type:access_token"})

    def do_GET(self):
        self._record()
        st = self.state
        parts = urllib.parse.urlsplit(self.path)
        if parts.path == "/test/stats":
            with st.lock:
                return self._reply(200, {"token_requests": st.token_requests,
                                         "sigv4_checked": st.sigv4_checked,
                                         "scopes": st.scopes, "requests": st.log,
                                         "failures_served": st.failures_served})
        if self._planned_failure():
            return
        denied = self._auth()
        if denied:
            return self._reply(*denied)
        if parts.path == "/v1/config":
            q = urllib.parse.parse_qs(parts.query)
            wh = q.get("warehouse", [None])[0]
            if st.cfg.get("warehouse") and wh != st.cfg["warehouse"]:
                return self._reply(*error_model(404, "NoSuchWarehouseException",
                                                f"Warehouse {wh} does not exist"))
            return self._reply(200, {
                "defaults": st.cfg.get("defaults", {}),
                "overrides": st.cfg.get("overrides", {}),
                "endpoints": ["GET /v1/{prefix}/namespaces/{namespace}/tables/{table}"]})
        # /v1/{prefix}/namespaces/{ns}/tables/{table}; segments stay encoded until split
        segs = parts.path.split("/")
        prefix = st.cfg.get("prefix")
        want = ["", "v1"] + ([prefix] if prefix else []) + ["namespaces"]
        if (len(segs) != len(want) + 3 or segs[:len(want)] != want
                or segs[len(want) + 1] != "tables"):
            return self._reply(*error_model(404, "NotFoundException", "No such route"))
        ns_raw, table_raw = segs[len(want)], segs[len(want) + 2]
        levels = urllib.parse.unquote(ns_raw).split("\x1f")
        table = urllib.parse.unquote(table_raw)
        key = "\x1f".join(levels) + "/" + table
        tables = st.cfg.get("tables", {})
        if not any(k.rsplit("/", 1)[0] == "\x1f".join(levels) for k in tables):
            return self._reply(*error_model(404, "NoSuchNamespaceException",
                                            "Namespace does not exist: " + ".".join(levels)))
        if key not in tables:
            return self._reply(*error_model(404, "NoSuchTableException",
                                            f"Table does not exist: {'.'.join(levels)}.{table}"))
        t = tables[key]
        with open(t["metadata-file"]) as fh:
            md = json.load(fh)
        out = {"metadata-location": t["metadata-location"], "metadata": md,
               "config": t.get("config", {})}
        if "storage-credentials" in t:
            out["storage-credentials"] = t["storage-credentials"]
        return self._reply(200, out)


def start(cfg):
    """Starts a server in this process; returns (server, port)."""
    handler = type("H", (Handler,), {"state": State(cfg)})
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    srv.daemon_threads = True
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv, srv.server_address[1]


if __name__ == "__main__":
    with open(sys.argv[1]) as fh:
        config = json.load(fh)
    server, port = start(config)
    print(f"PORT {port}", flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        pass
