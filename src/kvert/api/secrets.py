"""Secrets as the API decodes them: the type names and keys of ``core/v1``, and the
``stringData`` conversion.

Kubernetes has no ``stringData`` in its internal Secret: decoding a v1 Secret writes each
``stringData`` value into ``data`` (overwriting a key present in both) and the field is
never stored nor read back. A ``data`` value that is not base64 fails the decoding itself,
with a 400 that names the byte offset, never the value.
"""

from __future__ import annotations

import base64

from kvert.api.errors import BadRequest
from kvert.api.gostrings import json_kind
from kvert.api.types import Obj

OPAQUE = "Opaque"
SERVICE_ACCOUNT_TOKEN = "kubernetes.io/service-account-token"
DOCKERCFG = "kubernetes.io/dockercfg"
DOCKER_CONFIG_JSON = "kubernetes.io/dockerconfigjson"
BASIC_AUTH = "kubernetes.io/basic-auth"
SSH_AUTH = "kubernetes.io/ssh-auth"
TLS = "kubernetes.io/tls"

SERVICE_ACCOUNT_NAME_KEY = "kubernetes.io/service-account.name"
DOCKERCFG_KEY = ".dockercfg"
DOCKER_CONFIG_JSON_KEY = ".dockerconfigjson"
BASIC_AUTH_USERNAME_KEY = "username"
BASIC_AUTH_PASSWORD_KEY = "password"
SSH_AUTH_PRIVATE_KEY = "ssh-privatekey"
TLS_CERT_KEY = "tls.crt"
TLS_PRIVATE_KEY_KEY = "tls.key"

MAX_SECRET_SIZE = 1024 * 1024

_B64_ALPHABET = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")


def base64_error_offset(text: str) -> int | None:
    """Where Go's ``base64.StdEncoding`` stops decoding ``text`` (the offset its
    ``CorruptInputError`` reports), or None when ``text`` decodes. Go skips ``\\r`` and ``\\n``."""
    raw = text.encode("utf-8", "surrogatepass")
    size, i, filled = len(raw), 0, 0          # filled: characters of the current 4-group
    while i < size:
        byte = raw[i]
        i += 1
        if byte in b"\r\n":
            continue
        if byte in _B64_ALPHABET:
            filled = (filled + 1) % 4
            continue
        if byte != ord("=") or filled < 2:
            return i - 1
        if filled == 2:                       # "==" expected: the second "=" must follow
            while i < size and raw[i] in b"\r\n":
                i += 1
            if i == size:
                return size
            if raw[i] != ord("="):
                return i - 1
            i += 1
        while i < size and raw[i] in b"\r\n":
            i += 1
        return i if i < size else None        # anything after the padding is garbage
    return size - filled if filled else None


def decoded_size(text: str) -> int:
    """The number of bytes a valid base64 ``data`` value holds."""
    return len(base64.b64decode(text.replace("\r", "").replace("\n", "")))


def _cannot_decode(detail: str) -> BadRequest:
    return BadRequest(f'Secret in version "v1" cannot be handled as a Secret: {detail}')


def merge_string_data(secret: Obj) -> None:
    """Decode a v1 Secret in place as ``Convert_v1_Secret_To_core_Secret`` does: check that
    every ``data`` value is base64 and move ``stringData`` into ``data``."""
    data = secret.get("data")
    if data is not None and not isinstance(data, dict):
        raise _cannot_decode(f"json: cannot unmarshal {json_kind(data)} into Go struct field "
                             "Secret.data of type map[string][]uint8")
    for value in (data or {}).values():
        if value is None:
            continue
        if not isinstance(value, str):
            raise _cannot_decode(f"json: cannot unmarshal {json_kind(value)} into Go struct "
                                 "field Secret.data of type []uint8")
        offset = base64_error_offset(value)
        if offset is not None:
            raise _cannot_decode(f"illegal base64 data at input byte {offset}")
    string_data = secret.pop("stringData", None)
    if string_data is None:
        return
    if not isinstance(string_data, dict):
        raise _cannot_decode(f"json: cannot unmarshal {json_kind(string_data)} into Go struct "
                             "field Secret.stringData of type map[string]string")
    if not string_data:
        return
    merged = dict(data or {})
    for key, value in string_data.items():
        if value is None:
            value = ""
        if not isinstance(value, str):
            raise _cannot_decode(f"json: cannot unmarshal {json_kind(value)} into Go struct "
                                 "field Secret.stringData of type string")
        merged[key] = base64.b64encode(value.encode("utf-8", "surrogatepass")).decode("ascii")
    secret["data"] = merged
