"""In-place pod resize on the node (seed 000, KEP 1287), under today's names.

Four sets of resources per container, changed only in this order::

    desired (spec) --> allocated (admitted; checkpointed; status.allocatedResources)
                   --> actuated (last passed to the runtime successfully; checkpointed)
                   --> actual (what ContainerStatus reports; status.containerStatuses[].resources)

The state machine, per pod (seed term -> what the API shows):

* no resize: spec == allocated == actuated; no resize condition.
* ``Proposed``: spec != allocated and the node agent has not decided yet (no condition;
  it decides on the next pass of its reconcile loop, at once in practice).
* ``Deferred``: the resize fits the node's allocatable but not next to the other pods now
  -> condition ``PodResizePending`` reason ``Deferred``, message ``Node didn't have enough
  resource: cpu, requested: 3950, used: 350, capacity: 4000``. Re-evaluated whenever
  something may have freed room (a pod deleted, finished or shrunk, any pod event) and
  every ``retry`` period, in Kubernetes' order (:func:`pending_order`).
* ``Infeasible``: the resize can never fit this node (or breaks the static CPU manager
  rule) -> ``PodResizePending`` reason ``Infeasible``, message ``Node didn't have enough
  capacity: cpu, requested: 4650, capacity: 4000``. Not re-evaluated until the spec changes
  again (a new generation).
* ``InProgress``: accepted: allocated := spec (checkpointed first, then written to the
  status together with the condition ``PodResizeInProgress``), then actuated through
  UpdateContainerResources in the seed's order (:func:`actuate`), then ContainerStatus is
  read back into ``status.containerStatuses[].resources`` and the condition is removed.
  A resize arriving meanwhile is decided after the one being applied, against the latest
  spec (seed: "processed after the in-progress resize completes").
* ``InProgress`` with reason ``Error``: a CRI call failed (rolled back, retried later) or a
  memory limit cannot be lowered yet because the container uses more (the seed's control
  loop, below); the message says which. A new resize is still decided meanwhile (an error
  must not pin a pod to a size the user wants to leave).

An event goes with each decision: ``ResizeStarted`` (Normal), ``ResizeDeferred`` /
``ResizeInfeasible`` (Warning, when the pending condition changes), ``ResizeCompleted``
(Normal), ``ResizeError`` (Warning).

Applying (seed "container resource limit update ordering", Kubernetes
``doPodResizeAction``): one pass per resource, memory then cpu. In a pass, a net increase
of the pod's value updates the pod cgroup first (UpdatePodSandboxResources), then the
containers, decreases before increases; a net decrease updates the containers first and
the pod cgroup last; no net change touches only the containers. If a container update
fails, the containers already updated in that pass are rolled back (in reverse order),
later ones are not touched, and the whole resize is retried later; so the containers'
limits never add up to more than the pod's. Containers whose ``resizePolicy`` for a
changed resource is ``RestartContainer`` are stopped and recreated with the new values
(restartCount + 1, no back-off); ``NotRequired`` containers are never restarted by a resize.

Memory limit decreases (seed "control loop"): before lowering a container's memory limit
the node agent reads its working set. If it is above the new limit, the limit is lowered
only to just above the usage (usage + 10%, never below the target), which makes the kernel
reclaim; the target is set once the usage fits. Until then ``PodResizeInProgress`` stays,
with reason ``Error`` and a message naming the usage and the target, and
``status...resources.limits.memory`` keeps showing the last limit that was fully reached
(the seed updates status resources only when the limit reaches the desired value). The
pod cgroup's memory limit is lowered only after every container reached its target.

Static CPU manager (for docs/kubernetes-choices.md): seed 000 says that on a node with
``cpuManagerPolicy: static`` only whole-CPU values may be resized to, and that a
non-integer CPU resize is refused with an event. Kubernetes 1.35 is stricter by default:
it refuses *every* resize of a Guaranteed pod on such a node (``PodResizePending`` /
``Infeasible``, "Resize is infeasible for Guaranteed Pods alongside CPU Manager static
policy"), unless the alpha gate ``InPlacePodVerticalScalingExclusiveCPUs`` is on, which
allows resizes that keep whole exclusive CPUs. kvert implements the seed's rule, which is
what that gate permits: only Guaranteed pods get exclusive CPUs, so the rule applies to
them, to the containers whose cpu request changes; a new cpu request that is not a whole
number of CPUs makes the resize ``Infeasible`` (message "Resize is infeasible for
Guaranteed Pods alongside CPU Manager static policy: container 'c' asks for 1500m cpu,
only whole CPUs can be resized to") with a ``ResizeInfeasible`` Warning event; a resize
to whole CPUs, and any memory-only resize, proceeds. Burstable pods are not affected
(they never hold exclusive CPUs). See :func:`kvert.kubelet.admission.static_cpu_refusal`.

Other choices (seed vs today):

* Seed T=1 has the API server set ``resourcesAllocated`` at creation; today the node
  agent writes ``allocatedResources`` when it admits the pod, which kvert does.
* ``Proposed`` has no condition today; a resize is "proposed" while the spec differs from
  the allocation and the agent has not decided (usually within one reconcile pass).
* ``resizePolicy`` is not defaulted (absent means ``NotRequired``), as in Kubernetes 1.33+.
* The other pods are counted at max(allocated, actuated) (see ``admission``).
* The seed's T=6 "conflict" happens naturally: status writes carry the resourceVersion
  they were computed from; on 409 the agent re-reads the pod and writes again.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from kvert.api.meta import deep_copy, format_time
from kvert.api.pods import (GUARANTEED, container_limits, container_requests, is_restartable_init_container,
                            pod_requests, qos_class)
from kvert.api.quantity import BINARY_SI, DECIMAL_SI, to_quantity
from kvert.api.resources import ResourceList, is_byte_resource, max_of
from kvert.kubelet.checkpoint import Requirements
from kvert.kubelet.runtime.base import ContainerResources, CriError, LinuxContainerResources

log = logging.getLogger(__name__)

PENDING = "PodResizePending"
IN_PROGRESS = "PodResizeInProgress"
DEFERRED = "Deferred"
INFEASIBLE = "Infeasible"
ERROR = "Error"

NOT_REQUIRED = "NotRequired"
RESTART_CONTAINER = "RestartContainer"

RESIZABLE = ("cpu", "memory")
MEMORY_HEADROOM = 0.10        # the control loop sets a stuck limit to usage + 10%
PAGE = 4096


# -- resource lists and allocations ----------------------------------------------------------------

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


def allocatable_containers(pod: Mapping[str, Any]) -> list[tuple[dict, str]]:
    """Every container with its kind: ``init``, ``sidecar`` or ``app`` (spec order, init first)."""
    spec = pod.get("spec") or {}
    out = []
    for c in spec.get("initContainers") or []:
        out.append((c, "sidecar" if is_restartable_init_container(c) else "init"))
    for c in spec.get("containers") or []:
        out.append((c, "app"))
    return out


def spec_allocation(pod: Mapping[str, Any]) -> dict[str, Requirements]:
    """What the spec asks for, per container (requests defaulted from limits)."""
    return {c.get("name", ""): {"requests": container_requests(c), "limits": container_limits(c)}
            for c, _ in allocatable_containers(pod)}


def resizable_names(pod: Mapping[str, Any]) -> list[str]:
    """App containers and sidecars; regular init containers cannot be resized."""
    return [c.get("name", "") for c, kind in allocatable_containers(pod) if kind != "init"]


def _cpu_mem(req: Requirements | None) -> tuple:
    req = req or {}
    r, lim = req.get("requests") or {}, req.get("limits") or {}
    return tuple((part.get(k) or 0) for part in (r, lim) for k in RESIZABLE)


def same_requirements(a: Requirements | None, b: Requirements | None) -> bool:
    """Equal cpu and memory requests and limits (the resizable resources)."""
    return _cpu_mem(a) == _cpu_mem(b)


def resize_requested(pod: Mapping[str, Any], allocated: Mapping[str, Requirements]) -> bool:
    """The spec differs from the allocation: a proposed resize."""
    wanted = spec_allocation(pod)
    return any(not same_requirements(wanted.get(n), allocated.get(n)) for n in resizable_names(pod))


def with_allocation(pod: Mapping[str, Any], allocation: Mapping[str, Requirements]) -> dict:
    """The pod as if its containers carried ``allocation`` as their resources (the view
    cgroup values and requests are computed from); status is dropped. It shares with ``pod``
    every value it does not change (the kubelet asks for this view many times a resize):
    read it, never change it."""
    out = {k: v for k, v in pod.items() if k != "status"}
    qos = (pod.get("status") or {}).get("qosClass")
    if qos:
        out["status"] = {"qosClass": qos}
    spec = out["spec"] = dict(out.get("spec") or {})
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


def merged_allocation(pod: Mapping[str, Any], allocated: Mapping[str, Requirements],
                      wanted: Mapping[str, Requirements] | None = None) -> dict[str, Requirements]:
    """The allocation a resize would grant: the spec for resizable containers, the current
    allocation for regular init containers. ``wanted`` is ``spec_allocation(pod)`` if known."""
    if wanted is None:
        wanted = spec_allocation(pod)
    resizable = set(resizable_names(pod))
    out = {}
    for name, req in wanted.items():
        if name in resizable or name not in allocated:
            out[name] = {"requests": dict(req.get("requests") or {}), "limits": dict(req.get("limits") or {})}
        else:
            out[name] = {"requests": dict(allocated[name].get("requests") or {}),
                         "limits": dict(allocated[name].get("limits") or {})}
    return out


def requests_of(pod: Mapping[str, Any], allocation: Mapping[str, Requirements]) -> ResourceList:
    """The pod's requests (overhead included) if its containers had ``allocation``: the same
    rule as ``kvert.api.pods.pod_requests`` (app containers and sidecars add up, a regular
    init container runs next to the sidecars started before it), on integers."""
    spec = pod.get("spec") or {}
    if spec.get("resources"):
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
        from kvert.api.resources import parse_resource_list
        for k, v in parse_resource_list(overhead, "spec.overhead").items():
            result[k] = result.get(k, 0) + v
    return result


def holding(pod: Mapping[str, Any], allocated: Mapping[str, Requirements],
            actuated: Mapping[str, Requirements]) -> ResourceList:
    """What an admitted pod holds on the node: its allocated requests, or what is still
    actuated when that is larger (a downsize not yet applied)."""
    held = requests_of(pod, allocated)
    if actuated:
        merged = {name: actuated.get(name, req) for name, req in allocated.items()}
        held = max_of(held, requests_of(pod, merged))
    return held


def is_increasing(pod: Mapping[str, Any], allocated: Mapping[str, Requirements],
                  wanted: Mapping[str, Requirements] | None = None) -> bool:
    """Kubernetes ``isResizeIncreasingRequests``: would cpu or memory requests grow?"""
    old = requests_of(pod, allocated)
    new = requests_of(pod, merged_allocation(pod, allocated, wanted))
    return new.get("cpu", 0) > old.get("cpu", 0) or new.get("memory", 0) > old.get("memory", 0)


def resize_policy(container: Mapping[str, Any], resource: str) -> str:
    for p in container.get("resizePolicy") or []:
        if p.get("resourceName") == resource:
            return p.get("restartPolicy") or NOT_REQUIRED
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


# -- the resize state and its conditions -----------------------------------------------------------

@dataclass
class ResizeState:
    pending_reason: str = ""          # "" | Deferred | Infeasible
    pending_message: str = ""
    pending_since: float = 0.0
    pending_generation: int = 0
    in_progress: bool = False
    in_progress_since: float = 0.0
    in_progress_generation: int = 0
    error_message: str = ""           # PodResizeInProgress reason Error when set
    retry_at: float = 0.0             # when a failed / waiting actuation is tried again
    hold_memory: dict[str, int] = field(default_factory=dict)   # container -> limit to report
    last_decision: dict | None = None

    def to_json(self) -> dict:
        return {k: v for k, v in self.__dict__.items() if v not in ("", 0, 0.0, False, None, {})}

    @classmethod
    def from_json(cls, data: Mapping[str, Any] | None) -> "ResizeState":
        state = cls()
        for key, value in (data or {}).items():
            if hasattr(state, key):
                setattr(state, key, value)
        return state

    def set_pending(self, reason: str, message: str, generation: int, now: float) -> bool:
        """Returns whether the condition changed (then an event is due)."""
        changed = reason != self.pending_reason or message != self.pending_message
        if reason != self.pending_reason:
            self.pending_since = now
        self.pending_reason, self.pending_message = reason, message
        self.pending_generation = generation
        return changed

    def clear_pending(self) -> bool:
        had = bool(self.pending_reason)
        self.pending_reason = self.pending_message = ""
        self.pending_since = 0.0
        self.pending_generation = 0
        return had

    def start(self, generation: int, now: float) -> None:
        self.clear_pending()
        if not self.in_progress:
            self.in_progress_since = now
        self.in_progress = True
        self.in_progress_generation = generation
        self.error_message = ""
        self.retry_at = 0.0

    def finish(self) -> None:
        self.in_progress = False
        self.in_progress_since = 0.0
        self.in_progress_generation = 0
        self.error_message = ""
        self.retry_at = 0.0
        self.hold_memory = {}

    def conditions(self) -> list[dict]:
        out = []
        if self.pending_reason:
            out.append({"type": PENDING, "status": "True", "lastProbeTime": None,
                        "lastTransitionTime": format_time(self.pending_since),
                        "observedGeneration": self.pending_generation,
                        "reason": self.pending_reason, "message": self.pending_message})
        if self.in_progress:
            cond: dict[str, Any] = {"type": IN_PROGRESS, "status": "True", "lastProbeTime": None,
                                    "lastTransitionTime": format_time(self.in_progress_since),
                                    "observedGeneration": self.in_progress_generation}
            if self.error_message:
                cond["reason"], cond["message"] = ERROR, self.error_message
            out.append(cond)
        return out


def pending_order(item: tuple) -> tuple:
    """Kubernetes' order for pending resizes (``sortPendingResizes``): resizes that do not
    increase requests first, then higher priority, then Guaranteed before the rest, then
    the longest-waiting (earliest PodResizePending transition; never-pending ones last).
    ``item`` is (pod, allocated, ResizeState[, spec_allocation(pod)])."""
    pod, allocated, state = item[:3]
    wanted = item[3] if len(item) > 3 else None
    priority = (pod.get("spec") or {}).get("priority") or 0
    waiting = state.pending_since if state.pending_reason else float("inf")
    meta = pod.get("metadata") or {}
    return (1 if is_increasing(pod, allocated, wanted) else 0, -priority,
            0 if qos_class(pod) == GUARANTEED else 1, waiting,
            meta.get("creationTimestamp") or "", meta.get("namespace") or "", meta.get("name") or "")


def resize_message(pod: Mapping[str, Any], allocation: Mapping[str, Requirements], error: str = "") -> str:
    """``{"containers":[{"name":...,"resources":{...}}],"generation":N}`` (Kubernetes'
    resize event payload), with ``"error"`` for a ResizeError."""
    containers = [{"name": n, "resources": format_requirements(allocation[n])}
                  for n in resizable_names(pod) if n in allocation]
    generation = (pod.get("metadata") or {}).get("generation") or 0
    payload: dict[str, Any] = {"containers": containers, "generation": generation}
    if error:
        payload["error"] = error
    return json.dumps(payload, separators=(",", ":"))


# -- actual resources read back from the runtime ---------------------------------------------------

def actual_requirements(linux: LinuxContainerResources | None, allocated: Requirements,
                        hold_memory: int | None = None) -> Requirements:
    """``status.containerStatuses[].resources`` from what ContainerStatus reports (Kubernetes
    ``convertToAPIContainerStatuses``): cpu request from cpu.shares, cpu limit from the CFS
    quota, memory limit from the memory limit; memory request and other resources from the
    allocation (they are not cgroup values). Values at the cgroup minimum keep the allocated
    number (2 shares / 1ms quota cannot tell 1m from 2m)."""
    from kvert.kubelet.cgroups import (MIN_QUOTA_PERIOD, MIN_SHARES, milli_cpu_to_quota, milli_cpu_to_shares,
                                       quota_to_milli_cpu, shares_to_milli_cpu)
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


# -- applying a resize -------------------------------------------------------------------------------

_INF = float("inf")


def _mem(v: int) -> float:
    return v if v > 0 else _INF


def _quota(v: int) -> float:
    return v if v > 0 else _INF


def memory_decrease_refusals(pod_target: LinuxContainerResources, pod_now: LinuxContainerResources,
                             running: list[RunningContainer],
                             targets: Mapping[str, LinuxContainerResources]) -> list[str]:
    """Kubernetes 1.34+'s check before a resize touches anything: a memory limit lowered (or
    added) to at most what is in use now is refused, for the pod and for each container."""
    out = []
    pod_limit = pod_target.memory_limit_in_bytes
    if 0 < pod_limit < _mem(pod_now.memory_limit_in_bytes):
        usage = sum(rc.usage for rc in running)
        if usage >= pod_limit:
            out.append(f"attempting to set pod memory limit ({pod_limit}) below current usage ({usage})")
    for rc in running:
        limit = targets[rc.name].memory_limit_in_bytes
        if 0 < limit < _mem(rc.applied.memory_limit_in_bytes) and rc.usage >= limit:
            out.append(f"attempting to set container {rc.name!r} memory limit ({limit}) below current "
                       f"usage ({rc.usage})".replace(f"'{rc.name}'", f'"{rc.name}"'))
    return out


@dataclass
class Actuation:
    """What one attempt at applying the allocation did."""
    done: bool = False                        # everything running now matches the allocation
    error: str = ""                           # a CRI failure or a refused memory decrease (retry later)
    refused: bool = False                     # nothing was touched: a memory limit would go below usage
    waiting: dict[str, tuple[int, int]] = field(default_factory=dict)  # container -> (target, usage)
    restart: list[str] = field(default_factory=list)   # containers stopped to be recreated
    calls: list[str] = field(default_factory=list)     # the CRI calls made, in order (for tests/explain)


@dataclass
class RunningContainer:
    name: str
    container_id: str
    spec: Mapping[str, Any]                 # the container's spec (resizePolicy)
    applied: LinuxContainerResources        # what the runtime reports now
    usage: int                              # memory working set now
    actuated: Requirements | None           # what the agent last applied successfully


async def actuate(runtime: Any, sandbox_id: str, pod: Mapping[str, Any],
                  allocated: Mapping[str, Requirements], running: list[RunningContainer],
                  pod_current: LinuxContainerResources | None, *, memory_capacity: int,
                  cpu_cfs_quota: bool = True, cpu_period: int = 100_000,
                  set_actuated: Callable[[str, Requirements | None], None],
                  set_pod_cgroup: Callable[[LinuxContainerResources], None],
                  before_call: Callable[[], Awaitable[None]] | None = None,
                  rollback: bool = False, reclaim: bool = False) -> Actuation:
    """Apply ``allocated`` to the running containers of a pod, in the seed's order.

    ``set_actuated(name, requirements)`` records (and checkpoints) each container's new
    actuated resources; ``set_pod_cgroup(values)`` the pod cgroup's. Containers needing a
    restart are stopped here and listed in the result; the caller recreates them.
    ``rollback`` (gate ``KvertResizeRollback``) and ``reclaim`` (``KvertMemoryLimitReclaim``)
    choose seed 000's handling of failures and of memory limits below usage.
    """
    from kvert.kubelet.cgroups import container_resources, pod_cgroup

    result = Actuation()
    allocated_pod = with_allocation(pod, allocated)
    pod_target = pod_cgroup(allocated_pod, cpu_cfs_quota=cpu_cfs_quota, cpu_period=cpu_period)
    pod_now = pod_current or pod_target

    # 1. containers whose changed resources need a restart: stop them (frees, never grows)
    in_place: list[RunningContainer] = []
    for rc in running:
        target_req = allocated.get(rc.name)
        if rc.actuated is not None and needs_restart(rc.spec, rc.actuated, target_req) and \
                not same_requirements(rc.actuated, target_req):
            result.calls.append(f"StopContainer({rc.name})")
            await runtime.stop_container(rc.container_id, 0)
            set_actuated(rc.name, None)
            result.restart.append(rc.name)
        else:
            in_place.append(rc)

    # 2. targets per container
    targets: dict[str, LinuxContainerResources] = {}
    for rc in in_place:
        want = container_resources(allocated_pod, rc.name, memory_capacity,
                                   cpu_cfs_quota=cpu_cfs_quota, cpu_period=cpu_period)
        # oom_score_adj is fixed at creation; the cpuset is the CPU manager's, not the resize's
        targets[rc.name] = replace(want, oom_score_adj=rc.applied.oom_score_adj,
                                   cpuset_cpus=rc.applied.cpuset_cpus)
    if reclaim:
        # seed 000's control loop: a decrease under the usage is set just above the usage
        for rc in in_place:
            want = targets[rc.name]
            new_mem, cur_mem = want.memory_limit_in_bytes, rc.applied.memory_limit_in_bytes
            if 0 < new_mem < _mem(cur_mem) and rc.usage > new_mem:
                interim = max(new_mem, -(-int(rc.usage * (1 + MEMORY_HEADROOM)) // PAGE) * PAGE)
                if interim >= _mem(cur_mem):
                    interim = cur_mem
                targets[rc.name] = replace(want, memory_limit_in_bytes=interim)
                result.waiting[rc.name] = (new_mem, rc.usage)
    else:
        # Kubernetes 1.34+: a memory limit below what is in use is not applied at all
        refusals = memory_decrease_refusals(pod_target, pod_now, in_place, targets)
        if refusals:
            result.error = "cannot decrease memory limits: " + (
                refusals[0] if len(refusals) == 1 else "[" + ", ".join(refusals) + "]")
            result.refused = True
            return result

    current = {rc.name: rc.applied for rc in in_place}
    by_name = {rc.name: rc for rc in in_place}

    async def set_pod(values: LinuxContainerResources, label: str) -> bool:
        nonlocal pod_now
        if values == pod_now:
            return True
        result.calls.append(f"UpdatePodSandboxResources({label})")
        if before_call is not None:
            await before_call()
        try:
            await runtime.update_pod_sandbox_resources(sandbox_id, values)
        except CriError as e:
            result.error = result.error or f"pod cgroup {label}: {e}"
            return False
        pod_now = values
        set_pod_cgroup(values)
        return True

    async def update(name: str, new: LinuxContainerResources, resource: str, label: str = "") -> bool:
        result.calls.append(f"UpdateContainerResources({name}, {resource}{label})")
        if before_call is not None:
            await before_call()
        try:
            await runtime.update_container_resources(by_name[name].container_id, ContainerResources(linux=new))
        except CriError as e:
            if not label:
                result.error = result.error or f"container {name!r}: {e}"
            else:
                log.warning("rollback of %s failed: %s", name, e)
            return False
        current[name] = new
        return True

    async def pass_for(resource: str) -> bool:
        if resource == "memory":
            fields = ("memory_limit_in_bytes",)
            pod_key = lambda r: (_mem(r.memory_limit_in_bytes),)          # noqa: E731
            ckey = lambda r: _mem(r.memory_limit_in_bytes)                 # noqa: E731
        else:
            fields = ("cpu_shares", "cpu_quota", "cpu_period")
            pod_key = lambda r: (r.cpu_shares, _quota(r.cpu_quota))        # noqa: E731
            ckey = lambda r: (_quota(r.cpu_quota), r.cpu_shares)           # noqa: E731
        pod_want = replace(pod_now, **{f: getattr(pod_target, f) for f in fields})
        if resource == "memory" and result.waiting and _mem(pod_target.memory_limit_in_bytes) < \
                _mem(pod_now.memory_limit_in_bytes):
            pod_want = pod_now     # lower the pod's limit only once every container got there
        grow = [a > b for a, b in zip(pod_key(pod_want), pod_key(pod_now))]
        # pod cgroup first where it grows
        if any(grow):
            first = replace(pod_now, **{f: max(getattr(pod_want, f), getattr(pod_now, f),
                                               key=lambda v: v if v > 0 else _INF) for f in fields
                                        if f != "cpu_period"})
            if resource == "cpu":
                first = replace(first, cpu_period=pod_want.cpu_period)
            if not await set_pod(first, f"{resource} up"):
                return False
        # containers: decreases first, then increases
        changes = []
        for rc in in_place:
            new = replace(current[rc.name], **{f: getattr(targets[rc.name], f) for f in fields})
            if new != current[rc.name]:
                changes.append((0 if ckey(new) < ckey(current[rc.name]) else 1, rc.name, new))
        order = {rc.name: i for i, rc in enumerate(in_place)}
        changes.sort(key=lambda x: (x[0], order[x[1]]))
        done: list[tuple[str, LinuxContainerResources]] = []
        failed = False
        for phase in (0, 1):
            for _, name, new in (c for c in changes if c[0] == phase):
                before = current[name]
                if await update(name, new, resource):
                    done.append((name, before))
                    continue
                failed = True
                if rollback:
                    # seed 000: undo this pass (in reverse) and leave the rest for the retry
                    for prev_name, prev in reversed(done):
                        await update(prev_name, prev, resource, " rollback")
                    return False
                # Kubernetes: the other updates of this phase still go ahead
            if failed:
                return False     # no increases after a failed decrease, no pod decrease after either
        # pod cgroup last where it shrinks
        if pod_want != pod_now:
            if not await set_pod(pod_want, f"{resource} down"):
                return False
        return True

    ok = await pass_for("memory") and await pass_for("cpu")
    # 3. record what is actuated now
    for rc in in_place:
        target_req = allocated.get(rc.name)
        if target_req is None:
            continue
        if current[rc.name] != targets[rc.name]:
            continue            # not (fully) applied: the runtime's values stay the truth
        if rc.name in result.waiting:
            # the interim limit of the memory control loop: actuated, but not the target
            partial = deep_copy(target_req)
            partial.setdefault("limits", {})["memory"] = current[rc.name].memory_limit_in_bytes
            if partial != rc.actuated:
                set_actuated(rc.name, partial)
        elif rc.actuated != target_req:
            set_actuated(rc.name, target_req)
    result.done = ok and not result.waiting and not result.restart
    return result
