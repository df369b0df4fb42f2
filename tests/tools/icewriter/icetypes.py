"""Iceberg primitive types: parsing, value normalisation, ordering and serialisation.

Every writer in this package works on *normalised* Python values, one shape per type:

  boolean            bool
  int, long          int
  float, double      float
  date               int   days since 1970-01-01      (datetime.date accepted)
  time               int   microseconds since midnight
  timestamp(tz)      int   microseconds since the epoch (datetime accepted; naive = UTC)
  string             str
  binary, fixed[L]   bytes
  uuid               bytes (16, big endian)          (uuid.UUID or str accepted)
  decimal(P,S)       int   unscaled value              (decimal.Decimal or str accepted)

``None`` is null for every type.  The same normalised value feeds Parquet encoding, Parquet
statistics, Iceberg manifest bounds (Appendix D single-value serialisation) and the JSON the
fixtures record as expected output (icedruid's `scan` conventions, design.md section 3).
"""

import base64
import datetime as _dt
import decimal as _decimal
import math
import re
import struct
import uuid as _uuid
from dataclasses import dataclass

EPOCH_DATE = _dt.date(1970, 1, 1)
EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)

_SIMPLE = {"boolean", "int", "long", "float", "double", "date", "time", "timestamp",
           "timestamptz", "string", "uuid", "binary"}


@dataclass(frozen=True)
class Type:
    kind: str          # one of _SIMPLE, "decimal" or "fixed"
    precision: int = 0  # decimal
    scale: int = 0      # decimal
    length: int = 0     # fixed

    def __str__(self) -> str:
        if self.kind == "decimal":
            return f"decimal({self.precision},{self.scale})"  # spec form (Java adds a space)
        if self.kind == "fixed":
            return f"fixed[{self.length}]"
        return self.kind


# -- nested types (struct, list, map): so far for ORC fixtures only ----------------------
@dataclass(frozen=True)
class StructType:
    """struct<...>: fields as (id, name, type, required) tuples; values are dicts by name."""
    fields: tuple
    kind: str = "struct"

    def __post_init__(self):
        object.__setattr__(self, "fields", tuple((i, n, parse(t), bool(r)) for i, n, t, r in self.fields))

    def to_json(self):
        return {"type": "struct", "fields": [
            {"id": i, "name": n, "required": r, "type": type_json(t)} for i, n, t, r in self.fields]}

    def __str__(self):
        return "struct<%s>" % ", ".join("%s: %s" % (n, t) for _, n, t, _ in self.fields)


@dataclass(frozen=True)
class ListType:
    """list<element>; values are Python lists."""
    element_id: int
    element: object
    element_required: bool = False
    kind: str = "list"

    def __post_init__(self):
        object.__setattr__(self, "element", parse(self.element))

    def to_json(self):
        return {"type": "list", "element-id": self.element_id,
                "element-required": self.element_required, "element": type_json(self.element)}

    def __str__(self):
        return "list<%s>" % self.element


@dataclass(frozen=True)
class MapType:
    """map<key, value>; values are lists of (key, value) pairs (or dicts)."""
    key_id: int
    key: object
    value_id: int
    value: object
    value_required: bool = False
    kind: str = "map"

    def __post_init__(self):
        object.__setattr__(self, "key", parse(self.key))
        object.__setattr__(self, "value", parse(self.value))

    def to_json(self):
        return {"type": "map", "key-id": self.key_id, "key": type_json(self.key),
                "value-id": self.value_id, "value-required": self.value_required,
                "value": type_json(self.value)}

    def __str__(self):
        return "map<%s, %s>" % (self.key, self.value)


NESTED = (StructType, ListType, MapType)


def convert(t, v, prim, pairs=list):
    """A normalised value of type t rebuilt with every primitive value replaced by
    prim(type, value) (nulls stay None): a struct as a dict by field name, a list as a
    list, a map as pairs([(key, value), ...]) of converted keys and values."""
    if v is None:
        return None
    if t.kind == "struct":
        return {n: convert(ft, v.get(n), prim, pairs) for _, n, ft, _ in t.fields}
    if t.kind == "list":
        return [convert(t.element, x, prim, pairs) for x in v]
    if t.kind == "map":
        return pairs([(convert(t.key, a, prim, pairs), convert(t.value, b, prim, pairs)) for a, b in v])
    return prim(t, v)


def type_json(t):
    """A type as metadata JSON: the string of a primitive, the object of a nested type."""
    return t.to_json() if isinstance(t, NESTED) else str(t)


def parse(text) -> Type:
    """Parse an Iceberg type string such as ``long``, ``decimal(10,2)`` or ``fixed[16]``."""
    if isinstance(text, (Type,) + NESTED):
        return text
    s = text.strip().replace(" ", "")
    if s in _SIMPLE:
        return Type(s)
    m = re.fullmatch(r"decimal\((\d+),(\d+)\)", s)
    if m:
        p, sc = int(m.group(1)), int(m.group(2))
        if not 1 <= p <= 38 or sc > p:
            raise ValueError(f"bad decimal type {text}")
        return Type("decimal", precision=p, scale=sc)
    m = re.fullmatch(r"fixed\[(\d+)\]", s)
    if m:
        return Type("fixed", length=int(m.group(1)))
    raise ValueError(f"unsupported Iceberg type {text!r}")


def decimal_bytes_needed(precision: int) -> int:
    """Smallest byte count whose two's complement range holds every P-digit value."""
    n = 1
    while 2 ** (8 * n - 1) - 1 < 10 ** precision - 1:
        n += 1
    return n


# -- normalisation ----------------------------------------------------------------------
def normalize(t: Type, v):
    """Turn a convenient Python value into the canonical shape listed in the module doc
    (nested: a dict by field name, a list, a list of (key, value) pairs)."""
    if v is None:
        return None
    k = t.kind
    if k == "struct":
        return {n: normalize(ft, v.get(n)) for _, n, ft, _ in t.fields}
    if k == "list":
        return [normalize(t.element, x) for x in v]
    if k == "map":
        pairs = v.items() if isinstance(v, dict) else v
        return [(normalize(t.key, a), normalize(t.value, b)) for a, b in pairs]
    if k == "boolean":
        return bool(v)
    if k in ("int", "long"):
        v = int(v)
        limit = 2 ** 31 if k == "int" else 2 ** 63
        if not -limit <= v < limit:
            raise ValueError(f"{v} out of range for {k}")
        return v
    if k in ("float", "double"):
        v = float(v)
        return struct.unpack("<f", struct.pack("<f", v))[0] if k == "float" else v
    if k == "date":
        if isinstance(v, _dt.date):
            return (v - EPOCH_DATE).days
        if isinstance(v, str):
            return (_dt.date.fromisoformat(v) - EPOCH_DATE).days
        return int(v)
    if k == "time":
        if isinstance(v, _dt.time):
            return ((v.hour * 60 + v.minute) * 60 + v.second) * 1_000_000 + v.microsecond
        return int(v)
    if k in ("timestamp", "timestamptz"):
        if isinstance(v, str):
            v = _dt.datetime.fromisoformat(v)
        if isinstance(v, _dt.datetime):
            if v.tzinfo is None:
                v = v.replace(tzinfo=_dt.timezone.utc)
            delta = v - EPOCH
            return (delta.days * 86400 + delta.seconds) * 1_000_000 + delta.microseconds
        return int(v)
    if k == "string":
        if not isinstance(v, str):
            raise TypeError(f"string column needs str, got {type(v).__name__}")
        return v
    if k == "binary":
        return bytes(v)
    if k == "fixed":
        v = bytes(v)
        if len(v) != t.length:
            raise ValueError(f"fixed[{t.length}] value has {len(v)} bytes")
        return v
    if k == "uuid":
        if isinstance(v, _uuid.UUID):
            return v.bytes
        if isinstance(v, str):
            return _uuid.UUID(v).bytes
        v = bytes(v)
        if len(v) != 16:
            raise ValueError("uuid needs 16 bytes")
        return v
    if k == "decimal":
        if isinstance(v, int):
            unscaled = v
        else:
            d = _decimal.Decimal(v) if not isinstance(v, _decimal.Decimal) else v
            q = d.scaleb(t.scale)
            if q != q.to_integral_value():
                raise ValueError(f"{v} has more than {t.scale} fraction digits")
            unscaled = int(q)
        if abs(unscaled) >= 10 ** t.precision:
            raise ValueError(f"{v} does not fit decimal({t.precision},{t.scale})")
        return unscaled
    raise ValueError(f"unsupported type {t}")


# -- ordering (for min/max statistics and bounds) ------------------------------------------
def is_nan(t: Type, v) -> bool:
    return t.kind in ("float", "double") and v is not None and math.isnan(v)


def order_key(t: Type, v):
    """Key giving the Iceberg/Parquet sort order of a non-null, non-NaN normalised value.

    Integers, dates, timestamps and decimals order as signed numbers; strings by UTF-8 bytes
    (the same as code-point order); binary, fixed and uuid as unsigned bytes.  Floats put -0.0
    before +0.0 (IEEE totalOrder), so a min of 0 comes out as -0.0 and a max as +0.0.
    """
    if t.kind in ("float", "double"):
        return (v, 0 if math.copysign(1.0, v) < 0 else 1)
    if t.kind == "boolean":
        return int(v)
    return v


def min_max(t: Type, values):
    """(min, max) over the non-null, non-NaN values, or (None, None) if there are none
    (always for nested types: they have no bounds)."""
    if t.kind in ("struct", "list", "map"):
        return None, None
    present = [v for v in values if v is not None and not is_nan(t, v)]
    if not present:
        return None, None
    return min(present, key=lambda v: order_key(t, v)), max(present, key=lambda v: order_key(t, v))


# -- Iceberg single-value serialisation (spec Appendix D) ------------------------------------
def single_value_bytes(t: Type, v) -> bytes:
    k = t.kind
    if k == "boolean":
        return b"\x01" if v else b"\x00"
    if k in ("int", "date"):
        return struct.pack("<i", v)
    if k in ("long", "time", "timestamp", "timestamptz"):
        return struct.pack("<q", v)
    if k == "float":
        return struct.pack("<f", v)
    if k == "double":
        return struct.pack("<d", v)
    if k == "string":
        return v.encode("utf-8")
    if k in ("binary", "fixed", "uuid"):
        return bytes(v)
    if k == "decimal":
        return twos_complement_min(v)
    raise ValueError(f"unsupported type {t}")


def twos_complement_min(n: int) -> bytes:
    """Big-endian two's complement in the fewest bytes that keep the sign."""
    length = 1
    while not -(1 << (8 * length - 1)) <= n < (1 << (8 * length - 1)):
        length += 1
    return n.to_bytes(length, "big", signed=True)


# -- JSON rendering (icedruid `scan` conventions, design.md section 3) ---------------------
def to_json(t: Type, v):
    if v is None:
        return None
    k = t.kind
    if k in ("boolean", "int", "long", "string"):
        return v
    if k in ("float", "double"):
        if math.isnan(v):
            return "NaN"
        if math.isinf(v):
            return "Infinity" if v > 0 else "-Infinity"
        return v
    if k == "date":
        return (EPOCH_DATE + _dt.timedelta(days=v)).isoformat()
    if k == "time":
        return (_dt.datetime(2000, 1, 1) + _dt.timedelta(microseconds=v)).strftime("%H:%M:%S.%f")
    if k in ("timestamp", "timestamptz"):
        text = (_dt.datetime(1970, 1, 1) + _dt.timedelta(microseconds=v)).strftime("%Y-%m-%dT%H:%M:%S.%f")
        return text + "+00:00" if k == "timestamptz" else text
    if k == "decimal":
        sign = "-" if v < 0 else ""
        digits = str(abs(v)).rjust(t.scale + 1, "0")
        if t.scale == 0:
            return sign + digits
        return f"{sign}{digits[:-t.scale]}.{digits[-t.scale:]}"
    if k == "uuid":
        return str(_uuid.UUID(bytes=v))
    if k in ("binary", "fixed"):
        return base64.b64encode(v).decode("ascii")
    raise ValueError(f"unsupported type {t}")
