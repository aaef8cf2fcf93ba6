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

from kvert.api.errors import ApiError, Expired
from kvert.api.meta import name_of, namespace_of
from kvert.api.types import Obj
from kvert.client.base import Client, WatchStream
from kvert.clock import Clock
from kvert.store.base import WatchEvent

log = logging.getLogger(__name__)

# on_add(obj), on_update(old, new), on_delete(obj); what a handler returns is ignored.
Handler = Callable[..., object]
AddHandler = Callable[[Obj], object]
UpdateHandler = Callable[[Obj, Obj], object]
DeleteHandler = Callable[[Obj], object]
IndexFunc = Callable[[Obj], Iterable[str]]
Key = tuple[str, str]   # (namespace, name)
Objects = list[Obj]     # (``list`` names the informer's method inside its class)
_LIST_PAGE = 500
_RETRY_SECONDS = 1.0
_WATCH_POLL_SECONDS = 60.0


def _key(obj: Obj) -> Key:
    return namespace_of(obj), name_of(obj)


def _rv(obj: Obj) -> str:
    rv: str = (obj.get("metadata") or {}).get("resourceVersion", "")
    return rv


class Registration:
    """One ``add_handlers`` call, as client-go's ``ResourceEventHandlerRegistration``:
    whether its handlers have been handed the informer's initial list, and how to take them
    off the informer."""

    __slots__ = ("_informer", "on_add", "on_update", "on_delete", "active", "_synced")

    def __init__(self, informer: Informer, on_add: AddHandler | None,
                 on_update: UpdateHandler | None, on_delete: DeleteHandler | None) -> None:
        self._informer = informer
        self.on_add = on_add
        self.on_update = on_update
        self.on_delete = on_delete
        self.active = True
        self._synced = False

    def has_synced(self) -> bool:
        """True once the handlers have been handed every object of the informer's first
        list (at once for handlers added after it: the cache is replayed to them)."""
        return self._synced

    def remove(self) -> None:
        """The handlers get no more events (not even one being delivered right now)."""
        if self.active:
            self.active = False
            self._informer._remove_registration(self)

    def __repr__(self) -> str:
        return (f"Registration({self._informer.resource!r}, synced={self._synced}, "
                f"active={self.active})")


class Informer:
    def __init__(self, client: Client, resource: str, *, clock: Clock, namespace: str | None = None,
                 label_selector: str = "", field_selector: str = "",
                 resync_period: float = 0.0) -> None:
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
        self._cache: dict[Key, Obj] = {}
        # replaced, never changed in place, when a registration is removed: a delivery under
        # way goes on over the list it started with (and skips the inactive registration)
        self._handlers: list[Registration] = []
        self._indexers: dict[str, IndexFunc] = {}
        self._indexes: dict[str, dict[str, set[Key]]] = {}
        self._stopped = False
        self._watch: WatchStream | None = None

    # ---- registration ----------------------------------------------------------

    def add_handlers(self, on_add: AddHandler | None = None, on_update: UpdateHandler | None = None,
                     on_delete: DeleteHandler | None = None) -> Registration:
        """``on_add(obj)``, ``on_update(old, new)``, ``on_delete(obj)``; objects already in the
        cache are replayed to a late handler as adds. The registration tells when the
        handlers have seen the initial list, and removes them."""
        reg = Registration(self, on_add, on_update, on_delete)
        self._handlers.append(reg)
        if on_add is not None:
            for obj in list(self._cache.values()):
                if not reg.active:
                    break
                self._call(on_add, obj)
        if self.synced.is_set():
            reg._synced = True
        return reg

    def _remove_registration(self, reg: Registration) -> None:
        self._handlers = [r for r in self._handlers if r is not reg]

    def add_index(self, name: str, index_fn: IndexFunc) -> None:
        """Index cached objects by the values ``index_fn`` returns (e.g. pods by node name)."""
        self._indexers[name] = index_fn
        index: dict[str, set[Key]] = {}
        for key, obj in self._cache.items():
            for value in index_fn(obj):
                index.setdefault(value, set()).add(key)
        self._indexes[name] = index

    def has_index(self, name: str) -> bool:
        return name in self._indexers

    # ---- reading the cache -----------------------------------------------------

    def get(self, name: str, namespace: str = "") -> Obj | None:
        return self._cache.get((namespace, name))

    def list(self) -> list[Obj]:
        return list(self._cache.values())

    def by_index(self, name: str, value: str) -> Objects:
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
        # the store's watches buffer what they received; WatchStream does not promise it
        pending = getattr(watch, "pending", None)
        get_nowait = getattr(watch, "get_nowait", None)
        if watch is None or not callable(pending) or not pending() or get_nowait is None:
            return
        events: list[WatchEvent] = get_nowait()
        for event in events:
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
        items: list[Obj] = []
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
        for reg in self._handlers:
            reg._synced = True
        self.synced.set()

    async def _watch_once(self) -> None:
        self._watch = watch = await self.client.watch(
            self.resource, namespace=self.namespace, label_selector=self.label_selector,
            field_selector=self.field_selector, resource_version=self.resource_version,
            allow_bookmarks=True)
        # the store's watches wake when stopped; a stream's (HTTP) is polled
        poll: float | None = getattr(watch, "poll_seconds", _WATCH_POLL_SECONDS)
        try:
            while not self._stopped:
                event = await watch.next(timeout=poll)
                if event is None:
                    if getattr(watch, "stopped", False):
                        return
                    continue
                if event.type == "ERROR":
                    # e.g. 410 when the store lost the history this watch needed
                    raise ApiError.from_status(event.object)
                self._apply(event.type, event.object)
        finally:
            watch.stop()
            self._watch = None

    async def _resync_loop(self) -> None:
        while not self._stopped:
            await self.clock.sleep(self.resync_period)
            for obj in list(self._cache.values()):
                for reg in self._handlers:
                    if reg.on_update is not None and reg.active:
                        self._call(reg.on_update, obj, obj)

    # ---- applying changes ------------------------------------------------------

    def _apply(self, kind: str, obj: Obj) -> None:
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

    def _replace(self, items: Objects) -> None:
        fresh = {_key(obj): obj for obj in items}
        for key in [k for k in self._cache if k not in fresh]:
            old = self._cache[key]
            self._remove(key, old)
            self._notify_delete(old)
        for key, obj in fresh.items():
            cached = self._cache.get(key)
            if cached is not None and _rv(cached) == _rv(obj):
                continue
            self._store(key, obj, cached)
            if cached is None:
                self._notify_add(obj)
            else:
                self._notify_update(cached, obj)

    def _store(self, key: Key, obj: Obj, old: Obj | None) -> None:
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

    def _remove(self, key: Key, old: Obj) -> None:
        self._unindex(key, old)
        del self._cache[key]

    def _unindex(self, key: Key, obj: Obj) -> None:
        for name, fn in self._indexers.items():
            self._unindex_values(name, key, fn(obj))

    def _unindex_values(self, name: str, key: Key, values: Iterable[str]) -> None:
        index = self._indexes[name]
        for value in values:
            bucket = index.get(value)
            if bucket is not None:
                bucket.discard(key)
                if not bucket:
                    del index[value]

    def _notify_add(self, obj: Obj) -> None:
        for reg in self._handlers:
            if reg.on_add is not None and reg.active:
                self._call(reg.on_add, obj)

    def _notify_update(self, old: Obj, new: Obj) -> None:
        for reg in self._handlers:
            if reg.on_update is not None and reg.active:
                self._call(reg.on_update, old, new)

    def _notify_delete(self, obj: Obj) -> None:
        for reg in self._handlers:
            if reg.on_delete is not None and reg.active:
                self._call(reg.on_delete, obj)

    def _call(self, handler: Handler, *args: Obj) -> None:
        # A failing handler must not stop the cache from following the server.
        try:
            handler(*args)
        except Exception:
            log.exception("%s: informer handler %r failed", self.resource, handler)
