"""A loopback stand-in for the AWS endpoints of the default credential chain, on one port
(Python standard library; signatures also recomputed with botocore, botocheck.py):

- STS (POST / with a form body): AssumeRoleWithWebIdentity (unsigned; the WebIdentityToken
  must be the expected one) and AssumeRole (SigV4, service sts, signed by a long-term key
  or by credentials this server issued; every signature checked by this file's own
  implementation and by botocore).
- EC2 instance metadata, IMDSv2: PUT /latest/api/token with the TTL header gives a session
  token; GET /latest/meta-data/... without a valid token is 401 (no IMDSv1).
- ECS container credentials: GET /ecs/creds with the expected Authorization header.
- S3 (path style; FakeS3 of s3util.py serving ROOT/BUCKET/KEY): accepts only keys this
  server knows: the long-term ones, and issued temporary ones until they expire (then 400
  ExpiredToken) with their session token.

Every issued credential set is new (AKIDTMP0001, ...) and lives `lifetime` seconds, so a
client that does not refresh fails. `issued` records (source, access key) in order,
`s3_keys` the access key of every S3 request, `sts_signed` AssumeRole signatures accepted.
"""
import datetime
import hashlib
import hmac
import json
import os
import secrets
import sys
import threading
import time
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import botocheck  # noqa: E402
import s3util  # noqa: E402


def iso(t):
    return datetime.datetime.fromtimestamp(t, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


class AwsServer(s3util.FakeS3):
    def __init__(self, root, long_term, lifetime=900, web_token="", ecs_token="",
                 role="icd-role", region="us-east-1"):
        super().__init__(root, region=region)
        self.RequestHandlerClass = Handler
        self.long_term = dict(long_term)  # access -> secret
        self.lifetime = lifetime
        self.web_token = web_token
        self.ecs_token = ecs_token
        self.role = role
        self.temp = {}  # access -> (secret, token, expires)
        self.issued = []
        self.s3_keys = []
        self.sts_signed = 0
        self.imds_tokens = set()
        self.boto = []
        self.lookup = self._lookup
        self.delay = 0.0  # seconds before every S3 answer (long runs)
        self.sts_fail = None  # (status, code, message) to answer STS with

    def _lookup(self, access):
        with self.lock:
            self.s3_keys.append(access)
            if access in self.long_term:
                return self.long_term[access], None
            t = self.temp.get(access)
        if t is None:
            return None
        if time.time() >= t[2]:
            return "expired"
        return t[0], t[1]

    def issue(self, source):
        with self.lock:
            n = len(self.issued) + 1
            access = "AKIDTMP%04d" % n
            secret = "tmpsecret-%d-%s" % (n, secrets.token_hex(8))
            token = "tmptoken-%d-%s" % (n, secrets.token_hex(16))
            exp = int(time.time()) + self.lifetime
            self.temp[access] = (secret, token, exp)
            self.issued.append((source, access))
        return access, secret, token, exp

    def all_secrets(self):
        with self.lock:
            out = [s for s in self.long_term.values()]
            for sk, tok, _ in self.temp.values():
                out += [sk, tok]
        return out + [x for x in (self.web_token, self.ecs_token) if x]


class Handler(s3util._FakeHandler):
    def _json(self, status, obj):
        self._send(status, json.dumps(obj).encode(), "application/json")

    def _sts_error(self, status, code, msg):
        body = (f'<ErrorResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/"><Error>'
                f"<Type>Sender</Type><Code>{code}</Code><Message>{s3util.xml_escape(msg)}"
                f"</Message></Error></ErrorResponse>").encode()
        self._send(status, body, "text/xml")

    def _verify_sts_signature(self, body):
        srv = self.server
        hdrs = {k.lower(): v for k, v in self.headers.items()}
        m = botocheck.AUTH_RE.match(hdrs.get("authorization", ""))
        if not m:
            return "missing or malformed Authorization"
        access, date, region, service, signed, sig = m.groups()
        if service != "sts":
            return "credential scope is not sts"
        with srv.lock:
            secret = srv.long_term.get(access)
            token = None
            if secret is None and access in srv.temp:
                secret, token, exp = srv.temp[access]
                if time.time() >= exp:
                    return "expired"
        if secret is None:
            return "unknown access key"
        if token is not None and hdrs.get("x-amz-security-token") != token:
            return "bad session token"
        signed_list = signed.split(";")
        if "host" not in signed_list or "x-amz-date" not in signed_list:
            return "host/x-amz-date not signed"
        raw_path, _, query = self.path.partition("?")
        payload = hashlib.sha256(body).hexdigest()
        sts = s3util.string_to_sign(self.command, raw_path, query, hdrs, signed_list, payload,
                                    hdrs["x-amz-date"], f"{date}/{region}/sts/aws4_request")
        want = hmac.new(s3util.signing_key(secret, date, region, "sts"), sts.encode(),
                        hashlib.sha256).hexdigest()
        if not hmac.compare_digest(want, sig):
            return "signature mismatch (own implementation)"
        ok = botocheck.verify(self.command, self.path, hdrs, body, secret, token)
        with srv.lock:
            srv.boto.append(ok)
        if not ok:
            return "signature mismatch (botocore)"
        return None

    def do_POST(self):
        srv = self.server
        n = int(self.headers.get("Content-Length", "0"))
        body = self.rfile.read(n) if n else b""
        form = {k: v[0] for k, v in urllib.parse.parse_qs(body.decode()).items()}
        action = form.get("Action")
        with srv.lock:
            srv.requests.append(("POST", self.path, {"Action": action}))
        if srv.sts_fail:
            return self._sts_error(*srv.sts_fail)
        if form.get("Version") != "2011-06-15" or not form.get("RoleArn") or \
                not form.get("RoleSessionName"):
            return self._sts_error(400, "MissingParameter", "RoleArn, RoleSessionName, Version")
        if action == "AssumeRoleWithWebIdentity":
            if form.get("WebIdentityToken") != srv.web_token:
                return self._sts_error(400, "InvalidIdentityToken",
                                       "Couldn't retrieve verification key from your identity "
                                       "provider")
            what = "web-identity"
        elif action == "AssumeRole":
            bad = self._verify_sts_signature(body)
            if bad:
                return self._sts_error(403, "SignatureDoesNotMatch", bad)
            with srv.lock:
                srv.sts_signed += 1
            what = "assume-role"
        else:
            return self._sts_error(400, "InvalidAction", "unknown action")
        ak, sk, tok, exp = srv.issue(what)
        xml = (f'<{action}Response xmlns="https://sts.amazonaws.com/doc/2011-06-15/">'
               f"<{action}Result><Credentials><AccessKeyId>{ak}</AccessKeyId>"
               f"<SecretAccessKey>{sk}</SecretAccessKey><SessionToken>{tok}</SessionToken>"
               f"<Expiration>{iso(exp)}</Expiration></Credentials>"
               f"<AssumedRoleUser><Arn>{form['RoleArn']}/x</Arn></AssumedRoleUser>"
               f"</{action}Result></{action}Response>")
        self._send(200, xml.encode(), "text/xml")

    def do_PUT(self):
        srv = self.server
        if self.path != "/latest/api/token":
            return self._send(404)
        ttl = self.headers.get("X-aws-ec2-metadata-token-ttl-seconds")
        if not ttl or not ttl.isdigit() or not 1 <= int(ttl) <= 21600:
            return self._send(400)
        tok = "imds-" + secrets.token_hex(12)
        with srv.lock:
            srv.imds_tokens.add(tok)
            srv.requests.append(("PUT", self.path, {}))
        self._send(200, tok.encode(), "text/plain")

    def do_GET(self):
        srv = self.server
        path = self.path
        if path.startswith("/latest/"):
            with srv.lock:
                srv.requests.append(("GET", path, {}))
                good = self.headers.get("X-aws-ec2-metadata-token") in srv.imds_tokens
            if not good:
                return self._send(401)
            base = "/latest/meta-data/iam/security-credentials/"
            if path == base:
                return self._send(200, srv.role.encode(), "text/plain")
            if path == base + srv.role:
                ak, sk, tok, exp = srv.issue("imds")
                return self._json(200, {"Code": "Success", "Type": "AWS-HMAC",
                                        "AccessKeyId": ak, "SecretAccessKey": sk, "Token": tok,
                                        "Expiration": iso(exp),
                                        "LastUpdated": iso(time.time())})
            if path == "/latest/meta-data/placement/region":
                return self._send(200, srv.region.encode(), "text/plain")
            return self._send(404)
        if path.startswith("/ecs/"):
            with srv.lock:
                srv.requests.append(("GET", path, {}))
            if self.headers.get("Authorization") != srv.ecs_token:
                return self._json(401, {"message": "bad authorization"})
            ak, sk, tok, exp = srv.issue("ecs")
            return self._json(200, {"AccessKeyId": ak, "SecretAccessKey": sk, "Token": tok,
                                    "Expiration": iso(exp), "RoleArn": "arn:aws:iam::1:role/x"})
        if srv.delay:
            time.sleep(srv.delay)
        return self._handle()

    def do_HEAD(self):
        return self._handle()


def start(root, long_term, **kw):
    srv = AwsServer(root, long_term, **kw)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv, srv.server_address[1]
