"""Upstream VPA 1.7-1.8's gated features as policies a scenario names: InPlace and CPU startup
boost run with the gates they need (or the policy's own ``featureGates``), so ``kvert simulate``
compares them with the other update modes."""

from __future__ import annotations

import pytest

from kvert.sim.engine import policy_gates, simulate
from kvert.sim.metrics import policy_metrics
from kvert.sim.scenario import ScenarioError, parse_scenario

BOOST = {"cpu": {"type": "Factor", "factor": 3, "durationSeconds": 1200}}


def scenario(policies: list[dict], hours: float = 1.0):
    return parse_scenario({
        "duration": f"{hours}h", "seed": 3, "tick": "30s", "sampleInterval": "60s",
        "nodes": {"count": 2, "capacity": {"cpu": "4", "memory": "8Gi"}},
        "workloads": [{"name": "hamster", "replicas": 2,
                       "containers": [{"name": "hamster", "requests": {"cpu": "100m", "memory": "50Mi"},
                                       "usage": {"cpu": "300m", "memory": "100Mi"}}]}],
        "policies": policies})


def test_gates_follow_what_the_policy_names():
    scn = scenario([
        {"name": "InPlace", "vpa": {"updateMode": "InPlace"}},
        {"name": "boost", "vpa": {"updateMode": "InPlaceOrRecreate", "spec": {"startupBoost": BOOST}}},
        {"name": "plain", "vpa": {"updateMode": "Recreate"}},
        {"name": "explicit", "vpa": {"updateMode": "Recreate", "featureGates": "AllAlpha=true"}}])
    w = scn.workloads[0]
    gates = {p.name: policy_gates(p, [scn.vpa_object(w, p)]) for p in scn.policies}
    assert gates["InPlace"].in_place and not gates["InPlace"].cpu_startup_boost
    assert gates["boost"].cpu_startup_boost and not gates["boost"].in_place
    assert not (gates["plain"].in_place or gates["plain"].cpu_startup_boost or gates["plain"].per_vpa_config)
    assert gates["explicit"].in_place and gates["explicit"].per_vpa_config


def test_a_bad_gate_is_named_with_its_path():
    with pytest.raises(ScenarioError, match=r"policies\[0\]\.vpa\.featureGates: unrecognized feature gate: Nope"):
        scenario([{"name": "x", "vpa": {"updateMode": "Recreate", "featureGates": "Nope=true"}}])


def test_in_place_and_startup_boost_compared():
    pytest.importorskip("kvert.vpa.updater")
    fast = {"recommender": {"interval": "1m"}, "updater": {"interval": "1m"}}
    scn = scenario([
        {"name": "InPlaceOrRecreate", "vpa": {"updateMode": "InPlaceOrRecreate", **fast}},
        {"name": "InPlace", "vpa": {"updateMode": "InPlace", **fast}},
        {"name": "startup boost", "vpa": {"updateMode": "InPlaceOrRecreate", "spec": {"startupBoost": BOOST},
                                          **fast}}])
    plain, in_place, boost = simulate(scn)
    assert not (plain.skipped or in_place.skipped or boost.skipped)
    ip = policy_metrics(in_place)["workloads"]["hamster"]
    assert ip["evictions"] == 0 and ip["in_place_resizes"] >= 2 and ip["pods_created"] == 2
    # the boost: the pods start at 3x their CPU request (upstream features.md, "CPU Startup
    # Boost": Factor multiplies the CPU), kept for durationSeconds after Ready, then resized down
    first_plain = plain.workloads["hamster"]["cpu_request"][0]
    first_boost = boost.workloads["hamster"]["cpu_request"][0]
    assert first_plain == 2 * 100 and first_boost == 3 * first_plain
    # held while durationSeconds (20 min) has not passed since the pods became ready
    assert boost.workloads["hamster"]["cpu_request"][15] == first_boost
    last_plain = plain.workloads["hamster"]["cpu_request"][-1]
    last_boost = boost.workloads["hamster"]["cpu_request"][-1]
    assert last_boost == last_plain            # unboosted to the same recommendation
    assert policy_metrics(boost)["workloads"]["hamster"]["evictions"] == 0
