"""Request bodies of built-in kinds decoded as kube-apiserver decodes them: into Go structs.

A JSON value of the wrong type for its field is refused with 400 and Go's message, a
quantity that does not parse with apimachinery's, and fields the kind does not declare
are dropped (``fieldValidation`` decides whether that is also said: Warn, the default,
with a ``Warning`` header each, Strict with 400 ``strict decoding error: unknown field
"spec.bogus"``; Ignore says nothing). ``null`` leaves a field unset and is the zero value
in a list or map, so nothing downstream ever meets a value of the wrong shape::

    Pod in version "v1" cannot be handled as a Pod: json: cannot unmarshal string into
    Go struct field PodSpec.spec.containers of type []v1.Container

The types come from the OpenAPI definitions (``kvert.apiserver.openapi.schemas``); a kind
without one (custom resources: their CRD schema prunes and validates them) passes
unchanged. Go's named types (``v1.ResourceList``, ``v1.Protocol``) are shown by their
underlying type (``map[string]resource.Quantity``, ``string``).
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from kvert.api import kinds
from kvert.api.errors import BadRequest, Cause, Invalid
from kvert.api.gostrings import json_kind, quote
from kvert.api.kinds import ResourceType
from kvert.api.quantity import QuantityError, parse_quantity
from kvert.apiserver.openapi import schemas as S
from kvert.apiserver.openapi import unknown_fields
from kvert.apiserver.openapi.builder import kind_schema_name

DELETE_OPTIONS = "io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions"
# the types of subresource request bodies: (definition, kind, version)
SUBRESOURCE_BODIES = {
    "binding": ("io.k8s.api.core.v1.Binding", "Binding", "v1"),
    "eviction": ("io.k8s.api.policy.v1.Eviction", "Eviction", "v1"),
    "scale": ("io.k8s.api.autoscaling.v1.Scale", "Scale", "v1"),
}
_INT_RANGES = {"int32": (-(2**31), 2**31 - 1), "int64": (-(2**63), 2**63 - 1)}
# Go's RFC 3339 layouts (metav1.Time, metav1.MicroTime)
_RFC3339 = "2006-01-02T15:04:05Z07:00"
_RFC3339_MICRO = "2006-01-02T15:04:05.000000Z07:00"
_TIME = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?(Z|[+-][0-9]{2}:[0-9]{2})")
_GO_SCALARS = {"str": "string", "int32": "int32", "int64": "int64", "bool": "bool",
               "double": "float64", "bytes": "[]uint8", "qty": "resource.Quantity",
               "ios": "intstr.IntOrString", "time": "v1.Time", "microtime": "v1.MicroTime",
               "any": "interface {}", "obj": "map[string]interface {}"}


class DecodeError(BadRequest):
    """A body that does not decode into its kind; ``problem`` is Go's error text."""

    def __init__(self, kind: str, version: str, problem: str):
        super().__init__(f'{kind} in version "{version}" cannot be handled as a {kind}: {problem}')
        self.problem = problem


@dataclass
class Decoded:
    """The decoded object and the paths of the fields it dropped."""
    object: dict
    unknown: list[str] = field(default_factory=list)


def definition_of(rt: ResourceType) -> S.Definition | None:
    """The OpenAPI definition a built-in kind decodes into (None for custom resources)."""
    if isinstance(rt.schema, dict):
        return None
    return S.DEFINITIONS.get(kind_schema_name(rt))


def decode(rt: ResourceType, obj: dict) -> Decoded:
    """``obj`` (a request body of kind ``rt``) as Go would decode it; raises
    :class:`DecodeError`."""
    definition = definition_of(rt)
    if definition is None:
        return Decoded(obj)
    return decode_as(definition, obj, rt.kind, rt.version)


def decode_as(definition: S.Definition, obj: dict, kind: str, version: str) -> Decoded:
    """``obj`` decoded into ``definition`` (a body of ``kind`` in ``version``)."""
    walk = _Walk()
    try:
        out = walk.struct(definition, obj, _Where(kind, (), ""))
    except _Abort as e:
        raise DecodeError(kind, version, str(e)) from None
    if walk.problem is not None:
        raise DecodeError(kind, version, walk.problem)
    return Decoded(out, walk.unknown)


def decode_delete_options(body: dict) -> dict:
    """A DELETE body, decoded into ``DeleteOptions``."""
    return decode_as(S.DEFINITIONS[DELETE_OPTIONS], body, "DeleteOptions", "v1").object


def decode_request(rt: ResourceType, body: Any, duplicates: tuple[str, ...],
                   validation: str) -> tuple[Any, list[str]]:
    """A create/update/apply body with ``fieldValidation`` applied: the object to write
    and the warnings to answer with. Bodies of another kind pass unchanged (the registry
    refuses them); custom resources keep their unknown fields (their schema prunes them)."""
    if not isinstance(body, dict):
        return body, []
    if (body.get("apiVersion", rt.api_version), body.get("kind", rt.kind)) != \
            (rt.api_version, rt.kind):
        return body, []
    if definition_of(rt) is None:
        decoded = Decoded(body, _undeclared(rt, body))
    else:
        decoded = decode(rt, body)
    return decoded.object, strict_problems(rt.kind, rt.version, decoded.unknown, duplicates,
                                           validation)


def decode_subresource(subresource: str, body: Any, duplicates: tuple[str, ...],
                       validation: str) -> tuple[Any, list[str]]:
    """A ``binding``, ``eviction`` or ``scale`` body as its own type, like
    :func:`decode_request`."""
    definition, kind, version = SUBRESOURCE_BODIES[subresource]
    if not isinstance(body, dict):
        return body, []
    decoded = decode_as(S.DEFINITIONS[definition], body, kind, version)
    return decoded.object, strict_problems(kind, version, decoded.unknown, duplicates, validation)


def patch_problems(rt: ResourceType, patch: Any, duplicates: tuple[str, ...],
                   validation: str) -> list[str]:
    """The warnings for a merge or strategic patch (Strict refuses it): the fields it sets
    that the kind does not declare. Types are checked on the patched object."""
    unknown = _undeclared(rt, patch) if isinstance(patch, dict) and \
        patch.get("kind", rt.kind) == rt.kind else []
    return strict_problems(rt.kind, rt.version, unknown, duplicates, validation)


def _undeclared(rt: ResourceType, body: dict) -> list[str]:
    typed = {k: v for k, v in body.items() if not k.startswith("$")}
    typed.setdefault("apiVersion", rt.api_version)
    typed.setdefault("kind", rt.kind)
    return [p for p in unknown_fields(kinds.all_types(), typed) if "$" not in p]


def strict_problems(kind: str, version: str, unknown: list[str], duplicates: tuple[str, ...],
                    validation: str) -> list[str]:
    """What Strict refuses (400) and Warn says in ``Warning`` headers."""
    problems = [f"unknown field {quote(p)}" for p in unknown] + \
               [f"duplicate field {quote(p)}" for p in duplicates]
    if not problems or validation == "Ignore":
        return []
    if validation == "Strict":
        raise DecodeError(kind, version, "strict decoding error: " + ", ".join(problems))
    return problems


def patched_decoder(rt: ResourceType, subresource: str = "") -> Callable[[Any], dict]:
    """Decodes the result of a JSON, merge or strategic patch (of the object, or of its
    ``scale``): a patch that makes it undecodable is 422 on the field "patch"
    (``applyPatchToCurrentObject``)."""
    def decode_patched(obj: Any) -> dict:
        try:
            if not isinstance(obj, dict):
                raise DecodeError(rt.kind, rt.version, "json: cannot unmarshal "
                                  f"{json_kind(obj)} into Go value of type map[string]interface {{}}")
            if subresource:
                definition, kind, version = SUBRESOURCE_BODIES[subresource]
                return decode_as(S.DEFINITIONS[definition], obj, kind, version).object
            return decode(rt, obj).object
        except DecodeError as e:
            text = json.dumps(obj, separators=(",", ":"))
            raise Invalid("", "", [Cause("patch", f"Invalid value: {quote(text)}: {e.problem}")]) from None
    return decode_patched


@dataclass(frozen=True)
class _Where:
    struct: str              # the Go struct the field belongs to ("PodSpec")
    fields: tuple[str, ...]  # Go's field stack: JSON names, no indices or map keys
    path: str                # the path strict decoding reports ("spec.containers[0].foo")

    def field(self, struct: str, name: str) -> _Where:
        return _Where(struct, self.fields + (name,), f"{self.path}.{name}" if self.path else name)

    def item(self, suffix: str) -> _Where:
        return _Where(self.struct, self.fields, self.path + suffix)


class _Abort(Exception):
    """An error from a type's own unmarshaller: Go stops decoding at once."""


class _Walk:
    def __init__(self) -> None:
        self.unknown: list[str] = []
        self.problem: str | None = None   # the first type error (Go keeps it and goes on)

    def struct(self, d: S.Definition, value: dict, where: _Where) -> dict:
        fields = {f.name: f for f in d.fields}
        struct = d.name.rsplit(".", 1)[1]
        out: dict = {}
        for key, item in value.items():
            if d.kind and key in ("apiVersion", "kind"):
                f_type: Any = ("scalar", "str")
            elif d.kind and key == "metadata":
                f_type = ("ref", S.OBJECT_META)
            elif key in fields:
                f_type = fields[key].type
            else:
                if d.preserve:
                    out[key] = item
                else:
                    self.unknown.append(where.field(struct, key).path)
                continue
            if item is None:
                continue   # a field set to null keeps its zero value: unset
            out[key] = self.value(f_type, item, where.field(struct, key))
        return out

    def value(self, t: Any, value: Any, where: _Where) -> Any:
        tag = t[0]
        if tag == "scalar":
            return self.scalar(t[1], value, where)
        if tag == "enum":
            return self.expect(isinstance(value, str), value, "string", where)
        if tag == "list":
            if not isinstance(value, list):
                return self.mismatch(value, go_type(t), where)
            return [self.element(t[1], item, where.item(f"[{i}]")) for i, item in enumerate(value)]
        if tag == "map":
            if not isinstance(value, dict):
                return self.mismatch(value, go_type(t), where)
            return {key: self.element(t[1], item, where.item(f".{key}"))
                    for key, item in value.items()}
        d = S.DEFINITIONS.get(t[1])
        if d is None:
            return value
        if not isinstance(value, dict):
            return self.mismatch(value, go_type(t), where)
        return self.struct(d, value, where)

    def element(self, t: Any, value: Any, where: _Where) -> Any:
        return zero(t) if value is None else self.value(t, value, where)

    def scalar(self, name: str, value: Any, where: _Where) -> Any:
        if name in ("any", "obj"):
            return value
        if name == "str":
            return self.expect(isinstance(value, str), value, "string", where)
        if name == "bool":
            return self.expect(isinstance(value, bool), value, "bool", where)
        if name in _INT_RANGES:
            return self.integer(value, name, where)
        if name == "double":
            number = isinstance(value, (int, float)) and not isinstance(value, bool)
            return self.expect(number, value, "float64", where)
        if name == "ios":
            return value if isinstance(value, str) else self.integer(value, "int32", where)
        if name == "qty":
            return _quantity(value)
        if name in ("time", "microtime"):
            if not isinstance(value, str):
                return self.mismatch(value, "string", where)
            _time(value, _RFC3339 if name == "time" else _RFC3339_MICRO)
            return value
        if not isinstance(value, str):   # bytes
            return self.mismatch(value, "[]uint8", where)
        _base64(value)
        return value

    def integer(self, value: Any, go: str, where: _Where) -> Any:
        low, high = _INT_RANGES[go]
        if isinstance(value, int) and not isinstance(value, bool) and low <= value <= high:
            return value
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return self.mismatch(value, go, where, f"number {_number(value)}")
        return self.mismatch(value, go, where)

    def expect(self, ok: bool, value: Any, go: str, where: _Where) -> Any:
        return value if ok else self.mismatch(value, go, where)

    def mismatch(self, value: Any, go: str, where: _Where, shown: str = "") -> Any:
        if self.problem is None:
            self.problem = (f"json: cannot unmarshal {shown or json_kind(value)} into Go struct "
                            f"field {where.struct}.{'.'.join(where.fields)} of type {go}")
        return value


def _number(value: int | float) -> str:
    return str(value) if isinstance(value, int) else json.dumps(value)


def go_type(t: Any) -> str:
    """The Go type a parsed schema type decodes into, as ``reflect.Type.String()`` shows it."""
    tag = t[0]
    if tag == "scalar":
        return _GO_SCALARS[t[1]]
    if tag == "enum":
        return "string"
    if tag == "list":
        return "[]" + go_type(t[1])
    if tag == "map":
        return "map[string]" + go_type(t[1])
    version, name = t[1].rsplit(".", 2)[-2:]
    return f"{version}.{name}"


def zero(t: Any) -> Any:
    """What Go re-encodes a null list or map element as: the type's zero value."""
    tag = t[0]
    if tag == "enum":
        return ""
    if tag == "ref":
        return {}
    if tag == "scalar":
        return {"str": "", "int32": 0, "int64": 0, "bool": False, "double": 0, "bytes": "",
                "qty": "0", "ios": 0}.get(t[1])
    return None


def _quantity(value: Any) -> Any:
    # resource.Quantity.UnmarshalJSON parses the raw JSON text, quotes stripped.
    text = value.strip() if isinstance(value, str) else json.dumps(value, separators=(",", ":"))
    try:
        parse_quantity(text)
    except QuantityError as e:
        raise _Abort(e.reason) from None
    return value


def _time(text: str, layout: str) -> None:
    if not _TIME.fullmatch(text):
        # time.Parse's error for a value that does not even start like the layout
        raise _Abort(f'parsing time {quote(text)} as "{layout}": cannot parse '
                     f'{quote(text)} as "2006"')


def _base64(text: str) -> None:
    # encoding/base64.StdEncoding (Go skips \r and \n)
    data = text.replace("\r", "").replace("\n", "")
    try:
        base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        bad = next((i for i, c in enumerate(data)
                    if c not in "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/="),
                   len(data.rstrip("=")))
        raise _Abort(f"illegal base64 data at input byte {bad}") from None
