"""Report figures from constructed runs: % of requests, breakdowns by cause, recommendation
history, CPU demand and the RequestsOnly suggestion (the values follow the definitions in
kvert.sim.metrics and kvert.sim.report, computed by hand)."""

import json

import numpy as np
import pytest

from kvert.sim.engine import SERIES, PolicyRun
from kvert.sim.metrics import policy_breakdowns, policy_metrics
from kvert.sim.report import report_html, report_json, suggestions, write_report
from kvert.sim.scenario import parse_scenario

MI = 2**20


def scenario(controlled_values=None):
    rule = {"containerName": "*"}
    if controlled_values:
        rule["controlledValues"] = controlled_values
    return parse_scenario({
        "duration": "20m", "seed": 1, "tick": "60s", "sampleInterval": "300s",
        "nodes": {"count": 1, "capacity": {"cpu": "4", "memory": "8Gi"}},
        "workloads": [
            {"name": "batch", "replicas": 1, "containers": [
                {"name": "worker", "requests": {"cpu": "1", "memory": "100Mi"}, "limits": {"cpu": "1"}}]},
            {"name": "web", "replicas": 1, "containers": [
                {"name": "app", "requests": {"cpu": "1", "memory": "100Mi"}}]}],
        "vpa": {"resourcePolicy": {"containerPolicies": [rule]}},
        "policies": [{"name": "no VPA", "vpa": "none"},
                     {"name": "InPlaceOrRecreate", "vpa": {"updateMode": "InPlaceOrRecreate"}}]})


def series(**values):
    out = {k: np.zeros(4) for k in SERIES}
    out.update({k: np.asarray(v, dtype=float) for k, v in values.items()})
    return out


def run(policy="InPlaceOrRecreate", mode="InPlaceOrRecreate", demand=(0, 0, 0, 0), throttled=30.0):
    # sample 0: nothing runs; then use 600m of 1000m twice (40% slack), 1200m once (20% under)
    batch = series(cpu_request=[0, 1000, 1000, 1000], cpu_use=[0, 600, 600, 1200], cpu_demand=demand,
                   memory_request=[0, 100 * MI, 100 * MI, 100 * MI], memory_use=[0, 50 * MI, 100 * MI, 150 * MI],
                   pods_running=[0, 1, 1, 1], pods_pending=[1, 0, 0, 0])
    web = series(cpu_request=[1000] * 4, cpu_use=[1000] * 4, memory_request=[100 * MI] * 4,
                 memory_use=[100 * MI] * 4, pods_running=[1] * 4)
    counters = {"batch": {"throttled_seconds": throttled, "oom_kills": 2, "restarts": 3, "evictions": 1},
                "web": {"throttled_seconds": 0.0}}
    events = [
        {"time": 900.0, "kind": "oom-kill", "workload": "batch", "pod": "batch-1", "container": "worker",
         "cause": "container limit", "usage": 150 * MI, "limit": 150 * MI},
        {"time": 300.0, "kind": "oom-kill", "workload": "batch", "pod": "batch-1", "container": "worker",
         "cause": "node memory", "usage": 150 * MI, "limit": 8 * 1024 * MI},
        {"time": 600.0, "kind": "eviction", "workload": "batch", "pod": "batch-1", "node": "node-1",
         "cause": "EvictionByEvictionAPI", "message": ""},
    ]
    history = {"batch": {"worker": [
        {"time": 300.0, "target": {"cpu": 700, "memory": 80 * MI}, "lowerBound": {"cpu": 500, "memory": 60 * MI},
         "upperBound": {"cpu": 900, "memory": 120 * MI}},
        {"time": 900.0, "target": {"cpu": 1100, "memory": 140 * MI}, "lowerBound": {"cpu": 800, "memory": 90 * MI},
         "upperBound": {"cpu": 1500, "memory": 200 * MI}}]}}
    return PolicyRun(policy, mode, np.arange(1, 5) * 300.0, 300.0, {"batch": batch, "web": web}, counters,
                     {"batch": 300.0, "web": 0.0}, np.ones(4), events=events,
                     restarts_by_cause={"batch": {"OOMKilled": 2, "Completed": 1}},
                     pending_by_reason={"batch": {"Unschedulable": 240.0, "ContainerCreating": 60.0}},
                     recommendation_history=history)


def test_slack_and_under_provisioning_as_percent_of_requests():
    m = policy_metrics(run())
    batch, web = m["workloads"]["batch"], m["workloads"]["web"]
    # averaged over the three samples where the pod runs; the first (nothing runs) is left out
    assert batch["cpu_slack_percent"] == pytest.approx((40 + 40 + 0) / 3, abs=1e-4)
    assert batch["cpu_under_percent"] == pytest.approx((0 + 0 + 20) / 3, abs=1e-4)
    assert batch["memory_slack_percent"] == pytest.approx((50 + 0 + 0) / 3, abs=1e-4)
    assert batch["memory_under_percent"] == pytest.approx((0 + 0 + 50) / 3, abs=1e-4)
    assert web["cpu_slack_percent"] == 0 and web["cpu_under_percent"] == 0
    # the policy's figure: each workload counts once
    assert m["totals"]["cpu_slack_percent"] == pytest.approx(80 / 3 / 2, abs=1e-4)
    # delivered cpu: (600+600+1200) millicores x 300 s
    assert batch["cpu_used_core_hours"] == pytest.approx(2.4 * 300 / 3600, abs=1e-6)
    assert batch["cpu_demand_core_hours"] == 0


def test_breakdowns_by_cause_with_oom_times_in_order():
    b = policy_breakdowns(run())["batch"]
    assert [k["time"] for k in b["oom_kills"]] == [300.0, 900.0]
    assert b["oom_kills"][0] == {"time": 300.0, "pod": "batch-1", "container": "worker", "cause": "node memory"}
    assert b["oom_kills_by_cause"] == {"node memory": 1, "container limit": 1}
    assert b["evictions_by_reason"] == {"EvictionByEvictionAPI": 1}
    assert b["restarts_by_cause"] == {"Completed": 1, "OOMKilled": 2}
    assert b["pending_by_reason"] == {"ContainerCreating": 60.0, "Unschedulable": 240.0}
    assert policy_breakdowns(run())["web"]["oom_kills"] == []


def test_requests_only_is_suggested_where_a_scaled_cpu_limit_throttled():
    scn = scenario()
    [advice] = suggestions(scn, run())
    assert (advice["workload"], advice["container"]) == ("batch", "worker")   # web has no cpu limit
    assert "consider controlledValues: RequestsOnly" in advice["text"]
    assert suggestions(scn, run(throttled=0.0)) == []
    assert suggestions(scn, run(policy="no VPA", mode=None)) == []            # nothing scaled the limit
    assert suggestions(scenario("RequestsOnly"), run()) == []                  # already leaves limits alone


def test_json_keeps_every_figure_and_html_draws_them(tmp_path):
    scn = scenario()
    doc = json.loads(json.dumps(report_json(scn, [run("no VPA", None), run(demand=[0, 1500, 1500, 1500])])))
    entry = doc["results"][1]
    assert entry["recommendation_history"]["batch"]["worker"][1]["target"] == {"cpu": 1100, "memory": 140 * MI}
    assert entry["breakdowns"]["batch"]["restarts_by_cause"] == {"Completed": 1, "OOMKilled": 2}
    assert entry["series"]["workloads"]["batch"]["cpu_demand"] == [0, 1500, 1500, 1500]
    assert entry["metrics"]["workloads"]["batch"]["cpu_demand_core_hours"] == pytest.approx(4500 * 300 / 3.6e6)
    assert entry["suggestions"][0]["workload"] == "batch"
    page = report_html(doc)
    assert "CPU slack (% of requests)" in page and "Restarts by cause" in page
    assert "OOMKilled 2" in page and "Unschedulable 240" in page and "EvictionByEvictionAPI 1" in page
    assert "VPA target" in page and "OOM kill (2)" in page and ">demand<" in page
    assert "consider controlledValues: RequestsOnly" in page
    assert [p.name for p in write_report(doc, tmp_path)] == ["report.json", "report.html"]


def test_cpu_demand_is_left_out_while_no_engine_measures_it():
    doc = report_json(scenario(), [run()])
    page = report_html(doc)
    assert ">demand<" not in page and "CPU demand (core-h)" not in page
    assert "CPU delivered (core-h)" in page


def test_recommendations_are_drawn_as_steps_with_a_gap_before_the_first():
    from kvert.sim.report import Line, line_chart
    svg = line_chart("t", np.array([1.0, 2.0, 3.0, 4.0]),
                     [Line("target", np.array([np.nan, 10.0, 20.0, 20.0]), "#000", step=True)], "x")
    # x: 60 + 430 * t / 4; y: 206 - 182 * v / 20 (the axis ends at 20)
    assert 'points="275.0,115.0 382.5,115.0 382.5,24.0 490.0,24.0 490.0,24.0"' in svg
