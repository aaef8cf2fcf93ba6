"""PrioritySort (QueueSort) and SchedulingGates (PreEnqueue)."""

from __future__ import annotations

from typing import Any

from kvert.scheduler.framework import (
    POD,
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    Code,
    Plugin,
    Status,
)


def pod_priority(pod: dict) -> int:
    """``corev1helpers.PodPriority``: ``spec.priority``, 0 when unset."""
    value = (pod.get("spec") or {}).get("priority")
    return int(value) if isinstance(value, int) and not isinstance(value, bool) else 0


class PrioritySort(Plugin):
    """Higher priority first; equal priorities by the time the pod entered the queue."""

    name = "PrioritySort"

    def less(self, a: Any, b: Any) -> bool:
        return self.sort_key(a) < self.sort_key(b)

    def sort_key(self, qpi: Any) -> tuple:
        return (-pod_priority(qpi.pod), qpi.timestamp, qpi.seq)


class SchedulingGates(Plugin):
    """A pod with ``spec.schedulingGates`` waits outside the active queue (seed 001 §5)."""

    name = "SchedulingGates"

    def pre_enqueue(self, pod: dict) -> Status | None:
        gates = (pod.get("spec") or {}).get("schedulingGates") or []
        if not gates:
            return None
        names = [g.get("name", "") if isinstance(g, dict) else str(g) for g in gates]
        return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                      "waiting for scheduling gates: [" + " ".join(names) + "]")

    def events_to_register(self) -> list[ClusterEventWithHint]:
        # the pod's own update lifting its gates is handled by the queue; no other event helps
        return [ClusterEventWithHint(ClusterEvent(POD, ActionType.UPDATE_POD_SCHEDULING_GATES_ELIMINATED),
                                     lambda pod, old, new: False)]
