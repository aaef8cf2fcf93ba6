"""The CPU manager's static policy (``pkg/kubelet/cm/cpumanager/policy_static.go``), without
topology: a container of a Guaranteed pod whose CPU request is a whole number of CPUs gets
that many CPUs of its own (``cpuset.cpus``); every other container runs on the shared pool,
which is every CPU no container holds exclusively. The reserved CPUs
(``reservedSystemCPUs``, else the first ``ceil(kubeReserved.cpu + systemReserved.cpu)``)
are never given exclusively and stay in the shared pool. The policy ``none`` writes no
cpuset at all.

Exclusive CPUs are the lowest-numbered free ones (upstream takes them by topology: whole
sockets, then cores; kvert's nodes have no topology). When assignments change, containers
on the shared pool are moved to the new pool (the reconcile loop's ``UpdateContainerResources``).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from typing import Any

from kvert.api.pods import GUARANTEED, container_requests, qos_class

STATIC = "static"


class CpuAllocationError(Exception):
    """Not enough free CPUs for an exclusive assignment."""


def parse_cpuset(text: str) -> frozenset[int]:
    """Linux's list format: ``0-3,6`` -> {0, 1, 2, 3, 6}; ValueError on anything else."""
    cpus: set[int] = set()
    for part in filter(None, (p.strip() for p in text.split(","))):
        m = re.fullmatch(r"(\d+)(?:-(\d+))?", part)
        if not m:
            raise ValueError(f"invalid cpuset {text!r}")
        low, high = int(m.group(1)), int(m.group(2) or m.group(1))
        if high < low:
            raise ValueError(f"invalid cpuset {text!r}")
        cpus.update(range(low, high + 1))
    return frozenset(cpus)


def format_cpuset(cpus: Iterable[int]) -> str:
    """The list format, ranges collapsed: {0, 1, 2, 3, 6} -> ``0-3,6``."""
    out: list[str] = []
    ordered = sorted(cpus)
    i = 0
    while i < len(ordered):
        j = i
        while j + 1 < len(ordered) and ordered[j + 1] == ordered[j] + 1:
            j += 1
        out.append(str(ordered[i]) if i == j else f"{ordered[i]}-{ordered[j]}")
        i = j + 1
    return ",".join(out)


def exclusive_cpus(pod: Mapping[str, Any], container: str) -> int:
    """How many CPUs the static policy gives a container for itself (0: the shared pool):
    a Guaranteed pod's container requesting whole CPUs (``guaranteedCPUs``)."""
    if qos_class(pod) != GUARANTEED:
        return 0
    spec = pod.get("spec") or {}
    for c in (spec.get("initContainers") or []) + (spec.get("containers") or []):
        if c.get("name") == container:
            milli = container_requests(c).get("cpu", 0)
            return milli // 1000 if milli and milli % 1000 == 0 else 0
    return 0


class CpuManager:
    """The node's CPU assignments: ``cpuset(pod, container)`` for a container about to be
    created, ``release`` when it is gone."""

    def __init__(self, policy: str, num_cpus: int, *, reserved: str = "", reserved_milli: int = 0):
        self.policy = policy
        self.all = frozenset(range(num_cpus))
        if reserved:
            self.reserved = parse_cpuset(reserved) & self.all
        else:
            self.reserved = frozenset(range(min(num_cpus, math.ceil(reserved_milli / 1000))))
        self.assignments: dict[tuple[str, str], frozenset[int]] = {}

    @property
    def enabled(self) -> bool:
        return self.policy == STATIC

    def shared(self) -> frozenset[int]:
        taken = frozenset().union(*self.assignments.values()) if self.assignments else frozenset()
        return self.all - taken

    def cpuset(self, pod: Mapping[str, Any], container: str) -> str:
        """The container's ``cpuset.cpus`` ("" with the none policy); an exclusive assignment
        is made (or kept) here. Raises CpuAllocationError when too few CPUs are free."""
        if not self.enabled:
            return ""
        uid = (pod.get("metadata") or {}).get("uid", "")
        count = exclusive_cpus(pod, container)
        if not count:
            return format_cpuset(self.shared())
        key = (uid, container)
        if key not in self.assignments:
            free = sorted(self.shared() - self.reserved)
            if len(free) < count:
                raise CpuAllocationError(f"not enough cpus available to satisfy request: requested={count}, "
                                         f"available={len(free)}")
            self.assignments[key] = frozenset(free[:count])
        return format_cpuset(self.assignments[key])

    def is_exclusive(self, uid: str, container: str) -> bool:
        return (uid, container) in self.assignments

    def release(self, uid: str, container: str | None = None) -> bool:
        """Free a container's (or every container of a pod's) CPUs; whether any were held."""
        keys = [k for k in self.assignments if k[0] == uid and (container is None or k[1] == container)]
        for key in keys:
            del self.assignments[key]
        return bool(keys)
