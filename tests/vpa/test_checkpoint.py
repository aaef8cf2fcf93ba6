import copy
import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kvert.api.validation.vpa import validate_vpa_checkpoint
from kvert.vpa.aggregate import AggregateContainerState, AggregateStore
from kvert.vpa.checkpoint import (CheckpointError, aggregate_from_checkpoint, checkpoint_for, load_checkpoint,
                                  restore_into)
from kvert.vpa.recommendation import RecommenderConfig, recommend

DAY = 86400.0
T0 = 1714521600.0


def hamster(days=3, seed=0, pods=("h1", "h2"), step=60.0, start=T0):
    rng = np.random.default_rng(seed)
    agg = AggregateContainerState()
    t = start + np.arange(0, days * DAY, step)
    for pod in pods:
        agg.add_samples(pod, t, cpu=rng.gamma(4, 0.12, t.size), memory=rng.normal(3e8, 2e7, t.size))
    return agg


def test_checkpoint_object_has_upstreams_shape_and_validates():
    agg = hamster()
    cp = checkpoint_for(agg, "default", "hamster-vpa", "hamster", now=T0 + 10 * DAY)
    assert cp["apiVersion"] == "autoscaling.k8s.io/v1" and cp["kind"] == "VerticalPodAutoscalerCheckpoint"
    assert cp["metadata"] == {"name": "hamster-vpa-hamster", "namespace": "default"}
    assert cp["spec"] == {"vpaObjectName": "hamster-vpa", "containerName": "hamster"}
    status = cp["status"]
    assert status["version"] == "v3" and status["totalSamplesCount"] == 2 * 3 * 1440
    assert status["firstSampleStart"] == "2024-05-01T00:00:00Z"
    assert status["lastSampleStart"] == "2024-05-03T23:59:00Z"
    assert status["lastUpdateTime"] == "2024-05-11T00:00:00Z"
    for hist in (status["cpuHistogram"], status["memoryHistogram"]):
        assert max(hist["bucketWeights"].values()) == 10000
        assert all(isinstance(k, str) and isinstance(v, int) and v > 0 for k, v in hist["bucketWeights"].items())
        assert isinstance(hist["totalWeight"], float) and hist["referenceTimestamp"].endswith("T00:00:00Z")
    assert validate_vpa_checkpoint(json.loads(json.dumps(cp))) == []


def test_checkpoint_restore_gives_the_same_recommendation():
    agg = hamster(days=5, seed=3)
    now = T0 + 6 * DAY     # every memory window closed
    cp = json.loads(json.dumps(checkpoint_for(agg, "ns", "vpa", "app", now)))
    back = aggregate_from_checkpoint(cp)
    assert recommend({"app": back}) == recommend({"app": agg})
    assert (back.first_sample_start_us, back.last_sample_start_us, back.total_samples_count) == \
        (agg.first_sample_start_us, agg.last_sample_start_us, agg.total_samples_count)
    # ... and a second round trip writes the same checkpoint.
    again = checkpoint_for(back, "ns", "vpa", "app", now)
    assert again["status"] == cp["status"]


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 10**6), st.floats(0.05, 9), st.sampled_from([60.0, 300.0, 3600.0]),
       st.floats(0, 3600 * 23))
def test_round_trip_is_exact_for_any_history(seed, days, step, offset):
    agg = hamster(days=days, seed=seed, pods=("a",), step=step, start=T0 + offset + 0.25)
    now = T0 + offset + days * DAY + 2 * DAY
    back = aggregate_from_checkpoint(json.loads(json.dumps(checkpoint_for(agg, "ns", "v", "c", now))))
    assert recommend({"c": back}) == recommend({"c": agg})


def test_open_memory_windows_are_left_out():
    agg = AggregateContainerState()
    t = T0 + np.arange(0, 1.5 * DAY, 600)
    agg.add_samples("p", t, cpu=0.5, memory=4e8)        # windows: [T0, T0+1d) closed, [T0+1d, T0+2d) open
    now = T0 + 1.5 * DAY
    status = checkpoint_for(agg, "ns", "v", "c", now)["status"]
    back = aggregate_from_checkpoint(status)
    assert back.memory.total_weight == pytest.approx(agg.memory.total_weight - 2.0)   # the open peak weighs 2
    assert agg.memory.total_weight == pytest.approx(3.0)                                # untouched


def test_times_with_fractions_survive():
    agg = AggregateContainerState()
    agg.add_samples("p", [T0 + 0.123456, T0 + 60.5], cpu=[0.5, 0.5])
    status = checkpoint_for(agg, "ns", "v", "c", T0 + DAY)["status"]
    assert status["firstSampleStart"] == "2024-05-01T00:00:00.123456Z"
    assert status["lastSampleStart"] == "2024-05-01T00:01:00.5Z"
    back = aggregate_from_checkpoint(status)
    assert back.first_sample_start_us == agg.first_sample_start_us


def test_empty_aggregate_round_trips():
    status = checkpoint_for(AggregateContainerState(), "ns", "v", "c", T0)["status"]
    assert status["cpuHistogram"] == {"referenceTimestamp": None, "bucketWeights": {}, "totalWeight": 0.0}
    assert status["firstSampleStart"] is None
    assert aggregate_from_checkpoint(status).is_empty()


@pytest.mark.parametrize("change, message", [
    (lambda s: s.update(version="v2"), "unsupported checkpoint version v2"),
    (lambda s: s["cpuHistogram"]["bucketWeights"].update({"500": 1}), "exceeding"),
    (lambda s: s["memoryHistogram"].update(totalWeight=-1.0), "negative weight"),
    (lambda s: s.update(totalSamplesCount=-3), "totalSamplesCount"),
    (lambda s: s.update(lastSampleStart="soon"), "lastSampleStart"),
])
def test_bad_checkpoints_are_refused_and_change_nothing(change, message):
    agg = hamster(days=1)
    status = copy.deepcopy(checkpoint_for(agg, "ns", "v", "c", T0 + 3 * DAY)["status"])
    change(status)
    target = AggregateContainerState()
    with pytest.raises(CheckpointError, match=message):
        load_checkpoint(target, status)
    assert target.is_empty() and target.cpu.total_weight == 0.0


def test_restore_into_a_store():
    agg = hamster(days=2)
    store = AggregateStore()
    key = restore_into(store, checkpoint_for(agg, "prod", "web", "nginx", T0 + 4 * DAY))
    assert key == ("prod", "web", "nginx")
    assert recommend(store.for_vpa("prod", "web")) == recommend({"nginx": agg})
    with pytest.raises(CheckpointError):
        restore_into(store, {"metadata": {}, "spec": {}, "status": {}})


def test_percentiles_configured_per_vpa_stay_exact():
    cfg = RecommenderConfig(target_cpu_percentile=0.7, upper_bound_cpu_percentile=0.99)
    agg = AggregateContainerState(cfg)
    rng = np.random.default_rng(9)
    t = T0 + np.arange(0, 2 * DAY, 60)
    agg.add_samples("p", t, cpu=rng.uniform(0, 3, t.size), memory=1e8)
    back = aggregate_from_checkpoint(checkpoint_for(agg, "ns", "v", "c", T0 + 4 * DAY), cfg)
    assert recommend({"c": back}, config=cfg) == recommend({"c": agg}, config=cfg)
