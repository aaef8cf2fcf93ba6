"""Resource estimators, composed as decorators (seed 003; ``logic/estimator.go`` upstream).

An estimator maps an aggregate container state (usage histograms plus sample counts and times)
to ``{"cpu": millicores, "memory": bytes}``. The recommender builds three chains from these
pieces, innermost first::

    percentile(p)  ->  margin(+15%)  ->  [confidence multiplier]  ->  minimum(25m / 250Mi shared)

For a batch workload (kvert, ``vpa.kvert.io/workload: batch``) a ``CpuMeanEstimator`` wraps
each percentile estimator: the CPU target is the mean of the usage histogram instead of a
percentile, and the CPU bounds are widened to include it; memory stays the percentile of peaks.

Amounts are integers like upstream's ``ResourceAmount``: every float result is truncated toward
zero (``ResourceAmount(x)`` in Go), negative results become 0 and results beyond 1e14 become
1e14 (``MaxResourceAmount``). A percentile of CPU cores becomes millicores as ``int(cores * 1000)``.

Each ``estimate`` can append its intermediate result to a ``trace`` list, which is how a
recommendation explains itself (``kvert vpa recommend -o table`` prints it).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Protocol

import numpy as np

from kvert.vpa.histogram import Histogram

CPU = "cpu"
MEMORY = "memory"
RESOURCES = (CPU, MEMORY)
MAX_RESOURCE_AMOUNT = 10**14   # model.MaxResourceAmount
DAY = 86400.0

Resources = dict[str, int]
Trace = list[tuple[str, Resources]]


class AggregateLike(Protocol):
    """What estimators read from an aggregate (``model.AggregateContainerState``); read-only, so
    an aggregate holding a ``DecayingHistogram`` is one."""

    @property
    def cpu(self) -> Histogram: ...

    @property
    def memory(self) -> Histogram: ...

    @property
    def first_sample_start_us(self) -> int | None: ...

    @property
    def last_sample_start_us(self) -> int | None: ...

    @property
    def total_samples_count(self) -> int: ...


class HistogramRows(Protocol):
    """What ``estimate_rows`` reads from one kind of histogram of every row
    (``histogram.HistogramBank``)."""

    def percentiles(self, rows: np.ndarray, percentiles: np.ndarray) -> np.ndarray: ...

    def means(self, rows: np.ndarray) -> np.ndarray: ...


class AggregateRows(Protocol):
    """What ``estimate_rows`` reads from a bank of aggregates (``aggregate.AggregateBank``)."""

    @property
    def cpu(self) -> HistogramRows: ...

    @property
    def memory(self) -> HistogramRows: ...

    def confidence(self, rows: np.ndarray, interval: np.ndarray | float) -> np.ndarray: ...


def resource_amount(value: float) -> int:
    """``resourceAmountFromFloat``: truncate toward zero, clamp to [0, 1e14]. NaN -> 0."""
    if not value > 0:   # negative, zero or NaN
        return 0
    if value > MAX_RESOURCE_AMOUNT:
        return MAX_RESOURCE_AMOUNT
    return int(value)


def scale_resource(amount: int, factor: float) -> int:
    """``ScaleResource``: ``resource_amount(amount * factor)``."""
    return resource_amount(float(amount) * factor)


def cpu_amount_from_cores(cores: float) -> int:
    """``CPUAmountFromCores``: millicores, truncated."""
    return resource_amount(cores * 1000.0)


def get_confidence(state: AggregateLike, interval: float = DAY) -> float:
    """How much history backs an aggregate: ``min(lifespan / interval, samples / minutes(interval))``.

    For one sample per minute over N days (interval 24h) this is N. Lifespan is the time from
    the first to the last CPU sample; the count is of CPU samples.
    """
    if state.first_sample_start_us is None or state.last_sample_start_us is None:
        lifespan = 0.0
    else:
        lifespan = (state.last_sample_start_us - state.first_sample_start_us) / 1e6 / interval
    samples = state.total_samples_count / (interval / 60.0)
    return min(lifespan, samples)


class ResourceEstimator:
    """``ResourceEstimator``: ``estimate(state) -> {"cpu": millicores, "memory": bytes}``."""

    name = "estimator"

    def estimate(self, state: AggregateLike, trace: Trace | None = None) -> Resources:
        raise NotImplementedError

    def _record(self, trace: Trace | None, label: str, result: Resources) -> Resources:
        if trace is not None:
            trace.append((label, dict(result)))
        return result


class ConstEstimator(ResourceEstimator):
    """Always the same resources (a fake for tests)."""

    def __init__(self, resources: Mapping[str, int]) -> None:
        self.resources = dict(resources)

    def estimate(self, state: AggregateLike, trace: Trace | None = None) -> Resources:
        return self._record(trace, "constant", dict(self.resources))


class PercentileEstimator(ResourceEstimator):
    """A percentile of the CPU usage distribution and of the memory peaks distribution."""

    def __init__(self, cpu_percentile: float, memory_percentile: float) -> None:
        self.cpu_percentile = cpu_percentile
        self.memory_percentile = memory_percentile

    def estimate(self, state: AggregateLike, trace: Trace | None = None) -> Resources:
        result = {CPU: cpu_amount_from_cores(state.cpu.percentile(self.cpu_percentile)),
                  MEMORY: resource_amount(state.memory.percentile(self.memory_percentile))}
        label = f"percentile cpu p{_pct(self.cpu_percentile)} / memory peaks p{_pct(self.memory_percentile)}"
        return self._record(trace, label, result)


CPU_MEAN_BOUNDS = ("target", "lower", "upper")


class CpuMeanEstimator(ResourceEstimator):
    """Batch workloads (seed 002: they care about throughput, not latency, so their CPU is sized
    by the mean CPU consumption rather than a high percentile): the base estimator's memory, and
    for CPU the mean of the (decaying) usage histogram (``Histogram.mean``). ``bound`` says how:
    ``"target"`` takes the mean; ``"lower"`` the smaller of the base's CPU and the mean;
    ``"upper"`` the larger, so the bounds still bracket the target."""

    def __init__(self, base: ResourceEstimator, bound: str = "target") -> None:
        if bound not in CPU_MEAN_BOUNDS:
            raise ValueError(f"bound must be one of {', '.join(CPU_MEAN_BOUNDS)}")
        self.base = base
        self.bound = bound

    def estimate(self, state: AggregateLike, trace: Trace | None = None) -> Resources:
        result = dict(self.base.estimate(state, trace))
        mean = cpu_amount_from_cores(state.cpu.mean())
        if self.bound == "target":
            result[CPU] = mean
        elif self.bound == "lower":
            result[CPU] = min(result[CPU], mean)
        else:
            result[CPU] = max(result[CPU], mean)
        how = {"target": "cpu mean", "lower": "cpu at most the mean", "upper": "cpu at least the mean"}[self.bound]
        return self._record(trace, f"{how} {_show(CPU, mean)} (batch)", result)


class MarginEstimator(ResourceEstimator):
    """``WithMargin``: each amount plus ``int(amount * fraction)`` (the safety margin).
    ``cpu_margin_fraction`` (kvert) gives CPU a margin of its own (None: the same)."""

    def __init__(self, margin_fraction: float, base: ResourceEstimator,
                 cpu_margin_fraction: float | None = None) -> None:
        self.margin_fraction = margin_fraction
        self.cpu_margin_fraction = margin_fraction if cpu_margin_fraction is None else cpu_margin_fraction
        self.base = base

    def estimate(self, state: AggregateLike, trace: Trace | None = None) -> Resources:
        original = self.base.estimate(state, trace)
        fractions = {CPU: self.cpu_margin_fraction}
        result = {r: a + scale_resource(a, fractions.get(r, self.margin_fraction)) for r, a in original.items()}
        label = f"margin +{_pct(self.margin_fraction)}%"
        if self.cpu_margin_fraction != self.margin_fraction:
            label = f"margin cpu +{_pct(self.cpu_margin_fraction)}%, memory +{_pct(self.margin_fraction)}%"
        return self._record(trace, label, result)


class ConfidenceMultiplier(ResourceEstimator):
    """``WithConfidenceMultiplier``: each amount times ``(1 + multiplier / confidence) ** exponent``.

    With little history the factor is far from 1: the upper bound (1, +1) is doubled after a
    day and tripled after 12 hours (infinite with no history, capped at 1e14); the lower bound
    (0.001, -2) is 0 with no history and close to the base amount within an hour. CPU and memory
    may measure confidence over different intervals (``--confidence-interval-cpu/-memory``).
    """

    def __init__(self, multiplier: float, exponent: float, base: ResourceEstimator,
                 cpu_interval: float = DAY, memory_interval: float = DAY) -> None:
        self.multiplier = multiplier
        self.exponent = exponent
        self.base = base
        self.intervals = {CPU: cpu_interval, MEMORY: memory_interval}

    def factor(self, state: AggregateLike, resource: str) -> float:
        confidence = get_confidence(state, self.intervals.get(resource, DAY))
        if confidence == 0:
            ratio = math.inf
        else:
            ratio = 1.0 + self.multiplier / confidence
        try:
            return math.pow(ratio, self.exponent)
        except OverflowError:
            return math.inf

    def estimate(self, state: AggregateLike, trace: Trace | None = None) -> Resources:
        original = self.base.estimate(state, trace)
        result: Resources = {}
        for r, a in original.items():
            f = self.factor(state, r)
            # 0 * inf is NaN in Go too; its int64 conversion is garbage that the minimum replaces.
            result[r] = 0 if (a == 0 and math.isinf(f)) else scale_resource(a, f)
        label = (f"confidence x(1 + {self.multiplier:g}/confidence)^{self.exponent:g} "
                 f"(confidence {get_confidence(state, self.intervals[CPU]):.4g})")
        return self._record(trace, label, result)


class MinResourcesEstimator(ResourceEstimator):
    """``WithMinResources``: each amount raised to at least the given minimum."""

    def __init__(self, min_resources: Mapping[str, int], base: ResourceEstimator) -> None:
        self.min_resources = dict(min_resources)
        self.base = base

    def estimate(self, state: AggregateLike, trace: Trace | None = None) -> Resources:
        original = self.base.estimate(state, trace)
        result = {r: max(a, self.min_resources.get(r, 0)) for r, a in original.items()}
        label = "minimum " + ", ".join(f"{r} {_show(r, self.min_resources.get(r, 0))}" for r in original)
        return self._record(trace, label, result)


# -- every aggregate at once -----------------------------------------------------------------------

BOUND_ORDER = ("target", "lowerBound", "upperBound")


@dataclass
class RowParameters:
    """The estimator chains' settings, one entry per aggregate row (see ``estimate_rows``);
    percentiles are (rows x 3) in ``BOUND_ORDER``."""

    cpu_percentiles: np.ndarray
    memory_percentiles: np.ndarray
    margin: np.ndarray
    upper_multiplier: np.ndarray
    upper_exponent: np.ndarray
    lower_multiplier: np.ndarray
    lower_exponent: np.ndarray
    cpu_interval: np.ndarray
    memory_interval: np.ndarray
    min_cpu: np.ndarray          # millicores: the container's share of the pod minimum
    min_memory: np.ndarray       # bytes
    cpu_mean: np.ndarray         # bool: a batch workload's row (CpuMeanEstimator)
    cpu_margin: np.ndarray       # CPU's margin (MarginEstimator's cpu_margin_fraction)

    @classmethod
    def empty(cls, n: int) -> RowParameters:
        return cls(cpu_percentiles=np.zeros((n, 3)), memory_percentiles=np.zeros((n, 3)),
                   margin=np.zeros(n), upper_multiplier=np.zeros(n), upper_exponent=np.zeros(n),
                   lower_multiplier=np.zeros(n), lower_exponent=np.zeros(n), cpu_interval=np.zeros(n),
                   memory_interval=np.zeros(n), min_cpu=np.zeros(n, dtype=np.int64),
                   min_memory=np.zeros(n, dtype=np.int64), cpu_mean=np.zeros(n, dtype=bool),
                   cpu_margin=np.zeros(n))

    def take(self, rows: np.ndarray) -> RowParameters:
        return RowParameters(*(getattr(self, f.name)[rows] for f in fields(self)))

    def put(self, rows: np.ndarray, values: RowParameters) -> None:
        for f in fields(self):
            getattr(self, f.name)[rows] = getattr(values, f.name)

    def grown(self, n: int) -> RowParameters:
        out = RowParameters.empty(n)
        old = self.margin.size
        out.put(np.arange(old), self)
        return out


def resource_amounts(values: np.ndarray) -> np.ndarray:
    """``resource_amount`` elementwise (int64)."""
    with np.errstate(invalid="ignore"):
        clipped = np.where(values > MAX_RESOURCE_AMOUNT, MAX_RESOURCE_AMOUNT, values)
        return np.where(values > 0, np.trunc(np.nan_to_num(clipped)), 0).astype(np.int64)


def estimate_rows(bank: AggregateRows, rows: np.ndarray, p: RowParameters) -> np.ndarray:
    """The three chains of ``recommendation.create_estimators`` with the pod minimum, for the
    given rows of an ``AggregateBank`` at once: (rows x 3 bounds x [cpu millicores, memory
    bytes]) int64, equal to what the estimator objects compute one aggregate at a time.
    Batch rows (``p.cpu_mean``) take the CPU mean of their histograms (``CpuMeanEstimator``),
    computed for those rows at once."""
    cores = bank.cpu.percentiles(rows, p.cpu_percentiles)
    batch = np.flatnonzero(p.cpu_mean)
    if batch.size:
        mean = bank.cpu.means(rows[batch])
        cores[batch, 0] = mean
        cores[batch, 1] = np.minimum(cores[batch, 1], mean)
        cores[batch, 2] = np.maximum(cores[batch, 2], mean)
    cpu = resource_amounts(cores * 1000.0)
    memory = resource_amounts(bank.memory.percentiles(rows, p.memory_percentiles))
    out = np.stack([cpu, memory], axis=2)                         # rows x bounds x resources
    out = out + resource_amounts(out * np.stack([p.cpu_margin, p.margin], axis=1)[:, None, :])
    confidence = np.stack([bank.confidence(rows, p.cpu_interval), bank.confidence(rows, p.memory_interval)], axis=1)
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        for k, mult, exp in ((1, p.lower_multiplier, p.lower_exponent), (2, p.upper_multiplier, p.upper_exponent)):
            ratio = np.where(confidence == 0, np.inf, 1.0 + mult[:, None] / confidence)
            factor = np.power(ratio, exp[:, None])
            a = out[:, k, :]
            out[:, k, :] = np.where((a == 0) & np.isinf(factor), 0, resource_amounts(a * factor))
    minimum = np.stack([p.min_cpu, p.min_memory], axis=1)[:, None, :]
    return np.maximum(out, minimum)


def _show(resource: str, amount: int) -> str:
    return f"{amount}m" if resource == CPU else f"{amount} bytes"


def _pct(fraction: float) -> str:
    return f"{fraction * 100:g}"
