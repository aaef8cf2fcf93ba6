"""Virtual time: an asyncio event loop whose clock jumps instead of waiting.

The simulator runs the real components (written against asyncio and a Clock) in a loop
whose ``time()`` is virtual. When the loop has nothing ready to run and would block
until its next timer, the virtual clock moves straight to that timer instead. Every
asyncio primitive (``sleep``, ``wait_for`` timeouts, ``call_later``) therefore runs on
virtual time without the components knowing, and a day of cluster life costs only the
CPU time of the work done in it.
"""

from __future__ import annotations

import asyncio
import selectors
from collections.abc import Coroutine, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    # typeshed's private alias exists only for the type checker.
    from _typeshed import FileDescriptorLike

T = TypeVar("T")

# 2026-01-01T00:00:00Z: a fixed start so simulated runs are reproducible.
DEFAULT_START = 1767225600.0


class VirtualClock:
    """A clock that only moves when advanced, directly or by its event loop."""

    def __init__(self, start: float = DEFAULT_START) -> None:
        self._start = float(start)
        self._elapsed = 0.0

    def now(self) -> float:
        return self._start + self._elapsed

    @property
    def elapsed(self) -> float:
        """Virtual seconds since the clock was made."""
        return self._elapsed

    def advance(self, seconds: float) -> None:
        """Move time forward; timers in the clock's loop that fall due run on its next turn."""
        if seconds < 0:
            raise ValueError("a virtual clock cannot go backwards")
        self._elapsed += seconds

    async def sleep(self, seconds: float) -> None:
        loop = asyncio.get_running_loop()
        if getattr(loop, "clock", None) is not self:
            raise RuntimeError("VirtualClock.sleep must run in the clock's own loop: use clock.run()")
        await asyncio.sleep(max(0.0, seconds))

    def new_event_loop(self) -> VirtualTimeLoop:
        return VirtualTimeLoop(self)

    def run(self, main: Coroutine[Any, Any, T]) -> T:
        """Run ``main`` to completion in virtual time, like ``asyncio.run``."""
        with asyncio.Runner(loop_factory=self.new_event_loop) as runner:
            return runner.run(main)


class _JumpingSelector(selectors.BaseSelector):
    """Polls real I/O without blocking; a wait for a timer becomes a jump of the clock."""

    def __init__(self, clock: VirtualClock) -> None:
        self._real = selectors.DefaultSelector()
        self._clock = clock

    def register(self, fileobj: FileDescriptorLike, events: int, data: Any = None) -> selectors.SelectorKey:
        return self._real.register(fileobj, events, data)

    def unregister(self, fileobj: FileDescriptorLike) -> selectors.SelectorKey:
        return self._real.unregister(fileobj)

    def modify(self, fileobj: FileDescriptorLike, events: int, data: Any = None) -> selectors.SelectorKey:
        return self._real.modify(fileobj, events, data)

    def select(self, timeout: float | None = None) -> list[tuple[selectors.SelectorKey, int]]:
        ready = self._real.select(0)
        if ready or timeout == 0:
            return ready
        if timeout is None:
            # Nothing scheduled at all: only real I/O (e.g. another thread) can wake us.
            return self._real.select(None)
        self._clock.advance(timeout)
        return []

    def close(self) -> None:
        self._real.close()

    def get_map(self) -> Mapping[FileDescriptorLike, selectors.SelectorKey]:
        return self._real.get_map()


class VirtualTimeLoop(asyncio.SelectorEventLoop):
    """An event loop that reads time from a VirtualClock."""

    def __init__(self, clock: VirtualClock) -> None:
        self.clock = clock
        super().__init__(selector=_JumpingSelector(clock))
        # asyncio fires timers due within this resolution; virtual time is exact.
        self._clock_resolution = 1e-9

    def time(self) -> float:
        return self.clock.elapsed
