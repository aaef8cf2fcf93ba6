"""The histogram bank (every aggregate's histogram as one row of arrays) against the
per-aggregate ``DecayingHistogram``: same weights, ranges, references and percentiles."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from kvert.vpa.histogram import DecayingHistogram, HistogramBank
from kvert.vpa.recommendation import DEFAULT_CONFIG

T0 = 1714521600.0
HALF_LIFE = 86400.0
OPTIONS = DEFAULT_CONFIG.cpu_histogram_options()
PS = np.array([0.0, 0.5, 0.9, 0.95, 1.0])

samples = st.lists(st.tuples(
    st.integers(0, 3),                                         # row
    st.sampled_from([0.0, 0.001, 0.01, 0.05, 0.25, 0.5, 1.0, 3.7, 999.0, 5000.0]),
    st.sampled_from([0.1, 0.5, 1.0, 1e-6]),                     # weight
    st.one_of(st.integers(0, 48), st.integers(0, 300 * 24)),   # hour (past 100 half-lives: shifts)
    st.booleans()), min_size=1, max_size=60)                   # subtract a previous sample


@settings(max_examples=300, deadline=None)
@given(samples, st.integers(1, 8))
def test_bank_rows_equal_per_aggregate_histograms(rows, batches):
    hists = [DecayingHistogram(OPTIONS, HALF_LIFE) for _ in range(4)]
    bank = HistogramBank(OPTIONS, capacity=2)
    bank.grow(4)
    for r in range(4):
        bank.reset(r, HALF_LIFE)
    added: list[tuple] = []
    bounds = np.linspace(0, len(rows), batches + 1).astype(int)
    for lo, hi in zip(bounds[:-1], bounds[1:]):
        part = [x for x in rows[lo:hi] if not x[4]]
        gone = [added[k % len(added)] for k, x in enumerate(rows[lo:hi]) if x[4] and added]
        for r in range(4):
            mine = [x for x in part if x[0] == r]
            if mine:
                hists[r].add([x[1] for x in mine], [x[2] for x in mine], [T0 + x[3] * 3600 for x in mine])
            old = [x for x in gone if x[0] == r]
            if old:
                hists[r].subtract([x[1] for x in old], [x[2] for x in old], [T0 + x[3] * 3600 for x in old])
        if part:
            bank.add(np.array([x[0] for x in part]), np.array([x[1] for x in part]), np.array([x[2] for x in part]),
                     T0 + np.array([x[3] for x in part]) * 3600)
        if gone:
            bank.subtract(np.array([x[0] for x in gone]), np.array([x[1] for x in gone]),
                          np.array([x[2] for x in gone]), T0 + np.array([x[3] for x in gone]) * 3600)
        added += part
        # asked after every batch: remembered answers must stay exact as samples come
        got = bank.percentiles(np.arange(4), PS)
        assert [list(g) for g in got] == [h.percentiles(PS) for h in hists]
    ps = PS
    got = bank.percentiles(np.arange(4), ps)
    for r, h in enumerate(hists):
        assert list(got[r]) == h.percentiles(ps)
        b = bank.histogram(r)
        assert (b.min_bucket, b.max_bucket, b.reference, b.total_weight) == \
            (h.min_bucket, h.max_bucket, h.reference, h.total_weight)
        assert np.array_equal(b.weights, h.weights)


def test_a_row_round_trips_through_a_histogram():
    h = DecayingHistogram(OPTIONS, HALF_LIFE)
    h.add([0.2, 0.3, 0.3], 0.1, [T0, T0 + 60, T0 + 120])
    bank = HistogramBank(OPTIONS)
    bank.set_histogram(3, h)
    assert bank.histogram(3).equals(h)
    assert bank.percentiles(np.array([3]), np.array([0.5]))[0, 0] == h.percentile(0.5)


def test_remembered_percentiles_follow_many_small_batches():
    rng = np.random.default_rng(5)
    hists = [DecayingHistogram(OPTIONS, HALF_LIFE) for _ in range(3)]
    bank = HistogramBank(OPTIONS, capacity=3)
    for r in range(3):
        bank.reset(r, HALF_LIFE)
    for minute in range(600):
        values = rng.gamma(4, 0.1 * (1 + np.arange(3)))
        t = T0 + 60.0 * minute
        for r in range(3):
            hists[r].add([values[r]], 0.1, [t])
        bank.add(np.arange(3), values, 0.1, np.full(3, t))
        if minute % 7 == 0:
            got = bank.percentiles(np.arange(3), PS)
            assert [list(g) for g in got] == [h.percentiles(PS) for h in hists]
