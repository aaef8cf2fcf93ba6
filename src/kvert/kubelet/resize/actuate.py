"""Applying an allocation to a pod's running containers through the runtime, in the seed's
order (see the package's docstring): containers needing a restart are stopped, the targets
are computed (the memory control loop may hold a limit above its target), then one pass per
resource, memory then cpu, each touching the pod cgroup first where it grows and last where
it shrinks, the containers' decreases before their increases."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field, replace

from kvert.api.meta import deep_copy
from kvert.kubelet.checkpoint import Requirements
from kvert.kubelet.resize.allocation import (
    POD_LEVEL,
    RESTART_CONTAINER,
    needs_restart,
    resize_policy,
    same_requirements,
)
from kvert.kubelet.resize.view import AllocatedPod
from kvert.kubelet.runtime.base import ContainerResources, CriError, LinuxContainerResources, Runtime

log = logging.getLogger(__name__)

MEMORY_HEADROOM = 0.10        # the control loop sets a stuck limit to usage + 10%
PAGE = 4096

_INF = float("inf")

_Values = LinuxContainerResources


def _mem(v: int) -> float:
    """A memory limit, 0 (unlimited) the largest."""
    return v if v > 0 else _INF


def _quota(v: int) -> float:
    """A CFS quota, 0 or -1 (unlimited) the largest."""
    return v if v > 0 else _INF


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
    spec: Mapping[str, object]              # the container's spec (resizePolicy)
    applied: LinuxContainerResources        # what the runtime reports now
    usage: int                              # memory working set now
    actuated: Requirements | None           # what the agent last applied successfully


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


@dataclass(frozen=True)
class _Resource:
    """How one resource's pass reads LinuxContainerResources."""
    name: str
    fields: tuple[str, ...]                                   # the values the pass sets
    pod_key: Callable[[LinuxContainerResources], tuple[float, ...]]   # per value: does the pod grow?
    container_key: Callable[[LinuxContainerResources], tuple[float, ...]]   # is a change a decrease?


_MEMORY = _Resource("memory", ("memory_limit_in_bytes",),
                    lambda r: (_mem(r.memory_limit_in_bytes),), lambda r: (_mem(r.memory_limit_in_bytes),))
_CPU = _Resource("cpu", ("cpu_shares", "cpu_quota", "cpu_period"),
                 lambda r: (r.cpu_shares, _quota(r.cpu_quota)), lambda r: (_quota(r.cpu_quota), r.cpu_shares))


def _with(base: LinuxContainerResources, source: LinuxContainerResources,
          fields: tuple[str, ...]) -> LinuxContainerResources:
    """``base`` with ``fields`` taken from ``source``."""
    return replace(base, **{f: getattr(source, f) for f in fields})


class _Actuator:
    """One attempt at applying an allocation; each step of :func:`actuate` is a method."""

    def __init__(self, runtime: Runtime, sandbox_id: str, view: AllocatedPod,
                 pod_current: LinuxContainerResources | None, *,
                 set_actuated: Callable[[str, Requirements | None], None],
                 set_pod_cgroup: Callable[[LinuxContainerResources], None],
                 before_call: Callable[[], Awaitable[None]] | None) -> None:
        self.runtime = runtime
        self.sandbox_id = sandbox_id
        self.view = view
        self.set_actuated = set_actuated
        self.set_pod_cgroup = set_pod_cgroup
        self.before_call = before_call
        self.result = Actuation()
        self.pod_target = view.pod_cgroup
        self.pod_now = pod_current or self.pod_target
        self.in_place: list[RunningContainer] = []
        self.targets: dict[str, LinuxContainerResources] = {}
        self.current: dict[str, LinuxContainerResources] = {}

    # ---- 1. restarts ---------------------------------------------------------------------------

    async def stop_for_restart(self, running: list[RunningContainer]) -> None:
        """Containers whose changed resources need a restart are stopped (frees, never grows);
        the others are resized in place."""
        for rc in running:
            target_req = self.view.requirements(rc.name)
            own_change = rc.actuated is not None and needs_restart(rc.spec, rc.actuated, target_req) and \
                not same_requirements(rc.actuated, target_req)
            if own_change or self.inherits_changed_pod_limit(rc):
                self.result.calls.append(f"StopContainer({rc.name})")
                await self.runtime.stop_container(rc.container_id, 0)
                self.set_actuated(rc.name, None)
                self.result.restart.append(rc.name)
            else:
                self.in_place.append(rc)
        self.current = {rc.name: rc.applied for rc in self.in_place}

    def inherits_changed_pod_limit(self, rc: RunningContainer) -> bool:
        """KEP-5419: a pod-level resize is a resize of every container that inherits the pod's
        limit (has none of its own); its resizePolicy for that resource decides a restart."""
        if POD_LEVEL not in self.view.allocation or rc.actuated is None:
            return False
        own = rc.actuated.get("limits") or {}
        changed = {"cpu": self.pod_target.cpu_quota != self.pod_now.cpu_quota,
                   "memory": self.pod_target.memory_limit_in_bytes != self.pod_now.memory_limit_in_bytes}
        return any(moved and not own.get(resource) and resize_policy(rc.spec, resource) == RESTART_CONTAINER
                   for resource, moved in changed.items())

    # ---- 2. targets ------------------------------------------------------------------------------

    def compute_targets(self) -> None:
        for rc in self.in_place:
            # oom_score_adj is fixed at creation; the cpuset is the CPU manager's, not the resize's
            self.targets[rc.name] = replace(self.view.container(rc.name),
                                            oom_score_adj=rc.applied.oom_score_adj,
                                            cpuset_cpus=rc.applied.cpuset_cpus)

    def hold_above_usage(self) -> None:
        """Seed 000's control loop: a memory limit lowered below the usage is set just above
        the usage for now (the kernel reclaims), the target once the usage fits."""
        for rc in self.in_place:
            want = self.targets[rc.name]
            new_mem, cur_mem = want.memory_limit_in_bytes, rc.applied.memory_limit_in_bytes
            if 0 < new_mem < _mem(cur_mem) and rc.usage > new_mem:
                interim = max(new_mem, -(-int(rc.usage * (1 + MEMORY_HEADROOM)) // PAGE) * PAGE)
                if interim >= _mem(cur_mem):
                    interim = cur_mem
                self.targets[rc.name] = replace(want, memory_limit_in_bytes=interim)
                self.result.waiting[rc.name] = (new_mem, rc.usage)

    def refuse_below_usage(self) -> bool:
        """Kubernetes 1.34+: a memory limit below what is in use is not applied at all; True
        when the resize is refused so (nothing is touched)."""
        refusals = memory_decrease_refusals(self.pod_target, self.pod_now, self.in_place, self.targets)
        if not refusals:
            return False
        self.result.error = "cannot decrease memory limits: " + (
            refusals[0] if len(refusals) == 1 else "[" + ", ".join(refusals) + "]")
        self.result.refused = True
        return True

    # ---- 3. the CRI calls --------------------------------------------------------------------------

    async def _call(self, label: str) -> None:
        self.result.calls.append(label)
        if self.before_call is not None:
            await self.before_call()

    async def set_pod(self, values: LinuxContainerResources, label: str) -> bool:
        if values == self.pod_now:
            return True
        await self._call(f"UpdatePodSandboxResources({label})")
        try:
            await self.runtime.update_pod_sandbox_resources(self.sandbox_id, values)
        except CriError as e:
            self.result.error = self.result.error or f"pod cgroup {label}: {e}"
            return False
        self.pod_now = values
        self.set_pod_cgroup(values)
        return True

    async def update(self, rc: RunningContainer, new: LinuxContainerResources, resource: str,
                     label: str = "") -> bool:
        await self._call(f"UpdateContainerResources({rc.name}, {resource}{label})")
        try:
            await self.runtime.update_container_resources(rc.container_id, ContainerResources(linux=new))
        except CriError as e:
            if not label:
                self.result.error = self.result.error or f"container {rc.name!r}: {e}"
            else:
                log.warning("rollback of %s failed: %s", rc.name, e)
            return False
        self.current[rc.name] = new
        return True

    # ---- 4. one pass per resource ------------------------------------------------------------------

    def pod_wanted(self, resource: _Resource) -> LinuxContainerResources:
        pod_want = _with(self.pod_now, self.pod_target, resource.fields)
        if resource is _MEMORY and self.result.waiting and \
                _mem(self.pod_target.memory_limit_in_bytes) < _mem(self.pod_now.memory_limit_in_bytes):
            pod_want = self.pod_now     # lower the pod's limit only once every container got there
        return pod_want

    async def grow_pod(self, resource: _Resource, pod_want: LinuxContainerResources) -> bool:
        """The pod cgroup first where it grows: to the larger of now and wanted, per value."""
        wanted, now = resource.pod_key(pod_want), resource.pod_key(self.pod_now)
        if not any(a > b for a, b in zip(wanted, now, strict=True)):
            return True
        first = replace(self.pod_now, **{f: max(getattr(pod_want, f), getattr(self.pod_now, f),
                                                key=lambda v: v if v > 0 else _INF)
                                         for f in resource.fields if f != "cpu_period"})
        if resource is _CPU:
            first = replace(first, cpu_period=pod_want.cpu_period)
        return await self.set_pod(first, f"{resource.name} up")

    def container_changes(self, resource: _Resource) -> list[tuple[int, RunningContainer, _Values]]:
        """(0 for a decrease, 1 for an increase, container, new values): decreases first, each
        phase in spec order."""
        changes: list[tuple[int, int, RunningContainer, _Values]] = []
        for order, rc in enumerate(self.in_place):
            new = _with(self.current[rc.name], self.targets[rc.name], resource.fields)
            if new != self.current[rc.name]:
                key = resource.container_key
                phase = 0 if key(new) < key(self.current[rc.name]) else 1
                changes.append((phase, order, rc, new))
        changes.sort(key=lambda x: (x[0], x[1]))
        return [(phase, rc, new) for phase, _, rc, new in changes]

    async def update_containers(self, resource: _Resource, rollback: bool) -> bool:
        done: list[tuple[RunningContainer, LinuxContainerResources]] = []
        changes = self.container_changes(resource)
        for phase in (0, 1):
            failed = False
            for _, rc, new in (c for c in changes if c[0] == phase):
                before = self.current[rc.name]
                if await self.update(rc, new, resource.name):
                    done.append((rc, before))
                    continue
                failed = True
                if rollback:
                    # seed 000: undo this pass (in reverse) and leave the rest for the retry
                    for prev_rc, prev in reversed(done):
                        await self.update(prev_rc, prev, resource.name, " rollback")
                    return False
                # Kubernetes: the other updates of this phase still go ahead
            if failed:
                return False     # no increases after a failed decrease, no pod decrease after either
        return True

    async def apply_pass(self, resource: _Resource, rollback: bool) -> bool:
        pod_want = self.pod_wanted(resource)
        if not await self.grow_pod(resource, pod_want):
            return False
        if not await self.update_containers(resource, rollback):
            return False
        if pod_want != self.pod_now:     # the pod cgroup last where it shrinks
            return await self.set_pod(pod_want, f"{resource.name} down")
        return True

    # ---- 5. the record ---------------------------------------------------------------------------

    def record_actuated(self) -> None:
        """What is actuated now, for the containers fully set to their targets (elsewhere the
        runtime's values stay the truth)."""
        for rc in self.in_place:
            target_req = self.view.requirements(rc.name)
            if target_req is None or self.current[rc.name] != self.targets[rc.name]:
                continue
            if rc.name in self.result.waiting:
                # the interim limit of the memory control loop: actuated, but not the target
                partial = deep_copy(target_req)
                partial.setdefault("limits", {})["memory"] = self.current[rc.name].memory_limit_in_bytes
                if partial != rc.actuated:
                    self.set_actuated(rc.name, partial)
            elif rc.actuated != target_req:
                self.set_actuated(rc.name, target_req)


async def actuate(runtime: Runtime, sandbox_id: str, view: AllocatedPod, running: list[RunningContainer],
                  pod_current: LinuxContainerResources | None, *,
                  set_actuated: Callable[[str, Requirements | None], None],
                  set_pod_cgroup: Callable[[LinuxContainerResources], None],
                  before_call: Callable[[], Awaitable[None]] | None = None,
                  rollback: bool = False, reclaim: bool = False) -> Actuation:
    """Apply ``view``'s allocation to the running containers of a pod, in the seed's order.

    ``set_actuated(name, requirements)`` records (and checkpoints) each container's new
    actuated resources; ``set_pod_cgroup(values)`` the pod cgroup's. Containers needing a
    restart are stopped here and listed in the result; the caller recreates them.
    ``rollback`` (gate ``KvertResizeRollback``) and ``reclaim`` (``KvertMemoryLimitReclaim``)
    choose seed 000's handling of failures and of memory limits below usage.
    """
    step = _Actuator(runtime, sandbox_id, view, pod_current, set_actuated=set_actuated,
                     set_pod_cgroup=set_pod_cgroup, before_call=before_call)
    await step.stop_for_restart(running)
    step.compute_targets()
    if reclaim:
        step.hold_above_usage()
    elif step.refuse_below_usage():
        return step.result
    ok = await step.apply_pass(_MEMORY, rollback) and await step.apply_pass(_CPU, rollback)
    step.record_actuated()
    step.result.done = ok and not step.result.waiting and not step.result.restart
    return step.result
