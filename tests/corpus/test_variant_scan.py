#!/usr/bin/env python3
"""`icedruid scan` of the corpus's Iceberg v3 variant tables (written by Trino), checked
two independent ways:

1. every variant value against this file's own Variant decoder (a second implementation
   of the Parquet VariantEncoding.md spec, in Python), applied to the raw metadata/value
   bytes that `icedruid cat` prints as base64 (the Parquet path, without the variant
   decoder); the decoded value is put in the design.md section 3 form by hand-written rules;
2. for trino_variant, the values its `descr` column announces ("int16 -1234",
   "date 2024-11-07", "array [1,2,3]", "obj age/name" ...), written out here by hand.

Environment: ICEDRUID, ICD_SHARED. Skips (77) without the corpus.
"""
import base64
import datetime
import json
import math
import os
import shlex
import struct
import subprocess
import sys
import uuid

SKIP = 77
V3 = "corpus/impala/iceberg_v3"
TABLES = {
    "trino_variant": "/test-warehouse/trino_variant",
    "trino_nested_variant": "hdfs://localhost:20500/test-warehouse/"
                            "trino_nested_variant-40cf1503a2cd4c6b97611cf70338ffa7",
}
EPOCH = datetime.datetime(1970, 1, 1)


# ---- an independent Variant decoder -> section 3 values ------------------------------------

def le(b, off, n):
    return int.from_bytes(b[off:off + n], "little")


def keys_of(meta):
    assert meta[0] & 15 == 1, "metadata version"
    osz = ((meta[0] >> 6) & 3) + 1
    n = le(meta, 1, osz)
    offs = [le(meta, 1 + osz * (i + 1), osz) for i in range(n + 1)]
    base = 1 + osz * (n + 2)
    return [meta[base + offs[i]:base + offs[i + 1]].decode() for i in range(n)]


def ts_text(v, per_sec, digits, utc):
    secs, frac = divmod(v, per_sec)
    t = EPOCH + datetime.timedelta(seconds=secs)
    out = t.strftime("%Y-%m-%dT%H:%M:%S") + "." + str(frac).rjust(digits, "0")
    return out + ("+00:00" if utc else "")


def dec_text(unscaled, scale):
    s = str(abs(unscaled)).rjust(scale + 1, "0")
    s = s[:len(s) - scale] + ("." + s[len(s) - scale:] if scale else "")
    return ("-" if unscaled < 0 else "") + s


def decode(keys, v, p=0):
    h = v[p]
    basic, hdr = h & 3, h >> 2
    if basic == 1:
        return v[p + 1:p + 1 + hdr].decode()
    if basic in (2, 3):
        obj = basic == 2
        offsz = (hdr & 3) + 1
        idsz = ((hdr >> 2) & 3) + 1 if obj else 0
        large = (hdr >> (4 if obj else 2)) & 1
        nsz = 4 if large else 1
        n = le(v, p + 1, nsz)
        ids = p + 1 + nsz
        offs = ids + n * idsz
        first = offs + (n + 1) * offsz
        vals = [decode(keys, v, first + le(v, offs + i * offsz, offsz)) for i in range(n)]
        if not obj:
            return vals
        return {keys[le(v, ids + i * idsz, idsz)]: vals[i] for i in range(n)}
    d = v[p + 1:]
    if hdr == 0:
        return None
    if hdr in (1, 2):
        return hdr == 1
    if hdr in (3, 4, 5, 6):
        return int.from_bytes(d[:1 << (hdr - 3)], "little", signed=True)
    if hdr == 7:
        return struct.unpack("<d", d[:8])[0]
    if hdr == 14:
        return struct.unpack("<f", d[:4])[0]
    if hdr in (8, 9, 10):
        size = {8: 4, 9: 8, 10: 16}[hdr]
        return dec_text(int.from_bytes(d[1:1 + size], "little", signed=True), d[0])
    if hdr == 11:
        return str(datetime.date(1970, 1, 1) + datetime.timedelta(days=int.from_bytes(d[:4], "little", signed=True)))
    if hdr in (12, 13, 18, 19):
        nanos = hdr in (18, 19)
        return ts_text(int.from_bytes(d[:8], "little", signed=True),
                       10 ** 9 if nanos else 10 ** 6, 9 if nanos else 6, hdr in (12, 18))
    if hdr in (15, 16):
        n = le(d, 0, 4)
        raw = d[4:4 + n]
        return base64.b64encode(raw).decode() if hdr == 15 else raw.decode()
    if hdr == 17:
        us = le(d, 0, 8)
        return "%02d:%02d:%02d.%06d" % (us // 3600000000, us // 60000000 % 60,
                                        us // 1000000 % 60, us % 1000000)
    if hdr == 20:
        return str(uuid.UUID(bytes=bytes(d[:16])))
    raise ValueError("primitive type %d" % hdr)


def expected_from_cat(x):
    """cat's row value -> section 3: variant groups {metadata, value} are decoded."""
    if isinstance(x, dict):
        if set(x) == {"metadata", "value"}:
            return decode(keys_of(base64.b64decode(x["metadata"])), base64.b64decode(x["value"]))
        return {k: expected_from_cat(v) for k, v in x.items()}
    if isinstance(x, list):
        return [expected_from_cat(v) for v in x]
    return x


def same(a, b):
    if isinstance(a, float) or isinstance(b, float):
        return (isinstance(a, (int, float)) and isinstance(b, (int, float))
                and math.isclose(a, b, rel_tol=1e-6))
    if isinstance(a, dict):
        return isinstance(b, dict) and list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return isinstance(b, list) and len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return type(a) is type(b) and a == b


# ---- values announced by trino_variant's descr column, written by hand ---------------------
DESCR = {
    0: None, 1: None, 2: True, 3: False, 4: 42, 5: 34, 6: -34, 7: 1000, 8: -1234, 9: 100000,
    10: 12345, 11: -12345, 12: 10000000000, 13: 14.3, 14: -14.3, 15: "hello", 16: "impala",
    17: "context", 18: "home", 19: "mobile", 20: "Alice", 21: "iceberg",
    22: "x" * 102,  # descr says "x100"; the value's length field says 0x66
    24: [1, 2, 3], 25: [1, 2, 3, 4, 10], 26: [], 39: {}, 50: "3.14", 51: "123456.789",
    54: -10.11, 55: "2024-11-07", 56: "1957-11-07", 57: "CgsMDQ==", 58: "12:33:54.123456",
}
DESCR_KEYS = {31: ["age", "name"], 32: ["active", "age", "name"], 33: ["page", "retries"],
              34: ["data"], 38: ["f0", "f299"]}


def run(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    if p.returncode:
        raise SystemExit("FAIL: %s: exit %d: %s" % (" ".join(cmd), p.returncode, p.stderr.strip()))
    return [json.loads(line) for line in p.stdout.splitlines() if line.strip()]


def main():
    shared = os.environ.get("ICD_SHARED", "")
    if not shared or not os.path.isdir(os.path.join(shared, V3)):
        print("skipped: corpus not found (set ICD_SHARED)")
        return SKIP
    exe = shlex.split(os.environ.get("ICEDRUID", "icedruid"))
    bad = checked = 0
    for name, location in TABLES.items():
        table = os.path.join(shared, V3, name)
        data = sorted(os.listdir(os.path.join(table, "data")))
        cat = []
        for f in data:
            cat += run(exe + ["cat", os.path.join(table, "data", f)])
        scan = run(exe + ["scan", table, "--remap", location + "=" + table])
        want = {r["id"]: expected_from_cat(r) for r in cat}
        got = {r["id"]: r for r in scan}
        if sorted(want) != sorted(got):
            print("FAIL %s: ids %s vs %s" % (name, sorted(got), sorted(want)))
            bad += 1
            continue
        for i, row in got.items():
            checked += 1
            if not same(row, want[i]):
                bad += 1
                print("FAIL %s id %d:\n  scan    %s\n  decoded %s" % (name, i, json.dumps(row),
                                                                     json.dumps(want[i])))
            if name != "trino_variant":
                continue
            if i in DESCR and not same(row["v"], DESCR[i]):
                bad += 1
                print("FAIL %s id %d (%s): %r, expected %r" % (name, i, row["descr"], row["v"], DESCR[i]))
            if i in DESCR_KEYS and list(row["v"]) != DESCR_KEYS[i]:
                bad += 1
                print("FAIL %s id %d (%s): keys %r" % (name, i, row["descr"], list(row["v"])))
        if name == "trino_variant" and not set(DESCR) <= set(got):
            bad += 1
            print("FAIL trino_variant: rows missing")
    print("%d rows checked, %d failures" % (checked, bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
