"""One call's view of a pod at an allocation: the spec rewritten to the allocation and the
cgroup values derived from it, each computed at most once.

Deriving cgroup values walks the pod's raw dict; a resize or a container start asks for
several of them, so they are derived through this view, made once per call and dropped
after it (the pod and its allocation may change between calls).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from kvert.kubelet.cgroups import QUOTA_PERIOD, container_resources, pod_cgroup
from kvert.kubelet.checkpoint import Requirements
from kvert.kubelet.resize.allocation import Allocation, with_allocation
from kvert.kubelet.runtime.base import LinuxContainerResources


@dataclass(frozen=True)
class CgroupOptions:
    """The node settings cgroup values depend on."""
    memory_capacity: int                 # oom_score_adj is relative to the machine's memory
    cpu_cfs_quota: bool = True           # --cpu-cfs-quota: enforce cpu limits
    cpu_period: int = QUOTA_PERIOD       # --cpu-cfs-quota-period, microseconds


class AllocatedPod:
    """``pod`` as ``allocation`` makes it. Read-only: it shares values with ``pod``."""

    def __init__(self, pod: Mapping[str, Any], allocation: Allocation, options: CgroupOptions) -> None:
        self.pod = pod
        self.allocation = allocation
        self.options = options
        self._containers: dict[str, LinuxContainerResources] = {}

    def requirements(self, name: str) -> Requirements | None:
        return self.allocation.get(name)

    @cached_property
    def spec(self) -> dict[str, Any]:
        """The pod with the allocation as its containers' resources (``with_allocation``)."""
        return with_allocation(self.pod, self.allocation)

    @cached_property
    def pod_cgroup(self) -> LinuxContainerResources:
        options = self.options
        return pod_cgroup(self.spec, cpu_cfs_quota=options.cpu_cfs_quota, cpu_period=options.cpu_period)

    def container(self, name: str) -> LinuxContainerResources:
        """The container's cgroup values (what CreateContainer / UpdateContainerResources get)."""
        values = self._containers.get(name)
        if values is None:
            values = self._containers[name] = container_resources(
                self.spec, name, self.options.memory_capacity,
                cpu_cfs_quota=self.options.cpu_cfs_quota, cpu_period=self.options.cpu_period)
        return values
