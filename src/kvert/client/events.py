"""Events: how every component tells users what it decided (``kubectl describe``, ``get events``).

``EventRecorder.record(obj, "Warning", "FailedScheduling", "0/3 nodes are available: ...")``
writes a core/v1 Event about ``obj``. A repeat of the same (object, type, reason, message)
within the series window bumps ``count`` and ``lastTimestamp`` of the existing Event
instead of writing a new one, as client-go's event correlator does, so a pod retried every
few seconds does not flood the store. As client-go, the recorder keeps the count itself and
patches the event: it needs only create and patch on events (upstream's events rule).
"""

from __future__ import annotations

import logging
from typing import Any

from kvert.api.errors import ApiError, NotFound
from kvert.api.meta import format_micro_time, format_time
from kvert.clock import Clock

log = logging.getLogger(__name__)

SERIES_WINDOW_SECONDS = 600.0
_MAX_MESSAGE = 1024


class EventRecorder:
    def __init__(self, client: Any, clock: Clock, component: str, host: str = ""):
        self.client = client
        self.clock = clock
        self.component = component
        self.host = host
        # key -> (namespace, name, time, count)
        self._recent: dict[tuple, tuple[str, str, float, int]] = {}
        self._sequence = 0

    async def record(self, obj: dict, type_: str, reason: str, message: str,
                     annotations: dict[str, str] | None = None) -> None:
        """Write (or bump) an event; never raises: an event is worth less than the work.
        ``annotations`` go on the event's metadata (client-go's ``AnnotatedEventf``)."""
        meta = obj.get("metadata") or {}
        namespace = meta.get("namespace") or "default"
        message = message[:_MAX_MESSAGE]
        key = (obj.get("kind"), namespace, meta.get("name"), meta.get("uid"), type_, reason, message)
        now = self.clock.now()
        try:
            previous = self._recent.get(key)
            if previous is not None and now - previous[2] < SERIES_WINDOW_SECONDS:
                namespace_, name_, _, count = previous
                if await self._bump(namespace_, name_, count + 1, now):
                    self._recent[key] = (namespace_, name_, now, count + 1)
                    return
            name = f"{meta.get('name', 'unknown')}.{self._next_suffix(now)}"
            event = {
                "apiVersion": "v1", "kind": "Event",
                "metadata": {"name": name, "namespace": namespace,
                             **({"annotations": dict(annotations)} if annotations else {})},
                "involvedObject": {k: v for k, v in {
                    "apiVersion": obj.get("apiVersion"), "kind": obj.get("kind"),
                    "name": meta.get("name"), "namespace": meta.get("namespace"),
                    "uid": meta.get("uid"), "resourceVersion": meta.get("resourceVersion"),
                }.items() if v},
                "reason": reason, "message": message, "type": type_, "count": 1,
                "firstTimestamp": format_time(now), "lastTimestamp": format_time(now),
                "eventTime": format_micro_time(now),
                "source": {k: v for k, v in {"component": self.component, "host": self.host}.items() if v},
                "reportingComponent": self.component, "reportingInstance": self.host or self.component,
                "action": reason,
            }
            await self.client.create("events", event, namespace=namespace)
            self._recent[key] = (namespace, name, now, 1)
        except ApiError as e:
            log.debug("event %s/%s not recorded: %s", reason, meta.get("name"), e)

    async def _bump(self, namespace: str, name: str, count: int, now: float) -> bool:
        try:
            await self.client.patch("events", name, {"count": count, "lastTimestamp": format_time(now)},
                                    "merge", namespace=namespace)
        except NotFound:
            return False
        return True

    def _next_suffix(self, now: float) -> str:
        # client-go names events NAME.<hex unix nanoseconds>; a sequence keeps them unique
        # when virtual time stands still.
        self._sequence += 1
        return f"{int(now * 1e9) + self._sequence:x}"
