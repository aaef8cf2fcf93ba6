"""What a simulation costs, counted in work rather than wall time (the wall-time rate is
benchmarks/sim_bench.py's): once the pods run, nothing is written per object per minute.

The bounds follow from the design (docs/architecture.md, "Simulation at scale"), not from a
measured run: a node renews its lease and reports its status about 24 times a run; a VPA's
status is written when its recommendation moves materially; the fleet steps once a tick plus
once per event. The old design wrote every VPA's status nearly every minute (60 writes per
VPA-hour) and polled every node every tick."""

from __future__ import annotations

import pytest

from kvert.sim.engine import simulate
from kvert.sim.scenario import parse_scenario

NODES, DEPLOYMENTS, REPLICAS, HOURS = 10, 10, 10, 3


def scenario() -> dict:
    return {
        "name": "work", "duration": f"{HOURS}h", "seed": 1, "tick": "60s", "sampleInterval": "60s",
        "nodes": {"count": NODES, "capacity": {"cpu": "16", "memory": "64Gi"}},
        "workloads": [{"name": f"app-{i}", "replicas": REPLICAS, "containers": [{
            "name": "app", "requests": {"cpu": "100m", "memory": "128Mi"},
            "usage": {"cpu": {"profile": "diurnal", "min": "50m", "max": "300m", "period": "24h"},
                      "memory": {"profile": "constant", "value": "150Mi"}}}]} for i in range(DEPLOYMENTS)],
        "policies": [{"name": "none", "vpa": "none"},
                     {"name": "in-place", "vpa": {"updateMode": "InPlaceOrRecreate"}}],
    }


@pytest.fixture(scope="module")
def runs():
    return {r.policy: r for r in simulate(parse_scenario(scenario()), skip_unavailable=False)}


def test_without_a_vpa_the_running_cluster_writes_only_heartbeats(runs):
    heartbeats_per_hour = 2 * NODES * 24 / HOURS          # lease + node status, ~24 times a run
    assert runs["none"].work["api_writes_per_hour"] <= 1.5 * heartbeats_per_hour


def test_a_vpa_status_is_written_when_its_recommendation_moves_not_every_minute(runs):
    # the recommender loops every minute; a status a loop would be 60 per VPA-hour
    assert runs["in-place"].work["vpa_writes_per_hour"] / DEPLOYMENTS <= 20


def test_the_fleet_steps_once_a_tick_plus_events(runs):
    ticks_per_hour = 3600 / 60
    for run in runs.values():
        assert ticks_per_hour <= run.work["fleet_steps_per_hour"] <= 1.5 * ticks_per_hour
