"""Remote failures as an operator sees them (issue 18):
- a retry is said on stderr, one line per retry, and --retries / ICEDRUID_RETRIES set how
  many (a server answering 503 to everything);
- --request-timeout bounds a stalled request (a server that never answers) instead of two
  silent minutes;
- an S3 bucket that does not exist is reported as NoSuchBucket (by the real S3 test
  server, @20minutes/s3rver from npm), not as "not an Iceberg table".
"""
import http.server
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "io"))
import s3util  # noqa: E402

ICEDRUID = os.environ["ICEDRUID"]
failed = False


def check(cond, what):
    global failed
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failed = True


class Always503(http.server.BaseHTTPRequestHandler):
    hits = 0

    def do_GET(self):
        Always503.hits += 1
        self.send_response(503)
        self.send_header("Content-Length", "0")
        self.end_headers()

    do_HEAD = do_GET

    def log_message(self, *a):
        pass


def run(args, env=None, timeout=60):
    e = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "ICEDRUID_"))}
    e.update(env or {})
    return subprocess.run([ICEDRUID] + args, env=e, capture_output=True, text=True,
                          timeout=timeout)


srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Always503)
threading.Thread(target=srv.serve_forever, daemon=True).start()
url = f"http://127.0.0.1:{srv.server_address[1]}/t/data.parquet"

r = run(["inspect", url, "--retries", "2"])
retry_lines = [l for l in r.stderr.splitlines() if "retrying in" in l]
check(r.returncode == 1, f"503 forever: exit 1 ({r.returncode})")
check(len(retry_lines) == 2, f"--retries 2: two retry lines ({r.stderr.strip()[:400]})")
check(retry_lines and f"icedruid: {url}: HTTP 503; retrying in 200 ms (attempt 2 of 3)" == retry_lines[0],
      f"the retry line names location, reason, delay, attempt: {retry_lines[:1]}")
check("after 3 attempt" in r.stderr or "HTTP 503" in r.stderr.splitlines()[-1],
      f"the final error is one line: {r.stderr.splitlines()[-1:]}")

r = run(["inspect", url], {"ICEDRUID_RETRIES": "1"})
check(len([l for l in r.stderr.splitlines() if "retrying in" in l]) == 1,
      "ICEDRUID_RETRIES=1: one retry line")
r = run(["inspect", url, "--retries=0"], {"ICEDRUID_RETRIES": "5"})
check(len([l for l in r.stderr.splitlines() if "retrying in" in l]) == 0,
      "--retries=0 wins over ICEDRUID_RETRIES=5: no retry")
cred = url.replace("http://", "http://admin:hunter2@")
r = run(["inspect", cred, "--retries", "1"])
check("hunter2" not in r.stderr and "http://***@127.0.0.1" in r.stderr
      and "retrying in" in r.stderr, f"retry lines redact a URL's password: {r.stderr.strip()[:300]}")
srv.shutdown()

# A server that accepts and never answers.
lsock = socket.socket()
lsock.bind(("127.0.0.1", 0))
lsock.listen(8)
held = []
threading.Thread(target=lambda: [held.append(lsock.accept()) for _ in range(8)],
                 daemon=True).start()
stall = f"http://127.0.0.1:{lsock.getsockname()[1]}/t/data.parquet"
t0 = time.time()
r = run(["inspect", stall, "--request-timeout", "1", "--retries", "1"], timeout=60)
el = time.time() - t0
check(r.returncode == 1 and el < 15,
      f"--request-timeout 1 --retries 1: fails in {el:.1f} s, not minutes (exit {r.returncode})")
check(any("retrying in" in l for l in r.stderr.splitlines()),
      f"the timed-out attempt is retried and said: {r.stderr.strip()[:300]}")
lsock.close()

# S3 NoSuchBucket, from a real S3 implementation.
with tempfile.TemporaryDirectory() as tmp:
    proc, port = s3util.start_s3rver(os.path.join(tmp, "s3rver"), ["warehouse"])
    if proc is None:
        print(f"skip NoSuchBucket: {port}")
    else:
        try:
            env = {"AWS_ACCESS_KEY_ID": "S3RVER", "AWS_SECRET_ACCESS_KEY": "S3RVER",
                   "AWS_ENDPOINT_URL": f"http://127.0.0.1:{port}", "AWS_REGION": "us-east-1"}
            r = run(["scan", "s3://no-such-bucket/db/t", "--retries", "0"], env)
            check(r.returncode == 1, f"scan s3://no-such-bucket: exit 1 ({r.returncode})")
            check("NoSuchBucket" in r.stderr and "not an Iceberg table" not in r.stderr,
                  f"reported as NoSuchBucket: {r.stderr.strip()[:300]}")
            r = run(["scan", "s3://warehouse/db/t", "--retries", "0"], env)
            check(r.returncode == 1 and "not an Iceberg table" in r.stderr,
                  f"an existing bucket without the table: not an Iceberg table ({r.stderr.strip()[:200]})")
        finally:
            proc.kill()
            proc.wait()

sys.exit(1 if failed else 0)
