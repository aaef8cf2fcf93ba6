"""The shape of everything long-running: ``async run()`` until stopped, and ``stop()``.

The controller manager, the scheduler, a node agent, the VPA's recommender and updater, the
API server's periodic work and a leader-elected wrapper all have it, and the supervisor
(kvert.cluster.supervisor), leader election (kvert.client.leaderelection) and the API
server (kvert.apiserver.background) run them through it. It sits in the lowest layer, next
to the clock every such loop waits on, so each of those layers names the one protocol.
"""

from __future__ import annotations

from typing import Protocol


class Component(Protocol):
    async def run(self) -> None:
        """Do the component's work; return once ``stop()`` was called (or the work ended).
        An exception is a crash its runner reports."""

    def stop(self) -> None:
        """Ask ``run()`` to return soon; safe to call more than once, and before ``run()``."""
