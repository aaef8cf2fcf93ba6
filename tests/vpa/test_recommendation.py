"""The recommendation model: seed 003's table (percentiles 50/90/95, +15%, 25m / 250Mi shared),
the confidence scaling of the bounds, capping by the resource policy, per-VPA configuration."""

import math
from types import SimpleNamespace

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from kvert.api.quantity import Quantity
from kvert.vpa.aggregate import AggregateContainerState
from kvert.vpa.estimators import ConfidenceMultiplier, ConstEstimator, get_confidence
from kvert.vpa.recommendation import (ANNOTATIONS, DEFAULT_CONFIG, RecommenderConfig,
                                      cap_to_container_limit_range, parse_duration, proportional_limits,
                                      parse_recommendation, recommend, recommend_containers)

DAY = 86400.0
T0 = 1714521600.0
MI = 2**20


def workload(days=8.0, cpu=(0.4, 0.9), memory=(200 * MI, 400 * MI), seed=1, step=60.0, pods=("p",)):
    """An aggregate fed one sample a minute per pod for ``days``; usage uniform in the ranges."""
    rng = np.random.default_rng(seed)
    agg = AggregateContainerState()
    t = T0 + np.arange(0, days * DAY, step)
    for pod in pods:
        agg.add_samples(pod, t, cpu=rng.uniform(*cpu, t.size), memory=rng.uniform(*memory, t.size))
    return agg


def by_name(aggregates, vpa=None, config=None):
    return {c.container_name: c for c in recommend_containers(aggregates, vpa, config)}


def test_seed_003_table_is_the_default_configuration():
    c = DEFAULT_CONFIG
    assert (c.lower_bound_cpu_percentile, c.target_cpu_percentile, c.upper_bound_cpu_percentile) == (0.5, 0.9, 0.95)
    assert (c.lower_bound_memory_percentile, c.target_memory_percentile, c.upper_bound_memory_percentile) == (0.5, 0.9, 0.95)
    assert (c.pod_min_cpu_millicores, c.pod_min_memory_mb, c.safety_margin_fraction) == (25, 250, 0.15)
    assert (c.upper_bound_confidence_multiplier, c.upper_bound_confidence_exponent) == (1.0, 1.0)
    assert (c.lower_bound_confidence_multiplier, c.lower_bound_confidence_exponent) == (0.001, -2.0)
    assert (c.oom_bump_up_ratio, c.oom_min_bump_up_bytes) == (1.2, 100 * MI)
    assert (c.memory_aggregation_interval, c.memory_aggregation_interval_count) == (DAY, 8)
    assert c.cpu_histogram_decay_half_life == c.memory_histogram_decay_half_life == DAY


def test_bounds_are_percentiles_plus_margin_scaled_by_confidence():
    agg = workload(days=3)
    rec = by_name({"app": agg})["app"]
    conf = get_confidence(agg)
    assert conf == pytest.approx(3.0, abs=0.01)

    def chain(p, res, factor=1.0):
        h = agg.cpu if res == "cpu" else agg.memory
        base = int(h.percentile(p) * (1000 if res == "cpu" else 1))
        with_margin = base + int(base * 0.15)           # seed 003: x1.15
        return int(with_margin * factor) if factor != 1.0 else with_margin

    for res, minimum in (("cpu", 25), ("memory", 250 * MI)):
        assert rec.amounts("target")[res] == max(chain(0.9, res), minimum)
        assert rec.amounts("lowerBound")[res] == max(chain(0.5, res, (1 + 0.001 / conf) ** -2), minimum)
        assert rec.amounts("upperBound")[res] == max(chain(0.95, res, 1 + 1 / conf), minimum)
        assert rec.amounts("uncappedTarget") == rec.amounts("target")
    assert rec.amounts("lowerBound")["cpu"] < rec.amounts("target")["cpu"] < rec.amounts("upperBound")["cpu"]


def test_confidence_multipliers_match_the_upstream_comments():
    # "No history: *INF, 12h: *3, 24h: *2, 1 week: *1.14" and "5m: *0.6, 30m: *0.9, 60m: *0.95".
    def state(minutes):
        return SimpleNamespace(first_sample_start_us=0, last_sample_start_us=int(minutes * 60e6),
                               total_samples_count=int(minutes))
    base = ConstEstimator({"cpu": 1000, "memory": 10**9})
    upper = ConfidenceMultiplier(1.0, 1.0, base)
    lower = ConfidenceMultiplier(0.001, -2.0, base)
    assert upper.factor(state(12 * 60), "cpu") == pytest.approx(3, rel=1e-9)
    assert upper.factor(state(24 * 60), "cpu") == pytest.approx(2, rel=1e-9)
    assert upper.factor(state(7 * 24 * 60), "cpu") == pytest.approx(1.14, abs=0.003)
    assert lower.factor(state(5), "cpu") == pytest.approx(0.6, abs=0.01)
    assert lower.factor(state(30), "cpu") == pytest.approx(0.91, abs=0.01)
    assert lower.factor(state(60), "cpu") == pytest.approx(0.95, abs=0.01)
    assert upper.estimate(state(0)) == {"cpu": 10**14, "memory": 10**14}    # no history: *INF, capped
    assert lower.estimate(state(0)) == {"cpu": 0, "memory": 0}


def test_no_history_span_gives_unbounded_upper_and_minimum_lower():
    agg = AggregateContainerState()
    agg.add_samples("p", T0, cpu=0.5, memory=10**8)
    rec = recommend({"app": agg})["containerRecommendations"][0]
    # MaxResourceAmount 1e14; memory prints BinarySI since upstream 1.5 (TestResourcesAsResourceList)
    assert rec["upperBound"] == {"cpu": "100G", "memory": "97656250000Ki"}
    assert rec["lowerBound"] == {"cpu": "25m", "memory": "250Mi"}


def test_bounds_narrow_as_history_grows():
    recs = []
    for days in (1, 2, 4, 8):
        # The same day repeated: the distribution stays, only the confidence grows.
        rng = np.random.default_rng(5)
        day_cpu, day_mem = rng.uniform(0.2, 1.5, 1440), rng.uniform(3e8, 6e8, 1440)
        agg = AggregateContainerState()
        t = T0 + np.arange(0, days * DAY, 60)
        agg.add_samples("p", t, cpu=np.tile(day_cpu, days), memory=np.tile(day_mem, days))
        recs.append(by_name({"app": agg})["app"])
    for a, b in zip(recs, recs[1:]):
        for res in ("cpu", "memory"):
            assert b.amounts("upperBound")[res] < a.amounts("upperBound")[res]
            assert b.amounts("lowerBound")[res] >= a.amounts("lowerBound")[res]
    # After 8 days the upper bound is (1 + 1/8) over the +15% p95.
    assert recs[-1].amounts("upperBound")["cpu"] / recs[-1].amounts("target")["cpu"] < 1.5


@pytest.mark.parametrize("containers, cpu, memory", [(1, "25m", "250Mi"), (2, "12m", "125Mi"),
                                                     (3, "11m", "87381333")])
def test_pod_minimum_25m_250mi_is_shared_among_containers(containers, cpu, memory):
    tiny = {f"c{i}": workload(days=1, cpu=(0.001, 0.002), memory=(10**6, 2 * 10**6), seed=i)
            for i in range(containers)}
    rec = recommend(tiny)
    assert [c["containerName"] for c in rec["containerRecommendations"]] == sorted(tiny)
    for c in rec["containerRecommendations"]:
        # 25m / 3 = 8m is below the smallest CPU bucket's end plus margin (10m + 15% = 11m).
        assert c["target"] == {"cpu": cpu, "memory": memory}
        assert c["lowerBound"]["memory"] == memory


def test_status_shape_and_quantity_format():
    rec = recommend({"b": workload(days=1), "a": workload(days=1, seed=2)})
    first = rec["containerRecommendations"][0]
    assert list(first) == ["containerName", "target", "lowerBound", "upperBound", "uncappedTarget"]
    assert [c["containerName"] for c in rec["containerRecommendations"]] == ["a", "b"]
    assert first["target"]["cpu"].endswith("m")
    assert recommend({}) == {}


def test_capping_keeps_uncapped_target():
    agg = workload(days=2, cpu=(1.5, 2.5), memory=(10**9, 2 * 10**9))
    vpa = {"spec": {"resourcePolicy": {"containerPolicies": [
        {"containerName": "*", "minAllowed": {"cpu": "100m"}, "maxAllowed": {"cpu": "1", "memory": "500Mi"}},
        {"containerName": "other", "maxAllowed": {"cpu": "10m"}}]}}}
    rec = by_name({"app": agg}, vpa)["app"]
    uncapped = by_name({"app": agg})["app"]
    assert {k: str(v) for k, v in rec.target.items()} == {"cpu": "1", "memory": "500Mi"}
    assert rec.uncapped_target == uncapped.target
    assert str(rec.upper_bound["cpu"]) == "1" and str(rec.lower_bound["memory"]) == "500Mi"
    assert rec.capping == ["cpu capped to maxAllowed", "memory capped to maxAllowed"]


def test_min_allowed_raises_and_an_exact_name_beats_the_default_policy():
    agg = workload(days=2)
    vpa = {"spec": {"resourcePolicy": {"containerPolicies": [
        {"containerName": "*", "minAllowed": {"memory": "8Gi"}},
        {"containerName": "app", "minAllowed": {"memory": "1Gi"}, "maxAllowed": {"cpu": "0"}}]}}}
    rec = recommend({"app": agg}, vpa)["containerRecommendations"][0]
    assert rec["target"]["memory"] == "1Gi" and rec["uncappedTarget"]["memory"] != "1Gi"
    assert rec["target"]["cpu"] == rec["uncappedTarget"]["cpu"]     # a zero max does not cap


def test_controlled_resources_and_mode_off():
    aggs = {"app": workload(days=1), "sidecar": workload(days=1, seed=3), "tiny": workload(
        days=1, cpu=(0.001, 0.002), memory=(10**6, 2 * 10**6), seed=4)}
    vpa = {"spec": {"resourcePolicy": {"containerPolicies": [
        {"containerName": "app", "controlledResources": ["cpu"]},
        {"containerName": "sidecar", "mode": "Off"}]}}}
    recs = {c["containerName"]: c for c in recommend(aggs, vpa)["containerRecommendations"]}
    assert set(recs) == {"app", "tiny"}
    assert all(list(recs["app"][b]) == ["cpu"] for b in ("target", "lowerBound", "upperBound", "uncappedTarget"))
    # Two recommended containers share the pod minimum.
    assert recs["tiny"]["target"] == {"cpu": "12m", "memory": "125Mi"}     # BinarySI (upstream 1.5+)


def test_global_max_allowed_applies_where_the_policy_has_none():
    agg = workload(days=1, cpu=(3, 4))
    cfg = RecommenderConfig(max_allowed_cpu=2000, max_allowed_memory=100 * MI)
    rec = by_name({"app": agg}, None, cfg)["app"]
    assert rec.amounts("target") == {"cpu": 2000, "memory": 100 * MI}
    vpa = {"spec": {"resourcePolicy": {"containerPolicies": [{"containerName": "app", "maxAllowed": {"cpu": "3"}}]}}}
    assert by_name({"app": agg}, vpa, cfg)["app"].amounts("target")["cpu"] == 3000


def test_annotations_override_the_configuration():
    agg = workload(days=2)
    plain = by_name({"app": agg})["app"]
    vpa = {"metadata": {"annotations": {"vpa.kvert.io/target-cpu-percentile": "0.5",
                                        "vpa.kvert.io/recommendation-margin-fraction": "0",
                                        "vpa.kvert.io/round-memory-bytes": "1048576"}}}
    rec = by_name({"app": agg}, vpa)["app"]
    assert rec.amounts("target")["cpu"] == int(agg.cpu.percentile(0.5) * 1000)
    assert rec.amounts("target")["memory"] % MI == 0
    assert rec.amounts("target")["memory"] >= int(agg.memory.percentile(0.9))
    assert plain.amounts("target")["cpu"] > rec.amounts("target")["cpu"]


def test_bad_annotations_are_reported_and_ignored():
    cfg, problems = DEFAULT_CONFIG.with_annotations({
        "vpa.kvert.io/target-cpu-percentile": "lots",
        "vpa.kvert.io/no-such-setting": "1",
        "vpa.kvert.io/recommendation-lower-bound-memory-percentile": "0.99",
        "vpa.kvert.io/cpu-histogram-decay-half-life": "36h",
        "other.io/thing": "x"})
    assert cfg.target_cpu_percentile == 0.9 and cfg.lower_bound_memory_percentile == 0.5
    assert cfg.cpu_histogram_decay_half_life == 36 * 3600
    assert len(problems) == 3
    assert any("target-cpu-percentile" in p and "not a number" in p for p in problems)
    assert any("no-such-setting" in p for p in problems)
    assert any("lower bound <= target <= upper bound" in p for p in problems)


def test_every_upstream_flag_has_an_annotation():
    for flag in ("recommendation-margin-fraction", "pod-recommendation-min-cpu-millicores",
                 "pod-recommendation-min-memory-mb", "target-cpu-percentile",
                 "recommendation-lower-bound-cpu-percentile", "recommendation-upper-bound-cpu-percentile",
                 "target-memory-percentile", "recommendation-lower-bound-memory-percentile",
                 "recommendation-upper-bound-memory-percentile", "confidence-interval-cpu",
                 "confidence-interval-memory", "memory-aggregation-interval", "memory-aggregation-interval-count",
                 "memory-histogram-decay-half-life", "cpu-histogram-decay-half-life", "oom-bump-up-ratio",
                 "oom-min-bump-up-bytes", "round-cpu-millicores", "round-memory-bytes",
                 "cpu-integer-post-processor-enabled", "container-recommendation-max-allowed-cpu",
                 "container-recommendation-max-allowed-memory"):
        assert "vpa.kvert.io/" + flag in ANNOTATIONS


def test_container_policy_percentile_override():
    agg = workload(days=2)
    vpa = {"spec": {"resourcePolicy": {"containerPolicies": [{"containerName": "app", "targetCPUPercentile": "0.5"}]}}}
    base = int(agg.cpu.percentile(0.5) * 1000)
    assert by_name({"app": agg}, vpa)["app"].amounts("target")["cpu"] == base + int(base * 0.15)


def test_rounding_and_integer_cpu_post_processor():
    agg = workload(days=2)
    vpa = {"metadata": {"annotations": {"vpa.kvert.io/round-cpu-millicores": "50",
                                        "vpa.kvert.io/cpu-integer-post-processor-enabled": "true",
                                        "vpa-post-processor.kubernetes.io/app_integerCPU": "true"}}}
    rec = by_name({"app": agg}, vpa)["app"]
    assert rec.amounts("uncappedTarget")["cpu"] % 50 == 0
    assert rec.amounts("target")["cpu"] % 1000 == 0
    assert rec.amounts("target")["cpu"] >= rec.amounts("uncappedTarget")["cpu"]


def test_parse_recommendation_reads_the_status_back():
    rec = recommend({"app": workload(days=1)})
    parsed = parse_recommendation(rec)["app"]
    assert parsed.to_status() == rec["containerRecommendations"][0]
    assert parsed.amounts("target")["cpu"] == Quantity.parse(rec["containerRecommendations"][0]["target"]["cpu"]).milli_value()


def test_container_limit_range_capping_keeps_the_limit_ratio():
    container = {"resources": {"requests": {"cpu": "100m", "memory": "100Mi"}, "limits": {"cpu": "200m"}}}
    item = {"type": "Container", "max": {"cpu": "1"}, "min": {"memory": "200Mi"}}
    capped, notes = cap_to_container_limit_range({"cpu": Quantity.parse("800m"), "memory": Quantity.parse("150Mi")},
                                                 container, item)
    assert capped["cpu"] == Quantity.parse("500m")        # limit 2x request must stay <= 1 cpu
    assert capped["memory"] == Quantity.parse("200Mi")
    assert notes == ["cpu capped to fit Max in container LimitRange", "memory capped to fit Min in container LimitRange"]


def test_proportional_limits_keep_the_ratio():
    limits, notes = proportional_limits({"cpu": "200m", "memory": "1Gi"}, {"cpu": "100m", "memory": "512Mi"},
                                        {"cpu": Quantity.parse("300m"), "memory": Quantity.parse("1Gi")})
    assert limits == {"cpu": Quantity.parse("600m"), "memory": Quantity.parse("2Gi")} and notes == []
    limits, _ = proportional_limits(None, {"cpu": "1"}, {"cpu": Quantity.parse("2")}, {"cpu": "3"})
    assert limits == {"cpu": Quantity.parse("6")}     # the LimitRange default limit counts


def test_parse_duration():
    assert parse_duration("24h") == DAY and parse_duration("1h30m") == 5400 and parse_duration("90") == 90
    for bad in ("", "1d", "-5", "h"):
        with pytest.raises(ValueError):
            parse_duration(bad)


# -- properties -----------------------------------------------------------------------------------

usage = st.lists(st.tuples(st.floats(0, 8), st.floats(0, 4e9)), min_size=1, max_size=40)


@settings(max_examples=60, deadline=None)
@given(usage, st.integers(1, 3), st.floats(60, 3 * DAY))
def test_uncapped_bounds_are_ordered(values, pods, span):
    agg = AggregateContainerState()
    n = len(values)
    t = T0 + np.linspace(0, span, n)
    arr = np.array(values)
    agg.add_samples([f"p{i % pods}" for i in range(n)], t, cpu=arr[:, 0], memory=arr[:, 1])
    for rec in recommend_containers({"app": agg}):
        for res in ("cpu", "memory"):
            lo, target, hi = (rec.amounts(b)[res] for b in ("lowerBound", "target", "upperBound"))
            assert lo <= target <= hi


@settings(max_examples=25, deadline=None)
@given(st.lists(st.floats(0.01, 6), min_size=1, max_size=12), st.lists(st.floats(1e7, 5e9), min_size=1, max_size=12),
       st.integers(1, 3), st.integers(1, 3))
def test_more_history_of_the_same_distribution_never_widens_the_bounds(cpus, mems, days, more):
    """Each day the same usage pattern; with more days the distribution is unchanged and the
    confidence grows, so the lower bound can only rise and the upper bound only fall."""
    def build(d):
        agg = AggregateContainerState()
        t = T0 + np.arange(0, d * DAY, 60)
        agg.add_samples("p", t, cpu=np.resize(np.array(cpus), t.size), memory=np.resize(np.array(mems), t.size))
        return agg
    a, b = build(days), build(days + more)
    ps = [0.5, 0.9, 0.95]
    # Same distribution as the histograms see it (rounding can tip a tie between two buckets).
    assume(a.cpu.percentile_buckets(ps) == b.cpu.percentile_buckets(ps))
    assume(a.memory.percentile_buckets(ps) == b.memory.percentile_buckets(ps))
    ra, rb = by_name({"app": a})["app"], by_name({"app": b})["app"]
    for res in ("cpu", "memory"):
        assert rb.amounts("lowerBound")[res] >= ra.amounts("lowerBound")[res]
        assert rb.amounts("upperBound")[res] <= ra.amounts("upperBound")[res]
        assert rb.amounts("target")[res] == ra.amounts("target")[res]


def test_confidence_is_days_of_minutely_history():
    agg = workload(days=2, step=60)
    assert get_confidence(agg) == pytest.approx(2880 / 1440 - 1 / 1440, abs=1e-9) or \
        get_confidence(agg) == pytest.approx(min(2879 / 1440, 2.0))
    sparse = workload(days=2, step=600)     # one sample in 10 minutes: the count limits confidence
    assert get_confidence(sparse) == pytest.approx(288 / 1440)
    assert math.isclose(get_confidence(sparse, 3600.0), min((2 * DAY - 600) / 3600, 288 / 60))


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.floats(0, 8), st.floats(0, 4e9), st.integers(0, 3)), min_size=1, max_size=40),
       st.integers(1, 3), st.sampled_from([60.0, 3600.0, 86400.0]),
       st.sampled_from([{}, {"vpa.kvert.io/target-cpu-percentile": "0.7",
                             "vpa.kvert.io/recommendation-margin-fraction": "0.3",
                             "vpa.kvert.io/confidence-interval-memory": "6h"}]))
def test_all_rows_at_once_equal_the_estimator_chains(samples, containers, step, annotations):
    from kvert.vpa.aggregate import AggregateStore
    from kvert.vpa.estimators import BOUND_ORDER, estimate_rows
    from kvert.vpa.recommendation import row_parameters
    store = AggregateStore()
    vpa = {"metadata": {"name": "v", "namespace": "ns", "annotations": annotations}}
    names = [f"c{i}" for i in range(containers)]
    for k, (cpu, mem, pod) in enumerate(samples):
        agg = store.get_for_vpa(vpa, names[k % containers])
        agg.add_samples(f"p{pod}", T0 + k * step, cpu=cpu, memory=mem)
    aggs = store.for_vpa("ns", "v")
    expected = {c.container_name: c for c in recommend_containers(aggs, vpa)}
    cfg, _ = DEFAULT_CONFIG.for_vpa(vpa)
    rows = np.array([aggs[n].row for n in sorted(aggs)])
    bank = next(iter(store.banks.values()))
    got = estimate_rows(bank, rows, row_parameters([cfg] * rows.size, np.full(rows.size, len(aggs))))
    for i, name in enumerate(sorted(aggs)):
        for b, bound in enumerate(BOUND_ORDER):
            assert {"cpu": int(got[i, b, 0]), "memory": int(got[i, b, 1])} == expected[name].amounts(bound)
