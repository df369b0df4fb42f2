#!/usr/bin/env python3
"""Remote reads through a fault-injecting loopback HTTP server (issue 15.7, 15.14).

A Parquet file (written with tests/tools/icewriter) is served by a small Range-capable
server; `icedruid cat http://127.0.0.1:PORT/f.parquet` must:

  trickle     body bytes at 2 B/s: with ICEDRUID_HTTP_TIMEOUT=0.5 and ICEDRUID_HTTP_MIN_RATE=1 MiB/s every attempt hits its
              deadline (0.5 s + the 256 KiB tail asked for at 1 MiB/s); exit 1 within 10 s with ONE line "... no complete response within
              N s (ICEDRUID_HTTP_TIMEOUT / ICEDRUID_HTTP_MIN_RATE)" naming the URL.
  short_cl    the first ranged GET answers 206 with a Content-Length shorter than the body
              it then sends (the rest stays in the kept-alive connection): retried on a new
              connection, the rows are those of the local file, exit 0.
  head_503    every request answers 503: exit 1, one line naming the URL with "HTTP 503".
"""
import http.server
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.environ.get("ICD_SOURCE_DIR", os.path.dirname(os.path.dirname(HERE)))
sys.path.insert(0, os.path.join(SRC, "tests", "tools"))
from icewriter import parquet  # noqa: E402
from icewriter.iceberg import NestedField, Schema  # noqa: E402

ICEDRUID = os.environ.get("ICEDRUID", "")
if not ICEDRUID:
    print("ICEDRUID is not set")
    sys.exit(1)

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


class State:
    mode = "ok"
    data = b""
    short_done = False


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def _range(self):
        n = len(State.data)
        r = self.headers.get("Range")
        if not r or not r.startswith("bytes="):
            return 0, n - 1, False
        a, b = r[6:].split("-")
        if a == "":
            start = max(0, n - int(b))
            return start, n - 1, True
        end = min(int(b), n - 1) if b else n - 1
        return int(a), end, True

    def do_HEAD(self):
        if State.mode == "503":
            return self._plain(503, b"")
        self.send_response(200)
        self.send_header("Content-Length", str(len(State.data)))
        self.end_headers()

    def _plain(self, status, body):
        self.send_response(status)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def do_GET(self):
        if State.mode == "503":
            return self._plain(503, b"busy")
        start, end, ranged = self._range()
        body = State.data[start:end + 1]
        self.send_response(206 if ranged else 200)
        if ranged:
            self.send_header("Content-Range", "bytes %d-%d/%d" % (start, end, len(State.data)))
        cl = len(body)
        if State.mode == "short_cl" and ranged and not State.short_done and cl > 8:
            State.short_done = True
            cl = cl // 2  # too short: the rest of the body poisons the connection
        self.send_header("Content-Length", str(cl))
        self.end_headers()
        if State.mode == "trickle":
            try:
                for i in range(0, len(body), 1):
                    self.wfile.write(body[i:i + 1])
                    self.wfile.flush()
                    time.sleep(0.5)
            except (BrokenPipeError, ConnectionResetError):
                pass
            return
        try:
            self.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client closed a connection it does not trust


def run(args, env_extra=None, timeout=60):
    env = dict(os.environ, **(env_extra or {}))
    t0 = time.monotonic()
    p = subprocess.run([ICEDRUID, *args], capture_output=True, text=True, timeout=timeout,
                       env=env)
    print("  %s: exit %d in %.1f s" % (State.mode, p.returncode, time.monotonic() - t0))
    return p.returncode, p.stdout, p.stderr, time.monotonic() - t0


def main():
    with tempfile.TemporaryDirectory(prefix="icd-httpfault-") as d:
        schema = Schema([NestedField(1, "id", "long", True), NestedField(2, "s", "string")])
        path = os.path.join(d, "f.parquet")
        parquet.write_parquet(path, schema.parquet_columns(),
                              [{"id": i, "s": "v%d" % i} for i in range(200)])
        with open(path, "rb") as f:
            State.data = f.read()
        rc, local_rows, err, _ = run(["cat", path])
        check(rc == 0 and local_rows.count("\n") == 200, f"local cat: {rc} {err}")

        srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        srv.daemon_threads = True
        threading.Thread(target=srv.serve_forever, daemon=True).start()
        url = "http://127.0.0.1:%d/f.parquet" % srv.server_address[1]
        try:
            State.mode = "ok"
            rc, out, err, _ = run(["cat", url])
            check(rc == 0 and out == local_rows, f"ok: exit {rc}: {err}")

            State.mode, State.short_done = "short_cl", False
            rc, out, err, _ = run(["cat", url])
            check(State.short_done, "short_cl: the fault was not injected")
            check(rc == 0 and out == local_rows, f"short_cl: exit {rc}: {err!r}")

            State.mode = "trickle"
            rc, out, err, took = run(["cat", url], {"ICEDRUID_HTTP_TIMEOUT": "0.5",
                                                  "ICEDRUID_HTTP_MIN_RATE": "1048576"})
            print("  " + err.strip())
            # one line per retry ("...; retrying in N ms (attempt k of n)"), then the error
            retries = [l for l in err.splitlines() if "; retrying in " in l]
            lines = [l for l in err.splitlines() if "; retrying in " not in l]
            check(len(retries) == 3, f"trickle: {len(retries)} retry lines, want 3")
            check(rc == 1, f"trickle: exit {rc}, want 1")
            check(took < 10, f"trickle: took {took:.1f} s")
            check(len(lines) == 1 and url in lines[0] and
                  "no complete response within" in lines[0] and "ICEDRUID_HTTP_TIMEOUT" in lines[0],
                  f"trickle: stderr {err!r}")

            State.mode = "503"
            rc, out, err, _ = run(["cat", url], {"ICEDRUID_HTTP_TIMEOUT": "5"})
            lines = [l for l in err.splitlines() if "; retrying in " not in l]
            check(rc == 1 and len(lines) == 1 and url in lines[0] and "HTTP 503" in lines[0],
                  f"503: exit {rc}, stderr {err!r}")
        finally:
            srv.shutdown()
    print("test_http_faults: %d failed" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
