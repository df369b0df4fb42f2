#!/usr/bin/env python3
"""Deletion vectors of the corpus, checked against the manifests.

Reads the table's Avro manifests with a small independent Avro decoder (below), takes every
delete entry whose file_format is PUFFIN (referenced_data_file, content_offset,
content_size_in_bytes, record_count), and checks that `icedruid inspect` on the Puffin file
lists a deletion-vector-v1 blob at exactly that offset and length, for that data file, that
decodes with a valid CRC to record_count positions. The snapshot summary's
total-position-deletes must equal the sum of record_count. Skips (77) without ICD_SHARED.
"""
import glob
import io
import json
import os
import struct
import subprocess
import sys
import zlib

TABLE = "impala/iceberg_v3/iceberg_v3_deletion_vectors"
LOCATION = "hdfs://localhost:20500/test-warehouse/iceberg_v3_deletion_vectors"


def read_long(f):
    shift = result = 0
    while True:
        b = f.read(1)
        if not b:
            raise EOFError("truncated varint")
        b = b[0]
        result |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            break
    return (result >> 1) ^ -(result & 1)


def decode(schema, f, names):
    if isinstance(schema, list):
        return decode(schema[read_long(f)], f, names)
    if isinstance(schema, dict):
        t = schema["type"]
        if t == "record":
            names[schema["name"]] = schema
            return {fl["name"]: decode(fl["type"], f, names) for fl in schema["fields"]}
        if t == "array" or t == "map":
            out = [] if t == "array" else {}
            while True:
                n = read_long(f)
                if n == 0:
                    return out
                if n < 0:
                    n = -n
                    read_long(f)  # block size in bytes
                for _ in range(n):
                    if t == "array":
                        out.append(decode(schema["items"], f, names))
                    else:
                        k = decode("string", f, names)
                        out[k] = decode(schema["values"], f, names)
        if t == "fixed":
            names[schema["name"]] = schema
            return f.read(schema["size"])
        if t == "enum":
            return schema["symbols"][read_long(f)]
        return decode(t, f, names)  # {"type": "long", "logicalType": ...}
    if schema == "null":
        return None
    if schema == "boolean":
        return f.read(1) == b"\x01"
    if schema in ("int", "long"):
        return read_long(f)
    if schema == "float":
        return struct.unpack("<f", f.read(4))[0]
    if schema == "double":
        return struct.unpack("<d", f.read(8))[0]
    if schema == "bytes":
        return f.read(read_long(f))
    if schema == "string":
        return f.read(read_long(f)).decode("utf-8")
    return decode(names[schema], f, names)


def read_avro(path):
    data = open(path, "rb").read()
    f = io.BytesIO(data)
    assert f.read(4) == b"Obj\x01", path
    meta = decode({"type": "map", "values": "bytes"}, f, {})
    sync = f.read(16)
    schema = json.loads(meta["avro.schema"])
    codec = meta.get("avro.codec", b"null").decode()
    rows = []
    while f.tell() < len(data):
        count = read_long(f)
        block = f.read(read_long(f))
        if codec == "deflate":
            block = zlib.decompress(block, -15)
        elif codec != "null":
            raise SystemExit("unsupported codec " + codec)
        bf = io.BytesIO(block)
        for _ in range(count):
            rows.append(decode(schema, bf, {}))
        assert f.read(16) == sync, "bad sync marker"
    return rows


def main():
    shared = os.environ.get("ICD_SHARED", "")
    table = os.path.join(shared, "corpus", TABLE)
    if not shared or not os.path.isdir(table):
        print("skipped: corpus table %s not found (ICD_SHARED)" % TABLE)
        return 77
    icedruid = os.environ["ICEDRUID"]

    dvs = []
    for path in sorted(glob.glob(os.path.join(table, "metadata", "*-m[0-9]*.avro"))):
        for e in read_avro(path):
            df = e["data_file"]
            if e["status"] != 2 and df["file_format"].upper() == "PUFFIN":
                dvs.append(df)
    if len(dvs) != 2:
        print("expected 2 deletion vectors in the manifests, found %d" % len(dvs))
        return 1

    meta = json.load(open(os.path.join(table, "metadata", "v3.metadata.json")))
    cur = [s for s in meta["snapshots"] if s["snapshot-id"] == meta["current-snapshot-id"]][0]
    total = int(cur["summary"]["total-position-deletes"])
    if total != sum(d["record_count"] for d in dvs):
        print("record_count sum %d != total-position-deletes %d" %
              (sum(d["record_count"] for d in dvs), total))
        return 1

    failures = 0
    inspected = {}
    for d in dvs:
        assert d["file_path"].startswith(LOCATION + "/")
        local = os.path.join(table, d["file_path"][len(LOCATION) + 1:])
        if local not in inspected:
            r = subprocess.run([icedruid, "inspect", local], capture_output=True, text=True)
            if r.returncode != 0:
                print("inspect failed:", r.stderr)
                return 1
            inspected[local] = json.loads(r.stdout)
        doc = inspected[local]
        blobs = [b for b in doc["blobs"] if b["offset"] == d["content_offset"]]
        ok = (len(blobs) == 1 and blobs[0]["type"] == "deletion-vector-v1"
              and blobs[0]["length"] == d["content_size_in_bytes"]
              and blobs[0]["properties"]["referenced-data-file"] == d["referenced_data_file"]
              and int(blobs[0]["properties"]["cardinality"]) == d["record_count"]
              and blobs[0]["deletion_vector"]["cardinality"] == d["record_count"]
              and blobs[0]["deletion_vector"]["crc_ok"] is True
              and len(blobs[0]["deletion_vector"]["first_positions"]) == d["record_count"])
        print("%s offset %d length %d record_count %d: %s" %
              (os.path.basename(d["referenced_data_file"]), d["content_offset"],
               d["content_size_in_bytes"], d["record_count"], "ok" if ok else "MISMATCH"))
        if not ok:
            print(json.dumps(blobs, indent=1))
            failures += 1
    # Two DVs share one Puffin file: each was found by its own offset.
    print("%d deletion vectors in %d Puffin file(s)" % (len(dvs), len(inspected)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
