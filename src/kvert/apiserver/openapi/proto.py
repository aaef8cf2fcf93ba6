"""The OpenAPI v2 document in protobuf form (gnostic's ``openapi.v2.Document``).

kubectl fetches ``/openapi/v2`` only in protobuf
(``Accept: application/com.github.proto-openapi.spec.v2@v1.0+protobuf``, no JSON fallback)
and only when it cannot use v3: client-side validation (``--validate=strict`` against a server
whose v3 document lacks the ``fieldValidation`` parameter), the v2 fallback of client-side
apply, and ``kubectl explain --output=plaintext-openapiv2``.

This encoder writes the subset of the message kube-openapi reads: info, paths (operations,
parameters, responses) and definitions (schemas with ``$ref``, type, format, description,
required, enum, items, properties, additionalProperties, allOf and vendor extensions, whose
values are carried as YAML; JSON is YAML). Field numbers are those of gnostic's
``openapiv2/OpenAPIv2.proto``.
"""

from __future__ import annotations

import json
import struct
from typing import Any

# What kubectl puts in Accept; "@" is not valid in a media type, so the response carries the
# dotted form as its Content-Type (Go's mime parser rejects the "@" form), as kube-apiserver does.
ACCEPT_MEDIA_TYPE = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"
MEDIA_TYPE = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"


# -- wire format ------------------------------------------------------------------------------

def _varint(n: int) -> bytes:
    if n < 0:
        n &= (1 << 64) - 1
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def _key(field: int, wire: int) -> bytes:
    return _varint((field << 3) | wire)


def _bytes(field: int, data: bytes) -> bytes:
    return _key(field, 2) + _varint(len(data)) + data


def _str(field: int, value: str | None) -> bytes:
    if not value:
        return b""
    return _bytes(field, value.encode())


def _strs(field: int, values) -> bytes:
    return b"".join(_bytes(field, v.encode()) for v in values or ())


def _bool(field: int, value: bool | None) -> bytes:
    return _key(field, 0) + _varint(1) if value else b""


def _int(field: int, value: int | None) -> bytes:
    return _key(field, 0) + _varint(int(value)) if value else b""


def _double(field: int, value: float | None) -> bytes:
    if value is None:
        return b""
    return _key(field, 1) + struct.pack("<d", float(value))


def _msg(field: int, data: bytes, always: bool = False) -> bytes:
    if not data and not always:
        return b""
    return _bytes(field, data)


# -- messages ---------------------------------------------------------------------------------

def _any(value: Any) -> bytes:
    """openapi.v2.Any: the value as YAML (field 2)."""
    return _str(2, json.dumps(value, separators=(",", ":"), ensure_ascii=False))


def _named_any(field: int, name: str, value: Any) -> bytes:
    return _msg(field, _str(1, name) + _msg(2, _any(value), always=True), always=True)


def _extensions(field: int, obj: dict) -> bytes:
    return b"".join(_named_any(field, k, v) for k, v in obj.items() if k.startswith("x-"))


def schema(s: dict) -> bytes:
    """openapi.v2.Schema."""
    out = bytearray()
    out += _str(1, s.get("$ref"))
    out += _str(2, s.get("format"))
    out += _str(3, s.get("title"))
    out += _str(4, s.get("description"))
    if "default" in s:
        out += _msg(5, _any(s["default"]), always=True)
    out += _double(6, s.get("multipleOf"))
    out += _double(7, s.get("maximum"))
    out += _bool(8, s.get("exclusiveMaximum"))
    out += _double(9, s.get("minimum"))
    out += _bool(10, s.get("exclusiveMinimum"))
    out += _int(11, s.get("maxLength"))
    out += _int(12, s.get("minLength"))
    out += _str(13, s.get("pattern"))
    out += _int(14, s.get("maxItems"))
    out += _int(15, s.get("minItems"))
    out += _bool(16, s.get("uniqueItems"))
    out += _int(17, s.get("maxProperties"))
    out += _int(18, s.get("minProperties"))
    out += _strs(19, s.get("required"))
    for value in s.get("enum") or ():
        out += _msg(20, _any(value), always=True)
    extra = s.get("additionalProperties")
    if isinstance(extra, dict):
        out += _msg(21, _msg(1, schema(extra), always=True), always=True)
    elif isinstance(extra, bool):
        out += _msg(21, _key(2, 0) + _varint(int(extra)), always=True)
    typ = s.get("type")
    if typ:
        out += _msg(22, _strs(1, [typ] if isinstance(typ, str) else typ), always=True)
    items = s.get("items")
    if isinstance(items, dict):
        out += _msg(23, _msg(1, schema(items), always=True), always=True)
    elif isinstance(items, list):
        out += _msg(23, b"".join(_msg(1, schema(i), always=True) for i in items), always=True)
    for sub in s.get("allOf") or ():
        out += _msg(24, schema(sub), always=True)
    props = s.get("properties")
    if isinstance(props, dict):
        named = b"".join(_msg(1, _str(1, k) + _msg(2, schema(v), always=True), always=True)
                         for k, v in props.items())
        out += _msg(25, named, always=True)
    out += _bool(27, s.get("readOnly"))
    if "example" in s:
        out += _msg(30, _any(s["example"]), always=True)
    out += _extensions(31, s)
    return bytes(out)


def _parameter(p: dict) -> bytes:
    """openapi.v2.ParametersItem holding a Parameter."""
    if p.get("in") == "body":
        body = (_str(1, p.get("description")) + _str(2, p.get("name")) + _str(3, "body")
                + _bool(4, p.get("required")) + _msg(5, schema(p.get("schema") or {}),
                                                     always=True))
        param = _msg(1, body, always=True)
    else:
        where = p.get("in")
        if where == "path":
            sub = (_bool(1, p.get("required")) + _str(2, where) + _str(3, p.get("description"))
                   + _str(4, p.get("name")) + _str(5, p.get("type")) + _str(6, p.get("format"))
                   + _bool(19, p.get("uniqueItems")))
            non_body = _msg(4, sub, always=True)
        else:
            sub = (_bool(1, p.get("required")) + _str(2, where) + _str(3, p.get("description"))
                   + _str(4, p.get("name")) + _str(6, p.get("type")) + _str(7, p.get("format"))
                   + _bool(20, p.get("uniqueItems")))
            non_body = _msg(3, sub, always=True)
        param = _msg(2, non_body, always=True)
    return _msg(1, param, always=True)


def _operation(op: dict) -> bytes:
    out = bytearray()
    out += _strs(1, op.get("tags"))
    out += _str(3, op.get("description"))
    out += _str(5, op.get("operationId"))
    out += _strs(6, op.get("produces"))
    out += _strs(7, op.get("consumes"))
    for p in op.get("parameters") or ():
        out += _msg(8, _parameter(p), always=True)
    codes = bytearray()
    for code, resp in (op.get("responses") or {}).items():
        response = _str(1, resp.get("description"))
        if isinstance(resp.get("schema"), dict):
            response += _msg(2, _msg(1, schema(resp["schema"]), always=True), always=True)
        value = _msg(1, response, always=True)
        codes += _msg(1, _str(1, code) + _msg(2, value, always=True), always=True)
    out += _msg(9, bytes(codes), always=True)
    out += _strs(10, op.get("schemes"))
    out += _extensions(13, op)
    return bytes(out)


_METHODS = {"get": 2, "put": 3, "post": 4, "delete": 5, "options": 6, "head": 7, "patch": 8}


def _path_item(item: dict) -> bytes:
    out = bytearray()
    for method, field in _METHODS.items():
        if isinstance(item.get(method), dict):
            out += _msg(field, _operation(item[method]), always=True)
    for p in item.get("parameters") or ():
        out += _msg(9, _parameter(p), always=True)
    return bytes(out)


def document(doc: dict) -> bytes:
    """A swagger 2.0 document (as ``builder.openapi_v2`` returns it) -> protobuf bytes."""
    out = bytearray()
    out += _str(1, doc.get("swagger", "2.0"))
    info = doc.get("info") or {}
    out += _msg(2, _str(1, info.get("title")) + _str(2, info.get("version")), always=True)
    paths = b"".join(_msg(2, _str(1, name) + _msg(2, _path_item(item), always=True),
                          always=True)
                     for name, item in (doc.get("paths") or {}).items())
    out += _msg(8, paths, always=True)
    defs = b"".join(_msg(1, _str(1, name) + _msg(2, schema(s), always=True), always=True)
                    for name, s in (doc.get("definitions") or {}).items())
    out += _msg(9, defs, always=True)
    return bytes(out)
