"""Kubernetes' protobuf serialization (``application/vnd.kubernetes.protobuf``) of request bodies.

kubectl's typed clients (``kubectl create namespace|deployment|configmap|...``) send their
bodies as protobuf, with no fallback to JSON. A body is the 4-byte magic ``k8s\\x00`` and a
``runtime.Unknown`` message: ``typeMeta {apiVersion = 1, kind = 2} = 1``, ``raw = 2`` (the
object's own message), ``contentEncoding = 3``, ``contentType = 4``.

:func:`decode` turns such a body into the dict the same object has as JSON (what Go's
``encoding/json`` would write for the struct the generated unmarshaller fills), for every
kind the schema table (``schema.py``) covers; :func:`encode` is its inverse and writes the
bytes Go's marshallers write (kubectl's bodies re-encode byte for byte).

Simplifications, all documented where they happen:

* quantities pass through as written; Kubernetes re-parses and canonicalizes them, and what
  a Go client writes is canonical already;
* a present but empty ``RawExtension``/``JSON`` value reads as ``null`` (Go would fail);
  raw JSON that is not JSON is a BadRequest;
* invalid UTF-8 in strings becomes U+FFFD, as Go's JSON encoder writes it; integral
  doubles are ints (Go writes ``5``, not ``5.0``); ``metav1.Time`` drops nanoseconds on
  decoding, as Kubernetes does;
* ``DeleteOptions`` is accepted under any apiVersion (clients send it under the version of
  what they delete); a kind without a schema is 415 UnsupportedMediaType;
* the apiextensions types (``JSONSchemaProps``) cover the v1 fields through
  ``x-kubernetes-validations`` (field 44).
"""

from __future__ import annotations

from kvert.api.errors import BadRequest, UnsupportedMediaType
from kvert.apiserver.protobuf import codec, wire
from kvert.apiserver.protobuf.codec import EncodeError
from kvert.apiserver.protobuf.schema import KIND_TYPES
from kvert.apiserver.protobuf.wire import BYTES, WireError

MEDIA_TYPE = "application/vnd.kubernetes.protobuf"
MAGIC = b"k8s\x00"

__all__ = ["MEDIA_TYPE", "MAGIC", "decode", "encode", "message_for", "EncodeError"]


def message_for(api_version: str, kind: str) -> str | None:
    """The schema message of a top-level kind, or None."""
    found = KIND_TYPES.get((api_version, kind))
    if found is None and kind == "DeleteOptions":
        found = "meta.DeleteOptions"   # sent under the version of whatever is deleted
    return found


def decode(body: bytes) -> dict:
    """A protobuf request body -> its JSON-shaped object, apiVersion and kind included.

    Raises BadRequest for anything malformed, UnsupportedMediaType for a kind the schema
    table doesn't have.
    """
    try:
        return decode_envelope(bytes(body), 0)
    except (BadRequest, UnsupportedMediaType):
        raise
    except WireError as e:
        raise BadRequest(f"the protobuf request body is malformed: {e}") from None
    except RecursionError:
        raise BadRequest("the protobuf request body is nested too deeply") from None
    except Exception as e:   # defence in depth: a hostile body must never cause a 500
        raise BadRequest(f"the protobuf request body cannot be decoded: {e}") from None


def decode_envelope(body: bytes, depth: int) -> dict:
    if body[:4] != MAGIC:
        raise BadRequest("the protobuf request body does not start with the Kubernetes "
                         "protobuf magic number")
    api_version = kind = ""
    raw = b""
    content_encoding = content_type = ""
    for num, wt, value in wire.read_fields(body[4:]):
        if wt != BYTES:
            if num in (1, 2, 3, 4):
                raise WireError(f"wrong wire type {wt} for field {num} of runtime.Unknown")
            continue
        if num == 1:
            for tnum, twt, tvalue in wire.read_fields(value):
                if tnum in (1, 2) and twt != BYTES:
                    raise WireError(f"wrong wire type {twt} in runtime.TypeMeta")
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
    obj = codec.decode_message(message, raw, depth + 1)
    return {"kind": kind, "apiVersion": api_version, **obj}


def encode(obj: dict) -> bytes:
    """A JSON-shaped object of a kind in the schema table -> a protobuf body (with magic).

    Raises UnsupportedMediaType for a kind the table doesn't have, EncodeError (a
    ValueError) for a value that doesn't fit its field.
    """
    if not isinstance(obj, dict):
        raise EncodeError("only objects can be encoded")
    api_version, kind = obj.get("apiVersion") or "", obj.get("kind") or ""
    message = message_for(api_version, kind)
    if message is None:
        raise UnsupportedMediaType(f"{kind} in {api_version!r} has no protobuf encoding here")
    raw = codec.encode_message(message, obj)
    type_meta = wire.field_bytes(1, api_version.encode()) + wire.field_bytes(2, kind.encode())
    unknown = (wire.field_bytes(1, type_meta) + wire.field_bytes(2, raw)
               + wire.field_bytes(3, b"") + wire.field_bytes(4, b""))
    return MAGIC + unknown
