"""kube-scheduler's in-tree plugins that kvert implements, and the default profile.

=================================  ==============================================  ========
plugin                             extension points                                weight
=================================  ==============================================  ========
SchedulingGates                    PreEnqueue
PrioritySort                       QueueSort
NodeUnschedulable                  Filter
NodeName                           Filter
TaintToleration                    Filter, PreScore, Score, NormalizeScore          3
NodeAffinity                       PreFilter, Filter, PreScore, Score               2
NodePorts                          PreFilter, Filter
NodeResourcesFit                   PreFilter, Filter, PreScore, Score               1
VolumeRestrictions, NodeVolumeLimits, VolumeBinding (1), VolumeZone: args accepted, no-ops
PodTopologySpread                  PreFilter(+Ext), Filter, PreScore, Score, Norm.  2
InterPodAffinity                   PreFilter(+Ext), Filter, PreScore, Score, Norm.  2
DynamicResources                   PreEnqueue, PreFilter, Filter, PostFilter,
                                   Reserve, PreBind
DefaultPreemption                  PostFilter
NodeResourcesBalancedAllocation    PreScore, Score                                  1
ImageLocality                      Score                                            1
DefaultBinder                      Bind
GangScheduling (alpha)             PreEnqueue, Reserve, Permit                      (not default)
NodeDeclaredFeatures (alpha)       PreFilter, Filter                                (not default)
RequestedToCapacityRatio (seed)    Score                                            (not default)
=================================  ==============================================  ========

The order is kube-scheduler 1.35's default ``multiPoint`` order (``getDefaultPlugins`` with
DynamicResources before DefaultPreemption), which is also the Filter order (a node rejected
by TaintToleration is reported with its taint, not with a lack of cpu). GangScheduling and
NodeDeclaredFeatures are alpha in 1.35 (feature gates GenericWorkload / GangScheduling and
NodeDeclaredFeatures, off by default): a configuration enables them. The in-tree cloud
volume-limit plugins of older releases (EBSLimits, GCEPDLimits, AzureDiskLimits, CinderLimits)
are accepted by name as no-ops, so older configurations load. ``register_plugin`` adds a
plugin to the registry.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kvert.scheduler.plugins.defaultbinder import DefaultBinder
from kvert.scheduler.plugins.defaultpreemption import DefaultPreemption
from kvert.scheduler.plugins.dynamicresources import DynamicResources
from kvert.scheduler.plugins.gangscheduling import GangScheduling
from kvert.scheduler.plugins.imagelocality import ImageLocality
from kvert.scheduler.plugins.interpodaffinity import InterPodAffinity
from kvert.scheduler.plugins.nodeaffinity import NodeAffinity
from kvert.scheduler.plugins.nodebasics import NodeName, NodeUnschedulable
from kvert.scheduler.plugins.nodedeclaredfeatures import NodeDeclaredFeatures
from kvert.scheduler.plugins.nodeports import NodePorts
from kvert.scheduler.plugins.noderesources import (
    NodeResourcesBalancedAllocation,
    NodeResourcesFit,
    RequestedToCapacityRatio,
)
from kvert.scheduler.plugins.podtopologyspread import PodTopologySpread
from kvert.scheduler.plugins.queuesort import PrioritySort, SchedulingGates
from kvert.scheduler.plugins.tainttoleration import TaintToleration
from kvert.scheduler.plugins.volumes import NO_OP_PLUGINS, legacy_volume_limits

# name -> factory(args, handle)
REGISTRY: dict[str, Callable[..., Any]] = {
    cls.name: cls for cls in (
        SchedulingGates, PrioritySort, NodeUnschedulable, NodeName, TaintToleration, NodeAffinity,
        NodePorts, NodeResourcesFit, PodTopologySpread, InterPodAffinity, DefaultPreemption,
        NodeResourcesBalancedAllocation, ImageLocality, DefaultBinder, RequestedToCapacityRatio,
        GangScheduling, NodeDeclaredFeatures, DynamicResources, *NO_OP_PLUGINS)
}
REGISTRY.update(legacy_volume_limits())

# kube-scheduler 1.35's default multiPoint plugins (getDefaultPlugins), in order.
DEFAULT_PLUGINS: list[tuple[str, int]] = [
    ("SchedulingGates", 0),
    ("PrioritySort", 0),
    ("NodeUnschedulable", 0),
    ("NodeName", 0),
    ("TaintToleration", 3),
    ("NodeAffinity", 2),
    ("NodePorts", 0),
    ("NodeResourcesFit", 1),
    ("VolumeRestrictions", 0),
    ("NodeVolumeLimits", 0),
    ("VolumeBinding", 0),
    ("VolumeZone", 0),
    ("PodTopologySpread", 2),
    ("InterPodAffinity", 2),
    ("DynamicResources", 0),
    ("DefaultPreemption", 0),
    ("NodeResourcesBalancedAllocation", 1),
    ("ImageLocality", 1),
    ("DefaultBinder", 0),
]


def register_plugin(name: str, factory: Callable[..., Any]) -> None:
    """Make an out-of-tree plugin available to profiles (``factory(args, handle)``)."""
    REGISTRY[name] = factory


__all__ = ["DEFAULT_PLUGINS", "REGISTRY", "register_plugin", "DefaultBinder", "DefaultPreemption",
           "ImageLocality", "InterPodAffinity", "NodeAffinity", "NodeName", "NodePorts",
           "NodeResourcesBalancedAllocation", "NodeResourcesFit", "NodeUnschedulable",
           "PodTopologySpread", "PrioritySort", "RequestedToCapacityRatio", "SchedulingGates",
           "TaintToleration"]
