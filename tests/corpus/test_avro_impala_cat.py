#!/usr/bin/env python3
"""`icedruid cat` over every Avro file of the corpus (Impala's and icebird's manifest
lists, manifests and Avro data files).

For each file the record count printed by `cat` must equal the sum of the block object
counts, which this test reads independently: it parses the container header (magic,
metadata map, sync marker) and walks the block headers (zigzag count and size, then skips
the data and checks the 16-byte sync marker) in plain Python.

For the Avro data table iceberg_v3_default_value_avro the rows of its data files must
contain the expected values (corpus/expected/) of the columns each file has.
"""
import glob
import json
import os
import subprocess
import sys

ICEDRUID = os.environ.get("ICEDRUID")
SHARED = os.environ.get("ICD_SHARED")


def skip(msg):
    print("SKIP: " + msg)
    sys.exit(77)


class Reader:
    def __init__(self, data):
        self.d = data
        self.p = 0

    def long(self):
        shift = 0
        v = 0
        while True:
            if self.p >= len(self.d):
                raise ValueError("truncated varint at %d" % self.p)
            b = self.d[self.p]
            self.p += 1
            v |= (b & 0x7F) << shift
            shift += 7
            if not b & 0x80:
                break
            if shift > 63:
                raise ValueError("varint too long")
        return (v >> 1) ^ -(v & 1)

    def bytes(self):
        n = self.long()
        if n < 0 or self.p + n > len(self.d):
            raise ValueError("bad length")
        s = self.d[self.p:self.p + n]
        self.p += n
        return s


def container_counts(path):
    """(codec, [object count of each block]) parsed from the file by hand."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:4] != b"Obj\x01":
        raise ValueError("bad magic")
    r = Reader(data)
    r.p = 4
    meta = {}
    while True:
        n = r.long()
        if n == 0:
            break
        if n < 0:
            n = -n
            r.long()
        for _ in range(n):
            k = r.bytes().decode()
            meta[k] = r.bytes()
    sync = data[r.p:r.p + 16]
    r.p += 16
    counts = []
    while r.p < len(data):
        count = r.long()
        size = r.long()
        r.p += size
        if data[r.p:r.p + 16] != sync:
            raise ValueError("sync mismatch at %d" % r.p)
        r.p += 16
        counts.append(count)
    return meta.get("avro.codec", b"null").decode(), counts


def cat(path):
    p = subprocess.run([ICEDRUID, "cat", path], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE)
    return p.returncode, p.stdout.decode("utf-8"), p.stderr.decode("utf-8", "replace")


def main():
    if not ICEDRUID:
        skip("ICEDRUID is not set")
    if not SHARED or not os.path.isdir(os.path.join(SHARED, "corpus")):
        skip("the shared corpus is absent (ICD_SHARED=%s)" % SHARED)
    corpus = os.path.join(SHARED, "corpus")
    files = []
    for top in ("impala", "icebird"):
        files += glob.glob(os.path.join(corpus, top, "**", "*.avro*"), recursive=True)
    files.sort()
    failures = []
    checked = 0
    skipped = 0
    codecs = {}
    for path in files:
        with open(path, "rb") as f:
            magic = f.read(4)
        if not path.endswith(".avro") and magic != b"Obj\x01":
            skipped += 1  # the stray *.avro_tmp (JSON text, not Avro)
            continue
        try:
            codec, counts = container_counts(path)
        except ValueError as e:
            failures.append("%s: the Python parser failed: %s" % (path, e))
            continue
        codecs[codec] = codecs.get(codec, 0) + 1
        rc, out, err = cat(path)
        if rc != 0:
            failures.append("%s: cat failed (%d): %s" % (path, rc, err.strip()))
            continue
        lines = out.splitlines()
        if len(lines) != sum(counts):
            failures.append("%s: cat printed %d records, blocks hold %d" %
                            (path, len(lines), sum(counts)))
            continue
        for line in lines:
            json.loads(line)  # every line is valid JSON
        checked += 1

    # Avro data files of the v3 default-value table against the expected rows.
    exp_dir = os.path.join(corpus, "expected")
    table = os.path.join(corpus, "impala", "iceberg_v3", "iceberg_v3_default_value_avro")
    with open(os.path.join(exp_dir, "iceberg_v3_default_value_avro.jsonl")) as f:
        expected = [json.loads(line) for line in f if line.strip()]
    rows = []
    for path in sorted(glob.glob(os.path.join(table, "data", "*.avro"))):
        rc, out, err = cat(path)
        if rc != 0:
            failures.append("%s: cat failed: %s" % (path, err.strip()))
            continue
        rows += [json.loads(line) for line in out.splitlines()]
    matched = 0
    for exp in expected:
        # a row with the same values for every column the file has
        match = [r for r in rows if all(exp[k] == v for k, v in r.items() if k in exp)
                 and r.get("i") == exp["i"]]
        if match:
            matched += 1
        else:
            failures.append("expected row %s not among the data file rows %s" % (exp, rows))
    if len(rows) != len(expected):
        failures.append("data files hold %d rows, expected %d" % (len(rows), len(expected)))

    for f in failures:
        print("FAIL: " + f)
    print("avro files: %d checked, %d skipped (not Avro), codecs %s" %
          (checked, skipped, json.dumps(codecs, sort_keys=True)))
    print("%d passed, %d failed" % (checked + matched, len(failures)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
