"""A minimal, spec-valid Parquet writer for flat schemas (test fixtures only).

What it writes (apache/parquet-format, parquet.thrift + Encodings.md):
  * "PAR1", then row groups, then the thrift-compact FileMetaData, its length, "PAR1";
  * one column chunk per column per row group, each holding an optional dictionary page
    and one or more data pages (v1), PLAIN values or RLE_DICTIONARY indices;
  * definition levels (RLE/bit-packed hybrid, 4-byte length prefix) for optional columns;
  * UNCOMPRESSED or GZIP pages;
  * field_id and logical + converted types on every column, column chunk statistics
    (min_value/max_value in PLAIN encoding, null_count) and TYPE_ORDER column orders.

Columns are described with Iceberg types (see icetypes.py), which fixes the physical layout:

  boolean -> BOOLEAN        int -> INT32             long -> INT64
  float -> FLOAT            double -> DOUBLE         date -> INT32 DATE
  time -> INT64 TIME(MICROS, local)                  string -> BYTE_ARRAY STRING
  timestamp -> INT64 TIMESTAMP(MICROS, isAdjustedToUTC=false)
  timestamptz -> INT64 TIMESTAMP(MICROS, isAdjustedToUTC=true)
  binary -> BYTE_ARRAY      fixed[L] -> FIXED_LEN_BYTE_ARRAY(L)
  uuid -> FIXED_LEN_BYTE_ARRAY(16) UUID
  decimal(P,S) -> INT32 (P<=9), INT64 (P<=18) or FIXED_LEN_BYTE_ARRAY(min bytes), DECIMAL

Use ``write_parquet(path, columns, rows, ...)``; it returns a ``ParquetFile`` with the sizes,
row-group offsets and per-column metrics that an Iceberg manifest entry needs.
"""

import struct
import zlib
from dataclasses import dataclass, field

from . import icetypes
from . import thrift as T

MAGIC = b"PAR1"

# parquet.thrift enums
PT_BOOLEAN, PT_INT32, PT_INT64, PT_INT96, PT_FLOAT, PT_DOUBLE, PT_BYTE_ARRAY, PT_FLBA = range(8)
REQUIRED, OPTIONAL = 0, 1
CT_UTF8, CT_DECIMAL, CT_DATE, CT_TIME_MILLIS, CT_TIMESTAMP_MICROS = 0, 5, 6, 7, 10
ENC_PLAIN, ENC_RLE, ENC_RLE_DICTIONARY = 0, 3, 8
PAGE_DATA, PAGE_DICTIONARY = 0, 2
CODECS = {"uncompressed": 0, "gzip": 2}

CREATED_BY = "icedruid icewriter 1 (test fixtures)"


@dataclass
class Column:
    """One flat column: its name, Iceberg type, field id and nullability."""
    name: str
    type: object                 # icetypes.Type or a type string such as "decimal(10,2)"
    field_id: int | None
    required: bool = False
    dictionary: bool = False     # write RLE_DICTIONARY pages (any type; meant for strings)
    # timestamp/timestamptz written as Spark and Impala do: INT96 (8 bytes nanos of day,
    # 4 bytes Julian day, little-endian), no logical or converted type, no statistics.
    # Values are the physical (julian_day, nanos_of_day) pairs, not normalised, so that
    # instants outside the int64 micro/nanosecond ranges can be written.
    int96: bool = False
    # a time column's unit in the file, as other writers store it: "millis" is INT32
    # TIME(MILLIS) (converted type TIME_MILLIS), "nanos" INT64 TIME(NANOS); values stay
    # Iceberg's micros (whole millis for "millis") and are scaled when encoded.
    time_unit: str = "micros"

    def __post_init__(self):
        self.type = icetypes.parse(self.type)
        if self.int96 and self.type.kind not in ("timestamp", "timestamptz"):
            raise ValueError("int96 is for timestamp columns")
        if self.time_unit != "micros" and (self.type.kind != "time" or
                                           self.time_unit not in ("millis", "nanos")):
            raise ValueError("time_unit is millis, micros or nanos, for time columns")

    def file_type(self):
        """(physical type, type_length) of the column in the file."""
        if self.int96:
            return PT_INT96, None
        if self.time_unit == "millis":
            return PT_INT32, None
        return physical_type(self.type)

    def file_value(self, v):
        """A normalised value in the file's unit (time columns stored in another unit)."""
        if v is None or self.time_unit == "micros":
            return v
        if self.time_unit == "nanos":
            return v * 1000
        if v % 1000:
            raise ValueError(f"time {v} µs in column {self.name} is not whole millis")
        return v // 1000


@dataclass
class ColumnMetrics:
    """Whole-file metrics of one column (what Iceberg puts in a manifest entry)."""
    field_id: int | None
    type: icetypes.Type
    compressed_size: int = 0      # bytes on disk of all its chunks (page headers included)
    value_count: int = 0          # values including nulls and NaNs
    null_count: int = 0
    nan_count: int = 0
    min: object = None            # normalised values (icetypes), None if all null/NaN
    max: object = None


@dataclass
class ParquetFile:
    path: str
    size: int
    num_rows: int
    row_group_offsets: list = field(default_factory=list)
    columns: list = field(default_factory=list)  # ColumnMetrics, in schema order


# -- physical layout ------------------------------------------------------------------------
def physical_type(t: icetypes.Type):
    """(parquet physical type, type_length or None) for an Iceberg type."""
    k = t.kind
    if k == "boolean":
        return PT_BOOLEAN, None
    if k in ("int", "date"):
        return PT_INT32, None
    if k in ("long", "time", "timestamp", "timestamptz"):
        return PT_INT64, None
    if k == "float":
        return PT_FLOAT, None
    if k == "double":
        return PT_DOUBLE, None
    if k in ("string", "binary"):
        return PT_BYTE_ARRAY, None
    if k == "fixed":
        return PT_FLBA, t.length
    if k == "uuid":
        return PT_FLBA, 16
    if k == "decimal":
        if t.precision <= 9:
            return PT_INT32, None
        if t.precision <= 18:
            return PT_INT64, None
        return PT_FLBA, icetypes.decimal_bytes_needed(t.precision)
    raise ValueError(f"no Parquet mapping for {t}")


def _time_unit(unit="micros"):
    # TimeUnit union: field 1 = MilliSeconds, 2 = MicroSeconds, 3 = NanoSeconds
    return T.struct(({"millis": 1, "micros": 2, "nanos": 3}[unit], T.STRUCT, []))


def _logical_type(t: icetypes.Type, time_unit="micros"):
    """The LogicalType union value (thrift struct) for a type, or None."""
    k = t.kind
    if k == "string":
        return T.struct((1, T.STRUCT, []))
    if k == "date":
        return T.struct((6, T.STRUCT, []))
    if k == "decimal":
        return T.struct((5, T.STRUCT, T.struct((1, T.I32, t.scale), (2, T.I32, t.precision))))
    if k == "time":
        return T.struct((7, T.STRUCT, T.struct((1, T.BOOL, False), (2, T.STRUCT, _time_unit(time_unit)))))
    if k in ("timestamp", "timestamptz"):
        adjusted = k == "timestamptz"
        return T.struct((8, T.STRUCT, T.struct((1, T.BOOL, adjusted), (2, T.STRUCT, _time_unit()))))
    if k == "uuid":
        return T.struct((14, T.STRUCT, []))
    return None


def _converted_type(t: icetypes.Type):
    # Only where the legacy annotation means exactly the same thing as the logical type.
    return {"string": CT_UTF8, "date": CT_DATE, "decimal": CT_DECIMAL,
            "timestamptz": CT_TIMESTAMP_MICROS}.get(t.kind)


def _to_physical(t: icetypes.Type, v):
    """Normalised value -> the value PLAIN encoding writes (bytes for binary kinds)."""
    if t.kind == "string":
        return v.encode("utf-8")
    if t.kind == "decimal":
        ptype, length = physical_type(t)
        if ptype == PT_FLBA:
            return v.to_bytes(length, "big", signed=True)
    return v


def _plain(ptype: int, values) -> bytes:
    """PLAIN encoding of physical values."""
    if ptype == PT_BOOLEAN:
        out = bytearray((len(values) + 7) // 8)
        for i, v in enumerate(values):
            if v:
                out[i // 8] |= 1 << (i % 8)
        return bytes(out)
    if ptype == PT_INT32:
        return struct.pack(f"<{len(values)}i", *values)
    if ptype == PT_INT64:
        return struct.pack(f"<{len(values)}q", *values)
    if ptype == PT_FLOAT:
        return struct.pack(f"<{len(values)}f", *values)
    if ptype == PT_DOUBLE:
        return struct.pack(f"<{len(values)}d", *values)
    if ptype == PT_BYTE_ARRAY:
        return b"".join(struct.pack("<I", len(v)) + v for v in values)
    if ptype == PT_FLBA:
        return b"".join(values)
    if ptype == PT_INT96:
        return b"".join(struct.pack("<QI", nanos, julian) for julian, nanos in values)
    raise ValueError(f"bad physical type {ptype}")


def _stat_bytes(ptype: int, v) -> bytes:
    """A statistics value: PLAIN encoding without the BYTE_ARRAY length prefix."""
    if ptype == PT_BOOLEAN:
        return b"\x01" if v else b"\x00"
    if ptype == PT_BYTE_ARRAY:
        return v
    return _plain(ptype, [v])


# -- RLE / bit-packed hybrid ------------------------------------------------------------------
def rle_hybrid(values, bit_width: int) -> bytes:
    """Encode small non-negative ints with the RLE/bit-packed hybrid (no length prefix).

    Runs of 8 or more equal values become RLE runs; everything else is bit-packed in groups
    of 8 (the final group is zero-padded, which the format allows because the reader knows
    how many values to take).
    """
    out = bytearray()
    pending = []  # values waiting to be bit-packed; RLE may only start at a multiple of 8

    def flush_packed():
        if not pending:
            return
        while len(pending) % 8:
            pending.append(0)
        out.extend(T.varint(((len(pending) // 8) << 1) | 1))
        acc = nbits = 0
        for v in pending:
            acc |= v << nbits
            nbits += bit_width
            while nbits >= 8:
                out.append(acc & 0xFF)
                acc >>= 8
                nbits -= 8
        if nbits:
            out.append(acc & 0xFF)
        pending.clear()

    i, n = 0, len(values)
    while i < n:
        run = 1
        while i + run < n and values[i + run] == values[i]:
            run += 1
        if pending and len(pending) % 8:
            # Top the pending group up to a multiple of 8 from this run if that still leaves
            # a run worth encoding; otherwise just pack the whole run.
            take = 8 - len(pending) % 8
            if run - take < 8:
                pending.extend(values[i:i + run])
                i += run
                continue
            pending.extend(values[i:i + take])
            i += take
            run -= take
        if run >= 8:
            flush_packed()
            out.extend(T.varint(run << 1))
            out.extend(values[i].to_bytes((bit_width + 7) // 8, "little"))
            i += run
        else:
            pending.extend(values[i:i + run])
            i += run
    flush_packed()
    return bytes(out)


# -- pages and chunks -----------------------------------------------------------------------------
def _compress(codec: str, data: bytes) -> bytes:
    if codec == "uncompressed":
        return data
    if codec == "gzip":
        c = zlib.compressobj(6, zlib.DEFLATED, 31)  # wbits 31 = gzip container, mtime 0
        return c.compress(data) + c.flush()
    raise ValueError(f"unsupported codec {codec}")


def _page(codec: str, page_type: int, body: bytes, header_fields) -> bytes:
    compressed = _compress(codec, body)
    header = T.encode_struct(T.struct(
        (1, T.I32, page_type),
        (2, T.I32, len(body)),
        (3, T.I32, len(compressed)),
        *header_fields,
    ))
    return header + compressed, len(header) + len(body)


def _chunk(col: Column, values, codec: str, page_rows: int | None, start_offset: int):
    """Encode one column chunk. Returns (bytes, ColumnChunk thrift struct, uncompressed size)."""
    t = col.type
    ptype = col.file_type()[0]
    values = [col.file_value(v) for v in values]
    max_def = 0 if col.required else 1
    if col.required and any(v is None for v in values):
        raise ValueError(f"null in required column {col.name}")

    parts = []
    uncompressed_total = 0
    dictionary_offset = None
    encodings = []
    dict_index = None

    if col.dictionary:
        dict_values = []
        dict_index = {}
        for v in values:
            if v is not None and v not in dict_index:
                dict_index[v] = len(dict_values)
                dict_values.append(v)
        body = _plain(ptype, [_to_physical(t, v) for v in dict_values])
        page, raw = _page(codec, PAGE_DICTIONARY, body, [
            (7, T.STRUCT, T.struct((1, T.I32, len(dict_values)), (2, T.I32, ENC_PLAIN)))])
        dictionary_offset = start_offset
        parts.append(page)
        uncompressed_total += raw
        encodings.append(ENC_PLAIN)
        index_width = max(1, (len(dict_values) - 1).bit_length())

    value_encoding = ENC_RLE_DICTIONARY if col.dictionary else ENC_PLAIN
    if value_encoding not in encodings:
        encodings.append(value_encoding)
    if max_def:
        encodings.append(ENC_RLE)

    data_page_offset = start_offset + sum(len(p) for p in parts)
    step = page_rows or max(1, len(values))
    for lo in range(0, max(1, len(values)), step):
        page_values = values[lo:lo + step]
        body = bytearray()
        if max_def:
            levels = rle_hybrid([0 if v is None else 1 for v in page_values], 1)
            body += struct.pack("<I", len(levels)) + levels
        present = [v for v in page_values if v is not None]
        if col.dictionary:
            body.append(index_width)
            body += rle_hybrid([dict_index[v] for v in present], index_width)
        else:
            body += _plain(ptype, [_to_physical(t, v) for v in present])
        page, raw = _page(codec, PAGE_DATA, bytes(body), [
            (5, T.STRUCT, T.struct((1, T.I32, len(page_values)), (2, T.I32, value_encoding),
                                   (3, T.I32, ENC_RLE), (4, T.I32, ENC_RLE)))])
        parts.append(page)
        uncompressed_total += raw

    data = b"".join(parts)
    lo_v, hi_v = (None, None) if col.int96 else icetypes.min_max(t, values)
    stats = [(3, T.I64, sum(v is None for v in values))]
    if lo_v is not None:
        if t.kind in ("float", "double"):
            # parquet-format: a zero min is written as -0.0, a zero max as +0.0.
            lo_v = -0.0 if lo_v == 0 else lo_v
            hi_v = 0.0 if hi_v == 0 else hi_v
        stats += [(5, T.BINARY, _stat_bytes(ptype, _to_physical(t, hi_v))),
                  (6, T.BINARY, _stat_bytes(ptype, _to_physical(t, lo_v)))]
    meta = T.struct(
        (1, T.I32, ptype),
        (2, T.LIST, (T.I32, encodings)),
        (3, T.LIST, (T.BINARY, [col.name])),
        (4, T.I32, CODECS[codec]),
        (5, T.I64, len(values)),
        (6, T.I64, uncompressed_total),
        (7, T.I64, len(data)),
        (9, T.I64, data_page_offset),
        (11, T.I64, dictionary_offset),
        (12, T.STRUCT, T.struct(*stats)),
    )
    chunk = T.struct((2, T.I64, 0), (3, T.STRUCT, meta))  # file_offset is deprecated: 0
    return data, chunk, uncompressed_total


def _schema_elements(columns):
    elems = [T.struct((4, T.BINARY, "table"), (5, T.I32, len(columns)))]
    for c in columns:
        ptype, length = c.file_type()
        converted = None if c.int96 or c.time_unit == "nanos" else _converted_type(c.type)
        if c.time_unit == "millis":
            converted = CT_TIME_MILLIS
        decimal = c.type.kind == "decimal"
        elems.append(T.struct(
            (1, T.I32, ptype),
            (2, T.I32, length),
            (3, T.I32, REQUIRED if c.required else OPTIONAL),
            (4, T.BINARY, c.name),
            (6, T.I32, converted),
            (7, T.I32, c.type.scale if decimal else None),
            (8, T.I32, c.type.precision if decimal else None),
            (9, T.I32, c.field_id),
            (10, T.STRUCT, None if c.int96 else _logical_type(c.type, c.time_unit)),
        ))
    return elems


# -- file ---------------------------------------------------------------------------------------
def encode_parquet(columns, rows, *, codec="uncompressed", row_group_rows=None, page_rows=None,
                   key_value_metadata=None, created_by=CREATED_BY):
    """Encode rows (tuples in column order, or dicts by column name) into Parquet bytes.

    Returns (bytes, ParquetFile) — the ParquetFile's path is left empty.
    """
    columns = [c if isinstance(c, Column) else Column(*c) for c in columns]
    if codec not in CODECS:
        raise ValueError(f"unsupported codec {codec}")
    table = []
    for r in rows:
        seq = [r.get(c.name) for c in columns] if isinstance(r, dict) else list(r)
        if len(seq) != len(columns):
            raise ValueError(f"row has {len(seq)} values for {len(columns)} columns")
        table.append([v if c.int96 else icetypes.normalize(c.type, v)
                      for c, v in zip(columns, seq)])

    out = bytearray(MAGIC)
    metrics = [ColumnMetrics(c.field_id, c.type) for c in columns]
    row_groups = []
    offsets = []
    group = row_group_rows or max(1, len(table))
    for lo in range(0, len(table), group):
        rg_rows = table[lo:lo + group]
        chunks, rg_uncompressed, rg_start = [], 0, len(out)
        for ci, col in enumerate(columns):
            values = [row[ci] for row in rg_rows]
            data, chunk, raw = _chunk(col, values, codec, page_rows, len(out))
            out += data
            chunks.append(chunk)
            rg_uncompressed += raw
            m = metrics[ci]
            m.compressed_size += len(data)
        offsets.append(rg_start)
        row_groups.append(T.struct(
            (1, T.LIST, (T.STRUCT, chunks)),
            (2, T.I64, rg_uncompressed),
            (3, T.I64, len(rg_rows)),
            (5, T.I64, rg_start),
            (6, T.I64, len(out) - rg_start),
            (7, T.I16, len(row_groups)),
        ))

    for ci, m in enumerate(metrics):
        values = [row[ci] for row in table]
        m.value_count = len(values)
        m.null_count = sum(v is None for v in values)
        m.nan_count = sum(icetypes.is_nan(m.type, v) for v in values)
        if not columns[ci].int96:
            m.min, m.max = icetypes.min_max(m.type, values)

    kv = [T.struct((1, T.BINARY, k), (2, T.BINARY, v)) for k, v in (key_value_metadata or {}).items()]
    footer = T.encode_struct(T.struct(
        (1, T.I32, 1),
        (2, T.LIST, (T.STRUCT, _schema_elements(columns))),
        (3, T.I64, len(table)),
        (4, T.LIST, (T.STRUCT, row_groups)),
        (5, T.LIST, (T.STRUCT, kv)) if kv else (5, T.LIST, None),
        (6, T.BINARY, created_by),
        # ColumnOrder union, field 1 = TypeDefinedOrder: min/max follow the type's order.
        (7, T.LIST, (T.STRUCT, [T.struct((1, T.STRUCT, [])) for _ in columns])),
    ))
    out += footer + struct.pack("<I", len(footer)) + MAGIC
    return bytes(out), ParquetFile("", len(out), len(table), offsets, metrics)


def write_parquet(path, columns, rows, **options) -> ParquetFile:
    data, info = encode_parquet(columns, rows, **options)
    with open(path, "wb") as f:
        f.write(data)
    info.path = str(path)
    return info
