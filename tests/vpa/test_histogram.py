import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kvert.vpa.histogram import (MAX_CHECKPOINT_WEIGHT, CheckpointError, DecayingHistogram, ExponentialOptions,
                                 Histogram, round_to_half_life)
from kvert.vpa.recommendation import DEFAULT_CONFIG

CPU = DEFAULT_CONFIG.cpu_histogram_options()
MEM = DEFAULT_CONFIG.memory_histogram_options()
DAY = 86400.0
T0 = 1714521600.0  # 2024-05-01T00:00:00Z


def test_upstream_bucketing_constants():
    # 0.01 core / 1e7 bytes first bucket, 5% growth, 1000 cores / 1e12 bytes, epsilon 0.0001.
    assert (CPU.first_bucket_size, CPU.ratio, CPU.max_value, CPU.epsilon) == (0.01, 1.05, 1000.0, 0.0001)
    assert (MEM.first_bucket_size, MEM.ratio, MEM.max_value) == (1e7, 1.05, 1e12)
    assert CPU.num_buckets == MEM.num_buckets == 176
    assert CPU.bucket_start(0) == 0.0
    assert CPU.bucket_start(1) == pytest.approx(0.01)
    assert CPU.bucket_start(2) == pytest.approx(0.01 + 0.0105)
    assert CPU.bucket_start(175) >= 1000.0 > CPU.bucket_start(174)


@settings(max_examples=200, deadline=None)
@given(st.one_of(st.floats(min_value=0, max_value=5e3, allow_nan=False),
                 st.sampled_from([float(x) for x in CPU.starts])))
def test_find_bucket_inverts_bucket_start(value):
    b = CPU.find_bucket(value)
    assert int(CPU.find_buckets(np.array([value]))[0]) == b
    # Upstream's formula, so a value on a boundary may land either side of it.
    assert CPU.bucket_start(b) <= value * (1 + 1e-9)
    if b < CPU.num_buckets - 1:
        assert value < CPU.bucket_start(b + 1) * (1 + 1e-9)


def test_percentile_is_the_end_of_the_bucket_reaching_the_threshold():
    h = Histogram(CPU)
    assert h.is_empty() and h.percentile(0.9) == 0.0
    h.add([0.5] * 9 + [2.0])
    lo, hi = CPU.find_bucket(0.5), CPU.find_bucket(2.0)
    assert h.percentile(0.5) == h.percentile(0.9) == CPU.bucket_start(lo + 1)
    assert h.percentile(0.91) == h.percentile(1.0) == CPU.bucket_start(hi + 1)
    assert h.percentile(0.0) == CPU.bucket_start(lo + 1)
    # The last bucket has no end: its start is returned.
    h.add(1e6)
    assert h.percentile(1.0) == CPU.bucket_start(CPU.num_buckets - 1)


def test_weights_and_epsilon():
    h = Histogram(CPU)
    h.add([1.0, 3.0], [2.0, 0.5])
    assert h.total_weight == 2.5
    with pytest.raises(ValueError):
        h.add(1.0, -1.0)
    # A weight below epsilon does not make a bucket non-empty.
    h2 = Histogram(CPU)
    h2.add(1.0, 0.00001)
    assert h2.is_empty()
    # safeSubtract: what falls below epsilon becomes 0, and the bounds move inwards.
    h.subtract(3.0, 0.49999)
    assert h.weights[CPU.find_bucket(3.0)] == 0.0
    assert h.max_bucket == CPU.find_bucket(1.0) == h.min_bucket
    h.subtract(1.0, 2.0)
    assert h.is_empty() and h.total_weight == 0.0


def test_scale_keeps_percentiles():
    h = Histogram(CPU)
    h.add(np.linspace(0.1, 4, 100))
    before = h.percentiles([0.5, 0.9, 0.95])
    h.scale(0.25)
    assert h.percentiles([0.5, 0.9, 0.95]) == before
    assert h.total_weight == pytest.approx(25.0)


def test_decay_halves_weight_per_half_life():
    h = DecayingHistogram(CPU, DAY)
    h.add(1.0, 1.0, T0)
    h.add(2.0, 1.0, T0 + DAY)
    h.add(4.0, 1.0, T0 + 2 * DAY)
    w = [h.weights[CPU.find_bucket(v)] for v in (1.0, 2.0, 4.0)]
    assert w[1] / w[0] == pytest.approx(2.0) and w[2] / w[1] == pytest.approx(2.0)
    # weights 1:2:4 of 7 -> the sample of day 0 is below 1/7 of the weight.
    assert h.percentile(0.14) == CPU.bucket_start(CPU.find_bucket(1.0) + 1)
    assert h.percentile(0.15) == CPU.bucket_start(CPU.find_bucket(2.0) + 1)
    assert h.percentile(0.42) == CPU.bucket_start(CPU.find_bucket(2.0) + 1)
    assert h.percentile(0.43) == CPU.bucket_start(CPU.find_bucket(4.0) + 1)


def test_reference_is_a_rounded_half_life_and_moves_before_overflow():
    h = DecayingHistogram(CPU, DAY)
    h.add(1.0, 1.0, T0 + 13 * 3600)          # rounds up to the next midnight
    assert h.reference == T0 + DAY
    h.add(2.0, 1.0, T0 + 150 * DAY)         # > 100 half-lives later: the reference moves
    assert h.reference == T0 + 150 * DAY
    assert np.isfinite(h.weights).all() and h.total_weight < 2.0
    assert h.percentile(0.5) == CPU.bucket_start(CPU.find_bucket(2.0) + 1)
    assert round_to_half_life(T0 + 12 * 3600, DAY) == T0 + DAY   # halfway rounds up, as Go's Round


def test_vectorised_add_matches_one_by_one():
    rng = np.random.default_rng(7)
    values = rng.lognormal(0, 1, 5000)
    weights = rng.uniform(0.1, 3, 5000)
    times = T0 + np.sort(rng.uniform(0, 9 * DAY, 5000))
    a, b = DecayingHistogram(CPU, DAY), DecayingHistogram(CPU, DAY)
    a.add(values, weights, times)
    for v, w, t in zip(values, weights, times):
        b.add(v, w, t)
    assert a.reference == b.reference
    np.testing.assert_allclose(a.weights, b.weights, rtol=1e-12)
    assert (a.min_bucket, a.max_bucket) == (b.min_bucket, b.max_bucket)
    assert a.percentiles([0.5, 0.9, 0.95]) == b.percentiles([0.5, 0.9, 0.95])


def test_merge_aligns_references():
    a, b = DecayingHistogram(CPU, DAY), DecayingHistogram(CPU, DAY)
    a.add(1.0, 1.0, T0)
    b.add(2.0, 1.0, T0 + 3 * DAY)
    a.merge(b)
    assert a.reference == T0 + 3 * DAY
    assert a.weights[CPU.find_bucket(1.0)] == pytest.approx(1 / 8)
    assert a.weights[CPU.find_bucket(2.0)] == pytest.approx(1.0)


def test_checkpoint_scales_the_heaviest_bucket_to_10000():
    h = DecayingHistogram(CPU, DAY)
    h.add([0.5, 0.5, 0.5, 1.0], 1.0, T0)
    cp = h.to_checkpoint()
    assert cp["referenceTimestamp"] == "2024-05-01T00:00:00Z"
    assert cp["totalWeight"] == 4.0
    assert cp["bucketWeights"] == {str(CPU.find_bucket(0.5)): MAX_CHECKPOINT_WEIGHT,
                                   str(CPU.find_bucket(1.0)): 3333}
    back = DecayingHistogram(CPU, DAY)
    back.load_checkpoint(cp)
    assert back.reference == h.reference and back.total_weight == 4.0
    assert back.percentiles([0.5, 0.75, 0.76]) == h.percentiles([0.5, 0.75, 0.76])
    assert DecayingHistogram(CPU, DAY).to_checkpoint() == {"referenceTimestamp": None, "bucketWeights": {},
                                                          "totalWeight": 0.0}


def test_checkpoint_keeps_chosen_percentiles_exact():
    # Two buckets weighing 1 and 1.00001: the median is in the second; at a scale of 10000
    # both round to 10000 and a reload would put the median in the first.
    h = Histogram(CPU)
    h.add([0.5, 1.0], [1.0, 1.00001])
    plain = h.to_checkpoint()
    assert max(plain["bucketWeights"].values()) == MAX_CHECKPOINT_WEIGHT
    exact = h.to_checkpoint(keep_exact=[0.5])
    back = Histogram(CPU)
    back.load_checkpoint(exact)
    assert back.percentile(0.5) == h.percentile(0.5)
    naive = Histogram(CPU)
    naive.load_checkpoint(plain)
    if naive.percentile(0.5) != h.percentile(0.5):
        assert max(exact["bucketWeights"].values()) > MAX_CHECKPOINT_WEIGHT


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.floats(0, 50), st.floats(0.1, 10)), min_size=1, max_size=60))
def test_checkpoint_round_trip_keeps_recommendation_percentiles(samples):
    h = Histogram(CPU)
    for v, w in samples:
        h.add(v, w)
    ps = [0.5, 0.9, 0.95]
    back = Histogram(CPU)
    back.load_checkpoint(h.to_checkpoint(keep_exact=ps))
    assert back.percentiles(ps) == h.percentiles(ps)
    assert math.isclose(back.total_weight, h.total_weight)


@pytest.mark.parametrize("checkpoint, message", [
    ({"bucketWeights": {"176": 1}, "totalWeight": 1.0}, "exceeding"),
    ({"bucketWeights": {"-1": 1}, "totalWeight": 1.0}, "negative bucket"),
    ({"bucketWeights": {"x": 1}, "totalWeight": 1.0}, "not an integer"),
    ({"bucketWeights": {"1": 1.5}, "totalWeight": 1.0}, "non-negative integer"),
    ({"bucketWeights": {"1": 1}, "totalWeight": -1.0}, "negative weight"),
    ({"bucketWeights": {"1": 1}, "totalWeight": 1.0, "referenceTimestamp": "yesterday"}, "referenceTimestamp"),
])
def test_bad_checkpoints_are_refused(checkpoint, message):
    with pytest.raises(CheckpointError, match=message):
        DecayingHistogram(CPU, DAY).load_checkpoint(checkpoint)


def test_options_validation():
    with pytest.raises(ValueError):
        ExponentialOptions(1000, 0.01, 1.0, 0.0001)
    assert ExponentialOptions(100, 1, 2, 0.1).num_buckets == int(math.ceil(math.log2(101))) + 1
