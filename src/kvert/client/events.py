"""Events: how every component tells users what it decided (``kubectl describe``, ``get events``).

``EventRecorder.record(obj, "Warning", "FailedScheduling", "0/3 nodes are available: ...")``
writes a core/v1 Event about ``obj``, correlated as client-go's ``EventCorrelator``
(``tools/record/events_cache.go``) does, so a component retrying every few seconds does not
flood the store:

* a repeat of the same (object, type, reason, message) within the series window bumps
  ``count`` and ``lastTimestamp`` of the existing Event instead of writing a new one;
* similar events (same object, type and reason, another message): once ten different
  messages were seen within ten minutes, the next ones go to one Event whose message is
  ``(combined from similar events): <latest message>``, bumped like a repeat;
* a spam filter per object: a token bucket of 25 that refills one token every five minutes;
  an event that finds it empty is not written (a repeat still counts it, as upstream).

As client-go, the recorder keeps the count itself and patches the event: it needs only create
and patch on events (upstream's events rule). Its caches keep the 4096 most recent keys.
"""

from __future__ import annotations

import logging
from collections import OrderedDict
from typing import TypeVar

from kvert.api.errors import ApiError, NotFound
from kvert.api.meta import format_micro_time, format_time
from kvert.api.types import Obj
from kvert.client.base import Client
from kvert.clock import Clock

log = logging.getLogger(__name__)

SERIES_WINDOW_SECONDS = 600.0
# client-go's defaults (events_cache.go): defaultAggregateMaxEvents,
# defaultAggregateIntervalInSeconds, defaultSpamBurst, defaultSpamQPS, maxLruCacheEntries
AGGREGATE_MAX_EVENTS = 10
AGGREGATE_WINDOW_SECONDS = 600.0
SPAM_BURST = 25
SPAM_REFILL_SECONDS = 300.0
CACHE_ENTRIES = 4096
COMBINED_PREFIX = "(combined from similar events): "
_MAX_MESSAGE = 1024
_COMBINED = object()   # in place of the message: the key of an object's combined event

# (apiVersion, kind, namespace, name, uid) of the object an event is about, then its type and
# reason, then (for an event's own key) its message or _COMBINED
EventKey = tuple[object, ...]

K = TypeVar("K")
V = TypeVar("V")


class _Lru(OrderedDict[K, V]):
    """A dict that forgets its least recently set keys beyond ``CACHE_ENTRIES``."""

    def put(self, key: K, value: V) -> None:
        self[key] = value
        self.move_to_end(key)
        if len(self) > CACHE_ENTRIES:
            self.popitem(last=False)


class EventRecorder:
    def __init__(self, client: Client, clock: Clock, component: str, host: str = "") -> None:
        self.client = client
        self.clock = clock
        self.component = component
        self.host = host
        # event key -> (namespace, name, time written, count)
        self._recent: _Lru[EventKey, tuple[str, str, float, int]] = _Lru()
        # (object, type, reason) -> (messages seen, last time)
        self._similar: _Lru[EventKey, tuple[set[str], float | None]] = _Lru()
        # object -> (tokens, time)
        self._spam: _Lru[EventKey, tuple[float, float]] = _Lru()
        self._sequence = 0

    async def record(self, obj: Obj, type_: str, reason: str, message: str,
                     annotations: dict[str, str] | None = None) -> None:
        """Write (or bump) an event; never raises: an event is worth less than the work.
        ``annotations`` go on the event's metadata (client-go's ``AnnotatedEventf``)."""
        meta = obj.get("metadata") or {}
        namespace = meta.get("namespace") or "default"
        message = message[:_MAX_MESSAGE]
        subject = (obj.get("apiVersion"), obj.get("kind"), namespace, meta.get("name"),
                   meta.get("uid"))
        now = self.clock.now()
        message, key = self._aggregate(subject + (type_, reason), message, now)
        previous = self._recent.get(key)
        if previous is not None and now - previous[2] >= SERIES_WINDOW_SECONDS:
            previous = None
        if not self._allowed(subject, now):
            if previous is not None:
                self._recent.put(key, previous[:3] + (previous[3] + 1,))
            return
        try:
            if previous is not None:
                namespace_, name_, _, count = previous
                if await self._bump(namespace_, name_, count + 1, message, now):
                    self._recent.put(key, (namespace_, name_, now, count + 1))
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
            self._recent.put(key, (namespace, name, now, 1))
        except ApiError as e:
            log.debug("event %s/%s not recorded: %s", reason, meta.get("name"), e)

    def _aggregate(self, similar: EventKey, message: str, now: float) -> tuple[str, EventKey]:
        """``EventAggregate``: the message to write and the key of the event it goes to.
        Below the threshold an event is its own; from it on, one combined event per
        (object, type, reason) takes every message."""
        seen, last = self._similar.get(similar, (set(), None))
        if last is None or now - last > AGGREGATE_WINDOW_SECONDS:
            seen = set()
        seen.add(message)
        self._similar.put(similar, (seen, now))
        if len(seen) < AGGREGATE_MAX_EVENTS:
            return message, similar + (message,)
        seen.pop()   # the set never grows past the threshold (upstream's PopAny)
        return COMBINED_PREFIX + message, similar + (_COMBINED,)

    def _allowed(self, subject: EventKey, now: float) -> bool:
        """``EventSourceObjectSpamFilter``: one token per event from this object's bucket."""
        tokens, last = self._spam.get(subject, (float(SPAM_BURST), now))
        tokens = min(float(SPAM_BURST), tokens + (now - last) / SPAM_REFILL_SECONDS)
        allowed = tokens >= 1.0
        self._spam.put(subject, (tokens - 1.0 if allowed else tokens, now))
        return allowed

    async def _bump(self, namespace: str, name: str, count: int, message: str, now: float) -> bool:
        # as client-go's patch: count, lastTimestamp and message (a combined event's changes)
        try:
            await self.client.patch("events", name, {"count": count, "message": message,
                                                     "lastTimestamp": format_time(now)},
                                    "merge", namespace=namespace)
        except NotFound:
            return False
        return True

    def _next_suffix(self, now: float) -> str:
        # client-go names events NAME.<hex unix nanoseconds>; a sequence keeps them unique
        # when virtual time stands still.
        self._sequence += 1
        return f"{int(now * 1e9) + self._sequence:x}"
