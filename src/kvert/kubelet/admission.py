"""The node agent's admission: does a new pod, or a resized one, fit this node?

Pure functions over integer resource lists (cpu in millicores, memory in bytes), so
the same rules serve new pods, resizes and explanations.

New pods (Kubernetes ``lifecycle.predicateAdmitHandler`` -> the scheduler's ``Fits``):
the pod's requests (overhead included) must fit the node's allocatable minus what the
pods already admitted here hold; the pod count is checked first, then cpu, memory,
ephemeral-storage, then any other requested resource the node advertises. The first
shortfall names the rejection: ``OutOfpods``, ``OutOfcpu``, ``OutOfmemory``,
``OutOfephemeral-storage``, ``OutOf<name>``; its message is Kubernetes'
``Node didn't have enough resource: cpu, requested: 500, used: 3600, capacity: 4000``
and the pod's status message prefixes it with ``Pod was rejected: ``.

Resizes (seed 000; Kubernetes ``allocation.Manager.canResizePod``), in this order:

1. static CPU manager rule (see :func:`static_cpu_refusal`);
2. ``Infeasible`` when the pod's new requests (with overhead) exceed what the node could
   ever give pods, capacity minus the kube and system reservations (the kubelet's
   ``GetNodeAllocatableAbsolute``; the eviction thresholds are not subtracted) -- memory is
   reported first, as Kubernetes does:
   ``Node didn't have enough capacity: cpu, requested: 4650, capacity: 4000``;
3. ``Deferred`` when they fit the node but not next to the other pods right now; the
   message is the admission message above (``Node didn't have enough resource: ...``);
4. otherwise accepted.

The other pods are counted at their allocated resources, or at what the runtime still
has applied when that is larger (a downsize holds its old size until actuated), which
is how Kubernetes' ``canResizePod`` counts them; the resized pod at its new requests.

As in Kubernetes 1.35, a request between the two allocatables (above the node's status
allocatable, within the absolute one) is Deferred, not Infeasible: it fits once the
eviction threshold is no longer counted against it, which never happens, so it waits.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from kvert.api.nodefeatures import FeatureRegistry, Version
from kvert.api.resources import ResourceList

CPU, MEMORY, EPHEMERAL, PODS = "cpu", "memory", "ephemeral-storage", "pods"

DEFERRED = "Deferred"
INFEASIBLE = "Infeasible"

_REASONS = {CPU: "OutOfcpu", MEMORY: "OutOfmemory", EPHEMERAL: "OutOfephemeral-storage",
            PODS: "OutOfpods"}


@dataclass(frozen=True)
class Shortfall:
    """Kubernetes' ``InsufficientResourceError``."""
    resource: str
    requested: int
    used: int
    capacity: int

    def message(self) -> str:
        return (f"Node didn't have enough resource: {self.resource}, requested: {self.requested}, "
                f"used: {self.used}, capacity: {self.capacity}")

    def as_dict(self) -> dict:
        return {"resource": self.resource, "requested": self.requested, "used": self.used,
                "capacity": self.capacity}


@dataclass(frozen=True)
class Decision:
    ok: bool
    reason: str = ""          # OutOfcpu... for admission; Deferred / Infeasible for resizes
    message: str = ""
    numbers: dict = field(default_factory=dict)   # what the decision was computed from

    def as_dict(self) -> dict:
        out: dict = {"result": "Accepted" if self.ok else (self.reason or "Rejected")}
        if self.message:
            out["message"] = self.message
        out.update(self.numbers)
        return out


def _is_extended(name: str) -> bool:
    # Not kvert.api.resources.is_extended_resource: that one also calls "x.kubernetes.io/y"
    # native, which pod validation lets through, so such a request missing from the node's
    # allocatable would be refused here instead of skipped as it is now.
    return "/" in name and not name.startswith("kubernetes.io/")


def shortfalls(request: Mapping[str, int], used: Mapping[str, int], allocatable: Mapping[str, int],
               pod_count: int) -> list[Shortfall]:
    """Every resource the request does not fit, in Kubernetes' order (pods, cpu, memory,
    ephemeral-storage, the rest sorted). ``pod_count`` counts the other pods."""
    result: list[Shortfall] = []
    allowed_pods = allocatable.get(PODS)
    if allowed_pods is not None and pod_count + 1 > allowed_pods:
        result.append(Shortfall(PODS, 1, pod_count, allowed_pods))
    names = [CPU, MEMORY, EPHEMERAL] + sorted(
        k for k in request if k not in (CPU, MEMORY, EPHEMERAL, PODS))
    for name in names:
        amount = request.get(name, 0)
        if amount <= 0:
            continue
        if name not in allocatable and _is_extended(name):
            continue   # removeMissingExtendedResources: cluster-level or DRA-backed
        capacity = allocatable.get(name, 0)
        in_use = used.get(name, 0)
        if amount > capacity - in_use:
            result.append(Shortfall(name, amount, in_use, capacity))
    return result


def total(lists: Iterable[Mapping[str, int]]) -> ResourceList:
    out: ResourceList = {}
    for rl in lists:
        for k, v in rl.items():
            out[k] = out.get(k, 0) + v
    return out


def admit_pod(request: Mapping[str, int], others: Sequence[Mapping[str, int]],
              allocatable: Mapping[str, int]) -> Decision:
    """May a new pod with ``request`` (overhead included) join ``others`` (what each admitted
    pod holds) on a node with ``allocatable``?"""
    used = total(others)
    short = shortfalls(request, used, allocatable, len(others))
    numbers = {"requested": dict(request), "used": used, "allocatable": dict(allocatable),
               "pods": len(others)}
    if not short:
        return Decision(True, numbers=numbers)
    first = short[0]
    reason = _REASONS.get(first.resource, f"OutOf{first.resource}")
    return Decision(False, reason, first.message(), {**numbers, "shortfall": first.as_dict()})


POD_FEATURE_UNSUPPORTED = "PodFeatureUnsupported"


def declared_features_refusal(pod: Mapping[str, object], declared: Sequence[str], registry: FeatureRegistry,
                              version: Version) -> Decision | None:
    """The kubelet's declared-features admit handler (KEP-5328): a pod that needs node
    features this node does not declare is rejected, reason ``PodFeatureUnsupported``,
    "Pod requires node features that are not available: A, B"; None when it may run."""
    required = registry.infer_for_pod_scheduling(pod, version)
    missing = registry.names(required & ~registry.node_bits(declared))
    if not missing:
        return None
    return Decision(False, POD_FEATURE_UNSUPPORTED,
                    "Pod requires node features that are not available: " + ", ".join(missing),
                    {"missingFeatures": missing})


def rejection_message(decision: Decision) -> str:
    """The pod status message of a rejected pod, as the kubelet writes it."""
    return f"Pod was rejected: {decision.message}"


STATIC_CPU_MESSAGE = 'Resize is infeasible for Guaranteed Pods alongside CPU Manager policy "static"'


def static_cpu_refusal(qos_class: str, cpu_manager_policy: str,
                       old_cpu: Mapping[str, int], new_cpu: Mapping[str, int],
                       exclusive_cpus: bool = False) -> str:
    """The static CPU manager rule for a resize; '' when it does not apply.

    Kubernetes 1.35: a resize that changes the cpu request of a container of a Guaranteed
    pod on a node with ``cpuManagerPolicy: static`` is ``Infeasible`` ("Resize is infeasible
    for Guaranteed Pods alongside CPU Manager policy "static""); memory-only resizes and
    Burstable pods are not concerned. With the alpha gate
    ``InPlacePodVerticalScalingExclusiveCPUs`` (``exclusive_cpus``) kvert applies seed 000's
    rule instead: only whole CPUs may be resized to.

    ``old_cpu``/``new_cpu`` map container name -> cpu request in millicores.
    """
    if cpu_manager_policy != "static" or qos_class != "Guaranteed":
        return ""
    changed = sorted(name for name, new in new_cpu.items() if new != old_cpu.get(name))
    if not changed:
        return ""
    if not exclusive_cpus:
        return STATIC_CPU_MESSAGE
    for name in changed:
        if new_cpu[name] % 1000 != 0:
            return ("Resize is infeasible for Guaranteed Pods alongside CPU Manager static policy: "
                    f"container {name!r} asks for {new_cpu[name]}m cpu, only whole CPUs can be resized to")
    return ""


def decide_resize(request: Mapping[str, int], others: Sequence[Mapping[str, int]],
                  allocatable: Mapping[str, int], *, absolute: Mapping[str, int] | None = None,
                  qos_class: str = "", cpu_manager_policy: str = "none",
                  old_cpu: Mapping[str, int] | None = None,
                  new_cpu: Mapping[str, int] | None = None, exclusive_cpus: bool = False) -> Decision:
    """Accept, defer or refuse a resize whose pod would then request ``request`` (overhead
    included), next to ``others`` (what every other admitted pod holds). ``absolute`` is the
    node's allocatable without the eviction thresholds (``allocatable_absolute``), what
    Infeasible is judged against; ``allocatable`` (the node's status) decides Deferred."""
    used = total(others)
    absolute = allocatable if absolute is None else absolute
    numbers = {"requested": {k: v for k, v in request.items() if k in (CPU, MEMORY)},
               "used": {k: used.get(k, 0) for k in (CPU, MEMORY)},
               "allocatable": {k: allocatable.get(k, 0) for k in (CPU, MEMORY)}}
    refusal = static_cpu_refusal(qos_class, cpu_manager_policy, old_cpu or {}, new_cpu or {}, exclusive_cpus)
    if refusal:
        return Decision(False, INFEASIBLE, refusal, {**numbers, "rule": "static-cpu-manager"})
    for name in (MEMORY, CPU):   # Kubernetes reports memory first
        amount, capacity = request.get(name, 0), absolute.get(name, 0)
        if amount > capacity:
            return Decision(False, INFEASIBLE,
                            f"Node didn't have enough capacity: {name}, requested: {amount}, "
                            f"capacity: {capacity}", {**numbers, "rule": "capacity"})
    short = shortfalls(request, used, allocatable, len(others))
    if short:
        return Decision(False, DEFERRED, short[0].message(),
                        {**numbers, "rule": "allocated", "shortfall": short[0].as_dict()})
    return Decision(True, numbers=numbers)
