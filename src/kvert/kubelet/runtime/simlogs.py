"""What a simulated container "prints": its lifecycle, and a usage line every minute.

A simulated container runs no program, so its log is made from what the runtime knows:
the moment it started (image and command), resource updates (in-place resizes), an OOM
kill or exit, and, every ``USAGE_EVERY`` seconds of its life, the CPU and memory its usage
profile says it used. Usage lines are computed when the log is read, never stored, so a
long simulation pays nothing for logs nobody reads.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from kvert.kubelet.usage import ContainerUsage, UsageBatch

USAGE_EVERY = 60.0
KEEP_EVENTS = 1000        # lifecycle lines kept per container (a log rotates too)


@dataclass
class ContainerLog:
    """One container instance's log: lifecycle lines as they happen, usage on demand."""
    usage: ContainerUsage
    events: list[tuple[float, str]] = field(default_factory=list)
    started_at: float = 0.0
    finished_at: float = 0.0

    def say(self, when: float, line: str) -> None:
        self.events.append((when, line))
        if len(self.events) > KEEP_EVENTS:
            del self.events[: len(self.events) - KEEP_EVENTS]

    def lines(self, now: float, after: float | None = None) -> list[tuple[float, str]]:
        """The lines up to ``now`` (or the container's end), later than ``after`` if given,
        in time order (a follower asks only for what is new)."""
        out = [item for item in self.events if after is None or item[0] > after]
        if self.started_at:
            end = self.finished_at or now
            first = self.started_at + USAGE_EVERY
            if after is not None and after >= first:
                first += (np.floor((after - first) / USAGE_EVERY) + 1) * USAGE_EVERY
            times = np.arange(first, end + 1e-9, USAGE_EVERY)
            if times.size:
                cpu, memory = UsageBatch([self.usage]).evaluate(times, self.started_at)
                out += [(float(t), f"usage: cpu={int(round(c))}m memory={int(round(m)) // 2**20}Mi")
                        for t, c, m in zip(times, cpu[0], memory[0])]
        out.sort(key=lambda item: item[0])
        return out
