"""kube-scheduler's in-tree plugins that kvert implements, and the default profile.

=================================  =====================================  ========
plugin                             extension points                       weight
=================================  =====================================  ========
SchedulingGates                    PreEnqueue
PrioritySort                       QueueSort
NodeUnschedulable                  Filter
NodeName                           Filter
TaintToleration                    Filter, Score, NormalizeScore          3
NodeAffinity                       PreFilter, Filter, PreScore, Score     2
NodeResourcesFit                   PreFilter, Filter, PreScore, Score     1
NodeResourcesBalancedAllocation    PreScore, Score                        1
DefaultBinder                      Bind
RequestedToCapacityRatio (seed)    Score                                  (not default)
=================================  =====================================  ========

The order is Kubernetes' default ``multiPoint`` order, which is also the Filter order (a
node rejected by TaintToleration is reported with its taint, not with a lack of cpu).
Preemption (DefaultPreemption, PostFilter), inter-pod affinity, topology spread, ports,
volumes and DRA are not implemented yet; ``register_plugin`` adds a plugin to the registry.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kvert.scheduler.plugins.defaultbinder import DefaultBinder
from kvert.scheduler.plugins.nodeaffinity import NodeAffinity
from kvert.scheduler.plugins.nodebasics import NodeName, NodeUnschedulable
from kvert.scheduler.plugins.noderesources import (
    NodeResourcesBalancedAllocation, NodeResourcesFit, RequestedToCapacityRatio,
)
from kvert.scheduler.plugins.queuesort import PrioritySort, SchedulingGates
from kvert.scheduler.plugins.tainttoleration import TaintToleration

# name -> factory(args, handle)
REGISTRY: dict[str, Callable[..., Any]] = {
    cls.name: cls for cls in (
        SchedulingGates, PrioritySort, NodeUnschedulable, NodeName, TaintToleration, NodeAffinity,
        NodeResourcesFit, NodeResourcesBalancedAllocation, DefaultBinder, RequestedToCapacityRatio)
}

# Kubernetes' default multiPoint plugins (getDefaultPlugins), the ones kvert has, in order.
DEFAULT_PLUGINS: list[tuple[str, int]] = [
    ("SchedulingGates", 0),
    ("PrioritySort", 0),
    ("NodeUnschedulable", 0),
    ("NodeName", 0),
    ("TaintToleration", 3),
    ("NodeAffinity", 2),
    ("NodeResourcesFit", 1),
    ("NodeResourcesBalancedAllocation", 1),
    ("DefaultBinder", 0),
]


def register_plugin(name: str, factory: Callable[..., Any]) -> None:
    """Make an out-of-tree plugin available to profiles (``factory(args, handle)``)."""
    REGISTRY[name] = factory


__all__ = ["DEFAULT_PLUGINS", "REGISTRY", "register_plugin", "DefaultBinder", "NodeAffinity",
           "NodeName", "NodeResourcesBalancedAllocation", "NodeResourcesFit", "NodeUnschedulable",
           "PrioritySort", "RequestedToCapacityRatio", "SchedulingGates", "TaintToleration"]
