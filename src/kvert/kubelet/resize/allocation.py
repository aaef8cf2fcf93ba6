"""Allocations: the requests and limits a pod's containers are given, as integers.

An allocation maps a container's name to its :data:`Requirements`. These functions compare
allocations, merge a resize into one, and compute what a pod would request, hold or show
with a given allocation (the numbers the decision and the status are made of).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kvert.api.pods import container_limits, container_requests, is_restartable_init_container, pod_requests
from kvert.api.quantity import BINARY_SI, DECIMAL_SI, to_quantity
from kvert.api.resources import ResourceList, is_byte_resource, max_of, parse_resource_list
from kvert.kubelet.cgroups import (
    MIN_QUOTA_PERIOD,
    MIN_SHARES,
    milli_cpu_to_quota,
    milli_cpu_to_shares,
    quota_to_milli_cpu,
    shares_to_milli_cpu,
)
from kvert.kubelet.checkpoint import Requirements
from kvert.kubelet.runtime.base import LinuxContainerResources

NOT_REQUIRED = "NotRequired"
RESTART_CONTAINER = "RestartContainer"

RESIZABLE = ("cpu", "memory")

Allocation = Mapping[str, Requirements]

# The allocation's entry for the pod-level ``spec.resources`` (KEP-5419): kept in the same
# mapping as the containers' so that one write checkpoints both, as upstream's PodResourceInfo
# holds ContainerResources and PodLevelResources together. No container has an empty name.
POD_LEVEL = ""


@dataclass(frozen=True)
class ResizeScope:
    """What this node resizes beyond app containers and sidecars (its feature gates)."""
    pod_level: bool = True          # InPlacePodLevelResourcesVerticalScaling (beta, on in 1.36)
    init_containers: bool = True    # InPlacePodVerticalScalingInitContainers (beta, on in 1.36)


DEFAULT_SCOPE = ResizeScope()


# -- formatting ------------------------------------------------------------------------------------

def format_list(rl: Mapping[str, int]) -> dict[str, str]:
    """Integers back to quantities: cpu ``1500m``, memory ``500Mi`` when a whole number of
    KiB (binary), else decimal -- close to how Kubernetes echoes the spec's quantities."""
    out = {}
    for name, amount in rl.items():
        fmt = BINARY_SI if is_byte_resource(name) and amount % 1024 == 0 else DECIMAL_SI
        out[name] = to_quantity(name, amount, fmt)
    return out


def format_requirements(req: Requirements) -> dict[str, dict[str, str]]:
    out = {}
    for part in ("requests", "limits"):
        if req.get(part):
            out[part] = format_list(req[part])
    return out


def _summary_resources(req: Requirements) -> dict[str, dict[str, str]]:
    # a ResourceRequirements as Go marshals it: limits before requests, empty parts left out
    return {part: format_list(req[part]) for part in ("limits", "requests") if req.get(part)}


def resize_message(pod: Mapping[str, Any], allocation: Allocation, error: str = "",
                   scope: ResizeScope = DEFAULT_SCOPE) -> str:
    """The JSON summary upstream's resize events carry (``makeResourceSummaryFromSpec``):
    ``{"initContainers":[...],"containers":[{"name":...,"resources":{...}}],"generation":N}``,
    every init container and container at ``allocation`` (the spec where it has none), and
    ``"error"`` for a ResizeError or a pending resize's message. ``scope`` is accepted for the
    callers' symmetry: upstream lists every container whatever is resizable."""
    spec = pod.get("spec") or {}
    wanted: Allocation | None = None

    def entry(c: Mapping[str, Any]) -> dict[str, Any]:
        nonlocal wanted
        name = c.get("name", "")
        req = allocation.get(name)
        if req is None:
            if wanted is None:
                wanted = spec_allocation(pod, scope)
            req = wanted.get(name) or {}
        out: dict[str, Any] = {"name": name}
        resources = _summary_resources(req)
        out["resources"] = resources
        return out
    payload: dict[str, Any] = {}
    if spec.get("initContainers"):
        payload["initContainers"] = [entry(c) for c in spec["initContainers"]]
    if spec.get("containers"):
        payload["containers"] = [entry(c) for c in spec["containers"]]
    payload["generation"] = (pod.get("metadata") or {}).get("generation") or 0
    if error:
        payload["error"] = error
    return json.dumps(payload, separators=(",", ":"))


# -- the containers and what the spec asks for -----------------------------------------------------

def allocatable_containers(pod: Mapping[str, Any]) -> list[tuple[dict[str, Any], str]]:
    """Every container with its kind: ``init``, ``sidecar`` or ``app`` (spec order, init first)."""
    spec = pod.get("spec") or {}
    out = []
    for c in spec.get("initContainers") or []:
        out.append((c, "sidecar" if is_restartable_init_container(c) else "init"))
    for c in spec.get("containers") or []:
        out.append((c, "app"))
    return out


def pod_level_requirements(pod: Mapping[str, Any]) -> Requirements | None:
    """The pod-level ``spec.resources`` as written (None without them): what upstream's
    allocation manager checkpoints as the pod's PodLevelResources."""
    res = (pod.get("spec") or {}).get("resources")
    if res is None:
        return None
    return {"requests": parse_resource_list(res.get("requests"), "spec.resources.requests"),
            "limits": parse_resource_list(res.get("limits"), "spec.resources.limits")}


def spec_allocation(pod: Mapping[str, Any], scope: ResizeScope = DEFAULT_SCOPE) -> dict[str, Requirements]:
    """What the spec asks for, per container (requests defaulted from limits), and for the
    pod level under :data:`POD_LEVEL` when the pod sets ``spec.resources`` and the node
    resizes them (upstream ``allocationFromPod``)."""
    out: dict[str, Requirements] = {
        c.get("name", ""): {"requests": container_requests(c), "limits": container_limits(c)}
        for c, _ in allocatable_containers(pod)}
    if scope.pod_level:
        level = pod_level_requirements(pod)
        if level is not None:
            out[POD_LEVEL] = level
    return out


def resizable_names(pod: Mapping[str, Any], scope: ResizeScope = DEFAULT_SCOPE) -> list[str]:
    """The containers a resize may change (upstream ``IsResizableContainer``): app containers
    and sidecars, and regular init containers while InPlacePodVerticalScalingInitContainers
    is on (1.36, kubernetes#137352)."""
    return [c.get("name", "") for c, kind in allocatable_containers(pod)
            if kind != "init" or scope.init_containers]


def resizable_keys(pod: Mapping[str, Any], scope: ResizeScope = DEFAULT_SCOPE) -> list[str]:
    """:func:`resizable_names` and, when the node resizes them, the pod-level resources."""
    names = resizable_names(pod, scope)
    return [*names, POD_LEVEL] if scope.pod_level else names


def _cpu_mem(req: Requirements | None) -> tuple[int, ...]:
    req = req or {}
    r, lim = req.get("requests") or {}, req.get("limits") or {}
    return tuple((part.get(k) or 0) for part in (r, lim) for k in RESIZABLE)


def same_requirements(a: Requirements | None, b: Requirements | None) -> bool:
    """Equal cpu and memory requests and limits (the resizable resources)."""
    return _cpu_mem(a) == _cpu_mem(b)


def resize_requested(pod: Mapping[str, Any], allocated: Allocation, scope: ResizeScope = DEFAULT_SCOPE,
                     wanted: Allocation | None = None) -> bool:
    """The spec differs from the allocation: a proposed resize."""
    if wanted is None:
        wanted = spec_allocation(pod, scope)
    return any(not same_requirements(wanted.get(n), allocated.get(n)) for n in resizable_keys(pod, scope))


def merged_allocation(pod: Mapping[str, Any], allocated: Allocation,
                      wanted: Allocation | None = None,
                      scope: ResizeScope = DEFAULT_SCOPE) -> dict[str, Requirements]:
    """The allocation a resize would grant: the spec for what the node resizes, the current
    allocation for the rest. ``wanted`` is ``spec_allocation(pod, scope)`` if known."""
    if wanted is None:
        wanted = spec_allocation(pod, scope)
    resizable = set(resizable_keys(pod, scope))
    out = {}
    for name, req in wanted.items():
        source = req if name in resizable or name not in allocated else allocated[name]
        out[name] = {"requests": dict(source.get("requests") or {}),
                     "limits": dict(source.get("limits") or {})}
    if POD_LEVEL in allocated and POD_LEVEL not in out:
        level = allocated[POD_LEVEL]
        out[POD_LEVEL] = {"requests": dict(level.get("requests") or {}),
                          "limits": dict(level.get("limits") or {})}
    return out


# -- the pod as an allocation makes it ---------------------------------------------------------------

def with_allocation(pod: Mapping[str, Any], allocation: Allocation) -> dict[str, Any]:
    """The pod as if its containers carried ``allocation`` as their resources (the view
    cgroup values and requests are computed from); status is dropped. It shares with ``pod``
    every value it does not change (the kubelet asks for this view many times a resize):
    read it, never change it."""
    out = {k: v for k, v in pod.items() if k != "status"}
    qos = (pod.get("status") or {}).get("qosClass")
    if qos:
        out["status"] = {"qosClass": qos}
    spec = out["spec"] = dict(out.get("spec") or {})
    level = allocation.get(POD_LEVEL)
    if level is not None:
        # the allocated pod-level resources replace the spec's (updatePodFromAllocation)
        spec["resources"] = {part: format_list(level[part]) for part in ("requests", "limits")
                             if level.get(part)}
    for key in ("initContainers", "containers"):
        if spec.get(key):
            spec[key] = [dict(c) for c in spec[key]]
        for c in spec.get(key) or []:
            req = allocation.get(c.get("name", ""))
            if req is None:
                continue
            resources = dict(c.get("resources") or {})
            for part in ("requests", "limits"):
                if req.get(part):
                    resources[part] = format_list(req[part])
                else:
                    resources.pop(part, None)
            c["resources"] = resources
    return out


def requests_of(pod: Mapping[str, Any], allocation: Allocation) -> ResourceList:
    """The pod's requests (overhead included) if its containers had ``allocation``: the same
    rule as ``kvert.api.pods.pod_requests`` (app containers and sidecars add up, a regular
    init container runs next to the sidecars started before it), on integers."""
    spec = pod.get("spec") or {}
    if spec.get("resources") or POD_LEVEL in allocation:
        return pod_requests(with_allocation(pod, allocation))     # pod-level resources: rare
    empty: dict[str, int] = {}

    def own(c: Mapping[str, Any]) -> Mapping[str, int]:
        req = allocation.get(c.get("name", ""))
        return (req.get("requests") or empty) if req is not None else container_requests(c)

    result: dict[str, int] = {}
    for c in spec.get("containers") or []:
        for k, v in own(c).items():
            result[k] = result.get(k, 0) + v
    if spec.get("initContainers"):
        sidecars: dict[str, int] = {}
        peak: dict[str, int] = {}
        for c in spec["initContainers"]:
            mine = own(c)
            if is_restartable_init_container(c):
                for k, v in mine.items():
                    result[k] = result.get(k, 0) + v
                    sidecars[k] = sidecars.get(k, 0) + v
                phase = sidecars
            else:
                phase = {k: mine.get(k, 0) + sidecars.get(k, 0) for k in {*mine, *sidecars}}
            peak = max_of(peak, phase)
        result = max_of(result, peak)
    overhead = spec.get("overhead")
    if overhead:
        for k, v in parse_resource_list(overhead, "spec.overhead").items():
            result[k] = result.get(k, 0) + v
    return result


def holding(pod: Mapping[str, Any], allocated: Allocation, actuated: Allocation) -> ResourceList:
    """What an admitted pod holds on the node: its allocated requests, or what is still
    actuated when that is larger (a downsize not yet applied)."""
    held = requests_of(pod, allocated)
    if actuated:
        merged = {name: actuated.get(name, req) for name, req in allocated.items()}
        held = max_of(held, requests_of(pod, merged))
    return held


def is_increasing(pod: Mapping[str, Any], allocated: Allocation, wanted: Allocation | None = None,
                  scope: ResizeScope = DEFAULT_SCOPE) -> bool:
    """Kubernetes ``isResizeIncreasingRequests``: would cpu or memory requests grow?"""
    old = requests_of(pod, allocated)
    new = requests_of(pod, merged_allocation(pod, allocated, wanted, scope))
    return new.get("cpu", 0) > old.get("cpu", 0) or new.get("memory", 0) > old.get("memory", 0)


# -- restarts ------------------------------------------------------------------------------------------

def resize_policy(container: Mapping[str, Any], resource: str) -> str:
    for p in container.get("resizePolicy") or []:
        if p.get("resourceName") == resource:
            return str(p.get("restartPolicy") or NOT_REQUIRED)
    return NOT_REQUIRED


def needs_restart(container: Mapping[str, Any], old: Requirements | None, new: Requirements | None) -> bool:
    """A changed resource whose policy is RestartContainer (it wins over NotRequired)."""
    old, new = old or {}, new or {}
    for resource in RESIZABLE:
        changed = any((old.get(part) or {}).get(resource, 0) != (new.get(part) or {}).get(resource, 0)
                      for part in ("requests", "limits"))
        if changed and resize_policy(container, resource) == RESTART_CONTAINER:
            return True
    return False


# -- actual resources read back from the runtime ---------------------------------------------------

def actual_requirements(linux: LinuxContainerResources | None, allocated: Requirements,
                        hold_memory: int | None = None) -> Requirements:
    """``status.containerStatuses[].resources`` from what ContainerStatus reports (Kubernetes
    ``convertToAPIContainerStatuses``): cpu request from cpu.shares, cpu limit from the CFS
    quota, memory limit from the memory limit; memory request and other resources from the
    allocation (they are not cgroup values). Values at the cgroup minimum keep the allocated
    number (2 shares / 1ms quota cannot tell 1m from 2m)."""
    requests = dict(allocated.get("requests") or {})
    limits = dict(allocated.get("limits") or {})
    if linux is not None:
        if "cpu" in requests:
            alloc = requests["cpu"]
            if not (linux.cpu_shares <= MIN_SHARES and milli_cpu_to_shares(alloc) <= MIN_SHARES):
                requests["cpu"] = shares_to_milli_cpu(linux.cpu_shares)
        if "cpu" in limits and linux.cpu_quota > 0:
            alloc = limits["cpu"]
            if not (linux.cpu_quota <= MIN_QUOTA_PERIOD and
                    milli_cpu_to_quota(alloc, linux.cpu_period) <= MIN_QUOTA_PERIOD):
                limits["cpu"] = quota_to_milli_cpu(linux.cpu_quota, linux.cpu_period)
        if "memory" in limits and linux.memory_limit_in_bytes > 0:
            limits["memory"] = linux.memory_limit_in_bytes
    if hold_memory is not None and "memory" in limits:
        limits["memory"] = hold_memory
    return {"requests": requests, "limits": limits}
