"""Regression: a checkpoint round trip must keep the recommendation's percentiles in their buckets
(``test_histogram.py::test_checkpoint_round_trip_keeps_recommendation_percentiles``) even when a
running sum ties a percentile's threshold.

Upstream's rules (kubernetes/autoscaler, ``pkg/recommender/util/histogram.go``), from which the
expected values below are reasoned:

* ``SaveToChekpoint`` scales the bucket weights so the heaviest is ``MaxCheckpointWeight`` (10000),
  rounds them (``floor(x + 0.5)``), drops those that round to 0, and stores ``TotalWeight`` exactly.
* ``LoadFromCheckpoint`` gives each stored bucket ``weight * TotalWeight / sum(weights)`` and adds
  ``TotalWeight``; then (since #7726) end buckets below epsilon leave the [min, max] range.
* ``Percentile(p)`` sums bucket weights from the min bucket while below the max one and stops at the
  first bucket where the sum reaches ``p * totalWeight``; it answers that bucket's end.

``totalWeight`` is the samples' weights summed one by one, which may differ in the last bits from
the buckets' sum; when a running sum ties a threshold those bits decide the bucket, and integers
proportional to the weights cannot carry them. Upstream loses such a percentile; kvert's
``keep_exact`` must not, while writing a checkpoint upstream can load (integer weights, same fields).
"""

import math

import pytest

from kvert.vpa.histogram import MAX_CHECKPOINT_WEIGHT, Histogram
from kvert.vpa.recommendation import DEFAULT_CONFIG

CPU = DEFAULT_CONFIG.cpu_histogram_options()
PS = [0.5, 0.9, 0.95]
UINT32_MAX = 2**32 - 1

REPORTED = [(0.0, 9.2379), (1.0, 1.0), (1.0, 6.0), (1.0, 2.2379)]
# The reported example with its first weight two ulps lighter: a tie the float bits decide.
LIGHTER = [(0.0, math.nextafter(math.nextafter(9.2379, 0.0), 0.0)), (1.0, 1.0), (1.0, 6.0), (1.0, 2.2379)]
# Found by hypothesis with the same strategy as the property test.
FOUND = [(0.1, 0.5), (37.41843561135392, 0.5), (0.1, 0.1), (15.861214381580426, 0.1)]


def histogram(samples):
    h = Histogram(CPU)
    for v, w in samples:
        h.add(v, w)
    return h


def reload(checkpoint):
    back = Histogram(CPU)
    back.load_checkpoint(checkpoint)
    return back


def end_of(bucket):
    return CPU.bucket_start(bucket + 1)


def upstream_percentiles(checkpoint, percentiles):
    """Upstream's LoadFromCheckpoint into an empty histogram, then Percentile, written out from its
    rules in plain floats (independent of kvert's loader)."""
    weights = [0.0] * CPU.num_buckets
    ints = {int(k): v for k, v in checkpoint["bucketWeights"].items()}
    assert all(isinstance(v, int) and 0 <= v <= UINT32_MAX for v in ints.values())   # uint32
    total = checkpoint["totalWeight"]
    ratio = total / float(sum(ints.values()))
    for bucket, weight in ints.items():
        weights[bucket] += float(weight) * ratio
    lo, hi = min(ints), max(ints)
    while weights[lo] < CPU.epsilon and lo < CPU.num_buckets - 1:
        lo += 1
    while weights[hi] < CPU.epsilon and hi > 0:
        hi -= 1
    out = []
    for p in percentiles:
        threshold, partial, bucket = p * total, 0.0, lo
        while bucket < hi:
            partial += weights[bucket]
            if partial >= threshold:
                break
            bucket += 1
        out.append(end_of(bucket) if bucket < CPU.num_buckets - 1 else CPU.bucket_start(bucket))
    return out


def assert_round_trip(h, expected):
    """The property test's assertion, plus: upstream's loader reads the same percentiles."""
    cp = h.to_checkpoint(keep_exact=PS)
    assert h.percentiles(PS) == expected
    back = reload(cp)
    assert back.percentiles(PS) == expected
    assert math.isclose(back.total_weight, h.total_weight)
    assert cp["totalWeight"] == h.total_weight
    assert upstream_percentiles(cp, PS) == expected
    return cp


def test_reported_example():
    # 0.0 falls in bucket 0 (below the first bucket's 0.01), 1.0 in bucket 36; both buckets
    # weigh 9.2379 (7 + 2.2379 is 9.2379 in floats too) of a total 18.4758.
    assert (CPU.find_bucket(0.0), CPU.find_bucket(1.0)) == (0, 36)
    h = histogram(REPORTED)
    assert h.weights[0] == h.weights[36] == 9.2379 and h.total_weight == 18.4758
    # Two equal heaviest buckets: 10000 each.
    plain = h.to_checkpoint()
    assert plain == {"bucketWeights": {"0": MAX_CHECKPOINT_WEIGHT, "36": MAX_CHECKPOINT_WEIGHT},
                     "totalWeight": 18.4758}
    # The median's threshold, 9.2379, is reached in bucket 0; 0.9 and 0.95 are not reached
    # before the last non-empty bucket, 36. Upstream's integers keep that, so nothing changes.
    expected = [end_of(0), end_of(36), end_of(36)]
    assert upstream_percentiles(plain, PS) == expected
    assert assert_round_trip(h, expected) == plain


def test_tie_decided_by_the_last_bits_of_the_total():
    h = histogram(LIGHTER)
    a = LIGHTER[0][1]
    assert h.weights[0] == a and h.weights[36] == 9.2379
    # Bucket 0 is lighter than bucket 36 (by 2 ulps), so it holds less than half of the total
    # and the median is in bucket 36.
    assert a < 0.5 * h.total_weight
    expected = [end_of(36)] * 3
    # Upstream: both round to 10000, so a reload splits the total in exact halves and the
    # median goes back to bucket 0.
    plain = h.to_checkpoint()
    assert plain["bucketWeights"] == {"0": MAX_CHECKPOINT_WEIGHT, "36": MAX_CHECKPOINT_WEIGHT}
    assert upstream_percentiles(plain, PS)[0] == end_of(0)
    assert reload(plain).percentiles(PS)[0] == end_of(0)
    # keep_exact: the same buckets, bucket 36 strictly heavier in integers, and a weight ratio
    # still the histogram's to far better than upstream's 1/10000.
    cp = assert_round_trip(h, expected)
    n = cp["bucketWeights"]
    assert set(n) == {"0", "36"} and n["0"] < n["36"]
    assert n["36"] / n["0"] == pytest.approx(h.weights[36] / h.weights[0], rel=1e-7)


def test_tie_found_by_hypothesis():
    # 0.1 falls in bucket 8, 15.86... in 89, 37.41... in 107: weights 0.6, 0.1 and 0.5. The
    # total, summed sample by sample, is 1.2000000000000002, so the median's threshold is
    # 0.6000000000000001: bucket 8's 0.6 does not reach it and the median is in bucket 89.
    assert [CPU.find_bucket(v) for v, _ in FOUND] == [8, 107, 8, 89]
    h = histogram(FOUND)
    assert (h.weights[8], h.weights[89], h.weights[107]) == (0.6, 0.1, 0.5)
    assert h.total_weight == 0.5 + 0.5 + 0.1 + 0.1 == 1.2000000000000002
    expected = [end_of(89), end_of(107), end_of(107)]
    # Upstream: 10000, round(1666.67) = 1667, round(8333.33) = 8333 -- a sum of 20000 of which
    # bucket 8 is exactly half, so a reload puts the median in bucket 8.
    plain = h.to_checkpoint()
    assert plain == {"bucketWeights": {"8": 10000, "89": 1667, "107": 8333},
                     "totalWeight": 1.2000000000000002}
    assert upstream_percentiles(plain, PS)[0] == end_of(8)
    cp = assert_round_trip(h, expected)
    n = cp["bucketWeights"]
    assert set(n) == {"8", "89", "107"}
    assert 2 * n["8"] < sum(n.values())          # bucket 8 strictly below half, in integers


@pytest.mark.parametrize("ulps_first", range(-6, 7, 2))
@pytest.mark.parametrize("ulps_last", range(-6, 7, 3))
def test_ties_around_the_reported_example(ulps_first, ulps_last):
    def moved(x, ulps):
        for _ in range(abs(ulps)):
            x = math.nextafter(x, math.inf if ulps > 0 else -math.inf)
        return x
    h = histogram([(0.0, moved(9.2379, ulps_first)), (1.0, 1.0), (1.0, 6.0), (1.0, moved(2.2379, ulps_last))])
    # Bucket 0 holds the median when it reaches half the total; otherwise bucket 36 does.
    median = 0 if h.weights[0] >= 0.5 * h.total_weight else 36
    assert_round_trip(h, [end_of(median), end_of(36), end_of(36)])


def test_loading_drops_end_buckets_below_epsilon_as_upstream():
    # Bucket 0 comes back as 1/10001 of 1.0, below epsilon (0.0001): upstream (#7726) moves the
    # min bucket past it, so the histogram is not empty and its median is bucket 5's end.
    cp = {"bucketWeights": {"0": 1, "5": 10000}, "totalWeight": 1.0}
    back = reload(cp)
    assert not back.is_empty()
    assert back.min_bucket == back.max_bucket == 5
    assert back.percentile(0.5) == end_of(5) == upstream_percentiles(cp, [0.5])[0]
    assert back.total_weight == 1.0
