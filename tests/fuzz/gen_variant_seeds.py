#!/usr/bin/env python3
"""Writes the seed corpus of fuzz_variant (tests/fuzz/corpus/fuzz_variant/): hand-built
Variant values following the Parquet VariantEncoding.md layout. Each seed is a 2-byte
little-endian metadata length, the metadata, then the value."""
import os
import struct
import sys

OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "corpus", "fuzz_variant")


def meta(keys, osz=1):
    data = b"".join(k.encode() for k in keys)
    offs, o = [0], 0
    for k in keys:
        o += len(k.encode())
        offs.append(o)
    hdr = 0x01 | ((osz - 1) << 6)
    le = lambda v: v.to_bytes(osz, "little")
    return bytes([hdr]) + le(len(keys)) + b"".join(le(x) for x in offs) + data


def prim(tid, payload=b""):
    return bytes([tid << 2]) + payload


def short(s):
    b = s.encode()
    return bytes([(len(b) << 2) | 1]) + b


def array(vals, osz=1, large=False):
    body, offs = b"", []
    for v in vals:
        offs.append(len(body))
        body += v
    offs.append(len(body))
    hdr = ((osz - 1) | (4 if large else 0)) << 2 | 3
    n = len(vals).to_bytes(4 if large else 1, "little")
    return bytes([hdr]) + n + b"".join(o.to_bytes(osz, "little") for o in offs) + body


def obj(fields, osz=1, idsz=1, large=False):
    """fields: [(dictionary id, value)] in key order."""
    body, offs = b"", []
    for _, v in fields:
        offs.append(len(body))
        body += v
    offs.append(len(body))
    hdr = ((osz - 1) | ((idsz - 1) << 2) | (16 if large else 0)) << 2 | 2
    n = len(fields).to_bytes(4 if large else 1, "little")
    return (bytes([hdr]) + n + b"".join(i.to_bytes(idsz, "little") for i, _ in fields)
            + b"".join(o.to_bytes(osz, "little") for o in offs) + body)


E = meta([])
SEEDS = {
    "null": (E, prim(0)),
    "true": (E, prim(1)),
    "int8": (E, prim(3, b"\xfb")),
    "int16": (E, prim(4, struct.pack("<h", -300))),
    "int32": (E, prim(5, struct.pack("<i", 123456))),
    "int64": (E, prim(6, struct.pack("<q", -(2 ** 63)))),
    "double": (E, prim(7, struct.pack("<d", 1.5))),
    "decimal4": (E, prim(8, b"\x02" + struct.pack("<i", 12345))),
    "decimal8": (E, prim(9, b"\x03" + struct.pack("<q", -1))),
    "decimal16": (E, prim(10, b"\x00" + (10 ** 20).to_bytes(16, "little", signed=True))),
    "date": (E, prim(11, struct.pack("<i", 19000))),
    "ts": (E, prim(12, struct.pack("<q", 1700000000123456))),
    "ts_ntz_nanos": (E, prim(19, struct.pack("<q", -1))),
    "float": (E, prim(14, struct.pack("<f", 0.25))),
    "binary": (E, prim(15, struct.pack("<I", 3) + b"abc")),
    "string": (E, prim(16, struct.pack("<I", 6) + "h\u00e9llo".encode())),
    "time": (E, prim(17, struct.pack("<q", 3723000001))),
    "uuid": (E, prim(20, bytes(range(16)))),
    "short": (E, short("hi")),
    "object": (meta(["a", "b"]), obj([(0, prim(3, b"\x01")), (1, array([prim(1), prim(0)]))])),
    "object_wide": (meta(["key", "b"], osz=2),
                    obj([(0, obj([(1, array([]))]))], osz=3, idsz=2, large=True)),
    "array_large": (E, array([array([]), short("z")], osz=2, large=True)),
    "nested": (meta(["x", "y"]), array([obj([(0, short("v")), (1, array([prim(5, struct.pack("<i", 7))] * 3))])] * 2)),
}

os.makedirs(OUT, exist_ok=True)
for name, (m, v) in SEEDS.items():
    with open(os.path.join(OUT, name + ".bin"), "wb") as f:
        f.write(len(m).to_bytes(2, "little") + m + v)
print("wrote %d seeds to %s" % (len(SEEDS), OUT))
