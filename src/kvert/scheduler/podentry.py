"""A pod as the node cache counts it, and the identity helpers every scheduler module shares.

This sits below the cache, its per-query pod counts (:mod:`kvert.scheduler.podindex`) and
its views, so that each of them can name the entry without importing the others.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from kvert.api.resources import ResourceList

HostPort = tuple[str, str, int]


def _meta(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    return obj.get("metadata") or {}


def pod_uid(pod: Mapping[str, Any]) -> str:
    meta = _meta(pod)
    return meta.get("uid") or f"{meta.get('namespace', '')}/{meta.get('name', '')}"


def pod_key(pod: Mapping[str, Any]) -> str:
    meta = _meta(pod)
    return f"{meta.get('namespace', '')}/{meta.get('name', '')}"


def host_ports(pod: Mapping[str, Any]) -> tuple[HostPort, ...]:
    """``(hostIP, protocol, hostPort)`` of every container port with a hostPort > 0
    (``schedutil.GetHostPorts``, what NodeInfo's UsedPorts counts): sidecars (init containers
    with ``restartPolicy: Always``, which run as long as the pod) and app containers; a plain
    init container has exited before the app containers bind their ports, so its ports are
    free again. hostIP defaults to 0.0.0.0 and protocol to TCP (``HostPortInfo.sanitize``)."""
    spec = pod.get("spec") or {}
    out = []
    containers = [c for c in spec.get("initContainers") or () if c.get("restartPolicy") == "Always"]
    containers += list(spec.get("containers") or ())
    for c in containers:
        for p in c.get("ports") or ():
            port = p.get("hostPort")
            if isinstance(port, int) and not isinstance(port, bool) and port > 0:
                out.append((p.get("hostIP") or "0.0.0.0", p.get("protocol") or "TCP", port))
    return tuple(out)


@dataclass
class PodEntry:
    uid: str
    key: str
    node: str
    req: ResourceList
    nz_cpu: int
    nz_mem: int
    pod: dict[str, Any]
    assumed: bool = False
    binding_finished: bool = False
    # what pod-aware plugins look at, read once per pod version
    ns: str = ""
    labels: Mapping[str, str] = field(default_factory=dict)
    terminating: bool = False
    priority: int = 0
    ports: tuple[HostPort, ...] = ()

    @classmethod
    def of(cls, pod: dict[str, Any], node: str, req: ResourceList, nz_cpu: int, nz_mem: int,
           assumed: bool = False) -> PodEntry:
        meta = _meta(pod)
        prio = (pod.get("spec") or {}).get("priority")
        return cls(pod_uid(pod), pod_key(pod), node, req, nz_cpu, nz_mem, pod, assumed,
                   ns=meta.get("namespace") or "", labels=meta.get("labels") or {},
                   terminating=bool(meta.get("deletionTimestamp")),
                   priority=prio if isinstance(prio, int) and not isinstance(prio, bool) else 0,
                   ports=host_ports(pod))

    def with_pod(self, pod: dict[str, Any], node: str) -> PodEntry:
        """The same requests for a new version of the pod (its requests did not change)."""
        return PodEntry.of(pod, node, self.req, self.nz_cpu, self.nz_mem)


__all__ = ["HostPort", "PodEntry", "host_ports", "pod_key", "pod_uid"]
