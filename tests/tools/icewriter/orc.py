"""A minimal ORC writer for test fixtures (standard library only), from the ORC v1
specification: flat or nested schemas (struct, list, map), uncompressed, DIRECT column encodings with run-length
encoding v1, one or more stripes, file and stripe column statistics, the `iceberg.id` /
`iceberg.required` type attributes Iceberg writes (or none, for name-mapping tests).

    write_orc(path, [OrcColumn(name, type, field_id, required)], rows, stripe_rows=None)

`type` is an icetypes.Type or its text. Statistics: counts, hasNull, and min/max of
integers, floats (NaN left out), strings, dates, decimals (text) and timestamps (UTC ms). Supported: boolean, int, long, float, double,
date, timestamp, timestamptz (ORC `timestamp` / `timestamp with local time zone`),
string, binary, decimal(P<=18,S). Rows are dicts (or tuples in column order) of
icetypes-normalised values. The result tells the row count, file size and stripes.
Encodings written (spec section "Run Length Encoding" v1, "Column Encodings" DIRECT):
  PRESENT  boolean RLE (byte RLE over MSB-first bits), only when a column has nulls
  integers DATA signed integer RLE v1 (literal groups, zigzag varints)
  floats   DATA IEEE 754 little endian;  strings/binary DATA bytes + LENGTH unsigned RLE
  dates    DATA signed RLE (days);  timestamps DATA signed RLE of seconds from
           2015-01-01 00:00:00 UTC, SECONDARY unsigned RLE of nanos << 3
  decimals DATA zigzag varints of the unscaled value, SECONDARY signed RLE of the scale
The writer time zone of every stripe is UTC.
"""
import datetime
import os
import struct
from dataclasses import dataclass, field

from . import icetypes

TS_BASE = 1420070400  # 2015-01-01T00:00:00Z
KIND = {"boolean": 0, "int": 3, "long": 4, "float": 5, "double": 6, "string": 7, "binary": 8,
        "timestamp": 9, "list": 10, "map": 11, "struct": 12, "decimal": 14, "date": 15,
        "timestamptz": 18}


# ---- protobuf (proto2) encoding ---------------------------------------------------------
def _varint(n):
    out = bytearray()
    n &= (1 << 64) - 1
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def _zigzag(n):
    return (n << 1) ^ (n >> 63) if n >= 0 else ((-n) << 1) - 1


def pb_uint(fid, v):
    return _varint(fid << 3) + _varint(v)


def pb_sint(fid, v):
    return _varint(fid << 3) + _varint(_zigzag(v))


def pb_bytes(fid, b):
    if isinstance(b, str):
        b = b.encode("utf-8")
    return _varint((fid << 3) | 2) + _varint(len(b)) + b


def pb_double(fid, v):
    return _varint((fid << 3) | 1) + struct.pack("<d", v)


def pb_packed(fid, values):
    return pb_bytes(fid, b"".join(_varint(v) for v in values))


# ---- run-length encodings v1 ------------------------------------------------------------
def int_rle_v1(values, signed):
    out = bytearray()
    for i in range(0, len(values), 128):
        group = values[i:i + 128]
        out.append(256 - len(group))  # literal header: -n
        for v in group:
            out += _varint(_zigzag(v) if signed else v)
    return bytes(out)


def byte_rle(data):
    out = bytearray()
    for i in range(0, len(data), 128):
        group = data[i:i + 128]
        out.append(256 - len(group))
        out += bytes(group)
    return bytes(out)


def bool_rle(bits):
    packed = bytearray()
    for i in range(0, len(bits), 8):
        b = 0
        for k, bit in enumerate(bits[i:i + 8]):
            if bit:
                b |= 0x80 >> k
        packed.append(b)
    return byte_rle(packed)


# ---- columns ----------------------------------------------------------------------------
@dataclass
class OrcColumn:
    name: str
    type: object
    field_id: int | None = None  # None: no iceberg.id attribute
    required: bool = False

    def __post_init__(self):
        if isinstance(self.type, str):
            self.type = icetypes.parse(self.type)


@dataclass
class OrcFile:
    num_rows: int
    size: int
    stripes: list = field(default_factory=list)  # (offset, rows)


def _ts_parts(t, v):
    """timestamp value (micros since the epoch, or a datetime) -> (seconds, nanos)."""
    if isinstance(v, datetime.datetime):
        if v.tzinfo is None:
            v = v.replace(tzinfo=datetime.timezone.utc)
        delta = v - datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)
        micros = (delta.days * 86400 + delta.seconds) * 1_000_000 + delta.microseconds
    else:
        micros = int(v)
    # as Java's TimestampTreeWriter: seconds = (floored millis) / 1000 truncated toward zero,
    # nanos of the floored second; readers subtract a second when seconds < 0 and nanos
    # hold whole milliseconds (times in (-1 s, 0) cannot be told apart: avoid them)
    millis = micros // 1000
    secs = -(-millis // 1000) if millis < 0 else millis // 1000
    return secs, (micros % 1_000_000) * 1000


def _days(v):
    if isinstance(v, datetime.date):
        return (v - datetime.date(1970, 1, 1)).days
    return int(v)


def _unscaled(t, v):
    if isinstance(v, int):  # icetypes.normalize gives the unscaled value
        return v
    from decimal import Decimal
    return int(Decimal(v).scaleb(t.scale).to_integral_value())


def _bytes(v):
    return v.encode("utf-8") if isinstance(v, str) else bytes(v)


def _column_streams(col, values):
    """-> (list of (stream kind, bytes), ColumnStatistics bytes)."""
    t = col.type
    k = t.kind
    present = [v is not None for v in values]
    vals = [v for v in values if v is not None]
    streams = []
    if not all(present):
        streams.append((0, bool_rle(present)))
    stats = pb_uint(1, len(vals)) + pb_uint(10, 0 if all(present) else 1)
    if k == "struct":  # PRESENT only: the children hold the fields of the present rows
        pass
    elif k in ("list", "map"):  # LENGTH of each present list / map
        streams.append((2, int_rle_v1([len(v) for v in vals], False)))
    elif k == "boolean":
        streams.append((1, bool_rle([bool(v) for v in vals])))
        stats += pb_bytes(5, pb_packed(1, [sum(1 for v in vals if v)]))
    elif k in ("int", "long"):
        ints = [int(v) for v in vals]
        streams.append((1, int_rle_v1(ints, True)))
        if ints:
            stats += pb_bytes(2, pb_sint(1, min(ints)) + pb_sint(2, max(ints)) + pb_sint(3, sum(ints)))
    elif k in ("float", "double"):
        fmt = "<f" if k == "float" else "<d"
        streams.append((1, b"".join(struct.pack(fmt, float(v)) for v in vals)))
        finite = [float(v) for v in vals if float(v) == float(v)]
        if finite:
            stats += pb_bytes(3, pb_double(1, min(finite)) + pb_double(2, max(finite)))
    elif k in ("string", "binary"):
        bs = [_bytes(v) for v in vals]
        streams.append((1, b"".join(bs)))
        streams.append((2, int_rle_v1([len(b) for b in bs], False)))
        if k == "string" and bs:
            stats += pb_bytes(4, pb_bytes(1, min(bs)) + pb_bytes(2, max(bs)))
    elif k == "date":
        days = [_days(v) for v in vals]
        streams.append((1, int_rle_v1(days, True)))
        if days:
            stats += pb_bytes(7, pb_sint(1, min(days)) + pb_sint(2, max(days)))
    elif k in ("timestamp", "timestamptz"):
        parts = [_ts_parts(t, v) for v in vals]
        streams.append((1, int_rle_v1([s - TS_BASE for s, _ in parts], True)))
        streams.append((5, int_rle_v1([n << 3 for _, n in parts], False)))
        if parts:
            ms = [s * 1000 + n // 1_000_000 for s, n in parts]
            stats += pb_bytes(9, pb_sint(3, min(ms)) + pb_sint(4, max(ms)))
    elif k == "decimal":
        un = [_unscaled(t, v) for v in vals]
        streams.append((1, b"".join(_varint(_zigzag(u)) for u in un)))
        streams.append((5, int_rle_v1([t.scale] * len(un), True)))
        if un:
            def text(u):  # decimal text at the type's scale, as ORC writers print it
                sign, a = ("-" if u < 0 else ""), str(abs(u)).rjust(t.scale + 1, "0")
                return sign + (a[:-t.scale] + "." + a[-t.scale:] if t.scale else a)
            stats += pb_bytes(6, pb_bytes(1, text(min(un))) + pb_bytes(2, text(max(un))))
    else:
        raise ValueError("ORC writer: unsupported type %s" % k)
    return streams, stats


class _Node:
    """One ORC column (type id = its index in pre-order): a top-level column or a nested
    child (struct field, list element, map key / value)."""

    def __init__(self, name, t, field_id, required):
        self.name, self.type, self.field_id, self.required = name, t, field_id, required
        self.children = []
        self.id = None


def _nodes(columns, with_ids):
    """The type tree in pre-order (index 0: the root struct)."""
    out = [_Node(None, None, None, True)]

    def add(node):
        node.id = len(out)
        out.append(node)
        t = node.type
        kids = []
        if t.kind == "struct":
            kids = [_Node(n, ft, i, r) for i, n, ft, r in t.fields]
        elif t.kind == "list":
            kids = [_Node(None, t.element, t.element_id, t.element_required)]
        elif t.kind == "map":
            kids = [_Node(None, t.key, t.key_id, True), _Node(None, t.value, t.value_id, t.value_required)]
        for k in kids:
            if not with_ids:
                k.field_id = None
            add(k)
            node.children.append(k)

    for c in columns:
        n = _Node(c.name, c.type, c.field_id, c.required)
        add(n)
        out[0].children.append(n)
    return out


def _spread(node, values, out):
    """values[node.id] for the node and its descendants, from the node's own values. ORC
    children hold entries only for present parents (Java's StructTreeWriter writes the
    fields of the non-null rows; list and map children the elements of the present ones)."""
    out[node.id] = values
    t = node.type
    present = [v for v in values if v is not None]
    if t.kind == "struct":
        for k in node.children:
            _spread(k, [v.get(k.name) for v in present], out)
    elif t.kind == "list":
        _spread(node.children[0], [x for v in present for x in v], out)
    elif t.kind == "map":
        _spread(node.children[0], [a for v in present for a, _ in v], out)
        _spread(node.children[1], [b for v in present for _, b in v], out)


def _type_msg(node):
    t = node.type
    msg = pb_uint(1, KIND[t.kind])
    if node.children:
        msg += pb_packed(2, [k.id for k in node.children])
    if t.kind == "struct":
        msg += b"".join(pb_bytes(3, k.name) for k in node.children)
    if t.kind == "decimal":
        msg += pb_uint(5, t.precision) + pb_uint(6, t.scale)
    if node.field_id is not None:
        msg += pb_bytes(7, pb_bytes(1, "iceberg.id") + pb_bytes(2, str(node.field_id)))
        msg += pb_bytes(7, pb_bytes(1, "iceberg.required") +
                        pb_bytes(2, "true" if node.required else "false"))
    return msg


def write_orc(path, columns, rows, stripe_rows=None):
    rows = [r if isinstance(r, dict) else dict(zip((c.name for c in columns), r)) for r in rows]
    stripe_rows = stripe_rows or max(len(rows), 1)
    nodes = _nodes(columns, all(c.field_id is not None for c in columns))
    top = nodes[0].children

    def node_values(chunk):
        vals = {}
        for n in top:
            _spread(n, [r.get(n.name) for r in chunk], vals)
        return vals

    out = bytearray(b"ORC")
    stripes_info, stripe_stats = [], []
    for start in range(0, max(len(rows), 1) if rows else 0, stripe_rows):
        chunk = rows[start:start + stripe_rows]
        offset = len(out)
        data = bytearray()
        stream_msgs = []
        col_stats = [pb_uint(1, len(chunk))]  # root struct
        vals = node_values(chunk)
        for n in nodes[1:]:
            streams, st = _column_streams(n, vals[n.id])
            col_stats.append(st)
            for kind, body in streams:
                stream_msgs.append(pb_bytes(1, pb_uint(1, kind) + pb_uint(2, n.id) + pb_uint(3, len(body))))
                data += body
        encodings = [pb_bytes(2, pb_uint(1, 0)) for _ in nodes]  # DIRECT
        footer = b"".join(stream_msgs) + b"".join(encodings) + pb_bytes(3, "UTC")
        out += data + footer
        stripes_info.append(pb_uint(1, offset) + pb_uint(2, 0) + pb_uint(3, len(data)) +
                            pb_uint(4, len(footer)) + pb_uint(5, len(chunk)))
        stripe_stats.append(b"".join(pb_bytes(1, s) for s in col_stats))
    content_length = len(out)
    metadata = b"".join(pb_bytes(1, s) for s in stripe_stats)
    # file statistics: recomputed over all rows
    file_stats = [pb_uint(1, len(rows))]
    vals = node_values(rows)
    for n in nodes[1:]:
        file_stats.append(_column_streams(n, vals[n.id])[1])
    root = pb_uint(1, KIND["struct"]) + pb_packed(2, [n.id for n in top]) + \
        b"".join(pb_bytes(3, n.name) for n in top)
    types = [root] + [_type_msg(n) for n in nodes[1:]]
    footer = (pb_uint(1, 3) + pb_uint(2, content_length) +
              b"".join(pb_bytes(3, s) for s in stripes_info) +
              b"".join(pb_bytes(4, t) for t in types) + pb_uint(6, len(rows)) +
              b"".join(pb_bytes(7, s) for s in file_stats) + pb_uint(8, 0) + pb_uint(9, 0))
    ps = (pb_uint(1, len(footer)) + pb_uint(2, 0) + pb_uint(3, 262144) + pb_packed(4, [0, 12]) +
          pb_uint(5, len(metadata)) + pb_uint(6, 9) + pb_bytes(8000, "ORC"))
    out += metadata + footer + ps + bytes([len(ps)])
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    with open(path, "wb") as f:
        f.write(out)
    return OrcFile(len(rows), len(out), [(s, min(stripe_rows, len(rows) - s))
                                         for s in range(0, len(rows), stripe_rows)])
