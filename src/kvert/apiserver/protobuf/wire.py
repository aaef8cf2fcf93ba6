"""The protobuf wire format: varints, tags, length-delimited fields, fixed 32/64-bit values.

Reading follows Kubernetes' generated (gogo) unmarshallers: a varint may take up to ten
bytes and its bits past 64 are dropped; wire types 3 and 4 (groups) are refused; truncated
input is an error. Every error is a :class:`WireError`.
"""

from __future__ import annotations

import struct

VARINT, FIXED64, BYTES, FIXED32 = 0, 1, 2, 5
_MASK64 = (1 << 64) - 1


class WireError(ValueError):
    """The bytes are not a well-formed protobuf message."""


def read_varint(data: bytes, pos: int) -> tuple[int, int]:
    """An unsigned 64-bit varint at ``pos``, and the position after it."""
    value = shift = 0
    end = len(data)
    while True:
        if shift >= 70:
            raise WireError("integer overflow")
        if pos >= end:
            raise WireError("unexpected EOF")
        b = data[pos]
        pos += 1
        value |= (b & 0x7F) << shift
        if b < 0x80:
            return value & _MASK64, pos
        shift += 7


def read_fields(data: bytes) -> list[tuple[int, int, int | bytes]]:
    """Every field of one message, in order: (number, wire type, value).

    The value is an ``int`` for varints and fixed-size values (their raw bits), ``bytes``
    for length-delimited ones.
    """
    out: list[tuple[int, int, int | bytes]] = []
    pos, end = 0, len(data)
    while pos < end:
        key, pos = read_varint(data, pos)
        num, wire = key >> 3, key & 7
        value: int | bytes
        if num <= 0 or num > 0x1FFFFFFF:
            raise WireError(f"illegal field number {num}")
        if wire == VARINT:
            value, pos = read_varint(data, pos)
        elif wire == BYTES:
            length, pos = read_varint(data, pos)
            if length > end - pos:
                raise WireError("unexpected EOF")
            value = data[pos:pos + length]
            pos += length
        elif wire == FIXED64:
            if pos + 8 > end:
                raise WireError("unexpected EOF")
            value = int.from_bytes(data[pos:pos + 8], "little")
            pos += 8
        elif wire == FIXED32:
            if pos + 4 > end:
                raise WireError("unexpected EOF")
            value = int.from_bytes(data[pos:pos + 4], "little")
            pos += 4
        else:
            raise WireError(f"illegal wire type {wire} for field {num}")
        out.append((num, wire, value))
    return out


def read_packed(data: bytes, wire: int) -> list[int]:
    """The values of a packed repeated scalar field."""
    out = []
    pos, end = 0, len(data)
    if wire == VARINT:
        while pos < end:
            value, pos = read_varint(data, pos)
            out.append(value)
    else:
        size = 8 if wire == FIXED64 else 4
        if end % size:
            raise WireError("packed fixed-size field of a bad length")
        out = [int.from_bytes(data[i:i + size], "little") for i in range(0, end, size)]
    return out


def signed(value: int, bits: int) -> int:
    """The low ``bits`` of a varint as a two's-complement integer (Go's int32(v), int64(v))."""
    value &= (1 << bits) - 1
    return value - (1 << bits) if value >> (bits - 1) else value


def as_double(bits: int) -> float:
    return struct.unpack("<d", bits.to_bytes(8, "little"))[0]


# ---- writing ----

def varint(value: int) -> bytes:
    value &= _MASK64   # negative numbers: two's complement, ten bytes (as Go writes int32/int64)
    out = bytearray()
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def tag(num: int, wire: int) -> bytes:
    return varint((num << 3) | wire)


def field_varint(num: int, value: int) -> bytes:
    return tag(num, VARINT) + varint(value)


def field_bytes(num: int, value: bytes) -> bytes:
    return tag(num, BYTES) + varint(len(value)) + value


def field_double(num: int, value: float) -> bytes:
    return tag(num, FIXED64) + struct.pack("<d", value)
