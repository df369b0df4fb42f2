#!/usr/bin/env python3
"""`icedruid sync` against a fake Druid started by this test.

The fake Druid is a Python http.server that records every request and answers the way
Druid's SQL task endpoint (/druid/v2/sql/task) and Overlord task endpoint
(/druid/indexer/v1/task) do: 200 with a task id, 400 with a DruidException body, 500 with
the older {"error","errorMessage","errorClass"} body. The table is written snapshot by
snapshot with tests/tools/icewriter while the test runs, so each sync sees a new change:

  S1  append day 1 and day 2 (one data file per day; the table is partitioned by day)
  S2  position delete of one day-2 row            -> REPLACE day 2 (rows from icedruid serve)
  S3  append day 5                                -> new rows only: REPLACE day 5 (not INSERT)
  S4  equality delete of a day-1 row              -> REPLACE day 1, native task
  S5  equality delete of a day-5 row              -> --wait: a FAILED task, then a success
  S6  position delete of a day-1 row              -> --serve-listen: splits served in-process,
                                                     read back by the fake Druid

Checked: the statements and specs Druid receives (endpoint, headers, body shape, intervals,
input source), that the state file advances only after Druid accepted everything, that a
400 / 500 leave it unchanged with a clear error, that a crash between the submission and
the state write (SIGKILL through a test hook) is repaired by running again (the same
statement is submitted again, the state advances), --wait (task status polling), the
lock, a corrupt state file, --baseline, and `icedruid diff --emit` between snapshots. Expected snapshot ids and timestamps come from the writer, not from icedruid.
"""
import base64
import datetime as dt
import fcntl
import json
import os
import subprocess
import sys
import tempfile
import threading
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

SRC = os.environ.get("ICD_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
ICEDRUID = os.environ.get("ICEDRUID", os.path.join(SRC, "build", "icedruid"))
sys.path.insert(0, os.path.join(SRC, "tests", "tools"))

from icewriter.iceberg import NestedField, PartitionField, PartitionSpec, Schema, Table  # noqa: E402

UTC = dt.timezone.utc
PREFIX = "/tmp/icedruid-sync-test/wh"
SERVE = "http://127.0.0.1:8299"
FAILURES = []
CHECKS = [0]


def check(cond, what):
    CHECKS[0] += 1
    if not cond:
        FAILURES.append(what)
        print(f"FAIL: {what}", file=sys.stderr)


def ts(text):
    return dt.datetime.fromisoformat(text).replace(tzinfo=UTC)


def iso_ms(ms):
    d = dt.datetime.fromtimestamp(ms / 1000, tz=UTC)
    return d.strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z"


# ---- the fake Druid ----------------------------------------------------------------------
class FakeDruid:
    def __init__(self):
        self.mode = "ok"
        self.task_fails = False
        self.fetched = None  # a list: read the http source's URIs like Druid's workers do
        self.polls = {}
        self.requests = []
        self.counter = 0
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_GET(self):
                # /druid/indexer/v1/task/<id>/status: RUNNING on the first poll, then the outcome
                parts = self.path.split("/")
                if len(parts) != 7 or parts[1:5] != ["druid", "indexer", "v1", "task"] or parts[6] != "status":
                    return self.answer(404, {"error": "not found"})
                tid = parts[5]
                fake.requests.append({"path": self.path, "headers": dict(self.headers), "body": ""})
                n = fake.polls[tid] = fake.polls.get(tid, 0) + 1
                code = "RUNNING" if n == 1 else ("FAILED" if fake.task_fails else "SUCCESS")
                st = {"id": tid, "status": code, "statusCode": code, "duration": -1}
                if code == "FAILED":
                    st["errorMsg"] = "java.lang.OutOfMemoryError: segment too big"
                self.answer(200, {"task": tid, "status": st})

            def do_POST(self):
                n = int(self.headers.get("Content-Length", "0"))
                body = self.rfile.read(n)
                fake.requests.append({"path": self.path, "headers": dict(self.headers),
                                      "body": body.decode("utf-8")})
                if fake.mode == "400":
                    self.answer(400, {"error": "druidException", "errorCode": "invalidInput",
                                      "persona": "USER", "category": "INVALID_INPUT",
                                      "errorMessage": "Encountered \"FROM\" at line 3",
                                      "context": {}})
                elif fake.mode == "500":
                    self.answer(500, {"error": "Unknown exception", "errorMessage": "boom",
                                      "errorClass": "java.lang.RuntimeException", "host": None})
                elif self.path == "/druid/v2/sql/task":
                    fake.counter += 1
                    if fake.fetched is not None:
                        src = extern_args(json.loads(body)["query"])[0]
                        for uri in src.get("uris", []):
                            with urllib.request.urlopen(uri, timeout=30) as resp:
                                fake.fetched += [json.loads(x) for x in resp.read().splitlines() if x]
                    self.answer(200, {"taskId": f"query-{fake.counter}", "state": "RUNNING"})
                elif self.path == "/druid/indexer/v1/task":
                    fake.counter += 1
                    self.answer(200, {"task": f"index_parallel_sales_{fake.counter}"})
                else:
                    self.answer(404, {"error": "not found"})

            def answer(self, status, obj):
                data = json.dumps(obj).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def take(self):
        r, self.requests = self.requests, []
        return r


# ---- the table and the spec -------------------------------------------------------------
SCHEMA = Schema([
    NestedField(1, "id", "long", required=True),
    NestedField(2, "ts", "timestamptz", required=True),
    NestedField(3, "name", "string"),
    NestedField(4, "amount", "double"),
])


def rows(day, ids):
    return [(i, ts(f"2024-06-{day:02d}T{8 + k:02d}:00:00"), f"n{i}", float(i)) for k, i in enumerate(ids)]


def write_spec(path, wh):
    spec = {
        "type": "index_parallel",
        "spec": {
            "dataSchema": {
                "dataSource": "sales",
                "timestampSpec": {"column": "ts", "format": "auto"},
                "dimensionsSpec": {"dimensions": [{"type": "long", "name": "id"}, "name",
                                                  {"type": "double", "name": "amount"}]},
                "granularitySpec": {"segmentGranularity": "day", "queryGranularity": "none",
                                    "rollup": False},
            },
            "ioConfig": {
                "type": "index_parallel",
                "inputSource": {"type": "iceberg", "tableName": "sales", "namespace": "shop",
                                "icebergCatalog": {"type": "local", "warehousePath": wh},
                                "warehouseSource": {"type": "local"}},
                "inputFormat": {"type": "parquet"},
            },
            "tuningConfig": {"type": "index_parallel", "maxNumConcurrentSubTasks": 2},
        },
    }
    with open(path, "w") as f:
        json.dump(spec, f)


class Ctx:
    def __init__(self, tmp, druid):
        self.tmp = tmp
        self.druid = druid
        self.wh = os.path.join(tmp, "wh")
        self.spec = os.path.join(tmp, "sales.spec.json")
        write_spec(self.spec, self.wh)

    def sync(self, state, *extra, env=None, druid=True, default_emit=False):
        args = [ICEDRUID, "sync", "--spec", self.spec, "--state", state,
                "--remap", f"{PREFIX}={self.wh}"]
        if druid:
            args += ["--druid", self.druid.url]
        if "--emit" not in extra and not default_emit:  # these runs check the MSQ path
            args += ["--emit", "msq"]
        if "--serve-url" in extra or "--serve-listen" in extra:
            args += ["--rows"]  # this test reads the NDJSON splits (files: test_serve_files.py)
        e = dict(os.environ)
        e.update(env or {})
        return subprocess.run(args + list(extra), capture_output=True, text=True, env=e, timeout=120)


def state_of(path):
    if not os.path.exists(path):
        return None
    with open(path) as f:
        return json.load(f)["dataSources"].get("sales")


def msq(req):
    check(req["path"] == "/druid/v2/sql/task", f"MSQ goes to the SQL task endpoint ({req['path']})")
    check(req["headers"].get("Content-Type") == "application/json", "JSON content type")
    body = json.loads(req["body"])
    check(isinstance(body.get("context"), dict), "MSQ payload has a context object")
    return body["query"]


def extern_args(sql):
    """The three EXTERN string literals, un-escaped and parsed as JSON."""
    out, p = [], sql.index("EXTERN(")
    for _ in range(3):
        p = sql.index("'", p) + 1
        lit = []
        while True:
            q = sql.index("'", p)
            lit.append(sql[p:q])
            if sql[q + 1:q + 2] == "'":
                lit.append("'")
                p = q + 2
                continue
            p = q + 1
            break
        out.append(json.loads("".join(lit)))
    return out


def check_range_filter(tmp):
    """A long timestamp column (format micro) is pruned with a `range` icebergFilter in its
    own unit; a v1 table (no delete file) is read through Druid's iceberg source."""
    wh = os.path.join(tmp, "wh2")
    schema = Schema([NestedField(1, "id", "long", required=True), NestedField(2, "t", "long", required=True)])
    t = Table.create(os.path.join(wh, "shop", "clicks"), f"{PREFIX}2/shop/clicks", schema)
    day = 86400 * 1000 * 1000  # micros
    a = t.append(t.write_data([(1, 19875 * day + 5), (2, 19875 * day + 7)]))
    b = t.append(t.write_data([(3, 19877 * day + 1)]))
    spec = os.path.join(tmp, "clicks.spec.json")
    with open(spec, "w") as f:
        json.dump({"type": "index_parallel", "spec": {
            "dataSchema": {"dataSource": "clicks", "timestampSpec": {"column": "t", "format": "micro"},
                           "dimensionsSpec": {"dimensions": ["id"]},
                           "granularitySpec": {"segmentGranularity": "day", "rollup": False}},
            "ioConfig": {"type": "index_parallel", "inputFormat": {"type": "parquet"},
                         "inputSource": {"type": "iceberg", "tableName": "clicks", "namespace": "shop",
                                         "icebergCatalog": {"type": "local", "warehousePath": wh},
                                         "warehouseSource": {"type": "local"}}}}}, f)
    r = subprocess.run([ICEDRUID, "diff", "--spec", spec, "--remap", f"{PREFIX}2={wh}",
                        "--from-snapshot", str(a.snapshot_id), "--emit", "native"],
                       capture_output=True, text=True, timeout=120)
    check(r.returncode == 0, f"diff --emit native on a long timestamp column: {r.stderr}")
    if r.returncode:
        return
    src = json.loads(r.stdout)["spec"]["ioConfig"]["inputSource"]
    start, end = 19877 * 86400000, 19878 * 86400000  # the appended day, in millis
    check(src.get("icebergFilter") == {"type": "range", "filterColumn": "t", "lower": start * 1000 - 999,
                                       "upper": end * 1000, "lowerOpen": False, "upperOpen": True},
          f"range filter in micros: {src.get('icebergFilter')}")
    # the spec has no residualFilterMode: none is added (Druid's default, ignore, applies);
    # icedruid no longer overwrites the user's mode with "ignore"
    check(src.get("snapshotTime") == iso_ms(b.timestamp_ms) and "residualFilterMode" not in src,
          "pinned to B, the user's residualFilterMode (none) kept")


def main():
    if not os.path.exists(ICEDRUID):
        print(f"skip: {ICEDRUID} not built", file=sys.stderr)
        return 77
    druid = FakeDruid()
    with tempfile.TemporaryDirectory() as tmp:
        check_range_filter(tmp)
        c = Ctx(tmp, druid)
        t = Table.create(os.path.join(c.wh, "shop", "sales"), f"{PREFIX}/shop/sales", SCHEMA,
                         PartitionSpec([PartitionField(2, 1000, "ts_day", "day")]),
                         properties={"write.delete.mode": "merge-on-read"})
        files = t.write_data(rows(1, [1, 2, 3]) + rows(2, [4, 5, 6]))
        day1 = next(f for f in files if f.partition == (19875,))
        day2 = next(f for f in files if f.partition == (19876,))
        s1 = t.append(files)
        state = os.path.join(tmp, "state", "sync.json")
        os.makedirs(os.path.dirname(state))

        # -- 0. without --emit, sync follows the user's spec, a native one: a native task --
        r = c.sync(state, druid=False, default_emit=True)
        check(r.returncode == 0 and json.loads(r.stdout).get("type") == "index_parallel",
              f"default --emit is native (the spec's own type): {r.stdout[:200]} {r.stderr}")

        # -- 1. first run: no state -> full ingestion (v1: Druid's iceberg source, pinned) --
        r = c.sync(state)
        check(r.returncode == 0, f"first sync succeeds: {r.stderr}")
        reqs = druid.take()
        check(len(reqs) == 1, f"one submission ({len(reqs)})")
        if reqs:
            q = msq(reqs[0])
            check(q.startswith('REPLACE INTO "sales"\nOVERWRITE ALL\n'), "full ingestion is OVERWRITE ALL")
            check("PARTITIONED BY DAY" in q, "PARTITIONED BY the segmentGranularity")
            src, fmt, sig = extern_args(q)
            check(src["type"] == "iceberg" and src["tableName"] == "sales", "v1 reads the iceberg source")
            check(src.get("snapshotTime") == iso_ms(s1.timestamp_ms), "pinned to S1's timestamp")
            check(fmt == {"type": "parquet"}, "the spec's inputFormat")
            check([e["name"] for e in sig] == ["ts", "id", "name", "amount"], f"signature {sig}")
            check(q in r.stdout, "the statement is printed")
        st = state_of(state)
        check(st and st["snapshotId"] == s1.snapshot_id, f"state records S1: {st}")
        check(st and st["table"] == "shop.sales" and st["tasks"] == ["query-1"], f"state entry {st}")
        check(not any(n.startswith("sync.json.tmp") for n in os.listdir(os.path.dirname(state))),
              "no temporary file left")

        r = c.sync(state)
        check(r.returncode == 0 and "up to date" in r.stderr, f"second run is up to date: {r.stderr}")
        check(not druid.take(), "nothing submitted when up to date")

        # -- 2. S2: a position delete on day 2 -> v2 -------------------------------------------
        s2 = t.row_delta(deletes=[t.write_position_deletes([(day2, 1)])])
        r = c.sync(state)
        check(r.returncode == 1 and "--serve-url" in r.stderr, f"v2 needs --serve-url: {r.stderr}")
        check(not druid.take() and state_of(state)["snapshotId"] == s1.snapshot_id,
              "nothing submitted, state unchanged")

        r = c.sync(state, "--serve-url", SERVE)
        check(r.returncode == 0, f"sync S1 -> S2 succeeds: {r.stderr}")
        reqs = druid.take()
        check(len(reqs) == 1, f"one REPLACE ({len(reqs)})")
        if reqs:
            q = msq(reqs[0])
            check("OVERWRITE WHERE \"__time\" >= TIMESTAMP '2024-06-02 00:00:00.000' AND "
                  "\"__time\" < TIMESTAMP '2024-06-03 00:00:00.000'" in q, f"day 2 replaced: {q}")
            check('MILLIS_TO_TIMESTAMP("__time") AS "__time"' in q, "served rows carry __time")
            src, fmt, _ = extern_args(q)
            check(src["type"] == "http", "v2 reads icedruid serve")
            # two data files (day 1, day 2): only day 2's split can hold rows of day 2
            check(len(src.get("uris", [])) == 1 and src["uris"][0].startswith(SERVE + "/splits/"),
                  f"only the overlapping split: {src.get('uris')}")
            check(fmt.get("type") == "json", "served rows are JSON")
        check(state_of(state)["snapshotId"] == s2.snapshot_id, "state records S2")

        # -- 3. S3: new rows on day 5; failures leave the state alone -------------------------
        s3 = t.append(t.write_data(rows(5, [7, 8])))
        r = c.sync(state, "--serve-url", SERVE, "--replace-only", druid=False)
        check(r.returncode == 0 and r.stdout == "", f"--replace-only: nothing for an append: {r.stdout!r}")

        druid.mode = "400"
        r = c.sync(state, "--serve-url", SERVE)
        check(r.returncode == 1, "400 fails")
        check("HTTP 400" in r.stderr and "invalidInput" in r.stderr and "line 3" in r.stderr,
              f"Druid's error is shown: {r.stderr}")
        check(len(druid.take()) == 1, "a 400 is not retried")
        check(state_of(state)["snapshotId"] == s2.snapshot_id, "state unchanged after 400")

        druid.mode = "500"
        r = c.sync(state, "--serve-url", SERVE)
        check(r.returncode == 1 and "HTTP 500" in r.stderr and "boom" in r.stderr
              and "RuntimeException" in r.stderr, f"500 fails clearly: {r.stderr}")
        check(len(druid.take()) == 3, "a 500 is retried (3 tries)")
        check(state_of(state)["snapshotId"] == s2.snapshot_id, "state unchanged after 500")

        # crash after Druid accepted, before the state write
        druid.mode = "ok"
        with open(state) as f:
            before = f.read()
        r = c.sync(state, "--serve-url", SERVE, env={"ICEDRUID_SYNC_TEST_CRASH_BEFORE_STATE": "1"})
        check(r.returncode == -9, f"the hook kills the run ({r.returncode})")
        first = druid.take()
        with open(state) as f:
            check(f.read() == before, "the crash left the state file as it was")
        r = c.sync(state, "--serve-url", SERVE)
        check(r.returncode == 0, f"rerun after the crash succeeds: {r.stderr}")
        again = druid.take()
        check(len(first) == 1 and [x["body"] for x in again] == [x["body"] for x in first],
              "the rerun submits the same REPLACE again")
        if again:
            q = msq(again[0])
            check("TIMESTAMP '2024-06-05 00:00:00.000' AND \"__time\" < TIMESTAMP "
                  "'2024-06-06 00:00:00.000'" in q, "day 5 (new rows) is REPLACEd")
        check(state_of(state)["snapshotId"] == s3.snapshot_id, "state records S3 after the rerun")

        # -- 4. S4: equality delete on day 1, native task with basic auth ---------------------
        s4 = t.row_delta(deletes=[t.write_equality_deletes([{"id": 2}], ["id"], partition=(19875,))])
        r = c.sync(state, "--serve-url", SERVE, "--emit", "native", "--druid-user", "ingest",
                   env={"ICEDRUID_DRUID_PASSWORD": "s3cr'et"})
        check(r.returncode == 0, f"native sync succeeds: {r.stderr}")
        reqs = druid.take()
        check(len(reqs) == 1 and reqs[0]["path"] == "/druid/indexer/v1/task", "native task endpoint")
        if reqs:
            auth = reqs[0]["headers"].get("Authorization", "")
            check(auth == "Basic " + base64.b64encode(b"ingest:s3cr'et").decode(), f"basic auth {auth}")
            task = json.loads(reqs[0]["body"])
            io = task["spec"]["ioConfig"]
            gs = task["spec"]["dataSchema"]["granularitySpec"]
            check(task["type"] == "index_parallel", "index_parallel")
            check(io["appendToExisting"] is False and io["dropExisting"] is True, "overwrite + drop")
            check(gs["intervals"] == ["2024-06-01T00:00:00.000Z/2024-06-02T00:00:00.000Z"],
                  f"day 1 interval: {gs.get('intervals')}")
            check(io["inputSource"]["type"] == "http", "native v2 reads icedruid serve")
        st = state_of(state)
        check(st["snapshotId"] == s4.snapshot_id and st["tasks"] == [f"index_parallel_sales_{druid.counter}"],
              f"state records S4 with the task id: {st}")
        check("s3cr" not in open(state).read(), "no password in the state file")

        # -- --wait: the state advances only once the tasks succeeded -----------------------
        s5 = t.row_delta(deletes=[t.write_equality_deletes([{"id": 7}], ["id"], partition=(19879,))])
        druid.task_fails = True
        r = c.sync(state, "--serve-url", SERVE, "--wait", "--poll-ms", "20")
        reqs = druid.take()
        check(r.returncode == 1 and "FAILED" in r.stderr and "segment too big" in r.stderr,
              f"a FAILED task fails the run: {r.stderr}")
        check([x["path"].endswith("/status") for x in reqs] == [False, True, True],
              f"submit, then poll until the outcome: {[x['path'] for x in reqs]}")
        check(state_of(state)["snapshotId"] == s4.snapshot_id, "state unchanged after a FAILED task")
        druid.task_fails = False
        r = c.sync(state, "--serve-url", SERVE, "--wait", "--poll-ms", "20")
        reqs = druid.take()
        check(r.returncode == 0 and "succeeded" in r.stderr, f"--wait success: {r.stderr}")
        check(len(reqs) == 3 and state_of(state)["snapshotId"] == s5.snapshot_id,
              "state records S5 after the task succeeded")
        check("--wait needs --druid" in c.sync(state, "--wait", druid=False).stderr, "--wait needs --druid")

        # -- --serve-listen: the splits of exactly the planned snapshot, served in-process ----
        (day1_data,) = [day1]
        s6 = t.row_delta(deletes=[t.write_position_deletes([(day1_data, 0)])])
        druid.fetched = []
        r = c.sync(state, "--serve-listen", "127.0.0.1:0", "--poll-ms", "20")
        reqs = druid.take()
        check(r.returncode == 0 and "serving" in r.stderr, f"--serve-listen sync: {r.stderr}")
        # day 1 after S4 (id 2 deleted) and S6 (position 0, id 1, deleted): only id 3 is left
        ids = sorted(x["id"] for x in druid.fetched
                     if 19875 * 86400000 <= x["__time"] < 19876 * 86400000)
        check(ids == [3], f"Druid read the surviving day-1 rows from the served splits: {ids}")
        check(len(reqs) >= 2 and reqs[-1]["path"].endswith("/status"), "--serve-listen waits for the task")
        check(state_of(state)["snapshotId"] == s6.snapshot_id, "state records S6")
        druid.fetched = None

        # -- `icedruid diff --emit`: the same statements for any pair of snapshots ----------
        def diff(*extra):
            return subprocess.run([ICEDRUID, "diff", "--spec", c.spec, "--remap", f"{PREFIX}={c.wh}",
                                   "--serve-url", SERVE] + list(extra),
                                  capture_output=True, text=True, timeout=120)
        r = diff("--from-snapshot", str(s1.snapshot_id), "--to-snapshot", str(s2.snapshot_id),
                 "--emit", "msq")
        check(r.returncode == 0 and r.stdout.count("REPLACE INTO") == 1
              and "TIMESTAMP '2024-06-02 00:00:00.000' AND" in r.stdout,
              f"diff --emit msq S1 -> S2 (not the current snapshot): {r.stdout} {r.stderr}")
        r = diff("--from-snapshot", str(s1.snapshot_id), "--emit", "native")
        if r.returncode == 0:
            gs = json.loads(r.stdout)["spec"]["dataSchema"]["granularitySpec"]
            # S1 -> S6: day 1 (deletes), day 2 (pos delete) merge into one range; day 5 appended
            check(gs["intervals"] == ["2024-06-01T00:00:00.000Z/2024-06-03T00:00:00.000Z",
                                      "2024-06-05T00:00:00.000Z/2024-06-06T00:00:00.000Z"],
                  f"diff --emit native S1 -> S6 intervals: {gs['intervals']}")
        check(r.returncode == 0, f"diff --emit native: {r.stderr}")
        r = diff("--from-snapshot", str(s1.snapshot_id), "--emit", "native", "--replace-only")
        check(r.returncode == 0 and json.loads(r.stdout)["spec"]["dataSchema"]["granularitySpec"]
              ["intervals"] == ["2024-06-01T00:00:00.000Z/2024-06-03T00:00:00.000Z"],
              f"--replace-only leaves day 5 out: {r.stdout[:200]} {r.stderr}")

        # -- 5. the lock, a corrupt state, --baseline -----------------------------------------
        with open(state + ".lock", "a+") as lk:
            fcntl.flock(lk, fcntl.LOCK_EX)
            r = c.sync(state, "--serve-url", SERVE)
            check(r.returncode == 3 and "lock" in r.stderr, f"a held lock gives exit 3: {r.stderr}")
        check(not druid.take(), "nothing submitted while locked")

        bad = os.path.join(tmp, "bad.json")
        with open(bad, "w") as f:
            f.write('{"version": 1, "dataSources": {')
        r = c.sync(bad, "--serve-url", SERVE)
        check(r.returncode == 1 and "not valid JSON" in r.stderr, f"corrupt state: {r.stderr}")
        with open(bad) as f:
            check(f.read() == '{"version": 1, "dataSources": {', "a corrupt state is not overwritten")

        # a recorded snapshot the table no longer has (expired): clear error, then --full
        gone = os.path.join(tmp, "gone.json")
        with open(gone, "w") as f:
            json.dump({"version": 1, "dataSources": {"sales": {"snapshotId": 4242, "table": "shop.sales"}}}, f)
        r = c.sync(gone, "--serve-url", SERVE)
        check(r.returncode == 1 and "--full" in r.stderr and not druid.take(),
              f"an unknown recorded snapshot fails and suggests --full: {r.stderr}")
        check(state_of(gone)["snapshotId"] == 4242, "state unchanged")
        r = c.sync(gone, "--serve-url", SERVE, "--full")
        reqs = druid.take()
        check(r.returncode == 0 and len(reqs) == 1 and "OVERWRITE ALL" in msq(reqs[0]),
              f"--full re-ingests everything: {r.stderr}")
        check(state_of(gone)["snapshotId"] == t.current.snapshot_id, "--full records the snapshot")
        # an entry written for another table is not diffed against this one
        other = os.path.join(tmp, "other.json")
        with open(other, "w") as f:
            json.dump({"version": 1, "dataSources": {"sales": {"snapshotId": s1.snapshot_id,
                                                               "table": "shop.returns"}}}, f)
        r = c.sync(other, "--serve-url", SERVE)
        check(r.returncode == 1 and "shop.returns" in r.stderr and not druid.take(),
              f"a state entry of another table is refused: {r.stderr}")

        base = os.path.join(tmp, "base.json")
        r = c.sync(base, "--baseline", str(s3.snapshot_id), druid=False)
        check(r.returncode == 0 and state_of(base)["snapshotId"] == s3.snapshot_id, "--baseline records")
        r = c.sync(base, "--baseline", "12345", druid=False)
        check(r.returncode == 1 and state_of(base)["snapshotId"] == s3.snapshot_id,
              "--baseline of an unknown snapshot fails")
        r = c.sync(base, "--serve-url", SERVE, druid=False)
        check(r.returncode == 0 and "OVERWRITE WHERE" in r.stdout and not druid.take(),
              "without --druid the re-ingestion is printed, not submitted")
        check(state_of(base)["snapshotId"] == s3.snapshot_id, "printing does not advance the state")
    druid.server.shutdown()
    if FAILURES:
        print(f"{len(FAILURES)} check(s) failed", file=sys.stderr)
        return 1
    print(f"test_sync: all {CHECKS[0]} checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
