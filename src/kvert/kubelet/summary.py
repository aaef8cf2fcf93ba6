"""The kubelet's Summary API, ``/stats/summary`` (kubelet stats v1alpha1 ``Summary``), in the
part kvert measures: cumulative cpu, the memory working set (and ``availableBytes`` under a
limit) and PSI (KEP-4205, GA in 1.36) for the node, each pod and each running container::

    {"node": {"nodeName": "n1", "startTime": "...",
              "cpu": {"time": "...", "usageCoreNanoSeconds": 1, "psi": {"full": {...}, "some": {...}}},
              "memory": {"time": "...", "workingSetBytes": 1, "psi": {...}},
              "io": {"time": "...", "psi": {...}}},
     "pods": [{"podRef": {"name", "namespace", "uid"}, "startTime": "...",
               "containers": [{"name": "app", "startTime": "...", "cpu": {...}, "memory": {...},
                               "io": {...}}],
               "cpu": {...}, "memory": {...}, "io": {...}}]}

``psi`` is there only where the runtime reports it (cgroup v2, or the simulator); its
``total`` is microseconds as on cAdvisor's path (``kvert.kubelet.psi``). The rate
``usageNanoCores``, network, filesystem and swap statistics are not served: metrics.k8s.io and
``/metrics/resource`` carry kvert's rates.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from kvert.api.meta import format_time
from kvert.kubelet.podstate import PodState
from kvert.kubelet.psi import ResourcePressure
from kvert.kubelet.runtime.base import ContainerStatus, Runtime, reports_pressure


@dataclass(frozen=True)
class PodEntry:
    """A pod on the node: its object, start time, sandbox and containers' runtime statuses."""
    pod: Mapping[str, Any]
    start_time: float
    sandbox_id: str
    statuses: Sequence[ContainerStatus]


def _limit(status: ContainerStatus) -> int:
    linux = status.resources.linux if status.resources is not None else None
    return linux.memory_limit_in_bytes if linux is not None else 0


def _resource_stats(now: str, cpu_ns: int, working_set: int, limit: int,
                    pressure: ResourcePressure | None) -> dict[str, dict[str, Any]]:
    cpu: dict[str, Any] = {"time": now, "usageCoreNanoSeconds": int(cpu_ns)}
    memory: dict[str, Any] = {"time": now, "workingSetBytes": int(working_set)}
    if limit > 0:
        memory["availableBytes"] = max(0, limit - int(working_set))
    io: dict[str, Any] = {"time": now}
    if pressure is not None:
        for stats, target in ((pressure.cpu, cpu), (pressure.memory, memory), (pressure.io, io)):
            if stats is not None:
                target["psi"] = stats.as_dict()
    out = {"cpu": cpu, "memory": memory}
    if "psi" in io:
        out["io"] = io
    return out


def stats_summary(node_name: str, node_start: float, now: float, pods: Sequence[PodEntry],
                  runtime: Runtime) -> dict[str, Any]:
    """The Summary of a node whose runtime is ``runtime`` (PSI of pods and node where it
    reports them: ``PressureRuntime``)."""
    stamp = format_time(now)
    pod_items = []
    node_cpu = node_memory = 0
    for entry in pods:
        meta = entry.pod.get("metadata") or {}
        running = [st for st in entry.statuses if st.state == "running"]
        containers = [{"name": st.name, "startTime": format_time(st.started_at),
                       **_resource_stats(stamp, st.cpu_usage_core_nanoseconds, st.memory_working_set_bytes,
                                         _limit(st), st.pressure)}
                      for st in running]
        cpu = sum(st.cpu_usage_core_nanoseconds for st in running)
        memory = sum(st.memory_working_set_bytes for st in running)
        node_cpu += cpu
        node_memory += memory
        pressure = runtime.pod_pressure(entry.sandbox_id) \
            if entry.sandbox_id and reports_pressure(runtime) else None
        pod_items.append({"podRef": {"name": meta.get("name", ""), "namespace": meta.get("namespace", ""),
                                     "uid": meta.get("uid", "")},
                          "startTime": format_time(entry.start_time), "containers": containers,
                          **_resource_stats(stamp, cpu, memory, 0, pressure)})
    node_pressure = runtime.node_pressure() if reports_pressure(runtime) else None
    node = {"nodeName": node_name, "startTime": format_time(node_start),
            **_resource_stats(stamp, node_cpu, node_memory, 0, node_pressure)}
    return {"node": node, "pods": pod_items}


class SummaryAgent(Protocol):
    """What the Summary needs of a node agent (``kvert.kubelet.agent.NodeAgent``)."""
    @property
    def name(self) -> str: ...

    @property
    def runtime(self) -> Runtime: ...

    @property
    def pods(self) -> Mapping[str, PodState]:
        """By pod uid."""

    async def pod_statuses(self) -> list[tuple[dict[str, Any], list[Any]]]: ...


async def agent_summary(agent: SummaryAgent, now: float, node_start: float = 0.0) -> dict[str, Any]:
    """The Summary of a node agent's pods (sandboxes found by pod uid among ``agent.pods``)."""
    entries = []
    for pod, statuses in await agent.pod_statuses():
        ps = agent.pods.get((pod.get("metadata") or {}).get("uid", ""))
        entries.append(PodEntry(pod=pod, start_time=ps.start_time if ps is not None else 0.0,
                                sandbox_id=ps.sandbox_id if ps is not None else "", statuses=statuses))
    return stats_summary(agent.name, node_start, now, entries, agent.runtime)


__all__ = ["PodEntry", "SummaryAgent", "agent_summary", "stats_summary"]
