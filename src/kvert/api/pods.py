"""A pod's effective requests, limits and QoS class, counted the way Kubernetes counts them.

Pods are plain dicts in their JSON (camelCase) form, read through the TypedDicts of
:mod:`kvert.api.types`; callers pass any mapping. The rules follow
``k8s.io/component-helpers/resource`` (PodRequests / PodLimits, used by the scheduler,
kubelet admission and quota) and ``pkg/apis/core/v1/helper/qos`` (GetPodQOS):

* app containers and restartable init containers (sidecars) run together, so they add up;
* a regular init container runs alone next to the sidecars started before it, so the pod
  needs at least (that init container + those sidecars) -- KEP-753's formula;
* pod-level ``spec.resources`` (KEP-2837), when set, replaces the container aggregate for
  the resources it names (cpu, memory, hugepages-*);
* ``spec.overhead`` is added on top (to limits only where a non-zero limit exists).

The API server's defaulting is applied here too, so results do not depend on whether a
pod dict has been through it: a container limit without a request makes request = limit,
and pod-level requests default from the containers' requests or else pod-level limits.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from kvert.api.conditions import find_condition
from kvert.api.resources import ResourceList, add, max_of, parse_resource_list
from kvert.api.types import Container, ContainerStatus, PodSpec, PodStatus, ResourceRequirements

PodLike = Mapping[str, Any]
"""A pod as callers hold it: a plain ``Obj`` or a typed :class:`kvert.api.types.Pod`."""
ContainerLike = Mapping[str, Any]

GUARANTEED = "Guaranteed"
BURSTABLE = "Burstable"
BEST_EFFORT = "BestEffort"

_QOS_RESOURCES = ("cpu", "memory")
_HUGEPAGES = "hugepages-"


def is_restartable_init_container(container: ContainerLike) -> bool:
    """A sidecar: an init container with ``restartPolicy: Always`` that keeps running."""
    return container.get("restartPolicy") == "Always"


def is_pod_level_resource(name: str) -> bool:
    """Resources that pod-level ``spec.resources`` may set."""
    return name in _QOS_RESOURCES or name.startswith(_HUGEPAGES)


def _resources(container: ContainerLike) -> ResourceRequirements:
    res: ResourceRequirements = container.get("resources") or {}
    return res


def container_requests(container: ContainerLike, *, path: str = "") -> ResourceList:
    """Requests after the API server's defaulting: a resource with a limit and no request
    requests its limit (SetDefaults_Pod), which is what makes limits-only pods Guaranteed."""
    res = _resources(container)
    prefix = f"{path}.resources" if path else "resources"
    requests = parse_resource_list(res.get("requests"), f"{prefix}.requests")
    for name, limit in parse_resource_list(res.get("limits"), f"{prefix}.limits").items():
        requests.setdefault(name, limit)
    return requests


def container_limits(container: ContainerLike, *, path: str = "") -> ResourceList:
    prefix = f"{path}.resources" if path else "resources"
    return parse_resource_list(_resources(container).get("limits"), f"{prefix}.limits")


def is_pod_resize_infeasible(pod: PodLike) -> bool:
    """The kubelet marked the pending resize Infeasible (condition PodResizePending)."""
    pending = find_condition(pod.get("status"), "PodResizePending")
    return pending is not None and pending.get("reason") == "Infeasible"


def _find_status(pod: PodLike, name: str) -> tuple[ContainerStatus | None, str]:
    """The container's status (containerStatuses first, then initContainerStatuses) and its path."""
    status: PodStatus = pod.get("status") or {}
    for key, statuses in (("containerStatuses", status.get("containerStatuses")),
                          ("initContainerStatuses", status.get("initContainerStatuses"))):
        for i, cs in enumerate(statuses or []):
            if cs.get("name") == name:
                return cs, f"status.{key}[{i}]"
    return None, ""


class _Pick:
    """One container as a getter sees it: spec, status (or None), whether resize is infeasible."""

    __slots__ = ("c", "cs", "infeasible", "path", "status_path")

    def __init__(self, c: ContainerLike, cs: ContainerStatus | None, infeasible: bool, path: str,
                 status_path: str):
        self.c, self.cs, self.infeasible, self.path, self.status_path = c, cs, infeasible, path, status_path

    def status_resources(self) -> ResourceRequirements:
        """What the runtime reports it applied (``status...resources``); ``{}`` if nothing."""
        if self.cs is None:
            return {}
        return self.cs.get("resources") or {}


Getter = Callable[[_Pick], "ResourceList | None"]


def _spec_requests(p: _Pick) -> ResourceList:
    return container_requests(p.c, path=p.path)


def _allocated_requests(p: _Pick) -> ResourceList | None:
    # What the kubelet admitted; before it reports anything, the spec (unless the resize is
    # infeasible: then the spec is a wish that will not be granted).
    if p.cs is not None and p.cs.get("allocatedResources") is not None:
        return parse_resource_list(p.cs["allocatedResources"], f"{p.status_path}.allocatedResources")
    return None if p.infeasible else container_requests(p.c, path=p.path)


def _actuated_requests(p: _Pick) -> ResourceList | None:
    # What the runtime actually applied (status resources), else allocated, else spec.
    actual = p.status_resources()
    if actual.get("requests") is not None:
        return parse_resource_list(actual["requests"], f"{p.status_path}.resources.requests")
    return _allocated_requests(p)


def _spec_limits(p: _Pick) -> ResourceList:
    return container_limits(p.c, path=p.path)


def _actuated_limits(p: _Pick) -> ResourceList | None:
    actual = p.status_resources()
    if actual.get("limits") is not None:
        return parse_resource_list(actual["limits"], f"{p.status_path}.resources.limits")
    return None if p.infeasible else container_limits(p.c, path=p.path)


def _aggregate(pod: PodLike, getter: Getter, use_status: bool) -> ResourceList:
    """KEP-753: app containers + sidecars, or the largest init phase, whichever is larger."""
    spec: PodSpec = pod.get("spec") or {}
    infeasible = use_status and is_pod_resize_infeasible(pod)

    def pick(c: Container, path: str) -> ResourceList:
        cs, status_path = _find_status(pod, c.get("name", "")) if use_status else (None, "")
        return getter(_Pick(c, cs, infeasible, path, status_path)) or {}

    result: ResourceList = {}
    for i, c in enumerate(spec.get("containers") or []):
        result = add(result, pick(c, f"spec.containers[{i}]"))
    sidecars: ResourceList = {}  # sidecars started so far
    init_peak: ResourceList = {}
    for i, c in enumerate(spec.get("initContainers") or []):
        own = pick(c, f"spec.initContainers[{i}]")
        if is_restartable_init_container(c):
            result = add(result, own)  # keeps running beside the app containers
            sidecars = add(sidecars, own)
            phase = sidecars
        else:
            phase = add(own, sidecars)  # runs alone, next to the sidecars started before it
        init_peak = max_of(init_peak, phase)
    return max_of(result, init_peak)


def pod_level_resources(pod: PodLike) -> tuple[ResourceList, ResourceList] | None:
    """Pod-level ``spec.resources`` as (requests, limits) after defaulting, or None if absent.

    Defaulting (KEP-2837): when pod-level limits are set, a missing pod-level request takes
    the containers' aggregated request for that resource, or else the pod-level limit.
    """
    spec: PodSpec = pod.get("spec") or {}
    res = spec.get("resources")
    if res is None:
        return None
    requests = parse_resource_list(res.get("requests"), "spec.resources.requests")
    limits = parse_resource_list(res.get("limits"), "spec.resources.limits")
    if limits:
        from_containers = _aggregate(pod, _spec_requests, False)
        for name, value in from_containers.items():
            if is_pod_level_resource(name) and not name.startswith(_HUGEPAGES):
                requests.setdefault(name, value)
        for name, value in limits.items():
            if is_pod_level_resource(name):
                requests.setdefault(name, value)
    return requests, limits


def _apply_pod_level(result: ResourceList, pod_level: ResourceList) -> ResourceList:
    """Pod-level values replace the container aggregate for the resources they set."""
    return {**result, **{k: v for k, v in pod_level.items() if is_pod_level_resource(k)}}


def _overhead(pod: PodLike) -> ResourceList:
    spec: PodSpec = pod.get("spec") or {}
    return parse_resource_list(spec.get("overhead"), "spec.overhead")


def pod_requests(pod: PodLike, *, use_status_resources: bool = False,
                 include_overhead: bool = True) -> ResourceList:
    """The pod's effective requests (component-helpers PodRequests).

    With ``use_status_resources`` (in-place resize, as the scheduler and kubelet admission
    count a running pod) three aggregates are formed with the formula above, each from a
    per-container choice:

    * spec: the container's (defaulted) spec requests;
    * allocated: ``status.containerStatuses[].allocatedResources`` (init containers use
      ``initContainerStatuses``), falling back to spec;
    * actuated: ``status.containerStatuses[].resources.requests``, falling back to
      allocated, then spec.

    The result is the per-resource max of the three aggregates (a max of sums, not a sum of
    maxes), so a pending upsize is reserved before it is applied and a downsize is not
    released until the runtime has applied it. If the resize is Infeasible (condition
    ``PodResizePending`` with reason ``Infeasible``) the spec is ignored: max(actuated,
    allocated), with no spec fallback.

    Pod-level status resources (the alpha InPlacePodLevelResourcesVerticalScaling gate) and
    DRA node-allocatable claims are not modelled.
    """
    if not use_status_resources:
        result = _aggregate(pod, _spec_requests, False)
    else:
        allocated = _aggregate(pod, _allocated_requests, True)
        actuated = _aggregate(pod, _actuated_requests, True)
        result = max_of(actuated, allocated)
        if not is_pod_resize_infeasible(pod):
            result = max_of(result, _aggregate(pod, _spec_requests, True))
    pod_level = pod_level_resources(pod)
    if pod_level is not None:
        result = _apply_pod_level(result, pod_level[0])
    if include_overhead:
        result = add(result, _overhead(pod))
    return result


def pod_limits(pod: PodLike, *, use_status_resources: bool = False,
               include_overhead: bool = True) -> ResourceList:
    """The pod's effective limits (component-helpers PodLimits).

    A resource no container limits is absent (unlimited), not zero. With
    ``use_status_resources`` the result is max(spec, actuated) where actuated is
    ``status...resources.limits`` (only actuated if the resize is Infeasible). Overhead is
    added only to limits that exist and are non-zero.
    """
    result = _aggregate(pod, _spec_limits, False)
    if use_status_resources:
        actuated = _aggregate(pod, _actuated_limits, True)
        result = actuated if is_pod_resize_infeasible(pod) else max_of(result, actuated)
    pod_level = pod_level_resources(pod)
    if pod_level is not None:
        result = _apply_pod_level(result, pod_level[1])
    if include_overhead:
        for name, extra in _overhead(pod).items():
            if result.get(name):
                result[name] += extra
    return result


def _positive_qos(into: ResourceList, rl: Mapping[str, int]) -> set[str]:
    """Add the positive cpu/memory amounts of rl into ``into``; return which were found."""
    found: set[str] = set()
    for name in _QOS_RESOURCES:
        if rl.get(name, 0) > 0:
            into[name] = into.get(name, 0) + rl[name]
            found.add(name)
    return found


def compute_qos_class(pod: PodLike) -> str:
    """ComputePodQOS: the QoS class from the spec alone.

    Only cpu and memory count, zero quantities are ignored, init containers (sidecars too)
    count like app containers, and requests are defaulted from limits first. Guaranteed
    needs a positive cpu and memory limit in every container and summed requests equal to
    summed limits; BestEffort means no cpu/memory request or limit anywhere. When pod-level
    ``spec.resources`` is present it alone decides, the same way.
    """
    requests: ResourceList = {}
    limits: ResourceList = {}
    guaranteed = True
    pod_level = pod_level_resources(pod)
    if pod_level is not None:
        _positive_qos(requests, pod_level[0])
        if pod_level[1]:
            guaranteed = _positive_qos(limits, pod_level[1]) == set(_QOS_RESOURCES)
    else:
        spec: PodSpec = pod.get("spec") or {}
        for kind, containers in (("containers", spec.get("containers")),
                                 ("initContainers", spec.get("initContainers"))):
            for i, c in enumerate(containers or []):
                path = f"spec.{kind}[{i}]"
                _positive_qos(requests, container_requests(c, path=path))
                if _positive_qos(limits, container_limits(c, path=path)) != set(_QOS_RESOURCES):
                    guaranteed = False
    if not requests and not limits:
        return BEST_EFFORT
    if guaranteed and requests == limits:
        return GUARANTEED
    return BURSTABLE


def qos_class(pod: PodLike) -> str:
    """GetPodQOS: ``status.qosClass`` when set (it is fixed at creation and survives resizes),
    otherwise computed from the spec."""
    status: PodStatus = pod.get("status") or {}
    return status.get("qosClass") or compute_qos_class(pod)
