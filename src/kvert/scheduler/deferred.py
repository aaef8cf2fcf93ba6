"""Deferred in-place resizes the scheduler preempts for (KEP-5836, feature gate
``InPlacePodVerticalScalingSchedulerPreemption``, alpha in Kubernetes 1.37, off by default).

When the kubelet cannot fit a resize next to the other pods of its node it marks it
``Deferred`` (condition ``PodResizePending``, reason ``Deferred``) and retries whenever a pod
on the node changes or leaves. With the gate on, the scheduler also takes such a pod -- bound
already -- into its queue and runs a reduced scheduling cycle for it:

* only its own node is considered (NodeName), and only the plugins that handle a deferred
  resize run (:data:`HANDLES_DEFERRED_RESIZE`: NodeName, NodeResourcesFit,
  DeferredPodScheduling at PreFilter/Filter/Permit, DefaultPreemption at PostFilter); the
  others are skipped as upstream's return ``Skip`` from PreFilter for such a pod;
* NodeResourcesFit counts only what the resize adds to what the node already holds for the
  pod (``adjustDeltasToAccomodateCacheDiscrepancy``);
* when it does not fit, DefaultPreemption picks lower-priority victims on that node with the
  usual rules (PDBs, ``preemptionPolicy: Never``) and preempts them (DisruptionTarget
  condition, graceful deletion, ``Preempted`` event); the kubelet then retries the resize;
* when it fits, DeferredPodScheduling's Permit parks the pod (``pod resize fits, waiting for
  Kubelet actuation``): the pod is never assumed or bound;
* either way the pod waits in the unschedulable pool, without the PodScheduled condition,
  the nominated node or a FailedScheduling event of an unscheduled pod, until an event on its
  node (a pod deleted or resized, the node's allocatable) or its own update requeues it; it
  leaves the queue when the resize is no longer Deferred, or the kubelet reports
  ``PodResizePreemptionDisabled`` (the node's ``spec.podPreemptionPolicy`` forbids it).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kvert.api.conditions import find_condition

GATE = "InPlacePodVerticalScalingSchedulerPreemption"
PREEMPTION_DISABLED_CONDITION = "PodResizePreemptionDisabled"
# a plugin class attribute: the plugin runs in a deferred resize's scheduling cycle
HANDLES_DEFERRED_RESIZE = "handles_deferred_resize"


def is_pod_resize_deferred(pod: Mapping[str, Any]) -> bool:
    """``resource.IsPodResizeDeferred``: condition PodResizePending with reason Deferred."""
    pending = find_condition(pod.get("status"), "PodResizePending")
    return pending is not None and pending.get("reason") == "Deferred"


def resize_preemption_disabled(pod: Mapping[str, Any]) -> bool:
    """The kubelet reports that the node's policy forbids preempting for this resize."""
    cond = find_condition(pod.get("status"), PREEMPTION_DISABLED_CONDITION)
    return cond is not None and cond.get("status") == "True"


def node_disables_resize_preemption(node: Mapping[str, Any] | None) -> bool:
    """``spec.podPreemptionPolicy.disableResizePreemption`` lists at least one owner."""
    policy = ((node or {}).get("spec") or {}).get("podPreemptionPolicy") or {}
    return bool(policy.get("disableResizePreemption"))


def wants_resize_preemption(pod: Mapping[str, Any]) -> bool:
    """A bound, live pod whose resize is Deferred and may preempt: the scheduler queues it."""
    meta = pod.get("metadata") or {}
    return (bool((pod.get("spec") or {}).get("nodeName")) and not meta.get("deletionTimestamp")
            and is_pod_resize_deferred(pod) and not resize_preemption_disabled(pod))


def handles_deferred_resize(plugin: object) -> bool:
    return bool(getattr(plugin, HANDLES_DEFERRED_RESIZE, False))


__all__ = ["GATE", "HANDLES_DEFERRED_RESIZE", "PREEMPTION_DISABLED_CONDITION",
           "handles_deferred_resize", "is_pod_resize_deferred", "node_disables_resize_preemption",
           "resize_preemption_disabled", "wants_resize_preemption"]
