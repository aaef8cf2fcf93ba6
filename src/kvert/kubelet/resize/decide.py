"""Deciding a proposed resize: accepted (``PodResizeInProgress``), or pending as
``Deferred`` / ``Infeasible`` (``PodResizePending``), and the order pending resizes are
decided in. The rules themselves are :func:`kvert.kubelet.admission.decide_resize`'s."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kvert.api.meta import format_time
from kvert.api.pods import GUARANTEED, qos_class
from kvert.kubelet import admission
from kvert.kubelet.checkpoint import Requirements
from kvert.kubelet.resize.allocation import (
    DEFAULT_SCOPE,
    POD_LEVEL,
    Allocation,
    ResizeScope,
    format_requirements,
    is_increasing,
    merged_allocation,
    requests_of,
    resizable_names,
)
from kvert.kubelet.resize.state import ResizeState


@dataclass(frozen=True)
class NodeLimits:
    """What this node judges a resize against."""
    allocatable: Mapping[str, int]           # the node's status allocatable: Deferred
    absolute: Mapping[str, int]              # capacity - reservations: Infeasible
    cpu_manager_policy: str = "none"
    exclusive_cpus: bool = False             # gate InPlacePodVerticalScalingExclusiveCPUs
    scope: ResizeScope = DEFAULT_SCOPE       # what beyond app containers and sidecars is resized


@dataclass
class ResizeDecision:
    ok: bool
    reason: str                              # "" when accepted, else Deferred / Infeasible
    message: str
    allocation: dict[str, Requirements]      # what the pod is allocated when accepted
    summary: dict[str, Any] = field(default_factory=dict)   # for the explanation annotation
    # kubelet_pod_infeasible_resizes_total's reason_detail of an Infeasible decision
    reason_detail: str = ""


# the rule of admission.decide_resize that made a resize Infeasible -> upstream's reason_detail
_REASON_DETAIL = {"static-cpu-manager": "guaranteed_pod_cpu_manager_static_policy",
                  "capacity": "insufficient_node_allocatable"}


def _cpu_requests(allocation: Allocation, names: Sequence[str]) -> dict[str, int]:
    return {n: (allocation.get(n) or {}).get("requests", {}).get("cpu", 0) for n in names}


def decide(pod: Mapping[str, Any], allocated: Allocation, wanted: Allocation | None,
           others: Sequence[Mapping[str, int]], node: NodeLimits, generation: int,
           now: float) -> ResizeDecision:
    """Accept, defer or refuse the resize from ``allocated`` to what the spec asks for
    (``wanted``, ``spec_allocation(pod)`` if known), next to what the other pods hold."""
    new_alloc = merged_allocation(pod, allocated, wanted, node.scope)
    names = resizable_names(pod, node.scope)
    verdict = admission.decide_resize(requests_of(pod, new_alloc), others, node.allocatable,
                                      absolute=node.absolute, qos_class=qos_class(pod),
                                      cpu_manager_policy=node.cpu_manager_policy,
                                      old_cpu=_cpu_requests(allocated, names),
                                      new_cpu=_cpu_requests(new_alloc, names),
                                      exclusive_cpus=node.exclusive_cpus)
    summary = {**verdict.as_dict(), "generation": generation, "time": format_time(now),
               "from": {n: format_requirements(allocated[n]) for n in names if n in allocated},
               "to": {n: format_requirements(new_alloc[n]) for n in names if n in new_alloc}}
    if POD_LEVEL in allocated or POD_LEVEL in new_alloc:
        summary["podFrom"] = format_requirements(allocated.get(POD_LEVEL) or {})
        summary["podTo"] = format_requirements(new_alloc.get(POD_LEVEL) or {})
    detail = _REASON_DETAIL.get(str(verdict.numbers.get("rule", ""))) if verdict.reason == "Infeasible" else ""
    return ResizeDecision(verdict.ok, verdict.reason, verdict.message, new_alloc, summary, detail or "")


def pending_order(item: tuple[Any, ...], scope: ResizeScope = DEFAULT_SCOPE) -> tuple[Any, ...]:
    """Kubernetes' order for pending resizes (``sortPendingResizes``): resizes that do not
    increase requests first, then higher priority, then Guaranteed before the rest, then
    the longest-waiting (earliest PodResizePending transition; never-pending ones last).
    ``item`` is (pod, allocated, ResizeState[, spec_allocation(pod)])."""
    pod, allocated = item[0], item[1]
    state: ResizeState = item[2]
    wanted = item[3] if len(item) > 3 else None
    priority = (pod.get("spec") or {}).get("priority") or 0
    waiting = state.pending_since if state.pending_reason else float("inf")
    meta = pod.get("metadata") or {}
    return (1 if is_increasing(pod, allocated, wanted, scope) else 0, -priority,
            0 if qos_class(pod) == GUARANTEED else 1, waiting,
            meta.get("creationTimestamp") or "", meta.get("namespace") or "", meta.get("name") or "")
