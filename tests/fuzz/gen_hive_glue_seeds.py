"""Writes the seed corpora of fuzz_hive_reply (get_table replies in the Thrift binary
protocol, built with tests/catalog/hive_server.py's writer: a full Iceberg table, a
non-Iceberg one, NoSuchObjectException, MetaException, TApplicationException, truncated and
framing-confused replies) and fuzz_glue_response (a status byte + GetTable bodies).
Run: python3 tests/fuzz/gen_hive_glue_seeds.py"""
import json
import os
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "catalog"))
import hive_server as hs  # noqa: E402


def reply(entry, db="ice", name="t"):
    cfg = {"tables": {} if entry is None else {db + "/" + name: entry}}
    return hs.reply_get_table(cfg, {1: db, 2: name}, 1)


def meta_exception():
    w = hs.W()
    w.message("get_table", hs.REPLY, 1)
    w.field(hs.STRUCT, 1)
    w.field(hs.STRING, 1); w.string("MetaException: boom")
    w.stop(); w.stop()
    return bytes(w.b)


def main():
    out = os.path.join(HERE, "corpus", "fuzz_hive_reply")
    os.makedirs(out, exist_ok=True)
    iceberg = {"metadata_location": "s3://b/w/ice/t/metadata/v3.metadata.json",
               "table_type": "ICEBERG", "location": "s3://b/w/ice/t"}
    full = reply(iceberg)
    seeds = {
        "iceberg_table.bin": full,
        "hive_table.bin": reply({"table_type": None, "location": "/w/t"}),
        "no_such_object.bin": reply(None),
        "meta_exception.bin": meta_exception(),
        "unknown_method.bin": hs.reply_unknown("get_table", 1),
        "truncated.bin": full[: len(full) // 2],
        "framed.bin": struct.pack(">i", len(full)) + full,
    }
    for name, data in seeds.items():
        with open(os.path.join(out, name), "wb") as f:
            f.write(data)
    out = os.path.join(HERE, "corpus", "fuzz_glue_response")
    os.makedirs(out, exist_ok=True)
    table = {"Table": {"Name": "t", "DatabaseName": "db", "TableType": "EXTERNAL_TABLE",
                       "Parameters": {"table_type": "ICEBERG",
                                      "metadata_location": "s3://b/w/t/metadata/v1.metadata.json"},
                       "StorageDescriptor": {"Location": "s3://b/w/t", "Columns": []}}}
    glue = {
        "ok.json": (0, table),
        "not_iceberg.json": (0, {"Table": {"Name": "t", "Parameters": {"table_type": "HIVE"}}}),
        "not_found.json": (1, {"__type": "com.amazonaws.glue#EntityNotFoundException",
                               "Message": "Table t not found."}),
        "access_denied.json": (1, {"__type": "AccessDeniedException", "message": "denied"}),
        "bad_signature.json": (2, {"__type": "InvalidSignatureException",
                                   "message": "The request signature we calculated does not "
                                              "match"}),
        "internal.json": (3, {"__type": "InternalServiceException"}),
    }
    for name, (status, obj) in glue.items():
        with open(os.path.join(out, name), "wb") as f:
            f.write(bytes([status]) + json.dumps(obj).encode())


if __name__ == "__main__":
    main()
