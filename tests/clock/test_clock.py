import asyncio
import time

import pytest

from kvert.clock import Clock, VirtualClock, WallClock
from kvert.clock.virtual import DEFAULT_START


def test_virtual_sleeps_run_in_virtual_order_without_waiting():
    clock = VirtualClock()
    order = []

    async def worker(name, period, times):
        for _ in range(times):
            await clock.sleep(period)
            order.append((name, clock.elapsed))

    async def main():
        await asyncio.gather(worker("a", 10, 3), worker("b", 25, 2))

    started = time.monotonic()
    clock.run(main())
    assert order == [("a", 10), ("a", 20), ("b", 25), ("a", 30), ("b", 50)]
    assert clock.now() == DEFAULT_START + 50
    assert time.monotonic() - started < 1.0


def test_asyncio_timeouts_use_virtual_time():
    clock = VirtualClock(start=1000.0)

    async def main():
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(asyncio.Event().wait(), timeout=3 * 86400)
        return clock.now()

    assert clock.run(main()) == 1000.0 + 3 * 86400


def test_advance_moves_time_and_wakes_due_sleepers():
    clock = VirtualClock(start=0.0)
    clock.advance(5)
    assert clock.now() == 5.0
    with pytest.raises(ValueError):
        clock.advance(-1)

    async def main():
        sleeper = asyncio.ensure_future(clock.sleep(100))
        await asyncio.sleep(0)
        clock.advance(100)          # someone else moves time: the sleeper is due at once
        await sleeper
        return clock.elapsed

    assert clock.run(main()) == 105.0


def test_virtual_sleep_refuses_a_foreign_loop():
    clock = VirtualClock()
    with pytest.raises(RuntimeError, match="clock's own loop"):
        asyncio.run(clock.sleep(1))


def test_wall_clock_follows_system_time():
    clock = WallClock()
    assert isinstance(clock, Clock) and isinstance(VirtualClock(), Clock)
    assert abs(clock.now() - time.time()) < 1.0
    started = time.monotonic()
    asyncio.run(clock.sleep(0.05))
    assert time.monotonic() - started >= 0.04
