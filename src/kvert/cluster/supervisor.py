"""One supervisor for a process's components.

A component is anything with ``async run()`` (returns when stopped) and ``stop()``: the
controller manager, the scheduler, a node agent, the VPA recommender and updater, the CRD
controller. The supervisor runs them in one ``asyncio.TaskGroup``: when one crashes, the
crash is logged and reported with the component's name (``ComponentCrashed``) and the
others are stopped, instead of a dead task nobody awaits.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from kvert.clock.component import Component

log = logging.getLogger(__name__)


class ComponentCrashed(RuntimeError):
    def __init__(self, name: str, cause: BaseException):
        super().__init__(f"component {name!r} crashed: {type(cause).__name__}: {cause}")
        self.name = name
        self.cause = cause


class Supervisor:
    def __init__(self) -> None:
        self.components: dict[str, Component] = {}
        self._task: asyncio.Task | None = None
        self._group: asyncio.TaskGroup | None = None
        self._stopping: asyncio.Event | None = None

    def add(self, name: str, component: Component) -> Component:
        """Run ``component`` under ``name`` (at once if the supervisor is running)."""
        if name in self.components:
            raise ValueError(f"a component named {name!r} is already supervised")
        self.components[name] = component
        if self._group is not None:
            self._group.create_task(self._guard(name, component), name=name)
        return component

    def start(self) -> None:
        """Run every component added so far, and later ones, in the background."""
        if self._task is None:
            self._task = asyncio.ensure_future(self._run())

    async def _run(self) -> None:
        try:
            self._stopping = asyncio.Event()
            async with asyncio.TaskGroup() as group:
                self._group = group
                # keeps the group open for components added later, until stop()
                group.create_task(self._stopping.wait(), name="supervisor")
                for name, component in self.components.items():
                    group.create_task(self._guard(name, component), name=name)
        except BaseExceptionGroup as eg:
            crashed = _first_crash(eg)
            if crashed is not None:
                raise crashed from None
            raise
        finally:
            self._group = None

    async def _guard(self, name: str, component: Component) -> None:
        try:
            await component.run()
        except asyncio.CancelledError:
            raise
        except Exception as e:
            log.error("component %s crashed", name, exc_info=True)
            raise ComponentCrashed(name, e) from e
        finally:
            component.stop()

    @property
    def failure(self) -> ComponentCrashed | None:
        """The crash that ended the supervisor, if one did."""
        if self._task is None or not self._task.done() or self._task.cancelled():
            return None
        error = self._task.exception()
        return error if isinstance(error, ComponentCrashed) else None

    def check(self) -> None:
        """Raise the crash that ended the supervisor, if one did."""
        failure = self.failure
        if failure is not None:
            raise failure

    async def wait(self) -> None:
        """Until ``stop()``; raises ``ComponentCrashed`` for a crash."""
        if self._task is not None:
            await asyncio.shield(self._task)

    async def stop(self) -> None:
        for component in self.components.values():
            component.stop()
        if self._stopping is not None:
            self._stopping.set()
        if self._task is not None:
            self._task.cancel()
            try:
                await self._task
            except (asyncio.CancelledError, ComponentCrashed):
                pass


def _first_crash(eg: BaseExceptionGroup) -> Any:
    for error in eg.exceptions:
        if isinstance(error, ComponentCrashed):
            return error
        if isinstance(error, BaseExceptionGroup):
            found = _first_crash(error)
            if found is not None:
                return found
    return None
