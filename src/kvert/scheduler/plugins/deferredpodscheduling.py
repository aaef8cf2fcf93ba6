"""DeferredPodScheduling (KEP-5836, ``InPlacePodVerticalScalingSchedulerPreemption``, alpha in
1.37): the scheduling cycle of a bound pod whose in-place resize the kubelet Deferred.

* PreFilter: Skip unless the gate is on and the pod's resize is Deferred;
* Filter: only the pod's own node (``pod assigned to different node``), and not a node whose
  ``spec.podPreemptionPolicy.disableResizePreemption`` lists an owner (``node had resize
  preemption disabled``; upstream's fallback for kubelets that do not yet report
  ``PodResizePreemptionDisabled``), both UnschedulableAndUnresolvable so preemption leaves
  the node alone;
* Permit: a Deferred resize that fits is rejected (``pod resize fits, waiting for Kubelet
  actuation``), so the pod waits in the unschedulable pool, never bound again, until the
  kubelet applies the resize or an event on its node requeues it;
* queueing hints: a node added, or its policy changing from disabled to enabled, requeues a
  Deferred pod of that node.

See :mod:`kvert.scheduler.deferred` for the whole cycle.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from kvert.scheduler.deferred import (
    GATE,
    is_pod_resize_deferred,
    node_disables_resize_preemption,
)
from kvert.scheduler.framework import (
    NODE,
    QUEUE,
    QUEUE_SKIP,
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    Code,
    CycleState,
    FilterResult,
    Handle,
    Plugin,
    Status,
)
from kvert.scheduler.snapshot import NodeSet

ERR_REASON_NODE_DISABLES_RESIZE_PREEMPTION = "node had resize preemption disabled"
ERR_REASON_OTHER_NODE = "pod assigned to different node"
MSG_RESIZE_FITS = "pod resize fits, waiting for Kubelet actuation"


class DeferredPodScheduling(Plugin):
    name = "DeferredPodScheduling"
    handles_deferred_resize = True

    def __init__(self, args: dict[str, Any] | None = None, handle: Handle | None = None, *,
                 enabled: bool | None = None):
        super().__init__(args, handle)
        # ``enabled`` overrides the handle's gate (upstream's unit tests set the field)
        self._enabled = enabled

    @property
    def gate_on(self) -> bool:
        if self._enabled is not None:
            return self._enabled
        return self.handle is not None and self.handle.feature_enabled(GATE)

    def _applies(self, pod: dict) -> bool:
        return self.gate_on and is_pod_resize_deferred(pod)

    def pre_filter(self, state: CycleState, pod: dict, nodes: NodeSet):
        if not self._applies(pod):
            return None, Status(Code.SKIP)
        return None, None

    def filter(self, state: CycleState, pod: dict, nodes: NodeSet) -> FilterResult:
        n = len(nodes)
        if not self._applies(pod):
            return FilterResult.ok(n)
        cache = nodes.cache
        wanted = (pod.get("spec") or {}).get("nodeName") or ""
        rows = nodes.rows
        other = np.zeros(n, bool)
        if wanted:
            other = rows != cache.row_of.get(wanted, -1)
        disabled = np.array([node_disables_resize_preemption(cache.node_objs[int(r)])
                             for r in rows], bool) & ~other
        codes = np.where(other | disabled, np.int8(Code.UNSCHEDULABLE_AND_UNRESOLVABLE),
                         np.int8(0)).astype(np.int8)
        return FilterResult(codes, [(ERR_REASON_OTHER_NODE, other),
                                    (ERR_REASON_NODE_DISABLES_RESIZE_PREEMPTION, disabled)])

    def permit(self, state: CycleState, pod: dict, node: str) -> tuple[Status | None, float]:
        if not self._applies(pod):
            return None, 0.0
        return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, MSG_RESIZE_FITS), 0.0

    # ---- queueing hints -------------------------------------------------------------------

    def is_schedulable_after_node_change(self, pod: dict, old: dict | None, new: dict | None
                                         ) -> bool:
        if not self._applies(pod) or new is None:
            return QUEUE_SKIP
        if (pod.get("spec") or {}).get("nodeName") != (new.get("metadata") or {}).get("name"):
            return QUEUE_SKIP
        if old is None:    # a node added with preemption enabled
            return QUEUE if not node_disables_resize_preemption(new) else QUEUE_SKIP
        if node_disables_resize_preemption(old) and not node_disables_resize_preemption(new):
            return QUEUE
        return QUEUE_SKIP

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [ClusterEventWithHint(
            ClusterEvent(NODE, ActionType.ADD | ActionType.UPDATE_NODE_PREEMPTION_POLICY),
            self.is_schedulable_after_node_change)]


__all__ = ["DeferredPodScheduling", "ERR_REASON_NODE_DISABLES_RESIZE_PREEMPTION",
           "ERR_REASON_OTHER_NODE", "MSG_RESIZE_FITS"]
