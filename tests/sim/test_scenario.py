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
    dep = scn.workloads[0].manifest
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
    assert w.manifest["spec"]["selector"]["matchLabels"][WORKLOAD_LABEL] == "api"
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
    assert scn.node_count == 3 and scn.workloads[0].replicas == 2 and scn.duration == 2 * 86400


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


def test_a_workloads_vpa_annotations_are_merged_over_the_policys():
    web = base()["workloads"][0]
    worker = {**web, "name": "worker", "vpa": {"annotations": {"vpa.kvert.io/workload": "batch",
                                                               "example.com/owner": "jobs"}}}
    scn = parse_scenario(base(workloads=[web, worker], policies=[
        {"name": "none"},
        {"name": "kvert", "vpa": {"annotations": {"vpa.kvert.io/model": "in-place",
                                                  "vpa.kvert.io/workload": "auto"}}},
        {"name": "upstream", "vpa": {"updateMode": "Recreate"}}]))
    web_w, worker_w = scn.workloads
    kvert, upstream = scn.policies[1], scn.policies[2]
    assert scn.vpa_object(web_w, kvert)["metadata"]["annotations"] == {
        "vpa.kvert.io/model": "in-place", "vpa.kvert.io/workload": "auto"}
    # the workload's value wins; the policy's others are kept
    assert scn.vpa_object(worker_w, kvert)["metadata"]["annotations"] == {
        "vpa.kvert.io/model": "in-place", "vpa.kvert.io/workload": "batch", "example.com/owner": "jobs"}
    assert scn.vpa_object(worker_w, upstream)["metadata"]["annotations"] == {
        "vpa.kvert.io/workload": "batch", "example.com/owner": "jobs"}
    assert "annotations" not in scn.vpa_object(web_w, upstream)["metadata"]
    # the policy's own annotations are not changed by a workload's
    assert kvert.vpa["annotations"]["vpa.kvert.io/workload"] == "auto"


def test_a_full_deployment_takes_vpa_settings_too():
    dep = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "api"},
           "spec": {"replicas": 1, "template": {"spec": {"containers": [{"name": "c", "image": "x"},
                                                                        {"name": "side", "image": "y"}]}}}}
    scn = parse_scenario(base(
        workloads=[{"deployment": dep, "vpa": {
            "annotations": {"vpa.kvert.io/capacity-aware": "true"},
            "resourcePolicy": {"containerPolicies": [{"containerName": "side", "mode": "Off"},
                                                     {"containerName": "*", "maxAllowed": {"memory": "1Gi"}}]}}}],
        vpa={"resourcePolicy": {"containerPolicies": [{"containerName": "*", "minAllowed": {"cpu": "25m"}},
                                                      {"containerName": "c", "minAllowed": {"cpu": "50m"}}]}},
        policies=[{"name": "ip", "vpa": {"updateMode": "InPlaceOrRecreate"}}]))
    vpa = scn.vpa_object(scn.workloads[0], scn.policies[0])
    assert vpa["metadata"]["annotations"] == {"vpa.kvert.io/capacity-aware": "true"}
    # the workload's container policies replace the template's of the same container, the others stay
    assert vpa["spec"]["resourcePolicy"]["containerPolicies"] == [
        {"containerName": "side", "mode": "Off"},
        {"containerName": "*", "maxAllowed": {"memory": "1Gi"}},
        {"containerName": "c", "minAllowed": {"cpu": "50m"}}]
    # the scenario's template is left as it was for the other workloads
    assert scn.vpa_template["resourcePolicy"]["containerPolicies"][0] == {"containerName": "*",
                                                                         "minAllowed": {"cpu": "25m"}}
    from kvert.api.validation.vpa import validate_vpa
    assert validate_vpa(vpa) == []


def workload_with(vpa, policies=None):
    web = {**base()["workloads"][0], "vpa": vpa}
    return base(workloads=[base()["workloads"][0], web | {"name": "web2"}],
                policies=policies or [{"name": "ip", "vpa": {"updateMode": "InPlaceOrRecreate"}}])


@pytest.mark.parametrize("vpa, message", [
    ({"annotations": {"vpa.kvert.io/workload": "sometimes"}},
     "workloads[1].vpa.annotations[\"vpa.kvert.io/workload\"]: 'sometimes' is not one of service, batch, auto"),
    ({"annotations": {"vpa.kvert.io/wrkload": "batch"}},
     "workloads[1].vpa.annotations[\"vpa.kvert.io/wrkload\"]: unknown setting; known: "),
    ({"annotations": {"vpa.kvert.io/capacity-aware": True}},
     "workloads[1].vpa.annotations[\"vpa.kvert.io/capacity-aware\"]: expected a string, got True"),
    ({"annotations": ["batch"]}, "workloads[1].vpa.annotations: expected a mapping"),
    ({"updateMode": "Off"}, "workloads[1].vpa: unknown field 'updateMode'"),
    ({"resourcePolicy": {"containerPolicies": [{"containerName": "app", "mode": "Sometimes"}]}},
     "workloads[1].vpa.resourcePolicy.containerPolicies[0].mode: "),
    ({"resourcePolicy": {"containerPolicies": [{"containerName": "ap"}]}},
     "workloads[1].vpa.resourcePolicy.containerPolicies[0].containerName: no container 'ap' in the workload"),
    ({"resourcePolicy": {"containerPolicies": [{"containerName": "app", "minAllowed": {"cpu": "2"},
                                                "maxAllowed": {"cpu": "1"}}]}},
     "workloads[1].vpa.resourcePolicy.containerPolicies[0].maxAllowed"),
])
def test_a_workloads_vpa_settings_are_checked(vpa, message):
    assert error(workload_with(vpa)).startswith(message)


def test_a_workloads_vpa_annotations_are_checked_with_each_policys():
    # each alone is fine (lower 0.5 <= target 0.6; lower 0.7 <= target 0.9), together not
    doc = workload_with({"annotations": {"vpa.kvert.io/target-cpu-percentile": "0.6"}}, policies=[
        {"name": "none"}, {"name": "tight", "vpa": {"annotations": {
            "vpa.kvert.io/recommendation-lower-bound-cpu-percentile": "0.7"}}}])
    assert error(doc).startswith("workloads[1].vpa.annotations: with policies[1] ('tight'): "
                                 "vpa.kvert.io/*-percentile: cpu percentiles must satisfy")


def test_a_policys_vpa_annotations_name_the_annotation():
    assert error(base(policies=[{"name": "x", "vpa": {"annotations": {"vpa.kvert.io/model": "fast"}}}])).startswith(
        "policies[0].vpa.annotations[\"vpa.kvert.io/model\"]: ")


def test_a_workloads_vpa_settings_may_name_the_policies_they_apply_under():
    web = base()["workloads"][0]
    doc = base(workloads=[web, {**web, "name": "worker", "vpa": {
        "policies": ["kvert"], "annotations": {"vpa.kvert.io/workload": "batch"},
        "resourcePolicy": {"containerPolicies": [{"containerName": "app", "mode": "Off"}]}}}],
        vpa={"resourcePolicy": {"containerPolicies": [{"containerName": "*"}]}},
        policies=[{"name": "none"}, {"name": "upstream", "vpa": {}},
                  {"name": "kvert", "vpa": {"annotations": {"vpa.kvert.io/workload": "auto"}}}])
    scn = parse_scenario(doc)
    worker = scn.workloads[1]
    upstream, kvert = scn.vpa_object(worker, scn.policies[1]), scn.vpa_object(worker, scn.policies[2])
    assert "annotations" not in upstream["metadata"]
    assert upstream["spec"]["resourcePolicy"]["containerPolicies"] == [{"containerName": "*"}]
    assert kvert["metadata"]["annotations"] == {"vpa.kvert.io/workload": "batch"}
    assert kvert["spec"]["resourcePolicy"]["containerPolicies"][0] == {"containerName": "app", "mode": "Off"}
    doc["workloads"][1]["vpa"]["policies"] = ["kvert", "kevrt"]
    assert error(doc).startswith("workloads[1].vpa.policies[1]: no policy 'kevrt'")
    doc["workloads"][1]["vpa"]["policies"] = ["none"]
    assert error(doc).startswith("workloads[1].vpa.policies[0]: policy 'none' has no VPA")
    doc["workloads"][1]["vpa"]["policies"] = "kvert"
    assert error(doc).startswith("workloads[1].vpa.policies: expected a non-empty list")
