"""``wait_event``: a component loop's wait for its wake-up event, with a timeout, that never
loses a cancellation (``asyncio.wait_for`` on Python 3.11 does when the event is set in the
loop iteration that cancels the waiter)."""

import asyncio

import pytest

from kvert.clock import VirtualClock, wait_event


def test_set_timeout_and_already_set():
    clock = VirtualClock()

    async def main():
        ev = asyncio.Event()
        t0 = clock.elapsed
        assert await wait_event(ev, 5.0) is False and clock.elapsed - t0 == 5.0     # virtual time
        asyncio.get_running_loop().call_later(2.0, ev.set)
        assert await wait_event(ev, 10.0) is True and clock.elapsed - t0 == 7.0
        assert await wait_event(ev, None) is True                                   # already set

    clock.run(main())


@pytest.mark.parametrize("timeout", [None, 30.0, 0.0])
def test_a_cancellation_with_the_event_set_in_the_same_turn_is_kept(timeout):
    clock = VirtualClock()

    async def main():
        ev = asyncio.Event()
        waiter = asyncio.ensure_future(wait_event(ev, timeout))
        await asyncio.sleep(0)                      # the waiter is waiting
        ev.set()
        waiter.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiter

    clock.run(main())
