"""Exponential and decaying histograms: the recommender's memory of usage (numpy arrays).

The semantics are those of the VPA recommender (``pkg/recommender/util/histogram.go``,
``histogram_options.go`` and ``decaying_histogram.go`` in kubernetes/autoscaler):

* **Buckets** grow exponentially: bucket ``n >= 1`` starts at
  ``first * (ratio**n - 1) / (ratio - 1)``; bucket 0 covers ``[0, first)``; the last bucket
  starts at or above ``max_value`` and has no upper end. A value falls into
  ``floor(log(value * (ratio - 1) / first + 1) / log(ratio))``, clamped to the last bucket.
  CPU uses first = 0.01 core, max = 1000 cores; memory first = 1e7 bytes, max = 1e12 bytes;
  both ratio 1.05 (5% growth) and epsilon 0.0001 (= 0.001 * minSampleWeight 0.1): 176 buckets.
* **Percentile(p)** walks the buckets from the first to the last non-empty one, summing
  weights, and stops at the first bucket where the running sum reaches ``p * totalWeight``;
  it returns that bucket's *end* (the start of the next bucket), or the start of the last
  bucket. An empty histogram (first non-empty bucket weighs less than epsilon) gives 0.
* ``totalWeight`` is kept separately from the buckets, as upstream does (it is what a
  percentile threshold is computed from and what a checkpoint stores).
* **Decay**: a sample's weight is multiplied by ``2 ** ((t - reference) / halfLife)``, so a
  sample loses half its importance per half-life relative to newer ones. The reference time is
  a multiple of the half-life (Go's ``Time.Round``, counted from Go's zero time) and is moved
  forward -- rescaling every weight by a power of two -- when a sample would be more than
  100 half-lives past it, so the factors never overflow.
* **Mean** (kvert's, for batch workloads): ``sum(weight * value) / sum(weight)`` over the
  buckets, where a bucket's value is its midpoint (the last bucket, which has no end: its
  start), the histogram's best guess of the samples it holds (a percentile answers a bucket's
  end, an upper estimate); 0 for an empty histogram. With decay, newer samples weigh more in
  it, as in the percentiles.
* **Checkpoints** (``HistogramCheckpoint``): bucket weights as integers scaled so that the
  largest is 10000 (``MaxCheckpointWeight``), zero buckets dropped, plus the exact
  ``totalWeight`` and ``referenceTimestamp``. Loading spreads ``totalWeight`` over the stored
  buckets in proportion to their integers, then drops end buckets left below epsilon from the
  non-empty range (as upstream does since kubernetes/autoscaler#7726).

kvert's additions: everything takes arrays (``add`` files a million samples with one
``bincount``), and ``to_checkpoint`` can be asked to keep chosen percentiles exact through
the integer rounding, ties included (see ``Histogram.to_checkpoint``).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Self

import numpy as np

from kvert.vpa.samples import format_time_us, parse_time_us

MAX_CHECKPOINT_WEIGHT = 10000   # util.MaxCheckpointWeight
MAX_DECAY_EXPONENT = 100        # util.maxDecayExponent
# Go's zero time (January 1, year 1, UTC) in Unix seconds: Time.Round counts from there.
GO_ZERO_TIME = -62135596800
_UINT32_MAX = 2**32 - 1


@dataclass(frozen=True)
class ExponentialOptions:
    """``NewExponentialHistogramOptions(maxValue, firstBucketSize, ratio, epsilon)``."""

    max_value: float
    first_bucket_size: float
    ratio: float
    epsilon: float
    num_buckets: int = field(init=False)
    starts: np.ndarray = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.max_value <= 0 or self.first_bucket_size <= 0 or self.epsilon <= 0 or self.ratio <= 1:
            raise ValueError("maxValue, firstBucketSize and epsilon must be > 0.0, ratio must be > 1.0")
        n = int(math.ceil(_log(self.ratio, self.max_value * (self.ratio - 1) / self.first_bucket_size + 1))) + 1
        object.__setattr__(self, "num_buckets", n)
        starts = np.array([self._start(i) for i in range(n)], dtype=np.float64)
        starts.setflags(write=False)
        object.__setattr__(self, "starts", starts)

    def _start(self, bucket: int) -> float:
        if bucket == 0:
            return 0.0
        return self.first_bucket_size * (math.pow(self.ratio, bucket) - 1) / (self.ratio - 1)

    def bucket_start(self, bucket: int) -> float:
        if not 0 <= bucket < self.num_buckets:
            raise IndexError(f"index {bucket} out of range [0..{self.num_buckets - 1}]")
        return float(self.starts[bucket])

    def find_bucket(self, value: float) -> int:
        if value < self.first_bucket_size:
            return 0
        bucket = int(_log(self.ratio, value * (self.ratio - 1) / self.first_bucket_size + 1))
        return min(bucket, self.num_buckets - 1)

    def find_buckets(self, values: np.ndarray) -> np.ndarray:
        """``find_bucket`` for an array of values (NaN or negative values land in bucket 0).

        numpy's log may differ from the C library's in the last bit, so values whose bucket
        index comes out within 1e-9 of a whole number are recomputed exactly as ``find_bucket``
        computes them, keeping bucket boundaries where upstream has them."""
        v = np.asarray(values, dtype=np.float64)
        with np.errstate(invalid="ignore", divide="ignore"):
            raw = np.log(v * (self.ratio - 1) / self.first_bucket_size + 1) / math.log(self.ratio)
        raw = np.where(v < self.first_bucket_size, 0.0, raw)
        raw = np.nan_to_num(raw, nan=0.0, posinf=self.num_buckets - 1)
        out = np.minimum(raw.astype(np.int64), self.num_buckets - 1)
        near = np.flatnonzero((np.abs(raw - np.round(raw)) < 1e-9) & (v >= self.first_bucket_size))
        if near.size:
            distinct, inverse = np.unique(v[near], return_inverse=True)
            out[near] = np.array([self.find_bucket(float(x)) for x in distinct], dtype=np.int64)[inverse]
        return out


def _log(base: float, x: float) -> float:
    return math.log(x) / math.log(base)


def bucket_midpoints(options: ExponentialOptions) -> np.ndarray:
    """Each bucket's midpoint, the value a mean gives its samples (the last bucket, which has
    no end: its start)."""
    starts = options.starts
    return np.r_[(starts[:-1] + starts[1:]) / 2.0, starts[-1]]


def weighted_means(weights: np.ndarray, options: ExponentialOptions, empty: np.ndarray) -> np.ndarray:
    """The mean of each row of ``weights`` (rows x buckets): ``sum(w * value) / sum(w)`` with
    the buckets' midpoints (``bucket_midpoints``); 0 where ``empty``. One computation for a single
    histogram and a bank's rows, so both read the same."""
    values = bucket_midpoints(options)
    with np.errstate(invalid="ignore", divide="ignore"):
        means = np.sum(weights * values, axis=1) / np.sum(weights, axis=1)
    return np.where(empty | ~np.isfinite(means), 0.0, means)


def sequential_sum(values: np.ndarray, start: float = 0.0) -> float:
    """``start + v0 + v1 + ...`` in that order (numpy's ``sum`` pairs terms up, which rounds
    differently): the per-aggregate histogram and the bank must agree to the last bit."""
    acc = np.array([start], dtype=np.float64)
    np.add.at(acc, np.zeros(np.size(values), dtype=np.intp), values)
    return float(acc[0])


class CheckpointError(ValueError):
    """A histogram checkpoint that cannot be loaded (the message says why)."""


class Histogram:
    """``util.histogram``: bucket weights in a float64 array, plus totalWeight and the first and
    last non-empty bucket indices (maintained the way upstream maintains them)."""

    def __init__(self, options: ExponentialOptions) -> None:
        self.options = options
        self.weights = np.zeros(options.num_buckets, dtype=np.float64)
        self.total_weight = 0.0
        self.min_bucket = options.num_buckets - 1
        self.max_bucket = 0

    # -- adding and removing -------------------------------------------------------------------

    def add(self, values: np.ndarray | Sequence[float] | float,
            weights: np.ndarray | Sequence[float] | float = 1.0) -> None:
        """Add samples (values with weights, broadcast). Weights must be non-negative."""
        values = np.atleast_1d(np.asarray(values, dtype=np.float64))
        if values.size == 0:
            return
        w = np.broadcast_to(np.asarray(weights, dtype=np.float64), values.shape)
        if np.any(w < 0):
            raise ValueError("sample weight must be non-negative")
        self._add_buckets(self.options.find_buckets(values), w)

    def _add_buckets(self, buckets: np.ndarray, w: np.ndarray) -> None:
        # Sample after sample, as upstream's AddSample sums (HistogramBank adds the same way).
        np.add.at(self.weights, buckets, w)
        self.total_weight = sequential_sum(w, self.total_weight)
        touched = np.unique(buckets[w != 0])
        # Like AddSample: a bucket extends [min, max] only once it weighs at least epsilon.
        touched = touched[self.weights[touched] >= self.options.epsilon]
        if touched.size:
            self.min_bucket = min(self.min_bucket, int(touched[0]))
            self.max_bucket = max(self.max_bucket, int(touched[-1]))

    def subtract(self, values: np.ndarray | Sequence[float] | float,
                 weights: np.ndarray | Sequence[float] | float = 1.0) -> None:
        """Remove samples added before. A bucket or the total falling below epsilon becomes 0
        (``safeSubtract``); then the first/last non-empty buckets are recomputed."""
        values = np.atleast_1d(np.asarray(values, dtype=np.float64))
        if values.size == 0:
            return
        w = np.broadcast_to(np.asarray(weights, dtype=np.float64), values.shape)
        if np.any(w < 0):
            raise ValueError("sample weight must be non-negative")
        eps = self.options.epsilon
        sums = np.bincount(self.options.find_buckets(values), weights=w, minlength=self.options.num_buckets)
        touched = np.flatnonzero(sums)
        left = self.weights[touched] - sums[touched]
        self.weights[touched] = np.where(left < eps, 0.0, left)
        total = self.total_weight - sequential_sum(w)
        self.total_weight = 0.0 if total < eps else total
        self._update_min_max()

    def scale(self, factor: float) -> None:
        """Multiply every weight by ``factor`` (>= 0); percentiles do not change."""
        if factor < 0:
            raise ValueError("scale factor must be non-negative")
        if self.min_bucket <= self.max_bucket:
            self.weights[self.min_bucket:self.max_bucket + 1] *= factor
        self.total_weight *= factor
        self._update_min_max()

    def merge(self, other: Histogram) -> None:
        if other.options != self.options:
            raise ValueError("can't merge histograms with different options")
        if other.min_bucket <= other.max_bucket:
            self.weights[other.min_bucket:other.max_bucket + 1] += other.weights[other.min_bucket:other.max_bucket + 1]
        self.total_weight += other.total_weight
        self.min_bucket = min(self.min_bucket, other.min_bucket)
        self.max_bucket = max(self.max_bucket, other.max_bucket)

    def _trim_light_ends(self) -> None:
        """``_update_min_max`` when an end of [min, max] weighs less than epsilon (it moves
        nothing otherwise: the common case, checked without scanning every bucket)."""
        eps = self.options.epsilon
        if self.weights[self.min_bucket] < eps or self.weights[self.max_bucket] < eps:
            self._update_min_max()

    def _update_min_max(self) -> None:
        eps = self.options.epsilon
        heavy = np.flatnonzero(self.weights >= eps)
        last = self.options.num_buckets - 1
        # updateMinAndMaxBucket only moves the indices inwards from where they are.
        lo = heavy[heavy >= self.min_bucket]
        self.min_bucket = int(lo[0]) if lo.size else last
        hi = heavy[heavy <= self.max_bucket]
        self.max_bucket = int(hi[-1]) if hi.size else 0

    # -- reading --------------------------------------------------------------------------------

    def is_empty(self) -> bool:
        return bool(self.weights[self.min_bucket] < self.options.epsilon)

    def percentile_bucket(self, percentile: float) -> int | None:
        """The bucket ``percentile`` stops in, or None when the histogram is empty."""
        return self.percentile_buckets([percentile])[0]

    def percentile_buckets(self, percentiles: Iterable[float]) -> list[int | None]:
        ps = list(percentiles)
        if self.is_empty():
            return [None] * len(ps)
        lo, hi = self.min_bucket, self.max_bucket
        running = np.cumsum(self.weights[lo:hi])  # the partial sums upstream's loop computes, in order
        out: list[int | None] = []
        for p in ps:
            i = int(np.searchsorted(running, p * self.total_weight, side="left"))
            out.append(lo + i if i < running.size else hi)
        return out

    def percentile(self, percentile: float) -> float:
        """``Percentile(p)``: the end of the bucket the running weight reaches ``p * total`` in."""
        return self._bucket_value(self.percentile_bucket(percentile))

    def percentiles(self, percentiles: Iterable[float]) -> list[float]:
        return [self._bucket_value(b) for b in self.percentile_buckets(percentiles)]

    def mean(self) -> float:
        """The weighted mean of the samples, each at its bucket's midpoint (see the module
        docstring); 0 when the histogram is empty."""
        return float(weighted_means(self.weights[None, :], self.options, np.array([self.is_empty()]))[0])

    def _bucket_value(self, bucket: int | None) -> float:
        if bucket is None:
            return 0.0
        if bucket < self.options.num_buckets - 1:
            return float(self.options.starts[bucket + 1])
        return float(self.options.starts[bucket])

    def copy(self) -> Self:
        h = object.__new__(type(self))
        h.__dict__.update(self.__dict__)
        h.weights = self.weights.copy()
        return h

    def equals(self, other: Histogram) -> bool:
        if type(other) is not type(self) or other.options != self.options:
            return False
        if (self.min_bucket, self.max_bucket) != (other.min_bucket, other.max_bucket):
            return False
        lo, hi = self.min_bucket, self.max_bucket + 1
        return bool(np.all(np.abs(self.weights[lo:hi] - other.weights[lo:hi]) <= 1e-15))

    def __repr__(self) -> str:
        return (f"{type(self).__name__}(buckets={self.options.num_buckets}, min={self.min_bucket}, "
                f"max={self.max_bucket}, total={self.total_weight:.6g})")

    # -- checkpoints ----------------------------------------------------------------------------

    def to_checkpoint(self, keep_exact: Sequence[float] = ()) -> dict:
        """``SaveToChekpoint``: ``{"bucketWeights": {"index": int}, "totalWeight": float}``.

        Weights are scaled so that the heaviest bucket is 10000 and rounded half up, as upstream.
        ``keep_exact`` names percentiles that must land in the same bucket after a reload: if
        the rounding would move one of them (rare: a running sum sitting within 1/20000 of a
        threshold), the scale is raised tenfold until it no longer does (up to 10^9, within
        2^32 - 1, the field's range). Loaders, upstream's included, normalise by the sum, so any
        scale reads back the same way.

        No scale helps when a running sum *ties* a threshold: the stored ``totalWeight`` is the
        samples summed one by one, the buckets' sum may differ from it in the last bits, and the
        bucket a tie goes to then depends on those bits -- which proportional integers cannot
        carry (a loader gives the buckets ``totalWeight`` in proportion to them, so an exact
        half stays an exact half). Then the percentile's own bucket is made a few units heavier
        at the 10^9 scale (``_nudged``: tens of units at most, some 1e-8 of the heaviest) until
        the reload lands where the histogram does. The checkpoint stays upstream's: integer
        weights, totalWeight exact.
        """
        lo, hi = self.min_bucket, self.max_bucket
        if lo > hi:
            return {"bucketWeights": {}, "totalWeight": self.total_weight}
        part = self.weights[lo:hi + 1]
        heaviest = float(part.max())
        if heaviest <= 0:
            return {"bucketWeights": {}, "totalWeight": self.total_weight}
        wanted = self.percentile_buckets(keep_exact) if keep_exact else []
        scale = MAX_CHECKPOINT_WEIGHT
        while True:
            ints = np.floor(part * (scale / heaviest) + 0.5)
            ints = np.minimum(ints, _UINT32_MAX).astype(np.int64)
            if not keep_exact:
                break
            if _reloaded(self.options, lo, ints, self.total_weight).percentile_buckets(keep_exact) == wanted:
                break
            if scale * 10 > _UINT32_MAX:
                ints = _nudged(self.options, lo, ints, self.total_weight, keep_exact, wanted)
                break
            scale *= 10
        nz = np.flatnonzero(ints)
        return {"bucketWeights": {str(lo + int(i)): int(ints[i]) for i in nz},
                "totalWeight": self.total_weight}

    def load_checkpoint(self, checkpoint: dict) -> None:
        """``LoadFromCheckpoint``: add the checkpoint's samples to this histogram."""
        if checkpoint is None:
            raise CheckpointError("Cannot load from empty checkpoint")
        total = checkpoint.get("totalWeight") or 0.0
        if not isinstance(total, (int, float)) or isinstance(total, bool) or not math.isfinite(total):
            raise CheckpointError(f"totalWeight must be a number, not {total!r}")
        if total < 0:
            raise CheckpointError(f"Cannot load checkpoint with negative weight {total}")
        buckets: list[int] = []
        ints: list[int] = []
        for key, weight in (checkpoint.get("bucketWeights") or {}).items():
            try:
                bucket = int(key)
            except (TypeError, ValueError):
                raise CheckpointError(f"bucket index {key!r} is not an integer") from None
            if bucket >= self.options.num_buckets:
                raise CheckpointError(f"Checkpoint has bucket {bucket} that is exceeding histogram "
                                      f"buckets {self.options.num_buckets}")
            if bucket < 0:
                raise CheckpointError(f"Checkpoint has a negative bucket {bucket}")
            if isinstance(weight, bool) or not isinstance(weight, (int, float)) or weight < 0 \
                    or weight != int(weight):
                raise CheckpointError(f"bucket {bucket} weight must be a non-negative integer, not {weight!r}")
            buckets.append(bucket)
            ints.append(int(weight))
        s = sum(ints)
        if s == 0:
            return
        ratio = float(total) / float(s)
        idx = np.array(buckets, dtype=np.int64)
        np.add.at(self.weights, idx, np.array(ints, dtype=np.float64) * ratio)
        self.min_bucket = min(self.min_bucket, int(idx.min()))
        self.max_bucket = max(self.max_bucket, int(idx.max()))
        self.total_weight += float(total)
        # As upstream since kubernetes/autoscaler#7726: an end bucket the integers bring back
        # below epsilon leaves [min, max], so it cannot make the histogram read as empty.
        self._trim_light_ends()


_NUDGE_ROUNDS = 64     # attempts at settling ties before the plain integers are kept
_NUDGE_MARGIN = 2      # units of the 10^9 scale a nudged running sum clears a threshold by


def _reloaded(options: ExponentialOptions, lo: int, ints: np.ndarray, total: float) -> Histogram:
    """What ``load_checkpoint`` would rebuild from these integers (to check a scale)."""
    h = Histogram(options)
    s = int(ints.sum())
    if s == 0:
        return h
    nz = np.flatnonzero(ints)
    h.weights[lo + nz] = ints[nz].astype(np.float64) * (total / float(s))
    h.min_bucket, h.max_bucket = lo + int(nz[0]), lo + int(nz[-1])
    h.total_weight = total
    h._trim_light_ends()
    return h


def _nudged(options: ExponentialOptions, lo: int, ints: np.ndarray, total: float,
            percentiles: Sequence[float], wanted: list[int | None]) -> np.ndarray:
    """``ints`` (bucket ``lo`` first) with the wanted buckets made heavier until a reload puts
    each percentile in its wanted bucket; ``ints`` unchanged if that cannot be done.

    A loader gives bucket ``i`` the weight ``n_i * total / S`` (``S``: the integers' sum), so
    percentile ``p`` lands in bucket ``k`` when ``N_(k-1) < p * S <= N_k`` for the integers'
    running sums ``N``. Adding units to ``n_k`` serves both ways it can miss: it lifts ``N_k``
    by one per unit against ``p * S`` lifting by ``p`` (the reload stopped after ``k``), and it
    lifts ``p * S`` by ``p`` against an unchanged ``N_j`` for ``j < k`` (the reload stopped
    before ``k``). Each step adds what clears the threshold by ``_NUDGE_MARGIN`` units, far
    above the rounding of the loader's float arithmetic (a unit is at least 1/(176 * 10^9) of
    the total); the reload is checked again, since one nudge may disturb another percentile's
    tie."""
    n = ints.copy()
    ps = list(percentiles)
    for _ in range(_NUDGE_ROUNDS):
        got = _reloaded(options, lo, n, total).percentile_buckets(ps)
        miss = next(((p, w, g) for p, w, g in zip(ps, wanted, got) if w != g), None)
        if miss is None:
            return n
        p, want, at = miss
        if want is None or not 0.0 < p < 1.0 or not 0 <= want - lo < n.size:
            break
        s = int(n.sum())
        if at is not None and at < want:
            excess = int(n[:at - lo + 1].sum()) - p * s        # must fall below -margin
            units = math.ceil((excess + _NUDGE_MARGIN) / p)
        else:
            shortfall = p * s - int(n[:want - lo + 1].sum())  # must fall below -margin
            units = math.ceil((shortfall + _NUDGE_MARGIN) / (1.0 - p))
        n[want - lo] += max(1, units)
        if n[want - lo] > _UINT32_MAX:
            break
    return ints


def round_to_half_life(t: float, half_life: float) -> float:
    """Go's ``Time.Round(halfLife)``: the nearest multiple of the half-life counted from Go's zero
    time, halfway values rounding up. (For a whole number of hours that is a multiple from the
    Unix epoch too, since Go's zero time is a whole number of days before it.)"""
    q = math.floor((t - GO_ZERO_TIME) / half_life + 0.5)
    return GO_ZERO_TIME + q * half_life


class DecayingHistogram(Histogram):
    """``util.decayingHistogram``: newer samples weigh more, by ``2 ** (age / halfLife)``.

    ``reference`` (Unix seconds, None until the first sample) is the time whose samples get
    factor 1. Times are seconds (floats).
    """

    def __init__(self, options: ExponentialOptions, half_life: float) -> None:
        if half_life <= 0:
            raise ValueError("half-life must be positive")
        super().__init__(options)
        self.half_life = float(half_life)
        self.reference: float | None = None

    def add(self, values, weights=1.0, times=None) -> None:  # type: ignore[override]
        """Add samples measured at ``times`` (seconds; arrays broadcast together)."""
        values, w, times = self._samples(values, weights, times)
        if values.size == 0:
            return
        if np.any(w < 0):
            raise ValueError("sample weight must be non-negative")
        self._add_buckets(self.options.find_buckets(values), w * self.decay_factors(times))

    def subtract(self, values, weights=1.0, times=None) -> None:  # type: ignore[override]
        values, w, times = self._samples(values, weights, times)
        if values.size:
            super().subtract(values, w * self.decay_factors(times))

    @staticmethod
    def _samples(values, weights, times) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Values, weights and times as float arrays of one shape."""
        values = np.atleast_1d(np.asarray(values, dtype=np.float64))
        if values.size == 0:
            return values, values, values
        if times is None:
            raise TypeError("a decaying histogram needs the samples' times")
        return (values, np.broadcast_to(np.asarray(weights, dtype=np.float64), values.shape),
                np.broadcast_to(np.asarray(times, dtype=np.float64), values.shape))

    def decay_factors(self, times: np.ndarray) -> np.ndarray:
        """``decayFactor`` for each time, moving the reference forward first if a time is more
        than 100 half-lives past it (upstream moves it to the first such sample's time; a batch
        moves it to its latest time -- the same weights up to a common power of two)."""
        times = np.asarray(times, dtype=np.float64)
        if self.reference is None:
            # Upstream starts from Go's zero time, so its first sample always moves the reference.
            self.reference = round_to_half_life(float(times.flat[0]), self.half_life)
        latest = float(times.max())
        if latest > self.reference + self.half_life * MAX_DECAY_EXPONENT:
            self.shift_reference(latest)
        return np.exp2((times - self.reference) / self.half_life)

    def shift_reference(self, new_reference: float) -> None:
        """Move the reference to ``round(new_reference)``, rescaling all weights by 2^exponent."""
        new_reference = round_to_half_life(new_reference, self.half_life)
        if self.reference is not None:
            exponent = math.floor((self.reference - new_reference) / self.half_life + 0.5)
            self.scale(math.ldexp(1.0, exponent))
        self.reference = new_reference

    def merge(self, other: Histogram) -> None:  # type: ignore[override]
        if not isinstance(other, DecayingHistogram) or other.half_life != self.half_life:
            raise ValueError("can't merge decaying histograms with different half life periods")
        theirs = other.copy()      # shifting its reference must not touch the caller's
        if self.reference is None:
            self.reference = theirs.reference
        elif theirs.reference is not None:
            if self.reference < theirs.reference:
                self.shift_reference(theirs.reference)
            elif theirs.reference < self.reference:
                theirs.shift_reference(self.reference)
        super().merge(theirs)

    def equals(self, other: Histogram) -> bool:
        return (isinstance(other, DecayingHistogram) and other.half_life == self.half_life
                and other.reference == self.reference and super().equals(other))

    def to_checkpoint(self, keep_exact: Sequence[float] = ()) -> dict:
        cp = super().to_checkpoint(keep_exact)
        ref = None if self.reference is None else format_time_us(round(self.reference * 1e6))
        return {"referenceTimestamp": ref, **cp}

    def load_checkpoint(self, checkpoint: dict) -> None:
        super().load_checkpoint(checkpoint)
        ref = checkpoint.get("referenceTimestamp")
        if ref is not None:
            try:
                self.reference = parse_time_us(ref) / 1e6
            except ValueError as e:
                raise CheckpointError(f"referenceTimestamp: {e}") from None


class HistogramBank:
    """Many ``DecayingHistogram``s with one ``ExponentialOptions`` as arrays: ``weights``
    (rows x buckets), ``total``, ``min_bucket``/``max_bucket``, ``reference`` (NaN: none yet)
    and ``half_life`` per row. Adding, subtracting, moving references and reading percentiles
    work on any set of rows at once, with the arithmetic of ``DecayingHistogram`` (sample
    after sample), so a row reads back exactly as the histogram it stands for.

    Percentiles are remembered per row with the running sums just before and at the bucket
    they stopped in; adding samples keeps those sums up to date, so a row whose sums still
    bracket the threshold (by a margin far above the rounding the sums can have gathered)
    answers without walking its buckets again. Subtracting, rescaling, replacing a row or a
    changed [min, max] range forgets the row's percentiles."""

    def __init__(self, options: ExponentialOptions, capacity: int = 16) -> None:
        self.options = options
        self.weights = np.zeros((0, options.num_buckets))
        self.total = np.zeros(0)
        self.min_bucket = np.zeros(0, dtype=np.int64)
        self.max_bucket = np.zeros(0, dtype=np.int64)
        self.reference = np.zeros(0)
        self.half_life = np.zeros(0)
        self._known: _KnownPercentiles | None = None
        self.grow(capacity)

    def __len__(self) -> int:
        return self.total.size

    def grow(self, capacity: int) -> None:
        old = self.total.size
        if capacity <= old:
            return
        nb = self.options.num_buckets
        weights = np.zeros((capacity, nb))
        weights[:old] = self.weights
        self.weights = weights
        self.total = np.r_[self.total, np.zeros(capacity - old)]
        self.min_bucket = np.r_[self.min_bucket, np.full(capacity - old, nb - 1, dtype=np.int64)]
        self.max_bucket = np.r_[self.max_bucket, np.zeros(capacity - old, dtype=np.int64)]
        self.reference = np.r_[self.reference, np.full(capacity - old, np.nan)]
        self.half_life = np.r_[self.half_life, np.ones(capacity - old)]
        if self._known is not None:
            self._known.grow(capacity)

    def reset(self, row: int, half_life: float) -> None:
        if half_life <= 0:
            raise ValueError("half-life must be positive")
        self.weights[row] = 0.0
        self.total[row] = 0.0
        self.min_bucket[row], self.max_bucket[row] = self.options.num_buckets - 1, 0
        self.reference[row] = np.nan
        self.half_life[row] = half_life
        self._forget(np.array([row]))

    # -- one row as a DecayingHistogram -----------------------------------------------------------

    def histogram(self, row: int) -> DecayingHistogram:
        """A copy of the row as a ``DecayingHistogram``."""
        h = DecayingHistogram(self.options, float(self.half_life[row]))
        h.weights = self.weights[row].copy()
        h.total_weight = float(self.total[row])
        h.min_bucket, h.max_bucket = int(self.min_bucket[row]), int(self.max_bucket[row])
        ref = float(self.reference[row])
        h.reference = None if math.isnan(ref) else ref
        return h

    def set_histogram(self, row: int, h: DecayingHistogram) -> None:
        if h.options != self.options:
            raise ValueError("the histogram's options are not the bank's")
        self.weights[row] = h.weights
        self.total[row] = h.total_weight
        self.min_bucket[row], self.max_bucket[row] = h.min_bucket, h.max_bucket
        self.reference[row] = np.nan if h.reference is None else h.reference
        self.half_life[row] = h.half_life
        self._forget(np.array([row]))

    # -- samples ------------------------------------------------------------------------------------

    def add(self, rows: np.ndarray, values: np.ndarray, weights: np.ndarray | float, times: np.ndarray,
            arrival: np.ndarray | None = None) -> None:
        """Add samples (value, weight, time in seconds) to their rows. A row without a reference
        takes it from its sample that arrived first (lowest ``arrival``; default: the order given)."""
        rows = np.asarray(rows, dtype=np.int64)
        if rows.size == 0:
            return
        values = np.asarray(values, dtype=np.float64)
        w = np.broadcast_to(np.asarray(weights, dtype=np.float64), rows.shape)
        if np.any(w < 0):
            raise ValueError("sample weight must be non-negative")
        w = w * self._decay_factors(rows, np.asarray(times, dtype=np.float64), arrival)
        buckets = self.options.find_buckets(values)
        nb = self.options.num_buckets
        flat = rows * nb + buckets
        W = self.weights.reshape(-1)
        np.add.at(W, flat, w)
        np.add.at(self.total, rows, w)
        # A bucket extends its row's [min, max] once it weighs at least epsilon.
        heavy = (w != 0) & (W[flat] >= self.options.epsilon)
        if heavy.any():
            before = (self.min_bucket[rows[heavy]], self.max_bucket[rows[heavy]])
            np.minimum.at(self.min_bucket, rows[heavy], buckets[heavy])
            np.maximum.at(self.max_bucket, rows[heavy], buckets[heavy])
            moved = (self.min_bucket[rows[heavy]] != before[0]) | (self.max_bucket[rows[heavy]] != before[1])
            if moved.any():
                self._forget(rows[heavy][moved])
        if self._known is not None:
            self._known.added(rows, buckets, w, self.min_bucket)

    def subtract(self, rows: np.ndarray, values: np.ndarray, weights: np.ndarray | float,
                 times: np.ndarray) -> None:
        """Remove samples added before (``DecayingHistogram.subtract`` per row: a bucket or total
        falling below epsilon becomes 0, then the rows' non-empty ranges shrink)."""
        rows = np.asarray(rows, dtype=np.int64)
        if rows.size == 0:
            return
        w = np.broadcast_to(np.asarray(weights, dtype=np.float64), rows.shape)
        if np.any(w < 0):
            raise ValueError("sample weight must be non-negative")
        w = w * self._decay_factors(rows, np.asarray(times, dtype=np.float64), None)
        eps = self.options.epsilon
        buckets = self.options.find_buckets(np.asarray(values, dtype=np.float64))
        flat = rows * self.options.num_buckets + buckets
        keys, inverse = np.unique(flat, return_inverse=True)
        sums = np.bincount(inverse.reshape(-1), weights=w)
        W = self.weights.reshape(-1)
        was = W[keys]
        left = was - sums
        W[keys] = np.where(left < eps, 0.0, left)
        touched, inverse = np.unique(rows, return_inverse=True)
        total = self.total[touched] - np.bincount(inverse.reshape(-1), weights=w)
        self.total[touched] = np.where(total < eps, 0.0, total)
        # [min, max] moves inwards only from an end that no longer weighs epsilon.
        ends = self.weights[touched, self.min_bucket[touched]], self.weights[touched, self.max_bucket[touched]]
        stale = touched[(ends[0] < eps) | (ends[1] < eps)]
        if stale.size:
            self._update_min_max(stale)
        if self._known is not None:
            self._forget(np.union1d(stale, touched[total < eps]))
            nb = self.options.num_buckets
            self._known.added(keys // nb, keys % nb, W[keys] - was, self.min_bucket)

    def _decay_factors(self, rows: np.ndarray, times: np.ndarray, arrival: np.ndarray | None) -> np.ndarray:
        ref = self.reference
        fresh = np.isnan(ref[rows])
        if fresh.any():
            idx = np.flatnonzero(fresh)
            key = idx if arrival is None else np.asarray(arrival)[idx]
            order = idx[np.lexsort((key, rows[idx]))]
            first = order[np.r_[True, rows[order][1:] != rows[order][:-1]]]
            ref[rows[first]] = round_to_half_lives(times[first], self.half_life[rows[first]])
        if (times > ref[rows] + self.half_life[rows] * MAX_DECAY_EXPONENT).any():
            latest = np.full(ref.size, -np.inf)
            np.maximum.at(latest, rows, times)
            late = np.flatnonzero(latest > ref + self.half_life * MAX_DECAY_EXPONENT)
            self.shift_reference(late, latest[late])
        return np.exp2((times - ref[rows]) / self.half_life[rows])

    def shift_reference(self, rows: np.ndarray, new_reference: np.ndarray) -> None:
        """``DecayingHistogram.shift_reference`` for each row (reference to a rounded time,
        weights rescaled by a power of two)."""
        new_reference = round_to_half_lives(new_reference, self.half_life[rows])
        old = self.reference[rows]
        has = ~np.isnan(old)
        if has.any():
            r = rows[has]
            exponent = np.floor((old[has] - new_reference[has]) / self.half_life[r] + 0.5)
            self._scale(r, np.ldexp(1.0, exponent.astype(np.int32)))
        self.reference[rows] = new_reference

    def _scale(self, rows: np.ndarray, factors: np.ndarray) -> None:
        idx = np.arange(self.options.num_buckets)
        inside = (idx >= self.min_bucket[rows, None]) & (idx <= self.max_bucket[rows, None])
        self.weights[rows] = np.where(inside, self.weights[rows] * factors[:, None], self.weights[rows])
        self.total[rows] *= factors
        self._update_min_max(rows)
        self._forget(rows)

    def _forget(self, rows: np.ndarray) -> None:
        if self._known is not None:
            self._known.valid[rows] = False

    def _update_min_max(self, rows: np.ndarray) -> None:
        nb = self.options.num_buckets
        idx = np.arange(nb)
        heavy = self.weights[rows] >= self.options.epsilon
        lo = heavy & (idx >= self.min_bucket[rows, None])
        self.min_bucket[rows] = np.where(lo.any(axis=1), lo.argmax(axis=1), nb - 1)
        hi = heavy & (idx <= self.max_bucket[rows, None])
        self.max_bucket[rows] = np.where(hi.any(axis=1), nb - 1 - hi[:, ::-1].argmax(axis=1), 0)

    # -- reading ------------------------------------------------------------------------------------

    def percentile_buckets(self, rows: np.ndarray, percentiles: np.ndarray) -> np.ndarray:
        """(rows x k) bucket each row's percentiles stop in (-1: empty row); ``percentiles`` is
        (k,) for all rows or (rows x k)."""
        rows = np.asarray(rows, dtype=np.int64)
        ps = np.asarray(percentiles, dtype=np.float64)
        ps = np.broadcast_to(ps if ps.ndim == 2 else ps[None, :], (rows.size, ps.shape[-1]))
        known = self._known
        if known is None or known.ps.shape[1] != ps.shape[1]:
            known = self._known = _KnownPercentiles(len(self), ps.shape[1])
        thresholds = ps * self.total[rows][:, None]
        same = known.still(rows, ps, thresholds)
        out = np.empty(ps.shape, dtype=np.int64)
        out[same] = known.bucket[rows[same]]
        redo = ~same
        if redo.any():
            out[redo] = self._walk(rows[redo], ps[redo], thresholds[redo], known)
        return out

    def _walk(self, rows: np.ndarray, ps: np.ndarray, thresholds: np.ndarray,
              known: _KnownPercentiles) -> np.ndarray:
        """Upstream's walk for each row (vectorized), remembering where each one stopped."""
        out = np.full(ps.shape, -1, dtype=np.int64)
        lo, hi = self.min_bucket[rows], self.max_bucket[rows]
        full = self.weights[rows]
        live = full[np.arange(rows.size), lo] >= self.options.epsilon
        known.valid[rows] = False
        if not live.any():
            return out
        rows, lo, hi, W, thresholds = rows[live], lo[live], hi[live], full[live], thresholds[live]
        # Only the columns some row walks: [min of the mins, max of the maxes].
        first, last = int(lo.min()), int(hi.max())
        W = W[:, first:last + 1]
        idx = np.arange(first, last + 1)
        # Upstream walks [min, max) summing weights; zeros before min leave the sums as they are.
        running = np.cumsum(np.where((idx >= lo[:, None]) & (idx < hi[:, None]), W, 0.0), axis=1)
        # The sums never fall, so the first one reaching a threshold is after all that do not.
        below = np.count_nonzero(running[:, None, :] < thresholds[:, :, None], axis=2)
        reached = below < idx.size
        bucket = np.where(reached, np.maximum(first + below, lo[:, None]), hi[:, None])
        out[live] = bucket
        # The sums bracketing each answer: through the bucket before it and through it.
        n = np.arange(rows.size)[:, None]
        at = np.clip(bucket - first, 0, idx.size - 1)
        before = np.where(bucket > lo[:, None], running[n, np.clip(at - 1, 0, None)], -np.inf)
        before = np.where(reached | (hi[:, None] == lo[:, None]), before,
                          running[n, np.clip(hi[:, None] - 1 - first, 0, None)])
        through = np.where(reached, running[n, at], np.inf)
        empty_walk = hi[:, None] == lo[:, None]
        before = np.where(empty_walk, -np.inf, before)
        through = np.where(empty_walk, np.inf, through)
        known.remember(rows, ps[live], bucket, before, through)
        return out

    def means(self, rows: np.ndarray) -> np.ndarray:
        """``Histogram.mean`` of each row, all at once (0 for an empty row)."""
        rows = np.asarray(rows, dtype=np.int64)
        if rows.size == 0:
            return np.zeros(0)
        empty = self.weights[rows, self.min_bucket[rows]] < self.options.epsilon
        return weighted_means(self.weights[rows], self.options, empty)

    def percentiles(self, rows: np.ndarray, percentiles: np.ndarray) -> np.ndarray:
        """``Percentile(p)`` of each row (the end of the bucket reached, 0 for an empty row)."""
        buckets = self.percentile_buckets(rows, percentiles)
        starts = self.options.starts
        last = self.options.num_buckets - 1
        out = starts[np.minimum(buckets + 1, last)]
        out = np.where(buckets == last, starts[last], out)
        return np.where(buckets < 0, 0.0, out)


class _KnownPercentiles:
    """A ``HistogramBank``'s remembered percentiles (see its docstring): per row the
    percentiles asked, the buckets answered and the running sums just before and through each
    answer, kept up to date as samples are added."""

    MARGIN = 1e-6          # relative to the threshold; rounding of the kept sums stays far below
    MIN_PERCENTILE = 1e-3  # below this the margin is not safely above the rounding: walk again
    MAX_UPDATES = 1000     # walk again after this many batches, so rounding cannot pile up

    def __init__(self, rows: int, k: int) -> None:
        self.ps = np.full((rows, k), np.nan)
        self.bucket = np.zeros((rows, k), dtype=np.int64)
        self.before = np.zeros((rows, k))
        self.through = np.zeros((rows, k))
        self.valid = np.zeros(rows, dtype=bool)
        self.updates = np.zeros(rows, dtype=np.int64)    # batches since the walk; 0: unchanged

    def grow(self, rows: int) -> None:
        k, old = self.ps.shape[1], self.valid.size
        self.ps = np.concatenate([self.ps, np.full((rows - old, k), np.nan)])
        self.bucket = np.concatenate([self.bucket, np.zeros((rows - old, k), dtype=np.int64)])
        self.before = np.concatenate([self.before, np.zeros((rows - old, k))])
        self.through = np.concatenate([self.through, np.zeros((rows - old, k))])
        self.valid = np.r_[self.valid, np.zeros(rows - old, dtype=bool)]
        self.updates = np.r_[self.updates, np.zeros(rows - old, dtype=np.int64)]

    def remember(self, rows: np.ndarray, ps: np.ndarray, bucket: np.ndarray, before: np.ndarray,
                 through: np.ndarray) -> None:
        self.ps[rows], self.bucket[rows], self.before[rows], self.through[rows] = ps, bucket, before, through
        self.valid[rows] = (ps >= self.MIN_PERCENTILE).all(axis=1)
        self.updates[rows] = 0

    def added(self, rows: np.ndarray, buckets: np.ndarray, w: np.ndarray, min_bucket: np.ndarray) -> None:
        """Samples were added (or, with negative weights, subtracted): the sums through the
        buckets they fell in follow."""
        ok = self.valid[rows]
        if not ok.any():
            return
        rows, buckets, w = rows[ok], buckets[ok], w[ok]
        n = self.valid.size
        self.updates += np.bincount(rows, w != 0, minlength=n) > 0
        k = self.bucket.shape[1]
        walked = (buckets >= min_bucket[rows])[:, None]
        answer = self.bucket[rows]
        at = (rows[:, None] * k + np.arange(k)).reshape(-1)
        below = np.where(walked & (buckets[:, None] < answer), w[:, None], 0.0).reshape(-1)
        upto = np.where(walked & (buckets[:, None] <= answer), w[:, None], 0.0).reshape(-1)
        self.before += np.bincount(at, below, minlength=n * k).reshape(n, k)
        self.through += np.bincount(at, upto, minlength=n * k).reshape(n, k)

    def still(self, rows: np.ndarray, ps: np.ndarray, thresholds: np.ndarray) -> np.ndarray:
        """Rows whose remembered answers stand: same percentiles, and the row unchanged since
        or each threshold still above the sum before the answer and at most the sum through
        it, by the margin."""
        margin = self.MARGIN * np.abs(thresholds)
        updates = self.updates[rows]
        bracketed = ((self.before[rows] < thresholds - margin)
                     & (self.through[rows] >= thresholds + margin)).all(axis=1)
        return (self.valid[rows] & (updates < self.MAX_UPDATES) & (self.ps[rows] == ps).all(axis=1)
                & ((updates == 0) | bracketed))


def round_to_half_lives(t: np.ndarray, half_life: np.ndarray) -> np.ndarray:
    """``round_to_half_life`` elementwise."""
    return GO_ZERO_TIME + np.floor((t - GO_ZERO_TIME) / half_life + 0.5) * half_life
