"""The kubelet's six in-place resize metrics (KEP-1287 "Instrumentation", Kubernetes 1.34+), as
the node agent's ``/metrics`` shows them.

========================================== ========= ============== =======================================
name                                       type      labels         recorded (upstream)
========================================== ========= ============== =======================================
kubelet_container_requested_resizes_total  counter   operation,     HandlePodUpdates
                                                     requirement,   (``recordContainerResizeOperations``):
                                                     resource       one per resizable container, resource
                                                                    (cpu, memory) and requirement
                                                                    (requests, limits) that changed
kubelet_pod_resize_duration_milliseconds   histogram success        doPodResizeAction, each attempt
kubelet_pod_pending_resizes                gauge     reason         pods with PodResizePending
                                                                    (``deferred`` / ``infeasible``)
kubelet_pod_infeasible_resizes_total       counter   reason_detail  the resize admit handler, each
                                                                    Infeasible decision
kubelet_pod_in_progress_resizes            gauge                    pods with PodResizeInProgress
kubelet_pod_deferred_accepted_resizes_total counter  retry_trigger  retryPendingResizes: a Deferred resize
                                                                    accepted, by what woke the retry
========================================== ========= ============== =======================================

HELP texts carry the ``[ALPHA]`` prefix component-base adds to an ALPHA metric. The two
gauges are read from the pods' resize states at scrape time; a label value once seen keeps
its series (at 0 when no pod is in that state), as a Set gauge of client_golang does.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any

from kvert.api.prometheus import line
from kvert.api.resources import parse_resource_list
from kvert.kubelet.resize.allocation import DEFAULT_SCOPE, ResizeScope, allocatable_containers
from kvert.kubelet.resize.state import DEFERRED, INFEASIBLE, ResizeState

REQUESTED = "kubelet_container_requested_resizes_total"
DURATION = "kubelet_pod_resize_duration_milliseconds"
PENDING = "kubelet_pod_pending_resizes"
INFEASIBLE_TOTAL = "kubelet_pod_infeasible_resizes_total"
IN_PROGRESS = "kubelet_pod_in_progress_resizes"
DEFERRED_ACCEPTED = "kubelet_pod_deferred_accepted_resizes_total"

HELP = {
    REQUESTED: "[ALPHA] Number of requested resizes, counted at the container level. Different resources "
               "on the same container are counted separately. The 'requirement' label refers to 'memory' "
               "or 'limits'; the 'operation' label can be one of 'add', 'remove', 'increase' or 'decrease'.",
    DURATION: "[ALPHA] Duration in milliseconds to actuate a pod resize",
    PENDING: "[ALPHA] Number of pending resizes for pods.",
    INFEASIBLE_TOTAL: "[ALPHA] Number of infeasible resizes for pods.",
    IN_PROGRESS: "[ALPHA] Number of in-progress resizes for pods.",
    DEFERRED_ACCEPTED: "[ALPHA] Cumulative number of resizes that were accepted after being deferred.",
}

DURATION_BUCKETS = (10, 50, 100, 500, 1000, 2000, 5000, 10000, 20000, 30000, 60000, 120000, 300000, 600000)

# retryPendingResizes' triggers (allocation_manager.go)
POD_RESIZED = "pod_resized"
POD_UPDATED = "pod_updated"
PODS_ADDED = "pods_added"
PODS_REMOVED = "pods_removed"
POD_TERMINATED = "pod_terminated"
PERIODIC_RETRY = "periodic_retry"
# in the order the node agent prefers them when several woke one pass (most telling first)
TRIGGERS = (POD_RESIZED, POD_TERMINATED, PODS_REMOVED, PODS_ADDED, POD_UPDATED, PERIODIC_RETRY)

_PENDING_REASONS = {DEFERRED: "deferred", INFEASIBLE: "infeasible"}


def resize_operation(new: int, old: int) -> str:
    """``resizeOperationForResources``: add, remove, increase, decrease, or '' when unchanged."""
    if new == 0 and old != 0:
        return "remove"
    if old == 0 and new != 0:
        return "add"
    if new < old:
        return "decrease"
    if new > old:
        return "increase"
    return ""


def _raw(container: Mapping[str, Any], part: str) -> Mapping[str, int]:
    # the spec as written (no request defaulted from its limit), as upstream compares it
    resources = container.get("resources") or {}
    try:
        return parse_resource_list(resources.get(part))
    except ValueError:
        return {}


def requested_operations(old_pod: Mapping[str, Any], new_pod: Mapping[str, Any],
                         scope: ResizeScope = DEFAULT_SCOPE) -> list[tuple[str, str, str]]:
    """(resource, requirement, operation) of each change a pod update makes to the resizable
    containers present in both versions (sidecars; regular init containers when the node
    resizes them)."""
    new_containers = {c.get("name", ""): c for c, _ in allocatable_containers(new_pod)}
    out = []
    for old, kind in allocatable_containers(old_pod):
        if kind == "init" and not scope.init_containers:
            continue
        new = new_containers.get(old.get("name", ""))
        if new is None:
            continue
        for requirement in ("requests", "limits"):
            before, after = _raw(old, requirement), _raw(new, requirement)
            for resource in ("memory", "cpu"):
                op = resize_operation(after.get(resource, 0), before.get(resource, 0))
                if op:
                    out.append((resource, requirement, op))
    return out


class ResizeMetrics:
    """One node agent's resize metrics (counters and histogram; gauges come from the pods)."""

    def __init__(self) -> None:
        self.requested: Counter[tuple[str, str, str]] = Counter()    # (operation, requirement, resource)
        self.infeasible: Counter[str] = Counter()
        self.deferred_accepted: Counter[str] = Counter()
        self.durations: dict[str, list[int]] = {}                    # success -> bucket counts (+Inf last)
        self.duration_sum: Counter[str] = Counter()
        self.duration_count: Counter[str] = Counter()
        self._pending_seen: set[str] = set()

    # ---- recording ------------------------------------------------------------------------------

    def pod_updated(self, old_pod: Mapping[str, Any], new_pod: Mapping[str, Any],
                    scope: ResizeScope = DEFAULT_SCOPE) -> None:
        for resource, requirement, op in requested_operations(old_pod, new_pod, scope):
            self.requested[(op, requirement, resource)] += 1

    def resize_infeasible(self, reason_detail: str) -> None:
        self.infeasible[reason_detail] += 1

    def deferred_resize_accepted(self, trigger: str) -> None:
        self.deferred_accepted[trigger] += 1

    def resize_actuated(self, milliseconds: int, success: bool) -> None:
        label = "true" if success else "false"
        counts = self.durations.setdefault(label, [0] * (len(DURATION_BUCKETS) + 1))
        for i, bound in enumerate(DURATION_BUCKETS):
            if milliseconds <= bound:
                counts[i] += 1
        counts[-1] += 1
        self.duration_sum[label] += milliseconds
        self.duration_count[label] += 1

    # ---- exposition -------------------------------------------------------------------------------

    def text(self, states: Iterable[ResizeState]) -> str:
        """The six families in Prometheus text format; ``states`` are the active pods'."""
        pending: Counter[str] = Counter()
        in_progress = 0
        for state in states:
            reason = _PENDING_REASONS.get(state.pending_reason)
            if reason:
                pending[reason] += 1
            if state.in_progress:
                in_progress += 1
        self._pending_seen.update(pending)
        out: list[str] = []

        def family(name: str, kind: str) -> None:
            out.append(f"# HELP {name} {HELP[name]}")
            out.append(f"# TYPE {name} {kind}")

        family(REQUESTED, "counter")
        for (op, requirement, resource), n in sorted(self.requested.items()):
            out.append(line(REQUESTED, {"operation": op, "requirement": requirement, "resource": resource}, n, None))
        family(DURATION, "histogram")
        for label in sorted(self.durations):
            counts = self.durations[label]
            for bound, n in zip(DURATION_BUCKETS, counts, strict=False):
                out.append(line(f"{DURATION}_bucket", {"success": label, "le": str(bound)}, n, None))
            out.append(line(f"{DURATION}_bucket", {"success": label, "le": "+Inf"}, counts[-1], None))
            out.append(line(f"{DURATION}_sum", {"success": label}, self.duration_sum[label], None))
            out.append(line(f"{DURATION}_count", {"success": label}, self.duration_count[label], None))
        family(PENDING, "gauge")
        for reason in sorted(self._pending_seen):
            out.append(line(PENDING, {"reason": reason}, pending.get(reason, 0), None))
        family(INFEASIBLE_TOTAL, "counter")
        for detail, n in sorted(self.infeasible.items()):
            out.append(line(INFEASIBLE_TOTAL, {"reason_detail": detail}, n, None))
        family(IN_PROGRESS, "gauge")
        out.append(line(IN_PROGRESS, {}, in_progress, None))
        family(DEFERRED_ACCEPTED, "counter")
        for trigger, n in sorted(self.deferred_accepted.items()):
            out.append(line(DEFERRED_ACCEPTED, {"retry_trigger": trigger}, n, None))
        return "\n".join(out) + "\n"


__all__ = ["DEFERRED_ACCEPTED", "DURATION", "DURATION_BUCKETS", "HELP", "INFEASIBLE_TOTAL", "IN_PROGRESS",
           "PENDING", "PERIODIC_RETRY", "PODS_ADDED", "PODS_REMOVED", "POD_RESIZED", "POD_TERMINATED",
           "POD_UPDATED", "REQUESTED", "ResizeMetrics", "TRIGGERS", "requested_operations", "resize_operation"]
