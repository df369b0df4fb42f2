"""A small AWS Glue endpoint for tests: the GetTable action of Glue's JSON API (AWS JSON
1.1 protocol), strict about authentication (Python standard library only).

Every request must be POST / with X-Amz-Target: AWSGlue.GetTable, Content-Type:
application/x-amz-json-1.1 and an AWS Signature V4 Authorization header for service
"glue". The server recomputes the signature with its own key pair (the SigV4 helpers of
tests/io/s3util.py, written from the AWS specification independently of curl), over the
signed headers the client lists and the SHA-256 of the body it actually received; the
signed headers must include host, x-amz-date and x-amz-target. Errors are Glue's JSON
shape {"__type": ..., "message": ...}:
  - no Authorization header                    403 AccessDeniedException
  - unknown access key                         403 UnrecognizedClientException
  - wrong signature / scope / stale date       403 InvalidSignatureException
  - a table listed in `denied`                 400 AccessDeniedException
  - unknown database or table                  400 EntityNotFoundException
  - a CatalogId other than `catalog_id`        400 AccessDeniedException
GetTable answers {"Table": {"Name", "DatabaseName", "TableType", "Parameters": {...},
"StorageDescriptor": {...}, ...}} from `tables` {"db/table": {"metadata_location",
"table_type", "location"}}.

server.log: one entry per request (method, path, headers without the Authorization value,
body, status).
"""
import datetime
import hashlib
import hmac
import http.server
import json
import os
import re
import sys
import threading

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "io"))
import s3util  # noqa: E402

AUTH_RE = re.compile(r"AWS4-HMAC-SHA256 Credential=([^/]+)/(\d{8})/([^/]+)/([^/]+)/aws4_request,"
                     r"\s*SignedHeaders=([^,]+),\s*Signature=([0-9a-f]{64})$")


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def _reply(self, status, obj, body_in=b""):
        body = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/x-amz-json-1.1")
        self.send_header("Content-Length", str(len(body)))
        if status != 200:
            self.send_header("x-amzn-ErrorType", obj.get("__type", ""))
        self.end_headers()
        self.wfile.write(body)
        hdrs = {k.lower(): v for k, v in self.headers.items()}
        if "authorization" in hdrs:
            hdrs["authorization"] = hdrs["authorization"].split(" ")[0] + " <redacted>"
        with self.server.lock:
            self.server.log.append({"method": self.command, "path": self.path, "headers": hdrs,
                                    "body": body_in.decode("utf-8", "replace"),
                                    "status": status})

    def _error(self, status, typ, msg, body_in):
        self._reply(status, {"__type": typ, "message": msg}, body_in)

    def _check_auth(self, body):
        """None when the signature verifies, else (status, type, message)."""
        srv = self.server
        auth = self.headers.get("Authorization")
        if not auth:
            return 403, "AccessDeniedException", "Missing Authentication Token"
        m = AUTH_RE.match(auth)
        if not m:
            return 403, "IncompleteSignatureException", "Authorization header is malformed"
        access, date, region, service, signed, sig = m.groups()
        secret, token = srv.secret, srv.token
        if srv.lookup:  # temporary credentials of tests/io/aws_server.py
            found = srv.lookup(access)
            if found is None or found == "expired":
                return (403, "UnrecognizedClientException",
                        "The security token included in the request is invalid.")
            secret, token = found
        elif access != srv.access:
            return (403, "UnrecognizedClientException",
                    "The security token included in the request is invalid.")
        signed_list = signed.split(";")
        for h in ("host", "x-amz-date", "x-amz-target"):
            if h not in signed_list:
                return 403, "InvalidSignatureException", "header %s is not signed" % h
        if service != "glue" or region != srv.region:
            return (403, "InvalidSignatureException",
                    "Credential should be scoped to a valid region and service glue")
        amz_date = self.headers.get("x-amz-date", "")
        try:
            when = datetime.datetime.strptime(amz_date, "%Y%m%dT%H%M%SZ").replace(
                tzinfo=datetime.timezone.utc)
        except ValueError:
            return 403, "InvalidSignatureException", "bad x-amz-date"
        now = datetime.datetime.now(datetime.timezone.utc)
        if abs((now - when).total_seconds()) > 900 or date != amz_date[:8]:
            return 403, "InvalidSignatureException", "Signature expired"
        hdrs = {}
        for h in signed_list:
            v = self.headers.get(h)
            if v is None:
                return 403, "InvalidSignatureException", "signed header %s missing" % h
            hdrs[h] = v
        payload = hashlib.sha256(body).hexdigest()
        claimed = self.headers.get("x-amz-content-sha256")
        if claimed is not None and claimed != payload:
            return 403, "InvalidSignatureException", "x-amz-content-sha256 does not match the body"
        raw_path, _, query = self.path.partition("?")
        scope = f"{date}/{region}/glue/aws4_request"
        sts = s3util.string_to_sign(self.command, raw_path, query, hdrs, signed_list, payload,
                                    amz_date, scope)
        want = hmac.new(s3util.signing_key(secret, date, region, "glue"), sts.encode(),
                        hashlib.sha256).hexdigest()
        if not hmac.compare_digest(want, sig):
            return (403, "InvalidSignatureException",
                    "The request signature we calculated does not match the signature you "
                    "provided. Check your AWS Secret Access Key and signing method.")
        if getattr(srv, "boto", None) is not None:  # botocore recomputes it too
            sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                                            "io"))
            import botocheck
            ok = botocheck.verify(self.command, self.path, {k.lower(): v for k, v in
                                                            self.headers.items()}, body,
                                  secret, token)
            srv.boto.append(ok)
            if not ok:
                return 403, "InvalidSignatureException", "botocore computes another signature"
        if token is not None and self.headers.get("x-amz-security-token") != token:
            return (403, "UnrecognizedClientException",
                    "The security token included in the request is invalid.")
        return None

    def do_POST(self):
        srv = self.server
        n = int(self.headers.get("Content-Length", "0"))
        body = self.rfile.read(n) if n > 0 else b""
        bad = self._check_auth(body)
        if bad:
            return self._error(*bad, body)
        if self.path != "/":
            return self._error(404, "UnknownOperationException", "unknown path", body)
        if self.headers.get("X-Amz-Target") != "AWSGlue.GetTable":
            return self._error(400, "UnknownOperationException",
                               "unknown target %s" % self.headers.get("X-Amz-Target"), body)
        if self.headers.get("Content-Type") != "application/x-amz-json-1.1":
            return self._error(400, "SerializationException", "bad Content-Type", body)
        try:
            req = json.loads(body)
            db, name = req["DatabaseName"], req["Name"]
        except (ValueError, KeyError, TypeError):
            return self._error(400, "InvalidInputException", "bad GetTable input", body)
        cid = req.get("CatalogId")
        if cid is not None and cid != srv.catalog_id:
            return self._error(400, "AccessDeniedException",
                               "not authorized to access catalog %s" % cid, body)
        if db + "/" + name in srv.denied:
            return self._error(400, "AccessDeniedException",
                               "Insufficient Lake Formation permission(s) on %s" % name, body)
        if not any(k.startswith(db + "/") for k in srv.tables):
            return self._error(400, "EntityNotFoundException", "Database %s not found." % db,
                               body)
        entry = srv.tables.get(db + "/" + name)
        if entry is None:
            return self._error(400, "EntityNotFoundException", "Table %s not found." % name,
                               body)
        params = {"EXTERNAL": "TRUE"}
        if entry.get("table_type") is not None:
            params["table_type"] = entry["table_type"]
        if entry.get("metadata_location") is not None:
            params["metadata_location"] = entry["metadata_location"]
        table = {"Name": name, "DatabaseName": db, "CatalogId": srv.catalog_id,
                 "CreateTime": 1.7e9, "UpdateTime": 1.7e9, "Retention": 0,
                 "TableType": "EXTERNAL_TABLE", "Parameters": params,
                 "StorageDescriptor": {"Columns": [{"Name": "i", "Type": "int"}],
                                       "Location": entry.get("location", ""),
                                       "Compressed": False, "NumberOfBuckets": 0,
                                       "SerdeInfo": {"Parameters": {}},
                                       "StoredAsSubDirectories": False},
                 "PartitionKeys": [], "IsRegisteredWithLakeFormation": False,
                 "VersionId": "0"}
        self._reply(200, {"Table": table}, body)


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, cfg):
        super().__init__(("127.0.0.1", 0), Handler)
        self.access = cfg.get("access", "GLUEKEY")
        self.secret = cfg.get("secret", "GLUESECRET")
        self.token = cfg.get("token")
        self.lookup = cfg.get("lookup")  # access -> (secret, token) | "expired" | None
        self.boto = [] if cfg.get("botocore") else None  # botocore's verdict per request
        self.region = cfg.get("region", "us-east-1")
        self.catalog_id = cfg.get("catalog_id", "123456789012")
        self.tables = cfg.get("tables", {})
        self.denied = set(cfg.get("denied", []))
        self.log = []
        self.lock = threading.Lock()

    def shutdown(self):
        super().shutdown()
        self.server_close()


def start(cfg):
    """Starts a server on 127.0.0.1; returns (server, port)."""
    srv = Server(cfg)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv, srv.server_address[1]


def signed_request(port, access, secret, region, body, target="AWSGlue.GetTable",
                   sign=True):
    """POSTs a GetTable request signed independently of curl (the server's self-test);
    returns (status, parsed JSON)."""
    import http.client
    host = f"127.0.0.1:{port}"
    amz_date = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    headers = {"host": host, "x-amz-date": amz_date, "x-amz-target": target,
               "content-type": "application/x-amz-json-1.1"}
    signed = sorted(headers)
    payload = hashlib.sha256(body).hexdigest()
    scope = f"{amz_date[:8]}/{region}/glue/aws4_request"
    sts = s3util.string_to_sign("POST", "/", "", headers, signed, payload, amz_date, scope)
    sig = hmac.new(s3util.signing_key(secret, amz_date[:8], region, "glue"), sts.encode(),
                   hashlib.sha256).hexdigest()
    if sign:
        headers["authorization"] = (f"AWS4-HMAC-SHA256 Credential={access}/{scope}, "
                                    f"SignedHeaders={';'.join(signed)}, Signature={sig}")
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    conn.request("POST", "/", body=body, headers=headers)
    r = conn.getresponse()
    data = r.read()
    conn.close()
    return r.status, json.loads(data or b"{}")
