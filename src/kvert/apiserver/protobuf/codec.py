"""Kubernetes protobuf messages <-> the JSON-shaped dicts Kubernetes' JSON serialization gives.

Decoding emulates what kube-apiserver does with such a body: the generated Go unmarshaller
fills a Go struct, and ``encoding/json`` would then render that struct. So:

* an absent non-pointer scalar is its zero value, kept in the JSON unless ``omitempty``;
  a present pointer field is kept even when zero (``replicas: 0`` survives); an absent one
  is dropped (``omitempty``) or ``null``;
* an absent non-pointer struct is the zero struct, rendered (``"strategy": {}``) unless
  ``omitzero``; ``omitempty`` never drops a struct, as in Go;
* repeated fields and maps have no "empty but present" form in protobuf: absent is Go's nil,
  dropped (``omitempty``) or ``null``;
* embedded structs tagged ``json:",inline"`` are flattened into their parent.

Encoding is the inverse and writes what Go's generated marshallers write: fields in number
order, non-pointer scalars and structs always (zero or not), pointers when set, map entries
sorted by key. Fields of the dict the schema doesn't know are dropped, as Go's JSON decoder
drops them.
"""

from __future__ import annotations

import base64
import binascii
import datetime as _dt
import json
import math
import re
from typing import Any

from kvert.api.durations import DurationError, format_go_duration_ns, parse_go_duration_ns
from kvert.api.errors import BadRequest, UnsupportedMediaType
from kvert.apiserver.protobuf import wire
from kvert.apiserver.protobuf.envelope import MAGIC, MEDIA_TYPE, message_for
from kvert.apiserver.protobuf.schema import MESSAGE_TYPES, Field, Message
from kvert.apiserver.protobuf.wire import BYTES, FIXED64, VARINT, WireError

MAX_NESTING = 100   # messages within messages; deeper input is refused, not recursed into


class EncodeError(ValueError):
    """A value cannot be encoded as the field's type."""


# ==== decoding ====

_ZERO = {"str": "", "bool": False, "i32": 0, "i64": 0, "f64": 0, "bytes": None}
_WIRE = {"str": BYTES, "bytes": BYTES, "bool": VARINT, "i32": VARINT, "i64": VARINT,
         "f64": FIXED64}


def decode_message(name: str, data: bytes, depth: int = 0):
    """A message's bytes as the JSON value Go would render for it."""
    if depth > MAX_NESTING:
        raise WireError(f"messages are nested more than {MAX_NESTING} deep")
    special = _SPECIAL_DECODERS.get(name)
    if special is not None:
        return special(data, depth)
    msg = MESSAGE_TYPES[name]
    found: dict[int, list] = {}
    for num, wt, value in wire.read_fields(data):
        if num in msg.by_number:
            found.setdefault(num, []).append((wt, value))
    out: dict = {}
    for field in msg.fields:
        _decode_field(field, found.get(field.num), out, depth)
    return out


def _decode_field(field: Field, seen: list | None, out: dict, depth: int) -> None:
    value: Any   # the field's JSON value: a dict, list, str, number, bool or None
    if field.map:
        value = _decode_map(field, seen, depth) if seen else None
        if value is None and field.omitempty:
            return
    elif field.repeated:
        value = _decode_repeated(field, seen, depth) if seen else None
        if value is None and field.omitempty:
            return
    elif field.scalar:
        if seen:
            wt, raw = seen[-1]
            value = _scalar(field, wt, raw)
        elif field.pointer:
            value = None
        else:
            value = _ZERO[field.type]
        if field.omitempty and (value is None or (not field.pointer and _empty_scalar(value))):
            return
        if field.type == "bytes" and value is not None:
            value = base64.b64encode(value).decode("ascii")
    else:
        if seen:
            chunks = []
            for wt, raw in seen:
                if wt != BYTES:
                    raise WireError(f"wrong wire type {wt} for field {field.name!r}")
                chunks.append(raw)
            data = b"".join(chunks)   # repeated occurrences of a message merge
        elif field.pointer:
            if field.inline or field.omitempty:
                return
            out[field.name] = None
            return
        else:
            data = b""
        value = decode_message(field.type, data, depth + 1)
        if field.omitzero and _is_zero(field.type, data, value, depth):
            return
        if field.inline:
            if isinstance(value, dict):
                for k, v in value.items():
                    out.setdefault(k, v)
            return
    out[field.name] = value


def _empty_scalar(value) -> bool:
    """What Go's omitempty drops: "", false, 0, an empty []byte."""
    return value is False or value == "" or value == b"" or (
        type(value) in (int, float) and value == 0)


def _is_zero(type_name: str, data: bytes, value, depth: int) -> bool:
    if type_name in ("meta.Time", "meta.MicroTime"):
        return value is None
    return not data or value == decode_message(type_name, b"", depth + 1)


def _scalar(field: Field, wt: int, raw):
    expected = _WIRE[field.type]
    if wt != expected:
        raise WireError(f"wrong wire type {wt} for field {field.name!r}")
    return _convert(field.type, raw)


def _convert(type_name: str, raw):
    if type_name == "str":
        return raw.decode("utf-8", errors="replace")   # Go keeps any bytes; JSON replaces them
    if type_name == "bytes":
        return bytes(raw)
    if type_name == "bool":
        return raw != 0
    if type_name == "i32":
        return wire.signed(raw, 32)
    if type_name == "i64":
        return wire.signed(raw, 64)
    if type_name == "f64":
        return _json_float(wire.as_double(raw))
    raise WireError(f"unknown scalar type {type_name}")


def _json_float(value: float):
    if math.isnan(value) or math.isinf(value):
        raise WireError(f"unsupported value: {value}")   # Go's JSON encoder refuses them too
    if value == int(value) and abs(value) < 1e21:
        return int(value)   # Go writes 5, not 5.0
    return value


def _decode_repeated(field: Field, seen: list, depth: int) -> list:
    out = []
    if field.scalar:
        expected = _WIRE[field.type]
        for wt, raw in seen:
            if wt == expected:
                out.append(_convert(field.type, raw))
            elif wt == BYTES and expected != BYTES:
                out.extend(_convert(field.type, v) for v in wire.read_packed(raw, expected))
            else:
                raise WireError(f"wrong wire type {wt} for field {field.name!r}")
        if field.type == "bytes":
            out = [base64.b64encode(v).decode("ascii") for v in out]
        return out
    for wt, raw in seen:
        if wt != BYTES:
            raise WireError(f"wrong wire type {wt} for field {field.name!r}")
        out.append(decode_message(field.type, raw, depth + 1))
    return out


def _decode_map(field: Field, seen: list, depth: int) -> dict:
    out = {}
    for wt, raw in seen:
        if wt != BYTES:
            raise WireError(f"wrong wire type {wt} for field {field.name!r}")
        key = ""
        value: Any = None
        for num, ewt, evalue in wire.read_fields(raw):
            if num == 1:
                if not isinstance(evalue, bytes):   # wire type other than BYTES
                    raise WireError(f"wrong wire type {ewt} for a key of {field.name!r}")
                key = evalue.decode("utf-8", errors="replace")
            elif num == 2:
                if field.scalar:
                    if ewt != _WIRE[field.type]:
                        raise WireError(f"wrong wire type {ewt} for a value of {field.name!r}")
                    value = _convert(field.type, evalue)
                else:
                    if ewt != BYTES:
                        raise WireError(f"wrong wire type {ewt} for a value of {field.name!r}")
                    value = evalue
        if field.scalar:
            if value is None:
                value = _ZERO[field.type]
            if field.type == "bytes":
                value = base64.b64encode(value or b"").decode("ascii")
        else:
            value = decode_message(field.type, value or b"", depth + 1)
        out[key] = value
    return out


def _fields(data: bytes) -> dict[int, list]:
    found: dict[int, list] = {}
    for num, wt, value in wire.read_fields(data):
        found.setdefault(num, []).append((wt, value))
    return found


def _last(found: dict, num: int, wt: int, default=None):
    values = found.get(num)
    if not values:
        return default
    got, value = values[-1]
    if got != wt:
        raise WireError(f"wrong wire type {got} for field {num}")
    return value


def _dec_quantity(data: bytes, depth: int):
    # resource.Quantity {optional string string = 1}, already in canonical form.
    raw = _last(_fields(data), 1, BYTES)
    text = raw.decode("utf-8", errors="replace") if raw is not None else ""
    return text or "0"


def _timestamp(data: bytes) -> tuple[int, int] | None:
    if not data:
        return None   # the zero time
    found = _fields(data)
    seconds = wire.signed(_last(found, 1, VARINT, 0), 64)
    nanos = wire.signed(_last(found, 2, VARINT, 0), 32)
    return seconds, nanos


_GO_ZERO_TIME = -62135596800   # 0001-01-01T00:00:00Z, Go's zero time.Time: JSON null


def _dec_time(data: bytes, depth: int):
    # metav1.Time drops the nanoseconds on decoding (as Kubernetes does) and renders RFC 3339.
    stamp = _timestamp(data)
    if stamp is None or stamp[0] == _GO_ZERO_TIME:
        return None
    return format_time(stamp[0])


def _dec_micro_time(data: bytes, depth: int):
    stamp = _timestamp(data)
    if stamp is None:
        return None
    seconds, nanos = divmod(stamp[0] * 1_000_000_000 + stamp[1], 1_000_000_000)
    if seconds == _GO_ZERO_TIME and nanos == 0:
        return None
    return format_time(seconds, nanos // 1000)


def _dec_duration(data: bytes, depth: int):
    return format_duration(wire.signed(_last(_fields(data), 1, VARINT, 0), 64))


def _dec_int_or_string(data: bytes, depth: int):
    found = _fields(data)
    kind = wire.signed(_last(found, 1, VARINT, 0), 64)
    if kind == 0:
        return wire.signed(_last(found, 2, VARINT, 0), 32)
    if kind == 1:
        raw = _last(found, 3, BYTES, b"")
        return raw.decode("utf-8", errors="replace")
    raise WireError(f"impossible IntOrString.Type {kind}")


def _raw_json(raw: bytes | None, depth: int):
    if raw is None or not raw:
        return None
    if raw[:4] == MAGIC:   # an embedded object in protobuf (RawExtension)
        return decode_envelope(raw, depth + 1)
    try:
        return json.loads(raw)
    except RecursionError:
        raise WireError("an embedded JSON value is nested too deeply") from None
    except ValueError as e:
        raise WireError(f"an embedded value is not valid JSON: {e}") from None


def decode_envelope(body: bytes, depth: int) -> dict[str, Any]:
    """A ``runtime.Unknown`` envelope (a request body, or an object embedded in a
    RawExtension) -> its JSON-shaped object, apiVersion and kind included."""
    if body[:4] != MAGIC:
        raise BadRequest("the protobuf request body does not start with the Kubernetes "
                         "protobuf magic number")
    api_version = kind = ""
    raw = b""
    content_encoding = content_type = ""
    for num, wt, value in wire.read_fields(body[4:]):
        if not isinstance(value, bytes):   # not length-delimited (wt != BYTES)
            if num in (1, 2, 3, 4):
                raise WireError(f"wrong wire type {wt} for field {num} of runtime.Unknown")
            continue
        if num == 1:
            for tnum, twt, tvalue in wire.read_fields(value):
                if tnum in (1, 2) and not isinstance(tvalue, bytes):
                    raise WireError(f"wrong wire type {twt} in runtime.TypeMeta")
                if not isinstance(tvalue, bytes):
                    continue
                if tnum == 1:
                    api_version = tvalue.decode("utf-8", errors="replace")
                elif tnum == 2:
                    kind = tvalue.decode("utf-8", errors="replace")
        elif num == 2:
            raw = value
        elif num == 3:
            content_encoding = value.decode("utf-8", errors="replace")
        elif num == 4:
            content_type = value.decode("utf-8", errors="replace")
    if content_encoding:
        raise BadRequest(f"unsupported protobuf content encoding {content_encoding!r}")
    if content_type and content_type.split(";")[0].strip().lower() != MEDIA_TYPE:
        raise BadRequest(f"unsupported content type {content_type!r} inside a protobuf envelope")
    if not kind:
        raise BadRequest("Object 'Kind' is missing in the protobuf request body")
    message = message_for(api_version, kind)
    if message is None:
        raise UnsupportedMediaType(
            f"the body of the request was in an unknown format - {kind} in {api_version!r} "
            f"cannot be decoded from {MEDIA_TYPE}; accepted media types include: "
            f"application/json, application/yaml")
    obj = decode_message(message, raw, depth + 1)
    return {"kind": kind, "apiVersion": api_version, **obj}


def _dec_raw(data: bytes, depth: int):
    # runtime.RawExtension {raw = 1}, metav1.FieldsV1 {Raw = 1}, apiextensions JSON {raw = 1}
    return _raw_json(_last(_fields(data), 1, BYTES), depth)


_SCHEMA = "apiext.JSONSchemaProps"


def _dec_or_array(data: bytes, depth: int):
    # JSONSchemaPropsOrArray {schema = 1, jSONSchemas = 2 (repeated)}
    found = _fields(data)
    schemas = found.get(2, [])
    if schemas:
        return [decode_message(_SCHEMA, _bytes_of(wt, v), depth + 1) for wt, v in schemas]
    schema = _last(found, 1, BYTES)
    return None if schema is None else decode_message(_SCHEMA, schema, depth + 1)


def _dec_or_bool(data: bytes, depth: int):
    # JSONSchemaPropsOrBool {allows = 1, schema = 2}
    found = _fields(data)
    schema = _last(found, 2, BYTES)
    if schema is not None:
        return decode_message(_SCHEMA, schema, depth + 1)
    return _last(found, 1, VARINT, 0) != 0


def _dec_or_string_array(data: bytes, depth: int):
    # JSONSchemaPropsOrStringArray {schema = 1, property = 2 (repeated)}
    found = _fields(data)
    props = found.get(2, [])
    if props:
        return [_bytes_of(wt, v).decode("utf-8", errors="replace") for wt, v in props]
    schema = _last(found, 1, BYTES)
    return None if schema is None else decode_message(_SCHEMA, schema, depth + 1)


def _bytes_of(wt: int, value) -> bytes:
    if wt != BYTES:
        raise WireError(f"wrong wire type {wt}")
    return value


def _dec_extra_value(data: bytes, depth: int) -> list[str]:
    """``ExtraValue``: a message of ``repeated string items = 1`` that is a plain list in JSON."""
    return [_bytes_of(wt, value).decode("utf-8", errors="replace")
            for num, wt, value in wire.read_fields(data) if num == 1]


_SPECIAL_DECODERS = {
    "authorization.ExtraValue": _dec_extra_value,
    "authentication.ExtraValue": _dec_extra_value,
    "certificates.ExtraValue": _dec_extra_value,
    "resource.Quantity": _dec_quantity,
    "meta.Time": _dec_time,
    "meta.MicroTime": _dec_micro_time,
    "meta.Duration": _dec_duration,
    "intstr.IntOrString": _dec_int_or_string,
    "runtime.RawExtension": _dec_raw,
    "meta.FieldsV1": _dec_raw,
    "apiext.JSON": _dec_raw,
    "apiext.JSONSchemaPropsOrArray": _dec_or_array,
    "apiext.JSONSchemaPropsOrBool": _dec_or_bool,
    "apiext.JSONSchemaPropsOrStringArray": _dec_or_string_array,
}


# ==== time and duration, the way Go writes and reads them ====

def _civil(days: int) -> tuple[int, int, int]:
    """Days since 1970-01-01 -> (year, month, day), proleptic Gregorian, any range."""
    days += 719468
    era = days // 146097
    doe = days - era * 146097
    yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
    y = yoe + era * 400
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    d = doy - (153 * mp + 2) // 5 + 1
    m = mp + 3 if mp < 10 else mp - 9
    return (y + 1 if m <= 2 else y), m, d


def format_time(seconds: int, micros: int | None = None) -> str:
    """RFC 3339 in UTC ("2026-01-02T03:04:05Z"), with six fractional digits for MicroTime."""
    days, rest = divmod(seconds, 86400)
    year, month, day = _civil(days)
    hh, rest = divmod(rest, 3600)
    mm, ss = divmod(rest, 60)
    year_text = f"{year:04d}" if year >= 0 else f"-{-year:04d}"
    frac = "" if micros is None else f".{micros:06d}"
    return f"{year_text}-{month:02d}-{day:02d}T{hh:02d}:{mm:02d}:{ss:02d}{frac}Z"


def parse_time(text: str) -> tuple[int, int]:
    """An RFC 3339 time -> (Unix seconds, nanoseconds)."""
    m = re.fullmatch(r"(\d{4})-(\d\d)-(\d\d)[Tt ](\d\d):(\d\d):(\d\d)(\.\d+)?([Zz]|[+-]\d\d:\d\d)",
                     text.strip())
    if not m:
        raise EncodeError(f"not an RFC 3339 time: {text!r}")
    y, mo, d, hh, mi, ss = (int(g) for g in m.groups()[:6])
    try:
        days = (_dt.date(y, mo, d) - _dt.date(1970, 1, 1)).days
    except ValueError as e:
        raise EncodeError(f"not an RFC 3339 time: {text!r}: {e}") from None
    seconds = days * 86400 + hh * 3600 + mi * 60 + ss
    zone = m.group(8)
    if zone not in ("Z", "z"):
        sign = 1 if zone[0] == "+" else -1
        seconds -= sign * (int(zone[1:3]) * 3600 + int(zone[4:6]) * 60)
    nanos = int((m.group(7) or ".0")[1:10].ljust(9, "0"))
    return seconds, nanos


# Go's time.Duration.String() ("1m0s", "1.5s", "300ms", "0s"), under the codec's name
format_duration = format_go_duration_ns


def parse_duration(text: str) -> int:
    """Go's time.ParseDuration -> nanoseconds; EncodeError for anything else."""
    try:
        return parse_go_duration_ns(text)
    except DurationError:
        raise EncodeError(f"invalid duration {text!r}") from None


# ==== encoding ====

def encode_message(name: str, value, depth: int = 0) -> bytes:
    if depth > MAX_NESTING:
        raise EncodeError(f"values are nested more than {MAX_NESTING} deep")
    special = _SPECIAL_ENCODERS.get(name)
    if special is not None:
        return special(value, depth)
    if value is None:
        value = {}
    if not isinstance(value, dict):
        raise EncodeError(f"{name}: expected an object, got {type(value).__name__}")
    msg: Message = MESSAGE_TYPES[name]
    out = bytearray()
    for field in msg.ordered:
        if field.inline:
            if field.pointer and not _has_any(field.type, value):
                continue
            out += wire.field_bytes(field.num, encode_message(field.type, value, depth + 1))
            continue
        out += _encode_field(field, value.get(field.name), depth)
    return bytes(out)


def _has_any(type_name: str, value: dict) -> bool:
    msg = MESSAGE_TYPES.get(type_name)
    return msg is not None and any(
        (_has_any(f.type, value) if f.inline else value.get(f.name) is not None)
        for f in msg.fields)


def _encode_field(field: Field, value, depth: int) -> bytes:
    if field.map:
        if value is None:
            return b""
        if not isinstance(value, dict):
            raise EncodeError(f"{field.name}: expected an object")
        out = bytearray()
        for key in sorted(value):
            entry = wire.field_bytes(1, str(key).encode())
            item = value[key]
            if field.scalar:
                entry += _encode_scalar(field.type, 2, item, field.name)
            else:
                entry += wire.field_bytes(2, encode_message(field.type, item, depth + 1))
            out += wire.field_bytes(field.num, entry)
        return bytes(out)
    if field.repeated:
        if value is None:
            return b""
        if not isinstance(value, list):
            raise EncodeError(f"{field.name}: expected a list")
        out = bytearray()
        for item in value:
            if field.scalar:
                out += _encode_scalar(field.type, field.num, item, field.name)
            else:
                out += wire.field_bytes(field.num, encode_message(field.type, item, depth + 1))
        return bytes(out)
    if field.scalar:
        if value is None:
            if field.pointer or field.type == "bytes":
                return b""
            value = _ZERO[field.type]
        return _encode_scalar(field.type, field.num, value, field.name)
    if value is None and field.pointer:
        return b""
    return wire.field_bytes(field.num, encode_message(field.type, value, depth + 1))


def _encode_scalar(type_name: str, num: int, value, name: str) -> bytes:
    if type_name == "str":
        if not isinstance(value, str):
            raise EncodeError(f"{name}: expected a string, got {value!r}")
        return wire.field_bytes(num, value.encode("utf-8", errors="surrogatepass"))
    if type_name == "bytes":
        if value is None:
            value = ""
        if not isinstance(value, str):
            raise EncodeError(f"{name}: expected base64 text")
        try:
            return wire.field_bytes(num, base64.b64decode(value, validate=True))
        except (binascii.Error, ValueError) as e:
            raise EncodeError(f"{name}: not base64: {e}") from None
    if type_name == "bool":
        if not isinstance(value, bool):
            raise EncodeError(f"{name}: expected a boolean, got {value!r}")
        return wire.field_varint(num, int(value))
    if type_name in ("i32", "i64"):
        if isinstance(value, float) and value == int(value):
            value = int(value)
        if isinstance(value, bool) or not isinstance(value, int):
            raise EncodeError(f"{name}: expected an integer, got {value!r}")
        bits = 32 if type_name == "i32" else 64
        if not -(1 << (bits - 1)) <= value < (1 << (bits - 1)):
            raise EncodeError(f"{name}: {value} overflows int{bits}")
        return wire.field_varint(num, value)
    if type_name == "f64":
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise EncodeError(f"{name}: expected a number, got {value!r}")
        return wire.field_double(num, float(value))
    raise EncodeError(f"unknown scalar type {type_name}")


def _enc_quantity(value, depth: int) -> bytes:
    if value is None:
        value = "0"
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise EncodeError(f"a quantity must be a string or a number, got {value!r}")
    if isinstance(value, float) and value == int(value):
        value = int(value)
    return wire.field_bytes(1, str(value).encode())


def _enc_time(value, depth: int, micro: bool = False) -> bytes:
    if value is None:
        return b""   # the zero time: Go writes an empty message
    if not isinstance(value, str):
        raise EncodeError(f"a time must be a string, got {value!r}")
    seconds, nanos = parse_time(value)
    if not micro:
        nanos = 0
    else:
        nanos -= nanos % 1000
    return wire.field_varint(1, seconds) + wire.field_varint(2, nanos)


def _enc_duration(value, depth: int) -> bytes:
    if value is None:
        value = "0s"
    if not isinstance(value, str):
        raise EncodeError(f"a duration must be a string, got {value!r}")
    return wire.field_varint(1, parse_duration(value))


def _enc_int_or_string(value, depth: int) -> bytes:
    if value is None:
        value = 0
    if isinstance(value, str):
        return (wire.field_varint(1, 1) + wire.field_varint(2, 0)
                + wire.field_bytes(3, value.encode("utf-8", errors="surrogatepass")))
    if isinstance(value, bool) or not isinstance(value, int) or not -(1 << 31) <= value < (1 << 31):
        raise EncodeError(f"an int-or-string must be an int32 or a string, got {value!r}")
    return wire.field_varint(1, 0) + wire.field_varint(2, value) + wire.field_bytes(3, b"")


def _enc_raw(value, depth: int) -> bytes:
    if value is None:
        return b""
    try:
        raw = json.dumps(value, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as e:
        raise EncodeError(f"not a JSON value: {e}") from None
    return wire.field_bytes(1, raw.encode("utf-8", errors="surrogatepass"))


def _enc_or_array(value, depth: int) -> bytes:
    if isinstance(value, list):
        return b"".join(wire.field_bytes(2, encode_message(_SCHEMA, v, depth + 1)) for v in value)
    if value is None:
        return b""
    return wire.field_bytes(1, encode_message(_SCHEMA, value, depth + 1))


def _enc_or_bool(value, depth: int) -> bytes:
    if isinstance(value, bool):
        return wire.field_varint(1, int(value))
    if value is None:
        return wire.field_varint(1, 0)
    return wire.field_varint(1, 1) + wire.field_bytes(2, encode_message(_SCHEMA, value, depth + 1))


def _enc_or_string_array(value, depth: int) -> bytes:
    if isinstance(value, list):
        if not all(isinstance(v, str) for v in value):
            raise EncodeError("dependencies: expected a list of strings")
        return b"".join(wire.field_bytes(2, v.encode("utf-8", errors="surrogatepass"))
                        for v in value)
    if value is None:
        return b""
    return wire.field_bytes(1, encode_message(_SCHEMA, value, depth + 1))


def _enc_extra_value(value, depth: int) -> bytes:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise EncodeError("extra: expected a list of strings")
    return b"".join(wire.field_bytes(1, v.encode("utf-8", errors="surrogatepass")) for v in value)


_SPECIAL_ENCODERS = {
    "authorization.ExtraValue": _enc_extra_value,
    "authentication.ExtraValue": _enc_extra_value,
    "certificates.ExtraValue": _enc_extra_value,
    "resource.Quantity": _enc_quantity,
    "meta.Time": _enc_time,
    "meta.MicroTime": lambda value, depth: _enc_time(value, depth, micro=True),
    "meta.Duration": _enc_duration,
    "intstr.IntOrString": _enc_int_or_string,
    "runtime.RawExtension": _enc_raw,
    "meta.FieldsV1": _enc_raw,
    "apiext.JSON": _enc_raw,
    "apiext.JSONSchemaPropsOrArray": _enc_or_array,
    "apiext.JSONSchemaPropsOrBool": _enc_or_bool,
    "apiext.JSONSchemaPropsOrStringArray": _enc_or_string_array,
}
