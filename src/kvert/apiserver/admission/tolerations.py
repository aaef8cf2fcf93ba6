"""DefaultTolerationSeconds (``plugin/pkg/admission/defaulttolerationseconds``) and the
toleration merge RuntimeClass uses (``pkg/util/tolerations``).

Every pod (create or update of the pod itself, not a subresource) that does not already
tolerate them gets::

    {key: node.kubernetes.io/not-ready,   operator: Exists, effect: NoExecute, tolerationSeconds: 300}
    {key: node.kubernetes.io/unreachable, operator: Exists, effect: NoExecute, tolerationSeconds: 300}

so that taint-based eviction (seed 001, taints and tolerations) waits five minutes before
evicting pods from a node that stops reporting. A toleration with an empty key (and
operator Exists) or an empty effect counts as already tolerating, as in Kubernetes.
"""

from __future__ import annotations

from typing import Any

from kvert.api.meta import deep_copy
from kvert.registry.admission import CREATE, UPDATE, Attributes

from .common import PODS, is_pod, pod_spec

NOT_READY = "node.kubernetes.io/not-ready"
UNREACHABLE = "node.kubernetes.io/unreachable"
NO_EXECUTE = "NoExecute"
DEFAULT_TOLERATION_SECONDS = 300


class DefaultTolerationSeconds:
    name = "DefaultTolerationSeconds"
    resources = frozenset({PODS})

    def __init__(self, not_ready_seconds: int = DEFAULT_TOLERATION_SECONDS,
                 unreachable_seconds: int = DEFAULT_TOLERATION_SECONDS):
        self.defaults = ((NOT_READY, not_ready_seconds), (UNREACHABLE, unreachable_seconds))

    async def admit(self, attrs: Attributes) -> None:
        if attrs.operation not in (CREATE, UPDATE) or attrs.subresource or not is_pod(attrs):
            return
        if not isinstance(attrs.object, dict):
            return
        spec = pod_spec(attrs.object)
        tolerations = spec.get("tolerations")
        if not isinstance(tolerations, list):
            tolerations = []
        added = []
        for key, seconds in self.defaults:
            if not any(_tolerates_no_execute(t, key) for t in tolerations if isinstance(t, dict)):
                added.append({"key": key, "operator": "Exists", "effect": NO_EXECUTE,
                              "tolerationSeconds": seconds})
        if added:
            spec["tolerations"] = tolerations + added


def _tolerates_no_execute(toleration: dict, key: str) -> bool:
    return (toleration.get("key") in (key, "", None)
            and toleration.get("effect") in (NO_EXECUTE, "", None))


# -- merging (RuntimeClass scheduling) ----------------------------------------------------------

def merge_tolerations(first: list[Any] | None, second: list[Any] | None) -> list[dict]:
    """``tolerations.MergeTolerations``: both lists, dropping any toleration another one in
    the result already covers (a superset); of two equal ones the first is kept."""
    everything = [t for t in list(first or []) + list(second or []) if isinstance(t, dict)]
    merged: list[dict] = []
    for i, t in enumerate(everything):
        if any(_is_superset(kept, t) for kept in merged):
            continue
        if any(not _equal(t, later) and _is_superset(later, t) for later in everything[i + 1:]):
            continue
        merged.append(deep_copy(t))
    return merged


def _norm(t: dict) -> tuple:
    operator = t.get("operator") or "Equal"
    return (t.get("key") or "", operator, t.get("value") or "", t.get("effect") or "",
            t.get("tolerationSeconds"))


def _equal(a: dict, b: dict) -> bool:
    return _norm(a) == _norm(b)


def _is_superset(ss: dict, t: dict) -> bool:
    """Whether ``ss`` tolerates everything ``t`` does."""
    if _equal(ss, t):
        return True
    ss_key, ss_op, ss_value, ss_effect, ss_seconds = _norm(ss)
    t_key, t_op, t_value, t_effect, t_seconds = _norm(t)
    if t_key != ss_key and (ss_key != "" or ss_op != "Exists"):
        return False
    if t_effect != ss_effect and ss_effect != "":
        return False
    if ss_effect == NO_EXECUTE and ss_seconds is not None:
        if t_seconds is None or t_seconds > ss_seconds:
            return False
    if ss_op == "Equal":
        return t_op == "Equal" and t_value == ss_value
    return ss_op == "Exists"
