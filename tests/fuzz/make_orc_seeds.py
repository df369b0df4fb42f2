#!/usr/bin/env python3
"""Writes the seed corpus of fuzz_orc (tests/fuzz/corpus/fuzz_orc/):
  * whole ORC files: the files the ORC unit tests build in memory, dumped by running
    test_orc_file with ORC_SEED_DIR set (pass the build directory as argument 1);
  * stream-decoder inputs: a mode byte (see fuzz_orc.c) followed by the worked examples
    of the ORC specification for each run-length encoding, plus framed chunks.
Usage: python3 tests/fuzz/make_orc_seeds.py BUILD_DIR
"""
import os
import subprocess
import sys
import zlib

here = os.path.dirname(os.path.abspath(__file__))
out = os.path.join(here, "corpus", "fuzz_orc")
os.makedirs(out, exist_ok=True)

env = dict(os.environ, ORC_SEED_DIR=out)
subprocess.run([os.path.join(sys.argv[1], "tests", "test_orc_file")], env=env, check=True,
               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

def seed(name, mode, body):
    with open(os.path.join(out, name), "wb") as fh:
        fh.write(bytes([mode]) + bytes(body))

# modes: 0..3 integer RLE (bit 0 = v2, bit 1 = signed), 4 byte RLE, 5 boolean RLE,
# 6 decimal varints, 7 + (codec << 3) + (block << 5): chunk framing
seed("rle1_run", 0, [0x61, 0x00, 0x07, 0x61, 0xff, 0x64, 0xfb, 0x02, 0x03, 0x04, 0x07, 0x0b])
seed("rle1_signed", 2, [0x01, 0x02, 0x05, 0xfb, 0x02, 0x03, 0x04, 0x07, 0x0b])
seed("rle2_short_repeat", 1, [0x0a, 0x27, 0x10])
seed("rle2_direct", 1, [0x5e, 0x03, 0x5c, 0xa1, 0xab, 0x1e, 0xde, 0xad, 0xbe, 0xef])
seed("rle2_patched", 1, [0x8e, 0x13, 0x2b, 0x21, 0x07, 0xd0, 0x1e, 0x00, 0x14, 0x70, 0x28,
                         0x32, 0x3c, 0x46, 0x50, 0x5a, 0x64, 0x6e, 0x78, 0x82, 0x8c, 0x96,
                         0xa0, 0xaa, 0xb4, 0xbe, 0xfc, 0xe8])
seed("rle2_delta", 1, [0xc6, 0x09, 0x02, 0x02, 0x22, 0x42, 0x42, 0x46])
seed("rle2_delta_signed", 3, [0xc0, 0x04, 0x14, 0x03, 0xc6, 0x03, 0x64, 0x13, 0x51])
seed("byte_rle", 4, [0x61, 0x00, 0xfe, 0x44, 0x45])
seed("bool_rle", 5, [0xff, 0x80, 0x00, 0xaa])
seed("decimal_varints", 6, [0x00, 0x01, 0xe2, 0xc0, 0x01, 0x82, 0x80, 0x80, 0x80, 0xc8,
                            0xfa, 0xf6, 0xf4, 0x8c, 0xc1, 0xe6, 0xc9, 0xe5, 0xa7, 0x06])
text = b"orc chunk framing " * 20
comp = zlib.compressobj(6, zlib.DEFLATED, -15)
deflated = comp.compress(text) + comp.flush()
def header(n, original):
    h = n << 1 | (1 if original else 0)
    return [h & 0xff, (h >> 8) & 0xff, (h >> 16) & 0xff]
seed("zlib_chunks", 7 | (1 << 3) | (1 << 5),
     header(len(deflated), False) + list(deflated) + header(5, True) + list(b"hello"))
seed("original_chunk", 7 | (2 << 3), header(5, True) + list(b"hello"))
print("seeds in", out, len(os.listdir(out)))

# whole files from the fixture writer (tests/tools/icewriter/orc.py): several stripes,
# nulls, every type it writes, iceberg.id attributes; and an Iceberg position delete file
sys.path.insert(0, os.path.join(here, "..", "tools"))
from icewriter import orc  # noqa: E402

cols = [orc.OrcColumn("id", "long", 1, True), orc.OrcColumn("name", "string", 2),
        orc.OrcColumn("price", "decimal(10,2)", 3), orc.OrcColumn("ts", "timestamptz", 4),
        orc.OrcColumn("local_ts", "timestamp", 5), orc.OrcColumn("day", "date", 6),
        orc.OrcColumn("score", "double", 7), orc.OrcColumn("ratio", "float", 8),
        orc.OrcColumn("flag", "boolean", 9), orc.OrcColumn("blob", "binary", 10),
        orc.OrcColumn("small", "int", 11)]
rows = [(i, None if i % 3 == 0 else "n%d" % i, i * 101 - 500, 1700000000000000 + i * 1000001,
         1500000000000000 + i, 19000 + i, i / 3.0, i / 4.0, i % 2 == 0, bytes([i, 0, i]), -i)
        for i in range(10)]
orc.write_orc(os.path.join(out, "icewriter_types.orc"), cols, rows, stripe_rows=4)
orc.write_orc(os.path.join(out, "icewriter_pos_deletes.orc"),
              [orc.OrcColumn("file_path", "string", 2147483546, True),
               orc.OrcColumn("pos", "long", 2147483545, True)],
              [("/t/data/a.orc", 0), ("/t/data/a.orc", 5), ("/t/data/b.orc", 2)])
