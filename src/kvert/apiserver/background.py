"""The API server's periodic work, as components a supervisor runs.

Each is a ``kvert.clock.component.Component`` (``async run()`` that returns once stopped,
``stop()``), as the supervisor of ``kvert up`` runs them. ``run()`` lets every unexpected
exception out, so the supervisor that runs it sees the crash.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine
from typing import Any

from kvert.api.errors import ApiError
from kvert.apiserver.admission import recalculate_quota_usage
from kvert.clock import Clock, sleep_unless
from kvert.store.base import Store

log = logging.getLogger(__name__)


class _Periodic:
    """Something done every ``interval`` seconds of ``clock``'s time until ``stop()``."""

    def __init__(self, clock: Clock, interval: float) -> None:
        self.clock = clock
        self.interval = interval
        self._stopping = asyncio.Event()

    def stop(self) -> None:
        self._stopping.set()

    async def _wait_interval(self) -> bool:
        """Wait one interval; False once stopped."""
        await sleep_unless(self.clock, self.interval, self._stopping)
        return not self._stopping.is_set()


class HistoryCompaction(_Periodic):
    """Forgets history as kube-apiserver does: at start (its watch cache begins empty, so a
    watch from an older version is answered 410 Expired; not on a store other servers
    share, ``at_start=False``), then every ``interval`` seconds up to the revision seen one
    interval earlier (its etcd compaction)."""

    def __init__(self, store: Store, clock: Clock, interval: float, *, at_start: bool = True) -> None:
        super().__init__(clock, interval)
        self.store = store
        self.at_start = at_start

    async def run(self) -> None:
        mark = self.store.current_revision()
        if self.at_start:
            self.store.compact(mark)
        while await self._wait_interval():
            self.store.compact(mark)
            mark = self.store.current_revision()


class QuotaResync(_Periodic):
    """The ResourceQuota controller's periodic sync: usage released by pods that shrank or
    went away is recomputed from the live pods. A sync the API refuses is logged and tried
    again on the next interval, as the controller does; anything else ends ``run()``."""

    def __init__(self, store: Store, clock: Clock, interval: float) -> None:
        super().__init__(clock, interval)
        self.store = store

    async def run(self) -> None:
        while await self._wait_interval():
            try:
                recalculate_quota_usage(self.store, clock=self.clock)
            except ApiError as e:
                log.warning("quota resync failed: %s", e)


class CoroutineComponent:
    """A coroutine (e.g. some ``run()`` of a loop without ``stop()``) as a component:
    stopping it cancels the coroutine, and its exceptions leave ``run()``."""

    def __init__(self, coro: Coroutine[Any, Any, Any]) -> None:
        self._coro = coro
        self._task: asyncio.Task[Any] | None = None
        self._stopped = False

    async def run(self) -> None:
        if self._stopped:
            self._coro.close()      # never started: nothing to cancel, no "never awaited"
            return
        self._task = asyncio.ensure_future(self._coro)
        try:
            await self._task
        except asyncio.CancelledError:
            if not self._stopped:
                raise               # cancelled from outside, not by stop()

    def stop(self) -> None:
        self._stopped = True
        if self._task is not None:
            self._task.cancel()
