#!/usr/bin/env python3
"""Writes the seed corpus of fuzz_puffin (tests/fuzz/corpus/fuzz_puffin/).

Everything is built here from the format specifications, without CRoaring, LZ4 or zstd
libraries: portable Roaring bitmaps (array, bitmap and run containers; cookies 12346 and
12347, with and without the offset header), deletion-vector blobs (length, magic, vector,
CRC-32), LZ4 frames with stored (uncompressed) blocks, Zstandard frames with raw blocks,
and Puffin files with plain and LZ4 footers.
Usage: python3 tests/fuzz/gen_puffin_seeds.py
"""
import json
import os
import struct
import zlib

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus", "fuzz_puffin")


def roaring32(values, runs=False):
    """Portable 32-bit Roaring serialization of a set of uint32 values."""
    chunks = {}
    for v in sorted(set(values)):
        chunks.setdefault(v >> 16, []).append(v & 0xFFFF)
    keys = sorted(chunks)
    bodies, is_run = [], []
    for k in keys:
        lows = chunks[k]
        rl = []
        for v in lows:
            if rl and rl[-1][0] + rl[-1][1] + 1 == v:
                rl[-1][1] += 1
            else:
                rl.append([v, 0])
        run_size = 2 + 4 * len(rl)
        plain_size = 2 * len(lows) if len(lows) <= 4096 else 8192
        if runs and run_size < plain_size:
            bodies.append(struct.pack("<H", len(rl)) +
                          b"".join(struct.pack("<HH", s, l) for s, l in rl))
            is_run.append(True)
        elif len(lows) <= 4096:
            bodies.append(b"".join(struct.pack("<H", v) for v in lows))
            is_run.append(False)
        else:
            words = [0] * 1024
            for v in lows:
                words[v >> 6] |= 1 << (v & 63)
            bodies.append(b"".join(struct.pack("<Q", w) for w in words))
            is_run.append(False)
    n = len(keys)
    has_run = any(is_run)
    if has_run:
        head = struct.pack("<I", 12347 | ((n - 1) << 16))
        flags = bytearray((n + 7) // 8)
        for i, r in enumerate(is_run):
            if r:
                flags[i // 8] |= 1 << (i % 8)
        head += bytes(flags)
        offsets = n >= 4
    else:
        head = struct.pack("<II", 12346, n)
        offsets = True
    head += b"".join(struct.pack("<HH", k, len(chunks[k]) - 1) for k in keys)
    pos = len(head) + (4 * n if offsets else 0)
    offs = b""
    for b in bodies:
        offs += struct.pack("<I", pos)
        pos += len(b)
    return head + (offs if offsets else b"") + b"".join(bodies)


def dv_blob(positions, runs=False):
    by_key = {}
    for p in positions:
        by_key.setdefault(p >> 32, []).append(p & 0xFFFFFFFF)
    vec = struct.pack("<Q", len(by_key))
    for k in sorted(by_key):
        vec += struct.pack("<I", k) + roaring32(by_key[k], runs)
    body = b"\xD1\xD3\x39\x64" + vec
    return struct.pack(">I", len(body)) + body + struct.pack(">I", zlib.crc32(body))


def xxh32(data, seed=0):
    p1, p2, p3, p4, p5 = 2654435761, 2246822519, 3266489917, 668265263, 374761393
    m = 0xFFFFFFFF

    def rotl(x, r):
        return ((x << r) | (x >> (32 - r))) & m

    i, n = 0, len(data)
    if n >= 16:
        v = [(seed + p1 + p2) & m, (seed + p2) & m, seed & m, (seed - p1) & m]
        while i + 16 <= n:
            for j in range(4):
                lane = struct.unpack_from("<I", data, i + 4 * j)[0]
                v[j] = (rotl((v[j] + lane * p2) & m, 13) * p1) & m
            i += 16
        h = (rotl(v[0], 1) + rotl(v[1], 7) + rotl(v[2], 12) + rotl(v[3], 18)) & m
    else:
        h = (seed + p5) & m
    h = (h + n) & m
    while i + 4 <= n:
        h = (rotl((h + struct.unpack_from("<I", data, i)[0] * p3) & m, 17) * p4) & m
        i += 4
    while i < n:
        h = (rotl((h + data[i] * p5) & m, 11) * p1) & m
        i += 1
    h ^= h >> 15
    h = (h * p2) & m
    h ^= h >> 13
    h = (h * p3) & m
    h ^= h >> 16
    return h


def lz4_frame(data):
    """One LZ4 frame with content size and stored blocks (no compression needed)."""
    desc = bytes([0x40 | 0x20 | 0x08, 0x40]) + struct.pack("<Q", len(data))  # v1, indep., size
    out = b"\x04\x22\x4D\x18" + desc + bytes([(xxh32(desc) >> 8) & 0xFF])
    for i in range(0, len(data), 65536):
        block = data[i:i + 65536]
        out += struct.pack("<I", len(block) | 0x80000000) + block
    return out + b"\0\0\0\0"


def zstd_frame(data):
    """One Zstandard frame: single segment, 4-byte content size, one raw block."""
    assert len(data) < (1 << 21)
    out = b"\x28\xB5\x2F\xFD" + bytes([0x80 | 0x20]) + struct.pack("<I", len(data))
    return out + struct.pack("<I", (len(data) << 3) | 1)[:3] + data


def puffin(blobs, compress=False):
    """blobs: list of (bytes, meta dict without offset/length)."""
    body, metas, off = b"", [], 4
    for data, meta in blobs:
        m = dict(meta)
        m["offset"], m["length"] = off, len(data)
        metas.append(m)
        body += data
        off += len(data)
    payload = json.dumps({"blobs": metas, "properties": {"created-by": "gen_puffin_seeds"}},
                         separators=(",", ":")).encode()
    if compress:
        payload = lz4_frame(payload)
    return (b"PFA1" + body + b"PFA1" + payload + struct.pack("<I", len(payload)) +
            struct.pack("<I", 1 if compress else 0) + b"PFA1")


def dv_meta(path, card):
    return {"type": "deletion-vector-v1", "fields": [2147483645], "snapshot-id": -1,
            "sequence-number": -1,
            "properties": {"referenced-data-file": path, "cardinality": str(card)}}


def main():
    os.makedirs(OUT, exist_ok=True)
    seeds = {}
    a = [0, 3, 7, 1000]
    b = list(range(10, 40)) + [70000, 5 << 32 | 9]
    dense = list(range(0, 65536, 3))  # a bitmap container
    runs = list(range(0, 300000)) + [400000, (1 << 32) + 1]  # >= 4 run containers
    seeds["dv_array.bin"] = dv_blob(a)
    seeds["dv_keys.bin"] = dv_blob(b)
    seeds["dv_runs.bin"] = dv_blob(b, runs=True)
    seeds["dv_empty.bin"] = dv_blob([])
    seeds["dv_bitmap.bin"] = dv_blob(dense)
    seeds["puffin_two_dvs.puffin"] = puffin([(dv_blob(a), dv_meta("s3://t/a.parquet", 4)),
                                              (dv_blob(b), dv_meta("s3://t/b.parquet", 32))])
    seeds["puffin_lz4_footer.puffin"] = puffin(
        [(dv_blob(runs, runs=True), dv_meta("s3://t/r.parquet", len(runs)))], compress=True)
    text = b"theta sketch stand-in " * 20
    stats = {"type": "apache-datasketches-theta-v1", "fields": [1], "snapshot-id": 5,
             "sequence-number": 1, "properties": {"ndv": "3"}}
    seeds["puffin_codecs.puffin"] = puffin([
        (zstd_frame(text), dict(stats, **{"compression-codec": "zstd"})),
        (lz4_frame(text), dict(stats, **{"compression-codec": "lz4"})),
        (b"raw", dict(stats, fields=[2])),
    ])
    seeds["puffin_empty.puffin"] = puffin([])
    for name, data in seeds.items():
        with open(os.path.join(OUT, name), "wb") as f:
            f.write(data)
    print("wrote %d seeds to %s" % (len(seeds), OUT))


if __name__ == "__main__":
    main()
