"""What a pod worker (``kvert.kubelet.lifecycle``) needs from the node agent it runs in.

The node agent (``kvert.kubelet.agent.NodeAgent``) provides it; the workers are written
against this contract only, so they depend on what they use and not on the agent.
"""

from __future__ import annotations

from typing import Any, Protocol

from kvert.client.base import Client
from kvert.clock.base import Clock
from kvert.kubelet.config import NodeConfig
from kvert.kubelet.cpumanager import CpuManager
from kvert.kubelet.envvars import PodEnvironment
from kvert.kubelet.podstate import PodState
from kvert.kubelet.resize.allocation import ResizeScope
from kvert.kubelet.resize.metrics import ResizeMetrics
from kvert.kubelet.resize.state import ResizeWriter
from kvert.kubelet.resize.view import CgroupOptions
from kvert.kubelet.runtime.base import Runtime
from kvert.kubelet.tokens import ProjectedVolumes


class NodeServices(Protocol):
    # ---- the node's collaborators and settings ----------------------------------------------
    @property
    def client(self) -> Client: ...

    @property
    def clock(self) -> Clock: ...

    @property
    def runtime(self) -> Runtime: ...

    @property
    def config(self) -> NodeConfig: ...

    @property
    def volumes(self) -> ProjectedVolumes: ...

    @property
    def environment(self) -> PodEnvironment:
        """What containers' environment variables are resolved from."""

    @property
    def cpu_manager(self) -> CpuManager: ...

    @property
    def cgroup_options(self) -> CgroupOptions: ...

    @property
    def resizes(self) -> ResizeWriter[PodState]:
        """Where a resize changes (and checkpoints) a pod's record."""

    @property
    def resize_scope(self) -> ResizeScope:
        """What beyond app containers and sidecars this node resizes (its gates)."""

    @property
    def resize_metrics(self) -> ResizeMetrics:
        """The kubelet's resize metrics, recorded where upstream records them."""

    @property
    def host_ip(self) -> str: ...

    @property
    def explain(self) -> bool:
        """Whether the ``explain.kvert.io/node`` annotation is written."""

    # ---- a pod's record ----------------------------------------------------------------------
    def save(self, ps: PodState) -> None:
        """Checkpoint the record (all but the allocation)."""

    def latest(self, ps: PodState) -> dict[str, Any]:
        """The newest copy of the pod the agent has seen."""

    def observe(self, pod: dict[str, Any]) -> None:
        """Keep a newer copy of the pod a worker got back from a write."""

    def explanation(self, ps: PodState) -> str:
        """The ``explain.kvert.io/node`` annotation's text."""

    def note_synced(self, ps: PodState) -> None: ...

    def forget(self, ps: PodState) -> None:
        """The pod is gone: drop its record, checkpoint and volumes."""

    # ---- the node ----------------------------------------------------------------------------
    async def event(self, pod: dict[str, Any], type_: str, reason: str, message: str) -> None: ...

    async def allocate_ip(self) -> str: ...

    def trigger(self, reason: str = "") -> None:
        """Ask the reconcile loop to run (something freed room or changed what runs)."""
