"""Structural schemas: what kube-apiserver does with a custom resource's openAPIV3Schema.

A CustomResourceDefinition version carries an OpenAPI v3 schema. kube-apiserver uses it
in four ways, all pure functions here, all working on decoded JSON (dicts, lists, str,
int, float, bool, None):

* :func:`prune` drops the fields the schema does not specify (apiextensions-apiserver's
  ``pkg/apiserver/schema/pruning``): everything not under ``properties``,
  ``additionalProperties`` or ``items``, unless a node says
  ``x-kubernetes-preserve-unknown-fields: true``. ``apiVersion``, ``kind`` and ``metadata``
  of the object (and of every ``x-kubernetes-embedded-resource``) are always kept.
* :func:`apply_schema_defaults` first drops ``null`` values of non-nullable fields that have
  no default, then fills in ``default`` values top-down (``pkg/apiserver/schema/defaulting``):
  a defaulted object's own fields are defaulted in turn.
* :func:`validate_against_schema` is kube-openapi's validator as the API server reports it
  (``pkg/apiserver/validation``): causes at Kubernetes field paths (``spec.replicas``,
  ``spec.items[0].name``, map entries as ``spec.limits.cpu``) with Kubernetes' messages, e.g.
  ``Invalid value: "string": spec.replicas in body must be of type integer: "string"``,
  ``Required value``, ``Unsupported value: "x": supported values: "a", "b"``,
  ``Invalid value: 0: spec.replicas in body should be greater than or equal to 1``.
  ``x-kubernetes-list-type`` ``set``/``map`` uniqueness is checked as well.
* :func:`validate_structural` checks that a schema is *structural* and otherwise acceptable
  in a CRD (apiextensions ``validation.go`` and ``pkg/apiserver/schema/validation.go``):
  types everywhere, no ``$ref``/``definitions``/..., value validations (``allOf``,
  ``anyOf``, ``oneOf``, ``not``) that only restrict what the structural part declares,
  ``metadata`` restricted to ``name``/``generateName``, valid list/map extensions, patterns
  that compile, defaults that validate and survive pruning.

:func:`prepare_custom_object` chains prune, default and validate for the registry.

Where kvert differs from Kubernetes:

* ``x-kubernetes-validations`` (CEL rules) are checked for shape only, never evaluated;
* patterns are Python regular expressions (RE2 syntax is nearly a subset; ``\\z`` is
  translated); a pattern Python cannot compile is reported by :func:`validate_structural`
  and ignored by :func:`validate_against_schema`;
* ``allOf``/``anyOf``/``oneOf``/``not`` failures are reported at the path of the value
  (Kubernetes reports them without a field path), followed by the failing branch's causes;
* ``metadata`` of the object is not validated or pruned here (the registry's ObjectMeta
  rules apply to every kind); embedded resources only need ``apiVersion`` and ``kind``;
* like Kubernetes, formats ``int32``/``int64``/``float``/``double`` are accepted but not
  range-checked, and unknown formats are ignored.
"""

from __future__ import annotations

import base64
import binascii
import functools
import ipaddress
import json
import math
import re
from collections.abc import Callable
from datetime import date
from typing import Any

from kvert.api import errors
from kvert.api.errors import Cause
from kvert.api.meta import deep_copy
from kvert.api.names import is_dns1123_label, is_dns1123_subdomain
from kvert.api.quantity import QuantityError, parse_quantity
from kvert.api.types import Obj
from kvert.api.validation.common import child, index, key, list_field, show

Causes = list[Cause]

TYPES = ("array", "boolean", "integer", "number", "object", "string")
_META_FIELDS = ("apiVersion", "kind", "metadata")
_IN = "in body"


# ---- small helpers ---------------------------------------------------------------------------

def _num(x: Any) -> str:
    """A number as Go's ``%v`` prints a float64 (``1`` not ``1.0``)."""
    if isinstance(x, bool):
        return "true" if x else "false"
    if isinstance(x, int):
        return str(x)
    if isinstance(x, float):
        if math.isfinite(x) and x.is_integer() and abs(x) < 1e21:
            return str(int(x))
        return repr(x)
    return str(x)


def _value(value: Any) -> str:
    """How a field error shows the offending value."""
    if isinstance(value, (dict, list, tuple)):
        return show(value)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return _num(value)
    return errors._show(value)


def _invalid(path: str, value: Any, detail: str) -> Cause:
    return Cause(path, f"Invalid value: {_value(value)}: {detail}", "FieldValueInvalid")


def _type_invalid(path: str, value: Any, detail: str) -> Cause:
    return Cause(path, f"Invalid value: {_value(value)}: {detail}", "FieldValueTypeInvalid")


def _not_supported(path: str, value: Any, supported: list[Any]) -> Cause:
    options = [s if isinstance(s, str) else json.dumps(s, separators=(",", ":")) for s in supported]
    text = ", ".join(f'"{o}"' for o in options)
    return Cause(path, f"Unsupported value: {_value(value)}: supported values: {text}",
                 "FieldValueNotSupported")


def _name(path: str) -> str:
    """The name kube-openapi puts in its messages."""
    return path


def json_type(value: Any) -> str:
    """The JSON type of a decoded value: object, array, string, integer, number, boolean, null."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def _is_type(value: Any, expected: str) -> bool:
    # the common cases first: this runs for every node of every custom object written
    if expected == "string":
        return isinstance(value, str)
    if expected == "object":
        return isinstance(value, dict)
    if expected == "array":
        return isinstance(value, list)
    if isinstance(value, bool):
        return expected == "boolean"
    if expected == "integer":
        return isinstance(value, int) or (isinstance(value, float) and math.isfinite(value)
                                          and value.is_integer())
    if expected == "number":
        return isinstance(value, (int, float))
    return json_type(value) == expected


def _json_equal(a: Any, b: Any) -> bool:
    """Deep equality with JSON semantics (1 == 1.0, but true != 1)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_json_equal(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_json_equal(x, y) for x, y in zip(a, b))
    return type(a) is type(b) and a == b


def _canonical(value: Any) -> str:
    """A hashable rendering for duplicate detection (numbers normalised, bool kept apart)."""
    def norm(v: Any) -> Any:
        if isinstance(v, bool) or v is None or isinstance(v, str):
            return v
        if isinstance(v, (int, float)):
            return {"#n": _num(v)}
        if isinstance(v, list):
            return [norm(x) for x in v]
        if isinstance(v, dict):
            return {k: norm(x) for k, x in v.items()}
        return repr(v)
    return json.dumps(norm(value), sort_keys=True, separators=(",", ":"))


@functools.lru_cache(maxsize=1024)
def compile_pattern(pattern: str) -> re.Pattern[str]:
    """A schema ``pattern`` (Go RE2 syntax) as a Python regex; raises ``re.error``."""
    return re.compile(pattern.replace("\\z", "\\Z"))


def _sub(schema: Any, field: str) -> Obj | None:
    value = schema.get(field) if isinstance(schema, dict) else None
    return value if isinstance(value, dict) else None


def _props(schema: Any) -> Obj:
    props = schema.get("properties") if isinstance(schema, dict) else None
    return props if isinstance(props, dict) else {}


# ---- formats ---------------------------------------------------------------------------------

_RX_DATE = re.compile(r"^(\d{4})-(\d{2})-(\d{2})$")
_RX_DATE_TIME = re.compile(r"^(\d{4})-(\d{2})-(\d{2})[tT](\d{2}):(\d{2}):(\d{2})(\.\d+)?"
                           r"([zZ]|[+-]\d{2}:\d{2})$")
_RX_UUID = {
    "uuid": re.compile(r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$"),
    "uuid3": re.compile(r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?3[0-9a-f]{3}-?[0-9a-f]{4}-?[0-9a-f]{12}$"),
    "uuid4": re.compile(r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?4[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?"
                        r"[0-9a-f]{12}$"),
    "uuid5": re.compile(r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?5[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?"
                        r"[0-9a-f]{12}$"),
}
_RX_HOSTNAME = re.compile(r"^([a-zA-Z0-9]([-a-zA-Z0-9]{0,61}[a-zA-Z0-9])?)"
                          r"(\.[a-zA-Z0-9]([-a-zA-Z0-9]{0,61}[a-zA-Z0-9])?)*\.?$")
_RX_EMAIL = re.compile(r"^([^<>@\s]+@[^<>@\s]+|[^<>]*<[^<>@\s]+@[^<>@\s]+>)$")
_RX_MAC = re.compile(r"(?i)^([0-9a-f]{2}([:-])[0-9a-f]{2}(\2[0-9a-f]{2}){4}"
                     r"((\2[0-9a-f]{2}){2})?((\2[0-9a-f]{2}){12})?"
                     r"|[0-9a-f]{4}\.[0-9a-f]{4}\.[0-9a-f]{4}((\.[0-9a-f]{4})?|(\.[0-9a-f]{4}){7}))$")
_RX_DURATION = re.compile(r"^(\s*[-+]?\d+(\.\d+)?\s*(ns|us|µs|ms|s|m|h|d|w|nanoseconds?|"
                          r"microseconds?|milliseconds?|seconds?|minutes?|hours?|days?|weeks?)"
                          r")+\s*$")
_RX_HEXCOLOR = re.compile(r"^#?([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$")
_RX_RGBCOLOR = re.compile(r"^rgb\(\s*(\d{1,3})\s*,\s*(\d{1,3})\s*,\s*(\d{1,3})\s*\)$")
_RX_SSN = re.compile(r"^\d{3}[- ]?\d{2}[- ]?\d{4}$")
_RX_CREDITCARD = re.compile(r"^(?:4[0-9]{12}(?:[0-9]{3})?|5[1-5][0-9]{14}|6(?:011|5[0-9][0-9])"
                            r"[0-9]{12}|3[47][0-9]{13}|3(?:0[0-5]|[68][0-9])[0-9]{11}|"
                            r"(?:2131|1800|35\d{3})\d{11})$")
_RX_BSON = re.compile(r"^[0-9a-fA-F]{24}$")
_RX_URI = re.compile(r"^([a-zA-Z][a-zA-Z0-9+.-]*:\S*|/\S*)$")


def _valid_date(y: str, m: str, d: str) -> bool:
    try:
        date(int(y), int(m), int(d))
    except ValueError:
        return False
    return True


def _is_date_time(s: str) -> bool:
    m = _RX_DATE_TIME.match(s)
    if not m or not _valid_date(m[1], m[2], m[3]):
        return False
    return int(m[4]) < 24 and int(m[5]) < 60 and int(m[6]) < 61


def _is_isbn10(s: str) -> bool:
    digits = s.replace("-", "").replace(" ", "")
    if not re.fullmatch(r"\d{9}[\dXx]", digits):
        return False
    total = sum((10 - i) * (10 if c in "Xx" else int(c)) for i, c in enumerate(digits))
    return total % 11 == 0


def _is_isbn13(s: str) -> bool:
    digits = s.replace("-", "").replace(" ", "")
    if not re.fullmatch(r"\d{13}", digits):
        return False
    total = sum(int(c) * (1 if i % 2 == 0 else 3) for i, c in enumerate(digits))
    return total % 10 == 0


def _is_ip(s: str, version: int) -> bool:
    try:
        return ipaddress.ip_address(s).version == version
    except ValueError:
        return False


def _is_cidr(s: str) -> bool:
    if "/" not in s:
        return False
    try:
        ipaddress.ip_network(s, strict=False)
    except ValueError:
        return False
    return True


def _is_base64(s: str) -> bool:
    try:
        base64.b64decode(s, validate=True)
    except (binascii.Error, ValueError):
        return False
    return True


def _is_quantity(s: str) -> bool:
    try:
        parse_quantity(s)
    except (QuantityError, ValueError, TypeError):
        return False
    return True


def _is_rgb(s: str) -> bool:
    m = _RX_RGBCOLOR.match(s)
    return m is not None and all(int(g) <= 255 for g in m.groups())


def _is_date(s: str) -> bool:
    m = _RX_DATE.match(s)
    return m is not None and _valid_date(*m.groups())


# Normalised format name (dashes removed, as go-openapi does) -> check. These are the string
# formats kube-apiserver validates in CRD schemas; any other format is ignored.
_FORMATS: dict[str, Any] = {
    "bsonobjectid": lambda s: bool(_RX_BSON.match(s)),
    "uri": lambda s: bool(_RX_URI.match(s)),
    "email": lambda s: bool(_RX_EMAIL.match(s)),
    "hostname": lambda s: len(s) <= 255 and bool(_RX_HOSTNAME.match(s)),
    "ipv4": lambda s: _is_ip(s, 4),
    "ipv6": lambda s: _is_ip(s, 6),
    "cidr": _is_cidr,
    "mac": lambda s: bool(_RX_MAC.match(s)),
    "uuid": lambda s: bool(_RX_UUID["uuid"].match(s)),
    "uuid3": lambda s: bool(_RX_UUID["uuid3"].match(s)),
    "uuid4": lambda s: bool(_RX_UUID["uuid4"].match(s)),
    "uuid5": lambda s: bool(_RX_UUID["uuid5"].match(s)),
    "isbn": lambda s: _is_isbn10(s) or _is_isbn13(s),
    "isbn10": _is_isbn10,
    "isbn13": _is_isbn13,
    "creditcard": lambda s: bool(_RX_CREDITCARD.match(re.sub(r"\D", "", s))),
    "ssn": lambda s: bool(_RX_SSN.match(s)),
    "hexcolor": lambda s: bool(_RX_HEXCOLOR.match(s)),
    "rgbcolor": _is_rgb,
    "byte": _is_base64,
    "password": lambda s: True,
    "date": _is_date,
    "duration": lambda s: bool(_RX_DURATION.match(s)),
    "datetime": _is_date_time,
    "quantity": _is_quantity,
    "k8sshortname": lambda s: not is_dns1123_label(s),
    "k8slongname": lambda s: not is_dns1123_subdomain(s),
}


def format_ok(fmt: str, value: str) -> bool:
    """Whether a string satisfies a schema ``format`` (unknown formats always pass)."""
    check = _FORMATS.get(fmt.replace("-", ""))
    return True if check is None else bool(check(value))


# ---- validation ------------------------------------------------------------------------------

def validate_against_schema(obj: Any, schema: Obj, path: str = "") -> list[Cause]:
    """Causes that make ``obj`` invalid against ``schema`` (kube-openapi, as kube-apiserver
    reports it). ``path`` is the field path of ``obj`` itself ("" for a whole object)."""
    errs: Causes = []
    _validate(obj, schema, path, errs)
    return errs


_JUNCTORS = ("anyOf", "oneOf", "allOf", "not")     # anyOf first: see _validate


def _validate(value: Any, s: Any, path: str, errs: Causes) -> None:
    if not isinstance(s, dict):
        return
    int_or_string = s.get("x-kubernetes-int-or-string") is True
    declared = s.get("type")
    types = ["integer", "string"] if int_or_string else ([declared] if isinstance(declared, str)
                                                          and declared else [])

    if value is None:
        if types and not s.get("nullable"):
            errs.append(_type_invalid(path, "null", f'{_name(path)} {_IN} must be of type '
                                                    f'{",".join(types)}: "null"'))
        return
    if types and not any(_is_type(value, t) for t in types):
        actual = json_type(value)
        errs.append(_type_invalid(path, actual, f'{_name(path)} {_IN} must be of type {",".join(types)}: '
                                                f'"{actual}"'))
        return

    # int-or-string's own anyOf adds nothing to the type check above
    if any(j in s for j in _JUNCTORS) and not (int_or_string and s.get("anyOf") == _INT_OR_STRING_ANY_OF
                                               and not any(j in s for j in _JUNCTORS[1:])):
        _validate_junctors(value, s, path, errs)

    if isinstance(value, str):
        _validate_string(value, s, path, errs)
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        _validate_number(value, s, path, errs)

    enum = s.get("enum")
    if isinstance(enum, list) and enum and not any(_json_equal(value, e) for e in enum):
        errs.append(_not_supported(path, value, enum))

    if isinstance(value, list):
        _validate_array(value, s, path, errs)
    elif isinstance(value, dict):
        _validate_object(value, s, path, errs)


def _validate_string(value: str, s: Obj, path: str, errs: Causes) -> None:
    name = _name(path)
    max_length = s.get("maxLength")
    if isinstance(max_length, int) and len(value) > max_length:
        errs.append(errors.too_long(path, value, max_length))
    min_length = s.get("minLength")
    if isinstance(min_length, int) and len(value) < min_length:
        errs.append(_invalid(path, value, f"{name} {_IN} should be at least {min_length} chars long"))
    pattern = s.get("pattern")
    if isinstance(pattern, str) and pattern:
        try:
            rx = compile_pattern(pattern)
        except re.error:
            rx = None
        if rx is not None and not rx.search(value):
            errs.append(_invalid(path, value, f"{name} {_IN} should match '{pattern}'"))
    fmt = s.get("format")
    if isinstance(fmt, str) and fmt and s.get("type") in ("string", None) \
            and not format_ok(fmt, value):
        errs.append(_type_invalid(path, value, f'{name} {_IN} must be of type {fmt}: "{value}"'))


def _validate_number(value: int | float, s: Obj, path: str, errs: Causes) -> None:
    name = _name(path)
    maximum = s.get("maximum")
    if isinstance(maximum, (int, float)) and not isinstance(maximum, bool):
        if s.get("exclusiveMaximum") is True:
            if value >= maximum:
                errs.append(_invalid(path, value, f"{name} {_IN} should be less than {_num(maximum)}"))
        elif value > maximum:
            errs.append(_invalid(path, value, f"{name} {_IN} should be less than or equal to "
                                              f"{_num(maximum)}"))
    minimum = s.get("minimum")
    if isinstance(minimum, (int, float)) and not isinstance(minimum, bool):
        if s.get("exclusiveMinimum") is True:
            if value <= minimum:
                errs.append(_invalid(path, value, f"{name} {_IN} should be greater than "
                                                  f"{_num(minimum)}"))
        elif value < minimum:
            errs.append(_invalid(path, value, f"{name} {_IN} should be greater than or equal to "
                                              f"{_num(minimum)}"))
    factor = s.get("multipleOf")
    if isinstance(factor, (int, float)) and not isinstance(factor, bool) and factor > 0:
        if isinstance(value, int) and isinstance(factor, int):
            ok = value % factor == 0
        else:
            quotient = value / factor
            ok = math.isfinite(quotient) and abs(quotient - round(quotient)) < 1e-9
        if not ok:
            errs.append(_invalid(path, value, f"{name} {_IN} should be a multiple of {_num(factor)}"))


def _validate_array(value: list[Any], s: Obj, path: str, errs: Causes) -> None:
    items = _sub(s, "items")
    if items is not None:
        for i, item in enumerate(value):
            _validate(item, items, index(path, i), errs)
    min_items = s.get("minItems")
    if isinstance(min_items, int) and len(value) < min_items:
        errs.append(_invalid(path, len(value), f"{_name(path)} {_IN} should have at least {min_items} items"))
    max_items = s.get("maxItems")
    if isinstance(max_items, int) and len(value) > max_items:
        errs.append(Cause(path, f"Too many: {len(value)}: must have at most {max_items} items",
                          "FieldValueTooMany"))
    if s.get("uniqueItems") is True and len({_canonical(v) for v in value}) < len(value):
        errs.append(_invalid(path, "", f"{_name(path)} {_IN} shouldn't contain duplicates"))
    _validate_list_type(value, s, path, errs)


def _validate_list_type(value: list[Any], s: Obj, path: str, errs: Causes) -> None:
    """``x-kubernetes-list-type``: ``set`` items and ``map`` keys must be unique."""
    list_type = s.get("x-kubernetes-list-type")
    if list_type == "set":
        seen: set[str] = set()
        for i, item in enumerate(value):
            c = _canonical(item)
            if c in seen:
                errs.append(_duplicate(index(path, i), item))
            seen.add(c)
    elif list_type == "map":
        keys = [k for k in s.get("x-kubernetes-list-map-keys") or [] if isinstance(k, str)]
        defaults = {k: _props(_sub(s, "items")).get(k, {}).get("default") for k in keys}
        seen = set()
        for i, item in enumerate(value):
            if not isinstance(item, dict):
                continue  # the items schema reports the wrong type
            entry = {k: item.get(k, defaults[k]) for k in keys if k in item or
                     defaults[k] is not None}
            c = _canonical(entry)
            if c in seen:
                errs.append(_duplicate(index(path, i), entry))
            seen.add(c)


def _duplicate(path: str, value: Any) -> Cause:
    return Cause(path, f"Duplicate value: {_value(value)}", "FieldValueDuplicate")


def _validate_object(value: Obj, s: Obj, path: str, errs: Causes) -> None:
    required = s.get("required")
    if isinstance(required, list):
        for field in required:
            if isinstance(field, str) and field not in value:
                errs.append(errors.required(child(path, field)))
    props = _props(s)
    additional = s.get("additionalProperties")
    for k, v in value.items():
        sub = props.get(k)
        if isinstance(sub, dict):
            _validate(v, sub, child(path, k), errs)
        elif isinstance(additional, dict):
            _validate(v, additional, child(path, k), errs)
        elif additional is False:
            errs.append(_invalid(path, k, f"{_name(path)}.{k} {_IN} is a forbidden property"))
    max_props = s.get("maxProperties")
    if isinstance(max_props, int) and len(value) > max_props:
        errs.append(Cause(path, f"Too many: {len(value)}: must have at most {max_props} items",
                          "FieldValueTooMany"))
    min_props = s.get("minProperties")
    if isinstance(min_props, int) and len(value) < min_props:
        errs.append(_invalid(path, len(value), f"{_name(path)} {_IN} should have at least {min_props} "
                                               f"properties"))
    if s.get("x-kubernetes-embedded-resource") is True:
        for field in ("apiVersion", "kind"):
            if not value.get(field):
                errs.append(errors.required(child(path, field), "must not be empty"))


def _validate_junctors(value: Any, s: Obj, path: str, errs: Causes) -> None:
    """``allOf``, ``anyOf``, ``oneOf`` and ``not`` (value validations)."""
    q = json.dumps(_name(path))
    any_of = [x for x in s.get("anyOf") or [] if isinstance(x, dict)]
    if any_of:
        results = [validate_against_schema(value, x, path) for x in any_of]
        if not any(not r for r in results):
            errs.append(_invalid(path, "", f"{q} must validate at least one schema (anyOf)"))
            shortest = min(results, key=len)
            errs.extend(shortest)
    one_of = [x for x in s.get("oneOf") or [] if isinstance(x, dict)]
    if one_of:
        results = [validate_against_schema(value, x, path) for x in one_of]
        valid = sum(1 for r in results if not r)
        if valid != 1:
            more = "Found none valid" if valid == 0 else f"Found {valid} valid alternatives"
            errs.append(_invalid(path, "", f"{q} must validate one and only one schema (oneOf). "
                                           f"{more}"))
            if valid == 0:
                shortest = min(results, key=len)
                errs.extend(shortest)
    all_of = [x for x in s.get("allOf") or [] if isinstance(x, dict)]
    if all_of:
        results = [validate_against_schema(value, x, path) for x in all_of]
        failed = [r for r in results if r]
        for r in failed:
            errs.extend(r)
        if failed:
            more = ". None validated" if len(failed) == len(results) else ""
            errs.append(_invalid(path, "", f"{q} must validate all the schemas (allOf){more}"))
    not_schema = _sub(s, "not")
    if not_schema is not None and not validate_against_schema(value, not_schema, path):
        errs.append(_invalid(path, "", f"{q} must not validate the schema (not)"))


# ---- pruning ---------------------------------------------------------------------------------

def prune(obj: Obj, schema: Obj) -> list[str]:
    """Drop, in place, every field ``schema`` does not specify; return the removed fields'
    paths (as kube-apiserver's "unknown field" warnings name them). ``apiVersion``, ``kind``
    and ``metadata`` of the object are always kept."""
    removed: list[str] = []
    if isinstance(schema, dict):
        _prune(obj, schema, "", removed, resource_root=True)
    return removed


def _prune(x: Any, s: Obj | None, path: str, removed: list[str], *,
           resource_root: bool = False) -> None:
    """Kubernetes' pruning: with no schema every field of an object goes; a node with
    ``x-kubernetes-preserve-unknown-fields`` keeps its unknown fields but its specified
    ones are still pruned; ``additionalProperties`` keeps every key (a boolean one keeps
    none of the nested fields)."""
    if s is not None and s.get("x-kubernetes-preserve-unknown-fields") is True:
        _skip_prune(x, s, path, removed, resource_root=resource_root)
        return
    if isinstance(x, dict):
        if s is None:
            for k in list(x):
                _remove_field(x, k, path, removed)
            return
        _prune_fields(x, s, path, removed, resource_root=resource_root, keep_unknown=False)
    elif isinstance(x, list):
        items = _sub(s, "items")
        for i, item in enumerate(x):
            _prune(item, items, index(path, i), removed)


def _skip_prune(x: Any, s: Obj | None, path: str, removed: list[str], *,
                resource_root: bool = False) -> None:
    """Kubernetes' ``skipPrune``: the fields of a preserving node are kept, the fields its
    schema specifies are still pruned. List items are walked the same way, as Kubernetes
    does, even when ``items`` does not preserve unknown fields itself."""
    if s is None:
        return
    if isinstance(x, dict):
        _prune_fields(x, s, path, removed, resource_root=resource_root, keep_unknown=True)
    elif isinstance(x, list):
        items = _sub(s, "items")
        for i, item in enumerate(x):
            _skip_prune(item, items, index(path, i), removed)


def _prune_fields(x: Obj, s: Obj, path: str, removed: list[str], *, resource_root: bool,
                  keep_unknown: bool) -> None:
    """Prune each field of the object ``x`` by its schema in ``s``. A field ``s`` does not
    specify is dropped unless ``keep_unknown``; the meta fields of a resource always stay."""
    props = _props(s)
    additional = s.get("additionalProperties")
    embedded = resource_root or s.get("x-kubernetes-embedded-resource") is True
    for k in list(x):
        if embedded and k in _META_FIELDS:
            continue
        sub = props.get(k)
        if isinstance(sub, dict):
            _prune(x[k], sub, child(path, k), removed)
        elif additional is not None and k not in props:
            _prune(x[k], additional if isinstance(additional, dict) else None,
                   child(path, k), removed)
        elif not keep_unknown:
            _remove_field(x, k, path, removed)


def _remove_field(x: Obj, k: str, path: str, removed: list[str]) -> None:
    del x[k]
    removed.append(child(path, k))


# ---- defaulting ------------------------------------------------------------------------------

def apply_schema_defaults(obj: Any, schema: Obj) -> None:
    """Kubernetes' structural defaulting, in place: first remove ``null`` values of fields that
    are neither nullable nor defaulted, then set ``default`` values where fields are absent
    (or ``null`` and not nullable), top-down through properties, additionalProperties and
    items."""
    if not isinstance(schema, dict):
        return
    _drop_non_nullable_nulls(obj, schema)
    _default(obj, schema)


def _non_nullable_null(value: Any, s: Obj | None) -> bool:
    return value is None and s is not None and not s.get("nullable")


def _drop_non_nullable_nulls(x: Any, s: Obj | None) -> None:
    if s is None:
        return
    if isinstance(x, dict):
        props = _props(s)
        additional = _sub(s, "additionalProperties")
        for k in list(x):
            sub = props.get(k)
            if not isinstance(sub, dict):
                sub = additional if k not in props else None
            if sub is None:
                continue
            if x[k] is None and "default" not in sub and not sub.get("nullable"):
                del x[k]
            else:
                _drop_non_nullable_nulls(x[k], sub)
    elif isinstance(x, list):
        items = _sub(s, "items")
        for item in x:
            _drop_non_nullable_nulls(item, items)


def _default(x: Any, s: Obj | None) -> None:
    if s is None:
        return
    if isinstance(x, dict):
        props = _props(s)
        for k, sub in props.items():
            if not isinstance(sub, dict) or "default" not in sub or sub["default"] is None:
                continue
            if k not in x or _non_nullable_null(x[k], sub):
                x[k] = deep_copy(sub["default"])
        additional = _sub(s, "additionalProperties")
        for k in list(x):
            sub = props.get(k)
            if isinstance(sub, dict):
                _default(x[k], sub)
            elif k not in props and additional is not None:
                if _non_nullable_null(x[k], additional) and additional.get("default") is not None:
                    x[k] = deep_copy(additional["default"])
                _default(x[k], additional)
    elif isinstance(x, list):
        items = _sub(s, "items")
        for i in range(len(x)):
            if items is not None and _non_nullable_null(x[i], items) \
                    and items.get("default") is not None:
                x[i] = deep_copy(items["default"])
            _default(x[i], items)


# ---- the registry's entry point --------------------------------------------------------------

def prepare_custom_object(obj: Obj, schema: Obj | None) -> list[Cause]:
    """What kube-apiserver does to a custom resource it is asked to store: prune unknown
    fields, apply defaults, then validate. Mutates ``obj``; returns the validation causes
    (empty when valid). Without a schema nothing is done."""
    if not isinstance(schema, dict) or not isinstance(obj, dict):
        return []
    prune(obj, schema)
    apply_schema_defaults(obj, schema)
    return validate_against_schema(obj, schema)


# ---- the fast path for status writes -----------------------------------------------------------
#
# A controller rewriting its status (the VPA recommender, thousands of times an hour in a large
# simulation) nearly always sends a value that prune, default and validate all leave alone.
# ``_clean_checker`` compiles a schema once into a function that says so without building any
# cause: True only when pruning would remove nothing, defaulting would change nothing and
# validation would find nothing. Schemas with keywords it does not model (defaults, preserved
# unknown fields, embedded resources, junctors other than int-or-string's) get no checker and
# always take the full passes, as does every value the checker does not call clean.

_CHECKED_KEYS = frozenset((
    "type", "description", "title", "example", "externalDocs", "nullable", "properties",
    "additionalProperties", "items", "required", "enum", "format", "pattern", "maxLength",
    "minLength", "maximum", "minimum", "exclusiveMaximum", "exclusiveMinimum", "multipleOf",
    "minItems", "maxItems", "uniqueItems", "x-kubernetes-int-or-string", "x-kubernetes-list-type",
    "x-kubernetes-list-map-keys", "x-kubernetes-map-type", "x-kubernetes-validations", "anyOf"))
_STRING_RULES = ("maxLength", "minLength", "pattern", "format")
_NUMBER_RULES = ("maximum", "minimum", "multipleOf")
_ARRAY_RULES = ("minItems", "maxItems", "uniqueItems", "x-kubernetes-list-type")
Checker = Callable[[Any], bool]
_CLEAN_CACHE: dict[int, tuple[Obj, Checker | None]] = {}


def _clean_checker(schema: Obj) -> Callable[[Any], bool] | None:
    """The compiled clean-check of ``schema`` (cached per schema object), or None."""
    hit = _CLEAN_CACHE.get(id(schema))
    if hit is not None and hit[0] is schema:
        return hit[1]
    if len(_CLEAN_CACHE) > 256:
        _CLEAN_CACHE.clear()
    checker = _compile_clean(schema)
    _CLEAN_CACHE[id(schema)] = (schema, checker)
    return checker


def _compile_clean(s: Any) -> Callable[[Any], bool] | None:
    if not isinstance(s, dict) or any(k not in _CHECKED_KEYS for k in s):
        return None
    int_or_string = s.get("x-kubernetes-int-or-string") is True
    if "anyOf" in s and not (int_or_string and s["anyOf"] == _INT_OR_STRING_ANY_OF):
        return None
    declared = s.get("type")
    types = ("integer", "string") if int_or_string else ((declared,) if isinstance(declared, str)
                                                         and declared else ())
    nullable = bool(s.get("nullable"))
    props: dict[str, Callable[[Any], bool]] = {}
    for name, sub in _props(s).items():
        prop_check = _compile_clean(sub)
        if prop_check is None:
            return None
        props[name] = prop_check
    nested: dict[str, Callable[[Any], bool]] = {}
    for nested_key in ("additionalProperties", "items"):
        if s.get(nested_key) is not None:
            nested_check = _compile_clean(s[nested_key])
            if nested_check is None:
                return None
            nested[nested_key] = nested_check
    add_check, items_check = nested.get("additionalProperties"), nested.get("items")
    required = [f for f in s.get("required") or () if isinstance(f, str)]
    enum = s.get("enum") if isinstance(s.get("enum"), list) and s.get("enum") else None
    string_rules = any(k in s for k in _STRING_RULES)
    number_rules = any(k in s for k in _NUMBER_RULES)
    array_rules = any(k in s for k in _ARRAY_RULES)

    only = types[0] if len(types) == 1 else None

    def check(v: Any) -> bool:
        if v is None:
            return nullable          # else: a type error, or dropped by defaulting
        if only is not None:
            if not _is_type(v, only):
                return False
        elif types and not any(_is_type(v, t) for t in types):
            return False
        if string_rules or number_rules:
            errs: Causes = []
            if isinstance(v, str):
                if string_rules:
                    _validate_string(v, s, "", errs)
            elif isinstance(v, (int, float)) and not isinstance(v, bool):
                if number_rules:
                    _validate_number(v, s, "", errs)
            if errs:
                return False
        if enum is not None and not any(_json_equal(v, e) for e in enum):
            return False
        if isinstance(v, list):
            if items_check is None:
                return not v         # items without a schema would be pruned
            for item in v:
                if not items_check(item):
                    return False
            if array_rules:
                array_errs: Causes = []
                _validate_array(v, s, "", array_errs)
                return not array_errs
        elif isinstance(v, dict):
            for f in required:
                if f not in v:
                    return False
            for k, x in v.items():
                c = props.get(k)
                if c is None:
                    c = add_check
                if c is None or not c(x):       # no schema: pruned
                    return False
        return True

    return check


def prepare_custom_status(obj: Obj, schema: Obj | None) -> list[Cause]:
    """``prepare_custom_object`` for a write to ``/status``: only ``status`` is new (the rest
    is the stored object, already pruned, defaulted and valid -- and Kubernetes' validation
    ratcheting accepts unchanged fields anyway), so only it is pruned, defaulted and checked,
    which keeps frequent status writes (the VPA recommender's) cheap."""
    if not isinstance(schema, dict) or not isinstance(obj, dict):
        return []
    sub = _props(schema).get("status")
    if not isinstance(sub, dict) or schema.get("x-kubernetes-preserve-unknown-fields") is True:
        return prepare_custom_object(obj, schema)
    if "status" in obj:
        check = _clean_checker(sub)
        if check is not None and check(obj["status"]):
            return []
    view = {"status": obj["status"]} if "status" in obj else {}
    reduced = {"type": "object", "properties": {"status": sub}}
    prune(view, reduced)
    apply_schema_defaults(view, reduced)
    if "status" in view:
        obj["status"] = view["status"]
    else:
        obj.pop("status", None)
    return validate_against_schema(view, reduced)


# ---- is a schema structural? ------------------------------------------------------------------

_ROOT, _ITEM, _FIELD = "root", "item", "field"
_EMPTY_TYPE = {_ROOT: "must not be empty at the root",
               _ITEM: "must not be empty for specified array items",
               _FIELD: "must not be empty for specified object fields"}
_UNSUPPORTED = (("id", "id"), ("additionalItems", "additionalItems"),
                ("patternProperties", "patternProperties"), ("definitions", "definitions"),
                ("dependencies", "dependencies"), ("$ref", "$ref"))
_INT_OR_STRING_ANY_OF = [{"type": "integer"}, {"type": "string"}]
_VALIDATION_REASONS = ["FieldValueDuplicate", "FieldValueForbidden", "FieldValueInvalid",
                       "FieldValueRequired"]


def validate_structural(schema: Obj, path: str) -> list[Cause]:
    """Causes that keep ``schema`` (a CRD version's ``openAPIV3Schema``, at field path
    ``path``) from being used: not structural, unsupported constructs, bad extensions,
    patterns that do not compile, defaults that are invalid or not pruned."""
    if not isinstance(schema, dict):
        return [_type_invalid(path, json_type(schema), f'{path} {_IN} must be of type object: '
                                                       f'"{json_type(schema)}"')]
    errs: Causes = []
    _check_schema(schema, path, errs, root=True, inside_meta=False, no_defaults=None)
    structural: Causes = []
    _check_structural(schema, path, _ROOT, structural)
    _check_complete(schema, schema, path, path, structural, top=True)
    errs.extend(structural)
    if not errs:
        _check_defaults(schema, path, errs, root=True)
    return errs


def _check_schema(s: Any, path: str, errs: Causes, *, root: bool, inside_meta: bool,
                  no_defaults: str | None) -> None:
    """apiextensions' per-node rules (``ValidateCustomResourceDefinitionOpenAPISchema``).
    ``no_defaults`` is None where defaults are allowed, else why they are not."""
    if not isinstance(s, dict):
        errs.append(_type_invalid(path, json_type(s), f'{path} {_IN} must be of type object: '
                                                      f'"{json_type(s)}"'))
        return
    t = s.get("type")
    if t is not None and t not in TYPES:
        errs.append(_not_supported(child(path, "type"), t, list(TYPES)))
    if t == "null":
        errs.append(errors.forbidden(child(path, "type"),
                                     "type cannot be set to null, use nullable as an alternative"))
    if "default" in s and no_defaults is not None:
        errs.append(errors.forbidden(child(path, "default"),
                                     "must not be set" + (f" {no_defaults}" if no_defaults else "")))
    for field, label in _UNSUPPORTED:
        if s.get(field) not in (None, "", {}, []):
            errs.append(errors.forbidden(child(path, field), f"{label} is not supported"))
    if isinstance(s.get("items"), list):
        errs.append(errors.forbidden(child(path, "items"),
                                     "items must be a schema object and not an array"))
    if inside_meta and s.get("x-kubernetes-embedded-resource") is True:
        errs.append(errors.forbidden(child(path, "x-kubernetes-embedded-resource"),
                                     "must not be used inside of resource meta"))
    if s.get("uniqueItems") is True:
        errs.append(errors.forbidden(child(path, "uniqueItems"), "uniqueItems cannot be set to true "
                                     "since the runtime complexity becomes quadratic"))

    props = s.get("properties")
    if props is not None and not isinstance(props, dict):
        errs.append(_type_invalid(child(path, "properties"), json_type(props),
                                  f'{child(path, "properties")} {_IN} must be of type object: '
                                  f'"{json_type(props)}"'))
        props = {}
    props = props or {}
    additional = s.get("additionalProperties")
    if additional is not None:
        if props and (additional is False or isinstance(additional, dict)):
            errs.append(errors.forbidden(child(path, "additionalProperties"),
                                         "additionalProperties and properties are mutual exclusive"))
        if isinstance(additional, dict):
            reason = no_defaults
            if inside_meta:
                reason = "inside additionalProperties applying to object metadata"
            _check_schema(additional, child(path, "additionalProperties"), errs, root=False,
                          inside_meta=inside_meta, no_defaults=reason)
        elif not isinstance(additional, bool):
            errs.append(_type_invalid(child(path, "additionalProperties"), json_type(additional),
                                      f'{child(path, "additionalProperties")} {_IN} must be of '
                                      f'type boolean or object: "{json_type(additional)}"'))
    embedded = s.get("x-kubernetes-embedded-resource") is True
    for k in sorted(props):
        sub_meta, reason = inside_meta, no_defaults
        if (root or embedded) and k in _META_FIELDS:
            sub_meta = True
            if root:
                reason = f"in top-level {k}"
        _check_schema(props[k], key(child(path, "properties"), k), errs, root=False,
                      inside_meta=sub_meta, no_defaults=reason)
    if isinstance(s.get("not"), dict):
        _check_schema(s["not"], child(path, "not"), errs, root=False, inside_meta=inside_meta,
                      no_defaults=no_defaults)
    for junctor in ("allOf", "oneOf", "anyOf"):
        for i, sub in enumerate(s.get(junctor) or []):
            _check_schema(sub, index(child(path, junctor), i), errs, root=False,
                          inside_meta=inside_meta, no_defaults=no_defaults)
    if isinstance(s.get("items"), dict):
        _check_schema(s["items"], child(path, "items"), errs, root=False, inside_meta=inside_meta,
                      no_defaults=no_defaults)

    preserve = s.get("x-kubernetes-preserve-unknown-fields")
    if preserve is not None and preserve is not True:
        errs.append(_invalid(child(path, "x-kubernetes-preserve-unknown-fields"), preserve,
                             "must be true or undefined"))
    _check_map_and_list_types(s, path, errs)
    _check_validation_rules(s, path, errs)


def _check_map_and_list_types(s: Obj, path: str, errs: Causes) -> None:
    t = s.get("type")
    map_type = s.get("x-kubernetes-map-type")
    if map_type is not None:
        if t != "object":
            if not t:
                errs.append(errors.required(child(path, "type"),
                                            "must be object if x-kubernetes-map-type is specified"))
            else:
                errs.append(_invalid(child(path, "type"), t,
                                     "must be object if x-kubernetes-map-type is specified"))
        if map_type not in ("atomic", "granular"):
            errs.append(_not_supported(child(path, "x-kubernetes-map-type"), map_type,
                                       ["atomic", "granular"]))
    list_type = s.get("x-kubernetes-list-type")
    items = _sub(s, "items")
    if list_type is not None and t != "array":
        if not t:
            errs.append(errors.required(child(path, "type"),
                                        "must be array if x-kubernetes-list-type is specified"))
        else:
            errs.append(_invalid(child(path, "type"), t,
                                 "must be array if x-kubernetes-list-type is specified"))
    elif list_type == "set" and items is not None:
        if items.get("type") == "array" and items.get("x-kubernetes-list-type") not in (None, "atomic"):
            errs.append(_invalid(child(child(path, "items"), "x-kubernetes-list-type"),
                                 items.get("x-kubernetes-list-type"),
                                 "must be atomic as item of a list with x-kubernetes-list-type=set"))
        if items.get("type") == "object" and items.get("x-kubernetes-map-type") != "atomic":
            errs.append(_invalid(child(child(path, "items"), "x-kubernetes-map-type"),
                                 items.get("x-kubernetes-map-type"),
                                 "must be atomic as item of a list with x-kubernetes-list-type=set"))
    if list_type is not None and list_type not in ("atomic", "set", "map"):
        errs.append(_not_supported(child(path, "x-kubernetes-list-type"), list_type,
                                   ["atomic", "set", "map"]))
    map_keys = s.get("x-kubernetes-list-map-keys") or []
    if map_keys:
        if list_type is None:
            errs.append(errors.required(child(path, "x-kubernetes-list-type"),
                                        "must be map if x-kubernetes-list-map-keys is non-empty"))
        elif list_type != "map":
            errs.append(_invalid(child(path, "x-kubernetes-list-type"), list_type,
                                 "must be map if x-kubernetes-list-map-keys is non-empty"))
    if list_type == "map":
        if not map_keys:
            errs.append(errors.required(child(path, "x-kubernetes-list-map-keys"),
                                        "must not be empty if x-kubernetes-list-type is map"))
        if "items" not in s:
            errs.append(errors.required(child(path, "items"),
                                        "must have a schema if x-kubernetes-list-type is map"))
        elif items is not None and items.get("type") != "object":
            errs.append(_invalid(child(child(path, "items"), "type"), items.get("type", ""),
                                 "must be object if parent array's x-kubernetes-list-type is map"))
        elif items is not None:
            item_props = _props(items)
            seen: set[str] = set()
            for k in map_keys:
                if k in item_props:
                    if isinstance(item_props[k], dict) and item_props[k].get("type") in ("array",
                                                                                         "object"):
                        errs.append(_invalid(child(key(child(child(path, "items"), "properties"), k),
                                                   "type"), items.get("type"),
                                             "must be a scalar type if parent array's "
                                             "x-kubernetes-list-type is map"))
                else:
                    errs.append(_invalid(child(path, "x-kubernetes-list-map-keys"), map_keys,
                                         "entries must all be names of item properties"))
                if k in seen:
                    errs.append(_invalid(child(path, "x-kubernetes-list-map-keys"), map_keys,
                                         "must not contain duplicate entries"))
                seen.add(k)
    if list_type in ("set", "map") and items is not None:
        if items.get("nullable") is True:
            errs.append(errors.forbidden(child(child(path, "items"), "nullable"),
                                         f"cannot be nullable when x-kubernetes-list-type is "
                                         f"{list_type}"))
        if list_type == "map":
            required = set(items.get("required") or [])
            item_props = _props(items)
            for k in map_keys:
                prop = item_props.get(k)
                if not isinstance(prop, dict):
                    continue
                prop_path = key(child(child(path, "items"), "properties"), k)
                if k not in required and "default" not in prop:
                    errs.append(errors.required(child(prop_path, "default"),
                                                "this property is in x-kubernetes-list-map-keys, so "
                                                "it must have a default or be a required property"))
                if prop.get("nullable") is True:
                    errs.append(errors.forbidden(child(prop_path, "nullable"),
                                                 "this property is in x-kubernetes-list-map-keys, so "
                                                 "it cannot be nullable"))


def _check_validation_rules(s: Obj, path: str, errs: Causes) -> None:
    """The shape of ``x-kubernetes-validations`` (kvert does not evaluate CEL)."""
    rules = s.get("x-kubernetes-validations")
    if rules is None:
        return
    base = child(path, "x-kubernetes-validations")
    if not isinstance(rules, list):
        errs.append(_type_invalid(base, json_type(rules), f'{base} {_IN} must be of type array: '
                                                          f'"{json_type(rules)}"'))
        return
    for i, rule in enumerate(rules):
        p = index(base, i)
        if not isinstance(rule, dict):
            errs.append(_type_invalid(p, json_type(rule), f'{p} {_IN} must be of type object: '
                                                          f'"{json_type(rule)}"'))
            continue
        text, message = rule.get("rule"), rule.get("message")
        if not isinstance(text, str):
            text = ""
        if not isinstance(message, str):
            message = ""
        if not text.strip():
            errs.append(errors.required(child(p, "rule"), "rule is not specified"))
        elif message and not message.strip():
            errs.append(_invalid(child(p, "message"), message, "must be non-empty if specified"))
        elif re.search(r"[\n\r]", message.strip()):
            errs.append(_invalid(child(p, "message"), message, "must not contain line breaks"))
        elif re.search(r"[\n\r]", text.strip()) and not message.strip():
            errs.append(errors.required(child(p, "message"),
                                        "message must be specified if rule contains line breaks"))
        expression = rule.get("messageExpression")
        if isinstance(expression, str) and expression and not expression.strip():
            errs.append(errors.required(child(p, "messageExpression"),
                                        "messageExpression must be non-empty if specified"))
        reason = rule.get("reason")
        if reason is not None and reason not in _VALIDATION_REASONS:
            errs.append(_not_supported(child(p, "reason"), reason, _VALIDATION_REASONS))
        field_path = rule.get("fieldPath")
        if isinstance(field_path, str) and field_path:
            if not field_path.strip():
                errs.append(_invalid(child(p, "fieldPath"), field_path, "must be non-empty if specified"))
            if re.search(r"[\n\r]", field_path):
                errs.append(_invalid(child(p, "fieldPath"), field_path, "must not contain line breaks"))


def _is_int_or_string_any_of(any_of: Any) -> bool:
    return isinstance(any_of, list) and any_of == _INT_OR_STRING_ANY_OF


def _check_structural(s: Any, path: str, level: str, errs: Causes) -> None:
    """``ValidateStructural``'s invariants for the structural part of a schema."""
    if not isinstance(s, dict):
        return
    t = s.get("type")
    if t == "array" and "items" not in s:
        errs.append(errors.required(child(path, "items"), "must be specified"))
    if isinstance(s.get("items"), dict):
        _check_structural(s["items"], child(path, "items"), _ITEM, errs)
    props = _props(s)
    for k in sorted(props):
        _check_structural(props[k], key(child(path, "properties"), k), _FIELD, errs)
    additional = s.get("additionalProperties")
    if additional is not None:
        if level == _ROOT:
            errs.append(errors.forbidden(child(path, "additionalProperties"),
                                         "must not be used at the root"))
        if isinstance(additional, dict):
            _check_structural(additional, child(path, "additionalProperties"), _FIELD, errs)

    int_or_string = s.get("x-kubernetes-int-or-string") is True
    preserve = s.get("x-kubernetes-preserve-unknown-fields") is True
    embedded = s.get("x-kubernetes-embedded-resource") is True
    if int_or_string and preserve:
        errs.append(_invalid(child(path, "x-kubernetes-preserve-unknown-fields"), True,
                             "must be false if x-kubernetes-int-or-string is true"))
    if int_or_string and embedded:
        errs.append(_invalid(child(path, "x-kubernetes-embedded-resource"), True,
                             "must be false if x-kubernetes-int-or-string is true"))

    skip_any_of = _is_int_or_string_any_of(s.get("anyOf"))
    all_of = list_field(s, "allOf")
    skip_first_all_of = bool(all_of) and isinstance(all_of[0], dict) \
        and _is_int_or_string_any_of(all_of[0].get("anyOf"))
    _check_value_validation(s, path, level, errs, skip_any_of, skip_first_all_of)

    if embedded and t != "object":
        if not t:
            errs.append(errors.required(child(path, "type"),
                                        "must be object if x-kubernetes-embedded-resource is true"))
        else:
            errs.append(_invalid(child(path, "type"), t,
                                 "must be object if x-kubernetes-embedded-resource is true"))
    elif not t and not int_or_string and not preserve:
        errs.append(errors.required(child(path, "type"), _EMPTY_TYPE[level]))
    if embedded and additional is not None:
        errs.append(errors.forbidden(child(path, "additionalProperties"),
                                     "must not be used if x-kubernetes-embedded-resource is set"))
    if level == _ROOT and t and t != "object":
        errs.append(_invalid(child(path, "type"), t, "must be object at the root"))

    check_meta = level == _ROOT or embedded
    for field in ("kind", "apiVersion"):
        sub = props.get(field)
        if check_meta and isinstance(sub, dict) and sub.get("type") != "string":
            errs.append(_invalid(child(key(child(path, "properties"), field), "type"),
                                 sub.get("type", ""), "must be string"))
    metadata = props.get("metadata")
    if isinstance(metadata, dict):
        meta_path = key(child(path, "properties"), "metadata")
        if check_meta and metadata.get("type") != "object":
            errs.append(_invalid(child(meta_path, "type"), metadata.get("type", ""), "must be object"))
        if level == _ROOT:
            meta_props = set(_props(metadata))
            only_names = meta_props in ({"name"}, {"generateName"}, {"name", "generateName"})
            rest = {k for k in metadata if k not in ("type", "default")}
            if only_names or not meta_props:
                rest.discard("properties")
            if rest:
                errs.append(errors.forbidden(meta_path, "must not specify anything other than name "
                                             "and generateName, but metadata is implicitly "
                                             "specified"))
    if embedded and not preserve and not props:
        errs.append(errors.required(child(path, "properties"),
                                    "must not be empty if x-kubernetes-embedded-resource is true "
                                    "without x-kubernetes-preserve-unknown-fields"))


def _check_value_validation(s: Obj, path: str, level: str, errs: Causes, skip_any_of: bool,
                            skip_first_all_of_any_of: bool) -> None:
    if not skip_any_of:
        for i, sub in enumerate(s.get("anyOf") or []):
            _check_nested(sub, index(child(path, "anyOf"), i), level, errs, False)
    for i, sub in enumerate(s.get("allOf") or []):
        _check_nested(sub, index(child(path, "allOf"), i), level, errs,
                      skip_first_all_of_any_of and i == 0)
    for i, sub in enumerate(s.get("oneOf") or []):
        _check_nested(sub, index(child(path, "oneOf"), i), level, errs, False)
    if isinstance(s.get("not"), dict):
        _check_nested(s["not"], child(path, "not"), level, errs, False)
    pattern = s.get("pattern")
    if isinstance(pattern, str) and pattern:
        try:
            compile_pattern(pattern)
        except re.error as e:
            errs.append(_invalid(child(path, "pattern"), pattern,
                                 f"must be a valid regular expression, but isn't: {e}"))


_NESTED_FORBIDDEN: tuple[tuple[str, Callable[[Any], bool], str], ...] = (
    ("type", lambda v: bool(v), "must be empty to be structural"),
    ("default", lambda v: True, "must be undefined to be structural"),
    ("title", lambda v: bool(v), "must be empty to be structural"),
    ("description", lambda v: bool(v), "must be empty to be structural"),
    ("nullable", lambda v: v is True, "must be false to be structural"),
    ("externalDocs", lambda v: v is not None, "must be undefined to be structural"),
    ("x-kubernetes-preserve-unknown-fields", lambda v: v is True, "must be false to be structural"),
    ("x-kubernetes-embedded-resource", lambda v: v is True, "must be false to be structural"),
    ("x-kubernetes-int-or-string", lambda v: v is True, "must be false to be structural"),
    ("x-kubernetes-list-map-keys", lambda v: bool(v), "must be empty to be structural"),
    ("x-kubernetes-list-type", lambda v: v is not None, "must be undefined to be structural"),
    ("x-kubernetes-map-type", lambda v: v is not None, "must be undefined to be structural"),
    ("x-kubernetes-validations", lambda v: bool(v), "must be empty to be structural"),
)


def _check_nested(v: Any, path: str, level: str, errs: Causes, skip_any_of: bool) -> None:
    """A schema inside allOf/anyOf/oneOf/not: value validations only."""
    if not isinstance(v, dict):
        errs.append(_type_invalid(path, json_type(v), f'{path} {_IN} must be of type object: '
                                                      f'"{json_type(v)}"'))
        return
    _check_value_validation(v, path, level, errs, skip_any_of, False)
    if isinstance(v.get("items"), dict):
        _check_nested(v["items"], child(path, "items"), level, errs, False)
    props = _props(v)
    for k in sorted(props):
        _check_nested(props[k], key(child(path, "properties"), k), _FIELD, errs, False)
    for field, present, message in _NESTED_FORBIDDEN:
        if field in v and present(v[field]):
            errs.append(errors.forbidden(child(path, field), message))
    if "additionalProperties" in v:
        errs.append(errors.forbidden(child(path, "additionalProperties"),
                                     "must be undefined to be structural"))
    if "metadata" in props:
        errs.append(errors.forbidden(key(child(path, "properties"), "metadata"),
                                     "must not be specified in a nested context"))


def _check_complete(v: Any, s: Any, s_path: str, v_path: str, errs: Causes, *,
                    top: bool = False) -> None:
    """Every field or array a value validation mentions is specified structurally too."""
    if not isinstance(v, dict):
        return
    if not isinstance(s, dict):
        errs.append(errors.required(s_path, f"because it is defined in {v_path}"))
        return
    if not top:
        s_items = s.get("items")
        if isinstance(v.get("items"), dict):
            _check_complete(v["items"], s_items, child(s_path, "items"), child(v_path, "items"), errs)
        s_props = _props(s)
        for k in sorted(_props(v)):
            sp, vp = key(child(s_path, "properties"), k), key(child(v_path, "properties"), k)
            if k not in s_props:
                errs.append(errors.required(sp, f"because it is defined in {vp}"))
            else:
                _check_complete(_props(v)[k], s_props[k], sp, vp, errs)
    for junctor in ("allOf", "anyOf", "oneOf"):
        for i, sub in enumerate(v.get(junctor) or []):
            _check_complete(sub, s, s_path, index(child(v_path, junctor), i), errs)
    if isinstance(v.get("not"), dict):
        _check_complete(v["not"], s, s_path, child(v_path, "not"), errs)
    if top:
        # the structural part itself: recurse to reach value validations further down
        if isinstance(s.get("items"), dict):
            _check_complete(s["items"], s["items"], child(s_path, "items"),
                            child(v_path, "items"), errs, top=True)
        for k, sub in sorted(_props(s).items()):
            p = key(child(s_path, "properties"), k)
            _check_complete(sub, sub, p, p, errs, top=True)
        if isinstance(s.get("additionalProperties"), dict):
            p = child(s_path, "additionalProperties")
            _check_complete(s["additionalProperties"], s["additionalProperties"], p, p, errs,
                            top=True)


def _check_defaults(s: Obj, path: str, errs: Causes, *, root: bool = False,
                    in_meta: bool = False) -> None:
    """Defaults must validate against their schema and must not carry pruned fields."""
    if not isinstance(s, dict):
        return
    if "default" in s and not root and not in_meta:
        value = s["default"]
        if value is not None or not s.get("nullable"):
            defaulted = deep_copy(value)
            if isinstance(defaulted, (dict, list)):
                apply_schema_defaults(defaulted, s)
            errs.extend(validate_against_schema(defaulted, s, child(path, "default")))
            if isinstance(value, (dict, list)):
                pruned = deep_copy(value)
                _prune(pruned, s, "", [], resource_root=s.get("x-kubernetes-embedded-resource")
                       is True)
                if pruned != value:
                    errs.append(_invalid(child(path, "default"), value,
                                         "must not have unknown fields"))
    for k, sub in sorted(_props(s).items()):
        _check_defaults(sub, key(child(path, "properties"), k), errs,
                        in_meta=in_meta or (root and k == "metadata"))
    if isinstance(s.get("items"), dict):
        _check_defaults(s["items"], child(path, "items"), errs, in_meta=in_meta)
    if isinstance(s.get("additionalProperties"), dict):
        _check_defaults(s["additionalProperties"], child(path, "additionalProperties"), errs,
                        in_meta=in_meta)


__all__ = ["validate_against_schema", "prune", "apply_schema_defaults", "prepare_custom_object",
           "prepare_custom_status",
           "validate_structural", "format_ok", "json_type", "compile_pattern", "TYPES"]
