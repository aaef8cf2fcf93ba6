"""What every controller shares: a work queue of keys, shared informers, expectations, workers.

A controller is level-triggered: informer handlers only *enqueue keys* (``ns/name``), and a
worker's ``sync(key)`` reads the current state from the informer caches, compares it with
the desired state and acts. Nothing a sync needs lives only in memory, so a controller can
be stopped (or killed) at any moment and a new one, after its informers have listed the
store again, carries on without losing or repeating work (DESIGN principle 3).

The queue follows client-go's ``workqueue``:

- a key is queued at most once (dedup) and never handed to two workers at once: a key
  added while it is being processed is queued again when the worker calls ``done``;
- ``add_after`` delays a key (on the controller's Clock, so virtual time works);
- ``add_rate_limited`` retries a failed key with client-go's default controller rate
  limiter: the larger of a per-key exponential back-off (5 ms, doubling, capped at
  1000 s) and an overall token bucket (10 per second, burst 100); ``forget`` resets the
  key's back-off after a successful sync.

``Expectations`` are client-go's ControllerExpectations: after a controller creates or
deletes pods it waits until its informer has observed those writes before it syncs the
same key again (or until 5 minutes pass), so a stale cache never makes it create or
delete twice. They are deliberately in memory only: a restarted controller starts with
none and, since workers only start once the caches have listed the store, it sees every
pod its predecessor made.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import Callable, Hashable, Iterable
from dataclasses import dataclass, field
from typing import Any

from kvert.api.errors import ApiError
from kvert.client import Informer
from kvert.client.base import Client
from kvert.client.cache import InformerFactory
from kvert.clock import Clock

log = logging.getLogger(__name__)

# client-go's DefaultControllerRateLimiter
BASE_DELAY = 0.005
MAX_DELAY = 1000.0
BUCKET_QPS = 10.0
BUCKET_BURST = 100

# client-go's ExpectationsTimeout
EXPECTATIONS_TIMEOUT = 300.0

# Index names shared by controllers on shared informers (same name => same function).
NAMESPACE_INDEX = "namespace"
CONTROLLER_INDEX = "controller-uid"
OWNER_INDEX = "owner-uid"
ORPHAN_INDEX = "orphans-by-namespace"


def index_namespace(obj: dict) -> list[str]:
    return [(obj.get("metadata") or {}).get("namespace", "") or ""]


def index_controller_uid(obj: dict) -> list[str]:
    ref = controller_ref_of(obj)
    return [ref["uid"]] if ref and ref.get("uid") else []


def index_orphan_namespace(obj: dict) -> list[str]:
    """Objects without a controller, by namespace: the candidates for adoption."""
    if controller_ref_of(obj) is not None:
        return []
    return [(obj.get("metadata") or {}).get("namespace", "") or ""]


def index_owner_uids(obj: dict) -> list[str]:
    return [ref["uid"] for ref in (obj.get("metadata") or {}).get("ownerReferences") or []
            if isinstance(ref, dict) and ref.get("uid")]


def controller_ref_of(obj: dict) -> dict | None:
    """The ownerReference with ``controller: true`` (``metav1.GetControllerOf``)."""
    for ref in (obj.get("metadata") or {}).get("ownerReferences") or []:
        if isinstance(ref, dict) and ref.get("controller") is True:
            return ref
    return None


def object_key(obj: dict) -> str:
    """``namespace/name`` (``cache.MetaNamespaceKeyFunc``)."""
    meta = obj.get("metadata") or {}
    ns = meta.get("namespace") or ""
    return f"{ns}/{meta.get('name', '')}" if ns else meta.get("name", "")


class SyncError(Exception):
    """A sync that cannot complete for a known reason: logged without a traceback, retried."""


def split_key(key: str) -> tuple[str, str]:
    ns, _, name = key.rpartition("/")
    return ns, name


# ---- rate limiting and the work queue -------------------------------------------------


class RateLimiter:
    """The larger of a per-item exponential back-off and an overall token bucket."""

    def __init__(self, clock: Clock, base_delay: float = BASE_DELAY, max_delay: float = MAX_DELAY,
                 qps: float = BUCKET_QPS, burst: int = BUCKET_BURST):
        self.clock = clock
        self.base_delay = base_delay
        self.max_delay = max_delay
        self.qps = qps
        self.burst = burst
        self._failures: dict[Hashable, int] = {}
        self._tokens = float(burst)
        self._last: float | None = None

    def when(self, item: Hashable) -> float:
        failures = self._failures.get(item, 0)
        self._failures[item] = failures + 1
        backoff = self.max_delay if failures > 60 else min(self.max_delay,
                                                             self.base_delay * 2 ** failures)
        return max(backoff, self._bucket_delay())

    def _bucket_delay(self) -> float:
        if self.qps <= 0:
            return 0.0
        now = self.clock.now()
        if self._last is not None:
            self._tokens = min(float(self.burst), self._tokens + (now - self._last) * self.qps)
        self._last = now
        self._tokens -= 1.0
        return max(0.0, -self._tokens / self.qps)

    def forget(self, item: Hashable) -> None:
        self._failures.pop(item, None)

    def num_requeues(self, item: Hashable) -> int:
        return self._failures.get(item, 0)


class WorkQueue:
    """A deduplicating, delaying, rate-limited queue of keys (client-go's workqueue)."""

    def __init__(self, clock: Clock, rate_limiter: RateLimiter | None = None, name: str = ""):
        self.clock = clock
        self.name = name
        self.rate_limiter = rate_limiter or RateLimiter(clock)
        self._queue: deque[Hashable] = deque()
        self._dirty: set[Hashable] = set()
        self._processing: set[Hashable] = set()
        self._wakeup = asyncio.Event()
        self._shutting_down = False
        self._timers: dict[Hashable, tuple[float, asyncio.Task]] = {}

    def __len__(self) -> int:
        return len(self._queue)

    @property
    def shutting_down(self) -> bool:
        return self._shutting_down

    def add(self, key: Hashable) -> None:
        if self._shutting_down or key in self._dirty:
            return
        self._dirty.add(key)
        if key in self._processing:
            return  # queued again by done()
        self._queue.append(key)
        self._wakeup.set()

    def add_after(self, key: Hashable, delay: float) -> None:
        if self._shutting_down:
            return
        if delay <= 0:
            self.add(key)
            return
        ready = self.clock.now() + delay
        pending = self._timers.get(key)
        if pending is not None:
            if pending[0] <= ready:
                return  # an earlier wake-up is already scheduled
            pending[1].cancel()
        task = asyncio.ensure_future(self._later(key, delay))
        self._timers[key] = (ready, task)

    async def _later(self, key: Hashable, delay: float) -> None:
        await self.clock.sleep(delay)
        self._timers.pop(key, None)
        self.add(key)

    def add_rate_limited(self, key: Hashable) -> None:
        self.add_after(key, self.rate_limiter.when(key))

    def forget(self, key: Hashable) -> None:
        self.rate_limiter.forget(key)

    def num_requeues(self, key: Hashable) -> int:
        return self.rate_limiter.num_requeues(key)

    async def get(self) -> Hashable | None:
        """The next key to process, or None once the queue is shut down."""
        while not self._queue:
            if self._shutting_down:
                return None
            self._wakeup.clear()
            await self._wakeup.wait()
        key = self._queue.popleft()
        self._processing.add(key)
        self._dirty.discard(key)
        return key

    def done(self, key: Hashable) -> None:
        self._processing.discard(key)
        if key in self._dirty and not self._shutting_down:
            self._queue.append(key)
            self._wakeup.set()

    def shutdown(self) -> None:
        self._shutting_down = True
        self._queue.clear()
        for _, task in self._timers.values():
            task.cancel()
        self._timers.clear()
        self._wakeup.set()


# ---- expectations ---------------------------------------------------------------------


@dataclass
class _Expectation:
    adds: int
    deletes: set[str] = field(default_factory=set)
    stamp: float = 0.0


class Expectations:
    """Creations and deletions a controller waits to observe before it syncs a key again."""

    def __init__(self, clock: Clock, timeout: float = EXPECTATIONS_TIMEOUT):
        self.clock = clock
        self.timeout = timeout
        self._records: dict[str, _Expectation] = {}

    def expect_creations(self, key: str, count: int) -> None:
        self.expect(key, count, ())

    def expect_deletions(self, key: str, pod_keys: Iterable[str]) -> None:
        self.expect(key, 0, pod_keys)

    def expect(self, key: str, creations: int, pod_keys: Iterable[str]) -> None:
        """Both at once (a DaemonSet's sync creates on some nodes and deletes on others)."""
        self._records[key] = _Expectation(creations, set(pod_keys), self.clock.now())

    def creation_observed(self, key: str) -> None:
        record = self._records.get(key)
        if record is not None:
            record.adds -= 1

    def deletion_observed(self, key: str, pod_key: str) -> None:
        record = self._records.get(key)
        if record is not None:
            record.deletes.discard(pod_key)

    def satisfied(self, key: str) -> bool:
        record = self._records.get(key)
        if record is None:
            return True
        if record.adds <= 0 and not record.deletes:
            return True
        if self.clock.now() - record.stamp > self.timeout:
            log.info("expectations of %s expired after %ss; syncing anyway", key, self.timeout)
            return True
        return False

    def pending(self, key: str) -> tuple[int, int]:
        record = self._records.get(key)
        return (record.adds, len(record.deletes)) if record else (0, 0)

    def delete(self, key: str) -> None:
        self._records.pop(key, None)


# ---- the controller loop --------------------------------------------------------------


class Controller:
    """A reconcile loop: informers feed a queue of keys; workers call ``sync(key)``.

    Subclasses register informers with ``use`` and handlers in ``__init__`` and implement
    ``sync``. ``run`` starts the informers, waits until they have listed the store,
    then runs ``workers`` workers until ``stop``. A sync that raises is retried with
    back-off; one that returns is ``forget``-ten.
    """

    name = "controller"

    def __init__(self, client: Client, clock: Clock, *, informers: InformerFactory | None = None,
                 workers: int = 1):
        self.client = client
        self.clock = clock
        self._own_factory = informers is None
        self.informers = informers or InformerFactory(client, clock)
        self.queue = WorkQueue(clock, name=self.name)
        self.workers = max(1, workers)
        self._used: list[Informer] = []
        self._stopped = asyncio.Event()
        self.syncs = 0
        self.errors = 0

    def use(self, resource: str) -> Informer:
        informer = self.informers.informer(resource)
        if informer not in self._used:
            self._used.append(informer)
        return informer

    def enqueue(self, key: Hashable) -> None:
        self.queue.add(key)

    def enqueue_after(self, key: Hashable, delay: float) -> None:
        self.queue.add_after(key, delay)

    @property
    def synced(self) -> bool:
        return all(i.synced.is_set() for i in self._used)

    async def run(self) -> None:
        self.informers.start()
        stop_wait = asyncio.ensure_future(self._stopped.wait())
        sync_wait = asyncio.ensure_future(self.informers.wait_synced(self._used))
        try:
            await asyncio.wait({stop_wait, sync_wait}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            stop_wait.cancel()
            sync_wait.cancel()
        if self._stopped.is_set():
            return
        log.info("%s: caches synced, starting %d worker(s)", self.name, self.workers)
        workers = [asyncio.ensure_future(self._worker()) for _ in range(self.workers)]
        try:
            await asyncio.gather(*workers)
        finally:
            for task in workers:
                task.cancel()
            if self._own_factory:
                self.informers.stop()

    async def _worker(self) -> None:
        while True:
            key = await self.queue.get()
            if key is None:
                return
            try:
                self.syncs += 1
                await self.sync(key)
                self.queue.forget(key)
            except asyncio.CancelledError:
                raise
            except ApiError as e:
                self.errors += 1
                log.info("%s: syncing %s failed (%s: %s); retrying", self.name, key, e.reason, e)
                self.queue.add_rate_limited(key)
            except SyncError as e:
                self.errors += 1
                log.info("%s: syncing %s failed (%s); retrying", self.name, key, e)
                self.queue.add_rate_limited(key)
            except Exception:
                self.errors += 1
                log.exception("%s: syncing %s failed; retrying", self.name, key)
                self.queue.add_rate_limited(key)
            finally:
                self.queue.done(key)

    async def sync(self, key: Any) -> None:
        raise NotImplementedError

    def stop(self) -> None:
        self._stopped.set()
        self.queue.shutdown()
        if self._own_factory:
            self.informers.stop()


def safe_handler(fn: Callable[..., None]) -> Callable[..., None]:
    """Informer handlers must not raise; log instead (the informer logs too, this names us)."""
    def wrapper(*args: Any) -> None:
        try:
            fn(*args)
        except Exception:
            log.exception("handler %s failed", getattr(fn, "__qualname__", fn))
    return wrapper
