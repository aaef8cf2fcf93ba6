"""Secret, ServiceAccount and TokenRequest (``ValidateSecret``, ``ValidateSecretUpdate``,
``ValidateServiceAccount``, ``ValidateTokenRequest``).

A Secret's values never appear in a cause: keys are named, values are reported as
``<secret contents redacted>`` (Kubernetes' own placeholder) or not at all. The registry
has already decoded the Secret (``stringData`` merged into ``data``, every value base64),
so only the size and the per-type rules remain.
"""

from __future__ import annotations

import base64
import json
from typing import Any

from kvert.api import secrets as s
from kvert.api.types import Obj

from . import names
from .common import (
    Causes,
    dict_field,
    forbidden,
    get_bool,
    get_dict,
    get_int,
    get_str,
    immutable,
    invalid,
    key,
    required,
    too_long,
    type_error,
)
from .meta import validate_object_meta, validate_object_meta_update

REDACTED = "<secret contents redacted>"
IMMUTABLE_SET = "field is immutable when `immutable` is set"
MIN_TOKEN_SECONDS = 10 * 60
MAX_TOKEN_SECONDS = 1 << 32


# -- Secret ---------------------------------------------------------------------------------------

def _go_unmarshal_error(text: str) -> str | None:
    """What ``json.Unmarshal(b, &map[string]interface{}{})`` says about ``text`` (None: it
    accepts it). Go's syntax errors name the offending character and what it expected;
    the common ones are reproduced, the rest keep Go's first words."""
    stripped = text.strip(" \t\r\n")
    if not stripped:
        return "unexpected end of JSON input"
    try:
        value = json.loads(text)
    except json.JSONDecodeError as e:
        if e.pos >= len(text.rstrip(" \t\r\n")):
            return "unexpected end of JSON input"
        char = text[e.pos]
        context = "looking for beginning of value" if e.msg == "Expecting value" else \
            "looking for beginning of object key string" if "property name" in e.msg else \
            "after object key" if "':' delimiter" in e.msg else \
            "after object key:value pair" if "',' delimiter" in e.msg else \
            "after top-level value"
        return f"invalid character '{char}' {context}"
    if value is None or isinstance(value, dict):
        return None
    kinds = {bool: "bool", int: "number", float: "number", str: "string", list: "array"}
    return (f"json: cannot unmarshal {kinds[type(value)]} into Go value of type "
            "map[string]interface {}")


def _decoded(value: str) -> str:
    """A ``data`` value (valid base64) as text, undecodable bytes kept as surrogates."""
    return base64.b64decode(value.replace("\r", "").replace("\n", "")).decode(
        "utf-8", "surrogateescape")


def _check_type(secret_type: str, meta: Obj, data: dict[str, str]) -> Causes:
    data_path = "data"
    errs: Causes = []
    if secret_type == s.SERVICE_ACCOUNT_TOKEN:
        # Only the ServiceAccount's name is required: its uid and the token may be added later.
        annotations = dict_field(meta, "annotations")
        if not annotations.get(s.SERVICE_ACCOUNT_NAME_KEY):
            errs.append(required(key("metadata.annotations", s.SERVICE_ACCOUNT_NAME_KEY)))
    elif secret_type in (s.DOCKERCFG, s.DOCKER_CONFIG_JSON):
        data_key = s.DOCKERCFG_KEY if secret_type == s.DOCKERCFG else s.DOCKER_CONFIG_JSON_KEY
        if data_key not in data:
            return [required(key(data_path, data_key))]
        problem = _go_unmarshal_error(_decoded(data[data_key]))
        if problem is not None:
            errs.append(invalid(key(data_path, data_key), REDACTED, problem))
    elif secret_type == s.BASIC_AUTH:
        # either may be empty, but one of them must be there
        if s.BASIC_AUTH_USERNAME_KEY not in data and s.BASIC_AUTH_PASSWORD_KEY not in data:
            errs.append(required(key(data_path, s.BASIC_AUTH_USERNAME_KEY)))
            errs.append(required(key(data_path, s.BASIC_AUTH_PASSWORD_KEY)))
    elif secret_type == s.SSH_AUTH:
        if not data.get(s.SSH_AUTH_PRIVATE_KEY):
            errs.append(required(key(data_path, s.SSH_AUTH_PRIVATE_KEY)))
    elif secret_type == s.TLS:
        for data_key in (s.TLS_CERT_KEY, s.TLS_PRIVATE_KEY_KEY):
            if data_key not in data:
                errs.append(required(key(data_path, data_key)))
    return errs


def validate_secret(secret: Obj) -> Causes:
    errs = validate_object_meta(secret, namespaced=True)
    raw = get_dict(secret, "data", "", errs)
    data: dict[str, str] = {}
    total = 0
    for k, v in raw.items():
        p = key("data", k)
        errs.extend(invalid(p, k, m) for m in names.is_config_map_key(k))
        if v is None:
            v = ""
        if not isinstance(v, str):
            errs.append(type_error(p, v, "string"))
            continue
        if s.base64_error_offset(v) is not None:
            errs.append(invalid(p, REDACTED, "must be base64-encoded"))
            continue
        data[k] = v
        total += s.decoded_size(v)
    if total > s.MAX_SECRET_SIZE:
        errs.append(too_long("data", s.MAX_SECRET_SIZE))
    get_bool(secret, "immutable", "", errs)
    meta = dict_field(secret, "metadata")
    errs.extend(_check_type(get_str(secret, "type", "", errs), meta, data))
    return errs


def validate_secret_update(new: Obj, old: Obj) -> Causes:
    errs = validate_object_meta_update(new, old)
    if new.get("type") != old.get("type"):
        errs.append(immutable("type", new.get("type")))
    if old.get("immutable") is True:
        if new.get("immutable") is not True:
            errs.append(forbidden("immutable", IMMUTABLE_SET))
        if (new.get("data") or {}) != (old.get("data") or {}):
            errs.append(forbidden("data", IMMUTABLE_SET))
    errs.extend(c for c in validate_secret(new) if not c.field.startswith("metadata"))
    return errs


# -- ServiceAccount ---------------------------------------------------------------------------------

def validate_service_account(sa: Obj) -> Causes:
    errs = validate_object_meta(sa, namespaced=True)
    get_bool(sa, "automountServiceAccountToken", "", errs)
    return errs


def validate_service_account_update(new: Obj, old: Obj) -> Causes:
    errs = validate_object_meta_update(new, old)
    errs.extend(c for c in validate_service_account(new) if not c.field.startswith("metadata"))
    return errs


# -- TokenRequest ---------------------------------------------------------------------------------

def validate_token_request(request: Any) -> Causes:
    """``ValidateTokenRequest``: a lifetime from 10 minutes to 2^32 seconds."""
    errs: Causes = []
    spec = get_dict(request, "spec", "", errs)
    seconds = get_int(spec, "expirationSeconds", "spec", errs)
    if seconds is not None:
        if seconds < MIN_TOKEN_SECONDS:
            errs.append(invalid("spec.expirationSeconds", seconds,
                                "may not specify a duration less than 10 minutes"))
        if seconds > MAX_TOKEN_SECONDS:
            errs.append(invalid("spec.expirationSeconds", seconds,
                                "may not specify a duration larger than 2^32 seconds"))
    return errs
