"""Informers: a watch-fed local cache of one resource, with handlers, indexes and resync.

An informer lists, then watches from the list's resourceVersion, applying every event
to its cache before calling handlers. If the watch's version has been compacted away
(410 Expired) it lists again and turns the difference into add/update/delete calls, so
a handler never misses a change of state (it may miss intermediate states, as with
client-go). Components read the cache instead of the API server.

Cached objects (and those handed to handlers) are shared: with every handler, and over an
in-process client with the informers of every other component (the store hands the
watches following a write one decoded object). Read them; copy before changing.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterable
from typing import Any

from kvert.api.errors import ApiError, Expired
from kvert.api.meta import name_of, namespace_of
from kvert.clock import Clock

log = logging.getLogger(__name__)

Handler = Callable[..., Any]
_LIST_PAGE = 500
_RETRY_SECONDS = 1.0
_WATCH_POLL_SECONDS = 60.0


def _key(obj: dict) -> tuple[str, str]:
    return namespace_of(obj), name_of(obj)


def _rv(obj: dict) -> str:
    return (obj.get("metadata") or {}).get("resourceVersion", "")


class Informer:
    def __init__(self, client: Any, resource: str, *, clock: Clock, namespace: str | None = None,
                 label_selector: str = "", field_selector: str = "", resync_period: float = 0.0):
        self.client = client
        self.resource = resource
        self.clock = clock
        self.namespace = namespace
        self.label_selector = label_selector
        self.field_selector = field_selector
        self.resync_period = resync_period
        self.resource_version = ""
        self.synced = asyncio.Event()
        self.relists = 0
        self._cache: dict[tuple[str, str], dict] = {}
        self._handlers: list[tuple[Handler | None, Handler | None, Handler | None]] = []
        self._indexers: dict[str, Callable[[dict], Iterable[str]]] = {}
        self._indexes: dict[str, dict[str, set[tuple[str, str]]]] = {}
        self._stopped = False
        self._watch: Any = None

    # ---- registration ----------------------------------------------------------

    def add_handlers(self, on_add: Handler | None = None, on_update: Handler | None = None,
                     on_delete: Handler | None = None) -> None:
        """``on_add(obj)``, ``on_update(old, new)``, ``on_delete(obj)``; objects already in the
        cache are replayed to a late handler as adds."""
        self._handlers.append((on_add, on_update, on_delete))
        if on_add is not None:
            for obj in list(self._cache.values()):
                self._call(on_add, obj)

    def add_index(self, name: str, index_fn: Callable[[dict], Iterable[str]]) -> None:
        """Index cached objects by the values ``index_fn`` returns (e.g. pods by node name)."""
        self._indexers[name] = index_fn
        index: dict[str, set[tuple[str, str]]] = {}
        for key, obj in self._cache.items():
            for value in index_fn(obj):
                index.setdefault(value, set()).add(key)
        self._indexes[name] = index

    def has_index(self, name: str) -> bool:
        return name in self._indexers

    # ---- reading the cache -----------------------------------------------------

    def get(self, name: str, namespace: str = "") -> dict | None:
        return self._cache.get((namespace, name))

    def list(self) -> list[dict]:
        return list(self._cache.values())

    def by_index(self, name: str, value: str) -> list[dict]:
        return [self._cache[k] for k in sorted(self._indexes[name].get(value, ()))]

    def __len__(self) -> int:
        return len(self._cache)

    async def wait_synced(self) -> None:
        await self.synced.wait()

    def catch_up(self) -> None:
        """Apply at once the events the watch has already received but this informer's task
        has not yet taken: an in-process watch queues them as the store is written, so a read
        right after a write (through any client) sees it. Over HTTP this does nothing (events
        still in flight cannot be seen)."""
        watch = self._watch
        if watch is None or not callable(getattr(watch, "pending", None)) or not watch.pending():
            return
        for event in watch.get_nowait():
            if event.type == "ERROR":
                # let run() deal with it: a new watch from our version (or a new list)
                watch.stop()
                return
            self._apply(event.type, event.object)

    # ---- running ---------------------------------------------------------------

    def stop(self) -> None:
        self._stopped = True
        if self._watch is not None:
            self._watch.stop()

    async def run(self) -> None:
        """List and watch until stopped; start it as a task."""
        resync = asyncio.ensure_future(self._resync_loop()) if self.resync_period > 0 else None
        need_list = True
        try:
            while not self._stopped:
                try:
                    if need_list:
                        await self._relist()
                        need_list = False
                    await self._watch_once()
                except Expired:
                    log.info("%s: watch from %s expired; listing again", self.resource,
                             self.resource_version)
                    need_list = True
                except (ApiError, OSError) as e:
                    log.warning("%s: list/watch failed (%s); retrying", self.resource, e)
                    await self.clock.sleep(_RETRY_SECONDS)
        finally:
            if resync is not None:
                resync.cancel()

    async def _relist(self) -> None:
        items: list[dict] = []
        token, version = "", ""
        while True:
            page = await self.client.list(self.resource, namespace=self.namespace,
                                          label_selector=self.label_selector,
                                          field_selector=self.field_selector,
                                          limit=_LIST_PAGE, continue_token=token)
            items.extend(page.get("items") or [])
            meta = page.get("metadata") or {}
            version = version or meta.get("resourceVersion", "")
            token = meta.get("continue", "")
            if not token:
                break
        self.relists += 1
        self._replace(items)
        self.resource_version = version
        self.synced.set()

    async def _watch_once(self) -> None:
        self._watch = await self.client.watch(
            self.resource, namespace=self.namespace, label_selector=self.label_selector,
            field_selector=self.field_selector, resource_version=self.resource_version,
            allow_bookmarks=True)
        # the store's watches wake when stopped; a stream's (HTTP) is polled
        poll = getattr(self._watch, "poll_seconds", _WATCH_POLL_SECONDS)
        try:
            while not self._stopped:
                event = await self._watch.next(timeout=poll)
                if event is None:
                    if getattr(self._watch, "stopped", False):
                        return
                    continue
                if event.type == "ERROR":
                    # e.g. 410 when the store lost the history this watch needed
                    raise ApiError.from_status(event.object)
                self._apply(event.type, event.object)
        finally:
            self._watch.stop()
            self._watch = None

    async def _resync_loop(self) -> None:
        while not self._stopped:
            await self.clock.sleep(self.resync_period)
            for obj in list(self._cache.values()):
                for _, on_update, _ in self._handlers:
                    if on_update is not None:
                        self._call(on_update, obj, obj)

    # ---- applying changes ------------------------------------------------------

    def _apply(self, kind: str, obj: dict) -> None:
        rv = _rv(obj)
        if rv:
            self.resource_version = rv
        if kind == "BOOKMARK":
            return
        key = _key(obj)
        old = self._cache.get(key)
        if kind == "DELETED":
            if old is not None:
                self._remove(key, old)
                self._notify_delete(obj)
            return
        self._store(key, obj, old)
        if old is None:
            self._notify_add(obj)
        else:
            self._notify_update(old, obj)

    def _replace(self, items: list[dict]) -> None:
        fresh = {_key(obj): obj for obj in items}
        for key in [k for k in self._cache if k not in fresh]:
            old = self._cache[key]
            self._remove(key, old)
            self._notify_delete(old)
        for key, obj in fresh.items():
            old = self._cache.get(key)
            if old is not None and _rv(old) == _rv(obj):
                continue
            self._store(key, obj, old)
            if old is None:
                self._notify_add(obj)
            else:
                self._notify_update(old, obj)

    def _store(self, key: tuple[str, str], obj: dict, old: dict | None) -> None:
        self._cache[key] = obj
        for name, fn in self._indexers.items():
            values = fn(obj)
            if old is not None:
                before = fn(old)
                if before == values:      # most updates (a status) move no index entry
                    continue
                self._unindex_values(name, key, before)
            index = self._indexes[name]
            for value in values:
                index.setdefault(value, set()).add(key)

    def _remove(self, key: tuple[str, str], old: dict) -> None:
        self._unindex(key, old)
        del self._cache[key]

    def _unindex(self, key: tuple[str, str], obj: dict) -> None:
        for name, fn in self._indexers.items():
            self._unindex_values(name, key, fn(obj))

    def _unindex_values(self, name: str, key: tuple[str, str], values: Iterable[str]) -> None:
        index = self._indexes[name]
        for value in values:
            bucket = index.get(value)
            if bucket is not None:
                bucket.discard(key)
                if not bucket:
                    del index[value]

    def _notify_add(self, obj: dict) -> None:
        for on_add, _, _ in self._handlers:
            if on_add is not None:
                self._call(on_add, obj)

    def _notify_update(self, old: dict, new: dict) -> None:
        for _, on_update, _ in self._handlers:
            if on_update is not None:
                self._call(on_update, old, new)

    def _notify_delete(self, obj: dict) -> None:
        for _, _, on_delete in self._handlers:
            if on_delete is not None:
                self._call(on_delete, obj)

    def _call(self, handler: Handler, *args: dict) -> None:
        # A failing handler must not stop the cache from following the server.
        try:
            handler(*args)
        except Exception:
            log.exception("%s: informer handler %r failed", self.resource, handler)
