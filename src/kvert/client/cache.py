"""Shared informers read like a client: ``InformerCache(client, clock)``.

Components that look at every pod and VPA on every pass (the VPA recommender and updater)
read through an ``InformerCache`` instead of listing the API server each time, as upstream's
components read listers. ``await cache.get(resource, name, namespace)`` and
``await cache.list(resource, namespace=None)`` answer like ``Client.get``/``Client.list``
(``NotFound`` for a missing object) from one informer per resource, started on first use
and shared by everyone holding the cache. The objects are the caches' own: read them, never
change them (copy first).

A resource the server does not serve is probed once per request with a one-item list, so
``get`` raises the server's error instead of waiting for an informer that cannot sync.
"""

from __future__ import annotations

import asyncio
from typing import Any

from kvert.api.errors import NotFound
from kvert.client.informer import Informer
from kvert.clock import Clock


class InformerCache:
    def __init__(self, client: Any, clock: Clock) -> None:
        self.client = client
        self.clock = clock
        self._informers: dict[str, Informer] = {}
        self._tasks: dict[str, asyncio.Task] = {}
        self._starting: dict[str, asyncio.Future] = {}

    async def informer(self, resource: str) -> Informer:
        """The synced informer of ``resource`` (all namespaces), started on first use."""
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
        await self.client.list(resource, limit=1)        # raises when the resource is not served
        informer = Informer(self.client, resource, clock=self.clock)
        self._informers[resource] = informer
        self._tasks[resource] = asyncio.ensure_future(informer.run())
        await informer.wait_synced()
        return informer

    async def get(self, resource: str, name: str, namespace: str = "") -> dict:
        obj = (await self.informer(resource)).get(name, namespace or "")
        if obj is None:
            raise NotFound(resource, name)
        return obj

    async def list(self, resource: str, namespace: str | None = None) -> dict:
        items = (await self.informer(resource)).list()
        if namespace:
            items = [o for o in items if (o.get("metadata") or {}).get("namespace") == namespace]
        return {"items": items}

    def stop(self) -> None:
        for informer in self._informers.values():
            informer.stop()
        for task in self._tasks.values():
            task.cancel()
        for pending in self._starting.values():
            pending.cancel()


__all__ = ["InformerCache"]
