"""The persistent volume strategies (``pkg/registry/core/persistentvolume``): a volume is
created Pending whatever status was sent, and a ``/status`` write that changes the phase
stamps ``lastPhaseTransitionTime`` unless the writer set it (PersistentVolumeLastPhaseTransitionTime,
GA in 1.31)."""

from __future__ import annotations

from kvert.api.kinds import ResourceType
from kvert.api.meta import format_time
from kvert.api.types import Obj
from kvert.clock import Clock
from kvert.registry.strategies.base import StatusStrategy


class PersistentVolumeStatusStrategy(StatusStrategy):
    def prepare_for_update(self, rt: ResourceType, new: Obj, old: Obj, clock: Clock) -> Obj:
        merged = super().prepare_for_update(rt, new, old, clock)
        stored = old.get("status")
        old_status = stored if isinstance(stored, dict) else {}
        new_status = merged.get("status")
        if not isinstance(new_status, dict):
            return merged
        if (new_status.get("phase") != old_status.get("phase")
                and new_status.get("lastPhaseTransitionTime") == old_status.get("lastPhaseTransitionTime")):
            new_status["lastPhaseTransitionTime"] = format_time(clock.now())
        return merged
