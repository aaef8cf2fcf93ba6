"""What a real cluster recorded over a window: the input of ``kvert scenario import``.

A ``RecordedHistory`` is the usage history of every container instance seen in the window,
on one time grid (``start + k * step`` for ``k`` in ``0 .. steps-1``; the value at a step
stands for the step that begins there), whatever its source: a Prometheus server with
cAdvisor's and kube-state-metrics' series (``kvert.sim.prometheus_history``), or a samples
CSV file (the ``kvert vpa recommend --samples`` format with a namespace column).

A *container instance* is one (namespace, pod, container): pods that came and went in the
window each have their own. Values are floats with NaN where nothing was recorded (the
container did not exist then, or a scrape was missed): CPU in cores (a rate over the step),
memory in bytes (the working set), throttling in throttled seconds per second. OOM kills
and restarts are step indices (an index repeats for several at one step).

``pods`` says who owned each pod, as far as the source knows (kube-state-metrics'
``kube_pod_owner``, with ReplicaSets resolved to their Deployment and Jobs to their
CronJob); ``None`` where it does not know (the importer then goes by the pod's name).
``warnings`` are what the source noticed and assumed (missing series, counter resets,
gaps), each naming the object or series: the importer passes them on to the user.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from kvert.vpa.history import format_duration
from kvert.vpa.samples import format_time_us, seconds_to_us

PodKey = tuple[str, str]                  # (namespace, pod)
ContainerKey = tuple[str, str, str]       # (namespace, pod, container)


@dataclass
class ContainerSeries:
    namespace: str
    pod: str
    container: str
    cpu: np.ndarray                        # cores, float64, shape (steps,), NaN where unknown
    memory: np.ndarray                     # working-set bytes, float64, shape (steps,), NaN where unknown
    throttled: np.ndarray | None = None    # throttled seconds per second, shape (steps,), or None
    ooms: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))      # step indices
    restarts: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))  # step indices, every cause
    requests: dict[str, int] = field(default_factory=dict)   # last recorded: cpu millicores, memory bytes
    limits: dict[str, int] = field(default_factory=dict)
    # the memory limit at each step (bytes, NaN unknown), when the source records limits over time
    memory_limit: np.ndarray | None = None

    @property
    def key(self) -> ContainerKey:
        return (self.namespace, self.pod, self.container)

    def seen(self) -> np.ndarray:
        """Steps at which the instance has a CPU or memory value."""
        return ~(np.isnan(self.cpu) & np.isnan(self.memory))


@dataclass
class PodRecord:
    namespace: str
    name: str
    owner_kind: str | None = None          # Deployment, StatefulSet, DaemonSet, Job, CronJob, ReplicaSet, ...
    owner_name: str | None = None
    node: str | None = None


@dataclass
class RecordedHistory:
    start: float                           # unix seconds of the first step
    step: float                            # seconds between steps
    steps: int
    containers: list[ContainerSeries] = field(default_factory=list)
    pods: dict[PodKey, PodRecord] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    source: str = ""                       # the URL or file it came from, for messages

    @property
    def end(self) -> float:
        """The end of the window: the end of the last step."""
        return self.start + self.steps * self.step

    def times(self) -> np.ndarray:
        return self.start + self.step * np.arange(self.steps, dtype=np.float64)


class HistoryImportError(ValueError):
    """A history that cannot be read: the message names the URL or the file, and the query or
    the line."""


# -- holding the last value inside an instance's life (shared by the readers) -----------------------------

GAP_WARN_STEPS = 2               # a held gap longer than this many steps is warned about
MAX_GAP_WARNINGS = 3             # per container; further gaps are summed up in one more warning


def hold_gaps(values: np.ndarray, first: int, last: int) -> list[tuple[int, int]]:
    """Fill in place the NaN steps of ``values[first:last + 1]`` that come after a value with the
    last value before them (NaN before ``first``, after ``last`` and before the first value
    stay). Returns the filled runs as (first step, number of steps)."""
    seg = values[first:last + 1]
    valid = ~np.isnan(seg)
    if valid.all() or not valid.any():
        return []
    idx = np.where(valid, np.arange(seg.size), -1)
    np.maximum.accumulate(idx, out=idx)
    fill = ~valid & (idx >= 0)
    if not fill.any():
        return []
    seg[fill] = seg[idx[fill]]
    edges = np.diff(np.concatenate([[0], fill.view(np.int8), [0]]))
    starts = np.flatnonzero(edges == 1)
    ends = np.flatnonzero(edges == -1)
    return [(first + int(a), int(b - a)) for a, b in zip(starts, ends)]


def _when(seconds: float) -> str:
    return format_time_us(int(seconds_to_us(seconds)))


def _span(seconds: float) -> str:
    return format_duration(seconds) if seconds > 0 else "0s"


def settle(series: ContainerSeries, names: dict[str, str], start: float, step: float) -> list[str]:
    """Make one instance's arrays follow the rule of its life, in place, and say what was
    assumed: outside its life (its first to its last step with a CPU or memory value) every
    array is NaN; inside it, a missing step of ``cpu``, ``memory`` and ``throttled`` (the
    attributes named in ``names``, with the names the warnings use) or ``memory_limit`` holds
    the last value before it. Returns one warning per held gap longer than ``GAP_WARN_STEPS``
    (gaps of several metrics that overlap are one gap; at most ``MAX_GAP_WARNINGS`` per
    instance and then one that sums up the rest), naming the series, where and how long."""
    seen = np.flatnonzero(series.seen())
    arrays = {a: getattr(series, a) for a in ("cpu", "memory", "throttled", "memory_limit")
              if getattr(series, a) is not None}
    if seen.size == 0:
        for values in arrays.values():
            values[:] = np.nan
        return []
    first, last = int(seen[0]), int(seen[-1])
    for values in arrays.values():
        values[:first] = np.nan
        values[last + 1:] = np.nan
    runs: list[tuple[int, int, str]] = []
    for attr, values in arrays.items():
        for a, n in hold_gaps(values, first, last):
            if attr in names:
                runs.append((a, a + n, names[attr]))
    runs.sort()
    groups: list[list[tuple[int, int, str]]] = []
    for run in runs:
        if groups and run[0] <= max(r[1] for r in groups[-1]):
            groups[-1].append(run)
        else:
            groups.append([run])
    groups = [g for g in groups if max(b - a for a, b, _ in g) > GAP_WARN_STEPS]
    who = f"{series.namespace}/{series.pod}/{series.container}"
    out = []
    for g in groups[:MAX_GAP_WARNINGS]:
        a = min(r[0] for r in g)
        b = max(r[1] for r in g)
        metrics = ", ".join(f"{name} ({bb - aa} steps from step {aa})" if len(g) > 1 else name
                            for aa, bb, name in g)
        out.append(f"{metrics} of {who}: no value for {b - a} steps ({_span((b - a) * step)}) from "
                   f"{_when(start + a * step)} (step {a}); the last value is held")
    if len(groups) > MAX_GAP_WARNINGS:
        rest = groups[MAX_GAP_WARNINGS:]
        total = sum(max(r[1] for r in g) - min(r[0] for r in g) for g in rest)
        out.append(f"{who}: {len(rest)} more gaps longer than {GAP_WARN_STEPS} steps ({total} steps in all, "
                   f"from {_when(start + rest[0][0][0] * step)}); the last value is held")
    return out


def settle_all(containers: list[ContainerSeries], names: dict[str, str], start: float, step: float, *,
               interval: str = "scrape interval") -> list[str]:
    """``settle`` every instance; returns the warnings. When most steps of the instances' lives
    have no sample (the step is finer than the ``interval`` the source sampled at), the values
    are held all the same but one warning says so instead of one per gap."""
    life = seen_steps = 0
    for c in containers:
        seen = np.flatnonzero(c.seen())
        if seen.size:
            life += int(seen[-1] - seen[0] + 1)
            seen_steps += int(seen.size)
    out: list[str] = []
    sparse = life > 0 and seen_steps < 0.5 * life
    for c in containers:
        warnings = settle(c, names, start, step)
        if not sparse:
            out.extend(warnings)
    if sparse:
        out.append(f"{100 * (life - seen_steps) / life:.0f}% of the steps in the containers' lives have no sample: "
                   f"the step ({_span(step)}) is likely shorter than the {interval}; the last value is held "
                   f"(a step of at least the {interval} reads the history as recorded)")
    return out


__all__ = ["ContainerKey", "ContainerSeries", "GAP_WARN_STEPS", "HistoryImportError", "MAX_GAP_WARNINGS",
           "PodKey", "PodRecord", "RecordedHistory", "hold_gaps", "settle", "settle_all"]
