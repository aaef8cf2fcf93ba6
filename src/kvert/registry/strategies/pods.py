"""Pods, as upstream's ``pkg/registry/core/pod/strategy.go`` splits them: the pod itself,
``pods/status`` (the node agent's), ``pods/resize`` (container resources only) and
``pods/ephemeralcontainers`` (the debugging containers ``kubectl debug`` adds).
``pods/binding`` and ``pods/eviction`` are not updates of the pod: the registry's ``bind``
and ``kvert.registry.eviction`` serve them."""

from __future__ import annotations

from typing import cast

from kvert.api import pods, validation
from kvert.api.defaults import default_container
from kvert.api.errors import Cause
from kvert.api.kinds import ResourceType
from kvert.api.meta import deep_copy
from kvert.api.quantity import QuantityError
from kvert.api.types import Obj, Pod
from kvert.auth.user import User
from kvert.clock import Clock
from kvert.registry.strategies.base import (
    DefaultStrategy,
    StatusStrategy,
    SubresourceStrategy,
    copy_free_update,
    with_resource_version_of,
)

# Kubernetes' default terminationGracePeriodSeconds.
_DEFAULT_GRACE_SECONDS = 30

_validate_pod_resize = copy_free_update(validation.validate_pod_resize)
_validate_pod_ephemeral_containers = copy_free_update(validation.validate_pod_ephemeral_containers)


class PodStrategy(DefaultStrategy):
    """A pod starts Pending, with the QoS class its resources give it; it is deleted
    gracefully once a node runs it."""

    def prepare_for_create(self, rt: ResourceType, obj: Obj, requester: User | None) -> None:
        obj["status"] = {"phase": "Pending"}
        try:
            # a pod's shape read as the API's (validation refuses what does not fit)
            obj["status"]["qosClass"] = pods.compute_qos_class(cast(Pod, obj))
        except QuantityError:
            pass   # validation refuses the quantity, naming its field
        if (obj.get("spec") or {}).get("schedulingGates"):
            # applySchedulingGatedCondition: the pod says why it waits before any scheduler runs
            obj["status"]["conditions"] = [{
                "type": "PodScheduled", "status": "False", "reason": "SchedulingGated",
                "message": "Scheduling is blocked due to non-empty scheduling gates"}]

    def grace_period_seconds(self, rt: ResourceType, obj: Obj, requested: int | None) -> int:
        if requested is not None:
            return requested
        # a pod no node runs, or whose containers are done, has nothing to wait for
        phase = (obj.get("status") or {}).get("phase")
        if not (obj.get("spec") or {}).get("nodeName") or phase in ("Succeeded", "Failed"):
            return 0
        grace = (obj.get("spec") or {}).get("terminationGracePeriodSeconds")
        return _DEFAULT_GRACE_SECONDS if grace is None else int(grace)


class PodStatusStrategy(StatusStrategy):
    """``pods/status``: the node agent's and the scheduler's view of the pod; the spec and
    metadata stay the stored ones. An observedGeneration the write leaves unset (or 0), in
    the status or in a condition, keeps the stored value (upstream's
    preserveOldObservedGeneration; conditions matched by type, in order)."""

    def prepare_for_update(self, rt: ResourceType, new: Obj, old: Obj, clock: Clock) -> Obj:
        merged = super().prepare_for_update(rt, new, old, clock)
        preserve_observed_generation(merged, old)
        return merged


def preserve_observed_generation(new: Obj, old: Obj) -> None:
    status, old_status = new.get("status"), old.get("status") or {}
    if not isinstance(status, dict):
        return
    if not status.get("observedGeneration") and old_status.get("observedGeneration"):
        status["observedGeneration"] = old_status["observedGeneration"]
    remembered: dict[object, list[object]] = {}
    for cond in old_status.get("conditions") or []:
        if isinstance(cond, dict):
            remembered.setdefault(cond.get("type"), []).append(cond.get("observedGeneration"))
    for cond in status.get("conditions") or []:
        if not isinstance(cond, dict):
            continue
        earlier = remembered.get(cond.get("type")) or [None]
        generation = earlier.pop(0)
        if not cond.get("observedGeneration") and generation:
            cond["observedGeneration"] = generation


class PodResizeStrategy(SubresourceStrategy):
    """``pods/resize``: container resources and resizePolicy only. As Kubernetes does, other
    changes sent to /resize are dropped, not refused."""

    def prepare_for_update(self, rt: ResourceType, new: Obj, old: Obj, clock: Clock) -> Obj:
        return merge_resize(new, old)

    def validate_update(self, rt: ResourceType, new: Obj, old: Obj) -> list[Cause]:
        return _validate_pod_resize(new, old)


class PodEphemeralContainersStrategy(SubresourceStrategy):
    """``pods/ephemeralcontainers``: ``spec.ephemeralContainers`` only; as Kubernetes'
    ``dropNonEphemeralContainerUpdates``, every other change sent there is dropped."""

    def prepare_for_update(self, rt: ResourceType, new: Obj, old: Obj, clock: Clock) -> Obj:
        return merge_ephemeral_containers(new, old)

    def validate_update(self, rt: ResourceType, new: Obj, old: Obj) -> list[Cause]:
        return _validate_pod_ephemeral_containers(new, old)


def merge_ephemeral_containers(new: Obj, old: Obj) -> Obj:
    """The stored pod with the write's ephemeral containers (copied: defaulting and admission
    may change them); the rest shared with ``old``, which the write path only reads."""
    merged = dict(old)
    merged["metadata"] = dict(old["metadata"])
    spec = merged["spec"] = dict(old["spec"])
    wanted = (new.get("spec") or {}).get("ephemeralContainers")
    if wanted:
        spec["ephemeralContainers"] = deep_copy(wanted)
        for c in spec["ephemeralContainers"]:
            if isinstance(c, dict):
                default_container(c, host_network=False)    # as decoding the write would
    else:
        spec.pop("ephemeralContainers", None)
    return with_resource_version_of(merged, new)


def merge_resize(new: Obj, old: Obj) -> Obj:
    """The pod a ``/resize`` write produces: container resources and resizePolicy only.

    As ``merge_status_update``, it shares with ``old`` (the stored object, the caller's to
    give away) what the write path only reads: the status and the spec's other fields. The
    metadata and spec are new dicts and the containers copies (admission may change their
    resources: LimitRanger)."""
    new_spec = new.get("spec") or {}
    if any(len(new_spec.get(f) or []) != len((old.get("spec") or {}).get(f) or [])
           for f in ("containers", "initContainers")):
        # as dropNonResizeUpdates: containers added or removed are left for the validation
        # to refuse, not silently dropped
        return with_resource_version_of(
            {**new, "status": old.get("status"), "metadata": dict(old["metadata"])}, new)
    merged = dict(old)
    merged["metadata"] = dict(old["metadata"])
    spec = merged["spec"] = dict(old["spec"])
    if "resources" in new_spec or "resources" in spec:
        # pod-level resources (KEP-5419); the validation decides whether they may change
        if "resources" in new_spec:
            spec["resources"] = deep_copy(new_spec["resources"])
        else:
            spec.pop("resources", None)
    # Sidecars (restartable init containers) resize like app containers; validation refuses
    # changes to ordinary init containers.
    for field_name in ("containers", "initContainers"):
        wanted = {c.get("name"): c for c in (new.get("spec") or {}).get(field_name) or []}
        if field_name not in spec:
            continue
        spec[field_name] = deep_copy(spec[field_name])
        for container in spec[field_name] or []:
            source = wanted.get(container.get("name"))
            if source is None:
                continue
            for field in ("resources", "resizePolicy"):
                if field in source:
                    container[field] = deep_copy(source[field])
                else:
                    container.pop(field, None)
    return with_resource_version_of(merged, new)
