"""Watch streams over HTTP: one JSON event per line, as kube-apiserver writes them.

A watch from a compacted resourceVersion answers 200 and then one ERROR event carrying a
410 Expired Status (what client-go and kubectl expect), never silence. Idle streams get
BOOKMARK events when the client allowed them, and every stream ends after its timeout
(``timeoutSeconds``, or a random 30-60 minutes like kube-apiserver's default) so clients
re-establish watches and spread their load.

A client that stops reading is dropped, as the watch cache drops a cacheWatcher whose
buffer stays full: once the socket takes no more and more than ``MAX_PENDING`` events wait
for it, the connection is aborted and the buffered events are dropped (counted in
``apiserver_terminated_watchers_total``). The client re-watches from the last
resourceVersion it got and is replayed every later event (or told 410 Expired when that
version was compacted), as client-go's reflector does after a broken watch.
"""

from __future__ import annotations

import random
from collections import Counter
from typing import Any

from aiohttp import web

from kvert.api.errors import ApiError
from kvert.api.kinds import ResourceType
from kvert.apiserver import negotiation, options
from kvert.apiserver.requestinfo import RequestInfo
from kvert.apiserver.responses import encode_json
from kvert.apiserver.tables import to_table
from kvert.clock import Clock
from kvert.registry import Registry
from kvert.store.base import Watch

BOOKMARK_INTERVAL = 60.0
MIN_REQUEST_TIMEOUT = 1800
# Events that may wait for a stream whose client is not reading: the watch cache's largest
# channel for a watch that no index serves (maxWatchChanSizeWithoutIndex).
MAX_PENDING = 100


class WatchHub:
    """Serves watch requests and ends them all when the server stops."""

    def __init__(self, registry: Registry, clock: Clock):
        self.registry = registry
        self.clock = clock
        self._active: set[Watch] = set()
        self._random = random.Random()
        self.max_pending = MAX_PENDING
        # apiserver_terminated_watchers_total by (group, resource)
        self.terminated: Counter[tuple[str, str]] = Counter()

    def stop_all(self) -> None:
        for watch in list(self._active):
            watch.stop()

    async def serve(self, request: web.Request, rt: ResourceType, info: RequestInfo) -> web.StreamResponse:
        q = request.query
        opts = options.list_options(q, rt, watch=True)
        # timeoutSeconds bounds every watch: 0 (or none) is kube-apiserver's random 30-60
        # minutes, a negative one ends the stream at once.
        timeout = opts.timeout_seconds or MIN_REQUEST_TIMEOUT * (1 + self._random.random())
        field_selector = opts.field_selector
        if info.legacy_watch and info.name:
            field_selector = ",".join(filter(None, [field_selector, f"metadata.name={info.name}"]))
        send_initial = bool(opts.send_initial_events)
        allow_bookmarks = opts.allow_watch_bookmarks
        accept = negotiation.parse_accept(request.headers.get("Accept"))
        as_table = negotiation.wants(accept, "Table", "meta.k8s.io") is not None
        include_object = q.get("includeObject", "Metadata")
        if as_table:
            # an unknown includeObject is refused (406) before the stream starts, not in it
            to_table(rt, [], now=0, include_object=include_object)
        try:
            watch = self.registry.watch(
                info.key, namespace=info.namespace or None, label_selector=opts.label_selector,
                field_selector=field_selector, resource_version=opts.resource_version,
                send_initial_events=send_initial, allow_bookmarks=allow_bookmarks or send_initial)
        except ApiError as e:
            if e.code != 410:
                raise
            watch, expired = None, e
        response = web.StreamResponse(status=200, headers={
            "Content-Type": "application/json", "Cache-Control": "no-cache, private"})
        response.enable_chunked_encoding()
        await response.prepare(request)
        if watch is None:
            await _write(response, {"type": "ERROR", "object": expired.to_status()})
            return response
        self._active.add(watch)
        watch.bound(self.max_pending, lambda: self._terminate(request, rt))
        try:
            await self._pump(response, watch, rt, timeout, allow_bookmarks, as_table,
                             include_object)
        except (ConnectionResetError, ConnectionError):
            pass   # the client went away
        finally:
            self._active.discard(watch)
            watch.stop()
        return response

    def _terminate(self, request: web.Request, rt: ResourceType) -> None:
        """The client fell ``max_pending`` events behind with its socket full: cut it off
        (its transport's buffered bytes go too; the stream cannot be ended cleanly while
        a write is stuck)."""
        self.terminated[rt.group, rt.plural] += 1
        transport = request.transport
        if transport is not None:
            transport.abort()

    def terminated_samples(self) -> list[tuple[dict[str, str], float]]:
        return [({"group": group, "resource": resource}, n)
                for (group, resource), n in sorted(self.terminated.items())]

    async def _pump(self, response: web.StreamResponse, watch: Watch, rt: ResourceType,
                    timeout: float, allow_bookmarks: bool, as_table: bool,
                    include_object: str) -> None:
        clock = self.clock
        deadline = clock.now() + timeout
        idle_since = clock.now()
        first = True
        while not watch.stopped:
            left = deadline - clock.now()
            if left <= 0:
                return
            event = await watch.next(timeout=min(left, BOOKMARK_INTERVAL))
            if event is None:
                if watch.stopped:
                    return
                if allow_bookmarks and clock.now() - idle_since >= BOOKMARK_INTERVAL:
                    watch.bookmark()
                continue
            idle_since = clock.now()
            obj = event.object
            if as_table and event.type != "ERROR":
                items = [] if event.type == "BOOKMARK" else [obj]
                obj = to_table(rt, items, now=clock.now(), include_object=include_object,
                               resource_version=obj.get("metadata", {}).get("resourceVersion", ""),
                               with_columns=first)
                first = False
            # a write waits only while the socket takes no more: the watch is stalled
            watch.stalled = True
            try:
                await _write(response, {"type": event.type, "object": obj})
            finally:
                watch.stalled = False


async def _write(response: web.StreamResponse, event: dict[str, Any]) -> None:
    await response.write(encode_json(event))
