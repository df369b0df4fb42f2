#!/usr/bin/env python3
"""Materialized files are compressed as the table's own writer would compress them
(issue 13): the codec and level of the table's write properties, Iceberg's defaults when
unset, and the level is part of the content address.

  * write.parquet.compression-level / write.avro.compression-level apply to the codecs
    with levels (zstd, gzip); Iceberg's defaults: Parquet zstd 3 (parquet-java), Avro gzip
    = deflate 9 and Avro zstd 1 (org.apache.iceberg.avro.Avro);
  * a staged file's name changes with the level (a replica configured otherwise never
    serves other bytes under the same name), and not when the property is unset;
  * a level that is not an integer in the codec's range is one clear error naming the
    property, and nothing is staged.

Checks, on tables written here with tests/tools/icewriter (one data file with a position
delete, so it is materialized): for each level, the Parquet column chunks say ZSTD and
the bytes follow the level (the text column smaller at 19 than at 1, unset the same size
as 3); the Avro header names the codec, and the first deflate block is what
zlib gives at the expected level (recompressed with Python's zlib); the raw + staged
rows read back by DuckDB / hyparquet (Parquet) and icebird (Avro) equal `icedruid scan`;
bad levels are refused."""
import json
import os
import shutil
import sys
import tempfile
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.environ.get("ICD_SOURCE_DIR", os.path.dirname(os.path.dirname(HERE)))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(SRC, "tests", "tools"))
import stage_check as sc  # noqa: E402
from icewriter.iceberg import NestedField, Schema, Table  # noqa: E402

PREFIX = "/tmp/icedruid-stage-codec"
failures = []


def check(cond, msg):
    print(("ok: " if cond else "FAIL: ") + msg)
    if not cond:
        failures.append(msg)


def rows(n=4000):
    # s: distinct (so PLAIN, not dictionary) but compressible text
    words = ["alpha", "beta", "gamma", "delta", "epsilon"]
    return [(i, "row %05d of the %s table, %s part" % (i, words[i % 5], words[(i // 7) % 5]), i // 3)
            for i in range(n)]


def make_table(root, name, fmt, props):
    loc = PREFIX + "/" + name
    t = Table.create(root, loc, Schema([NestedField(1, "id", "long", True),
                                        NestedField(2, "s", "string"),
                                        NestedField(3, "n", "long")]), properties=props)
    files = t.write_data(rows(), file_format=fmt)
    t.append(files)
    # a position delete on the file, so that it is materialized
    t.row_delta([t.write_position_deletes([(files[0], 0), (files[0], 5)], file_format=fmt)])
    return t, loc


def spec_for(tmp, wh, name, fmt):
    path = sc.write_spec(tmp, wh, name)
    with open(path) as f:
        spec = json.load(f)
    spec["spec"]["ioConfig"]["inputFormat"] = {"type": fmt}
    with open(path, "w") as f:
        json.dump(spec, f)
    return path


def staged_files(doc, to):
    return [f for f in sc.listed_files(doc) if f.startswith(to)]


def inspect(path):
    return json.loads(sc.run(["inspect", path]).stdout)


def avro_header(path):
    """(codec, first block's compressed bytes) of an Avro OCF file, parsed here."""
    with open(path, "rb") as f:
        b = f.read()

    def varint(p):
        shift = v = 0
        while True:
            c = b[p]
            p += 1
            v |= (c & 0x7F) << shift
            shift += 7
            if not c & 0x80:
                return (v >> 1) ^ -(v & 1), p

    assert b[:4] == b"Obj\x01"
    p, meta = 4, {}
    while True:
        n, p = varint(p)
        if n == 0:
            break
        if n < 0:
            _, p = varint(p)
            n = -n
        for _ in range(n):
            kl, p = varint(p)
            k = b[p:p + kl].decode()
            p += kl
            vl, p = varint(p)
            meta[k] = b[p:p + vl]
            p += vl
    p += 16  # sync
    _, p = varint(p)  # object count
    size, p = varint(p)
    return meta.get("avro.codec", b"null").decode(), b[p:p + size]


def main():
    tmp = tempfile.mkdtemp(prefix="icd-test-stage-codec-")
    try:
        wh = os.path.join(tmp, "wh")
        # ---- Parquet: one table, staged with its level unset, then set to 1, 19, 3, back
        # to unset (a metadata update each time, same snapshot)
        names, sizes = {}, {}
        root = os.path.join(wh, "ns", "pq")
        t, loc = make_table(root, "pq", "PARQUET", {"write.parquet.compression-codec": "zstd"})
        spec, rm = spec_for(tmp, wh, "pq", "parquet"), ["--remap", loc + "=" + root]
        for label in ("unset", "1", "19", "3", "unset again"):
            t.set_properties({"write.parquet.compression-level": None if "unset" in label else label})
            to = os.path.join(tmp, "out-pq")  # one directory: a name already there is reused
            doc, summary, r = sc.stage(spec, to, rm)
            files = staged_files(doc, to) if doc else []
            check(len(files) == 1, "parquet level %s: one file staged: %s" % (label, files))
            if not files:
                continue
            names[label] = os.path.basename(files[0])
            chunks = [c for rg in inspect(files[0])["row_groups"] for c in rg["columns"]]
            # the text column (zstd's higher levels pay off on text; on PLAIN sequential
            # longs level 19 can come out larger than level 1)
            sizes[label] = sum(c["total_compressed_size"] for c in chunks if c["path"] == "s")
            codecs = {c["codec"] for c in chunks}
            check(codecs == {"ZSTD"}, "parquet level %s: column chunks are ZSTD: %s" % (label, codecs))
            problems, counts = sc.compare_table(root, spec, sc.listed_files(doc), rm)
            check(not problems, "parquet level %s: read back equals scan %s %s" % (label, counts, problems))
        if len(sizes) == 5:
            check(sizes["19"] < sizes["1"], "parquet: the text column at level 19 (%d bytes) is "
                  "smaller than at level 1 (%d bytes)" % (sizes["19"], sizes["1"]))
            check(sizes["unset"] == sizes["3"] and sizes["3"] not in (sizes["1"], sizes["19"]),
                  "parquet: unset is zstd's level 3 (%d = %d bytes)" % (sizes["unset"], sizes["3"]))
            check(len({names["unset"], names["1"], names["19"], names["3"]}) == 4
                  and names["unset again"] == names["unset"],
                  "parquet: the level set is part of the staged name, an unset level names the "
                  "file as before: %s" % names)

        # ---- Avro: gzip (Iceberg's default codec) at Iceberg's level 9 when unset
        for label, props, want_codec, want_level in (
                ("gzip_unset", {}, "deflate", 9),
                ("gzip_1", {"write.avro.compression-level": "1"}, "deflate", 1),
                ("zstd_unset", {"write.avro.compression-codec": "zstd"}, "zstandard", None)):
            name = "av_" + label
            root = os.path.join(wh, "ns", name)
            t, loc = make_table(root, name, "AVRO", props)
            spec, rm = spec_for(tmp, wh, name, "avro_ocf"), ["--remap", loc + "=" + root]
            to = os.path.join(tmp, "out-" + name)
            doc, summary, r = sc.stage(spec, to, rm)
            files = staged_files(doc, to) if doc else []
            check(len(files) == 1, "avro %s: one file staged: %s" % (label, files))
            if not files:
                continue
            codec, block = avro_header(files[0])
            check(codec == want_codec, "avro %s: codec %s" % (label, codec))
            if want_level is not None:
                raw = zlib.decompress(block, -15)
                c = zlib.compressobj(want_level, zlib.DEFLATED, -15, 8)
                again = c.compress(raw) + c.flush()
                check(again == block, "avro %s: the block is zlib's deflate at level %d "
                      "(%d bytes)" % (label, want_level, len(block)))
            problems, counts = sc.compare_table(root, spec, sc.listed_files(doc), rm)
            check(not problems, "avro %s: read back equals scan %s %s" % (label, counts, problems))

        # ---- bad levels: one line naming the property, nothing staged
        for label, key, value, codec in (
                ("pq_bad_text", "write.parquet.compression-level", "high", "zstd"),
                ("pq_bad_range", "write.parquet.compression-level", "23", "zstd"),
                ("pq_bad_gzip", "write.parquet.compression-level", "10", "gzip"),
                ("av_bad", "write.avro.compression-level", "-1", "gzip")):
            fmt = "AVRO" if label.startswith("av") else "PARQUET"
            props = {key: value, ("write.avro.compression-codec" if fmt == "AVRO"
                                  else "write.parquet.compression-codec"): codec}
            root = os.path.join(wh, "ns", label)
            t, loc = make_table(root, label, fmt, props)
            spec = spec_for(tmp, wh, label, "avro_ocf" if fmt == "AVRO" else "parquet")
            to = os.path.join(tmp, "out-" + label)
            doc, summary, r = sc.stage(spec, to, ["--remap", loc + "=" + root], ok=False)
            lines = [x for x in r.stderr.splitlines() if x.strip()]
            check(r.returncode != 0 and len(lines) == 1 and key in lines[0] and repr(value)[1:-1] in lines[0]
                  and not (os.path.isdir(to) and any(n.endswith((".parquet", ".avro")) for n in os.listdir(to))),
                  "%s: refused in one line, nothing staged: rc=%d %s" % (label, r.returncode, lines))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if failures:
        print("%d failure(s)" % len(failures))
        return 1
    print("ok: materialized files take the table's compression level")
    return 0


if __name__ == "__main__":
    sys.exit(main())
