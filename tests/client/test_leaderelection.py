"""Lease leader election, in virtual time. Cases follow client-go's
TestTryAcquireOrRenew (tools/leaderelection/leaderelection_test.go): acquire from no
object, from an unled object, from a led object not renewed for the lease duration; not
from a led, recently renewed one; renew one already held. Then the loop: renew deadline,
release, hand-over."""

from __future__ import annotations

import asyncio

import pytest

from kvert.api.meta import parse_time
from kvert.client import InProcessClient
from kvert.client.leaderelection import LEASES, LeaderElected, LeaderElector
from kvert.clock import VirtualClock
from kvert.registry import Registry
from kvert.store import open_store


def _setup():
    clock = VirtualClock()
    client = InProcessClient(Registry(open_store("memory", clock=clock), clock, seed=1))
    return clock, client


def _elector(client, clock, identity, **kw):
    return LeaderElector(client, clock, "kube-scheduler", identity=identity, **kw)


async def _lease(client):
    return (await client.get(LEASES, "kube-scheduler", "kube-system"))["spec"]


def test_try_acquire_or_renew_cases():
    clock, client = _setup()

    async def main():
        a, b = _elector(client, clock, "a"), _elector(client, clock, "b")
        # acquire from no object
        assert await a.try_acquire_or_renew()
        spec = await _lease(client)
        assert (spec["holderIdentity"], spec["leaseDurationSeconds"], spec["leaseTransitions"]) == ("a", 15, 0)
        # don't acquire from a led, acked object
        assert not await b.try_acquire_or_renew()
        # renew an already acquired object: acquireTime and transitions kept
        await clock.sleep(2)
        assert await a.try_acquire_or_renew()
        renewed = await _lease(client)
        assert renewed["acquireTime"] == spec["acquireTime"] and renewed["renewTime"] != spec["renewTime"]
        assert renewed["leaseTransitions"] == 0
        # b saw the record change at t=2; the lease is b's only after 15 s of silence on b's clock
        assert not await b.try_acquire_or_renew()
        await clock.sleep(14)
        assert not await b.try_acquire_or_renew()
        await clock.sleep(1.5)
        assert await b.try_acquire_or_renew()
        taken = await _lease(client)
        assert (taken["holderIdentity"], taken["leaseTransitions"]) == ("b", 1)
        assert taken["acquireTime"] == taken["renewTime"]
        # acquire from an unled object (released): at once
        await b.release()
        released = await _lease(client)
        assert released["holderIdentity"] == "" and released["leaseDurationSeconds"] == 1
        assert await a.try_acquire_or_renew()
        assert (await _lease(client))["leaseTransitions"] == 2

    clock.run(main())


def test_timing_must_be_ordered():
    clock, client = _setup()
    with pytest.raises(ValueError):
        _elector(client, clock, "a", lease_duration=10, renew_deadline=10)
    with pytest.raises(ValueError):
        _elector(client, clock, "a", renew_deadline=2, retry_period=2)


class _Work:
    """A component counting how often it was started and whether it is running."""

    def __init__(self, log, name):
        self.log, self.name, self.running = log, name, False
        self._stop = asyncio.Event()

    async def run(self):
        self.log.append(("start", self.name))
        self.running = True
        try:
            await self._stop.wait()
        finally:
            self.running = False

    def stop(self):
        self._stop.set()


def test_only_the_holder_works_and_a_standby_takes_over_after_the_lease_expires():
    clock, client = _setup()
    log: list = []

    async def main():
        a = LeaderElected(lambda: _Work(log, "a"), _elector(client, clock, "a"))
        b = LeaderElected(lambda: _Work(log, "b"), _elector(client, clock, "b"))
        ta = asyncio.ensure_future(a.run())
        await clock.sleep(1)
        tb = asyncio.ensure_future(b.run())
        await clock.sleep(60)
        assert log == [("start", "a")]
        # a crashes: its process is gone without releasing (cancel the elector's loop only)
        a.elector.release = _no_release
        ta.cancel()
        await asyncio.gather(ta, return_exceptions=True)
        last_renewal = parse_time((await _lease(client))["renewTime"])
        while log[-1] != ("start", "b"):
            await clock.sleep(0.1)
        # upstream's defaults: 15 s lease counted from when b saw the last renewal, which b
        # polls every 2 s with up to 1.2 x jitter
        assert 15 <= clock.now() - last_renewal <= 15 + 2 * (1 + 1.2) + 0.2
        assert (await _lease(client))["holderIdentity"] == "b"
        b.stop()
        await asyncio.gather(tb, return_exceptions=True)
        assert (await _lease(client))["holderIdentity"] == ""     # released on a clean stop

    clock.run(main())


async def _no_release():
    return None


def test_a_leader_that_cannot_renew_stops_working_after_the_renew_deadline():
    clock, client = _setup()
    log: list = []
    works: list[_Work] = []

    def make():
        works.append(_Work(log, "a"))
        return works[-1]

    async def main():
        elector = _elector(client, clock, "a")
        task = asyncio.ensure_future(LeaderElected(make, elector).run())
        await clock.sleep(5)
        assert works[0].running
        # someone else overwrites the lease: every renewal now fails (held and fresh)
        last_renewal = parse_time((await _lease(client))["renewTime"])

        async def steal():
            while True:
                lease = await client.get(LEASES, "kube-scheduler", "kube-system")
                lease["spec"]["holderIdentity"] = "thief"
                await client.update(LEASES, lease)
                await clock.sleep(1)
        thief = asyncio.ensure_future(steal())
        while works[0].running:
            await clock.sleep(0.1)
        # client-go: renewals retried every 2 s until 10 s past the last success
        assert 10 <= clock.now() - last_renewal <= 10 + 2 + 0.2
        assert not elector.leading
        thief.cancel()
        # the thief went quiet: after its lease expires a fresh instance leads again
        await clock.sleep(25)
        assert len(works) == 2 and works[1].running
        task.cancel()
        await asyncio.gather(task, thief, return_exceptions=True)

    clock.run(main())
