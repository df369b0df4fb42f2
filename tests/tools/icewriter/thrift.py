"""Thrift compact protocol *encoder* (just enough for Parquet footers and page headers).

A Thrift struct is written as a sequence of field headers + values, ended by a STOP byte.
We describe a struct as a list of ``(field_id, ttype, value)`` triples; ``None`` values are
skipped, so optional fields can be listed unconditionally.

Value shapes by type:
  BOOL                 Python bool (encoded in the field header's type nibble)
  BYTE, I16, I32, I64  Python int (zigzag varint; BYTE is one raw byte)
  DOUBLE               Python float (8 bytes little endian)
  BINARY               bytes or str (str is UTF-8 encoded)
  STRUCT               a list of triples (a nested struct), see ``struct()``
  LIST                 ``(element_ttype, [values])``

Reference: the Thrift compact protocol specification (thrift/doc/specs/thrift-compact-protocol.md).
"""

import struct as _struct

# Compact-protocol type ids (as they appear in field headers and list headers).
BOOL_TRUE = 1
BOOL_FALSE = 2
BYTE = 3
I16 = 4
I32 = 5
I64 = 6
DOUBLE = 7
BINARY = 8
LIST = 9
SET = 10
MAP = 11
STRUCT = 12
BOOL = BOOL_TRUE  # the field-declaration type for booleans; the value picks TRUE/FALSE


def varint(n: int) -> bytes:
    """Unsigned LEB128 varint."""
    if n < 0:
        raise ValueError("varint of a negative number")
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def zigzag(n: int, bits: int = 64) -> int:
    """Map signed to unsigned so small magnitudes stay small (0,-1,1,-2 -> 0,1,2,3)."""
    return (n << 1) ^ (n >> (bits - 1))


def struct(*fields):
    """Build a struct value from ``(field_id, ttype, value)`` triples (None values dropped)."""
    return [f for f in fields if f[2] is not None]


class Encoder:
    def __init__(self):
        self.out = bytearray()

    # -- scalar values -------------------------------------------------------------------
    def _value(self, ttype: int, value) -> None:
        if ttype in (BOOL_TRUE, BOOL_FALSE):
            # Only reached for list elements: one byte, 1 = true, 2 = false.
            self.out.append(BOOL_TRUE if value else BOOL_FALSE)
        elif ttype == BYTE:
            self.out += _struct.pack("<b", value)
        elif ttype == I16:
            self.out += varint(zigzag(value, 16) & 0xFFFF)
        elif ttype == I32:
            self.out += varint(zigzag(value, 32) & 0xFFFFFFFF)
        elif ttype == I64:
            self.out += varint(zigzag(value, 64) & 0xFFFFFFFFFFFFFFFF)
        elif ttype == DOUBLE:
            self.out += _struct.pack("<d", value)
        elif ttype == BINARY:
            data = value.encode("utf-8") if isinstance(value, str) else bytes(value)
            self.out += varint(len(data))
            self.out += data
        elif ttype == STRUCT:
            self.write_struct(value)
        elif ttype == LIST:
            elem_type, items = value
            self._list_header(elem_type, len(items))
            for item in items:
                self._value(elem_type, item)
        else:
            raise ValueError(f"unsupported thrift type {ttype}")

    def _list_header(self, elem_type: int, size: int) -> None:
        if size < 15:
            self.out.append((size << 4) | elem_type)
        else:
            self.out.append(0xF0 | elem_type)
            self.out += varint(size)

    # -- structs -------------------------------------------------------------------------
    def write_struct(self, fields) -> None:
        last_id = 0
        for field_id, ttype, value in sorted(fields, key=lambda f: f[0]):
            if value is None:
                continue
            wire_type = ttype
            if ttype in (BOOL_TRUE, BOOL_FALSE):
                wire_type = BOOL_TRUE if value else BOOL_FALSE
            delta = field_id - last_id
            if 0 < delta <= 15:
                self.out.append((delta << 4) | wire_type)
            else:
                self.out.append(wire_type)
                self.out += varint(zigzag(field_id, 16) & 0xFFFF)
            last_id = field_id
            if wire_type not in (BOOL_TRUE, BOOL_FALSE):
                self._value(ttype, value)
        self.out.append(0)  # STOP


def encode_struct(fields) -> bytes:
    enc = Encoder()
    enc.write_struct(fields)
    return bytes(enc.out)
