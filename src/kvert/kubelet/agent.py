"""The node agent (kvert's kubelet): one per node, written against a Client and a Clock.

``NodeAgent(client, clock, config, runtime, name=..., checkpoint_dir=...)``; ``await
agent.run()`` until ``agent.stop()`` (or cancellation). It

* registers its Node (capacity, allocatable = capacity - kube-reserved - system-reserved
  - hard eviction thresholds, seed 004; conditions Ready / MemoryPressure / DiskPressure /
  PIDPressure; nodeInfo; addresses; labels), renews a ``coordination.k8s.io/v1`` Lease in
  ``kube-node-lease`` every ``heartbeat_seconds`` and reports the node status when it
  changes or every 5 minutes (Kubernetes' nodeStatusReportFrequency);
* watches the pods bound to it (an informer with ``spec.nodeName=<name>``);
* admits new pods in creation order (``admission``), rejects those that do not fit with
  ``OutOfcpu`` / ``OutOfmemory`` / ``OutOfpods`` ...;
* runs one worker per admitted pod (``lifecycle``) and a PLEG-like relist of the runtime
  every ``pleg_seconds`` that wakes the worker of a pod whose containers changed;
* fills each pod's projected volumes before its sandbox starts (``tokens``): service
  account tokens bound to the pod, requested again at 80% of their lifetime, the
  ``kube-root-ca.crt`` ConfigMap, downward API fields;
* decides resizes (``resize``) in its reconcile loop: Proposed -> InProgress / Deferred /
  Infeasible, retrying deferred ones whenever a pod changes or leaves and every
  ``resize_retry_seconds``;
* runs the eviction manager (``eviction``) every ``eviction_interval`` (10 s): the node's
  MemoryPressure / DiskPressure / PIDPressure conditions, at most one pod evicted per pass
  (``Failed`` / ``Evicted``), pods refused under pressure; hands the kubepods and QoS-tier
  cgroup values to the runtime; finishes pods stuck terminating that no worker owns;
* checkpoints allocations and resize state (``checkpoint``) so a restarted agent --
  given the same runtime object, which keeps its containers running -- re-admits its pods
  at their allocated values before anything else, without restarting containers, and
  then finishes the resizes in flight;
* writes its decisions into the pod annotation ``explain.kvert.io/node`` (QoS class,
  cgroup values and oom_score_adj per container, the admission and last resize
  decision with its numbers), read by ``kvert explain pod``;
* exposes cAdvisor-style metrics (``metrics_text()``) and metrics.k8s.io objects
  (``pod_metrics()``, ``node_metrics()``).

The runtime is the caller's: if it has a ``run()`` coroutine (the sim runtime's ticker) the
caller runs it, so the runtime outlives agent restarts.
"""

from __future__ import annotations

import asyncio
import dataclasses
import ipaddress
import json
import logging
import math
import zlib
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from kvert.api.conditions import conditions_of, find_condition, new_condition
from kvert.api.errors import AlreadyExists, ApiError, Conflict, NotFound
from kvert.api.features import GATES
from kvert.api.meta import deep_copy, format_micro_time, format_time
from kvert.api.nodefeatures import DEFAULT_REGISTRY, NodeConfiguration
from kvert.api.pods import pod_requests, qos_class
from kvert.api.resources import parse_resource_list
from kvert.api.version import KUBELET_VERSION, KUBERNETES_VERSION
from kvert.client.base import Client
from kvert.client.events import EventRecorder
from kvert.client.informer import Informer
from kvert.clock import sleep_unless, wait_event
from kvert.clock.base import Clock
from kvert.kubelet import admission as adm
from kvert.kubelet import resize as rz
from kvert.kubelet.allocatable import allocatable as node_allocatable
from kvert.kubelet.allocatable import allocatable_absolute, kubepods_resources, node_status_resources
from kvert.kubelet.cgroups import cgroup_files, explain_pod, qos_cgroup_path, qos_cgroup_values
from kvert.kubelet.checkpoint import Checkpoint
from kvert.kubelet.config import NodeConfig
from kvert.kubelet.cpumanager import CpuManager, format_cpuset
from kvert.kubelet.envvars import PodEnvironment
from kvert.kubelet.eviction import (
    ALLOCATABLE_MEMORY_AVAILABLE,
    MEMORY_AVAILABLE,
    MONITORING_INTERVAL,
    REASON,
    SIGNAL_RESOURCE,
    Eviction,
    EvictionManager,
    has_local_storage_limits,
    local_storage_evictions,
    make_observations,
)
from kvert.kubelet.lifecycle import EXPLAIN_ANNOTATION, PodWorker, parse_start_time
from kvert.kubelet.localstorage import empty_dir_usage
from kvert.kubelet.metrics import ContainerSample, UsageTracker, cadvisor_metrics, container_sample, node_summary
from kvert.kubelet.podstate import ContainerRecord, PodState
from kvert.kubelet.resize import metrics as rzm
from kvert.kubelet.runtime.base import (
    ContainerResources,
    CriError,
    EventedRuntime,
    LinuxContainerResources,
    NodeStats,
    Runtime,
    is_evented,
)
from kvert.kubelet.tokens import ProjectedVolumes

log = logging.getLogger(__name__)

LEASE_NAMESPACE = "kube-node-lease"
KUBELET_PORT = 10250
STATUS_REPORT_SECONDS = 300.0       # nodeStatusReportFrequency
RESIZE_RETRY_SECONDS = 180.0        # the allocation manager's periodic retry (3 min)
EVICTION_CLEANUP_POLL = 1.0         # podCleanupPollFreq
EVICTION_CLEANUP_TIMEOUT = 30.0     # podCleanupTimeout
STUCK_DELETE_RETRY = 60.0           # a pod force-deleted by its node is tried again after this
CIDR_RECHECK_SECONDS = 10.0         # how often a node without a pod CIDR looks for one

_PRESSURE = {
    "MemoryPressure": ("KubeletHasSufficientMemory", "kubelet has sufficient memory available",
                       "KubeletHasInsufficientMemory", "kubelet has insufficient memory available"),
    "DiskPressure": ("KubeletHasNoDiskPressure", "kubelet has no disk pressure",
                     "KubeletHasDiskPressure", "kubelet has disk pressure"),
    "PIDPressure": ("KubeletHasSufficientPID", "kubelet has sufficient PID available",
                    "KubeletHasInsufficientPID", "kubelet has insufficient PID available"),
}


def _uid(pod: dict[str, Any]) -> str:
    return (pod.get("metadata") or {}).get("uid", "")


def _rv(obj: dict[str, Any] | None) -> int:
    try:
        return int(((obj or {}).get("metadata") or {}).get("resourceVersion") or 0)
    except ValueError:
        return 0


def _phase(pod: dict[str, Any]) -> str:
    return (pod.get("status") or {}).get("phase", "")


@dataclasses.dataclass(frozen=True)
class _EventSource:
    """A runtime that reports container events and memory thresholds itself, and the period
    relisting and eviction polling fall back to meanwhile."""
    runtime: EventedRuntime
    interval: float


class NodeAgent:
    def __init__(self, client: Client, clock: Clock, config: NodeConfig, runtime: Runtime, *, name: str,
                 checkpoint_dir: Path | str | None = None, heartbeat_seconds: float = 10,
                 lease_seconds: int = 40, pleg_seconds: float = 1.0,
                 resize_retry_seconds: float = RESIZE_RETRY_SECONDS, host_ip: str = "127.0.0.1",
                 labels: dict[str, str] | None = None, eviction_interval: float = MONITORING_INTERVAL,
                 evented_interval: float | None = None, explain: bool = True,
                 kubernetes_address: tuple[str, int] | None = None):
        self.client = client
        self.clock = clock
        self.config = config
        self.runtime = runtime
        self.name = name
        self.heartbeat_seconds = float(heartbeat_seconds)
        self.lease_seconds = int(lease_seconds)
        self.pleg_seconds = float(pleg_seconds)
        self.resize_retry_seconds = float(resize_retry_seconds)
        self.host_ip = host_ip
        self.kubelet_port = KUBELET_PORT      # where this agent's kubelet endpoint listens
        self.extra_labels = dict(labels or {})
        self.allocatable = node_allocatable(config)
        self.allocatable_absolute = allocatable_absolute(config)
        self.memory_capacity = config.capacity.get("memory", 0)
        self.cgroup_options = rz.CgroupOptions(self.memory_capacity, cpu_cfs_quota=config.cpu_cfs_quota,
                                               cpu_period=config.cpu_cfs_quota_period_us)
        self.resize_scope = rz.ResizeScope(
            pod_level=config.feature("InPlacePodLevelResourcesVerticalScaling"),
            init_containers=config.feature("InPlacePodVerticalScalingInitContainers"))
        self.resize_limits = rz.NodeLimits(
            self.allocatable, self.allocatable_absolute, cpu_manager_policy=config.cpu_manager_policy,
            exclusive_cpus=config.feature("InPlacePodVerticalScalingExclusiveCPUs"), scope=self.resize_scope)
        self.resize_metrics = rzm.ResizeMetrics()       # the kubelet's resize metrics on /metrics
        self.declared_features = self.discover_node_features()
        self.checkpoint = Checkpoint(checkpoint_dir)
        self.resizes: rz.ResizeWriter[PodState] = rz.ResizeWriter(self.checkpoint, self.save)
        self.volumes = ProjectedVolumes(client, clock, checkpoint_dir, allocatable=self.allocatable)
        # containers' environments; ``kubernetes_address``: the API server's own, for a node
        # without a service network (kvert.kubelet.envvars)
        self.environment = PodEnvironment(client, clock, kubernetes=kubernetes_address)
        self.recorder = EventRecorder(client, clock, "kubelet", name)
        self.informer = Informer(client, "pods", clock=clock, field_selector=f"spec.nodeName={name}")
        self.informer.add_handlers(self._on_add, self._on_update, self._on_delete)
        self.pods: dict[str, PodState] = {}
        self.finished: set[str] = set()          # uids rejected or finished before we saw them
        self.pressure = {"MemoryPressure": False, "DiskPressure": False, "PIDPressure": False}
        self.eviction = EvictionManager.for_node(config)
        self.eviction_interval = float(eviction_interval)
        # with a runtime that reports container events and memory thresholds (the evented
        # PLEG, memcg notifications), relisting and eviction polling fall back to this period
        self.evented_interval = evented_interval if is_evented(runtime) else None
        self._events = _EventSource(runtime, evented_interval) \
            if evented_interval is not None and is_evented(runtime) else None
        # the explain.kvert.io/node annotation (``kvert explain``); a simulation has no reader for it
        self.explain = explain
        self.evictions: list[dict[str, Any]] = []    # node-pressure evictions, latest 1000 (reports, tests)
        self._node_cgroups_key: tuple[tuple[str, int], ...] = ()
        self._force_deleted: dict[str, float] = {}   # uid -> when a stuck pod was force-deleted
        self.ready = asyncio.Event()             # registered, synced and restored
        self.node: dict[str, Any] | None = None
        self.syncs = 0
        self._dirty = asyncio.Event()
        # why the reconcile loop was woken since it last ran (retryPendingResizes' trigger)
        self._triggers: list[str] = []
        # pods whose spec changed: their workers wake after the next reconcile's resize decisions
        self._spec_changed: set[str] = set()
        self._stop = asyncio.Event()
        self._tasks: list[asyncio.Task] = []
        self._next_resize_retry = 0.0
        self._last_status_report = 0.0
        self._last_node_status: dict[str, Any] | None = None
        self._ip_next = 0
        self._cidr_checked_at = -math.inf
        crc = zlib.crc32(name.encode())
        self._fallback_cidr = f"10.{251 + crc % 4}.{crc >> 8 & 255}.0/24"
        self._statuses: dict[str, Any] = {}      # container id -> last ContainerStatus (PLEG)
        self.cpu_manager = CpuManager(config.cpu_manager_policy, config.capacity.get("cpu", 0) // 1000,
                                      reserved=config.reserved_system_cpus,
                                      reserved_milli=config.kube_reserved.get("cpu", 0)
                                      + config.system_reserved.get("cpu", 0))
        self._shared_cpuset = ""                 # the shared pool the running containers have
        self._tracker: UsageTracker | None = None
        self._last_node_metrics: dict[str, Any] | None = None

    # ==== running ================================================================================

    async def run(self) -> None:
        informer_task = asyncio.ensure_future(self.informer.run())
        self._tasks = [informer_task]
        try:
            await self._retry(self.register_node)
            await self.informer.wait_synced()
            await self.restore()
            loops = [self._reconcile_loop(), self._heartbeat_loop(), self._pleg_loop(),
                     self.volumes.run()]
            if (self.eviction.thresholds or self.config.local_storage_capacity_isolation) and \
                    hasattr(self.runtime, "node_stats"):
                loops.append(self._eviction_loop())
            for coro in loops:
                self._tasks.append(asyncio.ensure_future(coro))
            self.ready.set()
            await self._stop.wait()
        finally:
            self.informer.stop()
            workers = [ps.worker_task for ps in self.pods.values() if ps.worker_task is not None]
            for task in self._tasks + workers:
                task.cancel()
            await asyncio.gather(*self._tasks, *workers, return_exceptions=True)
            self._tasks = []
            if hasattr(self.runtime, "wait_closed"):
                await self.runtime.wait_closed()

    def stop(self) -> None:
        self._stop.set()
        close = getattr(self.runtime, "close", None)
        if close is not None:      # a runtime of real processes kills them now, and starts no more
            close()

    async def _retry(self, fn: Any) -> Any:
        delay = 1.0
        while True:
            try:
                return await fn()
            except (ApiError, OSError) as e:
                log.warning("node %s: %s failed (%s); retrying", self.name, getattr(fn, "__name__", fn), e)
                await self.clock.sleep(delay)
                delay = min(delay * 2, 30.0)

    def trigger(self, reason: str = "") -> None:
        """Ask the reconcile loop to run (admissions, resize decisions, deferred retries)."""
        if reason and reason not in self._triggers:
            self._triggers.append(reason)
        self._dirty.set()

    # ---- informer handlers (synchronous: record and wake) ----------------------------------------

    def _on_add(self, pod: dict[str, Any]) -> None:
        self._seen(pod)

    def _on_update(self, old: dict[str, Any], new: dict[str, Any]) -> None:
        self._seen(new)

    def _on_delete(self, pod: dict[str, Any]) -> None:
        ps = self.pods.get(_uid(pod))
        if ps is not None:
            ps.deleted = True
            ps.wake.set()
        self.trigger(rzm.PODS_REMOVED)

    def _seen(self, pod: dict[str, Any]) -> None:
        ps = self.pods.get(_uid(pod))
        if ps is not None:
            old = ps.pod
            if _rv(pod) >= _rv(old):
                ps.pod = pod
                if (old.get("metadata") or {}).get("generation") != (pod.get("metadata") or {}).get("generation"):
                    # HandlePodUpdates' recordContainerResizeOperations
                    self.resize_metrics.pod_updated(old, pod, self.resize_scope)
            self._wake_for(ps, old, pod)
            self.trigger(rzm.POD_UPDATED)
        else:
            self.trigger(rzm.PODS_ADDED)

    def _wake_for(self, ps: PodState, old: dict[str, Any], new: dict[str, Any]) -> None:
        """Wake the worker of a pod being deleted or given a new spec. A new spec wakes
        it after the reconcile that decides a resize it asks for: as the kubelet's
        HandlePodUpdates allocates before the pod worker syncs, so the first status written
        for the new generation already says what became of the resize."""
        old_meta, new_meta = old.get("metadata") or {}, new.get("metadata") or {}
        if old_meta.get("deletionTimestamp") != new_meta.get("deletionTimestamp"):
            ps.wake.set()
        elif old_meta.get("generation") != new_meta.get("generation"):
            self._spec_changed.add(ps.uid)
            self._dirty.set()

    # ---- helpers for workers -------------------------------------------------------------------

    def latest(self, ps: PodState) -> dict[str, Any]:
        cached = self.informer.get(ps.name, ps.namespace)
        if cached is not None and _uid(cached) == ps.uid and _rv(cached) > _rv(ps.pod):
            ps.pod = cached
        return ps.pod

    def observe(self, pod: dict[str, Any]) -> None:
        """Keep a newer copy a worker got back from a write. It may be the first sight of a
        deletion or spec change (the watch event then finds nothing new), so it wakes the
        worker as the watch event would have."""
        ps = self.pods.get(_uid(pod))
        if ps is not None and _rv(pod) > _rv(ps.pod):
            old, ps.pod = ps.pod, pod
            self._wake_for(ps, old, pod)

    async def event(self, pod: dict[str, Any], type_: str, reason: str, message: str) -> None:
        obj = pod if pod.get("kind") else {"apiVersion": "v1", "kind": "Pod", **pod}
        await self.recorder.record(obj, type_, reason, message)

    async def allocate_ip(self) -> str:
        """The next free address of the node's pod CIDR (``spec.podCIDR``, set by node IPAM;
        the first host address is the bridge's, as host-local IPAM leaves it), or of a /24
        derived from the node's name while it has none (a cluster without node IPAM)."""
        if self.node is not None and not (self.node.get("spec") or {}).get("podCIDR") \
                and self.clock.now() - self._cidr_checked_at >= CIDR_RECHECK_SECONDS:
            # node IPAM sets it moments after the node registers: look before a pod needs it
            self._cidr_checked_at = self.clock.now()
            try:
                self.node = await self.client.get("nodes", self.name)
            except ApiError:
                pass
        cidr = ((self.node or {}).get("spec") or {}).get("podCIDR") or self._fallback_cidr
        network = ipaddress.ip_network(cidr, strict=False)
        first, count = 2, min(network.num_addresses - 3, 1 << 16)
        used = {ps.pod_ip for ps in self.pods.values()}
        for _ in range(max(count, 1)):
            offset = first + (self._ip_next % max(count, 1))
            self._ip_next += 1
            ip = str(network[offset])
            if ip not in used:
                return ip
        return str(network[1])

    def save(self, ps: PodState) -> None:
        """Checkpoint everything about a pod but its allocation (saved when it changes)."""
        if ps.uid not in self.pods:
            return
        self.checkpoint.update(
            ps.uid, namespace=ps.namespace, name=ps.name, sandbox=ps.sandbox_id or None,
            # a flat frozen dataclass of numbers: its fields are its __dict__ (asdict recurses and copies)
            pod_cgroup=dict(vars(ps.pod_cgroup)) if ps.pod_cgroup is not None else None,
            containers={n: r.to_json() for n, r in ps.containers.items()},
            actuated=ps.actuated or {}, resize=ps.resize.to_json() or {}, pod_ip=ps.pod_ip or None,
            start_time=ps.start_time or None, terminal=ps.terminal or None, ended=ps.ended)

    def forget(self, ps: PodState) -> None:
        self.pods.pop(ps.uid, None)
        self.cpu_manager.release(ps.uid)       # the reconcile this triggers widens the shared pool
        self.checkpoint.remove(ps.uid)
        self.volumes.remove(ps.uid)
        self.trigger("pods_removed")

    def note_synced(self, ps: PodState) -> None:
        self.syncs += 1

    def explanation(self, ps: PodState) -> str:
        """The ``explain.kvert.io/node`` annotation: compact JSON, stable while nothing changes."""
        cache_key = json.dumps([ps.allocated, ps.admission, ps.resize.last_decision], sort_keys=True)
        if cache_key == ps.explain_key:
            return ps.explain_text
        pod = rz.with_allocation(ps.pod, ps.allocated)
        data = explain_pod(pod, self.config)
        key = "v1" if self.config.cgroup_version == 1 else "v2"
        out: dict[str, Any] = {
            "node": self.name,
            "qosClass": data["qosClass"],
            **self._node_cgroups_explained(data),
            "pod": {"path": data["pod"]["path"], "requests": data["pod"]["requests"],
                    "limits": data["pod"]["limits"], "cgroup": data["pod"][key]},
            "containers": [{"name": c["name"], "oomScoreAdj": c["oomScoreAdj"], "cgroup": c[key],
                            **({"init": True} if c.get("init") else {}),
                            **({"sidecar": True} if c.get("sidecar") else {})}
                           for c in data["containers"]],
        }
        if ps.admission:
            out["admission"] = ps.admission
        if ps.resize.last_decision:
            out["resize"] = ps.resize.last_decision
        ps.explain_key = cache_key
        ps.explain_text = json.dumps(out, sort_keys=True, separators=(",", ":"))
        return ps.explain_text

    def _node_cgroups_explained(self, data: dict[str, Any]) -> dict[str, Any]:
        """The kubepods and QoS-tier values the runtime has applied (as of this explanation)."""
        applied = getattr(self.runtime, "node_cgroups", None)
        values = applied() if applied is not None else {}
        if not values:
            return {}
        version = self.config.cgroup_version
        driver = self.config.cgroup_driver
        tier = {"Guaranteed": "", "Burstable": "burstable", "BestEffort": "besteffort"}.get(data["qosClass"], "")
        out = {"kubepods": {"path": qos_cgroup_path("", driver),
                            "cgroup": cgroup_files(values["kubepods"], version, kubelet=True)}}
        if tier and tier in values:
            out["qos"] = {"path": qos_cgroup_path(tier, driver),
                          "cgroup": cgroup_files(values[tier], version, kubelet=True)}
        return out

    # ==== node registration, status, lease ==========================================================

    def labels(self) -> dict[str, str]:
        labels = {"kubernetes.io/hostname": self.name, "kubernetes.io/os": "linux",
                  "kubernetes.io/arch": "amd64", "beta.kubernetes.io/os": "linux",
                  "beta.kubernetes.io/arch": "amd64"}
        labels.update(self.config.labels or {})
        labels.update(self.extra_labels)
        return labels

    def discover_node_features(self) -> list[str]:
        """``status.declaredFeatures`` (KEP-5328): the features this node's gates and CPU manager
        policy give it, sorted; none while NodeDeclaredFeatures is off."""
        config = self.config
        if not config.feature("NodeDeclaredFeatures"):
            return []
        node = NodeConfiguration(feature_gates=lambda name: name in GATES and config.feature(name),
                                 cpu_manager_policy=config.cpu_manager_policy, version=KUBERNETES_VERSION)
        return DEFAULT_REGISTRY.discover_node_features(node)

    def admit_declared_features(self, pod: dict[str, Any]) -> adm.Decision | None:
        """A pod needing a node feature this node does not declare is rejected (while
        NodeDeclaredFeatures is on)."""
        if not self.config.feature("NodeDeclaredFeatures"):
            return None
        return adm.declared_features_refusal(pod, self.declared_features, DEFAULT_REGISTRY, KUBERNETES_VERSION)

    def node_status(self, previous: dict[str, Any] | None) -> dict[str, Any]:
        now = format_time(self.clock.now())
        conditions = []
        for ctype, (ok_reason, ok_msg, bad_reason, bad_msg) in _PRESSURE.items():
            bad = self.pressure.get(ctype, False)
            conditions.append(self._condition(find_condition(previous, ctype), ctype,
                                              "True" if bad else "False", bad_reason if bad else ok_reason,
                                              bad_msg if bad else ok_msg, now))
        conditions.append(self._condition(find_condition(previous, "Ready"), "Ready", "True",
                                          "KubeletReady", "kubelet is posting ready status", now))
        resources = node_status_resources(self.config)
        runtime_name = getattr(self.runtime, "name", "sim") or "sim"
        declared = {"declaredFeatures": list(self.declared_features)} if self.declared_features else {}
        return {
            **declared,
            "capacity": resources["capacity"],
            "allocatable": resources["allocatable"],
            "conditions": conditions,
            "addresses": [{"type": "InternalIP", "address": self.host_ip},
                          {"type": "Hostname", "address": self.name}],
            "daemonEndpoints": {"kubeletEndpoint": {"Port": self.kubelet_port}},
            "nodeInfo": {
                "machineID": zlib.crc32(self.name.encode()).to_bytes(4, "big").hex() * 4,
                "systemUUID": zlib.crc32(("uuid/" + self.name).encode()).to_bytes(4, "big").hex() * 4,
                "bootID": zlib.crc32(("boot/" + self.name).encode()).to_bytes(4, "big").hex() * 4,
                "kernelVersion": "6.8.0-kvert", "osImage": "kvert simulated node",
                "containerRuntimeVersion": f"sim://{runtime_name}" if "://" not in runtime_name else runtime_name,
                "kubeletVersion": KUBELET_VERSION, "kubeProxyVersion": KUBELET_VERSION,
                "operatingSystem": "linux", "architecture": "amd64",
                **(self.runtime.node_info() if hasattr(self.runtime, "node_info") else {}),
            },
        }

    @staticmethod
    def _condition(old: Mapping[str, Any] | None, ctype: str, status: str, reason: str, message: str,
                   now: str) -> dict[str, Any]:
        condition = new_condition(ctype, status, reason, message, now=now,
                                  times=("lastHeartbeatTime", "lastTransitionTime"))
        if old and old.get("status") == status:
            condition["lastTransitionTime"] = old.get("lastTransitionTime")
        return condition

    def node_object(self) -> dict[str, Any]:
        return {"apiVersion": "v1", "kind": "Node",
                "metadata": {"name": self.name, "labels": self.labels(),
                             "annotations": {"node.alpha.kubernetes.io/ttl": "0",
                                             "volumes.kubernetes.io/controller-managed-attach-detach": "true"}},
                "spec": {},
                "status": self.node_status(None)}

    async def register_node(self) -> None:
        try:
            self.node = await self.client.create("nodes", self.node_object())
        except AlreadyExists:
            existing = await self.client.get("nodes", self.name)
            labels = dict((existing.get("metadata") or {}).get("labels") or {})
            wanted = self.labels()
            if any(labels.get(k) != v for k, v in wanted.items()):
                existing = await self.client.patch("nodes", self.name, {"metadata": {"labels": wanted}})
            await self._update_node_status(existing, force=True)
        self._last_status_report = self.clock.now()
        await self._renew_lease()

    async def _update_node_status(self, node: dict[str, Any] | None = None, force: bool = False) -> None:
        for _ in range(3):
            if node is None:
                node = await self.client.get("nodes", self.name)
            self.node = node        # the latest spec too (node IPAM sets spec.podCIDR)
            previous = node.get("status") or {}
            status = self.node_status(previous)
            comparable = {k: v for k, v in status.items() if k != "conditions"}
            changed = any(previous.get(k) != v for k, v in comparable.items()) or [
                (c["type"], c["status"], c["reason"]) for c in status["conditions"]] != [
                (c.get("type"), c.get("status"), c.get("reason")) for c in conditions_of(previous)]
            if not force and not changed and \
                    self.clock.now() - self._last_status_report < STATUS_REPORT_SECONDS:
                return
            body = dict(node)
            body["status"] = {**previous, **status}
            if "declaredFeatures" not in status:
                body["status"].pop("declaredFeatures", None)     # the gate was turned off
            try:
                self.node = await self.client.update_status("nodes", body)
                self._last_status_report = self.clock.now()
                return
            except Conflict:
                node = None
        log.warning("node %s: status update kept conflicting", self.name)

    async def _renew_lease(self) -> None:
        now = format_micro_time(self.clock.now())
        try:
            lease = await self.client.get("coordination.k8s.io/leases", self.name, LEASE_NAMESPACE)
        except NotFound:
            owner = []
            if self.node and (self.node.get("metadata") or {}).get("uid"):
                owner = [{"apiVersion": "v1", "kind": "Node", "name": self.name,
                          "uid": self.node["metadata"]["uid"]}]
            body = {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                    "metadata": {"name": self.name, "namespace": LEASE_NAMESPACE,
                                 **({"ownerReferences": owner} if owner else {})},
                    "spec": {"holderIdentity": self.name, "leaseDurationSeconds": self.lease_seconds,
                             "renewTime": now}}
            try:
                await self.client.create("coordination.k8s.io/leases", body, namespace=LEASE_NAMESPACE)
            except AlreadyExists:
                pass
            return
        spec = lease.setdefault("spec", {})
        spec.update({"holderIdentity": self.name, "leaseDurationSeconds": self.lease_seconds,
                     "renewTime": now})
        try:
            await self.client.update("coordination.k8s.io/leases", lease)
        except Conflict:
            pass

    async def _heartbeat_loop(self) -> None:
        while True:
            await self.clock.sleep(self.heartbeat_seconds)
            try:
                await self._renew_lease()
                await self._update_node_status()
            except (ApiError, OSError) as e:
                log.warning("node %s: heartbeat failed: %s", self.name, e)

    # ==== restore after a restart ================================================================

    async def restore(self) -> None:
        """Re-admit, at their checkpointed allocations, the pods this node was running; clean up
        what belongs to pods that are gone. Runs before any new pod or resize is considered."""
        cache = {_uid(p): p for p in self.informer.list()}
        for uid in list(self.checkpoint.uids()):
            entry = self.checkpoint.entry(uid) or {}
            pod = cache.get(uid)
            if pod is None or _phase(pod) in ("Succeeded", "Failed"):
                await self._remove_runtime_state(entry.get("sandbox"))
                self.checkpoint.remove(uid)
                self.volumes.remove(uid)
                if pod is not None:
                    self.finished.add(uid)
                continue
            ps = self._restore_pod(pod, entry)
            if entry.get("terminal"):
                # it ended here before the restart, but the API may not know yet: say so
                ps.terminal, ps.ended = entry["terminal"], entry.get("ended")
        # pods running here per the API but unknown to the checkpoint (no checkpoint dir)
        for uid, pod in cache.items():
            if uid in self.pods or uid in self.finished:
                continue
            if _phase(pod) in ("Succeeded", "Failed"):
                self.finished.add(uid)
                continue
            statuses = (pod.get("status") or {}).get("containerStatuses") or []
            if any(cs.get("allocatedResources") is not None for cs in statuses):
                self._restore_from_status(pod)
        for ps in self.pods.values():
            self._start_worker(ps)
        self.trigger("restored")

    def _restore_pod(self, pod: dict[str, Any], entry: dict[str, Any]) -> PodState:
        uid = _uid(pod)
        meta = pod.get("metadata") or {}
        allocated = self.checkpoint.allocated(uid) or rz.spec_allocation(pod, self.resize_scope)
        level = rz.pod_level_requirements(pod) if self.resize_scope.pod_level else None
        if level is not None and rz.POD_LEVEL not in allocated:
            # a checkpoint from before pod-level resize: its pod cgroup followed the spec
            allocated = {**allocated, rz.POD_LEVEL: level}
        ps = PodState(uid=uid, namespace=meta.get("namespace", ""), name=meta.get("name", ""), pod=pod,
                      allocated=allocated, actuated=self.checkpoint.actuated(uid))
        ps.sandbox_id = entry.get("sandbox") or ""
        if entry.get("pod_cgroup"):
            ps.pod_cgroup = LinuxContainerResources(**entry["pod_cgroup"])
        records = entry.get("containers") or {}
        ephemeral = [(c, "ephemeral") for c in (pod.get("spec") or {}).get("ephemeralContainers") or []
                     if c.get("name") in records]      # the others start when the worker syncs
        for c, kind in rz.allocatable_containers(pod) + ephemeral:
            rec = ContainerRecord(c.get("name", ""), kind)
            if rec.name in records:
                rec.load(records[rec.name])
            ps.containers[rec.name] = rec
        ps.resize = rz.ResizeState.from_json(entry.get("resize"))
        ps.pod_ip = entry.get("pod_ip") or (pod.get("status") or {}).get("podIP", "")
        ps.start_time = entry.get("start_time") or parse_start_time(pod) or self.clock.now()
        ps.admission = {"result": "Accepted", "restored": True}
        self.pods[uid] = ps
        return ps

    def _restore_from_status(self, pod: dict[str, Any]) -> None:
        uid = _uid(pod)
        status = pod.get("status") or {}
        allocated = rz.spec_allocation(pod, self.resize_scope)
        if rz.POD_LEVEL in allocated and status.get("allocatedResources") is not None:
            allocated[rz.POD_LEVEL]["requests"] = parse_resource_list(status["allocatedResources"])
        entry: dict[str, Any] = {"containers": {}}
        for cs in (status.get("initContainerStatuses") or []) + (status.get("containerStatuses") or []):
            name = cs.get("name", "")
            if name in allocated and cs.get("allocatedResources") is not None:
                allocated[name]["requests"] = parse_resource_list(cs["allocatedResources"])
            cid = (cs.get("containerID") or "").split("://", 1)[-1]
            entry["containers"][name] = {"id": cid, "restarts": cs.get("restartCount", 0),
                                         "lastTerminated": (cs.get("lastState") or {}).get("terminated"),
                                         "initDone": bool(((cs.get("state") or {}).get("terminated") or {})
                                                          .get("exitCode") == 0)}
            sandbox_of = getattr(self.runtime, "sandbox_of", None)
            if cid and sandbox_of is not None and "sandbox" not in entry:
                try:
                    entry["sandbox"] = sandbox_of(cid)
                except CriError:
                    pass
        meta = pod.get("metadata") or {}
        self.checkpoint.set_allocated(uid, meta.get("namespace", ""), meta.get("name", ""), allocated)
        ps = self._restore_pod(pod, entry)
        ps.actuated = {}
        for name, rec in ps.containers.items():
            if rec.id and name in allocated:
                ps.actuated[name] = deep_copy(allocated[name])
        self.save(ps)

    async def _remove_runtime_state(self, sandbox_id: str | None) -> None:
        if not sandbox_id:
            return
        try:
            await self.runtime.stop_pod_sandbox(sandbox_id)
            await self.runtime.remove_pod_sandbox(sandbox_id)
        except CriError as e:
            log.debug("sandbox %s: %s", sandbox_id, e)

    def _start_worker(self, ps: PodState) -> None:
        worker = PodWorker(self, ps)
        ps.worker = worker
        ps.worker_task = asyncio.ensure_future(worker.run())
        ps.wake.set()

    # ==== the reconcile loop: admission and resize decisions =======================================

    async def _reconcile_loop(self) -> None:
        while True:
            timeout = None
            if self._next_resize_retry:
                timeout = max(0.0, self._next_resize_retry - self.clock.now())
            woken = await wait_event(self._dirty, timeout)
            self._dirty.clear()
            if not woken and rzm.PERIODIC_RETRY not in self._triggers:
                self._triggers.append(rzm.PERIODIC_RETRY)
            try:
                await self.reconcile()
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("node %s: reconcile failed", self.name)
                await self.clock.sleep(1.0)
                self._dirty.set()

    async def _move_to_shared_pool(self) -> None:
        """The CPU manager's reconcile: containers on the shared pool follow it as exclusive
        assignments come and go."""
        if not self.cpu_manager.enabled:
            return
        shared = format_cpuset(self.cpu_manager.shared())
        if shared == self._shared_cpuset:
            return
        for ps in list(self.pods.values()):
            for rec in ps.containers.values():
                if not rec.id or self.cpu_manager.is_exclusive(ps.uid, rec.name):
                    continue
                try:
                    status = await self.runtime.container_status(rec.id)    # not the relist's copy
                except CriError:
                    continue
                linux = status.resources.linux or LinuxContainerResources()
                if status.state != "running" or linux.cpuset_cpus == shared:
                    continue
                try:
                    await self.runtime.update_container_resources(
                        rec.id, ContainerResources(linux=dataclasses.replace(linux, cpuset_cpus=shared)))
                except CriError as e:
                    log.warning("node %s: moving container %s to cpuset %s: %s", self.name, rec.name, shared, e)
                    return         # tried again at the next reconcile
        self._shared_cpuset = shared

    async def reconcile(self) -> None:
        # the pods whose spec changed wake once the resizes they ask for are decided below, or
        # once this pass failed (a failing reconcile must not keep their workers asleep)
        changed, self._spec_changed = self._spec_changed, set()    # later ones wait for the next
        try:
            await self._move_to_shared_pool()
            cache = {_uid(p): p for p in self.informer.list()}
            for uid, ps in list(self.pods.items()):
                if uid not in cache:
                    if not ps.deleted:
                        ps.deleted = True
                        ps.wake.set()
            new = [p for uid, p in cache.items()
                   if uid not in self.pods and uid not in self.finished and _phase(p) not in ("Succeeded", "Failed")]
            new.sort(key=lambda p: ((p.get("metadata") or {}).get("creationTimestamp") or "",
                                    (p.get("metadata") or {}).get("namespace") or "",
                                    (p.get("metadata") or {}).get("name") or ""))
            for pod in new:
                await self._admit(pod)
            await self._handle_resizes()
        finally:
            for uid in changed:
                woken = self.pods.get(uid)
                if woken is not None:
                    woken.wake.set()
        self.apply_node_cgroups()
        await self._finish_stuck(cache)
        if any(ps.active and ps.resize.pending_reason == rz.DEFERRED for ps in self.pods.values()):
            if not self._next_resize_retry or self._next_resize_retry <= self.clock.now():
                self._next_resize_retry = self.clock.now() + self.resize_retry_seconds
        else:
            self._next_resize_retry = 0.0

    def _resize_requested(self, ps: PodState) -> bool:
        """The spec differs from the allocation (cached per generation: a spec change bumps it)."""
        generation = ps.generation()
        verdict = ps.resize_verdict
        if verdict is not None and verdict[0] == generation and verdict[1] is ps.allocated:
            return verdict[2]
        if ps.spec_key != generation or ps.spec_allocation is None:
            ps.spec_allocation = rz.spec_allocation(ps.pod, self.resize_scope)
            ps.spec_key = generation
        requested = rz.resize_requested(ps.pod, ps.allocated, self.resize_scope, ps.spec_allocation)
        ps.resize_verdict = (generation, ps.allocated, requested)
        return requested

    async def _finish_stuck(self, cache: dict[str, dict]) -> None:
        """Pods being deleted that no worker here will finish (rejected, or finished before
        a restart) are deleted for good, as the kubelet does once they are terminal."""
        now = self.clock.now()
        for uid, pod in cache.items():
            meta = pod.get("metadata") or {}
            if not meta.get("deletionTimestamp") or uid in self.pods:
                continue
            if now - self._force_deleted.get(uid, -STUCK_DELETE_RETRY) < STUCK_DELETE_RETRY:
                continue
            self._force_deleted[uid] = now
            try:
                await self.client.delete("pods", meta.get("name", ""), namespace=meta.get("namespace", ""),
                                         grace_period_seconds=0, preconditions={"uid": uid})
            except ApiError as e:
                log.debug("node %s: finishing %s/%s: %s", self.name, meta.get("namespace"), meta.get("name"), e)
        for uid in [u for u in self._force_deleted if u not in cache]:
            del self._force_deleted[uid]

    def holding(self, ps: PodState) -> dict[str, int]:
        """What the pod holds on the node (``resize.holding``; callers must not change it)."""
        memo, generation = ps.held, ps.generation()
        if memo is not None and memo[0] == generation and memo[1] is ps.allocated and memo[2] == ps.actuated:
            return memo[3]
        held = rz.holding(ps.pod, ps.allocated, ps.actuated)
        ps.held = (generation, ps.allocated, deep_copy(ps.actuated), held)
        return held

    def _others(self, exclude: str = "") -> list[dict[str, int]]:
        return [self.holding(ps) for uid, ps in self.pods.items() if ps.active and uid != exclude]

    async def _admit(self, pod: dict[str, Any]) -> None:
        uid = _uid(pod)
        meta = pod.get("metadata") or {}
        if meta.get("deletionTimestamp"):
            # never started here: nothing to stop
            self.finished.add(uid)
            try:
                await self.client.delete("pods", meta.get("name", ""), namespace=meta.get("namespace", ""),
                                         grace_period_seconds=0, preconditions={"uid": uid})
            except ApiError:
                pass
            return
        decision = self.admit_under_pressure(pod) or self.admit_declared_features(pod) or \
            adm.admit_pod(pod_requests(pod), self._others(), self.allocatable)
        summary = {**decision.as_dict(), "time": format_time(self.clock.now())}
        if not decision.ok:
            self.finished.add(uid)
            await self._reject(pod, decision, summary)
            return
        allocated = rz.spec_allocation(pod, self.resize_scope)
        self.checkpoint.set_allocated(uid, meta.get("namespace", ""), meta.get("name", ""), allocated)
        ps = PodState(uid=uid, namespace=meta.get("namespace", ""), name=meta.get("name", ""), pod=pod,
                      allocated=allocated)
        for c, kind in rz.allocatable_containers(pod):
            ps.containers[c.get("name", "")] = ContainerRecord(c.get("name", ""), kind)
        ps.start_time = self.clock.now()
        ps.admission = summary
        self.pods[uid] = ps
        self.save(ps)
        self.apply_node_cgroups()
        self._start_worker(ps)

    async def _reject(self, pod: dict[str, Any], decision: adm.Decision, summary: dict[str, Any]) -> None:
        meta = pod.get("metadata") or {}
        await self.event(pod, "Warning", decision.reason, decision.message)
        for _ in range(5):
            status = deep_copy(pod.get("status") or {})
            status.update({"phase": "Failed", "reason": decision.reason,
                           "message": adm.rejection_message(decision), "hostIP": self.host_ip,
                           "hostIPs": [{"ip": self.host_ip}], "startTime": format_time(self.clock.now())})
            try:
                await self.client.update_status("pods", {**pod, "status": status})
                break
            except Conflict:
                try:
                    pod = await self.client.get("pods", meta.get("name", ""), meta.get("namespace", ""))
                except NotFound:
                    return
            except NotFound:
                return
        text = json.dumps({"node": self.name, "admission": summary}, sort_keys=True, separators=(",", ":"))
        try:
            await self.client.patch("pods", meta.get("name", ""),
                                    {"metadata": {"annotations": {EXPLAIN_ANNOTATION: text}}},
                                    namespace=meta.get("namespace", ""))
        except ApiError:
            pass

    async def _handle_resizes(self) -> None:
        now = self.clock.now()
        # what woke this pass, the label of a Deferred resize accepted now: the most telling of
        # the events since the last pass (a pod resized, ended, removed or added frees or takes
        # room; any other update, then the periodic retry, only re-evaluates)
        trigger = next((t for t in rzm.TRIGGERS if t in self._triggers), rzm.POD_UPDATED)
        self._triggers = []
        candidates = []
        for ps in self.pods.values():
            if not ps.active or (ps.pod.get("metadata") or {}).get("deletionTimestamp"):
                continue
            if not self._resize_requested(ps):
                if self.resizes.clear_pending(ps):
                    ps.wake.set()
                continue
            if ps.actuating:
                continue        # decided after the resize being applied (seed 000)
            if ps.resize.pending_reason == rz.INFEASIBLE and ps.resize.pending_generation == ps.generation():
                continue        # not re-evaluated until the spec changes again
            candidates.append(ps)
        if not candidates:
            return
        scope = self.resize_scope
        candidates.sort(key=lambda ps: rz.pending_order((ps.pod, ps.allocated, ps.resize, ps.spec_allocation),
                                                        scope))
        holdings = {uid: self.holding(ps) for uid, ps in self.pods.items() if ps.active}
        for ps in candidates:
            if not ps.active:
                continue
            others = [h for uid, h in holdings.items() if uid != ps.uid and uid in self.pods
                      and self.pods[uid].active]
            if await self._decide_resize(ps, now, others, trigger):
                holdings[ps.uid] = self.holding(ps)

    async def _decide_resize(self, ps: PodState, now: float, others: list[dict[str, int]],
                             trigger: str = rzm.POD_UPDATED) -> bool:
        """Accept (True), defer or refuse the pod's proposed resize."""
        pod, generation = ps.pod, ps.generation()
        decision = rz.decide(pod, ps.allocated, ps.spec_allocation, others, self.resize_limits, generation, now)
        if decision.ok:
            if ps.resize.pending_reason == rz.DEFERRED:
                self.resize_metrics.deferred_resize_accepted(trigger)
            self.resizes.grant(ps, decision.allocation, generation, now, decision.summary)
            ps.wake.set()
            await self.event(pod, "Normal", "ResizeStarted",
                             "Pod resize started: " + rz.resize_message(pod, decision.allocation,
                                                                        scope=self.resize_scope))
            return True
        if decision.reason_detail:
            self.resize_metrics.resize_infeasible(decision.reason_detail)
        if self.resizes.hold(ps, decision.reason, decision.message, generation, now, decision.summary):
            reason = "ResizeInfeasible" if decision.reason == rz.INFEASIBLE else "ResizeDeferred"
            ps.wake.set()
            # PodResizePendingMsg: the desired resources, the reason's message as the error
            await self.event(pod, "Warning", reason, f"Pod resize {decision.reason}: " + rz.resize_message(
                pod, ps.spec_allocation or rz.spec_allocation(pod, self.resize_scope), error=decision.message,
                scope=self.resize_scope))
        return False

    # ==== node-pressure eviction =====================================================================

    async def _eviction_loop(self) -> None:
        while True:
            evicted = False
            try:
                evicted = await self.eviction_pass()
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("node %s: eviction pass failed", self.name)
            if evicted:      # look again once the pod is gone (the kubelet's cleanup wait)
                await self.clock.sleep(EVICTION_CLEANUP_POLL)
            elif (events := self._quiet_events()) is not None:
                events.runtime.stats_events.clear()
                events.runtime.watch_memory(self._memory_watch_level())
                await sleep_unless(self.clock, events.interval, events.runtime.stats_events)
            else:
                await self.clock.sleep(self.eviction_interval)

    def _quiet_events(self) -> _EventSource | None:
        """The runtime's events when nothing needs following up (no pressure, no soft threshold
        counting its grace period) and the runtime will say when memory reaches a threshold:
        wait for it to say so. None: poll."""
        events = self._events
        quiet = (events is not None and not self.eviction.node_conditions
                 and not self.eviction.thresholds_first_observed_at and not any(self.pressure.values())
                 and events.runtime.stats_static() and not self._local_storage_limited())
        return events if quiet else None

    def _memory_watch_level(self) -> int | None:
        """The node working set (pods and system) at which a memory threshold is met."""
        capacity = getattr(self.runtime, "memory_capacity", None) or self.memory_capacity
        pods_limit = kubepods_resources(self.config).get("memory", 0) or capacity
        system = getattr(self.runtime, "system_memory", 0)
        levels = []
        for t in self.eviction.thresholds:
            if t.signal == MEMORY_AVAILABLE:
                levels.append(capacity - t.quantity(capacity))
            elif t.signal == ALLOCATABLE_MEMORY_AVAILABLE:
                levels.append(pods_limit - t.quantity(pods_limit) + system)
        return max(0, min(levels) - 1) if levels else None

    async def eviction_pass(self) -> bool:
        """One pass of the eviction manager: report pressure, evict at most one pod.
        Returns whether a pod was evicted."""
        stats = await self.runtime.node_stats()
        if not stats.memory_capacity:      # a runtime that does not know the machine: the config does
            stats.memory_capacity = self.memory_capacity
        if not stats.pods_memory_limit:
            stats.pods_memory_limit = kubepods_resources(self.config).get("memory", 0)
        observations = make_observations(stats)

        def active() -> list[dict[str, Any]]:
            return [ps.pod for ps in self.pods.values() if ps.active and ps.eviction is None
                    and not (ps.pod.get("metadata") or {}).get("deletionTimestamp")]
        result, eviction = self.eviction.decide(self.clock.now(), observations, active,
                                                lambda pod: stats.pods.get(_uid(pod)))
        await self._set_pressure(result.conditions)
        # local storage limits first: a pod evicted for them ends this pass, as upstream
        if self.config.local_storage_capacity_isolation and await self._local_storage_pass(active, stats):
            return True
        if result.starved is None or not result.candidates:
            return False
        await self.event(self.node_ref(), "Warning", "EvictionThresholdMet",
                         f"Attempting to reclaim {SIGNAL_RESOURCE[result.starved.signal]}")
        if eviction is None:
            log.info("node %s: eviction manager: unable to evict any pods from the node", self.name)
            return False
        ps = self.pods[_uid(eviction.pod)]
        await self.evict(ps, eviction)
        return True

    def _local_storage_limited(self) -> bool:
        """Whether an active pod has a local storage limit (the eviction loop must poll)."""
        return self.config.local_storage_capacity_isolation and any(
            ps.active and has_local_storage_limits(ps.pod) for ps in self.pods.values())

    async def _local_storage_pass(self, active: Callable[[], list[dict[str, Any]]], stats: NodeStats) -> bool:
        """``localStorageEviction``: evict every active pod past an ephemeral-storage limit or
        an emptyDir sizeLimit. Returns whether one was."""
        pods = [pod for pod in active() if has_local_storage_limits(pod)]
        if not pods:
            return False
        # on the loop, not in a thread: in virtual time a thread's wait would let the clock jump
        volumes = {_uid(p): empty_dir_usage(p, self.volumes) for p in pods}
        evictions = local_storage_evictions(pods, lambda pod: stats.pods.get(_uid(pod)),
                                            lambda pod: volumes[_uid(pod)])
        for eviction in evictions:
            await self.evict(self.pods[_uid(eviction.pod)], eviction)
        return bool(evictions)

    async def evict(self, ps: PodState, eviction: Eviction) -> None:
        """Kill the pod as the eviction manager decided and wait (at most 30 s) until it is."""
        await self.recorder.record({"apiVersion": "v1", "kind": "Pod", **ps.pod}, "Warning", REASON,
                                   eviction.message, annotations=eviction.annotations)
        log.info("node %s: evicting pod %s/%s: %s", self.name, ps.namespace, ps.name, eviction.message)
        self.evictions.append({"time": self.clock.now(), "namespace": ps.namespace, "pod": ps.name,
                               "signal": eviction.signal, "resource": eviction.resource,
                               "gracePeriod": eviction.grace_period, "message": eviction.message})
        del self.evictions[:-1000]
        ps.eviction = eviction
        ps.wake.set()
        deadline = self.clock.now() + EVICTION_CLEANUP_TIMEOUT
        while not ps.terminal and not ps.deleted and self.clock.now() < deadline:
            await self.clock.sleep(EVICTION_CLEANUP_POLL)

    async def _set_pressure(self, conditions: list[str]) -> None:
        wanted = {ctype: ctype in conditions for ctype in self.pressure}
        if wanted == self.pressure:
            return
        changed = [c for c in wanted if wanted[c] != self.pressure[c]]
        self.pressure = wanted
        for ctype in changed:
            ok_reason, _, bad_reason, _ = _PRESSURE[ctype]
            reason = bad_reason if wanted[ctype] else ok_reason
            # NodeHasInsufficientMemory / NodeHasSufficientMemory ... as the kubelet's setters
            await self.event(self.node_ref(), "Normal", "Node" + reason[len("Kubelet"):],
                             f"Node {self.name} status is now: {'Node' + reason[len('Kubelet'):]}")
        try:
            await self._update_node_status(force=True)
        except (ApiError, OSError) as e:
            log.warning("node %s: status not written: %s", self.name, e)

    def node_ref(self) -> dict[str, Any]:
        meta = (self.node or {}).get("metadata") or {}
        return {"apiVersion": "v1", "kind": "Node",
                "metadata": {"name": self.name, **({"uid": meta["uid"]} if meta.get("uid") else {})}}

    def admit_under_pressure(self, pod: dict[str, Any]) -> adm.Decision | None:
        """The eviction manager's admission (before the resource fit), as a refusal or None."""
        result = self.eviction.admit(pod)
        if result.admit:
            return None
        return adm.Decision(False, result.reason, result.message, {"rule": "node-pressure",
                                                                   "conditions": list(self.eviction.node_conditions)})

    # ==== node-level cgroups ===========================================================================

    def apply_node_cgroups(self) -> None:
        """kubepods and the QoS tiers (the kubelet's container manager writes them itself),
        recomputed when the admitted pods or their allocations change."""
        setter = getattr(self.runtime, "set_node_cgroups", None)
        if setter is None:
            return
        active = [ps for ps in self.pods.values() if ps.active]
        key = tuple((ps.uid, id(ps.allocated)) for ps in active)
        if key == self._node_cgroups_key:
            return
        values = qos_cgroup_values(((qos_class(ps.pod), rz.requests_of(ps.pod, ps.allocated)) for ps in active),
                                   kubepods_resources(self.config), qos_reserved=self.config.qos_reserved,
                                   cpu_period=self.config.cpu_cfs_quota_period_us)
        setter(values)
        self._node_cgroups_key = key

    # ==== PLEG ===================================================================================

    async def _pleg_loop(self) -> None:
        while True:
            events = self._events
            if events is None:
                await self.clock.sleep(self.pleg_seconds)
            else:
                await sleep_unless(self.clock, events.interval, events.runtime.events)
                events.runtime.events.clear()
            await self.relist()

    async def relist(self) -> None:
        """List the runtime's containers; wake the worker of every pod whose containers changed."""
        try:
            statuses = await self.runtime.list_containers()
        except CriError as e:
            log.debug("relist failed: %s", e)
            return
        self._statuses = {st.id: st for st in statuses}
        for ps in self.pods.values():
            for rec in ps.containers.values():
                if not rec.id:
                    continue
                st = self._statuses.get(rec.id)
                old = rec.status
                if st is None:
                    if old is not None:
                        ps.wake.set()
                elif old is None or old.state != st.state or old.finished_at != st.finished_at:
                    ps.wake.set()

    # ==== metrics =================================================================================

    def _samples(self) -> list[ContainerSample]:
        samples = []
        for ps in self.pods.values():
            for rec in ps.containers.values():
                st = self._statuses.get(rec.id) if rec.id else None
                if st is not None:
                    samples.append(container_sample(ps.pod, st, cgroup_driver=self.config.cgroup_driver))
        return samples

    def _pod_state(self, namespace: str, pod: str) -> Any:
        return next((ps for ps in self.pods.values()
                     if ps.namespace == namespace and ps.name == pod and ps.sandbox_id), None)

    def container_log(self, namespace: str, pod: str, container: str, *, previous: bool = False) -> Any:
        """The runtime's log of a container of a pod on this node (the kubelet's
        ``/containerLogs``), or None when the runtime has none for it."""
        read = getattr(self.runtime, "container_log", None)
        state = self._pod_state(namespace, pod)
        if read is None or state is None:
            return None
        return read(state.sandbox_id, container, previous=previous)

    async def _running_container(self, namespace: str, pod: str, container: str) -> str:
        """The runtime id of a running container (the kubelet's ``/exec``, ``/attach``)."""
        state = self._pod_state(namespace, pod)
        record = None if state is None else state.containers.get(container)
        if record is None or not record.id:
            raise CriError(f'container not found ("{container}")')
        status = await self.runtime.container_status(record.id)
        if status.state != "running":
            raise CriError(f'container "{container}" is not running (state {status.state})')
        return record.id

    async def exec(self, namespace: str, pod: str, container: str, command: Sequence[str],
                   io: Any) -> int:
        container_id = await self._running_container(namespace, pod, container)
        return await self.runtime.exec(container_id, command, io)

    async def attach(self, namespace: str, pod: str, container: str, io: Any) -> None:
        await self.runtime.attach(await self._running_container(namespace, pod, container), io)

    async def port_forward(self, namespace: str, pod: str, port: int) -> tuple[Any, Any]:
        """A connection to ``port`` in the pod (the kubelet's ``/portForward``)."""
        state = self._pod_state(namespace, pod)
        if state is None:
            raise CriError(f'pod "{namespace}/{pod}" has no sandbox on node "{self.name}"')
        return await self.runtime.port_forward(state.sandbox_id, port)

    async def metrics_text(self) -> str:
        """cAdvisor-style Prometheus text for this node's containers (fresh from the runtime)."""
        await self.relist()
        return cadvisor_metrics(self._samples(), timestamp=self.clock.now(),
                                machine_cpu_cores=self.config.capacity.get("cpu", 0) // 1000,
                                machine_memory_bytes=self.memory_capacity)

    async def pod_statuses(self) -> list[tuple[dict[str, Any], list[Any]]]:
        """Each pod on this node with its containers' current runtime statuses."""
        await self.relist()
        return [(ps.pod, [self._statuses[r.id] for r in ps.containers.values() if r.id in self._statuses])
                for ps in self.pods.values()]

    async def pod_metrics(self) -> list[dict[str, Any]]:
        """metrics.k8s.io PodMetrics of this node's pods (one scrape: rates need two, taken
        some time apart, as with metrics-server). ``node_metrics()`` has the node's."""
        if self._tracker is None:
            self._tracker = UsageTracker()
        node, pod_objs = node_summary(self.name, await self.pod_statuses(), self._tracker, self.clock.now())
        self._last_node_metrics = node
        return pod_objs

    def node_metrics(self) -> dict[str, Any] | None:
        """The NodeMetrics of the last ``pod_metrics()`` scrape (None before two scrapes)."""
        return self._last_node_metrics


__all__ = ["EXPLAIN_ANNOTATION", "KUBELET_VERSION", "NodeAgent"]
