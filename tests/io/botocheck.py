"""SigV4 signatures recomputed with botocore (the AWS SDK's own signer), and a re-exec of
the running test under Debian's /usr/bin/python3 when a Debian python3-* module (botocore,
gssapi, thrift) is not importable from the python3 on PATH (e.g. a pyenv build).

verify(method, path, headers, body, secret, token) takes a request as a test server
received it (headers with lower-case names) and answers whether botocore, given the same
secret key, computes the signature the request carries.
"""
import hmac
import os
import re
import sys

AUTH_RE = re.compile(r"AWS4-HMAC-SHA256 Credential=([^/]+)/(\d{8})/([^/]+)/([^/]+)/aws4_request,"
                     r"\s*SignedHeaders=([^,]+),\s*Signature=([0-9a-f]{64})$")


def need_debian_modules(*mods):
    """Imports mods, re-executing under /usr/bin/python3 when they are missing. Returns
    None when importable, else the reason (the caller skips)."""
    missing = []
    for m in mods:
        try:
            __import__(m)
        except ImportError:
            missing.append(m)
    if not missing:
        return None
    deb = "/usr/bin/python3"
    if os.path.realpath(sys.executable) != os.path.realpath(deb) and os.path.exists(deb) \
            and not os.environ.get("ICD_REEXEC"):
        os.environ["ICD_REEXEC"] = "1"
        os.execv(deb, [deb] + sys.argv)
    return "Python modules not installed: " + ", ".join(missing) + \
        " (Debian python3-" + " python3-".join(missing) + "; bash scripts/install-deps.sh)"


def verify(method, path, headers, body, secret, token=None):
    import botocore.auth
    import botocore.awsrequest
    import botocore.credentials
    m = AUTH_RE.match(headers.get("authorization", ""))
    if not m:
        return False
    access, _date, region, service, signed, sig = m.groups()
    signed_list = signed.split(";")
    hdrs = {h: headers[h] for h in signed_list if h in headers}
    if len(hdrs) != len(signed_list):
        return False
    req = botocore.awsrequest.AWSRequest(method=method, url="http://" + headers["host"] + path,
                                         data=body or b"", headers=hdrs)
    creds = botocore.credentials.Credentials(access, secret, token)
    cls = botocore.auth.S3SigV4Auth if service == "s3" else botocore.auth.SigV4Auth
    signer = cls(creds, service, region)
    req.context["timestamp"] = headers["x-amz-date"]
    canonical = signer.canonical_request(req)
    want = signer.signature(signer.string_to_sign(req, canonical), req)
    return hmac.compare_digest(want, sig)
