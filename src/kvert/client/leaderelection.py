"""Leader election over a coordination.k8s.io/v1 Lease, as client-go's ``leaderelection``.

Replicas of a component (the scheduler, the controller manager, the VPA recommender and
updater) share one Lease in ``kube-system``; only its holder works. A candidate takes the
Lease when it does not exist, when it is released (no holder), or when the candidate has
seen its record unchanged for ``lease_duration`` seconds (time measured on the candidate's
own clock from when it last saw the record change, as client-go does, so clocks need not
agree). The holder renews every ``retry_period``; when it cannot renew for
``renew_deadline`` it stops working, and a fresh instance waits to lead again.
Upstream's defaults: 15 s, 10 s, 2 s. On a clean stop the holder releases the Lease so a
standby takes over at once.
"""

from __future__ import annotations

import asyncio
import logging
import random
import socket
import uuid
from collections.abc import Callable
from typing import Any

from kvert.api.errors import AlreadyExists, ApiError, Conflict, NotFound
from kvert.api.meta import format_micro_time
from kvert.api.types import Obj
from kvert.client.base import Client
from kvert.clock import Clock
from kvert.clock.component import Component

log = logging.getLogger(__name__)

LEASES = "coordination.k8s.io/leases"
NAMESPACE = "kube-system"
LEASE_DURATION = 15.0
RENEW_DEADLINE = 10.0
RETRY_PERIOD = 2.0
JITTER = 1.2   # client-go's JitterFactor: candidates retry within [retry, retry * 2.2)


# What a lease record is compared by: (holderIdentity, renewTime, leaseTransitions,
# acquireTime, leaseDurationSeconds), the JSON values as read from the Lease's spec.
LeaseRecord = tuple[Any, Any, Any, Any, Any]


def default_identity() -> str:
    """``HOSTNAME_UUID``, as kube-scheduler and kube-controller-manager name themselves."""
    return f"{socket.gethostname()}_{uuid.uuid4()}"


class LeaderElector:
    def __init__(self, client: Client, clock: Clock, name: str, *, identity: str | None = None,
                 namespace: str = NAMESPACE, lease_duration: float = LEASE_DURATION,
                 renew_deadline: float = RENEW_DEADLINE, retry_period: float = RETRY_PERIOD) -> None:
        if not lease_duration > renew_deadline > JITTER * retry_period > 0:
            raise ValueError("leader election needs lease_duration > renew_deadline > "
                             f"{JITTER} * retry_period > 0")
        self.client = client
        self.clock = clock
        self.name = name
        self.namespace = namespace
        self.identity = identity or default_identity()
        self.lease_duration = lease_duration
        self.renew_deadline = renew_deadline
        self.retry_period = retry_period
        self.leading = False
        self._observed: LeaseRecord | None = None   # the holder's record as last seen
        self._observed_at = 0.0                 # when it last changed, on our clock
        self._random = random.Random()

    # -- one attempt ---------------------------------------------------------------------------

    async def try_acquire_or_renew(self) -> bool:
        now = self.clock.now()
        stamp = format_micro_time(now)
        try:
            lease = await self.client.get(LEASES, self.name, self.namespace)
        except NotFound:
            body: Obj = {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                         "metadata": {"name": self.name, "namespace": self.namespace},
                         "spec": {"holderIdentity": self.identity,
                                  "leaseDurationSeconds": int(self.lease_duration),
                                  "acquireTime": stamp, "renewTime": stamp,
                                  "leaseTransitions": 0}}
            try:
                await self.client.create(LEASES, body, namespace=self.namespace)
            except AlreadyExists:
                return False
            self._observe(body["spec"], now)
            return True
        spec = lease.get("spec") or {}
        record = _record(spec)
        if record != self._observed:
            self._observe(spec, now)
        holder = spec.get("holderIdentity") or ""
        duration = float(spec.get("leaseDurationSeconds") or self.lease_duration)
        if holder and holder != self.identity and self._observed_at + duration > now:
            return False
        transitions = int(spec.get("leaseTransitions") or 0)
        new = {"holderIdentity": self.identity, "leaseDurationSeconds": int(self.lease_duration),
               "renewTime": stamp,
               "acquireTime": spec.get("acquireTime") if holder == self.identity else stamp,
               "leaseTransitions": transitions if holder == self.identity else transitions + 1}
        lease["spec"] = {**spec, **new}
        try:
            await self.client.update(LEASES, lease)
        except (Conflict, NotFound):
            return False
        self._observe(lease["spec"], now)
        return True

    def _observed_duration(self) -> float:
        duration = self._observed[4] if self._observed else None
        return float(duration or self.lease_duration)

    def _observe(self, spec: Obj, now: float) -> None:
        self._observed = _record(spec)
        self._observed_at = now

    async def release(self) -> None:
        """Give the Lease up (client-go's ReleaseOnCancel): no holder, a 1 s duration."""
        try:
            lease = await self.client.get(LEASES, self.name, self.namespace)
            spec = lease.get("spec") or {}
            if spec.get("holderIdentity") != self.identity:
                return
            stamp = format_micro_time(self.clock.now())
            lease["spec"] = {**spec, "holderIdentity": "", "leaseDurationSeconds": 1,
                             "acquireTime": stamp, "renewTime": stamp}
            await self.client.update(LEASES, lease)
        except ApiError as e:
            log.info("leader election %s: could not release the lease: %s", self.name, e)

    # -- the loop ------------------------------------------------------------------------------

    async def _attempt(self) -> bool:
        try:
            return await self.try_acquire_or_renew()
        except ApiError as e:
            log.warning("leader election %s: %s", self.name, e)
        except OSError as e:   # the API server is unreachable
            log.warning("leader election %s: %s", self.name, e)
        return False

    async def acquire(self) -> None:
        while not await self._attempt():
            # A standby watching a live holder looks every retry period, so it sees the last
            # renewal at most one period late, and tries again the moment the lease it saw
            # runs out: a hand-over takes the lease duration plus at most one period. Until
            # it has seen a holder, candidates spread out with client-go's jitter.
            wait = self.retry_period
            if self._observed is None:
                wait *= 1 + self._random.random() * JITTER
            expires = self._observed_at + self._observed_duration() - self.clock.now()
            await self.clock.sleep(min(wait, max(expires, 0.05)))
        self.leading = True
        log.info("leader election %s: %s became leader", self.name, self.identity)

    async def keep(self) -> None:
        """Renew until a renewal has failed for ``renew_deadline``; then return."""
        last = self.clock.now()
        while True:
            await self.clock.sleep(self.retry_period)
            if await self._attempt():
                last = self.clock.now()
            elif self.clock.now() - last >= self.renew_deadline:
                self.leading = False
                log.warning("leader election %s: %s lost the lease", self.name, self.identity)
                return

    async def run(self, make: Callable[[], Component]) -> None:
        """Lead with a component made by ``make()`` (``run()``/``stop()``) whenever this
        candidate holds the Lease; a lost Lease stops it and the candidate waits again."""
        while True:
            await self.acquire()
            component = make()
            work = asyncio.ensure_future(component.run())
            keep = asyncio.ensure_future(self.keep())
            try:
                done, _ = await asyncio.wait({work, keep}, return_when=asyncio.FIRST_COMPLETED)
            finally:
                component.stop()
                keep.cancel()
                if not work.done():
                    work.cancel()
                await asyncio.gather(work, keep, return_exceptions=True)
            if work in done:
                await self.release()
                self.leading = False
                work.result()      # a crash propagates to the supervisor, by name
                return


class LeaderElected:
    """A component that runs only while it leads: ``LeaderElected(name, make, elector)``."""

    def __init__(self, make: Callable[[], Component], elector: LeaderElector) -> None:
        self.make = make
        self.elector = elector
        self._task: asyncio.Task[None] | None = None

    async def run(self) -> None:
        self._task = asyncio.current_task()
        try:
            await self.elector.run(self.make)
        except asyncio.CancelledError:
            if self.elector.leading:
                await asyncio.shield(self.elector.release())
            raise

    def stop(self) -> None:
        if self._task is not None and not self._task.done():
            self._task.cancel()


def _record(spec: Obj) -> LeaseRecord:
    return (spec.get("holderIdentity"), spec.get("renewTime"), spec.get("leaseTransitions"),
            spec.get("acquireTime"), spec.get("leaseDurationSeconds"))
