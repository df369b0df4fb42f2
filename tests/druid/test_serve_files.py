#!/usr/bin/env python3
"""`icedruid serve` serving materialized files by content address (issue 13 items 4-5,
issue 20 item 5's Range resume), on a table written snapshot by snapshot with
tests/tools/icewriter:

  S1  day 1 (one file), day 2 (files A and B)
  S2  position deletes in A           -> A materialized, day 1 and B raw
  S3  one more position delete in A   -> A's materialized file has another name

Checked against real clients (Python's http.client / urllib, the JDK's HttpURLConnection
resuming like Druid's HttpEntity, DuckDB read_parquet and hyparquet reading the bytes):
  - /spec is the user's spec with a `combining` source: a `local` delegate with exactly the
    raw files and an `http` delegate with /files/TABLE/SNAPSHOT/NAME URLs; inputFormat and
    dataSchema unchanged; the served name is `stage`'s name of that file;
  - GET: Content-Length, ETag = the content hash, Accept-Ranges; HEAD: the same headers, no
    body; If-None-Match 304; Range bytes=N-, bytes=N-M, bytes=-K 206 with Content-Range;
    an unsatisfiable range 416 with `bytes */SIZE`; all of them one after the other over
    one kept-alive connection (a request with a body: answered, connection closed);
  - a download cut at byte K, a commit (S3), the server restarted: `Range: bytes=K-` gives the
    rest of the original bytes (sha256 of the whole equals the first download), both from
    the restarted server's cache and from a second server with an empty cache that never
    planned S2 (regenerated from S2) — and the JDK's HttpURLConnection resumes the same way;
  - the served bytes are the bytes `stage` writes for that file; read back by DuckDB and
    hyparquet together with the raw files they equal `icedruid scan`;
  - S2 expired (metadata rewritten without it): 410 Gone for its URLs on both servers, even
    for a file in the cache; never another file; an unknown name 404; the cache bound
    (--cache-max-bytes) evicts the least recently served file;
  - phase 2: `diff --emit native` S1 -> S2 lists, for the one touched day, exactly B (raw)
    and A's served URL in a combining source with the user's inputFormat and no day-1 file;
    with --stage-to the staged file has the served name and bytes; --rows keeps the
    NDJSON splits.
Exit 77 when the npm readers are missing; the Java check is skipped (said so) without javac.
"""
import datetime as dt
import hashlib
import http.client
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.parse

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.abspath(os.environ.get("ICD_SOURCE_DIR", os.path.join(HERE, "..", "..")))
BUILD = os.environ.get("ICD_BUILD_DIR", os.path.join(SRC, "build"))
ICEDRUID = os.environ.get("ICEDRUID", os.path.join(SRC, "build", "icedruid"))
sys.path.insert(0, os.path.join(SRC, "tests", "tools"))
sys.path.insert(0, HERE)
os.environ.setdefault("ICEDRUID", ICEDRUID)
import stage_check as sc  # noqa: E402
from icewriter.iceberg import NestedField, PartitionField, PartitionSpec, Schema, Table  # noqa: E402

UTC = dt.timezone.utc
PREFIX = "/tmp/icedruid-serve-files-test/wh"
failures = []
checks = [0]


def check(cond, msg):
    checks[0] += 1
    print(("ok: " if cond else "FAIL: ") + msg)
    if not cond:
        failures.append(msg)


SCHEMA = Schema([
    NestedField(1, "id", "long", required=True),
    NestedField(2, "ts", "timestamptz", required=True),
    NestedField(3, "name", "string"),
    NestedField(4, "amount", "double"),
])


def rows(day, ids):
    base = dt.datetime(2024, 6, day, tzinfo=UTC)
    return [(i, base + dt.timedelta(seconds=7 * k), "name-%d-%s" % (i, "x" * (i % 13)), i * 0.25)
            for k, i in enumerate(ids)]


def write_spec(path, wh):
    spec = {"type": "index_parallel", "spec": {
        "dataSchema": {"dataSource": "sales",
                       "timestampSpec": {"column": "ts", "format": "auto"},
                       "dimensionsSpec": {"dimensions": [{"type": "long", "name": "id"}, "name"]},
                       "granularitySpec": {"segmentGranularity": "day", "rollup": False}},
        "ioConfig": {"type": "index_parallel",
                     "inputSource": {"type": "iceberg", "tableName": "sales", "namespace": "shop",
                                     "icebergCatalog": {"type": "local", "warehousePath": wh},
                                     "warehouseSource": {"type": "local"}},
                     "inputFormat": {"type": "parquet", "binaryAsString": False}},
        "tuningConfig": {"type": "index_parallel", "maxNumConcurrentSubTasks": 2}}}
    with open(path, "w") as f:
        json.dump(spec, f)
    return spec


class Server:
    def __init__(self, spec, remap, cache, *extra):
        self.p = subprocess.Popen([ICEDRUID, "serve", "--spec", spec, *remap, "--listen", "127.0.0.1:0",
                                   "--cache-dir", cache, "--metadata-max-age", "0", "--max-streams", "2",
                                   *extra],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.url = self.p.stdout.readline().strip()
        u = urllib.parse.urlparse(self.url)
        self.host, self.port = u.hostname, u.port

    def request(self, method, path, headers=None):
        c = http.client.HTTPConnection(self.host, self.port, timeout=60)
        c.request(method, path, headers=headers or {})
        r = c.getresponse()
        body = r.read()
        c.close()
        return r.status, {k.lower(): v for k, v in r.getheaders()}, body

    def stop(self):
        self.p.send_signal(signal.SIGTERM)
        try:
            _, err = self.p.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            self.p.kill()
            _, err = self.p.communicate()
        return err


def path_of(url):
    return urllib.parse.urlparse(url).path


def sha(b):
    return hashlib.sha256(b).hexdigest()


def java_resume(tmp, url, k):
    if not shutil.which("javac") or not shutil.which("java"):
        print("skip (said so): the JDK HttpURLConnection check needs javac/java (scripts/install-deps.sh)")
        return None
    from java_oracle import compile_oracle
    out = compile_oracle(BUILD, ["HttpRangeResume"])
    r = subprocess.run(["java", "-cp", out, "HttpRangeResume", url, str(k)], capture_output=True,
                       text=True, timeout=120)
    return r.stdout.split() if r.returncode == 0 else ["error", r.stderr[-300:]]


def main():
    if not os.path.exists(ICEDRUID):
        print("skip: icedruid not built")
        return 77
    if not sc.node_ready():
        print("skip: npm readers missing (bash scripts/node-deps.sh)")
        return 77
    tmp = tempfile.mkdtemp(prefix="icd-test-serve-files-")
    servers = []
    try:
        wh = os.path.join(tmp, "wh")
        tdir = os.path.join(wh, "shop", "sales")
        spec_path = os.path.join(tmp, "sales.spec.json")
        user_spec = write_spec(spec_path, wh)
        remap = ["--remap", PREFIX + "=" + wh]
        t = Table.create(tdir, PREFIX + "/shop/sales", SCHEMA,
                         PartitionSpec([PartitionField(2, 1000, "ts_day", "day")]),
                         properties={"write.delete.mode": "merge-on-read"})
        d1 = t.write_data(rows(1, range(0, 3000)), name="day1")[0]
        a = t.write_data(rows(2, range(3000, 7000)), name="a")[0]
        b = t.write_data(rows(2, range(7000, 8000)), name="b")[0]
        s1 = t.append([d1, a, b])
        s2 = t.row_delta(deletes=[t.write_position_deletes([(a, 1), (a, 5), (a, 3999)])])
        local = lambda f: f.path.replace(PREFIX, wh)  # noqa: E731

        # ---- /spec: combining(local raw, http served), the user's inputFormat
        cache_a = os.path.join(tmp, "cache-a")
        srv = Server(spec_path, remap, cache_a)
        servers.append(srv)
        check(srv.url.startswith("http://127.0.0.1:"), "serve started at %s" % srv.url)
        st, _, body = srv.request("GET", "/spec")
        doc = json.loads(body)
        src = doc["spec"]["ioConfig"]["inputSource"]
        check(st == 200 and src["type"] == "combining" and len(src["delegates"]) == 2,
              "/spec reads through a combining input source: %s" % json.dumps(src)[:300])
        raw_d, http_d = src["delegates"]
        check(raw_d["type"] == "local" and sorted(raw_d["files"]) == sorted([local(d1), local(b)]),
              "the local delegate lists exactly the raw files (day 1, B)")
        uris = http_d.get("uris", [])
        check(http_d["type"] == "http" and len(uris) == 1 and
              path_of(uris[0]).startswith("/files/shop.sales/%d/icd-" % s2.snapshot_id),
              "the http delegate names table, snapshot and content hash: %s" % uris)
        check(doc["spec"]["ioConfig"]["inputFormat"] == user_spec["spec"]["ioConfig"]["inputFormat"]
              and doc["spec"]["dataSchema"] == user_spec["spec"]["dataSchema"],
              "inputFormat and dataSchema are the user's")
        fpath = path_of(uris[0])
        name = fpath.rsplit("/", 1)[1]
        st, h, full = srv.request("GET", fpath)
        check(st == 200 and int(h.get("content-length", -1)) == len(full) > 1000 and full[:4] == b"PAR1"
              and full[-4:] == b"PAR1", "GET: a whole Parquet file with Content-Length (%d bytes)" % len(full))
        etag = h.get("etag")
        check(etag == '"%s"' % name.rsplit(".", 1)[0] and h.get("accept-ranges") == "bytes",
              "ETag is the content hash, Accept-Ranges: bytes (%s)" % etag)
        st, hh, hb = srv.request("HEAD", fpath)
        check(st == 200 and hb == b"" and hh.get("content-length") == str(len(full)) and hh.get("etag") == etag,
              "HEAD: the same length and tag, no body")
        st, _, nb = srv.request("GET", fpath, {"If-None-Match": etag})
        check(st == 304 and nb == b"", "If-None-Match with the tag: 304")
        st, _, _ = srv.request("GET", fpath, {"If-None-Match": '"other"'})
        check(st == 200, "If-None-Match with another tag: 200")
        n = len(full)
        for rng, lo, hi in (("bytes=100-", 100, n - 1), ("bytes=10-19", 10, 19), ("bytes=-8", n - 8, n - 1)):
            st, rh, rb = srv.request("GET", fpath, {"Range": rng})
            check(st == 206 and rb == full[lo:hi + 1] and rh.get("content-range") == "bytes %d-%d/%d" % (lo, hi, n),
                  "Range %s: 206 with Content-Range %s" % (rng, rh.get("content-range")))
        st, rh, _ = srv.request("GET", fpath, {"Range": "bytes=%d-" % n})
        check(st == 416 and rh.get("content-range") == "bytes */%d" % n, "unsatisfiable range: 416 bytes */SIZE")
        st, _, rb = srv.request("GET", fpath, {"Range": "bytes=0-1,5-6"})
        check(st == 200 and rb == full, "several ranges: the whole file (Range ignored)")

        # keep-alive: one connection carries GET, ranged GET, HEAD, 304 and 416 in turn
        # (Druid's http source and the JDK reuse connections; libmicrohttpd closes after a
        # response queued in a request's first callback)
        kc = http.client.HTTPConnection(srv.host, srv.port, timeout=60)
        seq = [("GET", {}, 200, full), ("GET", {"Range": "bytes=%d-" % (n // 2)}, 206, full[n // 2:]),
               ("HEAD", {}, 200, b""), ("GET", {"If-None-Match": etag}, 304, b""),
               ("GET", {"Range": "bytes=%d-" % n}, 416, None), ("GET", {"Range": "bytes=-16"}, 206, full[-16:]),
               ("GET", {}, 200, full)]
        local_ports, closes, bad = set(), [], []
        for method, hdrs, want_st, want_body in seq:
            kc.request(method, fpath, headers=hdrs)
            kr = kc.getresponse()
            kb = kr.read()
            local_ports.add(kc.sock.getsockname()[1] if kc.sock else None)
            if (kr.getheader("Connection") or "").lower() == "close":
                closes.append((method, kr.status))
            if kr.status != want_st or (want_body is not None and kb != want_body):
                bad.append((method, hdrs, kr.status, len(kb)))
        kc.close()
        check(len(local_ports) == 1 and None not in local_ports and not closes and not bad,
              "keep-alive: %d requests (200, 206, HEAD, 304, 416) over one connection, right bytes "
              "(ports %s, closes %s, wrong %s)" % (len(seq), local_ports, closes, bad))
        kc = http.client.HTTPConnection(srv.host, srv.port, timeout=60)
        kc.request("GET", fpath, body=b"x" * 10, headers={"Content-Length": "10"})
        kr = kc.getresponse()
        kb = kr.read()
        check(kr.status == 200 and kb == full and (kr.getheader("Connection") or "").lower() == "close",
              "a request with a body (never read) is answered and its connection closed")
        kc.close()

        # the served bytes are stage's bytes for the same file (shared names)
        stage_dir = os.path.join(tmp, "staged")
        sdoc, summ, _ = sc.stage(spec_path, stage_dir, remap)
        staged = [f for f in sdoc["spec"]["ioConfig"]["inputSource"]["files"] if f.startswith(stage_dir)]
        check(len(staged) == 1 and os.path.basename(staged[0]) == name and open(staged[0], "rb").read() == full,
              "stage writes the same name and bytes as serve")

        # independent readers: raw files + the served bytes equal scan (S2 is current)
        got = os.path.join(tmp, "got", name)
        os.makedirs(os.path.dirname(got))
        with open(got, "wb") as f:
            f.write(full)
        problems, counted = sc.compare_table(tdir, spec_path, [local(d1), local(b), got], remap)
        check(not problems, "DuckDB and hyparquet read raw + served files = scan %s %s" % (counted, problems))

        # ---- cut at byte K, commit S3, restart, resume with Range: bytes=K-
        k = n // 3
        c = http.client.HTTPConnection(srv.host, srv.port, timeout=60)
        c.request("GET", fpath)
        r = c.getresponse()
        head = r.read(k)
        c.close()  # the download is cut
        check(len(head) == k and head == full[:k], "a download cut at byte %d" % k)
        s3 = t.row_delta(deletes=[t.write_position_deletes([(a, 7)])])
        err = srv.stop()
        servers.remove(srv)
        check("stopped" in err, "the server stopped (SIGTERM)")
        srv = Server(spec_path, remap, cache_a)
        servers.append(srv)
        st, _, body = srv.request("GET", "/spec")
        new_uris = json.loads(body)["spec"]["ioConfig"]["inputSource"]["delegates"][1]["uris"]
        check(path_of(new_uris[0]) != fpath and ("/%d/" % s3.snapshot_id) in new_uris[0],
              "after the commit the spec names S3's file (another name)")
        st, rh, rest = srv.request("GET", fpath, {"Range": "bytes=%d-" % k})
        check(st == 206 and sha(head + rest) == sha(full),
              "restarted server: Range bytes=%d- resumes the original bytes (sha256 %s)" % (k, sha(head + rest)[:16]))

        # a second instance with an empty cache, planned at S3, answers S2's URL
        cache_b = os.path.join(tmp, "cache-b")
        srv_b = Server(spec_path, remap, cache_b, "--cache-max-bytes", "4096")
        servers.append(srv_b)
        st, rh, rest_b = srv_b.request("GET", fpath, {"Range": "bytes=%d-" % k})
        check(st == 206 and sha(head + rest_b) == sha(full) and os.path.exists(os.path.join(cache_b, name)),
              "a second server that never planned S2 regenerates the same bytes (sha256 equal)")
        st, _, again = srv_b.request("GET", fpath)
        check(st == 200 and again == full, "and serves the whole file from its cache")

        jr = java_resume(tmp, srv_b.url + fpath, k)
        if jr is not None:
            check(len(jr) == 5 and jr[0] == "206" and jr[1] == "bytes" and jr[2] == "bytes_%d-%d/%d" % (k, n - 1, n)
                  and jr[4] == sha(full[k:]),
                  "JDK HttpURLConnection resuming like Druid's HttpEntity gets the rest: %s" % jr)

        st, _, _ = srv_b.request("GET", fpath.rsplit("/", 1)[0] + "/icd-" + name[4:13] + "0" * 32 + ".parquet")
        check(st == 404, "an unknown name of a live snapshot: 404")

        # ---- S2 expired: 410, also for a cached file; never another file
        t.snapshots = [s for s in t.snapshots if s.snapshot_id != s2.snapshot_id]
        t.snapshot_log = [e for e in t.snapshot_log if e.get("snapshot-id") != s2.snapshot_id]
        t._write_metadata()
        for label, s in (("restarted", srv), ("second", srv_b)):
            st, _, body = s.request("GET", fpath)
            check(st == 410 and b"no longer exists" in body and b"PAR1" not in body,
                  "%s server: 410 Gone for the expired snapshot's file" % label)
        st, _, _ = srv_b.request("HEAD", fpath)
        check(st == 410, "HEAD of it: 410")
        st, _, cur = srv_b.request("GET", path_of(new_uris[0]))
        check(st == 200 and cur[:4] == b"PAR1", "the current snapshot's file is still served")
        new_name = path_of(new_uris[0]).rsplit("/", 1)[1]
        check(sorted(x for x in os.listdir(cache_b) if not x.startswith(".")) == [new_name],
              "--cache-max-bytes 4096: writing it evicted the older file (the cache is bounded)")
        st, _, body = srv_b.request("GET", "/metrics")
        check(st == 200 and b'icedruid_serve_files_total{result="gone"} 2' in body and
              b"icedruid_serve_cache_evictions_total 1" in body, "/metrics counts file outcomes and evictions")
        for s in list(servers):
            s.stop()
            servers.remove(s)

        # ---- phase 2 on a fresh table copy: S1 -> S2 touches day 2 only
        wh2 = os.path.join(tmp, "wh2")
        t2 = Table.create(os.path.join(wh2, "shop", "sales"), PREFIX + "/shop/sales", SCHEMA,
                          PartitionSpec([PartitionField(2, 1000, "ts_day", "day")]),
                          properties={"write.delete.mode": "merge-on-read"})
        e1 = t2.write_data(rows(1, range(0, 300)), name="day1")[0]
        ea = t2.write_data(rows(2, range(300, 700)), name="a")[0]
        eb = t2.write_data(rows(2, range(700, 800)), name="b")[0]
        p1 = t2.append([e1, ea, eb])
        p2 = t2.row_delta(deletes=[t2.write_position_deletes([(ea, 2)])])
        spec2 = os.path.join(tmp, "sales2.spec.json")
        user2 = write_spec(spec2, wh2)
        remap2 = ["--remap", PREFIX + "=" + wh2]
        loc2 = lambda f: f.path.replace(PREFIX, wh2)  # noqa: E731
        base = "http://127.0.0.1:8399"
        r = sc.run(["diff", "--spec", spec2, "--from-snapshot", str(p1.snapshot_id), "--emit", "native",
                    "--serve-url", base] + remap2)
        task = json.loads(r.stdout)
        io = task["spec"]["ioConfig"]
        gs = task["spec"]["dataSchema"]["granularitySpec"]
        check(gs.get("intervals") == ["2024-06-02T00:00:00.000Z/2024-06-03T00:00:00.000Z"] and io.get("dropExisting"),
              "phase 2: one REPLACE of the touched day: %s" % gs.get("intervals"))
        s = io["inputSource"]
        ok = s["type"] == "combining" and [d["type"] for d in s["delegates"]] == ["local", "http"]
        check(ok and s["delegates"][0]["files"] == [loc2(eb)],
              "phase 2: the local delegate lists exactly the touched day's raw file: %s" % json.dumps(s)[:400])
        hu = s["delegates"][1]["uris"] if ok else []
        check(len(hu) == 1 and hu[0].startswith(base + "/files/shop.sales/%d/icd-" % p2.snapshot_id),
              "phase 2: and the http delegate the touched day's materialized file: %s" % hu)
        check(io["inputFormat"] == user2["spec"]["ioConfig"]["inputFormat"] and
              task["spec"]["dataSchema"]["timestampSpec"] == user2["spec"]["dataSchema"]["timestampSpec"],
              "phase 2: the user's inputFormat and timestampSpec (built like the first ingestion)")
        sdir = os.path.join(tmp, "staged2")
        r = sc.run(["diff", "--spec", spec2, "--from-snapshot", str(p1.snapshot_id), "--emit", "native",
                    "--stage-to", sdir] + remap2)
        ls = json.loads(r.stdout)["spec"]["ioConfig"]["inputSource"]
        want_staged = os.path.join(sdir, hu[0].rsplit("/", 1)[1]) if hu else None
        check(ls["type"] == "local" and sorted(ls["files"]) == sorted([loc2(eb), want_staged]) and
              os.path.exists(want_staged or "/nonexistent"),
              "phase 2 --stage-to: raw + staged file (the served name) in the warehouseSource: %s" % ls)
        state = os.path.join(tmp, "state.json")
        with open(state, "w") as f:
            json.dump({"version": 1, "dataSources": {"sales": {"snapshotId": p1.snapshot_id,
                                                               "table": "shop.sales"}}}, f)
        r = sc.run(["sync", "--spec", spec2, "--state", state, "--serve-url", base] + remap2)
        ss = json.loads(r.stdout)
        check(ss["type"] == "index_parallel" and ss["spec"]["ioConfig"]["inputSource"] == s and
              ss["spec"]["ioConfig"]["inputFormat"] == user2["spec"]["ioConfig"]["inputFormat"],
              "sync (native by default) submits the same raw + served files of the touched day")
        r = sc.run(["diff", "--spec", spec2, "--from-snapshot", str(p1.snapshot_id), "--emit", "native",
                    "--rows", "--serve-url", base] + remap2)
        rs = json.loads(r.stdout)["spec"]["ioConfig"]["inputSource"]
        check(rs["type"] == "http" and all("/splits/" in u for u in rs["uris"]),
              "phase 2 --rows: the NDJSON splits of serve --rows")
    finally:
        for s in servers:
            s.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    print("%d checks, %d failed" % (checks[0], len(failures)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
