"""The Clock protocol and the wall clock."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Protocol, runtime_checkable


@runtime_checkable
class Clock(Protocol):
    def now(self) -> float:
        """Seconds since the Unix epoch."""

    async def sleep(self, seconds: float) -> None:
        """Wait ``seconds`` of this clock's time."""


class WallClock:
    """Real time. asyncio's loop time is monotonic; ``now`` is the system's epoch time."""

    def now(self) -> float:
        return time.time()

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(max(0.0, seconds))


async def wait_event(event: asyncio.Event, timeout: float | None) -> bool:
    """Wait until ``event`` is set, or ``timeout`` seconds of the running loop's time (None: no
    limit); True when it was set. A component's loop waits so, not with ``asyncio.wait_for``:
    on Python 3.11 that returns normally when the event is set in the loop iteration that
    cancels the waiter, and the cancellation is lost (the loop then waits forever)."""
    if event.is_set():
        return True
    try:
        async with asyncio.timeout(timeout):
            await event.wait()
    except TimeoutError:
        return False
    return True


async def sleep_unless(clock: Clock, seconds: float, wake: asyncio.Event) -> None:
    """Wait ``seconds`` of ``clock``'s time, or less if ``wake`` is set (a component's
    interval, cut short by ``stop()``)."""
    sleeper = asyncio.ensure_future(clock.sleep(seconds))
    waker = asyncio.ensure_future(wake.wait())
    try:
        await asyncio.wait({sleeper, waker}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for t in (sleeper, waker):
            if not t.done():
                t.cancel()


def wait_for_kernel(done: Callable[[], bool], timeout: float, interval: float = 0.001) -> bool:
    """Poll ``done`` in real time for at most ``timeout`` seconds; whether it came true.

    For a state the kernel reaches on its own (a cgroup's freezer settling), which no Clock
    of the cluster's governs: a virtual clock would never let the kernel catch up."""
    deadline = time.monotonic() + timeout
    while True:
        if done():
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(interval)
