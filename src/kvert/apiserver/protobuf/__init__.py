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

from typing import Any

from kvert.api.errors import BadRequest, UnsupportedMediaType
from kvert.apiserver.protobuf import codec, wire
from kvert.apiserver.protobuf.codec import EncodeError, decode_envelope
from kvert.apiserver.protobuf.envelope import MAGIC, MEDIA_TYPE, message_for
from kvert.apiserver.protobuf.wire import WireError

__all__ = ["MEDIA_TYPE", "MAGIC", "decode", "decode_envelope", "encode", "message_for", "EncodeError"]


def decode(body: bytes) -> dict[str, Any]:
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


def encode(obj: dict[str, Any]) -> bytes:
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
