"""DefaultBinder: POST the pod's ``binding`` subresource (the scheduler's one decisive write)."""

from __future__ import annotations

from kvert.api.errors import ApiError
from kvert.scheduler.framework import Code, CycleState, Plugin, Status


class DefaultBinder(Plugin):
    name = "DefaultBinder"

    async def bind(self, state: CycleState, pod: dict, node: str) -> Status | None:
        meta = pod.get("metadata") or {}
        try:
            await self.handle.client.bind(meta.get("namespace", ""), meta.get("name", ""), node)
        except ApiError as e:
            return Status(Code.ERROR, str(e), error=e)
        return None
