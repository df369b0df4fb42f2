"""Avro object container file writer (Avro 1.11 specification), for Iceberg metadata fixtures.

Schemas are the parsed Avro JSON (Python dicts, lists and strings), exactly what goes into
the file's ``avro.schema``.  Supported: all primitives, record, enum, array, map, fixed,
unions, named-type references, and logical types (encoded as their underlying type).

Values: records are dicts keyed by field name (a missing optional field is null); arrays are
lists; maps are dicts with str keys; fixed/bytes are bytes; enums are the symbol string.
A union value is written with the first branch that accepts it (None -> "null"); wrap a value
in ``Branch(index, value)`` to pick a branch explicitly.

Container layout: magic "Obj\\x01", the metadata map (avro.schema, avro.codec, plus the
caller's key/values), a 16-byte sync marker, then blocks of (count, byte size, data, sync).
Codecs: "null" and "deflate" (raw RFC 1951 deflate, as the Avro spec requires).
"""

import hashlib
import json
import struct
import zlib
from dataclasses import dataclass

MAGIC = b"Obj\x01"
PRIMITIVES = {"null", "boolean", "int", "long", "float", "double", "bytes", "string"}


@dataclass
class Branch:
    """Explicit union branch selection."""
    index: int
    value: object


def zigzag_varint(n: int) -> bytes:
    """Avro int/long: zigzag then base-128 varint."""
    if not -(1 << 63) <= n < (1 << 63):
        raise ValueError(f"{n} does not fit an Avro long")
    z = ((n << 1) ^ (n >> 63)) & 0xFFFFFFFFFFFFFFFF
    out = bytearray()
    while True:
        b = z & 0x7F
        z >>= 7
        if z:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


class Encoder:
    """Binary encoder for one schema; keeps the named types it has seen."""

    def __init__(self, schema):
        self.schema = schema
        self.names = {}
        self._collect_names(schema, None)

    # Named types (record, enum, fixed) may be referenced later by name.
    def _collect_names(self, s, namespace):
        if isinstance(s, list):
            for b in s:
                self._collect_names(b, namespace)
        elif isinstance(s, dict):
            t = s.get("type")
            if t in ("record", "error", "enum", "fixed"):
                ns = s.get("namespace", namespace)
                name = s["name"]
                self.names[name] = s
                if ns and "." not in name:
                    self.names[f"{ns}.{name}"] = s
                for f in s.get("fields", []):
                    self._collect_names(f["type"], ns)
            elif t == "array":
                self._collect_names(s["items"], namespace)
            elif t == "map":
                self._collect_names(s["values"], namespace)
            elif isinstance(t, (dict, list)):
                self._collect_names(t, namespace)

    def _resolve(self, s):
        if isinstance(s, str) and s not in PRIMITIVES:
            if s not in self.names:
                raise ValueError(f"unknown Avro type name {s!r}")
            return self.names[s]
        if isinstance(s, dict) and s.get("type") in PRIMITIVES:
            return s["type"]  # primitive with a logical type annotation
        if isinstance(s, dict) and isinstance(s.get("type"), (dict, list)):
            return self._resolve(s["type"])
        return s

    def encode(self, value) -> bytes:
        out = bytearray()
        self.write(out, self.schema, value)
        return bytes(out)

    def write(self, out: bytearray, schema, v) -> None:
        s = self._resolve(schema)
        if isinstance(s, list):
            index, v = self._pick_branch(s, v)
            out += zigzag_varint(index)
            self.write(out, s[index], v)
        elif s == "null":
            if v is not None:
                raise ValueError(f"null expected, got {v!r}")
        elif s == "boolean":
            out.append(1 if v else 0)
        elif s in ("int", "long"):
            if isinstance(v, bool) or not isinstance(v, int):
                raise TypeError(f"{s} expected, got {v!r}")
            if s == "int" and not -(1 << 31) <= v < (1 << 31):
                raise ValueError(f"{v} does not fit an Avro int")
            out += zigzag_varint(v)
        elif s == "float":
            out += struct.pack("<f", v)
        elif s == "double":
            out += struct.pack("<d", v)
        elif s in ("bytes", "string"):
            data = v.encode("utf-8") if s == "string" else bytes(v)
            out += zigzag_varint(len(data)) + data
        elif s["type"] in ("record", "error"):
            if not isinstance(v, dict):
                raise TypeError(f"record {s['name']} needs a dict, got {v!r}")
            unknown = set(v) - {f["name"] for f in s["fields"]}
            if unknown:
                raise ValueError(f"record {s['name']} has no fields {sorted(unknown)}")
            for f in s["fields"]:
                self.write(out, f["type"], v.get(f["name"]))
        elif s["type"] == "enum":
            out += zigzag_varint(s["symbols"].index(v))
        elif s["type"] == "fixed":
            v = bytes(v)
            if len(v) != s["size"]:
                raise ValueError(f"fixed {s['name']} needs {s['size']} bytes, got {len(v)}")
            out += v
        elif s["type"] == "array":
            if v:
                out += zigzag_varint(len(v))
                for item in v:
                    self.write(out, s["items"], item)
            out += zigzag_varint(0)
        elif s["type"] == "map":
            if v:
                out += zigzag_varint(len(v))
                for key, item in v.items():
                    self.write(out, "string", key)
                    self.write(out, s["values"], item)
            out += zigzag_varint(0)
        else:
            raise ValueError(f"unsupported Avro schema {schema!r}")

    def _pick_branch(self, union, v):
        if isinstance(v, Branch):
            return v.index, v.value
        for i, b in enumerate(union):
            if self._accepts(self._resolve(b), v):
                return i, v
        raise ValueError(f"no branch of union {union} accepts {v!r}")

    def _accepts(self, s, v) -> bool:
        if s == "null":
            return v is None
        if v is None:
            return False
        if s == "boolean":
            return isinstance(v, bool)
        if s in ("int", "long"):
            return isinstance(v, int) and not isinstance(v, bool)
        if s in ("float", "double"):
            return isinstance(v, (int, float)) and not isinstance(v, bool)
        if s == "string":
            return isinstance(v, str)
        if s == "bytes":
            return isinstance(v, (bytes, bytearray))
        t = s["type"]
        if t in ("record", "error", "map"):
            return isinstance(v, dict)
        if t == "array":
            return isinstance(v, list)
        if t == "fixed":
            return isinstance(v, (bytes, bytearray)) and len(v) == s["size"]
        if t == "enum":
            return v in s["symbols"]
        return False


def _compress(codec: str, data: bytes) -> bytes:
    if codec == "null":
        return data
    if codec == "deflate":
        c = zlib.compressobj(6, zlib.DEFLATED, -15)  # raw deflate, no zlib header
        return c.compress(data) + c.flush()
    raise ValueError(f"unsupported Avro codec {codec}")


def encode_container(schema, records, *, metadata=None, codec="null", sync=None,
                     block_records=1000) -> bytes:
    """Encode records into an Avro object container file.

    ``sync`` defaults to a digest of the schema and metadata so that the same input always
    gives the same bytes (fixtures are committed and must regenerate identically).
    """
    enc = Encoder(schema)
    schema_json = json.dumps(schema, separators=(",", ":"))
    meta = {"avro.schema": schema_json.encode(), "avro.codec": codec.encode()}
    for k, v in (metadata or {}).items():
        meta[k] = v.encode("utf-8") if isinstance(v, str) else bytes(v)
    if sync is None:
        digest = hashlib.sha256()
        for k in sorted(meta):
            digest.update(k.encode() + b"\0" + meta[k] + b"\0")
        sync = digest.digest()[:16]
    if len(sync) != 16:
        raise ValueError("sync marker must be 16 bytes")

    out = bytearray(MAGIC)
    out += zigzag_varint(len(meta))
    for k, v in meta.items():
        out += zigzag_varint(len(k.encode())) + k.encode()
        out += zigzag_varint(len(v)) + v
    out += zigzag_varint(0)
    out += sync
    records = list(records)
    for lo in range(0, len(records), max(1, block_records)):
        block = records[lo:lo + block_records]
        data = _compress(codec, b"".join(enc.encode(r) for r in block))
        out += zigzag_varint(len(block)) + zigzag_varint(len(data)) + data + sync
    return bytes(out)


def write_container(path, schema, records, **options) -> int:
    """Write an Avro container file; returns its size in bytes."""
    data = encode_container(schema, records, **options)
    with open(path, "wb") as f:
        f.write(data)
    return len(data)
