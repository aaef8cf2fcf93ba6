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
NodeDeclaredFeatures (beta)        PreFilter, Filter                                (default, gate)
DeferredPodScheduling (alpha)      PreFilter, Filter, Permit                        (gate, 1.37)
RequestedToCapacityRatio (seed)    Score                                            (not default)
=================================  ==============================================  ========

The order is kube-scheduler 1.36's default ``multiPoint`` order (``getDefaultPlugins`` and
``applyFeatureGates``: DynamicResources, weight 2, before DefaultPreemption; NodeDeclaredFeatures,
beta and on in 1.36, appended after DefaultBinder), which is also the Filter order (a node
rejected by TaintToleration is reported with its taint, not with a lack of cpu).
:func:`default_plugins` leaves NodeDeclaredFeatures out when its gate is off, as
``applyFeatureGates`` does. GangScheduling stays alpha in 1.36 (GenericWorkload /
GangScheduling, off): a configuration enables it. The in-tree cloud volume-limit plugins of
older releases (EBSLimits, GCEPDLimits, AzureDiskLimits, CinderLimits) are accepted by name as
no-ops, so older configurations load. DeferredPodScheduling (KEP-5836, 1.37 alpha) joins
the default profile, right after NodeName, only when its gate
(``InPlacePodVerticalScalingSchedulerPreemption``) is on; for any pod but a Deferred resize it
skips itself. ``register_plugin`` adds a plugin to the registry.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from kvert.api.features import enabled
from kvert.scheduler.deferred import GATE as RESIZE_PREEMPTION_GATE
from kvert.scheduler.plugins.defaultbinder import DefaultBinder
from kvert.scheduler.plugins.defaultpreemption import DefaultPreemption
from kvert.scheduler.plugins.deferredpodscheduling import DeferredPodScheduling
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
        GangScheduling, NodeDeclaredFeatures, DynamicResources, DeferredPodScheduling,
        *NO_OP_PLUGINS)
}
REGISTRY.update(legacy_volume_limits())

# kube-scheduler 1.36's default multiPoint plugins with 1.36's default gates, in order.
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
    ("DynamicResources", 2),
    ("DefaultPreemption", 0),
    ("NodeResourcesBalancedAllocation", 1),
    ("ImageLocality", 1),
    ("DefaultBinder", 0),
    ("NodeDeclaredFeatures", 0),
]
NODE_DECLARED_FEATURES_GATE = "NodeDeclaredFeatures"


def default_plugins(gates: Mapping[str, bool] | None = None) -> list[tuple[str, int]]:
    """``getDefaultPlugins`` for a scheduler's feature gates (1.36's defaults when unset)."""
    out = [(n, w) for n, w in DEFAULT_PLUGINS
           if n != "NodeDeclaredFeatures" or enabled(gates, NODE_DECLARED_FEATURES_GATE)]
    if enabled(gates, RESIZE_PREEMPTION_GATE):
        # right after NodeName, before NodeResourcesFit: a node whose policy forbids resize
        # preemption is reported by DeferredPodScheduling (so re-enabling it requeues the pod,
        # upstream's TestDeferredResizeNodePreemptionPolicy) and is never a preemption candidate
        at = next(i for i, (n, _) in enumerate(out) if n == "NodeName") + 1
        out.insert(at, ("DeferredPodScheduling", 0))
    return out


def register_plugin(name: str, factory: Callable[..., Any]) -> None:
    """Make an out-of-tree plugin available to profiles (``factory(args, handle)``)."""
    REGISTRY[name] = factory


__all__ = ["DEFAULT_PLUGINS", "REGISTRY", "default_plugins", "register_plugin", "DefaultBinder",
           "DefaultPreemption", "DeferredPodScheduling",
           "ImageLocality", "InterPodAffinity", "NodeAffinity", "NodeName", "NodePorts",
           "NodeResourcesBalancedAllocation", "NodeResourcesFit", "NodeUnschedulable",
           "PodTopologySpread", "PrioritySort", "RequestedToCapacityRatio", "SchedulingGates",
           "TaintToleration"]
