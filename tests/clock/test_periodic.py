"""run_every: the periodic loop of the VPA recommender and updater, on virtual time."""

from __future__ import annotations

import asyncio
import logging

import pytest

from kvert.clock.periodic import run_every
from kvert.clock.virtual import VirtualClock

log = logging.getLogger("test-periodic")


def test_steps_run_at_once_then_every_interval_until_stopped() -> None:
    clock = VirtualClock()
    stop = asyncio.Event()
    times: list[float] = []

    async def step() -> None:
        times.append(clock.elapsed)
        if len(times) == 4:
            stop.set()

    clock.run(run_every(clock, 60.0, step, stop, log=log, failure="step failed"))
    assert times == [0.0, 60.0, 120.0, 180.0]


def test_the_interval_starts_when_a_step_ends() -> None:
    clock = VirtualClock()
    stop = asyncio.Event()
    starts: list[float] = []

    async def slow_step() -> None:
        starts.append(clock.elapsed)
        await clock.sleep(5.0)
        if len(starts) == 3:
            stop.set()

    clock.run(run_every(clock, 10.0, slow_step, stop, log=log, failure="step failed"))
    assert starts == [0.0, 15.0, 30.0]


def test_stopping_cuts_the_wait_short() -> None:
    clock = VirtualClock()
    stop = asyncio.Event()
    steps: list[float] = []

    async def step() -> None:
        steps.append(clock.elapsed)

    async def main() -> None:
        loop = asyncio.ensure_future(run_every(clock, 3600.0, step, stop, log=log, failure="f"))
        await clock.sleep(1.0)
        stop.set()
        await loop

    clock.run(main())
    assert steps == [0.0]
    assert clock.elapsed < 3600.0


def test_a_stopped_loop_runs_no_step() -> None:
    clock = VirtualClock()
    stop = asyncio.Event()
    stop.set()
    steps: list[float] = []

    async def step() -> None:
        steps.append(clock.elapsed)

    clock.run(run_every(clock, 1.0, step, stop, log=log, failure="f"))
    assert steps == []


def test_a_failing_step_is_logged_and_the_loop_goes_on(caplog: pytest.LogCaptureFixture) -> None:
    clock = VirtualClock()
    stop = asyncio.Event()
    calls: list[float] = []

    async def flaky() -> None:
        calls.append(clock.elapsed)
        if len(calls) == 1:
            raise RuntimeError("boom")
        stop.set()

    with caplog.at_level(logging.ERROR, logger=log.name):
        clock.run(run_every(clock, 30.0, flaky, stop, log=log, failure="flaky loop failed"))
    assert calls == [0.0, 30.0]
    [record] = [r for r in caplog.records if r.name == log.name]
    assert record.getMessage() == "flaky loop failed"
    assert record.exc_info is not None and isinstance(record.exc_info[1], RuntimeError)


def test_cancellation_ends_the_loop() -> None:
    clock = VirtualClock()
    stop = asyncio.Event()

    async def cancelled() -> None:
        raise asyncio.CancelledError

    with pytest.raises(asyncio.CancelledError):
        clock.run(run_every(clock, 1.0, cancelled, stop, log=log, failure="f"))
