"""Time for every component: a Clock is the only way kvert reads time or waits.

``WallClock`` is real time; ``VirtualClock`` is time a simulation advances. Components
take a Clock and never call ``time.time()`` or ``asyncio.sleep`` themselves.
"""

from kvert.clock.base import Clock, WallClock, sleep_unless, wait_event
from kvert.clock.virtual import VirtualClock

__all__ = ["Clock", "WallClock", "VirtualClock", "sleep_unless", "wait_event"]
