"""The recommender's model against upstream VPA 1.8's: RecordOOM's vectors (container_test.go, with
1.8's "do not discard fresh OOMs near aggregation boundary"), and the per-VPA settings behind the
PerVPAConfig gate (aggregate_container_state_test.go), through the live recommender."""

from __future__ import annotations

from datetime import UTC, datetime

import numpy as np
import pytest

from kvert.vpa.aggregate import AggregateContainerState
from kvert.vpa.features import VpaGates
from kvert.vpa.histogram import DecayingHistogram
from kvert.vpa.recommendation import DEFAULT_CONFIG
from kvert.vpa.recommender import VPAS, Recommender

from tests.vpa.upstream_recommender_support import (
    DEPLOY,
    MI,
    NS,
    FixedUsage,
    deployment,
    pod,
    run,
    vpa,
)

# container_test.go's testTimestamp and its mb
T0 = datetime(2017, 4, 18, 17, 35, 5, tzinfo=UTC).timestamp()
DAY = 24 * 3600.0


def expected_memory(*steps: tuple[str, float, float]) -> DecayingHistogram:
    """The memory peaks histogram after upstream's mocked calls: ("add" | "sub", bytes, time)."""
    h = DecayingHistogram(DEFAULT_CONFIG.memory_histogram_options(), DEFAULT_CONFIG.memory_histogram_decay_half_life)
    for op, value, when in steps:
        (h.add if op == "add" else h.subtract)(value, 1.0, when)
    return h


def same(agg: AggregateContainerState, want: DecayingHistogram) -> None:
    got = agg.memory
    assert (got.min_bucket, got.max_bucket) == (want.min_bucket, want.max_bucket)
    np.testing.assert_allclose(got.weights, want.weights, rtol=1e-12, atol=1e-12)


def test_record_oom_increased_by_bump_up():
    # upstream: TestRecordOOMIncreasedByBumpUp: a 1000Mi request -> 1200Mi at the window's end
    agg = AggregateContainerState()
    assert agg.record_oom("p", T0, 1000 * MI)
    same(agg, expected_memory(("add", 1200 * MI, T0 + DAY)))
    assert agg.pod_memory("p").oom_peak == 1200 * MI


def test_record_oom_dont_run_away():
    # upstream: TestRecordOOMDontRunAway: smaller OOMs leave the 1200Mi; one of 2000Mi -> 2400Mi
    agg = AggregateContainerState()
    agg.record_oom("p", T0, 1000 * MI)
    agg.record_oom("p", T0, 999 * MI)
    agg.record_oom("p", T0, 999 * MI)
    same(agg, expected_memory(("add", 1200 * MI, T0 + DAY)))
    agg.record_oom("p", T0, 2000 * MI)
    same(agg, expected_memory(("add", 1200 * MI, T0 + DAY), ("sub", 1200 * MI, T0 + DAY), ("add", 2400 * MI, T0 + DAY)))


def test_record_oom_increased_by_min():
    # upstream: TestRecordOOMIncreasedByMin: 1Mi -> 101Mi (the 100Mi minimum bump)
    agg = AggregateContainerState()
    agg.record_oom("p", T0, 1 * MI)
    same(agg, expected_memory(("add", 101 * MI, T0 + DAY)))


def test_record_oom_maxed_with_known_sample():
    # upstream: TestRecordOOMMaxedWithKnownSample: the 3000Mi peak beats the 1000Mi request: 3600Mi
    agg = AggregateContainerState()
    agg.add_memory_samples("p", T0, 3000 * MI)
    agg.record_oom("p", T0, 1000 * MI)
    same(agg, expected_memory(("add", 3000 * MI, T0 + DAY), ("sub", 3000 * MI, T0 + DAY),
                              ("add", 3600 * MI, T0 + DAY)))


def test_record_oom_discards_old_sample():
    # upstream: TestRecordOOMDiscardsOldSample: an OOM 30h before the last memory sample is stale
    agg = AggregateContainerState()
    agg.add_memory_samples("p", T0, 1000 * MI)
    assert not agg.record_oom("p", T0 - 30 * 3600, 1000 * MI)
    same(agg, expected_memory(("add", 1000 * MI, T0 + DAY)))


def test_record_oom_in_new_window():
    # upstream: TestRecordOOMInNewWindow: a 2000Mi peak, then an OOM two intervals later: 2400Mi at
    # the end of the window it falls in
    agg = AggregateContainerState()
    agg.add_memory_samples("p", T0, 2000 * MI)
    assert agg.record_oom("p", T0 + 2 * DAY, 1000 * MI)
    same(agg, expected_memory(("add", 2000 * MI, T0 + DAY), ("add", 2400 * MI, T0 + 3 * DAY)))


def test_a_fresh_oom_near_a_window_boundary_is_not_discarded():
    # upstream 1.8: TestRecordOOMFreshOOMNearWindowBoundaryIsNotDiscarded (18445abe54): 100Mi at
    # T0, 2000Mi on the next boundary (the window now ends at T0 + 2 intervals), an OOM a second
    # before that sample: recorded, 2000Mi x 1.2 = 2400Mi replacing the 2000Mi peak
    agg = AggregateContainerState()
    agg.add_memory_samples("p", T0, 100 * MI)
    agg.add_memory_samples("p", T0 + DAY, 2000 * MI)
    assert agg.record_oom("p", T0 + DAY - 1, 1000 * MI)
    same(agg, expected_memory(("add", 100 * MI, T0 + DAY), ("add", 2000 * MI, T0 + 2 * DAY),
                              ("sub", 2000 * MI, T0 + 2 * DAY), ("add", 2400 * MI, T0 + 2 * DAY)))


# -- per-VPA settings (PerVPAConfig) ------------------------------------------------------------------

POLICY = {"containerName": "hamster", "memoryAggregationIntervalSeconds": 3600, "memoryAggregationIntervalCount": 4,
          "oomBumpUpRatio": "2", "oomMinBumpUp": "200Mi"}


def _aggregate_config(gates: VpaGates):
    async def scenario(clock, client):
        await client.create(DEPLOY, deployment())
        await client.create(VPAS, vpa(policies=[POLICY]))
        await pod(client, "hamster-1", {"app": "hamster"})
        r = Recommender(client, clock, FixedUsage(clock, [(NS, "hamster-1", "hamster")]), gates=gates)
        await r.run_once()
        agg = r.store.find(NS, "hamster-vpa", "hamster")
        last = agg.last_sample_start
        cfg = agg.config
        return ((cfg.memory_aggregation_interval, cfg.memory_aggregation_interval_count, cfg.oom_bump_up_ratio,
                 cfg.oom_min_bump_up_bytes), agg.is_expired(last + cfg.memory_aggregation_window - 3600),
                agg.is_expired(last + cfg.memory_aggregation_window))
    return run(scenario)


@pytest.mark.parametrize("gates, settings", [
    # "Custom interval with feature enabled" / "Custom count with feature enabled"; oomBumpUpRatio
    # and oomMinBumpUp as quantities (convertQuantityToFloat64)
    (VpaGates.parse("PerVPAConfig=true"), (3600.0, 4, 2.0, 200.0 * MI)),
    # "Custom interval with feature disabled - falls back to default" (upstream's default: off)
    (VpaGates(), (86400.0, 8, 1.2, 100.0 * MI)),
])
def test_per_vpa_settings_need_the_gate(gates, settings):
    # upstream: TestUpdateFromPolicyMemoryAggregationInterval, TestUpdateFromPolicyMemoryAggregationIntervalCount,
    # TestAggregateContainerStateIsExpiredWithCustomIntervalCount (expired one window after the
    # last sample, not an hour before)
    got, before, at = _aggregate_config(gates)
    assert got == settings
    assert (before, at) == (False, True)
