"""Pressure Stall Information (PSI): the kernel's ``*.pressure`` files, its running averages,
and the shapes the kubelet reports them in (KEP-4205, ``KubeletPSI``, GA and locked on in 1.36).

The file format (``cpu.pressure``, ``memory.pressure``, ``io.pressure`` of a cgroup v2
directory, ``/proc/pressure/*`` for the system)::

    some avg10=0.00 avg60=0.00 avg300=0.00 total=0
    full avg10=0.00 avg60=0.00 avg300=0.00 total=0

``avgN`` is the percentage of wall time stalled, as an exponentially decaying average over
about N seconds; ``total`` the cumulative stall time in **microseconds** (kernel/sched/psi.c
``psi_show`` divides its nanoseconds by NSEC_PER_USEC). ``some``: at least one task of the
group stalled; ``full``: every non-idle task stalled at once. CPU ``full`` is undefined for the
system as a whole: the root reports it as zeros, cgroups report it (Linux 5.13+).

The Summary API (``/stats/summary``, kubelet stats v1alpha1) carries it as ``psi`` in
``CPUStats``, ``MemoryStats`` and ``IOStats`` (``io`` of the node, of a pod and of a
container), ``{"full": {"total", "avg10", "avg60", "avg300"}, "some": {...}}``; ``total`` is
the kernel's value unchanged (cAdvisor's path: microseconds, although the Go comment says
nanoseconds). cAdvisor's ``/metrics/cadvisor`` counters are ``total`` in seconds:
``container_pressure_{cpu,memory,io}_waiting_seconds_total`` (``some``) and
``..._stalled_seconds_total`` (``full``).

The averages (psi.c ``update_averages``/``calc_avgs``): every 2 s (``PSI_FREQ``) the stall
time of the period becomes a percentage ``pct = time * 100 / period`` in fixed point
(``FSHIFT`` 11 bits) and each average moves towards it by ``calc_load(avg, EXP_w, pct)``,
``EXP_10s = 1677``, ``EXP_60s = 1981``, ``EXP_300s = 2034`` (``FIXED_1 / exp(2s/w)``); periods
without activity decay by ``calc_load_n``. ``KernelAverages`` does exactly that, in integers;
``decay_average`` is the same recurrence in float over many rows and ticks at once (numpy),
for the simulator, which samples stall per tick: within a tick the stall fraction is
constant, so ``tick / 2`` periods of one percentage decay the average by ``(EXP/FIXED_1) **
(tick/2)``. Samples are whole percentages as the kernel's; the fixed point's rounding of each
step (a fraction of 1/2048 per period) is not modelled there.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

# -- kernel/sched/psi.c and include/linux/sched/loadavg.h constants -------------------------------

FSHIFT = 11
FIXED_1 = 1 << FSHIFT
PSI_PERIOD_SECONDS = 2.0                     # PSI_FREQ = 2*HZ+1 jiffies: "2 sec intervals"
EXP_10S = 1677                               # 1/exp(2s/10s) as fixed point
EXP_60S = 1981                               # 1/exp(2s/60s)
EXP_300S = 2034                              # 1/exp(2s/300s)
EXPS = (EXP_10S, EXP_60S, EXP_300S)
WINDOWS = ("avg10", "avg60", "avg300")
RESOURCES = ("cpu", "memory", "io")


class PressureParseError(ValueError):
    """A ``*.pressure`` file that is not in the kernel's format."""


@dataclass(frozen=True)
class PSIData:
    """One line: averages in percent, ``total`` in microseconds."""
    total: int = 0
    avg10: float = 0.0
    avg60: float = 0.0
    avg300: float = 0.0

    def as_dict(self) -> dict[str, float | int]:
        return {"total": self.total, "avg10": self.avg10, "avg60": self.avg60, "avg300": self.avg300}


@dataclass(frozen=True)
class PSIStats:
    """kubelet stats v1alpha1 ``PSIStats``: ``some`` and ``full``."""
    some: PSIData = field(default_factory=PSIData)
    full: PSIData = field(default_factory=PSIData)

    def as_dict(self) -> dict[str, dict[str, float | int]]:
        return {"full": self.full.as_dict(), "some": self.some.as_dict()}


@dataclass(frozen=True)
class ResourcePressure:
    """The three pressure files of one cgroup (None: that file is missing)."""
    cpu: PSIStats | None = None
    memory: PSIStats | None = None
    io: PSIStats | None = None


# -- the file format ---------------------------------------------------------------------------------

_LINE = re.compile(r"^(some|full) avg10=(\d+\.\d\d) avg60=(\d+\.\d\d) avg300=(\d+\.\d\d) total=(\d+)$")


def parse_pressure(text: str) -> PSIStats:
    """A ``*.pressure`` file's text. ``some`` is required; a missing ``full`` (kernels before
    5.13 have none in ``cpu.pressure``) is zeros, as runc reads it."""
    lines: dict[str, PSIData] = {}
    for raw in text.splitlines():
        line = raw.strip()
        if not line:
            continue
        m = _LINE.match(line)
        if m is None:
            raise PressureParseError(f"not a pressure line: {raw!r}")
        kind = m.group(1)
        if kind in lines:
            raise PressureParseError(f"{kind!r} given twice")
        lines[kind] = PSIData(total=int(m.group(5)), avg10=float(m.group(2)), avg60=float(m.group(3)),
                              avg300=float(m.group(4)))
    if "some" not in lines:
        raise PressureParseError("no 'some' line")
    return PSIStats(some=lines["some"], full=lines.get("full", PSIData()))


def format_pressure(stats: PSIStats) -> str:
    """The text the kernel writes for ``stats`` (averages with two decimals)."""
    return "".join(f"{kind} avg10={d.avg10:.2f} avg60={d.avg60:.2f} avg300={d.avg300:.2f} total={d.total}\n"
                   for kind, d in (("some", stats.some), ("full", stats.full)))


def read_pressure(directory: Path) -> ResourcePressure | None:
    """The ``cpu.pressure``, ``memory.pressure`` and ``io.pressure`` of a cgroup v2 directory
    (a file missing or unreadable is None); None when none of them is there (cgroup v1, a
    kernel without CONFIG_PSI or booted ``psi=0``: the kubelet then reports no ``psi``)."""
    found: dict[str, PSIStats | None] = {}
    for resource in RESOURCES:
        try:
            found[resource] = parse_pressure((directory / f"{resource}.pressure").read_text())
        except (OSError, PressureParseError):
            found[resource] = None
    if all(v is None for v in found.values()):
        return None
    return ResourcePressure(cpu=found["cpu"], memory=found["memory"], io=found["io"])


# -- the kernel's averages, exactly ------------------------------------------------------------------

def calc_load(load: int, exp: int, active: int) -> int:
    """loadavg.h ``calc_load``: one step of the fixed-point decaying average (rounded up
    while rising)."""
    newload = load * exp + active * (FIXED_1 - exp)
    if active >= load:
        newload += FIXED_1 - 1
    return newload // FIXED_1


def fixed_power_int(x: int, frac_bits: int, n: int) -> int:
    """``x ** n`` in fixed point with ``frac_bits`` fraction bits (loadavg.c)."""
    result = 1 << frac_bits
    if n:
        while True:
            if n & 1:
                result = (result * x + (1 << (frac_bits - 1))) >> frac_bits
            n >>= 1
            if not n:
                break
            x = (x * x + (1 << (frac_bits - 1))) >> frac_bits
    return result


def calc_load_n(load: int, exp: int, active: int, n: int) -> int:
    return calc_load(load, fixed_power_int(exp, FSHIFT, n), active)


def load_percent(avg: int) -> float:
    """An average as ``psi_show`` prints it: ``LOAD_INT.LOAD_FRAC`` (two decimals, truncated)."""
    whole = avg >> FSHIFT
    frac = ((avg & (FIXED_1 - 1)) * 100) >> FSHIFT
    return whole + frac / 100


class KernelAverages:
    """One state's three averages as ``calc_avgs`` keeps them (fixed point)."""

    def __init__(self) -> None:
        self.avg = [0, 0, 0]

    def update(self, stall_ns: int, period_ns: int, missed_periods: int = 0) -> None:
        """A sampling period of ``period_ns`` with ``stall_ns`` stalled (capped at the period,
        as ``update_averages`` punts overage), after ``missed_periods`` idle ones."""
        if missed_periods:
            self.avg = [calc_load_n(a, e, 0, missed_periods) for a, e in zip(self.avg, EXPS, strict=True)]
        pct = (min(stall_ns, period_ns) * 100 // period_ns) * FIXED_1
        self.avg = [calc_load(a, e, pct) for a, e in zip(self.avg, EXPS, strict=True)]

    def percents(self) -> tuple[float, float, float]:
        a10, a60, a300 = (load_percent(a) for a in self.avg)
        return a10, a60, a300


# -- the same recurrence over arrays (the simulator) -------------------------------------------------

def tick_decay(tick: float) -> np.ndarray:
    """Per-window decay of one simulator tick: ``(EXP/FIXED_1) ** (tick / 2s)``, shape (3,)."""
    return (np.array(EXPS, dtype=float) / FIXED_1) ** (tick / PSI_PERIOD_SECONDS)


def decay_average(avg: np.ndarray, fractions: np.ndarray, tick: float) -> np.ndarray:
    """Averages (rows x 3, percent) after the ticks of ``fractions`` (rows x T, stalled
    fraction of each tick in [0, 1]): ``a**T * avg + (1 - a) * sum_j a**(T-1-j) * 100 x_j``
    per window, the kernel's recurrence summed in closed form."""
    t = fractions.shape[1]
    a = tick_decay(tick)                                           # (3,)
    powers = a[:, None] ** np.arange(t - 1, -1, -1, dtype=float)[None, :]   # (3, T), underflows to 0
    # the kernel's sample is a whole percentage (div_u64(time * 100, period))
    weighted = np.floor(fractions * 100.0 + 1e-9) @ powers.T       # (rows, 3)
    return avg * (a ** t)[None, :] + (1.0 - a)[None, :] * weighted


# -- the stall model of simulated containers ---------------------------------------------------------

# memory: reclaim stall starts when the working set passes MEMORY_KNEE of memory.max and rises
# quadratically to MEMORY_SOME_AT_LIMIT at the limit. Why: below the knee the kernel reclaims
# cold page cache in the background and no task waits; near the limit every charge enters
# direct reclaim and refaults working-set pages, so the waiting grows faster than linearly with
# the shrinking headroom. 0.6 at the limit is the "some" stall rate AEP-9926 measured for a
# cohort stalled near its limit (~0.6); ``full`` is a quarter of it, low as the AEP observes
# (memory stall is accounted per cpu, so another runnable task on the cpu keeps it from full).
MEMORY_KNEE = 0.85
MEMORY_SOME_AT_LIMIT = 0.6
MEMORY_FULL_SHARE = 0.25
SINGLE_THREAD_MILLI = 1000.0


def cpu_stall(want: np.ndarray, allowed: np.ndarray, used: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(some, full) stalled fractions of wall time from cpu demand ``want``, what the CFS
    quotas allow and what the node's cpu gave (millicores, same shapes).

    Throttled, the cgroup has no task on any cpu while its tasks stay runnable: both ``some``
    and ``full`` (``1 - allowed/want`` of the time). Waiting for a contended node cpu the rest
    of the time (``1 - used/allowed``) is ``some``; it is ``full`` too only for a container of
    one runnable thread (demand up to one core), since a multi-threaded container rarely has
    every thread waiting at once. So ``some = 1 - used/want``."""
    safe = np.where(want > 0, want, 1.0)
    some = np.where(want > 0, np.clip(1.0 - used / safe, 0.0, 1.0), 0.0)
    throttled = np.where(want > 0, np.clip(1.0 - allowed / safe, 0.0, 1.0), 0.0)
    full = np.where(want <= SINGLE_THREAD_MILLI, some, throttled)
    return some, full


def memory_stall(working_set: np.ndarray, limit: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(some, full) stalled fractions from the working set against its limit (inf: none)."""
    finite = np.isfinite(limit) & (limit > 0)
    ratio = np.where(finite, working_set / np.where(finite, limit, 1.0), 0.0)
    x = np.clip((ratio - MEMORY_KNEE) / (1.0 - MEMORY_KNEE), 0.0, 1.0)
    some = MEMORY_SOME_AT_LIMIT * x * x
    return some, some * MEMORY_FULL_SHARE


def psi_stats(total_ns: int, averages: np.ndarray | tuple[float, float, float]) -> PSIData:
    """A PSIData from a cumulative stall in nanoseconds and three averages (percent), rounded
    as the kernel prints them."""
    a10, a60, a300 = (math.floor(float(v) * 100 + 1e-9) / 100 for v in averages)
    return PSIData(total=int(total_ns) // 1000, avg10=a10, avg60=a60, avg300=a300)


__all__ = [
    "EXPS", "EXP_10S", "EXP_300S", "EXP_60S", "FIXED_1", "FSHIFT", "KernelAverages", "MEMORY_KNEE",
    "MEMORY_SOME_AT_LIMIT", "PSIData", "PSIStats", "PSI_PERIOD_SECONDS", "PressureParseError",
    "RESOURCES", "ResourcePressure", "calc_load",
    "read_pressure", "calc_load_n", "cpu_stall", "decay_average",
    "fixed_power_int", "format_pressure", "load_percent", "memory_stall", "parse_pressure", "psi_stats",
    "tick_decay",
]
