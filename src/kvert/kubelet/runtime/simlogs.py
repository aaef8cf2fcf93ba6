"""What a simulated container "prints": its lifecycle, and a usage line every minute.

A simulated container runs no program, so its log is made from what the runtime knows:
the moment it started (image and command), resource updates (in-place resizes), an OOM
kill or exit, and, every ``USAGE_EVERY`` seconds of its life, the CPU and memory its usage
profile says it used. Usage lines are computed when the log is read, never stored, so a
long simulation pays nothing for logs nobody reads.

What is said (lifecycle lines, a simulated program's output) is kept as the CRI log file
would hold it, rotated by the node's policy (``logrotation.LogRotatePolicy``): once the
current "file" reaches ``max_size`` bytes of CRI records it becomes a rotated one and a new
one starts; ``lines`` (``kubectl logs``) shows the current one, as the kubelet does, and
``disk_usage`` is the bytes the files would take (the current one and at most
``max_files - 1`` rotated ones, counted uncompressed: kvert does not guess gzip's ratio).
Only the last ``KEEP_EVENTS`` lines are held in memory.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from kvert.kubelet.runtime.logrotation import DEFAULT_POLICY, LogRotatePolicy
from kvert.kubelet.usage import ContainerUsage, UsageBatch

USAGE_EVERY = 60.0
KEEP_EVENTS = 1000        # lines held in memory per container (its "file" may be longer)
# a CRI record is "<30-byte RFC3339Nano time> <stream> <F|P> <text>\n"
TIMESTAMP_BYTES = len("2026-01-02T15:04:05.000000000Z")


def record_bytes(text: str, stream: str = "stdout") -> int:
    """The bytes one full line takes in a CRI log file."""
    return TIMESTAMP_BYTES + 1 + len(stream) + 3 + len(text.encode()) + 1


@dataclass
class ContainerLog:
    """One container instance's log: lifecycle lines as they happen, usage on demand."""
    usage: ContainerUsage
    events: list[tuple[float, str]] = field(default_factory=list)
    started_at: float = 0.0
    finished_at: float = 0.0
    policy: LogRotatePolicy = DEFAULT_POLICY
    current_bytes: int = 0                                  # of the current file
    rotated: list[int] = field(default_factory=list)        # sizes of the rotated files kept
    written: int = 0                                        # everything ever said, in bytes

    def say(self, when: float, line: str, stream: str = "stdout") -> None:
        size = record_bytes(line, stream)
        self.written += size
        self.current_bytes += size
        self.events.append((when, line))
        if len(self.events) > KEEP_EVENTS:
            del self.events[: len(self.events) - KEEP_EVENTS]
        if self.policy.enabled and self.current_bytes >= self.policy.max_size:
            self.rotate()

    def rotate(self) -> None:
        """The current file becomes a rotated one (the oldest beyond ``max_files - 1`` goes);
        ``kubectl logs`` starts over with the new current file."""
        self.rotated.append(self.current_bytes)
        del self.rotated[: max(0, len(self.rotated) - (self.policy.max_files - 1))]
        self.current_bytes = 0
        self.events.clear()

    @property
    def disk_usage(self) -> int:
        """Bytes this container's log files take: the current one and the rotated ones kept."""
        return self.current_bytes + sum(self.rotated)

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
