"""NodeUnschedulable and NodeName (Filter)."""

from __future__ import annotations

from kvert.api.taints import tolerations_tolerate_taint
from kvert.scheduler.framework import (
    NODE,
    QUEUE,
    QUEUE_SKIP,
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    FilterResult,
    Plugin,
)
from kvert.scheduler.snapshot import NodeSet

TAINT_NODE_UNSCHEDULABLE = "node.kubernetes.io/unschedulable"


def _name(obj: dict | None) -> str:
    return ((obj or {}).get("metadata") or {}).get("name", "")


class NodeUnschedulable(Plugin):
    """Rejects ``spec.unschedulable`` nodes unless the pod tolerates
    ``node.kubernetes.io/unschedulable:NoSchedule``."""

    name = "NodeUnschedulable"
    REASON = "node(s) were unschedulable"

    @staticmethod
    def tolerates(pod: dict) -> bool:
        return tolerations_tolerate_taint((pod.get("spec") or {}).get("tolerations"),
                                          {"key": TAINT_NODE_UNSCHEDULABLE, "effect": "NoSchedule"})

    def filter(self, state, pod: dict, nodes: NodeSet) -> FilterResult:
        flagged = nodes.cache.unschedulable[nodes.rows]
        if not flagged.any() or self.tolerates(pod):
            return FilterResult.ok(len(nodes))
        return FilterResult.reject(flagged, self.REASON)

    def events_to_register(self) -> list[ClusterEventWithHint]:
        def hint(pod: dict, old: dict | None, new: dict | None) -> bool:
            was = old is not None and not (old.get("spec") or {}).get("unschedulable")
            now = new is not None and not (new.get("spec") or {}).get("unschedulable")
            return QUEUE if (now and not was) else QUEUE_SKIP
        return [ClusterEventWithHint(
            ClusterEvent(NODE, ActionType.ADD | ActionType.UPDATE_NODE_TAINT), hint)]


class NodeName(Plugin):
    """A pod naming ``spec.nodeName`` fits only that node."""

    name = "NodeName"
    # a Deferred resize's cycle (KEP-5836) considers only the pod's own node
    handles_deferred_resize = True
    REASON = "node(s) didn't match the requested node name"

    def filter(self, state, pod: dict, nodes: NodeSet) -> FilterResult:
        wanted = (pod.get("spec") or {}).get("nodeName") or ""
        if not wanted:
            return FilterResult.ok(len(nodes))
        row = nodes.cache.row_of.get(wanted, -1)
        return FilterResult.reject(nodes.rows != row, self.REASON)

    def events_to_register(self) -> list[ClusterEventWithHint]:
        def hint(pod: dict, old: dict | None, new: dict | None) -> bool:
            wanted = (pod.get("spec") or {}).get("nodeName") or ""
            return QUEUE if (not wanted or wanted == _name(new)) else QUEUE_SKIP
        return [ClusterEventWithHint(ClusterEvent(NODE, ActionType.ADD), hint)]
