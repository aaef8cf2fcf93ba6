"""The supervisor runs a process's components and reports a crash by the component's name."""

from __future__ import annotations

import asyncio

import pytest

from kvert.clock import VirtualClock
from kvert.cluster.supervisor import ComponentCrashed, Supervisor


class Steady:
    def __init__(self):
        self.stopped = False
        self._stop = asyncio.Event()

    async def run(self):
        await self._stop.wait()

    def stop(self):
        self.stopped = True
        self._stop.set()


class Crashing(Steady):
    def __init__(self, after: float, clock):
        super().__init__()
        self.after, self.clock = after, clock

    async def run(self):
        await self.clock.sleep(self.after)
        raise KeyError("boom")


def test_a_crash_is_reported_by_name_and_stops_the_others():
    clock = VirtualClock()

    async def main():
        supervisor = Supervisor()
        steady = supervisor.add("scheduler", Steady())
        supervisor.start()
        supervisor.add("node-agent/node-1", Crashing(5, clock))    # added while running
        await clock.sleep(1)
        assert supervisor.failure is None
        with pytest.raises(ComponentCrashed) as info:
            await supervisor.wait()
        assert info.value.name == "node-agent/node-1"
        assert "component 'node-agent/node-1' crashed: KeyError" in str(info.value)
        assert steady.stopped
        with pytest.raises(ComponentCrashed):
            supervisor.check()

    clock.run(main())


def test_stop_stops_every_component_and_names_are_unique():
    clock = VirtualClock()

    async def main():
        supervisor = Supervisor()
        parts = [supervisor.add(f"c{i}", Steady()) for i in range(3)]
        with pytest.raises(ValueError):
            supervisor.add("c1", Steady())
        supervisor.start()
        await clock.sleep(1)
        await supervisor.stop()
        assert all(p.stopped for p in parts) and supervisor.failure is None

    clock.run(main())
