"""A pod's life on the node: sandbox, containers, restarts, resize actuation, status.

One :class:`PodWorker` per admitted pod (Kubernetes' pod workers) syncs the pod whenever
something changed (the pod in the API, a container in the runtime, an allocation) or a
timer it set falls due, and is level-triggered: it compares what should run with what
the runtime reports and acts.

* RunPodSandbox with the pod-level cgroup values (``cgroups.pod_cgroup``: the allocated
  requests/limits plus ``spec.overhead``), then init containers one at a time (a regular
  init container must exit 0 before the next starts; a restartable one -- a sidecar --
  must have started and keeps running), then the app containers. Every container is
  created with the *allocated* resources.
* An exited container is restarted according to ``restartPolicy`` (``Always``;
  ``OnFailure`` when the exit code is not 0; ``Never`` not at all; sidecars always) with
  Kubernetes' back-off: the first restart at once, then 10 s, 20 s, 40 s ... at most 300 s
  after the container finished (reset when it ran for 10 minutes); meanwhile its state is
  ``waiting`` with reason ``CrashLoopBackOff``. An OOM-killed container shows
  ``lastState.terminated.reason: OOMKilled``.
* A pod whose containers are all done for good (``Never`` / ``OnFailure``) goes
  ``Succeeded`` (all exited 0) or ``Failed``; its sandbox is stopped and its resources
  freed for other pods and pending resizes.
* A pod with ``deletionTimestamp`` gets its containers stopped (app containers first,
  then sidecars in reverse order), its final status written, and is deleted with grace 0.
* Resizes allocated by the agent are applied here (``resize.actuate``), after the status
  shows the new allocation and ``PodResizeInProgress``.
* A container is created with the environment the kubelet gives it (``envvars``: envFrom,
  env with valueFrom and ``$(VAR)`` expansion, the service variables; command and args
  expanded), and its volumeMounts as mounts of the volumes the node filled (``tokens``):
  a variable that cannot be resolved keeps it waiting with ``CreateContainerConfigError``.
* Probes (``prober``) run where the runtime has real processes: readiness makes a container
  ``ready``, a startup probe ``started``; a failed liveness or startup probe kills the
  container, which is then restarted as any exited container.
* Status: phase, conditions (PodReadyToStartContainers, Initialized, Ready,
  ContainersReady; PodScheduled kept; PodResizePending / PodResizeInProgress), hostIP(s),
  podIP(s), startTime, qosClass (kept), observedGeneration and per container name, image,
  imageID, containerID, started, ready, restartCount, state, lastState,
  ``allocatedResources`` and ``resources`` (read back through ContainerStatus). Written
  only when it changed, with the resourceVersion it was based on (a conflict re-reads the
  pod and tries again, as in seed 000's T=6/T=7 steps).
"""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import logging
import os
from collections.abc import Iterable
from typing import Any

from kvert.api.conditions import conditions_of
from kvert.api.durations import format_go_duration
from kvert.api.errors import ApiError, Conflict, NotFound
from kvert.api.meta import deep_copy, format_time, parse_time
from kvert.clock import wait_event
from kvert.kubelet import resize as rz
from kvert.kubelet.allocatable import allocatable
from kvert.kubelet.cgroups import pod_cgroup_path
from kvert.kubelet.cpumanager import CpuAllocationError
from kvert.kubelet.envvars import EnvError, expand, expand_command, mapping_for
from kvert.kubelet.eviction import Eviction
from kvert.kubelet.podstate import ContainerRecord, PodState
from kvert.kubelet.prober import Prober, probes_run
from kvert.kubelet.runtime.base import (
    ContainerConfig,
    ContainerResources,
    ContainerStatus,
    CriError,
    LinuxContainerResources,
    Mount,
    PodSandboxConfig,
    Runtime,
)
from kvert.kubelet.securitycontext import SecurityContextError, linux_security, verify_run_as_non_root
from kvert.kubelet.services import NodeServices
from kvert.kubelet.tokens import MountError
from kvert.kubelet.usage import UsageError, container_annotations

log = logging.getLogger(__name__)

BACKOFF_INITIAL = 10.0
BACKOFF_MAX = 300.0
ERROR_RETRY = 10.0            # a failed CRI call for a container is retried after this
RESIZE_RETRY = 10.0           # a failed / waiting resize actuation is retried after this
EXPLAIN_ANNOTATION = "explain.kvert.io/node"
EPSILON = 1e-3               # timers fire at (not a float's width before) their time
SYSTEM_CONDITIONS = ("PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady")


def _is_deleting(pod: dict[str, Any]) -> bool:
    return bool((pod.get("metadata") or {}).get("deletionTimestamp"))


def _restart_policy(pod: dict[str, Any]) -> str:
    return (pod.get("spec") or {}).get("restartPolicy") or "Always"


def _image_id(image: str) -> str:
    digest = hashlib.sha256(image.encode()).hexdigest()
    return f"{image.split('@')[0]}@sha256:{digest}"


class PodWorker:
    def __init__(self, agent: NodeServices, ps: PodState) -> None:
        self.agent = agent
        self.ps = ps
        self.finished = False
        self.sandbox_checked = False
        # containerID's scheme: the runtime's type, as containerd://, cri-o://
        self.id_scheme = getattr(agent.runtime, "id_scheme", "sim")
        self.prober = Prober(agent.clock, agent.runtime, ps.wake.set, self._probe_event) \
            if probes_run(agent.runtime) else None

    async def _probe_event(self, type_: str, reason: str, message: str) -> None:
        await self.agent.event(self.ps.pod, type_, reason, message)

    # ---- the loop -----------------------------------------------------------------------

    async def run(self) -> None:
        try:
            await self._loop()
        finally:
            self.stop_probing()      # the probes go with the worker (a stopping node too)

    async def _loop(self) -> None:
        ps, clock = self.ps, self.agent.clock
        while not self.finished:
            timeout = None
            if ps.next_due is not None:
                timeout = max(0.0, ps.next_due - clock.now())
            await wait_event(ps.wake, timeout)
            ps.wake.clear()
            try:
                await self.sync()
            except asyncio.CancelledError:
                raise
            except Exception:   # a bug or an unexpected API error must not kill the worker
                log.exception("pod %s/%s: sync failed", ps.namespace, ps.name)
                ps.next_due = clock.now() + ERROR_RETRY

    # ---- one sync ----------------------------------------------------------------------------

    async def sync(self) -> None:
        ps, agent = self.ps, self.agent
        ps.next_due = None
        if ps.deleted or _is_deleting(ps.pod):
            await self.terminate()
            return
        if ps.eviction is not None and not ps.terminal:
            await self.evict(ps.eviction)
            return
        if ps.terminal:
            await self.write_status()
            return
        if not await self.ensure_sandbox():
            await self.write_status()
            return
        await self.refresh()
        await self.probe_step()
        await self.resize_step()
        await self.containers_step()
        await self.refresh()
        self.track_probes()        # the containers started just now are probed from now on
        await self.complete_resize()
        phase = self.terminal_phase()
        if phase:
            await self.finish(phase)
        await self.write_status()
        if agent.explain:
            await self.write_explain()
        self.schedule()
        agent.note_synced(ps)

    def due(self, when: float) -> None:
        if when > 0 and (self.ps.next_due is None or when < self.ps.next_due):
            self.ps.next_due = when

    def schedule(self) -> None:
        ps = self.ps
        if ps.resize.retry_at:
            self.due(ps.resize.retry_at)
        for rec in ps.containers.values():
            if rec.retry_at:
                self.due(rec.retry_at)

    # ---- sandbox and runtime state ------------------------------------------------------------

    def allocated_view(self) -> rz.AllocatedPod:
        """The pod at its allocation, for one call (the pod and the allocation may change after)."""
        return rz.AllocatedPod(self.ps.pod, self.ps.allocated, self.agent.cgroup_options)

    async def ensure_sandbox(self) -> bool:
        ps, agent = self.ps, self.agent
        if not agent.volumes.mounted(ps.uid):
            # projected volumes (service account tokens) before anything runs, as the
            # kubelet's volume manager waits for a pod's volumes
            try:
                await agent.volumes.mount(ps.pod)
            except MountError as e:
                await agent.event(ps.pod, "Warning", "FailedMount", str(e))
                self.due(agent.clock.now() + ERROR_RETRY)
                return False
        if ps.sandbox_id and not self.sandbox_checked:
            # restored from the checkpoint: is the sandbox still there (the runtime may have
            # restarted too, e.g. ``kvert up`` again)?
            self.sandbox_checked = True
            if getattr(agent.runtime, "sandbox_state", None) is not None and self.sandbox_gone(None):
                self.sandbox_lost()
        if ps.sandbox_id:
            return True
        view = self.allocated_view()
        values = view.pod_cgroup
        config = PodSandboxConfig(uid=ps.uid, namespace=ps.namespace, name=ps.name,
                                  cgroup_parent=pod_cgroup_path(view.spec, agent.config.cgroup_driver),
                                  resources=values,
                                  annotations=dict((ps.pod.get("metadata") or {}).get("annotations") or {}))
        try:
            ps.sandbox_id = await agent.runtime.run_pod_sandbox(config)
        except CriError as e:
            await agent.event(ps.pod, "Warning", "FailedCreatePodSandBox",
                              f"Failed to create pod sandbox: {e}")
            self.due(agent.clock.now() + ERROR_RETRY)
            return False
        ps.pod_cgroup = values
        if not ps.pod_ip:
            ps.pod_ip = await agent.allocate_ip()
        agent.save(ps)
        return True

    def sandbox_gone(self, error: Exception | None) -> bool:
        """Is the pod's sandbox gone (or not ready)? Asked through the runtime's
        ``sandbox_state`` when it has one, else guessed from the error."""
        state_of = getattr(self.agent.runtime, "sandbox_state", None)
        if state_of is not None:
            try:
                return state_of(self.ps.sandbox_id) != "ready"
            except CriError:
                return True
        return error is not None and "sandbox" in str(error).lower()

    def sandbox_lost(self) -> None:
        ps = self.ps
        log.info("pod %s/%s: sandbox %s is gone; starting over", ps.namespace, ps.name, ps.sandbox_id[:12])
        ps.sandbox_id = ""
        ps.pod_cgroup = None
        ps.actuated = {}
        for rec in ps.containers.values():
            if rec.id:
                rec.lost = True
            rec.id = ""
            rec.status = None
        self.agent.save(ps)

    async def refresh(self) -> None:
        """Read every current container's status from the runtime."""
        ps, runtime = self.ps, self.agent.runtime
        for rec in ps.containers.values():
            if not rec.id:
                rec.status = None
                continue
            try:
                rec.status = await runtime.container_status(rec.id)
            except CriError:
                # gone from the runtime (e.g. it restarted without its containers)
                rec.status = None
                rec.id = ""
                rec.lost = True
                ps.actuated.pop(rec.name, None)

    # ---- probes ---------------------------------------------------------------------------------

    def track_probes(self) -> list[tuple[dict[str, Any], str, float]]:
        """Hand the running containers (app containers and sidecars) to the prober."""
        prober, ps = self.prober, self.ps
        if prober is None:
            return []
        spec = ps.pod.get("spec") or {}
        probed = [c for c in spec.get("initContainers") or [] if c.get("restartPolicy") == "Always"]
        running = []
        for c in probed + list(spec.get("containers") or []):
            rec = ps.containers.get(c.get("name", ""))
            if rec is not None and rec.status is not None and rec.status.state == "running":
                running.append((c, rec.id, rec.status.started_at))
        prober.update(running)
        return running

    async def probe_step(self) -> None:
        """Kill the containers that failed a liveness or startup probe (restarted afterwards
        like any exited container)."""
        prober, ps = self.prober, self.ps
        if prober is None:
            return
        spec = ps.pod.get("spec") or {}
        for c, cid, _ in self.track_probes():
            kind = prober.failed(cid)
            if not kind:
                continue
            rec = ps.containers[c["name"]]
            await self.agent.event(ps.pod, "Normal", "Killing",
                                   f"Container {rec.name} failed {kind} probe, will be restarted")
            probe = c.get(f"{kind}Probe") or {}
            grace = probe.get("terminationGracePeriodSeconds")
            if grace is None:
                grace = spec.get("terminationGracePeriodSeconds", 30)
            try:
                await self.agent.runtime.stop_container(cid, int(grace or 0))
            except CriError as e:
                log.warning("stopping %s of %s/%s: %s", rec.name, ps.namespace, ps.name, e)
            rec.status = await _status_or_none(self.agent.runtime, cid)
        self.track_probes()

    # ---- resizes --------------------------------------------------------------------------------

    def resize_pending_actuation(self) -> bool:
        ps = self.ps
        for rec in ps.containers.values():
            if rec.status is None or rec.status.state != "running":
                continue
            if ps.actuated.get(rec.name) != ps.allocated.get(rec.name):
                return True
        if ps.pod_cgroup is None:
            return False
        # the pod's cgroup last: computing its target is the dear part
        return ps.pod_cgroup != self.allocated_view().pod_cgroup

    async def resize_step(self) -> None:
        ps, agent = self.ps, self.agent
        if not self.resize_pending_actuation():
            await self.complete_resize()
            return
        now = agent.clock.now()
        if not ps.resize.in_progress:
            # allocated != actuated without a decision in this life (e.g. restored): in progress
            agent.resizes.start(ps, ps.generation(), now)
        if ps.resize.retry_at and now < ps.resize.retry_at - EPSILON:
            return
        # the status shows the new allocation and PodResizeInProgress before the runtime
        # is touched (seed 000: T=4 before T=6)
        await self.write_status()
        ps.actuating = True
        started = agent.clock.now()
        try:
            result = await rz.actuate(
                agent.runtime, ps.sandbox_id, self.allocated_view(), self.running_containers(), ps.pod_cgroup,
                set_actuated=lambda name, req: agent.resizes.set_actuated(ps, name, req),
                set_pod_cgroup=lambda values: agent.resizes.set_pod_cgroup(ps, values),
                rollback=agent.config.feature("KvertResizeRollback"),
                reclaim=agent.config.feature("KvertMemoryLimitReclaim"))
        finally:
            ps.actuating = False
        # doPodResizeAction's duration, whole milliseconds, each attempt
        agent.resize_metrics.resize_actuated(int((agent.clock.now() - started) * 1000), not result.error)
        for name in result.restart:
            rec = ps.containers.get(name)
            if rec is not None:
                rec.restart_now = True
                await agent.event(ps.pod, "Normal", "Killing",
                                  f"Container {name} resize requires restart")
        if agent.resizes.record_actuation(ps, result, now, RESIZE_RETRY, self.memory_limits(result.waiting)):
            await agent.event(ps.pod, "Warning", "ResizeError",
                              "Pod resize error: " + rz.resize_message(ps.pod, ps.allocated, error=result.error,
                                                                       scope=agent.resize_scope))
        await self.refresh()

    def running_containers(self) -> list[rz.RunningContainer]:
        """The pod's running containers as the runtime last reported them, in spec order."""
        ps = self.ps
        running = []
        for c, _kind in rz.allocatable_containers(ps.pod):
            rec = ps.containers.get(c.get("name", ""))
            if rec is None or rec.status is None or rec.status.state != "running":
                continue
            linux = rec.status.resources.linux if rec.status.resources else None
            running.append(rz.RunningContainer(rec.name, rec.id, c, linux or LinuxContainerResources(),
                                               rec.status.memory_working_set_bytes,
                                               ps.actuated.get(rec.name)))
        return running

    def memory_limits(self, names: Iterable[str]) -> dict[str, int]:
        """The memory limit each container shows now (the runtime's, else what is actuated)."""
        ps = self.ps
        out = {}
        for name in names:
            rec = ps.containers.get(name)
            old = None
            if rec is not None and rec.status is not None and rec.status.resources.linux:
                old = rec.status.resources.linux.memory_limit_in_bytes
            actuated = (ps.actuated.get(name) or {}).get("limits", {}).get("memory")
            out[name] = int(old or actuated or 0)
        return out

    async def complete_resize(self) -> None:
        """Clear PodResizeInProgress once everything running matches the allocation."""
        ps, agent = self.ps, self.agent
        if not ps.resize.in_progress or self.resize_pending_actuation():
            return
        if any(rec.restart_now for rec in ps.containers.values()):
            return
        agent.resizes.complete(ps)
        await agent.event(ps.pod, "Normal", "ResizeCompleted",
                          "Pod resize completed: " + rz.resize_message(ps.pod, ps.allocated,
                                                                       scope=agent.resize_scope))
        agent.trigger("pod_resized")

    # ---- containers -----------------------------------------------------------------------------

    def in_backoff(self, rec: ContainerRecord, finished_at: float, now: float) -> bool:
        """flowcontrol.Backoff.IsInBackOffSince, keyed by the container."""
        if rec.backoff <= 0:
            return False
        if finished_at - rec.backoff_updated > 2 * BACKOFF_MAX:
            return False
        return now - finished_at < rec.backoff - EPSILON

    def next_backoff(self, rec: ContainerRecord, finished_at: float, now: float) -> None:
        if rec.backoff <= 0 or finished_at - rec.backoff_updated > 2 * BACKOFF_MAX:
            rec.backoff = BACKOFF_INITIAL
        else:
            rec.backoff = min(rec.backoff * 2, BACKOFF_MAX)
        rec.backoff_updated = now

    async def containers_step(self) -> None:
        ps = self.ps
        policy = _restart_policy(ps.pod)
        spec = ps.pod.get("spec") or {}
        for c in spec.get("initContainers") or []:
            rec = ps.containers[c["name"]]
            if rec.kind == "sidecar":
                if rec.status is not None and rec.status.state == "running":
                    continue
                started = await self.start_or_restart(rec, c, always=True)
                if not started and rec.restart_count == 0 and rec.status is None:
                    return      # never started yet: the next init container waits for it
                continue
            if rec.init_done:
                continue
            st = rec.status
            if st is None:
                await self.start_or_restart(rec, c, always=True)
                return
            if st.state != "exited":
                return
            if st.exit_code == 0:
                rec.init_done = True
                self.agent.save(ps)
                continue
            if policy == "Never":
                ps.failed_reason = f"init container {rec.name} failed"
                return
            await self.start_or_restart(rec, c, always=True)
            return
        for c in spec.get("containers") or []:
            rec = ps.containers[c["name"]]
            st = rec.status
            if st is not None and st.state == "running":
                continue
            if st is not None and st.state == "exited" and not rec.restart_now:
                if policy == "Never" or (policy == "OnFailure" and st.exit_code == 0):
                    continue
            await self.start_or_restart(rec, c, always=True)
        await self.ephemeral_step(spec)

    async def ephemeral_step(self, spec: dict[str, Any]) -> None:
        """Start each ephemeral container once, after the pod's containers: it is never
        restarted (an ephemeral container has no restart policy of its own)."""
        ps = self.ps
        for c in spec.get("ephemeralContainers") or []:
            name = c.get("name", "")
            rec = ps.containers.get(name)
            if rec is None:
                rec = ps.containers[name] = ContainerRecord(name, "ephemeral")
                self.agent.save(ps)
            started_before = bool(rec.id or rec.lost)
            if started_before and not (rec.status is not None and rec.status.state == "created"):
                continue
            await self.start_or_restart(rec, c, always=True)

    async def start_or_restart(self, rec: ContainerRecord, spec: dict[str, Any], *, always: bool) -> bool:
        """Create and start the container (again, after back-off if it exited); True when it
        was started now."""
        ps, agent = self.ps, self.agent
        now = agent.clock.now()
        st = rec.status
        if rec.retry_at and now < rec.retry_at - EPSILON:
            return False
        if st is not None and st.state == "created":
            try:
                await agent.runtime.start_container(rec.id)
            except CriError as e:
                rec.waiting_reason, rec.waiting_message = "RunContainerError", str(e)
                rec.retry_at = now + ERROR_RETRY
                return False
            rec.retry_at = 0.0
            rec.status = await agent.runtime.container_status(rec.id)
            return True
        exited = st if st is not None and st.state == "exited" else None
        restarting = exited is not None
        if exited is not None and not rec.restart_now:
            st = exited
            if self.in_backoff(rec, st.finished_at, now):
                entering = rec.waiting_reason != "CrashLoopBackOff"
                rec.waiting_reason = "CrashLoopBackOff"
                rec.waiting_message = (f"back-off {rz_duration(rec.backoff)} restarting failed "
                                       f"container={rec.name} pod={ps.name}_{ps.namespace}({ps.uid})")
                self.due(st.finished_at + rec.backoff)
                if rec.last_terminated != _terminated(st, self.id_scheme):
                    rec.last_terminated = _terminated(st, self.id_scheme)
                    agent.save(ps)
                if entering:
                    await agent.event(ps.pod, "Warning", "BackOff",
                                      f"Back-off restarting failed container {rec.name} in pod "
                                      f"{ps.name}_{ps.namespace}({ps.uid})")
                return False
            self.next_backoff(rec, st.finished_at, now)
        try:
            annotations = container_annotations(ps.pod, spec)
        except (UsageError, ValueError) as e:
            rec.waiting_reason, rec.waiting_message = "CreateContainerConfigError", str(e)
            rec.retry_at = now + ERROR_RETRY
            return False
        view = self.allocated_view()
        linux = view.container(rec.name)
        try:
            cpuset = agent.cpu_manager.cpuset(view.spec, rec.name)
        except CpuAllocationError as e:
            rec.waiting_reason, rec.waiting_message = "CreateContainerError", str(e)
            rec.retry_at = now + ERROR_RETRY
            return False
        if cpuset:
            linux = dataclasses.replace(linux, cpuset_cpus=cpuset)
            agent.trigger("cpus_assigned")      # the shared pool may have shrunk
        ports = tuple(p["containerPort"] for p in spec.get("ports") or []
                      if isinstance(p.get("containerPort"), int) and p.get("protocol", "TCP") == "TCP")
        try:
            env = await self.environment(view.spec, rec.name, spec)
        except EnvError as e:
            rec.waiting_reason, rec.waiting_message = "CreateContainerConfigError", str(e)
            rec.retry_at = now + ERROR_RETRY
            await agent.event(ps.pod, "Warning", "Failed", f"Error: {e}")
            return False
        try:
            verify_run_as_non_root(ps.pod, spec)
        except SecurityContextError as e:
            rec.waiting_reason, rec.waiting_message = "CreateContainerConfigError", str(e)
            rec.retry_at = now + ERROR_RETRY
            await agent.event(ps.pod, "Warning", "Failed", f"Error: {e}")
            return False
        config = ContainerConfig(name=rec.name, image=spec.get("image", ""),
                                 resources=ContainerResources(linux=linux), annotations=annotations,
                                 command=expand_command(spec.get("command") or [], env),
                                 args=expand_command(spec.get("args") or [], env),
                                 env=env, working_dir=str(spec.get("workingDir") or ""),
                                 stdin=bool(spec.get("stdin")), stdin_once=bool(spec.get("stdinOnce")),
                                 ports=ports, mounts=self.mounts(spec, env),
                                 security=linux_security(ps.pod, spec))
        try:
            new_id = await agent.runtime.create_container(ps.sandbox_id, config)
        except CriError as e:
            rec.waiting_reason, rec.waiting_message = "CreateContainerError", str(e)
            rec.retry_at = now + ERROR_RETRY
            if self.sandbox_gone(e):
                self.sandbox_lost()
            return False
        old_id, old_status = rec.id, st
        if restarting and old_status is not None:
            rec.last_terminated = _terminated(old_status, self.id_scheme)
            rec.restart_count += 1
        elif rec.lost:
            rec.last_terminated = {"exitCode": 137, "reason": "ContainerStatusUnknown",
                                   "message": "The container could not be located when the pod was "
                                              "restarted",
                                   "startedAt": None, "finishedAt": None}
            rec.restart_count += 1
        rec.lost = False
        rec.id = new_id
        rec.restart_now = False
        rec.retry_at = 0.0
        rec.waiting_reason = rec.waiting_message = ""
        if rec.kind != "ephemeral":      # no resources of its own: nothing to actuate or resize
            ps.actuated[rec.name] = deep_copy(ps.allocated.get(rec.name) or {"requests": {}, "limits": {}})
        agent.save(ps)
        await agent.event(ps.pod, "Normal", "Pulled",
                          f'Container image "{spec.get("image", "")}" already present on machine')
        await agent.event(ps.pod, "Normal", "Created", f"Created container: {rec.name}")
        try:
            await agent.runtime.start_container(new_id)
        except CriError as e:
            rec.waiting_reason, rec.waiting_message = "RunContainerError", str(e)
            rec.retry_at = now + ERROR_RETRY
            rec.status = await _status_or_none(agent.runtime, new_id)
            return False
        await agent.event(ps.pod, "Normal", "Started", f"Started container {rec.name}")
        if old_id and old_id != new_id:
            try:
                await agent.runtime.remove_container(old_id)
            except CriError:
                pass
        rec.status = await _status_or_none(agent.runtime, new_id)
        return True

    async def environment(self, pod: dict[str, Any], name: str, spec: dict[str, Any]) -> tuple[tuple[str, str], ...]:
        """The container's variables (``envvars``), its resources at the pod's allocation."""
        agent = self.agent
        container = next((c for field in ("containers", "initContainers")
                          for c in (pod.get("spec") or {}).get(field) or [] if c.get("name") == name), spec)
        env = await agent.environment.container_env(
            pod, container, host_ips=[agent.host_ip], pod_ips=[self.ps.pod_ip] if self.ps.pod_ip else [],
            allocatable=allocatable(agent.config))
        return tuple(env)

    def mounts(self, spec: dict[str, Any], env: tuple[tuple[str, str], ...]) -> tuple[Mount, ...]:
        """The container's volumeMounts as the node filled them (a volume kind the node does
        not fill is left out); a missing subPath is made in the volume, as the kubelet does."""
        out = []
        for vm in spec.get("volumeMounts") or []:
            if not isinstance(vm, dict) or not vm.get("mountPath"):
                continue
            host = self.agent.volumes.host_path(self.ps.pod, str(vm.get("name") or ""))
            if host is None:
                continue
            sub = str(vm.get("subPath") or "") or expand(str(vm.get("subPathExpr") or ""), mapping_for(dict(env)))
            if sub:
                host = os.path.join(host, sub)
                if not os.path.lexists(host):
                    os.makedirs(host, exist_ok=True)
            out.append(Mount(str(vm["mountPath"]), host, readonly=vm.get("readOnly") is True))
        return tuple(out)

    # ---- finishing --------------------------------------------------------------------------------

    def terminal_phase(self) -> str:
        """Succeeded / Failed when no container will run again, else ''."""
        ps = self.ps
        if ps.failed_reason:
            return "Failed"
        policy = _restart_policy(ps.pod)
        if policy == "Always":
            return ""
        apps = [r for r in ps.containers.values() if r.kind == "app"]
        if not apps:
            return ""
        for rec in apps:
            st = rec.status
            if st is None or st.state != "exited" or rec.restart_now:
                return ""
            if policy == "OnFailure" and st.exit_code != 0:
                return ""
        return "Succeeded" if all(r.status.exit_code == 0 for r in apps if r.status) else "Failed"

    def stop_probing(self) -> None:
        if self.prober is not None:
            self.prober.stop()

    async def stop_all(self, grace: int) -> None:
        """App containers first, then sidecars in reverse order, then the rest."""
        ps, agent = self.ps, self.agent
        recs = list(ps.containers.values())
        apps = [r for r in recs if r.kind == "app"]
        sidecars = [r for r in recs if r.kind == "sidecar"][::-1]
        others = [r for r in recs if r.kind in ("init", "ephemeral")]
        for rec in apps + sidecars + others:
            if rec.status is not None and rec.status.state in ("running", "created"):
                await agent.event(ps.pod, "Normal", "Killing", f"Stopping container {rec.name}")
                try:
                    await agent.runtime.stop_container(rec.id, grace)
                except CriError as e:
                    log.warning("stopping %s of %s/%s: %s", rec.name, ps.namespace, ps.name, e)
        await self.refresh()

    async def finish(self, phase: str, grace: int = 0) -> None:
        ps, agent = self.ps, self.agent
        self.stop_probing()
        await self.stop_all(grace)
        if ps.sandbox_id:
            try:
                await agent.runtime.stop_pod_sandbox(ps.sandbox_id)
            except CriError as e:
                log.warning("stopping the sandbox of %s/%s: %s", ps.namespace, ps.name, e)
        ps.terminal = phase
        ps.resize.finish()
        ps.resize.clear_pending()
        agent.volumes.remove(ps.uid)      # a terminated pod's volumes are torn down
        agent.save(ps)
        agent.trigger("pod_terminated")

    async def evict(self, eviction: Eviction) -> None:
        """Eviction: stop the containers within the eviction's grace period, then the pod is
        Failed / Evicted, with the DisruptionTarget condition for node pressure (a local
        storage eviction has none)."""
        await self.refresh()
        condition = eviction.condition()
        self.ps.ended = {"reason": "Evicted", "message": eviction.message,
                         "condition": {**condition, "lastTransitionTime": format_time(self.agent.clock.now())}
                         if condition is not None else None}
        await self.finish("Failed", int(eviction.grace_period))
        await self.write_status()

    async def terminate(self) -> None:
        """Graceful deletion (or the pod vanished): stop, report, delete with grace 0, clean up."""
        ps, agent = self.ps, self.agent
        self.stop_probing()
        meta = ps.pod.get("metadata") or {}
        grace = meta.get("deletionGracePeriodSeconds")
        if grace is None:
            grace = (ps.pod.get("spec") or {}).get("terminationGracePeriodSeconds", 30)
        await self.refresh()
        await self.stop_all(int(grace or 0))
        if ps.sandbox_id:
            try:
                await agent.runtime.stop_pod_sandbox(ps.sandbox_id)
            except CriError as e:
                log.warning("stopping the sandbox of %s/%s: %s", ps.namespace, ps.name, e)
        if not ps.deleted:
            if not ps.terminal:
                apps = [r for r in ps.containers.values() if r.kind == "app"]
                clean = apps and all(r.status is not None and r.status.exit_code == 0 for r in apps)
                ps.terminal = "Succeeded" if clean else "Failed"
            ps.resize.finish()
            ps.resize.clear_pending()
            await self.write_status()
            try:
                await agent.client.delete("pods", ps.name, namespace=ps.namespace, grace_period_seconds=0,
                                          preconditions={"uid": ps.uid})
            except NotFound:
                pass
            except ApiError as e:
                log.warning("deleting %s/%s: %s", ps.namespace, ps.name, e)
                self.due(agent.clock.now() + ERROR_RETRY)
                return
        if ps.sandbox_id:
            try:
                await agent.runtime.remove_pod_sandbox(ps.sandbox_id)
            except CriError as e:
                log.warning("removing the sandbox of %s/%s: %s", ps.namespace, ps.name, e)
        ps.deleted = True
        self.finished = True
        agent.forget(ps)

    # ---- status ------------------------------------------------------------------------------------

    def container_status(self, rec: ContainerRecord, spec: dict[str, Any], now: float) -> dict[str, Any]:
        ps = self.ps
        st = rec.status
        allocated = ps.allocated.get(rec.name) or {"requests": {}, "limits": {}}
        out: dict[str, Any] = {"name": rec.name, "state": {}, "lastState": {},
                               "ready": False, "restartCount": rec.restart_count,
                               "image": spec.get("image", ""), "imageID": "", "started": False}
        if rec.last_terminated:
            out["lastState"] = {"terminated": dict(rec.last_terminated)}
        if st is None:
            reason = rec.waiting_reason or (
                "PodInitializing" if rec.kind == "app" and not self.initialized() else "ContainerCreating")
            out["state"] = {"waiting": {"reason": reason, **({"message": rec.waiting_message}
                                                                  if rec.waiting_message else {})}}
        else:
            out["imageID"] = _image_id(spec.get("image", ""))
            out["containerID"] = _cid(rec.id, self.id_scheme)
            if st.state == "running":
                out["state"] = {"running": {"startedAt": format_time(st.started_at)}}
                prober = self.prober
                out["started"] = prober is None or prober.started(rec.id)
                out["ready"] = prober is None or prober.ready(rec.id)
            elif st.state == "exited":
                terminated = _terminated(st, self.id_scheme)
                if rec.waiting_reason == "CrashLoopBackOff" and self.will_restart(rec):
                    out["state"] = {"waiting": {"reason": "CrashLoopBackOff", "message": rec.waiting_message}}
                    out["lastState"] = {"terminated": terminated}
                elif self.will_restart(rec) and rec.waiting_reason:
                    out["state"] = {"waiting": {"reason": rec.waiting_reason,
                                                **({"message": rec.waiting_message}
                                                   if rec.waiting_message else {})}}
                    out["lastState"] = {"terminated": terminated}
                else:
                    out["state"] = {"terminated": terminated}
                    if rec.kind == "init" and st.exit_code == 0:
                        out["ready"] = True
            else:
                out["state"] = {"waiting": {"reason": rec.waiting_reason or "ContainerCreating"}}
        if allocated.get("requests"):
            out["allocatedResources"] = rz.format_list(allocated["requests"])
        if st is not None and st.state == "running":
            linux = st.resources.linux if st.resources else None
            actual = rz.actual_requirements(linux, allocated, ps.resize.hold_memory.get(rec.name))
        else:
            actual = allocated
        resources = rz.format_requirements(actual)
        if resources or (st is not None and st.state == "running"):
            # a running container always reports its resources, ``{}`` when it has none
            # (convertContainerStatusResources): the API server's "node supports resize" test
            out["resources"] = resources
        if rec.kind == "ephemeral":
            # no probes, no resources: never ready, and started only as the runtime says
            out.pop("started")
            out.pop("allocatedResources", None)
            out.pop("resources", None)
            out["ready"] = False
        return out

    def pod_level_status(self, status: dict[str, Any]) -> None:
        """``status.allocatedResources`` and ``status.resources`` of a pod with pod-level
        resources (KEP-5419): the allocated pod-level requests, and what the pod cgroup was last
        set to (cpu request from its shares, cpu limit from its quota, memory limit from its
        memory limit; the memory request is the allocation's), as for a container."""
        ps = self.ps
        level = ps.allocated.get(rz.POD_LEVEL)
        if level is None or not self.agent.resize_scope.pod_level:
            status.pop("allocatedResources", None)
            status.pop("resources", None)
            return
        if level.get("requests"):
            status["allocatedResources"] = rz.format_list(level["requests"])
        else:
            status.pop("allocatedResources", None)
        running = bool(ps.sandbox_id) and not ps.terminal
        actual = rz.actual_requirements(ps.pod_cgroup if running else None, level)
        resources = rz.format_requirements(actual)
        if resources:
            status["resources"] = resources
        else:
            status.pop("resources", None)

    def will_restart(self, rec: ContainerRecord) -> bool:
        if self.ps.terminal or rec.kind == "ephemeral":
            return False
        st = rec.status
        if st is None or st.state != "exited":
            return False
        if rec.kind == "sidecar" or rec.restart_now:
            return True
        policy = _restart_policy(self.ps.pod)
        if rec.kind == "init":
            return st.exit_code != 0 and policy != "Never"
        return policy == "Always" or (policy == "OnFailure" and st.exit_code != 0)

    def initialized(self) -> bool:
        for c in (self.ps.pod.get("spec") or {}).get("initContainers") or []:
            rec = self.ps.containers.get(c.get("name", ""))
            if rec is None:
                return False
            if rec.kind == "sidecar":
                if not (rec.status is not None and (rec.status.state == "running" or rec.restart_count > 0
                                                    or rec.status.state == "exited")):
                    return False
            elif not rec.init_done:
                return False
        return True

    def build_status(self, pod: dict[str, Any]) -> dict[str, Any]:
        ps, agent = self.ps, self.agent
        now = agent.clock.now()
        old = pod.get("status") or {}
        # shallow: what is kept of the old status is only read, and the write copies it
        status = dict(old)
        spec = pod.get("spec") or {}
        init_specs = spec.get("initContainers") or []
        app_specs = spec.get("containers") or []
        init_statuses = [self.container_status(ps.containers[c["name"]], c, now) for c in init_specs
                         if c.get("name") in ps.containers]
        app_statuses = [self.container_status(ps.containers[c["name"]], c, now) for c in app_specs
                        if c.get("name") in ps.containers]
        ephemeral_statuses = [self.container_status(ps.containers[c["name"]], c, now)
                              for c in spec.get("ephemeralContainers") or [] if c.get("name") in ps.containers]
        initialized = self.initialized()
        if ps.terminal:
            phase = ps.terminal
        elif ps.sandbox_id and initialized and all(
                ps.containers[c["name"]].status is not None for c in app_specs if c.get("name") in ps.containers):
            phase = "Running"
        else:
            phase = "Pending"
        status["phase"] = phase
        if ps.ended:
            status["reason"], status["message"] = ps.ended["reason"], ps.ended["message"]
        status["hostIP"] = agent.host_ip
        status["hostIPs"] = [{"ip": agent.host_ip}]
        if ps.pod_ip:
            status["podIP"] = ps.pod_ip
            status["podIPs"] = [{"ip": ps.pod_ip}]
        if ps.start_time:
            status["startTime"] = format_time(ps.start_time)
        if init_statuses:
            status["initContainerStatuses"] = init_statuses
        status["containerStatuses"] = app_statuses
        self.pod_level_status(status)
        if ephemeral_statuses:
            status["ephemeralContainerStatuses"] = ephemeral_statuses
        generation = (pod.get("metadata") or {}).get("generation")
        if generation:
            status["observedGeneration"] = generation
        # conditions
        unready = [s["name"] for s in app_statuses if not s["ready"]]
        incomplete = [c.get("name") for c in init_specs
                      if not (ps.containers.get(c.get("name", "")) and
                              (ps.containers[c["name"]].init_done or ps.containers[c["name"]].kind == "sidecar"))]
        terminal_reason = "PodCompleted" if ps.terminal else ""
        wanted: dict[str, tuple[str, str, str]] = {
            "PodReadyToStartContainers": ("True" if ps.sandbox_id and not ps.terminal else "False", "", ""),
            "Initialized": ("True", terminal_reason, "") if initialized else
            ("False", "ContainersNotInitialized", f"containers with incomplete status: [{' '.join(incomplete)}]"),
            "Ready": ("True", "", "") if not unready and not ps.terminal else
            ("False", terminal_reason or "ContainersNotReady",
             "" if ps.terminal else f"containers with unready status: [{' '.join(unready)}]"),
            "ContainersReady": ("True", "", "") if not unready and not ps.terminal else
            ("False", terminal_reason or "ContainersNotReady",
             "" if ps.terminal else f"containers with unready status: [{' '.join(unready)}]"),
        }
        old_conditions = {c.get("type"): c for c in conditions_of(old)}
        conditions = []
        for ctype in SYSTEM_CONDITIONS:
            value, reason, message = wanted[ctype]
            previous = old_conditions.get(ctype) or {}
            cond: dict[str, Any] = {"type": ctype, "status": value, "lastProbeTime": None,
                                    "lastTransitionTime": previous.get("lastTransitionTime")
                                    if previous.get("status") == value else format_time(now)}
            if generation:
                cond["observedGeneration"] = generation
            if reason:
                cond["reason"] = reason
            if message:
                cond["message"] = message
            conditions.append(cond)
        ended = (ps.ended or {}).get("condition")
        for kept_type, kept in old_conditions.items():     # the conditions others own
            if kept_type not in SYSTEM_CONDITIONS and kept_type not in (rz.PENDING, rz.IN_PROGRESS) and \
                    not (ended and kept_type == ended["type"]):
                conditions.append(kept)
        if ended:
            conditions.append({**ended, "lastProbeTime": None,
                               **({"observedGeneration": generation} if generation else {})})
        conditions.extend(ps.resize.conditions())
        status["conditions"] = conditions
        return status

    async def write_status(self) -> None:
        ps, agent = self.ps, self.agent
        pod = agent.latest(ps) or ps.pod
        for _ in range(5):
            status = self.build_status(pod)
            if status == pod.get("status"):
                return
            body = dict(pod)
            body["status"] = status
            try:
                updated = await agent.client.update_status("pods", body)
            except Conflict:
                try:
                    pod = await agent.client.get("pods", ps.name, ps.namespace)
                except NotFound:
                    ps.deleted = True
                    return
                if (pod.get("metadata") or {}).get("uid") != ps.uid:
                    ps.deleted = True
                    return
                continue
            except NotFound:
                ps.deleted = True
                return
            except ApiError as e:
                log.warning("status of %s/%s not written: %s", ps.namespace, ps.name, e)
                self.due(agent.clock.now() + ERROR_RETRY)
                return
            agent.observe(updated)
            return
        self.due(agent.clock.now() + 1.0)

    async def write_explain(self) -> None:
        ps, agent = self.ps, self.agent
        text = agent.explanation(ps)
        pod = agent.latest(ps) or ps.pod
        current = ((pod.get("metadata") or {}).get("annotations") or {}).get(EXPLAIN_ANNOTATION)
        if text == current:
            ps.last_explain = text
            return
        if text == ps.last_explain and current is not None:
            return
        try:
            updated = await agent.client.patch("pods", ps.name,
                                               {"metadata": {"annotations": {EXPLAIN_ANNOTATION: text}}},
                                               namespace=ps.namespace)
        except NotFound:
            ps.deleted = True
            return
        except ApiError as e:
            log.debug("explanation of %s/%s not written: %s", ps.namespace, ps.name, e)
            return
        ps.last_explain = text
        agent.observe(updated)


def rz_duration(seconds: float) -> str:
    """A back-off in whole seconds as Go prints it: 10s, 1m20s, 5m0s."""
    return format_go_duration(int(seconds))


def _cid(container_id: str, scheme: str) -> str:
    return container_id if "://" in container_id else f"{scheme}://{container_id}"


def _terminated(st: ContainerStatus, scheme: str) -> dict[str, Any]:
    reason = st.reason or ("Completed" if st.exit_code == 0 else "Error")
    out: dict[str, Any] = {"exitCode": st.exit_code, "reason": reason,
                           "startedAt": format_time(st.started_at) if st.started_at else None,
                           "finishedAt": format_time(st.finished_at) if st.finished_at else None,
                           "containerID": _cid(st.id, scheme)}
    return out


async def _status_or_none(runtime: Runtime, container_id: str) -> ContainerStatus | None:
    try:
        return await runtime.container_status(container_id)
    except CriError:
        return None


def parse_start_time(pod: dict[str, Any]) -> float:
    text = (pod.get("status") or {}).get("startTime")
    try:
        return parse_time(text) if text else 0.0
    except ValueError:
        return 0.0


__all__ = ["BACKOFF_INITIAL", "BACKOFF_MAX", "ContainerRecord", "EXPLAIN_ANNOTATION", "PodState",
           "PodWorker", "parse_start_time"]
