"""The cgroup values the node agent writes, level by level (seed 004's hierarchy), as pure
computation:

    kubepods                      Node Allocatable: cpu.shares of allocatable cpu, memory limit
    ├── pod<uid>                  Guaranteed pods sit right under kubepods
    ├── burstable                 cpu.shares = sum of the Burstable pods' cpu requests
    │   └── pod<uid>              the pod's requests/limits (+ spec.overhead)
    │       └── <container>       the container's requests/limits, oom_score_adj
    └── besteffort                cpu.shares = 2
        └── pod<uid>              cpu.shares = 2

Formulas (Kubernetes ``pkg/kubelet/cm/helpers_linux.go``, ``qos_container_manager_linux.go``,
``kuberuntime_container_linux.go``, ``pkg/kubelet/qos/policy.go``):

* ``cpu.shares = clamp(milliCPU * 1024 / 1000, 2, 262144)`` (integer division), 2 for zero;
* CFS quota ``= milliCPU * period / 1000``, at least 1000us, with period 100000us; no cpu
  limit means no quota (unlimited);
* cgroup v2 ``cpu.weight``: for a container, the OCI runtime's conversion of the shares the
  kubelet sends, which runc 1.3.2+ / crun 1.23+ make quadratic in log2(shares)
  (``ConvertCPUSharesToCgroupV2Value``: 2 -> 1, 1024 -> 100, 262144 -> 10000); for the pod,
  QoS and kubepods cgroups, which the kubelet writes itself, its own linear
  ``1 + ((shares - 2) * 9999) / 262142`` (``getCPUWeight``: 1024 -> 39), unchanged in 1.35;
  ``cpu.max = "$QUOTA $PERIOD"`` or ``"max $PERIOD"``, ``memory.max`` = bytes or ``"max"``;
  v1: ``cpu.shares``,
  ``cpu.cfs_quota_us`` (-1 = unlimited), ``cpu.cfs_period_us``, ``memory.limit_in_bytes``
  (-1 = unlimited);
* a container's shares come from its cpu request (its limit if it has no request), its
  memory limit from its memory limit;
* the pod cgroup (``ResourceConfigForPod``): shares from the pod's cpu requests; quota only
  if every container (init containers included) has a cpu limit, memory limit only if every
  container has a memory limit (Guaranteed pods always have both); BestEffort pods get 2
  shares and nothing else. Requests and limits include ``spec.overhead`` (overhead is added
  to a limit only where a limit exists), and pod-level ``spec.resources`` replaces the
  container aggregate;
* QoS level: BestEffort ``cpu.shares = 2``; Burstable ``cpu.shares`` = shares of the summed
  cpu requests of the Burstable pods; with ``qosReserved: memory=P%``, memory limits
  ``burstable = allocatable - P% of Guaranteed requests`` and ``besteffort = burstable -
  P% of Burstable requests`` (an alpha feature in Kubernetes, off unless configured);
* kubepods: ``cpu.shares`` of the kubepods cpu, memory limit of the kubepods memory
  (``allocatable.kubepods_resources``).

``oom_score_adj``: Guaranteed and node-critical pods -997, BestEffort 1000, Burstable
``1000 - 1000 * memoryRequest / memoryCapacity`` (integer division), clamped to [3, 999]
as ``pkg/kubelet/qos/policy.go`` does (``1000 + guaranteedOOMScoreAdj``); seed 001's table
says ``min(max(2, ...), 999)``, which differs only for containers requesting more than
99.8% of the machine. A sidecar (restartable init container) gets at most the value
of the regular container with the smallest memory request; with pod-level memory
requests, the part not requested by any container is shared equally among containers.
Memory capacity is the machine's memory, not Allocatable.

"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

from kvert.api.pods import (
    BEST_EFFORT,
    BURSTABLE,
    GUARANTEED,
    container_limits,
    container_requests,
    is_restartable_init_container,
    pod_level_resources,
    pod_limits,
    pod_requests,
    qos_class,
)
from kvert.api.quantity import Quantity
from kvert.api.resources import BINARY_SI, format_resource_list
from kvert.kubelet.allocatable import kubepods_resources
from kvert.kubelet.config import NodeConfig
from kvert.kubelet.runtime.base import ContainerResources, LinuxContainerResources

MIN_SHARES = 2
MAX_SHARES = 262144
SHARES_PER_CPU = 1024
MILLI_CPU_TO_CPU = 1000
QUOTA_PERIOD = 100_000          # microseconds (100ms)
MIN_QUOTA_PERIOD = 1000         # microseconds (1ms)

GUARANTEED_OOM_SCORE_ADJ = -997
BEST_EFFORT_OOM_SCORE_ADJ = 1000
BURSTABLE_MIN_OOM_SCORE_ADJ = 3     # 1000 + guaranteedOOMScoreAdj (seed 001's table says 2)
BURSTABLE_MAX_OOM_SCORE_ADJ = 999
KUBELET_OOM_SCORE_ADJ = -999
NODE_CRITICAL_PRIORITY_CLASS = "system-node-critical"

Pod = Mapping[str, Any]
Container = Mapping[str, Any]


# -- conversions ------------------------------------------------------------------------------

def milli_cpu_to_shares(milli_cpu: int) -> int:
    """``MilliCPUToShares``: 0 -> 2, 250 -> 256, 1000 -> 1024; clamped to [2, 262144]."""
    if milli_cpu <= 0:
        return MIN_SHARES
    shares = milli_cpu * SHARES_PER_CPU // MILLI_CPU_TO_CPU
    return max(MIN_SHARES, min(MAX_SHARES, shares))


def milli_cpu_to_quota(milli_cpu: int, period: int = QUOTA_PERIOD) -> int:
    """``MilliCPUToQuota``: CFS quota in microseconds per ``period``; 0 (no quota) for no limit,
    at least 1000us otherwise. 500m -> 50000, 1m -> 1000."""
    if milli_cpu <= 0:
        return 0
    return max(MIN_QUOTA_PERIOD, milli_cpu * period // MILLI_CPU_TO_CPU)


def shares_to_milli_cpu(shares: int) -> int:
    """Inverse of milli_cpu_to_shares, rounded up (``sharesToMilliCPU``): 2 shares -> 2m,
    fewer -> 0."""
    if shares < MIN_SHARES:
        return 0
    return -(-shares * MILLI_CPU_TO_CPU // SHARES_PER_CPU)


def quota_to_milli_cpu(quota: int, period: int) -> int:
    """``quotaToMilliCPU``: 0 for no quota."""
    if quota <= 0 or period <= 0:
        return 0
    return quota * MILLI_CPU_TO_CPU // period


def cgroup_v2_weight(shares: int) -> int:
    """cgroup v1 ``cpu.shares`` -> v2 ``cpu.weight`` as the OCI runtime converts a container's
    (opencontainers/cgroups ``ConvertCPUSharesToCgroupV2Value``): a quadratic in log2(shares)
    through (2, 1), (1024, 100) and (262144, 10000); 0 stays 0 (unset)."""
    if shares <= 0:
        return 0
    if shares <= MIN_SHARES:
        return 1
    if shares >= MAX_SHARES:
        return 10000
    lg = math.log2(shares)
    return math.ceil(10 ** ((lg * lg + 125 * lg) / 612.0 - 7.0 / 34.0))


def kubelet_cpu_weight(shares: int) -> int:
    """``cpu.weight`` of the cgroups the kubelet writes itself (pod, QoS, kubepods):
    ``getCPUWeight``, linear: ``1 + ((shares-2)*9999)/262142``; 0 stays 0 (unset)."""
    if shares <= 0:
        return 0
    if shares >= MAX_SHARES:
        return 10000
    shares = max(MIN_SHARES, shares)
    return 1 + (shares - MIN_SHARES) * 9999 // (MAX_SHARES - MIN_SHARES)


def cpu_max(quota: int, period: int = QUOTA_PERIOD) -> str:
    """cgroup v2 ``cpu.max``: ``"50000 100000"``, or ``"max 100000"`` without a quota."""
    return f"{quota if quota > 0 else 'max'} {period}"


# -- finding things ---------------------------------------------------------------------------

def _spec(pod: Pod) -> Mapping[str, Any]:
    return pod.get("spec") or {}


def find_container(pod: Pod, container: str | Container) -> Container:
    """The container (app, init or ephemeral) named ``container``, or the dict itself."""
    if not isinstance(container, str):
        return container
    spec = _spec(pod)
    for key in ("containers", "initContainers", "ephemeralContainers"):
        for c in spec.get(key) or []:
            if c.get("name") == container:
                return c
    raise KeyError(f"pod has no container named {container!r}")


def _is_sidecar(pod: Pod, container: Container) -> bool:
    if not is_restartable_init_container(container):
        return False
    return any(c.get("name") == container.get("name") for c in _spec(pod).get("initContainers") or [])


def is_node_critical(pod: Pod) -> bool:
    """``IsNodeCriticalPod``: priority class ``system-node-critical``."""
    return _spec(pod).get("priorityClassName") == NODE_CRITICAL_PRIORITY_CLASS


# -- oom_score_adj ------------------------------------------------------------------------------

def _burstable_adj(memory_request: int, memory_capacity: int) -> int:
    return 1000 - (1000 * memory_request) // memory_capacity


def oom_score_adj(pod: Pod, container: str | Container, memory_capacity: int) -> int:
    """``GetContainerOOMScoreAdjust`` with seed 001's clamping (see the module docstring)."""
    if is_node_critical(pod):
        return GUARANTEED_OOM_SCORE_ADJ
    qos = qos_class(pod)
    if qos == GUARANTEED:
        return GUARANTEED_OOM_SCORE_ADJ
    if qos == BEST_EFFORT:
        return BEST_EFFORT_OOM_SCORE_ADJ
    if memory_capacity <= 0:
        return BURSTABLE_MAX_OOM_SCORE_ADJ
    c = find_container(pod, container)
    request = container_requests(c).get("memory", 0)
    remaining = _remaining_pod_memory_per_container(pod)
    adj = _burstable_adj(request + remaining, memory_capacity)
    if _is_sidecar(pod, c):
        regular = [container_requests(x).get("memory", 0) for x in _spec(pod).get("containers") or []]
        if regular:
            adj = min(adj, _burstable_adj(min(regular) + remaining, memory_capacity))
    if adj < BURSTABLE_MIN_OOM_SCORE_ADJ:
        return BURSTABLE_MIN_OOM_SCORE_ADJ
    if adj >= BEST_EFFORT_OOM_SCORE_ADJ:
        return BURSTABLE_MAX_OOM_SCORE_ADJ
    return adj


def _remaining_pod_memory_per_container(pod: Pod) -> int:
    """Pod-level memory request not requested by any container, per container (KEP-2837)."""
    level = pod_level_resources(pod)
    if level is None or not level[0].get("memory"):
        return 0
    spec = _spec(pod)
    count = len(spec.get("containers") or []) + len(spec.get("initContainers") or [])
    if count == 0:
        return 0
    aggregate = pod_requests({"spec": {k: v for k, v in spec.items() if k not in ("resources", "overhead")}})
    remaining = level[0]["memory"] - aggregate.get("memory", 0)
    return max(0, remaining) // count


# -- container level ------------------------------------------------------------------------------

def container_resources(pod: Pod, container: str | Container, node_capacity_memory: int, *,
                        cpu_cfs_quota: bool = True, cpu_period: int = QUOTA_PERIOD) -> LinuxContainerResources:
    """The Linux resources the node agent passes to CreateContainer / UpdateContainerResources
    for one container (``calculateLinuxResources`` + oom_score_adj).

    ``pod`` should carry the resources the node agent has admitted (allocated) in its spec.
    ``cpu_cfs_quota=False`` (``--cpu-cfs-quota=false``) leaves cpu limits unenforced.
    """
    c = find_container(pod, container)
    requests = container_requests(c)
    limits = container_limits(c)
    cpu_request = requests.get("cpu", 0) or limits.get("cpu", 0)
    quota = milli_cpu_to_quota(limits.get("cpu", 0), cpu_period) if cpu_cfs_quota else 0
    return LinuxContainerResources(
        cpu_period=cpu_period,
        cpu_quota=quota,
        cpu_shares=milli_cpu_to_shares(cpu_request),
        memory_limit_in_bytes=max(0, limits.get("memory", 0)),
        oom_score_adj=oom_score_adj(pod, c, node_capacity_memory),
    )


def cri_container_resources(pod: Pod, container: str | Container, node_capacity_memory: int, *,
                            cpu_cfs_quota: bool = True, cpu_period: int = QUOTA_PERIOD) -> ContainerResources:
    """``container_resources`` wrapped as CRI ``ContainerResources{linux}``."""
    return ContainerResources(linux=container_resources(pod, container, node_capacity_memory,
                                                        cpu_cfs_quota=cpu_cfs_quota, cpu_period=cpu_period))


# -- pod level -------------------------------------------------------------------------------------

def _limits_declared(pod: Pod) -> tuple[bool, bool]:
    """(every container has a cpu limit, every container has a memory limit), init containers
    included; pod-level limits count as declared."""
    cpu = memory = True
    spec = _spec(pod)
    for key in ("containers", "initContainers"):
        for c in spec.get(key) or []:
            limits = container_limits(c)
            if not limits.get("cpu"):
                cpu = False
            if not limits.get("memory"):
                memory = False
    level = pod_level_resources(pod)
    if level is not None:
        cpu = cpu or bool(level[1].get("cpu"))
        memory = memory or bool(level[1].get("memory"))
    return cpu, memory


def pod_cgroup(pod: Pod, *, cpu_cfs_quota: bool = True, cpu_period: int = QUOTA_PERIOD) -> LinuxContainerResources:
    """The pod cgroup's values (``ResourceConfigForPod``), overhead included, as a
    LinuxContainerResources (``oom_score_adj`` unused, 0). ``cpu_quota`` 0 and
    ``memory_limit_in_bytes`` 0 mean unlimited. Pass this to RunPodSandbox /
    UpdatePodSandboxResources."""
    qos = qos_class(pod)
    if qos == BEST_EFFORT:
        return LinuxContainerResources(cpu_period=cpu_period, cpu_quota=0, cpu_shares=MIN_SHARES,
                                       memory_limit_in_bytes=0, oom_score_adj=0)
    requests = pod_requests(pod)
    limits = pod_limits(pod)
    cpu_declared, memory_declared = _limits_declared(pod)
    shares = milli_cpu_to_shares(requests.get("cpu", 0))
    quota = milli_cpu_to_quota(limits.get("cpu", 0), cpu_period) if cpu_cfs_quota else 0
    memory = limits.get("memory", 0)
    if qos == BURSTABLE:
        if not cpu_declared:
            quota = 0
        if not memory_declared:
            memory = 0
    return LinuxContainerResources(cpu_period=cpu_period, cpu_quota=quota, cpu_shares=shares,
                                   memory_limit_in_bytes=memory, oom_score_adj=0)


def hugepage_limits(resources: Mapping[str, int]) -> dict[str, int]:
    """``HugePageLimits``: ``{"hugepages-2Mi": n}`` -> ``{"2MB": n}`` keyed by the kernel's
    page-size name (``hugetlb.2MB.*``), limits in bytes."""
    out: dict[str, int] = {}
    for name, amount in resources.items():
        if not name.startswith("hugepages-"):
            continue
        size = Quantity.parse(name[len("hugepages-"):]).value()
        out[_page_size_name(size)] = out.get(_page_size_name(size), 0) + amount
    return out


def _page_size_name(size: int) -> str:
    for unit, factor in (("GB", 2**30), ("MB", 2**20), ("KB", 2**10)):
        if size >= factor and size % factor == 0:
            return f"{size // factor}{unit}"
    return f"{size}B"


def pod_hugepages(pod: Pod) -> dict[str, int]:
    """The pod cgroup's hugetlb limits, from its hugepages requests."""
    return hugepage_limits(pod_requests(pod))


# -- QoS and node level -----------------------------------------------------------------------------

def qos_cgroups(pods: Iterable[Pod], allocatable: Mapping[str, int] | Any, *,
                qos_reserved: Mapping[str, int] | None = None,
                cpu_period: int = QUOTA_PERIOD) -> dict[str, LinuxContainerResources]:
    """Values of ``kubepods``, ``burstable`` and ``besteffort`` for the given pods (those
    active on the node).

    ``allocatable`` is the kubepods ResourceList (``allocatable.kubepods_resources(config)``),
    or a NodeConfig, from which that and ``qos_reserved`` are taken. 0 means unlimited.
    """
    if isinstance(allocatable, NodeConfig):
        if qos_reserved is None:
            qos_reserved = allocatable.qos_reserved
        allocatable = kubepods_resources(allocatable)
    return qos_cgroup_values(((qos_class(pod), pod_requests(pod)) for pod in pods), allocatable,
                             qos_reserved=qos_reserved, cpu_period=cpu_period)


def qos_cgroup_values(pods: Iterable[tuple[str, Mapping[str, int]]], allocatable: Mapping[str, int], *,
                      qos_reserved: Mapping[str, int] | None = None,
                      cpu_period: int = QUOTA_PERIOD) -> dict[str, LinuxContainerResources]:
    """``qos_cgroups`` from each pod's (QoS class, requests) and the kubepods ResourceList."""
    burstable_cpu = 0
    memory_requests = {GUARANTEED: 0, BURSTABLE: 0}
    for qos, requests in pods:
        if qos == BEST_EFFORT:
            continue
        if qos == BURSTABLE:
            burstable_cpu += requests.get("cpu", 0)
        memory_requests[qos] += requests.get("memory", 0)
    kube_memory = allocatable.get("memory", 0)
    burstable_memory = besteffort_memory = 0
    percent = (qos_reserved or {}).get("memory")
    if percent is not None and kube_memory > 0:
        burstable_memory = kube_memory - memory_requests[GUARANTEED] * percent // 100
        besteffort_memory = burstable_memory - memory_requests[BURSTABLE] * percent // 100
    return {
        "kubepods": LinuxContainerResources(cpu_period=cpu_period, cpu_quota=0,
                                            cpu_shares=milli_cpu_to_shares(allocatable.get("cpu", 0)),
                                            memory_limit_in_bytes=kube_memory),
        "burstable": LinuxContainerResources(cpu_period=cpu_period, cpu_quota=0,
                                             cpu_shares=milli_cpu_to_shares(burstable_cpu),
                                             memory_limit_in_bytes=max(0, burstable_memory)),
        "besteffort": LinuxContainerResources(cpu_period=cpu_period, cpu_quota=0, cpu_shares=MIN_SHARES,
                                              memory_limit_in_bytes=max(0, besteffort_memory)),
    }


# -- cgroup files and paths ----------------------------------------------------------------------------

def cgroup_files(res: LinuxContainerResources, version: int = 2,
                 hugepages: Mapping[str, int] | None = None, kubelet: bool = False) -> dict[str, str]:
    """The file -> content a cgroup of the given version gets for these values; ``kubelet``:
    a cgroup the kubelet writes itself (pod, QoS, kubepods), whose v2 weight is its own."""
    memory = res.memory_limit_in_bytes
    out: dict[str, str]
    if version == 1:
        out = {"cpu.shares": str(res.cpu_shares), "cpu.cfs_period_us": str(res.cpu_period),
               "cpu.cfs_quota_us": str(res.cpu_quota if res.cpu_quota > 0 else -1),
               "memory.limit_in_bytes": str(memory if memory > 0 else -1)}
        for size, limit in (hugepages or {}).items():
            out[f"hugetlb.{size}.limit_in_bytes"] = str(limit)
    elif version == 2:
        weight = kubelet_cpu_weight(res.cpu_shares) if kubelet else cgroup_v2_weight(res.cpu_shares)
        out = {"cpu.weight": str(weight), "cpu.max": cpu_max(res.cpu_quota, res.cpu_period),
               "memory.max": str(memory) if memory > 0 else "max"}
        for size, limit in (hugepages or {}).items():
            out[f"hugetlb.{size}.max"] = str(limit)
    else:
        raise ValueError(f"cgroup version must be 1 or 2, not {version!r}")
    if res.cpuset_cpus:
        out["cpuset.cpus"] = res.cpuset_cpus
    return out


def qos_tier(pod: Pod) -> str:
    """``""`` for Guaranteed (pods sit under kubepods), ``burstable`` or ``besteffort``."""
    qos = qos_class(pod)
    return "" if qos == GUARANTEED else qos.lower()


def qos_cgroup_path(tier: str, driver: str = "cgroupfs") -> str:
    """``/kubepods/burstable`` (cgroupfs) or ``/kubepods.slice/kubepods-burstable.slice`` (systemd);
    the empty tier is kubepods itself."""
    if driver == "systemd":
        return "/kubepods.slice" + (f"/kubepods-{tier}.slice" if tier else "")
    return "/kubepods" + (f"/{tier}" if tier else "")


def pod_cgroup_path(pod: Pod, driver: str = "cgroupfs") -> str:
    """``/kubepods/burstable/pod<uid>`` or, with the systemd driver,
    ``/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod<uid_with_underscores>.slice``."""
    uid = str((pod.get("metadata") or {}).get("uid", ""))
    tier = qos_tier(pod)
    base = qos_cgroup_path(tier, driver)
    if driver == "systemd":
        prefix = f"kubepods-{tier}-" if tier else "kubepods-"
        return f"{base}/{prefix}pod{uid.replace('-', '_')}.slice"
    return f"{base}/pod{uid}"


def container_cgroup_path(pod: Pod, container_id: str, driver: str = "cgroupfs") -> str:
    """The container's cgroup under its pod's (cAdvisor's ``id`` label)."""
    base = pod_cgroup_path(pod, driver)
    if driver == "systemd":
        return f"{base}/cri-containerd-{container_id}.scope"
    return f"{base}/{container_id}"


# -- explanation --------------------------------------------------------------------------------------

def _both(res: LinuxContainerResources, hugepages: Mapping[str, int] | None = None,
          kubelet: bool = True) -> dict[str, dict[str, str]]:
    return {"v1": cgroup_files(res, 1, hugepages, kubelet), "v2": cgroup_files(res, 2, hugepages, kubelet)}


def explain_pod(pod: Pod, node_config: NodeConfig, pods_on_node: Iterable[Pod] | None = None) -> dict[str, Any]:
    """A JSON-friendly account of the cgroup values and oom_score_adj kvert's node agent
    gives this pod on a node with ``node_config`` (a NodeConfig): the QoS class, the cgroup
    path at each level, v1 and v2 file values for kubepods, the QoS tier, the pod (overhead
    included) and each container. QoS-tier values depend on the other pods on the node:
    pass ``pods_on_node`` (the pod itself is counted once either way)."""
    driver = node_config.cgroup_driver
    period = node_config.cpu_cfs_quota_period_us
    quota_on = node_config.cpu_cfs_quota
    capacity = node_config.memory_capacity
    uid = (pod.get("metadata") or {}).get("uid")
    others = [p for p in (pods_on_node or []) if uid is None or (p.get("metadata") or {}).get("uid") != uid]
    qos_values = qos_cgroups([*others, pod], kubepods_resources(node_config),
                             qos_reserved=node_config.qos_reserved, cpu_period=period)
    qos = qos_class(pod)
    tier = qos_tier(pod)
    spec = _spec(pod)
    overhead = spec.get("overhead") or {}
    pod_res = pod_cgroup(pod, cpu_cfs_quota=quota_on, cpu_period=period)
    hugepages = pod_hugepages(pod)
    out: dict[str, Any] = {
        "qosClass": qos,
        "cgroupDriver": driver,
        "cgroupVersion": node_config.cgroup_version,
        "kubepods": {"path": qos_cgroup_path("", driver), **_both(qos_values["kubepods"])},
        "qos": {"path": qos_cgroup_path(tier, driver),
                **(_both(qos_values[tier]) if tier else {"note": "Guaranteed pods sit directly under kubepods"})},
        "pod": {
            "path": pod_cgroup_path(pod, driver),
            "requests": format_resource_list(pod_requests(pod), BINARY_SI),
            "limits": format_resource_list(pod_limits(pod), BINARY_SI),
            **({"overhead": dict(overhead)} if overhead else {}),
            **_both(pod_res, hugepages),
        },
        "containers": [],
    }
    for key in ("initContainers", "containers"):
        for c in spec.get(key) or []:
            res = container_resources(pod, c, capacity, cpu_cfs_quota=quota_on, cpu_period=period)
            entry: dict[str, Any] = {"name": c.get("name", ""), "oomScoreAdj": res.oom_score_adj}
            if key == "initContainers":
                entry["init"] = True
                if is_restartable_init_container(c):
                    entry["sidecar"] = True
            entry.update(_both(res, kubelet=False))
            out["containers"].append(entry)
    return out


__all__ = [
    "BEST_EFFORT_OOM_SCORE_ADJ", "BURSTABLE_MAX_OOM_SCORE_ADJ", "BURSTABLE_MIN_OOM_SCORE_ADJ",
    "GUARANTEED_OOM_SCORE_ADJ", "MAX_SHARES", "MIN_QUOTA_PERIOD", "MIN_SHARES", "QUOTA_PERIOD",
    "cgroup_files", "cgroup_v2_weight", "container_cgroup_path", "container_resources", "cpu_max",
    "cri_container_resources", "explain_pod", "find_container", "hugepage_limits", "is_node_critical",
    "kubelet_cpu_weight",
    "milli_cpu_to_quota", "milli_cpu_to_shares", "oom_score_adj", "pod_cgroup", "pod_cgroup_path",
    "pod_hugepages", "qos_cgroup_path", "qos_cgroup_values", "qos_cgroups", "qos_tier", "quota_to_milli_cpu",
    "shares_to_milli_cpu",
]
