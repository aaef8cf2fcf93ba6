"""Node-pressure eviction (seed 001 section 13), as the kubelet's eviction manager does it
(``pkg/kubelet/eviction``): the same signals, thresholds, node conditions, ranking, messages
and admission rule, as pure functions over integers plus one stateful ``EvictionManager``.

Signals (observed from the runtime's node statistics, ``NodeStats``):

* ``memory.available`` = node memory capacity - the node's working set (pods and system);
* ``allocatableMemory.available`` = the pods cgroup's limit - the pods' working set; its
  thresholds are copies of the hard ``memory.available`` ones when ``pods`` is in
  ``enforceNodeAllocatable`` (``addAllocatableThresholds``);
* ``nodefs.available`` / ``nodefs.inodesFree``, ``imagefs.*`` (the node's filesystem, as
  the images share it here), ``containerfs.*`` (copies of the nodefs thresholds);
* ``pid.available`` = the maximum pid - the processes running.

A threshold ``signal<quantity`` or ``signal<P%`` is *met* when the signal's available amount
is below it; a percentage is of the signal's capacity, computed in float32 as the kubelet
does (``GetThresholdQuantity``). With ``--eviction-minimum-reclaim`` a threshold stays met
until the signal is back above threshold + minimum. Soft thresholds count only after being
met for their grace period. Every ``MONITORING_INTERVAL`` (10 s) the manager:

1. reports a node condition (``MemoryPressure`` / ``DiskPressure`` / ``PIDPressure``) for
   every met threshold, grace period or not, and keeps reporting it until the threshold
   has not been met for ``--eviction-pressure-transition-period`` (5 min);
2. picks, when a threshold is met past its grace period with a fresh observation, the
   starved resource (memory first) and ranks the active pods: for memory, pods using more
   than their requests first, then lower priority, then the most usage above requests; for
   pids, lower priority then more processes; for disk, the same as memory on disk usage;
3. evicts at most one pod: grace period 1 s for a hard threshold, for a soft one
   ``--eviction-max-pod-grace-period`` (at most the pod's own); the pod goes ``Failed``,
   reason ``Evicted``, message "The node was low on resource: memory. Threshold quantity:
   1Gi, available: 900Mi. Container c was using 2Gi, request is 1Gi, has larger
   consumption of memory. ", with the ``DisruptionTarget`` condition (reason
   ``TerminationByKubelet``). Critical pods (static, mirror, or priority of at least
   2 000 000 000: ``system-cluster-critical`` and ``system-node-critical``) are never
   evicted; the next ranked pod is.

Admission under pressure (``Admit``): with MemoryPressure only, BestEffort pods are refused
unless they tolerate the ``node.kubernetes.io/memory-pressure`` NoSchedule taint; any other
pressure refuses every pod but critical ones; reason ``Evicted``, message "The node had
condition: [MemoryPressure]. ".

Local storage limits (``localStorageEviction``, with LocalStorageCapacityIsolation, on by
default): every pass, before node pressure is looked at, a pod is evicted (grace period 1 s,
an ``Evicted`` event, no DisruptionTarget condition: upstream passes none for these) when

* an ``emptyDir`` (not ``medium: Memory``) holds more than its ``sizeLimit``: "Usage of
  EmptyDir volume "cache" exceeds the limit "1Mi". ";
* the pod's ephemeral storage (its containers' logs and writable layers, and its emptyDir
  volumes) is above the sum of its containers' ``limits.ephemeral-storage``: "Pod ephemeral
  local storage usage exceeds the total limit of containers 10Mi. ";
* a container's logs and writable layer are above its own limit: "Container c exceeded its
  local ephemeral storage limit "10Mi". ".

Where upstream relies on Go map order (threshold and condition order) kvert keeps the
configuration's order.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cmp_to_key
from typing import Any

from kvert.api.podresources import pod_resources
from kvert.api.pods import BEST_EFFORT, container_requests, qos_class
from kvert.api.quantity import BINARY_SI, DECIMAL_SI, Quantity, to_quantity
from kvert.api.taints import tolerations_tolerate_taint
from kvert.kubelet.config import EvictionThreshold, NodeConfig
from kvert.kubelet.runtime.base import ContainerStats, FsStats, NodeStats, PodStats

MEMORY_AVAILABLE = "memory.available"
ALLOCATABLE_MEMORY_AVAILABLE = "allocatableMemory.available"
NODEFS_AVAILABLE = "nodefs.available"
NODEFS_INODES_FREE = "nodefs.inodesFree"
IMAGEFS_AVAILABLE = "imagefs.available"
IMAGEFS_INODES_FREE = "imagefs.inodesFree"
CONTAINERFS_AVAILABLE = "containerfs.available"
CONTAINERFS_INODES_FREE = "containerfs.inodesFree"
PID_AVAILABLE = "pid.available"

MEMORY_PRESSURE, DISK_PRESSURE, PID_PRESSURE = "MemoryPressure", "DiskPressure", "PIDPressure"
SIGNAL_CONDITION = {
    MEMORY_AVAILABLE: MEMORY_PRESSURE, ALLOCATABLE_MEMORY_AVAILABLE: MEMORY_PRESSURE,
    NODEFS_AVAILABLE: DISK_PRESSURE, NODEFS_INODES_FREE: DISK_PRESSURE,
    IMAGEFS_AVAILABLE: DISK_PRESSURE, IMAGEFS_INODES_FREE: DISK_PRESSURE,
    CONTAINERFS_AVAILABLE: DISK_PRESSURE, CONTAINERFS_INODES_FREE: DISK_PRESSURE,
    PID_AVAILABLE: PID_PRESSURE,
}
MEMORY, EPHEMERAL_STORAGE, INODES, PIDS = "memory", "ephemeral-storage", "inodes", "pids"
SIGNAL_RESOURCE = {
    MEMORY_AVAILABLE: MEMORY, ALLOCATABLE_MEMORY_AVAILABLE: MEMORY,
    NODEFS_AVAILABLE: EPHEMERAL_STORAGE, IMAGEFS_AVAILABLE: EPHEMERAL_STORAGE,
    CONTAINERFS_AVAILABLE: EPHEMERAL_STORAGE,
    NODEFS_INODES_FREE: INODES, IMAGEFS_INODES_FREE: INODES, CONTAINERFS_INODES_FREE: INODES,
    PID_AVAILABLE: PIDS,
}
# The node taint the node lifecycle controller puts on for each condition (NoSchedule).
CONDITION_TAINT = {
    MEMORY_PRESSURE: "node.kubernetes.io/memory-pressure",
    DISK_PRESSURE: "node.kubernetes.io/disk-pressure",
    PID_PRESSURE: "node.kubernetes.io/pid-pressure",
}

REASON = "Evicted"
DISRUPTION_TARGET = "DisruptionTarget"
TERMINATION_BY_KUBELET = "TerminationByKubelet"
HARD_EVICTION_GRACE_SECONDS = 1      # immediateEvictionGracePeriodSeconds
MONITORING_INTERVAL = 10.0           # evictionMonitoringPeriod
SYSTEM_CRITICAL_PRIORITY = 2_000_000_000
CONFIG_SOURCE_ANNOTATION = "kubernetes.io/config.source"
CONFIG_MIRROR_ANNOTATION = "kubernetes.io/config.mirror"

OFFENDING_CONTAINERS_KEY = "offending_containers"
OFFENDING_CONTAINERS_USAGE_KEY = "offending_containers_usage"
STARVED_RESOURCE_KEY = "starved_resource"


# -- statistics (what the kubelet's summary API gives the manager) -------------------------------

@dataclass(frozen=True)
class Observation:
    """One signal's state: ``available`` of ``capacity`` (bytes, inodes or pids) at ``time``."""
    available: int
    capacity: int
    time: float = 0.0


def make_observations(stats: NodeStats) -> dict[str, Observation]:
    """``makeSignalObservations``: every signal the statistics can tell."""
    t = stats.time
    out = {
        MEMORY_AVAILABLE: Observation(stats.memory_capacity - stats.memory_working_set, stats.memory_capacity, t),
        ALLOCATABLE_MEMORY_AVAILABLE: Observation(stats.pods_memory_limit - stats.pods_memory_working_set,
                                                  stats.pods_memory_limit, t),
    }
    if stats.nodefs is not None:
        fs = stats.nodefs
        out[NODEFS_AVAILABLE] = Observation(fs.available, fs.capacity, t)
        out[NODEFS_INODES_FREE] = Observation(fs.inodes_free, fs.inodes, t)
        image = stats.imagefs or fs
        out[IMAGEFS_AVAILABLE] = Observation(image.available, image.capacity, t)
        out[IMAGEFS_INODES_FREE] = Observation(image.inodes_free, image.inodes, t)
        out[CONTAINERFS_AVAILABLE] = Observation(fs.available, fs.capacity, t)
        out[CONTAINERFS_INODES_FREE] = Observation(fs.inodes_free, fs.inodes, t)
    if stats.max_pid:
        out[PID_AVAILABLE] = Observation(stats.max_pid - stats.processes, stats.max_pid, t)
    return out


# -- thresholds ---------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Threshold:
    """One configured threshold with its minimum reclaim (``evictionapi.Threshold``)."""
    signal: str
    value: EvictionThreshold
    grace_period: float = 0.0
    min_reclaim: EvictionThreshold | None = None

    @property
    def hard(self) -> bool:
        return self.grace_period == 0

    def quantity(self, capacity: int) -> int:
        return self.value.amount(capacity)


def thresholds_from_config(config: NodeConfig) -> list[Threshold]:
    """``ParseThresholdConfig``: hard then soft thresholds, minimum reclaims attached;
    containerfs copies of the nodefs ones (one filesystem); allocatable copies of the hard
    memory ones when ``pods`` is enforced."""
    reclaim = {t.signal: t for t in config.eviction_minimum_reclaim}
    out = [Threshold(t.signal, t, 0.0, reclaim.get(t.signal)) for t in config.eviction_hard]
    out += [Threshold(t.signal, t, t.grace_period, reclaim.get(t.signal)) for t in config.eviction_soft]
    out = [t for t in out if not t.signal.startswith("containerfs.")]   # configured ones are ignored
    containerfs = {NODEFS_AVAILABLE: CONTAINERFS_AVAILABLE, NODEFS_INODES_FREE: CONTAINERFS_INODES_FREE}
    out += [Threshold(containerfs[t.signal], t.value, t.grace_period, t.min_reclaim)
            for t in list(out) if t.signal in containerfs]
    if "pods" in config.enforce_node_allocatable:
        out += [Threshold(ALLOCATABLE_MEMORY_AVAILABLE, t.value, 0.0, t.min_reclaim)
                for t in list(out) if t.signal == MEMORY_AVAILABLE and t.hard]
    return out


def thresholds_met(thresholds: Iterable[Threshold], observations: Mapping[str, Observation],
                   enforce_min_reclaim: bool) -> list[Threshold]:
    """The thresholds whose signal is below them (plus the minimum reclaim, when enforced)."""
    out = []
    for t in thresholds:
        observed = observations.get(t.signal)
        if observed is None:
            continue
        quantity = t.quantity(observed.capacity)
        if enforce_min_reclaim and t.min_reclaim is not None:
            quantity += t.min_reclaim.amount(observed.capacity)
        if quantity > observed.available:
            out.append(t)
    return out


def merge_thresholds(a: Sequence[Threshold], b: Iterable[Threshold]) -> list[Threshold]:
    out = list(a)
    for t in b:
        if not any(_same(t, x) for x in out):
            out.append(t)
    return out


def _same(a: Threshold, b: Threshold) -> bool:
    """``hasThreshold``: everything but the minimum reclaim."""
    return (a.signal, a.grace_period, a.value.quantity, a.value.percentage) == \
        (b.signal, b.grace_period, b.value.quantity, b.value.percentage)


def thresholds_first_observed_at(thresholds: Iterable[Threshold], last: Mapping[Threshold, float],
                                 now: float) -> dict[Threshold, float]:
    return {t: last.get(t, now) for t in thresholds}


def thresholds_met_grace_period(observed_at: Mapping[Threshold, float], now: float) -> list[Threshold]:
    return [t for t, at in observed_at.items() if now - at >= t.grace_period]


def node_conditions(thresholds: Iterable[Threshold]) -> list[str]:
    out: list[str] = []
    for t in thresholds:
        condition = SIGNAL_CONDITION.get(t.signal)
        if condition and condition not in out:
            out.append(condition)
    return out


def node_conditions_last_observed_at(conditions: Iterable[str], last: Mapping[str, float],
                                     now: float) -> dict[str, float]:
    out = dict(last)
    for condition in conditions:
        out[condition] = now
    return out


def node_conditions_observed_since(observed_at: Mapping[str, float], period: float, now: float) -> list[str]:
    return [c for c, at in observed_at.items() if now - at < period]


def thresholds_updated_stats(thresholds: Iterable[Threshold], observations: Mapping[str, Observation],
                             last: Mapping[str, Observation]) -> list[Threshold]:
    """Thresholds whose signal has been observed anew since the last pass."""
    out = []
    for t in thresholds:
        observed = observations.get(t.signal)
        if observed is None:
            continue
        previous = last.get(t.signal)
        if previous is None or not observed.time or observed.time > previous.time:
            out.append(t)
    return out


def by_eviction_priority(thresholds: Iterable[Threshold]) -> list[Threshold]:
    """Memory first, thresholds whose signal reclaims nothing last."""
    def key(t: Threshold) -> int:
        if t.signal in (MEMORY_AVAILABLE, ALLOCATABLE_MEMORY_AVAILABLE):
            return 0
        return 1 if t.signal in SIGNAL_RESOURCE else 2
    return sorted(thresholds, key=key)


# -- ranking ------------------------------------------------------------------------------------------

Stats = Callable[[dict], "PodStats | None"]
Cmp = Callable[[dict, dict], int]


def _uid(pod: Mapping[str, Any]) -> str:
    return (pod.get("metadata") or {}).get("uid", "")


def priority_of(pod: Mapping[str, Any]) -> int:
    return int((pod.get("spec") or {}).get("priority") or 0)


def _cmp_bool(a: bool, b: bool) -> int:
    """True first."""
    if a == b:
        return 0
    return -1 if a else 1


def _cmp_int(a: int, b: int) -> int:
    return (a > b) - (a < b)


def by_priority(p1: dict, p2: dict) -> int:
    """Lower priority first."""
    return _cmp_int(priority_of(p1), priority_of(p2))


def _request(pod: dict, resource: str) -> int:
    # the ranking compares pods pairwise: their requests parsed once per pod version
    return pod_resources(pod).requests.get(resource, 0)


def _usage(stats: PodStats, resource: str) -> int:
    return {MEMORY: stats.memory, EPHEMERAL_STORAGE: stats.disk, INODES: stats.inodes,
            PIDS: stats.processes}[resource]


def _with_stats(stats: Stats, compare: Callable[[dict, PodStats, dict, PodStats], int]) -> Cmp:
    """A comparator over pods' statistics; pods without any come first."""
    def cmp(p1: dict, p2: dict) -> int:
        s1, s2 = stats(p1), stats(p2)
        if s1 is None or s2 is None:
            return _cmp_bool(s1 is None, s2 is None)
        return compare(p1, s1, p2, s2)
    return cmp


def _above(pod: dict, s: PodStats, resource: str) -> int:
    """Usage above requests (inodes count against the ephemeral-storage request, as upstream)."""
    return _usage(s, resource) - _request(pod, EPHEMERAL_STORAGE if resource == INODES else resource)


def exceeds_requests(stats: Stats, resource: str) -> Cmp:
    """Pods using more than they request first."""
    return _with_stats(stats, lambda p1, s1, p2, s2: _cmp_bool(_above(p1, s1, resource) > 0,
                                                               _above(p2, s2, resource) > 0))


def usage_above_requests(stats: Stats, resource: str) -> Cmp:
    """The most usage above requests first (``memory`` / ``disk`` comparators)."""
    return _with_stats(stats, lambda p1, s1, p2, s2: _cmp_int(_above(p2, s2, resource), _above(p1, s1, resource)))


def by_processes(stats: Stats) -> Cmp:
    def cmp(p1: dict, p2: dict) -> int:
        s1, s2 = stats(p1), stats(p2)
        return _cmp_int(s2.processes if s2 else 0, s1.processes if s1 else 0)
    return cmp


def ordered_by(*cmps: Cmp) -> Callable[[list[dict]], list[dict]]:
    """``orderedBy``: the first comparator that tells two pods apart decides."""
    def chain(p1: dict, p2: dict) -> int:
        for cmp in cmps:
            result = cmp(p1, p2)
            if result:
                return result
        return 0
    return lambda pods: sorted(pods, key=cmp_to_key(chain))


def rank(signal: str, pods: list[dict], stats: Stats) -> list[dict]:
    """The pods in eviction order for a starved signal."""
    resource = SIGNAL_RESOURCE[signal]
    if resource == PIDS:
        return ordered_by(by_priority, by_processes(stats))(pods)
    return ordered_by(exceeds_requests(stats, resource), by_priority,
                      usage_above_requests(stats, resource))(pods)


# -- messages -----------------------------------------------------------------------------------------

def format_amount(resource: str, amount: int) -> str:
    """A quantity as the kubelet prints it: bytes in binary units, counts in decimal."""
    fmt = DECIMAL_SI if resource in (INODES, PIDS) else BINARY_SI
    return to_quantity("memory" if fmt == BINARY_SI else "pods", amount, fmt)


def threshold_text(t: Threshold, capacity: int) -> str:
    """``GetThresholdQuantity`` printed: a quantity as it was written (canonically), a
    percentage as the bytes it stands for, in binary units."""
    if t.value.quantity is not None:
        return str(Quantity.parse(t.value.text)) if t.value.text else str(t.value.quantity)
    return to_quantity("memory", t.quantity(capacity), BINARY_SI)


def eviction_message(resource: str, pod: dict, stats: PodStats | None, thresholds: Sequence[Threshold],
                     observations: Mapping[str, Observation]) -> tuple[str, dict[str, str]]:
    """``evictionMessage``: the status message of an evicted pod and its event's annotations."""
    message = f"The node was low on resource: {resource}. "
    for t in thresholds:
        observed = observations.get(t.signal)
        if SIGNAL_RESOURCE.get(t.signal) == resource and observed is not None:
            message += (f"Threshold quantity: {threshold_text(t, observed.capacity)}, "
                        f"available: {format_amount(resource, observed.available)}. ")
            break
    if stats is None:
        return message, {}
    names, usages = [], []
    spec = pod.get("spec") or {}
    containers = list(spec.get("containers") or []) + list(spec.get("initContainers") or [])
    for name, cstats in stats.containers.items():
        container = next((c for c in containers if c.get("name") == name), None)
        if container is None:
            continue
        request = container_requests(container).get(resource, 0)
        if resource == MEMORY:
            usage = cstats.memory
        elif resource == EPHEMERAL_STORAGE:
            usage = cstats.disk
        else:
            continue
        if usage > request:
            shown = format_amount(resource, usage)
            message += (f"Container {name} was using {shown}, request is {format_amount(resource, request)}, "
                        f"has larger consumption of {resource}. ")
            names.append(name)
            usages.append(shown)
    return message, {OFFENDING_CONTAINERS_KEY: ",".join(names),
                     OFFENDING_CONTAINERS_USAGE_KEY: ",".join(usages),
                     STARVED_RESOURCE_KEY: resource}


# -- critical pods and admission ------------------------------------------------------------------------

def is_critical_pod(pod: Mapping[str, Any]) -> bool:
    """``IsCriticalPod``: static, mirror, or of system-critical priority."""
    annotations = (pod.get("metadata") or {}).get("annotations") or {}
    source = annotations.get(CONFIG_SOURCE_ANNOTATION)
    if source is not None and source != "api":
        return True
    if CONFIG_MIRROR_ANNOTATION in annotations:
        return True
    priority = (pod.get("spec") or {}).get("priority")
    return priority is not None and int(priority) >= SYSTEM_CRITICAL_PRIORITY


@dataclass(frozen=True)
class AdmitResult:
    admit: bool
    reason: str = ""
    message: str = ""


def admit(pod: Mapping[str, Any], conditions: Sequence[str]) -> AdmitResult:
    """The eviction manager's pod admission under node pressure."""
    if not conditions or is_critical_pod(pod):
        return AdmitResult(True)
    if list(conditions) == [MEMORY_PRESSURE]:
        if qos_class(pod) != BEST_EFFORT:
            return AdmitResult(True)
        taint = {"key": CONDITION_TAINT[MEMORY_PRESSURE], "effect": "NoSchedule"}
        if tolerations_tolerate_taint((pod.get("spec") or {}).get("tolerations"), taint):
            return AdmitResult(True)
    return AdmitResult(False, REASON, f"The node had condition: [{' '.join(conditions)}]. ")


# -- the manager ------------------------------------------------------------------------------------

@dataclass
class Eviction:
    """The one pod a pass decided to evict, and how."""
    pod: dict
    grace_period: int
    message: str
    annotations: dict[str, str]
    signal: str
    resource: str
    disruption_condition: bool = True     # local storage evictions have none

    def condition(self) -> dict | None:
        if not self.disruption_condition:
            return None
        return {"type": DISRUPTION_TARGET, "status": "True", "reason": TERMINATION_BY_KUBELET,
                "message": self.message}


# -- local storage limits (localStorageEviction) ------------------------------------------------------

SIGNAL_EMPTY_DIR_FS_LIMIT = "emptydirfs.limit"
SIGNAL_EPHEMERAL_POD_FS_LIMIT = "ephemeralpodfs.limit"
SIGNAL_EPHEMERAL_CONTAINER_FS_LIMIT = "ephemeralcontainerfs.limit"


def disk_backed_empty_dirs(pod: Mapping[str, Any]) -> list[tuple[str, Quantity | None]]:
    """The pod's emptyDir volumes on the node's disk (not ``medium: Memory``), with their
    ``sizeLimit`` (None without one): what counts as the pod's ephemeral storage."""
    out = []
    for volume in (pod.get("spec") or {}).get("volumes") or []:
        source = volume.get("emptyDir") if isinstance(volume, Mapping) else None
        if source is None or (source or {}).get("medium") == "Memory":
            continue
        size = (source or {}).get("sizeLimit")
        out.append((str(volume.get("name", "")), Quantity.parse(size) if size not in (None, "") else None))
    return out


def _ephemeral_limit(container: Mapping[str, Any]) -> Quantity | None:
    limit = ((container.get("resources") or {}).get("limits") or {}).get(EPHEMERAL_STORAGE)
    if limit in (None, ""):
        return None
    q = Quantity.parse(limit)
    return q if q.value() != 0 else None


def pod_ephemeral_limit(pod: Mapping[str, Any]) -> Quantity | None:
    """``PodLimits(pod)[ephemeral-storage]``: the containers' limits added up (an init
    container's own, when larger), printed in the format of the first; None when no
    container has one."""
    spec = pod.get("spec") or {}
    containers = [c for c in spec.get("containers") or [] if isinstance(c, Mapping)]
    limits = [q for q in (_ephemeral_limit(c) for c in containers) if q is not None]
    amount = pod_resources(pod).limits.get(EPHEMERAL_STORAGE)
    if amount is None:
        return None
    init = [q for q in (_ephemeral_limit(c) for c in spec.get("initContainers") or []
                        if isinstance(c, Mapping)) if q is not None]
    fmt = (limits or init)[0].format if (limits or init) else BINARY_SI
    return Quantity.from_int(amount, fmt)


def local_storage_eviction(pod: dict, stats: PodStats | None,
                           volumes: Mapping[str, int]) -> Eviction | None:
    """``localStorageEviction`` for one pod: the first limit it exceeds (emptyDir sizeLimit,
    then the pod's total, then a container's own) as an eviction, or None. ``stats``: its
    containers' usage (``disk``: logs and writable layer); ``volumes``: the bytes each of its
    emptyDir volumes holds. A critical pod is never evicted."""
    if stats is None or is_critical_pod(pod):
        return None

    def evict(message: str, signal: str) -> Eviction:
        return Eviction(pod, HARD_EVICTION_GRACE_SECONDS, message, {}, signal, EPHEMERAL_STORAGE,
                        disruption_condition=False)

    empty_dirs = disk_backed_empty_dirs(pod)
    for name, size in empty_dirs:
        used = volumes.get(name)
        if used is not None and size is not None and size.value() > 0 and used > size.value():
            return evict(f'Usage of EmptyDir volume "{name}" exceeds the limit "{size}". ',
                         SIGNAL_EMPTY_DIR_FS_LIMIT)
    limit = pod_ephemeral_limit(pod)
    if limit is not None:
        total = sum(c.disk for c in stats.containers.values()) + \
            sum(volumes.get(name, 0) for name, _ in empty_dirs)
        if total > limit.value():
            return evict(f"Pod ephemeral local storage usage exceeds the total limit of containers {limit}. ",
                         SIGNAL_EPHEMERAL_POD_FS_LIMIT)
    own = {c.get("name"): _ephemeral_limit(c) for c in (pod.get("spec") or {}).get("containers") or []
           if isinstance(c, Mapping)}
    for name, cstats in stats.containers.items():
        threshold = own.get(name)
        if threshold is not None and cstats.disk > threshold.value():
            return evict(f'Container {name} exceeded its local ephemeral storage limit "{threshold}". ',
                         SIGNAL_EPHEMERAL_CONTAINER_FS_LIMIT)
    return None


def local_storage_evictions(pods: Iterable[dict], stats: Stats,
                            volumes: Callable[[dict], Mapping[str, int]]) -> list[Eviction]:
    """``localStorageEviction`` over the active pods: every pod past a local storage limit."""
    out = []
    for pod in pods:
        eviction = local_storage_eviction(pod, stats(pod), volumes(pod))
        if eviction is not None:
            out.append(eviction)
    return out


def has_local_storage_limits(pod: Mapping[str, Any]) -> bool:
    """Whether any local storage limit applies to the pod (else its usage need not be read)."""
    spec = pod.get("spec") or {}
    if any(_ephemeral_limit(c) is not None for c in spec.get("containers") or [] if isinstance(c, Mapping)):
        return True
    if any(_ephemeral_limit(c) is not None for c in spec.get("initContainers") or [] if isinstance(c, Mapping)):
        return True
    return any(size is not None for _, size in disk_backed_empty_dirs(pod))


@dataclass
class PassResult:
    """What one ``synchronize`` pass saw and decided."""
    conditions: list[str]
    starved: Threshold | None = None       # the threshold to reclaim for, if any
    reclaim: list[Threshold] = field(default_factory=list)   # met past grace, fresh, memory first
    candidates: list[dict] = field(default_factory=list)   # pods in eviction order


class EvictionManager:
    """The eviction manager's state across passes (``managerImpl``)."""

    def __init__(self, thresholds: Sequence[Threshold], *, pressure_transition_period: float = 300.0,
                 max_pod_grace_period: int = 0):
        self.thresholds = list(thresholds)
        self.pressure_transition_period = pressure_transition_period
        self.max_pod_grace_period = max_pod_grace_period
        self.node_conditions: list[str] = []
        self.thresholds_first_observed_at: dict[Threshold, float] = {}
        self.node_conditions_last_observed_at: dict[str, float] = {}
        self.thresholds_met: list[Threshold] = []
        self.last_observations: dict[str, Observation] = {}

    @classmethod
    def for_node(cls, config: NodeConfig) -> EvictionManager:
        return cls(thresholds_from_config(config),
                   pressure_transition_period=config.eviction_pressure_transition_period,
                   max_pod_grace_period=config.eviction_max_pod_grace_period)

    def admit(self, pod: Mapping[str, Any]) -> AdmitResult:
        return admit(pod, self.node_conditions)

    def synchronize(self, now: float, observations: Mapping[str, Observation],
                    active_pods: Sequence[dict] | Callable[[], Sequence[dict]], stats: Stats) -> PassResult:
        """One pass: update the conditions; rank the pods when a resource is starved.
        ``active_pods`` may be a function, called only then."""
        if not self.thresholds:
            return PassResult([])
        met = thresholds_met(self.thresholds, observations, False)
        if not met and not self.thresholds_met and not self.node_conditions:
            # nothing met now, nothing left to resolve, no condition reported: a quiet pass
            self.thresholds_first_observed_at = {}
            self.last_observations = dict(observations)
            return PassResult([])
        if self.thresholds_met:
            unresolved = thresholds_met(self.thresholds_met, observations, True)
            met = merge_thresholds(met, unresolved)
        first = thresholds_first_observed_at(met, self.thresholds_first_observed_at, now)
        last_seen = node_conditions_last_observed_at(node_conditions(met), self.node_conditions_last_observed_at, now)
        conditions = node_conditions_observed_since(last_seen, self.pressure_transition_period, now)
        due = thresholds_met_grace_period(first, now)
        self.node_conditions = conditions
        self.thresholds_first_observed_at = first
        self.node_conditions_last_observed_at = last_seen
        self.thresholds_met = due
        fresh = thresholds_updated_stats(due, observations, self.last_observations)
        self.last_observations = dict(observations)
        result = PassResult(conditions, reclaim=by_eviction_priority(fresh))
        starved = next((t for t in result.reclaim if t.signal in SIGNAL_RESOURCE), None)
        if starved is None:
            return result
        if callable(active_pods):
            active_pods = active_pods()
        if not active_pods:
            return result
        result.starved = starved
        result.candidates = rank(starved.signal, list(active_pods), stats)
        return result

    def decide(self, now: float, observations: Mapping[str, Observation],
               active_pods: Sequence[dict] | Callable[[], Sequence[dict]],
               stats: Stats) -> tuple[PassResult, Eviction | None]:
        """A pass and the pod it evicts (the first ranked pod that is not critical), if any."""
        result = self.synchronize(now, observations, active_pods, stats)
        if result.starved is None:
            return result, None
        for pod in result.candidates:
            eviction = self.eviction_for(pod, result, observations, stats)
            if eviction is not None:
                return result, eviction
        return result, None

    def eviction_for(self, pod: dict, result: PassResult, observations: Mapping[str, Observation],
                     stats: Stats) -> Eviction | None:
        """How to evict ``pod`` for this pass, or None for a critical pod (never evicted)."""
        starved = result.starved
        assert starved is not None
        if is_critical_pod(pod):
            return None
        grace = HARD_EVICTION_GRACE_SECONDS
        if not starved.hard:
            grace = self.max_pod_grace_period
            own = (pod.get("spec") or {}).get("terminationGracePeriodSeconds")
            if own is not None:
                grace = min(grace, int(own))
        resource = SIGNAL_RESOURCE[starved.signal]
        message, annotations = eviction_message(resource, pod, stats(pod), result.reclaim, observations)
        return Eviction(pod, grace, message, annotations, starved.signal, resource)


__all__ = [
    "AdmitResult", "CONDITION_TAINT", "ContainerStats", "Eviction", "EvictionManager", "FsStats",
    "MONITORING_INTERVAL", "NodeStats", "Observation", "PassResult", "PodStats", "REASON", "SIGNAL_CONDITION",
    "SIGNAL_EMPTY_DIR_FS_LIMIT", "SIGNAL_EPHEMERAL_CONTAINER_FS_LIMIT", "SIGNAL_EPHEMERAL_POD_FS_LIMIT",
    "SIGNAL_RESOURCE", "Threshold", "admit", "by_eviction_priority", "disk_backed_empty_dirs", "eviction_message",
    "has_local_storage_limits", "is_critical_pod", "local_storage_eviction", "local_storage_evictions",
    "pod_ephemeral_limit",
    "make_observations", "node_conditions", "node_conditions_last_observed_at", "node_conditions_observed_since",
    "rank", "thresholds_first_observed_at", "thresholds_from_config", "thresholds_met",
    "thresholds_met_grace_period", "thresholds_updated_stats",
]
