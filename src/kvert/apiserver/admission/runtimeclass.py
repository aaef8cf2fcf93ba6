"""RuntimeClass (``plugin/pkg/admission/runtimeclass``): Pod Overhead and scheduling.

Seed 001 section 3 (Pod Overhead): at admission the RuntimeClass controller sets the
pod's ``spec.overhead`` from the class's ``overhead.podFixed`` (kata-fc: 250m cpu, 120Mi
memory); a pod whose spec already carries a different overhead is rejected. The
overhead then counts for scheduling, the pod cgroup and resource quota.

On pod creation (subresources ignored):

- ``runtimeClassName`` naming no RuntimeClass -> 403 ``pod rejected: RuntimeClass "X" not
  found``;
- mutating: ``spec.overhead`` = ``overhead.podFixed`` (403 ``pod rejected: Pod's Overhead
  doesn't match RuntimeClass's defined Overhead`` when the pod set a different one);
  ``scheduling.nodeSelector`` merged into ``spec.nodeSelector`` (403 ``conflict:
  runtimeClass.scheduling.nodeSelector[k] = v; pod.spec.nodeSelector[k] = w`` on a clash)
  and ``scheduling.tolerations`` merged into ``spec.tolerations``;
- validating: the overhead must still equal the class's (a later webhook may not change
  it), and a pod without a class defining an overhead may not carry one (``pod rejected:
  Pod Overhead set without corresponding RuntimeClass defined Overhead``).

Quantities compare by value (``"0.25"`` equals ``"250m"``), like ``Semantic.DeepEqual``.
"""

from __future__ import annotations

from typing import Any

from kvert.api.errors import NotFound
from kvert.api.meta import deep_copy
from kvert.api.quantity import QuantityError
from kvert.api.resources import parse_resource_list
from kvert.registry.admission import CREATE, Attributes
from kvert.store.base import Store

from .common import PODS, forbidden, is_pod, pod_spec
from .tolerations import merge_tolerations

RUNTIME_CLASSES = "node.k8s.io/runtimeclasses"
OVERHEAD_MISMATCH = "pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead"
OVERHEAD_WITHOUT_CLASS = ("pod rejected: Pod Overhead set without corresponding RuntimeClass "
                          "defined Overhead")


class RuntimeClass:
    name = "RuntimeClass"
    resources = frozenset({PODS})

    def __init__(self, store: Store):
        self.store = store

    def _applies(self, attrs: Attributes) -> bool:
        return (attrs.operation == CREATE and not attrs.subresource and is_pod(attrs)
                and isinstance(attrs.object, dict))

    def _runtime_class(self, attrs: Attributes) -> dict | None:
        name = pod_spec(attrs.object).get("runtimeClassName")
        if not name:
            return None
        try:
            return self.store.get(RUNTIME_CLASSES, "", name)
        except NotFound:
            raise forbidden(attrs, f'pod rejected: RuntimeClass "{name}" not found') from None

    async def admit(self, attrs: Attributes) -> None:
        if not self._applies(attrs):
            return
        rc = self._runtime_class(attrs)
        if rc is None:
            return
        spec = pod_spec(attrs.object)
        overhead = rc.get("overhead")
        if isinstance(overhead, dict):
            fixed = overhead.get("podFixed")
            if spec.get("overhead") is not None and not _same(fixed, spec.get("overhead")):
                raise forbidden(attrs, OVERHEAD_MISMATCH)
            if fixed is None:
                spec.pop("overhead", None)
            else:
                spec["overhead"] = deep_copy(fixed)
        scheduling = rc.get("scheduling")
        if isinstance(scheduling, dict):
            self._set_scheduling(attrs, spec, scheduling)

    def _set_scheduling(self, attrs: Attributes, spec: dict, scheduling: dict) -> None:
        wanted = scheduling.get("nodeSelector") or {}
        selector = spec.get("nodeSelector")
        if not isinstance(selector, dict) or not selector:
            selector = dict(wanted) if wanted else selector
        else:
            for key, value in wanted.items():
                if key in selector and selector[key] != value:
                    raise forbidden(attrs, f"conflict: runtimeClass.scheduling.nodeSelector[{key}] = "
                                           f"{value}; pod.spec.nodeSelector[{key}] = {selector[key]}")
                selector[key] = value
        if selector:
            spec["nodeSelector"] = selector
        tolerations = merge_tolerations(spec.get("tolerations"), scheduling.get("tolerations"))
        if tolerations:
            spec["tolerations"] = tolerations

    async def validate(self, attrs: Attributes) -> None:
        if not self._applies(attrs):
            return
        rc = self._runtime_class(attrs)
        spec = pod_spec(attrs.object)
        overhead = (rc or {}).get("overhead")
        if isinstance(overhead, dict):
            if not _same(overhead.get("podFixed"), spec.get("overhead")):
                raise forbidden(attrs, OVERHEAD_MISMATCH)
        elif spec.get("overhead") is not None:
            raise forbidden(attrs, OVERHEAD_WITHOUT_CLASS)


def _same(a: Any, b: Any) -> bool:
    """Semantic equality of two resource lists (absent equals empty, as in Kubernetes'
    Semantic.DeepEqual)."""
    if not a or not b:
        return not a and not b
    try:
        return parse_resource_list(a) == parse_resource_list(b)
    except (QuantityError, TypeError, ValueError):
        return a == b
