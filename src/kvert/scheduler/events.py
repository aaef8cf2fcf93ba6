"""Cluster events and queueing hints (``framework.ClusterEvent``, ``QueueingHintFn``): which
changes of the cluster may make a pod a plugin rejected schedulable again."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import IntFlag
from typing import Any


class ActionType(IntFlag):
    """``framework.ActionType``: what happened to an object."""

    ADD = 1
    DELETE = 2
    UPDATE_NODE_ALLOCATABLE = 4
    UPDATE_NODE_LABEL = 8
    UPDATE_NODE_TAINT = 16
    UPDATE_NODE_CONDITION = 32
    UPDATE_NODE_ANNOTATION = 64
    UPDATE_POD_LABEL = 128
    UPDATE_POD_SCALE_DOWN = 256
    UPDATE_POD_TOLERATION = 512
    UPDATE_POD_SCHEDULING_GATES_ELIMINATED = 1024
    UPDATE_POD_GENERATED_RESOURCE_CLAIM = 2048
    UPDATE_NODE_DECLARED_FEATURE = 4096
    # a bound pod's requests grew (upstream's UpdatePodScaleUp; KEP-5836 requeues a parked
    # Deferred resize of the same node on it)
    UPDATE_POD_SCALE_UP = 8192
    # a node's spec.podPreemptionPolicy changed (upstream's UpdateNodePreemptionPolicy, KEP-5836)
    UPDATE_NODE_PREEMPTION_POLICY = 16384
    UPDATE = (UPDATE_NODE_ALLOCATABLE | UPDATE_NODE_LABEL | UPDATE_NODE_TAINT
              | UPDATE_NODE_CONDITION | UPDATE_NODE_ANNOTATION | UPDATE_POD_LABEL
              | UPDATE_POD_SCALE_DOWN | UPDATE_POD_TOLERATION
              | UPDATE_POD_SCHEDULING_GATES_ELIMINATED | UPDATE_POD_GENERATED_RESOURCE_CLAIM
              | UPDATE_NODE_DECLARED_FEATURE | UPDATE_POD_SCALE_UP | UPDATE_NODE_PREEMPTION_POLICY)
    ALL = ADD | DELETE | UPDATE


NODE = "Node"
POD = "Pod"
ASSIGNED_POD = "AssignedPod"
WILDCARD = "*"


@dataclass(frozen=True)
class ClusterEvent:
    resource: str
    action: ActionType
    label: str = ""

    def matches(self, registered: ClusterEvent) -> bool:
        if registered.resource not in (WILDCARD, self.resource):
            # a plugin registering Pod events sees assigned-pod events too
            if not (registered.resource == POD and self.resource == ASSIGNED_POD):
                return False
        return bool(registered.action & self.action)

    def __str__(self) -> str:
        return self.label or f"{self.resource}/{self.action.name or int(self.action)}"


QUEUE = True
QUEUE_SKIP = False
# hint(pod, old, new) -> QUEUE / QUEUE_SKIP
QueueingHintFn = Callable[[dict, Any, Any], bool]


@dataclass
class ClusterEventWithHint:
    event: ClusterEvent
    hint: QueueingHintFn | None = None


EVENT_NODE_ADD = ClusterEvent(NODE, ActionType.ADD, "NodeAdd")
EVENT_ASSIGNED_POD_DELETE = ClusterEvent(ASSIGNED_POD, ActionType.DELETE, "AssignedPodDelete")
EVENT_UNSCHEDULABLE_TIMEOUT = ClusterEvent(WILDCARD, ActionType.ALL, "UnschedulableTimeout")


__all__ = ["ASSIGNED_POD", "EVENT_ASSIGNED_POD_DELETE", "EVENT_NODE_ADD", "EVENT_UNSCHEDULABLE_TIMEOUT",
           "NODE", "POD", "QUEUE", "QUEUE_SKIP", "WILDCARD", "ActionType", "ClusterEvent",
           "ClusterEventWithHint", "QueueingHintFn"]
