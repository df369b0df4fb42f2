"""A minimal, independent Avro object-container reader for the planner tests.

Standard library only. It exists so that the corpus tests can read manifest lists and
manifests WITHOUT going through icedruid's own Avro code: expectations derived with it are
independent of the program under test.

What it implements (Apache Avro 1.11 specification, "Object Container Files" and "Binary
Encoding"):
  * the header: magic b"Obj\\x01", the file metadata as an Avro map<bytes> (blocks of
    zig-zag long counts; a negative count is followed by the block's byte size), the
    16-byte sync marker;
  * data blocks: long object count, long byte size, the (compressed) objects, the sync
    marker, which must equal the header's;
  * codecs "null" and "deflate" (raw RFC 1951 stream: zlib with wbits=-15);
  * binary decoding of every schema type Iceberg manifests use: null, boolean, int/long
    (zig-zag varints), float, double (little-endian IEEE), bytes, string, record, enum,
    array and map (blocked, negative counts carry a byte size), union (long branch index),
    fixed; named types may be referenced by (full) name later in the schema.

Records decode to `Record`, a dict keyed by field name that also remembers each field's
Iceberg `field-id` (`rec.by_id(502)`), because Iceberg identifies manifest fields by id:
v1 and v2 writers spell some names differently (e.g. added_data_files_count vs
added_files_count, both id 504).
"""
import json
import struct
import zlib

MAGIC = b"Obj\x01"


class AvroError(Exception):
    pass


class Record(dict):
    """A decoded Avro record: name -> value, plus field-id -> name."""

    __slots__ = ("ids",)

    def __init__(self):
        super().__init__()
        self.ids = {}

    def by_id(self, field_id, default=None):
        name = self.ids.get(field_id)
        return self.get(name, default) if name is not None else default


class _Reader:
    def __init__(self, data, what):
        self.d = data
        self.i = 0
        self.what = what

    def need(self, n):
        if n < 0 or self.i + n > len(self.d):
            raise AvroError("%s: truncated at byte %d (need %d more)" % (self.what, self.i, n))

    def raw(self, n):
        self.need(n)
        v = self.d[self.i:self.i + n]
        self.i += n
        return v

    def long(self):
        # zig-zag varint, at most 10 bytes for a 64-bit value
        shift = 0
        acc = 0
        for _ in range(10):
            self.need(1)
            b = self.d[self.i]
            self.i += 1
            acc |= (b & 0x7F) << shift
            if not b & 0x80:
                return (acc >> 1) ^ -(acc & 1)
            shift += 7
        raise AvroError("%s: varint longer than 10 bytes at %d" % (self.what, self.i))

    def bytes_(self):
        n = self.long()
        if n < 0:
            raise AvroError("%s: negative length %d at %d" % (self.what, n, self.i))
        return self.raw(n)

    def at_end(self):
        return self.i >= len(self.d)


PRIMITIVES = {"null", "boolean", "int", "long", "float", "double", "bytes", "string"}


class _Schema:
    """Resolves named types; schemas stay plain JSON values (dict / list / str)."""

    def __init__(self, root):
        self.named = {}
        self._collect(root, None)
        self.root = root

    def _collect(self, s, ns):
        if isinstance(s, list):
            for b in s:
                self._collect(b, ns)
        elif isinstance(s, dict):
            t = s.get("type")
            if t in ("record", "error", "enum", "fixed"):
                name = s["name"]
                space = s.get("namespace", ns)
                full = name if "." in name or not space else space + "." + name
                self.named[full] = s
                self.named[name] = s  # short names too: manifest schemas are unambiguous
                if t in ("record", "error"):
                    inner = full.rsplit(".", 1)[0] if "." in full else space
                    for f in s["fields"]:
                        self._collect(f["type"], inner)
            elif t == "array":
                self._collect(s["items"], ns)
            elif t == "map":
                self._collect(s["values"], ns)
            elif isinstance(t, (dict, list)):
                self._collect(t, ns)

    def resolve(self, s):
        if isinstance(s, str):
            if s in PRIMITIVES:
                return s
            if s not in self.named:
                raise AvroError("unknown named type %r" % s)
            return self.named[s]
        if isinstance(s, dict) and isinstance(s.get("type"), str) and s["type"] in PRIMITIVES:
            return s["type"]  # {"type": "long", "logicalType": ...}: decode as the base type
        if isinstance(s, dict) and isinstance(s.get("type"), (dict, list)):
            return self.resolve(s["type"])
        return s

    def decode(self, s, r):
        s = self.resolve(s)
        if isinstance(s, str):
            if s == "null":
                return None
            if s == "boolean":
                b = r.raw(1)[0]
                if b > 1:
                    raise AvroError("%s: bad boolean byte %d" % (r.what, b))
                return b == 1
            if s in ("int", "long"):
                return r.long()
            if s == "float":
                return struct.unpack("<f", r.raw(4))[0]
            if s == "double":
                return struct.unpack("<d", r.raw(8))[0]
            if s == "bytes":
                return r.bytes_()
            if s == "string":
                return r.bytes_().decode("utf-8")
        if isinstance(s, list):
            k = r.long()
            if k < 0 or k >= len(s):
                raise AvroError("%s: union branch %d out of range" % (r.what, k))
            return self.decode(s[k], r)
        t = s["type"]
        if t in ("record", "error"):
            rec = Record()
            for f in s["fields"]:
                rec[f["name"]] = self.decode(f["type"], r)
                if "field-id" in f:
                    rec.ids[int(f["field-id"])] = f["name"]
            return rec
        if t == "enum":
            k = r.long()
            if k < 0 or k >= len(s["symbols"]):
                raise AvroError("%s: enum index %d out of range" % (r.what, k))
            return s["symbols"][k]
        if t == "fixed":
            return r.raw(int(s["size"]))
        if t == "array":
            out = []
            while True:
                n = r.long()
                if n == 0:
                    return out
                if n < 0:
                    n = -n
                    r.long()  # block size in bytes
                for _ in range(n):
                    out.append(self.decode(s["items"], r))
        if t == "map":
            out = {}
            while True:
                n = r.long()
                if n == 0:
                    return out
                if n < 0:
                    n = -n
                    r.long()
                for _ in range(n):
                    key = r.bytes_().decode("utf-8")
                    out[key] = self.decode(s["values"], r)
        raise AvroError("unsupported schema %r" % (s,))


class Container:
    """A whole Avro object-container file: .meta (str -> bytes), .schema, .records."""

    def __init__(self, path, data=None):
        self.path = path
        if data is None:
            with open(path, "rb") as fh:
                data = fh.read()
        r = _Reader(data, path)
        if r.raw(4) != MAGIC:
            raise AvroError("%s: not an Avro container (bad magic)" % path)
        self.meta = {}
        while True:
            n = r.long()
            if n == 0:
                break
            if n < 0:
                n = -n
                r.long()
            for _ in range(n):
                k = r.bytes_().decode("utf-8")
                self.meta[k] = r.bytes_()
        sync = r.raw(16)
        codec = self.meta.get("avro.codec", b"null").decode()
        if codec not in ("null", "deflate"):
            raise AvroError("%s: codec %s not supported by avro_min" % (path, codec))
        self.schema = json.loads(self.meta["avro.schema"].decode("utf-8"))
        sch = _Schema(self.schema)
        self.records = []
        while not r.at_end():
            count = r.long()
            size = r.long()
            block = r.raw(size)
            if codec == "deflate":
                block = zlib.decompress(block, -15)
            br = _Reader(block, "%s block at %d" % (path, r.i - size))
            for _ in range(count):
                self.records.append(sch.decode(sch.root, br))
            if not br.at_end():
                raise AvroError("%s: %d stray bytes after a block" % (path, len(block) - br.i))
            if r.raw(16) != sync:
                raise AvroError("%s: sync marker mismatch at %d" % (path, r.i - 16))

    def meta_str(self, key, default=None):
        v = self.meta.get(key)
        return v.decode("utf-8") if v is not None else default


def read(path):
    return Container(path)
