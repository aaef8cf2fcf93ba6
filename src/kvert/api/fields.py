"""Field selectors (``?fieldSelector=``, ``kubectl --field-selector``), as apimachinery's
``pkg/fields`` and the API server's per-kind field label conversions define them.

Grammar: comma-separated terms ``FIELD=VALUE``, ``FIELD==VALUE`` (same as ``=``) or
``FIELD!=VALUE``, ANDed. In values, ``\\``, ``,`` and ``=`` must be backslash-escaped
(``\\\\``, ``\\,``, ``\\=``); any other escape, a trailing ``\\`` or an unescaped ``,``/``=`` in
a value is an error. The field name is taken verbatim up to the first operator (no trimming of
whitespace, no unescaping) -- exactly as Kubernetes splits a term.

Matching reads the field from the object as the API server's ``ToSelectableFields`` renders it:
strings as-is, booleans ``"true"``/``"false"``, numbers in decimal, and a missing field as
``""`` -- so ``spec.nodeName=`` selects unscheduled pods and ``spec.nodeName!=`` scheduled ones.
A few fields are not plain JSON paths; :func:`field_value` knows them (``status.podIP`` is the
first of ``status.podIPs``, ``spec.hostNetwork``/``spec.unschedulable`` default to ``"false"``,
an Event's ``source`` is ``source.component``, and ``status.podIPs`` is always ``""`` because
Kubernetes accepts the label but never fills it in).

When a resource key is given (``"pods"``, ``"apps/deployments"``), fields the real API server
would refuse raise ``SelectorError('field label not supported: X')``. The lists are those of
Kubernetes' field label conversion functions (``pkg/apis/core/v1/conversion.go`` and friends);
note that Kubernetes does *not* accept ``metadata.namespace`` for the cluster-scoped Node and
Namespace kinds, and does not (yet) accept ``status.replicas`` for ``apps/v1`` ReplicaSets,
whatever the documentation page says. Every other resource gets ``metadata.name`` and
``metadata.namespace``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from functools import lru_cache
from typing import Any, NamedTuple

from kvert.api.selectors import SelectorError
from kvert.api.types import is_mapping

__all__ = [
    "FieldRequirement",
    "FieldSelector",
    "parse_field_selector",
    "supported_fields",
    "field_value",
    "escape_value",
    "unescape_value",
]

_META = frozenset({"metadata.name", "metadata.namespace"})

# Per resource key: the labels the API server's conversion function lets through.
_SUPPORTED: dict[str, frozenset[str]] = {
    "pods": _META | {
        "spec.nodeName", "spec.restartPolicy", "spec.schedulerName", "spec.serviceAccountName",
        "spec.hostNetwork", "status.phase", "status.podIP", "status.podIPs",
        "status.nominatedNodeName",
    },
    "nodes": frozenset({"metadata.name", "spec.unschedulable"}),
    "namespaces": frozenset({"metadata.name", "status.phase"}),
    "events": _META | {
        "involvedObject.kind", "involvedObject.namespace", "involvedObject.name",
        "involvedObject.uid", "involvedObject.apiVersion", "involvedObject.resourceVersion",
        "involvedObject.fieldPath", "reason", "reportingComponent", "source", "type",
    },
    "secrets": _META | {"type"},
    "services": _META | {"spec.clusterIP", "spec.type"},
    "replicationcontrollers": _META | {"status.replicas"},
    "batch/jobs": _META | {"status.successful"},
    "certificates.k8s.io/certificatesigningrequests": _META | {"spec.signerName"},
    # a kubelet's DRA driver lists the slices of its node (resourceslice strategy.go)
    "resource.k8s.io/resourceslices": frozenset({"metadata.name", "spec.nodeName", "spec.driver"}),
}

# Old spellings the conversion functions rewrite (pods: v1 clients sent spec.host).
_ALIASES: dict[str, dict[str, str]] = {"pods": {"spec.host": "spec.nodeName"}}


def supported_fields(resource: str) -> frozenset[str]:
    """The field labels a field selector may use for ``resource`` (a resource key)."""
    return _SUPPORTED.get(resource, _META)


# ---------------------------------------------------------------------------------------------
# Reading fields
# ---------------------------------------------------------------------------------------------


def _render(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return str(int(value)) if value.is_integer() else repr(value)
    return ""  # maps and lists are not selectable



def _walk(obj: Any, parts: tuple[str, ...]) -> Any:
    for p in parts:
        if not is_mapping(obj):
            return None
        obj = obj.get(p)
    return obj


def _plain(path: str) -> Callable[[Mapping[str, Any]], str]:
    parts = tuple(path.split("."))
    if len(parts) == 2:
        a, b = parts

        def get2(obj: Mapping[str, Any]) -> str:
            inner = obj.get(a)
            if type(inner) is not dict and not isinstance(inner, Mapping):
                return ""
            v = inner.get(b)
            return v if type(v) is str else _render(v)
        return get2
    return lambda obj: _render(_walk(obj, parts))


def _bool_default_false(path: str) -> Callable[[Mapping[str, Any]], str]:
    parts = tuple(path.split("."))
    return lambda obj: "true" if _walk(obj, parts) is True else "false"


def _pod_ip(obj: Mapping[str, Any]) -> str:
    status = obj.get("status")
    if not is_mapping(status):
        return ""
    ips = status.get("podIPs")
    if isinstance(ips, list) and ips:
        first = ips[0]
        return _render(first.get("ip")) if is_mapping(first) else ""
    return _render(status.get("podIP"))


def _event_source(obj: Mapping[str, Any]) -> str:
    src = obj.get("source")
    if is_mapping(src):
        return _render(src.get("component"))
    return _render(src)


_SPECIAL: dict[str, Callable[[Mapping[str, Any]], str]] = {
    "status.podIP": _pod_ip,
    "status.podIPs": lambda obj: "",
    "spec.hostNetwork": _bool_default_false("spec.hostNetwork"),
    "spec.unschedulable": _bool_default_false("spec.unschedulable"),
    "source": _event_source,
}


@lru_cache(maxsize=1024)
def _getter(path: str) -> Callable[[Mapping[str, Any]], str]:
    special = _SPECIAL.get(path)
    return special if special is not None else _plain(path)


def field_value(obj: Mapping[str, Any], path: str) -> str:
    """The string a field selector compares for ``path`` on ``obj`` (``""`` when missing)."""
    if not is_mapping(obj):
        return ""
    return _getter(path)(obj)


# ---------------------------------------------------------------------------------------------
# Escaping
# ---------------------------------------------------------------------------------------------


def escape_value(value: str) -> str:
    """``fields.EscapeValue``: backslash-escape ``\\``, ``,`` and ``=``."""
    if "\\" not in value and "," not in value and "=" not in value:
        return value
    return value.replace("\\", "\\\\").replace(",", "\\,").replace("=", "\\=")


def unescape_value(text: str) -> str:
    """``fields.UnescapeValue``; :class:`SelectorError` on a bad escape or a bare ``,``/``=``."""
    if "\\" not in text and "," not in text and "=" not in text:
        return text
    out: list[str] = []
    in_slash = False
    for c in text:
        if in_slash:
            if c not in "\\,=":
                raise SelectorError(f"invalid field selector: invalid escape sequence: \\{c}")
            out.append(c)
            in_slash = False
        elif c == "\\":
            in_slash = True
        elif c in ",=":
            raise SelectorError(f"invalid field selector: unescaped character in value: {c}")
        else:
            out.append(c)
    if in_slash:
        raise SelectorError("invalid field selector: invalid escape sequence: \\")
    return "".join(out)


def _split_terms(text: str) -> list[str]:
    """Split at commas not preceded by an escaping backslash (escapes are kept)."""
    terms: list[str] = []
    start = 0
    in_slash = False
    for i, c in enumerate(text):
        if in_slash:
            in_slash = False
        elif c == "\\":
            in_slash = True
        elif c == ",":
            terms.append(text[start:i])
            start = i + 1
    terms.append(text[start:])
    return terms


def _split_term(term: str) -> tuple[str, str, str] | None:
    """The first ``!=``, ``==`` or ``=`` (tried in that order at each position) splits a term."""
    for i in range(len(term)):
        c = term[i]
        if c == "!" and term.startswith("!=", i):
            return term[:i], "!=", term[i + 2:]
        if c == "=":
            if term.startswith("==", i):
                return term[:i], "==", term[i + 2:]
            return term[:i], "=", term[i + 1:]
    return None


# ---------------------------------------------------------------------------------------------
# Selector
# ---------------------------------------------------------------------------------------------


class FieldRequirement(NamedTuple):
    field: str
    operator: str  # "=" or "!=" ("==" is stored as "=")
    value: str

    def __str__(self) -> str:
        return f"{self.field}{self.operator}{escape_value(self.value)}"


class FieldSelector:
    """An immutable conjunction of ``field = value`` / ``field != value`` requirements."""

    __slots__ = ("_reqs", "_compiled", "_str")

    def __init__(self, requirements: Iterable[tuple[str, str, str]] = ()):
        reqs = []
        for f, op, v in requirements:
            if op == "==":
                op = "="
            if op not in ("=", "!="):
                raise SelectorError(f"field selector operator {op!r} is not one of =, ==, !=")
            if not isinstance(f, str) or not f:
                raise SelectorError("field selector field name must be a non-empty string")
            if not isinstance(v, str):
                raise SelectorError(f"field selector value for {f!r} must be a string")
            reqs.append(FieldRequirement(f, op, v))
        reqs.sort()
        self._reqs = tuple(reqs)
        self._compiled = tuple((_getter(r.field), r.operator == "=", r.value) for r in reqs)
        self._str: str | None = None

    @classmethod
    def everything(cls) -> FieldSelector:
        return _EVERYTHING

    @classmethod
    def parse(cls, text: str, resource: str | None = None) -> FieldSelector:
        """``fields.ParseSelector`` plus, with ``resource``, the API server's label check."""
        if not isinstance(text, str):
            raise SelectorError(f"field selector must be a string, not {type(text).__name__}")
        if not text:
            return _EVERYTHING
        reqs: list[tuple[str, str, str]] = []
        for term in sorted(_split_terms(text)):
            if not term:
                continue
            split = _split_term(term)
            if split is None:
                raise SelectorError(f"invalid selector: '{text}'; can't understand '{term}'")
            field, op, raw = split
            value = unescape_value(raw)
            if not field:
                raise SelectorError(f"invalid selector: '{text}'; field name is empty in "
                                    f"'{term}'")
            reqs.append((field, op, value))
        if resource is not None:
            reqs = [(_check_field(resource, f), op, v) for f, op, v in reqs]
        return cls(reqs) if reqs else _EVERYTHING

    @classmethod
    def from_set(cls, fields: Mapping[str, str] | None) -> FieldSelector:
        """``fields.SelectorFromSet``: every field must equal its value."""
        return cls((f, "=", v) for f, v in (fields or {}).items())

    def matches(self, obj: Mapping[str, Any]) -> bool:
        for get, equal, value in self._compiled:
            if (get(obj) == value) is not equal:
                return False
        return True

    __call__ = matches

    @property
    def empty(self) -> bool:
        return not self._reqs

    @property
    def requirements(self) -> tuple[FieldRequirement, ...]:
        return self._reqs

    def route(self) -> tuple[str, Callable[[Mapping[str, Any]], str], str] | None:
        """(field, getter, value) of one ``field=value`` term, or None: an object can only
        match when ``getter(obj) == value`` (what a store needs to index watches by)."""
        for r, (get, equal, value) in zip(self._reqs, self._compiled):
            if equal:
                return r.field, get, value
        return None

    def requires_exact_match(self, field: str) -> str | None:
        """The value ``field`` must equal, if some ``field=value`` term says so."""
        for r in self._reqs:
            if r.field == field and r.operator == "=":
                return r.value
        return None

    def check(self, resource: str) -> FieldSelector:
        """Validate (and alias-convert) the fields for ``resource``; returns the selector."""
        return FieldSelector((_check_field(resource, f), op, v) for f, op, v in self._reqs)

    def __str__(self) -> str:
        if self._str is None:
            self._str = ",".join(str(r) for r in self._reqs)
        return self._str

    def __repr__(self) -> str:
        return f"FieldSelector.parse({str(self)!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, FieldSelector):
            return NotImplemented
        return self._reqs == other._reqs

    def __hash__(self) -> int:
        return hash(self._reqs)


def _check_field(resource: str, field: str) -> str:
    field = _ALIASES.get(resource, {}).get(field, field)
    if field not in supported_fields(resource):
        raise SelectorError(f"field label not supported: {field}")
    return field


_EVERYTHING = FieldSelector()


def parse_field_selector(text: str, resource: str | None = None) -> FieldSelector:
    return FieldSelector.parse(text, resource)
