"""Node selection for pods: ``spec.nodeSelector`` and node affinity, as the scheduler's
``k8s.io/component-helpers/scheduling/corev1/nodeaffinity`` evaluates them.

Rules carried over from Kubernetes:

* ``nodeSelectorTerms`` are ORed; the ``matchExpressions`` and ``matchFields`` of one term are
  ANDed. A term with neither matches nothing, and so does a selector with no terms.
* ``matchExpressions`` work on node labels with the operators ``In``, ``NotIn``, ``Exists``,
  ``DoesNotExist``, ``Gt`` and ``Lt`` (``Gt``/``Lt``: exactly one value, a base-10 integer; the
  label must parse as an integer too). ``NotIn`` and ``DoesNotExist`` match nodes without the key.
* ``matchFields`` work on node fields -- only ``metadata.name`` exists -- with ``In``/``NotIn``
  and exactly one value. As in the scheduler, they are skipped for a node with no name.
* A term Kubernetes cannot parse (bad operator, bad key or value, wrong value count) never
  matches, but does not stop other terms from matching (the scheduler's ``LazyErrorNodeSelector``);
  :func:`validate_node_selector` reports what is wrong.
* Required affinity = every ``spec.nodeSelector`` pair present on the node, AND (when present)
  ``requiredDuringSchedulingIgnoredDuringExecution``.
* The preferred score is the sum of the weights of the matching
  ``preferredDuringSchedulingIgnoredDuringExecution`` terms (before any normalisation); terms of
  weight 0, empty terms and unparseable terms add nothing.

For loops over many nodes, compile once with :class:`NodeSelector`, :class:`RequiredNodeAffinity`
or :class:`PreferredSchedulingTerms`; the module functions compile on every call.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from kvert.api import errors as _errors
from kvert.api.selectors import (
    DOES_NOT_EXIST,
    EXISTS,
    GREATER_THAN,
    IN,
    LESS_THAN,
    NOT_IN,
    LabelSelector,
    Requirement,
    SelectorError,
    make_requirement,
    parse_int64,
    validate_label_key,
    validate_label_value,
)
from kvert.api.types import is_mapping

__all__ = [
    "NODE_SELECTOR_OPERATORS",
    "NodeSelectorTerm",
    "NodeSelector",
    "RequiredNodeAffinity",
    "PreferredSchedulingTerms",
    "node_selector_requirement_matches",
    "node_selector_term_matches",
    "node_selector_matches",
    "required_node_affinity_matches",
    "preferred_node_affinity_score",
    "validate_node_selector_requirement",
    "validate_node_selector_term",
    "validate_node_selector",
]

NODE_SELECTOR_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt")
_LABEL_OPS = {"In": IN, "NotIn": NOT_IN, "Exists": EXISTS, "DoesNotExist": DOES_NOT_EXIST,
              "Gt": GREATER_THAN, "Lt": LESS_THAN}
_FIELD_OPS = ("In", "NotIn")


def _values(req: Mapping[str, Any]) -> list[Any]:
    values = req.get("values")
    if values is None:
        return []
    if isinstance(values, (str, bytes)) or not isinstance(values, (list, tuple)):
        return [values]  # a malformed scalar: let validation reject it
    return list(values)


def _label_requirement(req: Mapping[str, Any], where: str) -> Requirement:
    if not isinstance(req, Mapping):
        raise SelectorError(f"{where}: must be an object with key, operator and values")
    op = req.get("operator")
    sel_op = _LABEL_OPS.get(op) if isinstance(op, str) else None
    if sel_op is None:
        raise SelectorError(f"{where}.operator: Unsupported value: {op!r}: supported values: "
                            + ", ".join(f'"{o}"' for o in NODE_SELECTOR_OPERATORS))
    try:
        return make_requirement(req.get("key", ""), sel_op, _values(req))
    except SelectorError as e:
        raise SelectorError(f"{where}: {e}") from None


def _field_requirement(req: Mapping[str, Any], where: str) -> tuple[str, bool, str]:
    if not isinstance(req, Mapping):
        raise SelectorError(f"{where}: must be an object with key, operator and values")
    op = req.get("operator")
    if op not in _FIELD_OPS:
        raise SelectorError(f"{where}.operator: Unsupported value: {op!r}: supported values: "
                            '"In", "NotIn"')
    values = _values(req)
    if len(values) != 1 or not isinstance(values[0], str):
        raise SelectorError(f"{where}.values: Invalid value: {values!r}: must have one element")
    return (str(req.get("key", "")), op == "In", values[0])



def _is_empty_term(term: Mapping[str, Any] | None) -> bool:
    """Kubernetes' isEmptyNodeSelectorTerm (anything that is not an object counts as empty)."""
    return not term or not is_mapping(term) or (
        not term.get("matchExpressions") and not term.get("matchFields"))


def _node_name(node: Mapping[str, Any]) -> str:
    meta = node.get("metadata")
    return (meta.get("name") or "") if is_mapping(meta) else ""


def _node_labels(node: Mapping[str, Any]) -> Mapping[str, str]:
    meta = node.get("metadata")
    return (meta.get("labels") or {}) if is_mapping(meta) else {}


class NodeSelectorTerm:
    """One compiled ``v1.NodeSelectorTerm``. ``error`` is set when Kubernetes can't parse it."""

    __slots__ = ("labels", "fields", "error", "empty")

    def __init__(self, term: Mapping[str, Any] | None, path: str = "nodeSelectorTerm"):
        self.labels: LabelSelector | None = None
        self.fields: tuple[tuple[str, bool, str], ...] = ()
        self.error: str | None = None
        self.empty = _is_empty_term(term)
        if self.empty:
            return
        assert term is not None
        problems: list[str] = []
        exprs = term.get("matchExpressions") or []
        reqs = []
        for i, req in enumerate(exprs):
            try:
                reqs.append(_label_requirement(req, f"{path}.matchExpressions[{i}]"))
            except SelectorError as e:
                problems.append(str(e))
        if exprs:
            self.labels = LabelSelector.from_requirements(reqs)
        fields = []
        for i, req in enumerate(term.get("matchFields") or []):
            try:
                fields.append(_field_requirement(req, f"{path}.matchFields[{i}]"))
            except SelectorError as e:
                problems.append(str(e))
        self.fields = tuple(fields)
        if problems:
            self.error = "; ".join(problems)

    def match(self, labels: Mapping[str, str], node_name: str) -> bool:
        if self.empty or self.error is not None:
            return False
        if self.labels is not None and not self.labels.matches(labels):
            return False
        if self.fields and node_name:  # the scheduler ignores matchFields for nameless nodes
            for key, is_in, value in self.fields:
                actual = node_name if key == "metadata.name" else ""
                if (actual == value) is not is_in:
                    return False
        return True

    def matches(self, node: Mapping[str, Any] | None) -> bool:
        if not node:
            return False
        return self.match(_node_labels(node), _node_name(node))


class NodeSelector:
    """A compiled ``v1.NodeSelector``: terms ORed, empty/unparseable terms never match."""

    __slots__ = ("terms", "errors")

    def __init__(self, node_selector: Mapping[str, Any] | None, path: str = "nodeSelector"):
        terms = (node_selector.get("nodeSelectorTerms") or []) if is_mapping(node_selector) else []
        compiled = [NodeSelectorTerm(t, f"{path}.nodeSelectorTerms[{i}]")
                    for i, t in enumerate(terms)]
        self.terms = tuple(t for t in compiled if not t.empty)
        self.errors = tuple(t.error for t in self.terms if t.error)

    def matches(self, node: Mapping[str, Any] | None) -> bool:
        if not node:
            return False
        labels, name = _node_labels(node), _node_name(node)
        return any(t.match(labels, name) for t in self.terms)


class RequiredNodeAffinity:
    """``nodeaffinity.GetRequiredNodeAffinity``: ``spec.nodeSelector`` AND required affinity."""

    __slots__ = ("node_selector_labels", "node_selector")

    def __init__(self, pod: Mapping[str, Any]):
        spec = pod.get("spec") or {}
        ns = spec.get("nodeSelector") or {}
        self.node_selector_labels = LabelSelector.from_set(ns) if ns else None
        affinity = ((spec.get("affinity") or {}).get("nodeAffinity") or {})
        required = affinity.get("requiredDuringSchedulingIgnoredDuringExecution")
        self.node_selector = (
            NodeSelector(required, "spec.affinity.nodeAffinity."
                                   "requiredDuringSchedulingIgnoredDuringExecution")
            if required is not None else None)

    def matches(self, node: Mapping[str, Any] | None) -> bool:
        if not node:
            return False
        if self.node_selector_labels is not None and \
                not self.node_selector_labels.matches(_node_labels(node)):
            return False
        if self.node_selector is not None:
            return self.node_selector.matches(node)
        return True


class PreferredSchedulingTerms:
    """Compiled ``preferredDuringSchedulingIgnoredDuringExecution``; :meth:`score` sums weights."""

    __slots__ = ("terms", "errors")

    def __init__(self, terms: Iterable[Mapping[str, Any]] | None,
                 path: str = "preferredDuringSchedulingIgnoredDuringExecution"):
        compiled: list[tuple[int, NodeSelectorTerm]] = []
        errors: list[str] = []
        for i, t in enumerate(terms or []):
            if not isinstance(t, Mapping):
                continue
            weight, pref = t.get("weight") or 0, t.get("preference")
            if not isinstance(weight, int) or isinstance(weight, bool) or weight == 0 \
                    or _is_empty_term(pref):
                continue
            term = NodeSelectorTerm(pref, f"{path}[{i}].preference")
            if term.error:
                errors.append(term.error)
            else:
                compiled.append((weight, term))
        self.terms = tuple(compiled)
        self.errors = tuple(errors)

    @classmethod
    def for_pod(cls, pod: Mapping[str, Any]) -> PreferredSchedulingTerms:
        affinity = ((pod.get("spec") or {}).get("affinity") or {}).get("nodeAffinity") or {}
        return cls(affinity.get("preferredDuringSchedulingIgnoredDuringExecution"),
                   "spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution")

    def score(self, node: Mapping[str, Any] | None) -> int:
        if not node:
            return 0
        labels, name = _node_labels(node), _node_name(node)
        return sum(w for w, t in self.terms if t.match(labels, name))


# ---------------------------------------------------------------------------------------------
# Functional API
# ---------------------------------------------------------------------------------------------


def node_selector_requirement_matches(req: Mapping[str, Any], labels: Mapping[str, str] | None
                                      ) -> bool:
    """One ``v1.NodeSelectorRequirement`` against a label set; an invalid one matches nothing."""
    try:
        r = _label_requirement(req, "requirement")
    except SelectorError:
        return False
    return LabelSelector.from_requirements((r,)).matches(labels or {})


def node_selector_term_matches(term: Mapping[str, Any] | None, node: Mapping[str, Any] | None
                               ) -> bool:
    """One ``v1.NodeSelectorTerm`` against a node; an empty or invalid term matches nothing."""
    return NodeSelectorTerm(term).matches(node)


def node_selector_matches(node_selector: Mapping[str, Any] | None,
                          node: Mapping[str, Any] | None) -> bool:
    """A ``v1.NodeSelector`` against a node; ``None`` or no terms matches nothing."""
    return NodeSelector(node_selector).matches(node)


def required_node_affinity_matches(pod: Mapping[str, Any], node: Mapping[str, Any] | None
                                   ) -> bool:
    """Whether ``pod`` may run on ``node`` by ``nodeSelector`` and required node affinity."""
    return RequiredNodeAffinity(pod).matches(node)


def preferred_node_affinity_score(pod: Mapping[str, Any], node: Mapping[str, Any] | None
                                  ) -> int:
    """Sum of the weights of the pod's preferred node affinity terms ``node`` matches."""
    return PreferredSchedulingTerms.for_pod(pod).score(node)


# ---------------------------------------------------------------------------------------------
# Validation (pkg/apis/core/validation plus what makes the scheduler ignore a requirement)
# ---------------------------------------------------------------------------------------------


def _fmt(cause: _errors.Cause) -> str:
    return f"{cause.field}: {cause.message}"


def validate_node_selector_requirement(req: Mapping[str, Any], path: str) -> list[str]:
    """Problems with one ``matchExpressions`` entry, as ``"<path>: <message>"`` strings.

    Covers API validation (``ValidateNodeSelectorRequirement``: operator, value count, key) and
    what would make the scheduler's parser reject it anyway (values must be label values,
    ``Gt``/``Lt`` values integers). An empty list means the requirement is usable. Never raises.
    """
    if not isinstance(req, Mapping):
        return [_fmt(_errors.invalid(path, str(req), "must be an object"))]
    out: list[str] = []
    op, values, key = req.get("operator"), _values(req), req.get("key", "")
    vpath = f"{path}.values"
    if op in ("In", "NotIn"):
        if not values:
            out.append(_fmt(_errors.required(
                vpath, "must be specified when `operator` is 'In' or 'NotIn'")))
    elif op in ("Exists", "DoesNotExist"):
        if values:
            out.append(_fmt(_errors.forbidden(
                vpath, "may not be specified when `operator` is 'Exists' or 'DoesNotExist'")))
    elif op in ("Gt", "Lt"):
        if len(values) != 1:
            out.append(_fmt(_errors.required(
                vpath, "must be specified single value when `operator` is 'Lt' or 'Gt'")))
        for i, v in enumerate(values):
            if parse_int64(v) is None:
                out.append(_fmt(_errors.invalid(
                    f"{vpath}[{i}]", v, "for 'Gt', 'Lt' operators, the value must be an integer")))
    else:
        out.append(_fmt(_errors.invalid(f"{path}.operator", op, "not a valid selector operator")))
    if not isinstance(key, str):
        out.append(_fmt(_errors.invalid(f"{path}.key", str(key), "must be a string")))
    else:
        for p in validate_label_key(key):
            out.append(_fmt(_errors.invalid(f"{path}.key", key, p)))
    for i, v in enumerate(values):
        if not isinstance(v, str):
            out.append(_fmt(_errors.invalid(f"{vpath}[{i}]", str(v), "must be a string")))
            continue
        for p in validate_label_value(v):
            out.append(_fmt(_errors.invalid(f"{vpath}[{i}]", v, p)))
    return out


def _validate_field_requirement(req: Mapping[str, Any], path: str) -> list[str]:
    if not isinstance(req, Mapping):
        return [_fmt(_errors.invalid(path, str(req), "must be an object"))]
    out: list[str] = []
    op, values = req.get("operator"), _values(req)
    if op in ("In", "NotIn"):
        if len(values) != 1:
            out.append(_fmt(_errors.required(
                f"{path}.values",
                "must be only one value when `operator` is 'In' or 'NotIn' for node field "
                "selector")))
    else:
        out.append(_fmt(_errors.invalid(f"{path}.operator", op, "not a valid selector operator")))
    if req.get("key") != "metadata.name":
        out.append(_fmt(_errors.not_supported(f"{path}.key", req.get("key"), ["metadata.name"])))
    return out


def validate_node_selector_term(term: Mapping[str, Any] | None, path: str) -> list[str]:
    """Problems with one ``v1.NodeSelectorTerm`` (an empty term is valid: it matches nothing)."""
    out: list[str] = []
    if not term:
        return out
    if not is_mapping(term):
        return [_fmt(_errors.invalid(path, str(term), "must be an object"))]
    for i, req in enumerate(term.get("matchExpressions") or []):
        out += validate_node_selector_requirement(req, f"{path}.matchExpressions[{i}]")
    for i, req in enumerate(term.get("matchFields") or []):
        out += _validate_field_requirement(req, f"{path}.matchFields[{i}]")
    return out


def validate_node_selector(node_selector: Mapping[str, Any] | None, path: str) -> list[str]:
    """Problems with a ``v1.NodeSelector``: it needs at least one term; each term validated."""
    terms = (node_selector.get("nodeSelectorTerms") or []) if is_mapping(node_selector) else []
    if not terms:
        return [_fmt(_errors.required(f"{path}.nodeSelectorTerms",
                                      "must have at least one node selector term"))]
    out: list[str] = []
    for i, term in enumerate(terms):
        out += validate_node_selector_term(term, f"{path}.nodeSelectorTerms[{i}]")
    return out
