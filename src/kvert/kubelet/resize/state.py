"""A pod's resize state (its PodResizePending / PodResizeInProgress conditions) and every
change a resize makes to the pod's record on the node, checkpointed here as it is made."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, Protocol, TypeVar

from kvert.api.meta import deep_copy, format_time
from kvert.kubelet.checkpoint import Checkpoint, Requirements
from kvert.kubelet.resize.actuate import Actuation
from kvert.kubelet.runtime.base import LinuxContainerResources

PENDING = "PodResizePending"
IN_PROGRESS = "PodResizeInProgress"
DEFERRED = "Deferred"
INFEASIBLE = "Infeasible"
ERROR = "Error"


@dataclass
class ResizeState:
    pending_reason: str = ""          # "" | Deferred | Infeasible
    pending_message: str = ""
    pending_since: float = 0.0
    pending_generation: int = 0
    in_progress: bool = False
    in_progress_since: float = 0.0
    in_progress_generation: int = 0
    error_message: str = ""           # PodResizeInProgress reason Error when set
    retry_at: float = 0.0             # when a failed / waiting actuation is tried again
    hold_memory: dict[str, int] = field(default_factory=dict)   # container -> limit to report
    last_decision: dict[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if v not in ("", 0, 0.0, False, None, {})}

    @classmethod
    def from_json(cls, data: Mapping[str, Any] | None) -> ResizeState:
        state = cls()
        for key, value in (data or {}).items():
            if hasattr(state, key):
                setattr(state, key, value)
        return state

    def set_pending(self, reason: str, message: str, generation: int, now: float) -> bool:
        """Returns whether the condition changed (then an event is due)."""
        changed = reason != self.pending_reason or message != self.pending_message
        if reason != self.pending_reason:
            self.pending_since = now
        self.pending_reason, self.pending_message = reason, message
        self.pending_generation = generation
        return changed

    def clear_pending(self) -> bool:
        had = bool(self.pending_reason)
        self.pending_reason = self.pending_message = ""
        self.pending_since = 0.0
        self.pending_generation = 0
        return had

    def start(self, generation: int, now: float) -> None:
        self.clear_pending()
        if not self.in_progress:
            self.in_progress_since = now
        self.in_progress = True
        self.in_progress_generation = generation
        self.error_message = ""
        self.retry_at = 0.0

    def finish(self) -> None:
        self.in_progress = False
        self.in_progress_since = 0.0
        self.in_progress_generation = 0
        self.error_message = ""
        self.retry_at = 0.0
        self.hold_memory = {}

    def conditions(self) -> list[dict[str, Any]]:
        out = []
        if self.pending_reason:
            out.append({"type": PENDING, "status": "True", "lastProbeTime": None,
                        "lastTransitionTime": format_time(self.pending_since),
                        "observedGeneration": self.pending_generation,
                        "reason": self.pending_reason, "message": self.pending_message})
        if self.in_progress:
            cond: dict[str, Any] = {"type": IN_PROGRESS, "status": "True", "lastProbeTime": None,
                                    "lastTransitionTime": format_time(self.in_progress_since),
                                    "observedGeneration": self.in_progress_generation}
            if self.error_message:
                cond["reason"], cond["message"] = ERROR, self.error_message
            out.append(cond)
        return out

    def record_actuation(self, result: Actuation, now: float, retry_after: float,
                         limits_before: Mapping[str, int]) -> bool:
        """What an attempt at applying the allocation did; True when its error is new (a
        ResizeError event is due). ``limits_before`` is each container's memory limit before
        the attempt, reported while the memory control loop brings a limit down."""
        decision = dict(self.last_decision or {})
        decision["actuation"] = result.calls
        new_error = False
        if result.error:
            new_error = self.error_message != result.error
            self.error_message = result.error
            self.retry_at = now + retry_after
            self.hold_memory = {}
            if result.refused:
                decision["refused"] = result.error
        elif result.waiting:
            parts = [f"attempting to set container {name!r} memory limit ({target}) below current "
                     f"usage ({usage})" for name, (target, usage) in sorted(result.waiting.items())]
            self.error_message = "; ".join(parts)
            self.retry_at = now + retry_after
            for name in result.waiting:
                if name not in self.hold_memory:
                    self.hold_memory[name] = limits_before.get(name, 0)
            decision["memoryDecrease"] = {n: {"target": t, "usage": u}
                                          for n, (t, u) in result.waiting.items()}
        else:
            self.error_message = ""
            self.retry_at = 0.0
            self.hold_memory = {}
        self.last_decision = decision
        return new_error


class ResizeRecord(Protocol):
    """What a resize changes of a pod's record on the node (``kvert.kubelet.podstate.PodState``)."""
    uid: str
    namespace: str
    name: str
    allocated: dict[str, Requirements]
    actuated: dict[str, Requirements]
    pod_cgroup: LinuxContainerResources | None
    resize: ResizeState


Record = TypeVar("Record", bound=ResizeRecord)


class ResizeWriter(Generic[Record]):
    """The one place a resize changes a pod's record, each change checkpointed at once: the
    allocation in its own entry, the actuated resources alone (they change container by
    container), everything else through ``save`` (the node agent's write of the whole record)."""

    def __init__(self, checkpoint: Checkpoint, save: Callable[[Record], None]) -> None:
        self.checkpoint = checkpoint
        self.save = save

    def grant(self, ps: Record, allocation: dict[str, Requirements], generation: int, now: float,
              decision: dict[str, Any]) -> None:
        """The resize is accepted: allocated := spec, checkpointed before anything shows it."""
        ps.allocated = allocation
        self.checkpoint.set_allocated(ps.uid, ps.namespace, ps.name, allocation)
        ps.resize.start(generation, now)
        ps.resize.last_decision = decision
        self.save(ps)

    def hold(self, ps: Record, reason: str, message: str, generation: int, now: float,
             decision: dict[str, Any]) -> bool:
        """The resize is deferred or infeasible; True when the condition changed."""
        changed = ps.resize.set_pending(reason, message, generation, now)
        last = ps.resize.last_decision
        if changed or last is None or last.get("generation") != generation:
            ps.resize.last_decision = decision
        self.save(ps)
        return changed

    def clear_pending(self, ps: Record) -> bool:
        """No resize is asked for (any more); True when a pending condition went away."""
        if not ps.resize.clear_pending():
            return False
        self.save(ps)
        return True

    def start(self, ps: Record, generation: int, now: float) -> None:
        """In progress without a decision in this life (restored with allocated != actuated)."""
        ps.resize.start(generation, now)
        self.save(ps)

    def set_actuated(self, ps: Record, name: str, requirements: Requirements | None) -> None:
        if requirements is None:
            ps.actuated.pop(name, None)
        else:
            ps.actuated[name] = deep_copy(requirements)
        self.checkpoint.update(ps.uid, actuated=ps.actuated or {})

    def set_pod_cgroup(self, ps: Record, values: LinuxContainerResources) -> None:
        ps.pod_cgroup = values
        self.save(ps)

    def record_actuation(self, ps: Record, result: Actuation, now: float, retry_after: float,
                         limits_before: Mapping[str, int]) -> bool:
        """See :meth:`ResizeState.record_actuation`."""
        new_error = ps.resize.record_actuation(result, now, retry_after, limits_before)
        self.save(ps)
        return new_error

    def complete(self, ps: Record) -> None:
        """Everything running matches the allocation: PodResizeInProgress goes."""
        ps.resize.finish()
        self.save(ps)
