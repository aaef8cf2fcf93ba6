"""A component's periodic loop: one step now, then one every interval, until stopped.

The VPA recommender and updater both work in passes; a pass that fails is logged and the
next one runs on schedule, since one bad pass (an API error, a malformed object) must not
end a component that is meant to run for weeks.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

from kvert.clock.base import Clock, sleep_unless


async def run_every(clock: Clock, interval: float, step: Callable[[], Awaitable[object]],
                    stop: asyncio.Event, *, log: logging.Logger, failure: str) -> None:
    """Await ``step()`` at once and then every ``interval`` seconds of ``clock``'s time
    (measured from the end of one step to the start of the next) until ``stop`` is set.

    Setting ``stop`` cuts the wait short, so a stopped loop returns without running another
    step; a step in progress is not interrupted. A step that raises is logged as ``failure``
    on ``log``, with its traceback, and the loop carries on; cancellation ends the loop.
    """
    while not stop.is_set():
        try:
            await step()
        except asyncio.CancelledError:
            raise
        except Exception:  # noqa: BLE001 - the loop outlives any one step (module docstring)
            log.exception(failure)
        if stop.is_set():
            break
        await sleep_unless(clock, interval, stop)
