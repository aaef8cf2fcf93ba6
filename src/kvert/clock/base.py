"""The Clock protocol and the wall clock."""

from __future__ import annotations

import asyncio
import time
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
