"""Shared informers: ``InformerFactory(client, clock)``, client-go's SharedInformerFactory.

One informer per resource, shared by everyone holding the factory. Two ways to use it:

* controllers register what they watch with ``informer(resource)`` (handlers, indexes),
  then ``start()`` and ``await wait_synced()``;
* components that look at every pod and VPA on every pass (the VPA recommender, updater and
  admission controller) read through it as through a client, instead of listing the API
  server each time, as upstream's components read listers: ``await factory.get(resource,
  name, namespace)`` and ``await factory.list(resource, namespace=None)`` answer like
  ``Client.get``/``Client.list`` (``NotFound`` for a missing object), starting the
  resource's informer on first use. The objects are the caches' own: read them, never
  change them (copy first).

Over an in-process client a read sees every write made before it, through any client (the
informer first applies the events its watch has queued, ``Informer.catch_up``), as reading
the registry would. Over HTTP a read may lag the server by the events still in flight, as a
client-go lister does: a write based on a cached object can then get 409 Conflict.

A resource the server does not serve is probed once per request with a one-item list, so
``get`` raises the server's error instead of waiting for an informer that cannot sync.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable

from kvert.api import kinds
from kvert.api.errors import NotFound
from kvert.api.types import Obj
from kvert.client.base import Client
from kvert.client.informer import Informer
from kvert.clock import Clock


class InformerFactory:
    def __init__(self, client: Client, clock: Clock, resync_period: float = 0.0) -> None:
        self.client = client
        self.clock = clock
        self.resync_period = resync_period
        self._informers: dict[str, Informer] = {}
        self._tasks: dict[str, asyncio.Task[None]] = {}
        self._starting: dict[str, asyncio.Future[Informer]] = {}

    # ---- controllers: register, start, wait ----------------------------------------------

    def informer(self, resource: str) -> Informer:
        """The (all-namespace) informer of ``resource``, created if needed, not started."""
        informer = self._informers.get(resource)
        if informer is None:
            informer = Informer(self.client, resource, clock=self.clock, resync_period=self.resync_period)
            self._informers[resource] = informer
        return informer

    def start(self) -> None:
        """Start every informer not yet running (idempotent)."""
        for resource, informer in self._informers.items():
            if resource not in self._tasks:
                self._tasks[resource] = asyncio.ensure_future(informer.run())

    async def wait_synced(self, informers: Iterable[Informer] | None = None) -> None:
        targets = list(informers) if informers is not None else list(self._informers.values())
        await asyncio.gather(*(i.wait_synced() for i in targets))

    # ---- readers: the caches as a client --------------------------------------------------

    async def synced(self, resource: str) -> Informer:
        """The synced informer of ``resource``, started on first use."""
        informer = self._informers.get(resource)
        if informer is not None and informer.synced.is_set():
            return informer
        pending = self._starting.get(resource)
        if pending is None:
            pending = self._starting[resource] = asyncio.ensure_future(self._start(resource))
        try:
            return await asyncio.shield(pending)
        finally:
            if pending.done():
                self._starting.pop(resource, None)

    async def _start(self, resource: str) -> Informer:
        if resource not in self._tasks:
            await self.client.list(resource, limit=1)    # raises when the resource is not served
        informer = self.informer(resource)
        self.start()
        await informer.wait_synced()
        return informer

    async def get(self, resource: str, name: str, namespace: str = "") -> Obj:
        informer = await self.synced(resource)
        informer.catch_up()
        obj = informer.get(name, (namespace or "") if _namespaced(resource) else "")
        if obj is None:
            raise NotFound(resource, name)
        return obj

    async def list(self, resource: str, namespace: str | None = None) -> Obj:
        """The objects in the server's order (namespace, then name); ``namespace`` is
        ignored for a cluster-scoped resource, as the server ignores it."""
        informer = await self.synced(resource)
        informer.catch_up()
        items = informer.list()
        if namespace and _namespaced(resource):
            items = [o for o in items if (o.get("metadata") or {}).get("namespace") == namespace]
        items.sort(key=_order)
        return {"items": items}

    def stop(self) -> None:
        for informer in self._informers.values():
            informer.stop()
        for task in self._tasks.values():
            task.cancel()
        self._tasks.clear()
        for pending in self._starting.values():
            pending.cancel()


def _namespaced(resource: str) -> bool:
    try:
        return kinds.by_key(resource).namespaced
    except KeyError:
        return True


def _order(obj: Obj) -> tuple[str, str]:
    meta = obj.get("metadata") or {}
    return meta.get("namespace") or "", meta.get("name") or ""


__all__ = ["InformerFactory"]
