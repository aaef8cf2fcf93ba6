"""What the node agent knows about each pod it admitted, and about each of its containers:
the record the pod workers sync, the reconcile loop decides resizes on, and the checkpoint
keeps (see ``NodeAgent.save``)."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from kvert.kubelet.checkpoint import Requirements
from kvert.kubelet.eviction import Eviction
from kvert.kubelet.resize.state import ResizeState
from kvert.kubelet.runtime.base import ContainerStatus, LinuxContainerResources


@dataclass
class ContainerRecord:
    name: str
    kind: str                          # "init" | "sidecar" | "app" | "ephemeral"
    id: str = ""                       # the current runtime container
    status: ContainerStatus | None = None
    restart_count: int = 0
    last_terminated: dict[str, Any] | None = None
    backoff: float = 0.0               # current back-off duration (0: none yet)
    backoff_updated: float = 0.0
    init_done: bool = False            # a regular init container that exited 0
    restart_now: bool = False          # stopped by a RestartContainer resize: restart at once
    waiting_reason: str = ""
    waiting_message: str = ""
    retry_at: float = 0.0
    lost: bool = False                 # it ran, but the runtime no longer knows it

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "restarts": self.restart_count, "lastTerminated": self.last_terminated,
                "backoff": [self.backoff, self.backoff_updated], "initDone": self.init_done,
                "restartNow": self.restart_now, "lost": self.lost}

    def load(self, data: Mapping[str, Any]) -> None:
        self.id = data.get("id") or ""
        self.restart_count = int(data.get("restarts") or 0)
        self.last_terminated = data.get("lastTerminated")
        backoff = data.get("backoff") or [0.0, 0.0]
        self.backoff, self.backoff_updated = float(backoff[0]), float(backoff[1])
        self.init_done = bool(data.get("initDone"))
        self.restart_now = bool(data.get("restartNow"))
        self.lost = bool(data.get("lost"))


@dataclass
class PodState:
    """What the node agent knows about one pod it admitted."""
    uid: str
    namespace: str
    name: str
    pod: dict[str, Any]
    allocated: dict[str, Requirements]
    actuated: dict[str, Requirements] = field(default_factory=dict)
    sandbox_id: str = ""
    pod_cgroup: LinuxContainerResources | None = None
    containers: dict[str, ContainerRecord] = field(default_factory=dict)
    pod_ip: str = ""
    start_time: float = 0.0
    terminal: str = ""                 # "Succeeded" / "Failed" once finished
    deleted: bool = False              # gone from the API
    resize: ResizeState = field(default_factory=ResizeState)
    actuating: bool = False            # a resize is being applied right now
    admission: dict[str, Any] | None = None    # the admission decision, for explanations
    wake: asyncio.Event = field(default_factory=asyncio.Event)
    next_due: float | None = None
    last_explain: str = ""             # the annotation last written
    explain_key: str = ""              # what explain_text was computed from
    explain_text: str = ""
    spec_key: int = -1                 # the generation spec_allocation was computed for
    spec_allocation: dict[str, Requirements] | None = None
    # (generation, allocation, verdict): whether that spec asks for a resize of that allocation
    # (an allocation is replaced, never changed in place, when a resize is granted)
    resize_verdict: tuple[int, dict[str, Requirements], bool] | None = None
    # (generation, allocation, actuated as it was, what the pod holds on the node): NodeAgent
    # .holding's memo, good for the same spec (generation), allocation object and actuated
    held: tuple[int, dict[str, Requirements], dict[str, Requirements], dict[str, int]] | None = None
    worker: object | None = None       # the PodWorker (kvert.kubelet.lifecycle) syncing it
    worker_task: asyncio.Task[None] | None = None
    failed_reason: str = ""            # e.g. a regular init container failed under Never
    eviction: Eviction | None = None   # an eviction the eviction manager asked for
    # why it ended, when not on its own: status reason, message, condition
    ended: dict[str, Any] | None = None

    @property
    def active(self) -> bool:
        """Holds node resources (admitted, not finished, not gone)."""
        return not self.terminal and not self.deleted

    def generation(self) -> int:
        return int((self.pod.get("metadata") or {}).get("generation") or 0)


__all__ = ["ContainerRecord", "PodState"]
