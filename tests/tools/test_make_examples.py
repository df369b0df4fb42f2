#!/usr/bin/env python3
"""Checks the fixture writer itself (no third-party readers needed).

1. make_examples.sh regenerates examples/warehouse byte for byte (deterministic output).
2. The edge-case tables regenerate identically and their JSON descriptions are complete and
   consistent (every listed delete exists, applies_to mirrors the data files' delete lists).
3. Encoders against the worked examples of their specifications: the thrift compact varint,
   the Parquet RLE/bit-packed hybrid, Avro zigzag longs, Iceberg single-value bounds.
"""

import filecmp
import json
import os
import struct
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.environ.get("ICD_SOURCE_DIR") or os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, HERE)
sys.dont_write_bytecode = True

from icewriter import avro, icetypes, parquet, thrift  # noqa: E402

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print(f"FAIL: {what}")


def tree(root):
    out = []
    for d, _, files in os.walk(root):
        out += [os.path.relpath(os.path.join(d, f), root) for f in files]
    return sorted(out)


def compare_trees(a, b, label):
    ta, tb = tree(a), tree(b)
    check(ta == tb, f"{label}: file lists differ: {sorted(set(ta) ^ set(tb))}")
    for rel in set(ta) & set(tb):
        fa, fb = os.path.join(a, rel), os.path.join(b, rel)
        if rel.endswith(".json") and "/" not in rel:
            # Edge-case descriptions name their own output directory in "remap".
            ja, jb = json.load(open(fa)), json.load(open(fb))
            ja.pop("remap", None)
            jb.pop("remap", None)
            check(ja == jb, f"{label}: {rel} differs")
        else:
            check(filecmp.cmp(fa, fb, shallow=False), f"{label}: {rel} differs")
    return ta


def test_examples_regenerate_identically(tmp):
    committed = os.path.join(REPO, "examples", "warehouse")
    if not os.path.isdir(committed):
        check(False, f"{committed} is missing")
        return
    out = os.path.join(tmp, "warehouse")
    subprocess.run(["bash", os.path.join(REPO, "tests", "tools", "make_examples.sh"), out],
                   check=True, stdout=subprocess.DEVNULL)
    files = compare_trees(committed, out, "examples")
    check(len(files) >= 20, f"examples: only {len(files)} files")
    print(f"examples: {len(files)} files regenerate byte-identically")


def test_edge_cases(tmp):
    runs = []
    for n in (1, 2):
        out = os.path.join(tmp, f"edge{n}")
        subprocess.run([sys.executable, os.path.join(HERE, "make_fixture.py"), "edge-cases", out],
                       check=True, stdout=subprocess.DEVNULL)
        runs.append(out)
    compare_trees(runs[0], runs[1], "edge cases (two runs)")
    index = json.load(open(os.path.join(runs[0], "index.json")))
    check(len(index["tables"]) == 5, "five edge-case tables")
    for name in index["tables"]:
        d = json.load(open(os.path.join(runs[0], f"{name}.json")))
        deletes = {x["path"]: x for x in d["delete_files"]}
        for f in d["data_files"]:
            check(os.path.isfile(os.path.join(runs[0], name, f["relative_path"])), f"{name}: {f['path']} exists")
            for p in f["deletes"]:
                check(p in deletes, f"{name}: delete {p} described")
                check(f["path"] in deletes[p]["applies_to"], f"{name}: applies_to of {p} lists {f['path']}")
        for x in d["delete_files"]:
            check(os.path.isfile(os.path.join(runs[0], name, x["relative_path"])), f"{name}: {x['path']} exists")
            check(x["content"] in ("position", "equality"), f"{name}: content of {x['path']}")
            check((x["equality_ids"] is not None) == (x["content"] == "equality"), f"{name}: equality_ids")
        check(d["expected_rows"] == sorted(d["expected_rows"], key=lambda r: r["id"]), f"{name}: rows sorted")
        check(d["remap"].startswith(d["location"] + "="), f"{name}: remap")
    # The scenario-specific facts the planner helper relies on.
    eq = json.load(open(os.path.join(runs[0], "equal_seq.json")))
    check([r["id"] for r in eq["expected_rows"]] == [2, 4], "equal_seq rows")
    dangling = json.load(open(os.path.join(runs[0], "dangling_pos.json")))
    check([x["applies_to"] for x in dangling["delete_files"] if x["content"] == "position"] == [[]],
          "dangling_pos: the position delete applies to nothing")
    seq = json.load(open(os.path.join(runs[0], "explicit_older_seq.json")))
    check([(f["data_sequence_number"], f["file_sequence_number"]) for f in seq["data_files"]]
          == [(1, 1), (1, 3), (3, 3)], "explicit_older_seq sequence numbers")
    print(f"edge cases: {len(index['tables'])} tables, deterministic, descriptions consistent")


def test_encoders():
    # Thrift compact protocol spec: varint of 300 is AC 02; zigzag maps -1 to 1, 1 to 2.
    check(thrift.varint(300) == b"\xac\x02", "thrift varint(300)")
    check([thrift.zigzag(v) for v in (0, -1, 1, -2, 2)] == [0, 1, 2, 3, 4], "thrift zigzag")
    # Thrift: a struct {1: i32 = 1} is header 0x15, zigzag(1) = 0x02, stop 0x00.
    check(thrift.encode_struct([(1, thrift.I32, 1)]) == b"\x15\x02\x00", "thrift struct")
    # Thrift: field id jump > 15 uses the long form (type byte, then zigzag i16 id).
    check(thrift.encode_struct([(16, thrift.BOOL, True)]) == b"\x01\x20\x00", "thrift long field header")

    # parquet-format Encodings.md, bit-packing example: 0..7 at width 3 -> 88 C6 FA
    # (preceded by the hybrid header for one group of 8: (1 << 1) | 1).
    check(parquet.rle_hybrid(list(range(8)), 3) == b"\x03\x88\xc6\xfa", "RLE hybrid bit-packed")
    # An RLE run: header (count << 1), then the value in ceil(width / 8) bytes.
    check(parquet.rle_hybrid([1] * 10, 1) == b"\x14\x01", "RLE hybrid run")
    check(parquet.rle_hybrid([1, 0, 1], 1) == b"\x03\x05", "RLE hybrid short tail is padded")

    # Avro spec, "Binary encoding": zigzag examples.
    expected = {0: b"\x00", -1: b"\x01", 1: b"\x02", -2: b"\x03", 2: b"\x04",
                -64: b"\x7f", 64: b"\x80\x01"}
    for v, b in expected.items():
        check(avro.zigzag_varint(v) == b, f"avro zigzag {v}")
    # Avro spec: the string "foo" is 06 66 6f 6f; a union ["null","string"] prefixes the index.
    enc = avro.Encoder({"type": "record", "name": "r", "fields": [
        {"name": "a", "type": "string"}, {"name": "b", "type": ["null", "string"]}]})
    check(enc.encode({"a": "foo", "b": None}) == b"\x06foo\x00", "avro record with null union")
    check(enc.encode({"a": "foo", "b": "x"}) == b"\x06foo\x02\x02x", "avro record with string union")
    data = avro.encode_container("long", [1, 2], sync=b"S" * 16)
    check(data.startswith(b"Obj\x01") and data.endswith(b"S" * 16), "avro container framing")

    # Iceberg Appendix D: little-endian ints, UTF-8 strings, big-endian two's complement decimals.
    sv = icetypes.single_value_bytes
    check(sv(icetypes.parse("int"), -2) == struct.pack("<i", -2), "bound int")
    check(sv(icetypes.parse("long"), 1001) == struct.pack("<q", 1001), "bound long")
    check(sv(icetypes.parse("string"), "é") == "é".encode(), "bound string")
    check(sv(icetypes.parse("decimal(10,2)"), icetypes.normalize(icetypes.parse("decimal(10,2)"), "19.99"))
          == (1999).to_bytes(2, "big"), "bound decimal 19.99")
    check(sv(icetypes.parse("decimal(10,2)"), -1) == b"\xff", "bound decimal -0.01")
    check(icetypes.decimal_bytes_needed(9) == 4 and icetypes.decimal_bytes_needed(18) == 8
          and icetypes.decimal_bytes_needed(38) == 16, "decimal byte widths")
    print("encoders match their specification examples")


def rle_hybrid_decode(data, bit_width, count):
    """Decoder written from parquet-format Encodings.md, independent of the encoder."""
    out, i = [], 0
    while len(out) < count:
        header = shift = 0
        while True:
            b = data[i]
            i += 1
            header |= (b & 0x7F) << shift
            shift += 7
            if not b & 0x80:
                break
        if header & 1:  # bit-packed: (header >> 1) groups of 8 values, LSB first
            nbytes = (header >> 1) * bit_width
            bits = int.from_bytes(data[i:i + nbytes], "little")
            i += nbytes
            out += [(bits >> (k * bit_width)) & ((1 << bit_width) - 1) for k in range((header >> 1) * 8)]
        else:           # RLE: (header >> 1) repeats of a ceil(width / 8)-byte value
            width = (bit_width + 7) // 8
            out += [int.from_bytes(data[i:i + width], "little")] * (header >> 1)
            i += width
    check(i == len(data), "RLE hybrid: no trailing bytes")
    return out[:count]


def test_rle_round_trip():
    import random
    rng = random.Random(7)
    cases = 0
    for width in (1, 2, 3, 5, 8, 9, 17):
        for _ in range(60):
            values = []
            while len(values) < rng.randint(0, 200):
                v = rng.randrange(1 << width)
                values += [v] * rng.choice((1, 1, 2, 3, 7, 8, 9, 15, 16, 40))
            got = rle_hybrid_decode(parquet.rle_hybrid(values, width), width, len(values))
            check(got == values, f"RLE hybrid round trip width {width}: {values[:20]}...")
            cases += 1
    print(f"RLE hybrid: {cases} random sequences round-trip through a spec-derived decoder")


def main():
    with tempfile.TemporaryDirectory() as tmp:
        test_encoders()
        test_rle_round_trip()
        test_examples_regenerate_identically(tmp)
        test_edge_cases(tmp)
    if failures:
        print(f"{len(failures)} check(s) failed")
        return 1
    print("all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
