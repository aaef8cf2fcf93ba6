"""Fields of an object that its schema does not declare: what ``fieldValidation`` is about.

kubectl leaves field validation to the server whenever the OpenAPI v3 document lists the
``fieldValidation`` query parameter (it always does for kvert). The server then drops unknown
fields (Ignore), drops them with one ``Warning`` header each (Warn, the default) or rejects
the request (Strict) with 400 BadRequest and a message such as::

    Deployment in version "v1" cannot be handled as a Deployment: strict decoding error:
    unknown field "spec.bogus", unknown field "spec.template.spec.containers[0].foo"

``unknown_fields`` returns those paths for built-in kinds (from ``schemas``) and custom
resources (from their CRD schema, the fields pruning would drop). Parts of schemas marked
``x-kubernetes-preserve-unknown-fields`` accept anything.
"""

from __future__ import annotations

from typing import Any

from . import schemas as S
from .builder import expand_types, kind_schema_name

# Request bodies of subresources and deletions, which are not served resources themselves.
_BODIES = {
    ("policy/v1", "Eviction"): "io.k8s.api.policy.v1.Eviction",
    ("v1", "Binding"): "io.k8s.api.core.v1.Binding",
    ("autoscaling/v1", "Scale"): "io.k8s.api.autoscaling.v1.Scale",
    ("v1", "DeleteOptions"): "io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions",
    ("meta.k8s.io/v1", "DeleteOptions"): "io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions",
}


def unknown_fields(types, obj: Any) -> list[str]:
    """Paths ("spec.template.spec.containers[0].foo") of the fields of ``obj`` its kind's
    schema does not declare, in document order. Also checks Eviction, Binding, Scale and
    DeleteOptions bodies. [] for kinds it has no schema for."""
    if not isinstance(obj, dict):
        return []
    api_version, kind = obj.get("apiVersion") or "", obj.get("kind") or ""
    rt = next((t for t in expand_types(types)
               if t.api_version == api_version and t.kind == kind), None)
    if rt is None:
        body = _BODIES.get((api_version, kind))
        out: list[str] = []
        if body is not None:
            _walk_def(body, {k: v for k, v in obj.items() if k not in ("apiVersion", "kind")},
                      "", out)
        return out
    out = []
    if isinstance(rt.schema, dict):
        for key, value in obj.items():
            if key in ("apiVersion", "kind"):
                continue
            if key == "metadata":
                _walk_def(S.OBJECT_META, value, "metadata", out)
                continue
            child = (rt.schema.get("properties") or {}).get(key)
            if child is None:
                if not rt.schema.get("x-kubernetes-preserve-unknown-fields"):
                    out.append(key)
                continue
            _walk_schema(child, value, key, out)
        return out
    name = kind_schema_name(rt)
    if name not in S.DEFINITIONS:
        return []
    _walk_def(name, obj, "", out)
    return out


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _walk_def(name: str, value: Any, path: str, out: list[str]) -> None:
    d = S.DEFINITIONS.get(name)
    if d is None or not isinstance(value, dict) or d.preserve:
        return
    fields = {f.name: f for f in d.fields}
    for key, item in value.items():
        if d.kind and key in ("apiVersion", "kind"):
            continue
        if d.kind and key == "metadata":
            _walk_def(S.OBJECT_META, item, _join(path, key), out)
            continue
        f = fields.get(key)
        if f is None:
            out.append(_join(path, key))
            continue
        _walk_type(f.type, item, _join(path, key), out)


def _walk_type(t, value: Any, path: str, out: list[str]) -> None:
    tag = t[0]
    if tag == "ref":
        _walk_def(t[1], value, path, out)
    elif tag == "list" and isinstance(value, list):
        for i, item in enumerate(value):
            _walk_type(t[1], item, f"{path}[{i}]", out)
    elif tag == "map" and isinstance(value, dict):
        for key, item in value.items():
            _walk_type(t[1], item, f"{path}.{key}", out)


def _walk_schema(schema: Any, value: Any, path: str, out: list[str]) -> None:
    if not isinstance(schema, dict) or schema.get("x-kubernetes-preserve-unknown-fields"):
        return
    if isinstance(value, list):
        items = schema.get("items")
        if isinstance(items, dict):
            for i, item in enumerate(value):
                _walk_schema(items, item, f"{path}[{i}]", out)
        return
    if not isinstance(value, dict):
        return
    props = schema.get("properties") or {}
    extra = schema.get("additionalProperties")
    embedded = schema.get("x-kubernetes-embedded-resource")
    for key, item in value.items():
        if key in props:
            _walk_schema(props[key], item, _join(path, key), out)
        elif embedded and key in ("apiVersion", "kind"):
            continue
        elif embedded and key == "metadata":
            _walk_def(S.OBJECT_META, item, _join(path, key), out)
        elif isinstance(extra, dict):
            _walk_schema(extra, item, _join(path, key), out)
        elif extra is True:
            continue
        else:
            out.append(_join(path, key))
