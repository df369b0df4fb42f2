"""Writes the seed corpora of the fuzz targets of remote answers and small state files:
fuzz_rest_response (REST catalog config / loadTable / OAuth2 token answers and error
bodies), fuzz_s3_xml (ListObjectsV2 pages, S3 error XML, CreateMultipartUpload answers),
fuzz_http_response (response headers and bodies of ranged requests, open's tail answer,
read-ahead read sequences), fuzz_druid_answer (task submission and task status answers,
Druid error bodies), fuzz_sync_state (sync STATE.json files) and fuzz_catalog_file
(--catalog files and catalogProperties). The shapes follow the services' documented
answers (Iceberg REST OpenAPI, S3 API reference, Druid's task API).
Run: python3 tests/fuzz/gen_remote_seeds.py"""
import json
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.join(HERE, "corpus")


def write(target, seeds):
    out = os.path.join(CORPUS, target)
    os.makedirs(out, exist_ok=True)
    for name, data in seeds.items():
        if isinstance(data, str):
            data = data.encode()
        with open(os.path.join(out, name), "wb") as f:
            f.write(data)


def js(o):
    return json.dumps(o, separators=(",", ":"))


# ---- fuzz_rest_response: byte 0 = kind | status index << 2 -----------------------------
REST_STATUS = {200: 0, 400: 3, 401: 4, 403: 5, 404: 6, 503: 7}
CONFIG, LOAD, TOKEN, LOAD_CRED = 0, 1, 2, 3


def rest(kind, status, body):
    if not isinstance(body, str):
        body = js(body)
    return bytes([kind | REST_STATUS[status] << 2]) + body.encode()


def metadata():
    with open(os.path.join(CORPUS, "fuzz_metadata_json", "v2_refs.json")) as f:
        return json.load(f)


def rest_seeds():
    md = metadata()
    loc = md["location"]
    table = {"metadata-location": loc + "/metadata/00002-abc.metadata.json", "metadata": md,
             "config": {"s3.endpoint": "http://127.0.0.1:9000", "s3.path-style-access": "true",
                        "client.region": "eu-west-1"}}
    vended = dict(table)
    vended["config"] = {}
    vended["storage-credentials"] = [
        {"prefix": "s3://b", "config": {"s3.access-key-id": "ASIAWIDE",
                                        "s3.secret-access-key": "wide", "s3.session-token": "t1"}},
        {"prefix": loc, "config": {"s3.access-key-id": "ASIANARROW",
                                   "s3.secret-access-key": "narrow", "s3.session-token": "t2"}},
        {"prefix": "gs://elsewhere", "config": {"gcs.oauth2.token": "x"}}]
    staged = {"metadata": md, "config": {}}
    err = {"error": {"message": "Table does not exist: ns.t", "type": "NoSuchTableException",
                     "code": 404}}
    return {
        "config_defaults_overrides.bin": rest(CONFIG, 200, {
            "defaults": {"clients": "4", "s3.region": "us-east-1"},
            "overrides": {"warehouse": "s3://bucket/wh", "prefix": "ws1/"},
            "endpoints": ["GET /v1/{prefix}/namespaces/{namespace}/tables/{table}"]}),
        "config_override_uri.bin": rest(CONFIG, 200, {
            "defaults": {}, "overrides": {"uri": "http://other:8181/api/",
                                          "s3.endpoint": "http://minio:9000",
                                          "s3.path-style-access": True, "token": "tok-2",
                                          "header.X-Iceberg-Access-Delegation": "vended"}}),
        "config_numbers_null.bin": rest(CONFIG, 200, {
            "defaults": {"a": 1, "b": 2.5, "c": False, "d": None}, "overrides": None}),
        "config_nested.bin": rest(CONFIG, 200, {"defaults": {"p": {"x": 1}}}),
        "config_bad_uri.bin": rest(CONFIG, 200, {"overrides": {"uri": "ftp://" + "tok-Secret-5eed"}}),
        "config_array.bin": rest(CONFIG, 200, "[1,2,3]"),
        "config_401.bin": rest(CONFIG, 401, {"error": {
            "message": "Not authorized: tok-Secret-5eed", "type": "NotAuthorizedException",
            "code": 401}}),
        "config_503_html.bin": rest(CONFIG, 503, "<html><body>Service Unavailable</body></html>"),
        "load_table.bin": rest(LOAD, 200, table),
        "load_table_vended.bin": rest(LOAD, 200, vended),
        "load_table_staged.bin": rest(LOAD, 200, staged),
        "load_table_no_metadata.bin": rest(LOAD, 200, {"metadata-location": "s3://b/t/m.json"}),
        "load_table_404.bin": rest(LOAD, 404, err),
        "load_table_403.bin": rest(LOAD, 403, {"error": {
            "message": "s3-Secret-feed\nnot allowed", "type": "ForbiddenException", "code": 403}}),
        "load_table_cred.bin": rest(LOAD_CRED, 200, vended),
        "load_table_cred_401.bin": rest(LOAD_CRED, 401, {"error": "invalid_token",
                                                          "error_description": "cred-Secret-77"}),
        "token.bin": rest(TOKEN, 200, {
            "access_token": "eyJhbGciOiJIUzI1NiJ9.e30.sig", "token_type": "bearer",
            "expires_in": 3600,
            "issued_token_type": "urn:ietf:params:oauth:token-type:access_token"}),
        "token_huge_expiry.bin": rest(TOKEN, 200, {"access_token": "a",
                                                   "expires_in": 9223372036854775807}),
        "token_empty.bin": rest(TOKEN, 200, {"access_token": "", "token_type": "bearer"}),
        "token_400.bin": rest(TOKEN, 400, {"error": "invalid_client",
                                           "error_description": "Bad client secret cred-Secret-77"}),
        "error_plain_text.bin": rest(LOAD, 400, "Bad Request\r\n"),
        # token "***" (bit 5): the mask "****" holds it; a 1023-byte location ending in it
        "mask_holds_secret.bin": bytes([32 | LOAD | REST_STATUS[401] << 2]) + js({"error": {
            "message": "bad token *** (***)", "type": "NotAuthorizedException"}}).encode(),
        "secret_at_end_of_location.bin": bytes([32 | LOAD]) + js(
            {"metadata-location": "s3://" + "a" * 1015 + "***"}).encode(),
    }


# ---- fuzz_s3_xml: byte 0 = kind | flags ---------------------------------------------------
S3_STATUS = {400: 0, 403: 1, 404: 2, 409: 3, 500: 4, 503: 5, 301: 6, 200: 7}


def s3_list(keys, prefixes, prefix="wh/db/t/metadata/", truncated=False, token=None):
    x = ['<?xml version="1.0" encoding="UTF-8"?>',
         '<ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">',
         "<Name>b</Name><Prefix>%s</Prefix><KeyCount>%d</KeyCount><MaxKeys>1000</MaxKeys>"
         "<Delimiter>/</Delimiter><IsTruncated>%s</IsTruncated>"
         % (prefix, len(keys) + len(prefixes), "true" if truncated else "false")]
    if token is not None:
        x.append("<NextContinuationToken>%s</NextContinuationToken>" % token)
    for k in keys:
        x.append("<Contents><Key>%s</Key><LastModified>2024-05-01T10:00:00.000Z</LastModified>"
                 "<ETag>&quot;9b2cf535f27731c974343645a3985328&quot;</ETag><Size>4096</Size>"
                 "<StorageClass>STANDARD</StorageClass></Contents>" % k)
    for p in prefixes:
        x.append("<CommonPrefixes><Prefix>%s</Prefix></CommonPrefixes>" % p)
    x.append("</ListBucketResult>")
    return "".join(x)


def s3_error(code, msg, extra=""):
    return ('<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>%s</Code><Message>%s</Message>'
            "%s<RequestId>4442587FB7D0A2F9</RequestId><HostId>abc=</HostId></Error>"
            % (code, msg, extra))


def s3_seeds():
    md = "wh/db/t/metadata/"
    keys = [md + "v1.metadata.json", md + "v2.metadata.json", md + "version-hint.text",
            md + "snap-1-1-a&amp;b.avro", md]
    def lst(flags, body):
        return bytes([flags]) + body.encode()
    def err(status, body, head=False):
        return bytes([2 | S3_STATUS[status] << 2 | (32 if head else 0)]) + body.encode()
    return {
        "list_metadata.bin": lst(4 | 8, s3_list(keys, [md + "sub/"])),
        "list_truncated.bin": lst(4 | 8, s3_list(keys[:2], [], truncated=True,
                                                  token="1ueGcxLPRx1Tr/XYExHnhbYLgveDs2J/wm36Hy4vbOwM=")),
        "list_truncated_no_token.bin": lst(4 | 8, s3_list(keys[:1], [], truncated=True)),
        "list_truncated_empty_token.bin": lst(4 | 8, s3_list(keys[:1], [], truncated=True, token="")),
        "list_first_page.bin": lst(4, s3_list(keys, [], truncated=True, token="t")),
        "list_root.bin": lst(8, s3_list(["a", "b/c", "d/"], ["wh/", "x/"], prefix="")),
        "list_unclosed.bin": lst(4 | 8, "<ListBucketResult><Contents><Key>wh/db/t/metadata/v1"),
        "list_entities.bin": lst(4 | 8, s3_list([md + "a&#47;b", md + "&lt;x&gt;", md + "&#x41;"], [])),
        "error_no_such_key.bin": err(404, s3_error("NoSuchKey", "The specified key does not exist.",
                                                   "<Key>wh/t/v9.metadata.json</Key>")),
        "error_signature.bin": err(403, s3_error("SignatureDoesNotMatch",
                                                 "The request signature we calculated does not "
                                                 "match the signature you provided.\nCheck your key")),
        "error_slow_down.bin": err(503, s3_error("SlowDown", "Please reduce your request rate.")),
        "error_redirect.bin": err(301, s3_error("PermanentRedirect", "Use the endpoint",
                                                "<Endpoint>b.s3.eu-west-1.amazonaws.com</Endpoint>")),
        "error_head_403.bin": err(403, "", head=True),
        "error_html.bin": err(500, "<html><body><h1>500 Internal Server Error</h1></body></html>"),
        "multipart.bin": bytes([3]) + ('<?xml version="1.0" encoding="UTF-8"?>'
                                       "<InitiateMultipartUploadResult><Bucket>b</Bucket>"
                                       "<Key>k</Key><UploadId>VXBsb2FkIElE&amp;x</UploadId>"
                                       "</InitiateMultipartUploadResult>").encode(),
        "keys_walk.bin": bytes([3]) + s3_list(keys, []).encode(),
    }


# ---- fuzz_http_response ----------------------------------------------------------------------
def u16(v):
    return struct.pack("<H", v)


def http(mode, params, headers, chunks):
    assert len(params) == 8
    h = "".join(line + "\r\n" for line in headers) + "\r\n"
    return bytes([mode]) + params + h.encode() + bytes(chunks)


def http_seeds():
    ranged = u16(100) + u16(4095) + u16(0) + u16(0)  # [9700, 9700+4096)
    suffix = u16(0) + u16(0) + u16(4095) + u16(0)    # the last 4096 bytes
    buffered = u16(0) + u16(0) + u16(2047) + u16(0)  # at most 2048 bytes
    def reads(size, ra_pages, keep, recs):  # recs: (offset, length, fail)
        p = struct.pack("<I", size)[:3] + u16(ra_pages - 1) + u16(keep) + b"\0"
        for off, n, fail in recs:
            p += struct.pack("<I", off)[:3] + u16(n // 4) + bytes([0xf0 if fail else 0])
        return bytes([3]) + p
    return {
        "ranged_206.bin": http(0, ranged, ["HTTP/1.1 206 Partial Content",
                                           "Content-Range: bytes 9700-13795/1000000",
                                           "Content-Length: 4096", 'ETag: "9b2cf535f277"'],
                               [0xff, 0xff]),
        "ranged_200_ignored.bin": http(0, ranged, ["HTTP/1.1 200 OK", "Content-Length: 20000"],
                                       [0xff] * 5),
        "ranged_short.bin": http(0, ranged, ["HTTP/1.1 206 Partial Content",
                                             "Content-Range: bytes 9700-13795/1000000",
                                             "Content-Length: 100"], [99]),
        "ranged_wrong_start.bin": http(0, ranged, ["HTTP/1.1 206 Partial Content",
                                                   "Content-Range: bytes 9000-13095/1000000"],
                                       [0xff, 0x80]),
        "ranged_continue.bin": http(0, ranged, ["HTTP/1.1 100 Continue", "",
                                                "HTTP/1.1 206 Partial Content",
                                                "content-range: bytes 9700-13795/*"], [0xff]),
        "ranged_503.bin": http(0, ranged, ["HTTP/1.1 503 Slow Down", "Content-Type: application/xml"],
                               list(b"<Error><Code>SlowDown</Code></Error>")),
        "suffix_206.bin": http(1, suffix, ["HTTP/1.1 206 Partial Content",
                                           "Content-Range: bytes 995904-999999/1000000"],
                               [0xff, 0xff]),
        "suffix_small_file.bin": http(1, suffix, ["HTTP/1.1 206 Partial Content",
                                                  "Content-Range: bytes 0-640/641"], [255, 255, 128]),
        "suffix_inconsistent.bin": http(1, suffix, ["HTTP/1.1 206 Partial Content",
                                                    "Content-Range: bytes 900-99999/1000"], [0xff]),
        "suffix_200_no_length.bin": http(1, suffix, ["HTTP/1.1 200 OK"], [200, 200]),
        "suffix_200_full.bin": http(1, suffix, ["HTTP/1.1 200 OK"], [0xff, 0xff]),
        "suffix_416.bin": http(1, suffix, ["HTTP/1.1 416 Range Not Satisfiable",
                                           "Content-Range: bytes */0"], []),
        "suffix_empty_object.bin": http(1, suffix, ["HTTP/1.1 206 Partial Content",
                                                    "Content-Range: bytes 0-0/0"], [0]),
        "buffered_json.bin": http(2, buffered, ["HTTP/1.1 200 OK", "Content-Length: 300",
                                                "Content-Type: application/json"], [99, 99, 99]),
        "buffered_overflow.bin": http(2, buffered, ["HTTP/1.1 200 OK"], [0xff]),
        "headers_odd.bin": http(0, ranged, ["HTTP/2 206", "Content-Length: -5",
                                            "Content-Length: 99999999999999999999999",
                                            "Content-Range: bytes 18446744073709551615-0/18446744073709551615",
                                            "ETag:" + " " * 200 + "x" * 300], [0xff]),
        "reads_sequential.bin": reads(1000000, 16, 65535, [(0, 1024, 0), (4096, 1024, 0),
                                                           (8192, 16384, 0), (70000, 400, 0)]),
        "reads_jumps.bin": reads(1040000, 32, 0, [(900000, 16000, 0), (10, 40, 0),
                                                  (800000, 200000, 0), (500000, 4, 1),
                                                  (500000, 4, 0)]),
        "reads_near_end.bin": reads(70000, 1, 400, [(23000, 400, 0), (23300, 16000, 0), (0, 4, 0)]),
        "reads_tiny_file.bin": reads(10, 1, 2, [(0, 4, 0), (1, 4, 0), (3, 4, 0)]),
    }


# ---- fuzz_druid_answer: byte 0 = request | status index << 1 | retried << 4 ------------
DRUID_STATUS = {200: 0, 202: 2, 400: 3, 401: 4, 404: 5, 500: 6, 503: 7}


def druid(submit, status, body, retried=False):
    if not isinstance(body, str):
        body = js(body)
    return bytes([(0 if submit else 1) | DRUID_STATUS[status] << 1 | (16 if retried else 0)]) + \
        body.encode()


def druid_seeds():
    return {
        "submit_msq.bin": druid(True, 200, {"taskId": "query-6c1f1c2e-2024", "state": "RUNNING"}),
        "submit_native.bin": druid(True, 200, {"task": "index_parallel_wiki_2024-05-01T10:00:00.000Z"}),
        "submit_202.bin": druid(True, 202, {"taskId": "query-1"}),
        "submit_empty_id.bin": druid(True, 200, {"taskId": ""}),
        "submit_no_id.bin": druid(True, 200, {"state": "RUNNING"}),
        "submit_druid_exception.bin": druid(True, 400, {
            "error": "druidException", "errorCode": "invalidInput", "persona": "USER",
            "category": "INVALID_INPUT",
            "errorMessage": "Encountered \"REPLACE\" at line 1, column 1.\nWas expecting one of:",
            "context": {"sourceType": "sql"}}),
        "submit_old_error.bin": druid(True, 500, {
            "error": "Unknown exception", "errorMessage": "java.lang.RuntimeException: boom",
            "errorClass": "java.lang.RuntimeException", "host": "broker:8082"}, retried=True),
        "submit_overlord_error.bin": druid(True, 400, {"error": "Task[x] already exists!"}),
        "submit_401_html.bin": druid(True, 401, "<html>\r\n<head><title>Error 401 Unauthorized</title>"),
        "submit_503_empty.bin": druid(True, 503, "", retried=True),
        "status_running.bin": druid(False, 200, {"task": "query-1", "status": {
            "id": "query-1", "type": "query_controller", "createdTime": "2024-05-01T10:00:00.000Z",
            "queueInsertionTime": "1970-01-01T00:00:00.000Z", "statusCode": "RUNNING",
            "status": "RUNNING", "runnerStatusCode": "RUNNING", "duration": -1,
            "location": {"host": "mm", "port": 8100, "tlsPort": -1}, "dataSource": "wiki",
            "errorMsg": None}}),
        "status_success.bin": druid(False, 200, {"task": "query-1", "status": {
            "id": "query-1", "statusCode": "SUCCESS", "status": "SUCCESS", "duration": 12034}}),
        "status_failed.bin": druid(False, 200, {"task": "query-1", "status": {
            "id": "query-1", "statusCode": "FAILED", "status": "FAILED",
            "errorMsg": "java.lang.RuntimeException: Segment allocation failed\n\tat org.apache..."}}),
        "status_old_shape.bin": druid(False, 200, {"status": {"status": "WAITING"}}),
        "status_missing.bin": druid(False, 200, {"status": {"statusCode": 3}}),
        "status_404.bin": druid(False, 404, {"error": "Cannot find any task with id: [query-2]"}),
        "status_array.bin": druid(False, 200, "[]"),
    }


# ---- fuzz_sync_state: byte 0 = flags (1: record and save, 2: the first entry) ----------------
def state_seeds():
    good = {"version": 1, "dataSources": {
        "wikipedia": {"snapshotId": 4883493458016367612, "ingestedAt": "2024-05-01T10:00:00.000Z",
                      "table": "ns.wiki", "tasks": ["query-1", "query-2"]},
        "events": {"snapshotId": -1, "ingestedAt": "2024-05-02T00:00:00.000Z", "table": "db.ev",
                   "tasks": []}}}
    def st(flags, text):
        return bytes([flags]) + (text if isinstance(text, str) else json.dumps(good, indent=2)).encode()
    return {
        "state.bin": st(0, None),
        "state_record_new.bin": st(1, None),
        "state_record_first.bin": st(3, None),
        "state_empty_sources.bin": st(1, '{"version":1,"dataSources":{}}'),
        "state_version2.bin": st(0, '{"version":2,"dataSources":{}}'),
        "state_duplicate.bin": st(0, '{"version":1,"dataSources":{"a":{"snapshotId":1},'
                                     '"a":{"snapshotId":2}}}'),
        "state_bad_entry.bin": st(0, '{"version":1,"dataSources":{"a":{"snapshotId":"1"}}}'),
        "state_no_table.bin": st(3, '{"version":1,"dataSources":{"a":{"snapshotId":7,"table":7}}}'),
        "state_truncated.bin": st(0, '{"version":1,"dataSources":{"a":{"snaps'),
        "state_empty_file.bin": st(1, ""),
        "state_unicode_key.bin": st(3, r'{"version":1,"dataSources":{"d\u00e9j\u00e0 vu \ud83d\ude00":'
                                       '{"snapshotId":9223372036854775807}}}'),
    }


# ---- fuzz_catalog_file: byte 0 = TABLE index (none, ns.t, db.sch.tbl, bad) ---------------
def catalog_seeds():
    def cat(table, doc):
        return bytes([table]) + (doc if isinstance(doc, str) else json.dumps(doc)).encode()
    rest = {"type": "rest", "catalogUri": "http://localhost:8181/api/catalog",
            "catalogProperties": {"warehouse": "quickstart", "credential": "root:s3cr3t",
                                  "scope": "PRINCIPAL_ROLE:ALL", "prefix": "/ws/",
                                  "header.X-Iceberg-Access-Delegation": "vended-credentials",
                                  "s3.endpoint": "http://minio:9000", "s3.path-style-access": True,
                                  "client.region": "us-east-1"}}
    rest_sigv4 = {"type": "rest", "catalogUri": "https://glue.eu-west-1.amazonaws.com/iceberg",
                  "catalogProperties": {"rest.sigv4-enabled": "true", "rest.signing-name": "glue",
                                        "rest.signing-region": "eu-west-1",
                                        "warehouse": "123456789012"}}
    hive = {"type": "hive", "warehousePath": "s3a://bucket/warehouse",
            "catalogUri": "thrift://hms1:9083,thrift://hms2:9083",
            "catalogProperties": {"hive.metastore.client.socket.timeout": "600s",
                                  "hive.metastore.connect.retries": 3,
                                  "fs.s3a.access.key": "AKIAEXAMPLE", "fs.s3a.secret.key": "x",
                                  "fs.s3a.endpoint": "http://minio:9000",
                                  "fs.s3a.path.style.access": "true"}}
    hive_krb = {"type": "hive", "warehousePath": "/w", "catalogUri": "thrift://hms:9083",
                "catalogProperties": {"hive.metastore.sasl.enabled": True,
                                      "hadoop.security.authentication": "kerberos",
                                      "hive.metastore.kerberos.principal": "hive/_HOST@EXAMPLE.COM",
                                      "principal": "druid@EXAMPLE.COM",
                                      "keytab": "/etc/security/keytabs/druid.keytab",
                                      "hive.metastore.use.SSL": "true",
                                      "hive.metastore.truststore.path": "/etc/ssl/certs/ca-certificates.crt"}}
    glue = {"type": "glue", "catalogProperties": {"glue.id": "123456789012",
                                                  "glue.endpoint": "https://glue.eu-west-1.amazonaws.com/",
                                                  "client.region": "eu-west-1"}}
    local = {"type": "local", "warehousePath": "warehouse", "caseSensitive": False}
    spec = {"type": "index_parallel", "spec": {"ioConfig": {"type": "index_parallel", "inputSource": {
        "type": "iceberg", "namespace": "ns", "tableName": "t",
        "icebergCatalog": {"type": "local", "warehousePath": "/w"},
        "warehouseSource": {"type": "local"}}, "inputFormat": {"type": "parquet"}},
        "dataSchema": {"dataSource": "t", "timestampSpec": {"column": "ts"},
                       "dimensionsSpec": {"dimensions": []}, "granularitySpec": {}}}}
    source = spec["spec"]["ioConfig"]["inputSource"]
    return {
        "rest.bin": cat(1, rest),
        "rest_sigv4.bin": cat(2, rest_sigv4),
        "rest_bad_uri.bin": cat(1, {"type": "rest", "catalogUri": "thrift://x:1"}),
        "rest_nested_props.bin": cat(1, {"type": "rest", "catalogUri": "http://x",
                                         "catalogProperties": {"a": {"b": 1}}}),
        "rest_secret_mask.bin": cat(1, {"type": "rest", "catalogUri": "ftp://***",
                                        "catalogProperties": {"token": "***"}}),
        "hive.bin": cat(1, hive),
        "hive_kerberos_tls.bin": cat(1, hive_krb),
        "hive_bad_timeout.bin": cat(1, {"type": "hive", "warehousePath": "/w",
                                        "catalogUri": "thrift://h:9083",
                                        "catalogProperties": {"hive.metastore.client.socket.timeout": "10 fortnights"}}),
        "glue.bin": cat(1, glue),
        "glue_unsupported.bin": cat(1, {"type": "glue", "catalogProperties": {
            "client.assume-role.arn": "arn:aws:iam::1:role/r"}}),
        "local.bin": cat(1, local),
        "local_no_table.bin": cat(0, local),
        "local_bad_table.bin": cat(3, local),
        "unknown_type.bin": cat(1, {"type": "nessie", "uri": "http://x"}),
        "input_source.bin": cat(0, source),
        "input_source_with_table.bin": cat(1, source),
        "spec.bin": cat(0, spec),
        "not_object.bin": cat(0, "[1]"),
        "invalid.bin": cat(0, '{"type": "local", '),
    }


def main():
    write("fuzz_rest_response", rest_seeds())
    write("fuzz_s3_xml", s3_seeds())
    write("fuzz_http_response", http_seeds())
    write("fuzz_druid_answer", druid_seeds())
    write("fuzz_sync_state", state_seeds())
    write("fuzz_catalog_file", catalog_seeds())


if __name__ == "__main__":
    main()
