import json

import pytest

from kvert.sim.scenario import WORKLOAD_LABEL, ScenarioError, load_scenario, parse_scenario


def base(**over):
    doc = {"duration": "1h", "seed": 1, "tick": "30s", "sampleInterval": "60s",
           "nodes": {"count": 1, "capacity": {"cpu": "4", "memory": "8Gi"}},
           "workloads": [{"name": "web", "replicas": 2,
                          "containers": [{"name": "app", "requests": {"cpu": "100m", "memory": "50Mi"},
                                          "usage": {"cpu": "500m", "memory": "250Mi"}}]}],
           "policies": [{"name": "none", "vpa": "none"}]}
    doc.update(over)
    return doc


def error(doc) -> str:
    with pytest.raises(ScenarioError) as e:
        parse_scenario(doc)
    return str(e.value)


def test_short_form_builds_a_deployment_with_usage_annotation():
    scn = parse_scenario(base(duration="2d"))
    assert scn.duration == 2 * 86400 and scn.tick == 30 and scn.sample_interval == 60
    dep = scn.workloads[0].deployment
    assert dep["kind"] == "Deployment" and dep["spec"]["replicas"] == 2
    tmpl = dep["spec"]["template"]
    assert tmpl["metadata"]["labels"][WORKLOAD_LABEL] == "web"
    assert json.loads(tmpl["metadata"]["annotations"]["kvert.io/usage"]) == {"app": {"cpu": "500m", "memory": "250Mi"}}
    assert scn.policies[0].vpa is None


def test_full_deployment_and_vpa_policies():
    dep = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "api"},
           "spec": {"replicas": 1, "template": {"metadata": {"annotations": {"kvert.io/usage": {"c": {"cpu": "1"}}}},
                                                "spec": {"containers": [{"name": "c", "image": "x"}]}}}}
    scn = parse_scenario(base(workloads=[{"deployment": dep}],
                              vpa={"resourcePolicy": {"containerPolicies": [{"containerName": "*"}]}},
                              policies=[{"name": "none"},
                                        {"name": "ip", "vpa": {"updateMode": "InPlaceOrRecreate",
                                                               "recommender": {"interval": "2m"}}}]))
    w = scn.workloads[0]
    assert w.name == "api" and w.namespace == "default" and w.containers == ["c"]
    assert w.deployment["spec"]["selector"]["matchLabels"][WORKLOAD_LABEL] == "api"
    p = scn.policies[1]
    assert p.update_mode == "InPlaceOrRecreate" and p.vpa["recommender"]["interval"] == 120
    vpa = scn.vpa_object(w, p)
    assert vpa["spec"]["targetRef"]["name"] == "api"
    assert vpa["spec"]["updatePolicy"]["updateMode"] == "InPlaceOrRecreate"
    assert vpa["spec"]["resourcePolicy"]["containerPolicies"][0]["containerName"] == "*"


@pytest.mark.parametrize("change, field", [
    ({"duration": "soon"}, "duration"),
    ({"duration": None}, "duration: required"),
    ({"seed": "x"}, "seed"),
    ({"tick": "0s"}, "tick"),
    ({"bogus": 1}, "'bogus'"),
    ({"nodes": {"count": 0, "capacity": {"cpu": "4", "memory": "8Gi"}}}, "nodes.count"),
    ({"nodes": {"count": 1, "capacity": {"cpu": "4"}}}, "nodes.capacity.memory"),
    ({"nodes": {"count": 1, "capacity": {"cpu": "four", "memory": "8Gi"}}}, "nodes.capacity.cpu"),
    ({"workloads": []}, "workloads"),
    ({"workloads": [{"name": "Web!", "containers": [{"name": "a"}]}]}, "workloads[0].name"),
    ({"workloads": [{"name": "w", "replicas": -1, "containers": [{"name": "a"}]}]}, "workloads[0].replicas"),
    ({"workloads": [{"name": "w", "containers": [{"name": "a", "requests": {"cpu": "lots"}}]}]},
     "workloads[0].containers[0].requests.cpu"),
    ({"workloads": [{"name": "w", "containers": [{"name": "a", "usage": {"cpu": {"profile": "wobbly"}}}]}]},
     "workloads[0].containers[0].usage.cpu"),
    ({"policies": [{"name": "x", "vpa": {"updateMode": "Sometimes"}}]}, "policies[0].vpa.updateMode"),
    ({"policies": [{"name": "x"}, {"name": "x"}]}, "policies[1].name"),
    ({"policies": [{"name": "x", "vpa": {"recommender": {"interval": "often"}}}]},
     "policies[0].vpa.recommender.interval"),
])
def test_errors_name_the_field(change, field):
    doc = base(**change)
    if change.get("duration", 0) is None:
        del doc["duration"]
    assert field in error(doc)


def test_load_reports_file_problems(tmp_path):
    with pytest.raises(ScenarioError, match="missing.yaml"):
        load_scenario(tmp_path / "missing.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text("duration: [\n")
    with pytest.raises(ScenarioError, match="invalid YAML"):
        load_scenario(bad)


def test_the_hamster_example_loads():
    from pathlib import Path
    scn = load_scenario(Path(__file__).resolve().parents[2] / "examples" / "scenarios" / "hamster.yaml")
    assert [p.name for p in scn.policies] == ["no VPA", "Recreate", "InPlaceOrRecreate"]
    assert scn.nodes.count == 3 and scn.workloads[0].replicas == 2 and scn.duration == 2 * 86400


def test_recommender_and_updater_settings_are_validated():
    ok = parse_scenario(base(policies=[{"name": "fast", "vpa": {
        "updateMode": "Recreate",
        "recommender": {"interval": "30s", "targetCpuPercentile": 0.95, "cpu-histogram-decay-half-life": "1h"},
        "updater": {"interval": "2m", "minReplicas": 1}}}]))
    p = ok.policies[0]
    assert p.vpa["recommender"]["target_cpu_percentile"] == 0.95
    assert p.vpa["recommender"]["cpu_histogram_decay_half_life"] == 3600
    assert p.vpa["updater"] == {"interval": 120, "min_replicas": 1}
    assert "policies[0].vpa.recommender.wobble" in error(base(policies=[{"name": "x", "vpa": {
        "recommender": {"wobble": 1}}}]))
    assert "policies[0].vpa.updater.speed" in error(base(policies=[{"name": "x", "vpa": {
        "updater": {"speed": 1}}}]))


@pytest.mark.parametrize("mode", ["InPlace", "Auto", "InPlaceOrRecreate", "Recreate", "Initial", "Off"])
def test_every_update_mode_the_vpa_api_accepts_is_a_policy(mode):
    scn = parse_scenario(base(policies=[{"name": mode, "vpa": {"updateMode": mode}}]))
    w, p = scn.workloads[0], scn.policies[0]
    assert p.update_mode == mode
    assert scn.vpa_object(w, p)["spec"]["updatePolicy"]["updateMode"] == mode


def test_an_unknown_update_mode_lists_the_valid_ones():
    message = error(base(policies=[{"name": "x", "vpa": {"updateMode": "Sometimes"}}]))
    assert message.startswith("policies[0].vpa.updateMode:")
    for mode in ("Off", "Initial", "Recreate", "InPlaceOrRecreate", "InPlace", "Auto"):
        assert mode in message
