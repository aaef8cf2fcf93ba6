"""DefaultBinder: POST the pod's ``binding`` subresource (the scheduler's one decisive write).

Annotations the scheduler left in the cycle state under :data:`BINDING_ANNOTATIONS` (its
explanation) travel with the Binding, which the API server copies onto the pod in the same
write; the binder marks them sent so the scheduler does not write them again."""

from __future__ import annotations

from typing import Any

from kvert.api.errors import ApiError
from kvert.scheduler.framework import Code, CycleState, Plugin, Status

BINDING_ANNOTATIONS = "kvert.io/binding-annotations"
ANNOTATIONS_SENT = "kvert.io/binding-annotations-sent"


class DefaultBinder(Plugin):
    name = "DefaultBinder"

    async def bind(self, state: CycleState, pod: dict[str, Any], node: str) -> Status | None:
        meta = pod.get("metadata") or {}
        annotations = state.get(BINDING_ANNOTATIONS)
        client = self.bound_handle.client
        if client is None:   # only the live scheduler binds, and it always has a client
            return Status(Code.ERROR, "no API client to bind with", plugin=self.name)
        try:
            await client.bind(meta.get("namespace", ""), meta.get("name", ""), node,
                                          annotations)
        except ApiError as e:
            return Status(Code.ERROR, str(e), error=e)
        if annotations:
            state.write(ANNOTATIONS_SENT, True)
        return None
