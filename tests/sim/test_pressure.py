"""Node pressure in a simulation: memory growing past the node's eviction threshold gets the
pod evicted by its node, a leak inside a limit gets OOM-killed, and the report says when."""

from pathlib import Path

import yaml

from kvert.sim.engine import run_policy
from kvert.sim.report import report_html, report_json
from kvert.sim.scenario import parse_scenario


def _scenario(hours: str):
    with open(Path(__file__).parents[2] / "examples" / "scenarios" / "memory-pressure.yaml") as f:
        doc = yaml.safe_load(f)
    doc["duration"] = hours
    return parse_scenario(doc)


def test_growth_past_the_threshold_is_evicted_and_a_leak_oom_killed_with_times():
    scn = _scenario("5h")
    run = run_policy(scn, scn.policies[0])
    events = run.events
    ooms = [e for e in events if e["kind"] == "oom-kill"]
    evictions = [e for e in events if e["kind"] == "eviction"]
    # the leak: 256Mi + 384Mi/h reaches its 1Gi limit after 2 hours, and again 2 hours later
    assert [e["workload"] for e in ooms] == ["leak", "leak"]
    assert all(e["cause"] == "container limit" and e["limit"] == 2**30 for e in ooms)
    assert 7200 <= ooms[0]["time"] <= 7200 + 2 * scn.tick
    assert 14400 <= ooms[1]["time"] <= 14400 + 3 * scn.tick + 10
    # bloat (512Mi + 1Gi/h) with steady (2 x 900Mi) and the leak passes 7Gi in use near 3.8 h:
    # its node evicts it, once, and nothing else
    assert [e["workload"] for e in evictions] == ["bloat"]
    eviction = evictions[0]
    assert eviction["cause"] == "node-pressure" and eviction["node"] == "node-1"
    assert 3.7 * 3600 <= eviction["time"] <= 3.9 * 3600
    assert eviction["message"].startswith("The node was low on resource: memory. Threshold quantity: 1Gi, ")
    assert run.counters["bloat"]["evictions"] == 1 and run.counters["bloat"]["node_pressure_evictions"] == 1
    assert run.counters["steady"]["evictions"] == 0 and run.counters["steady"]["oom_kills"] == 0
    doc = report_json(scn, [run])
    assert doc["results"][0]["events"] == events
    page = report_html(doc)
    assert "Evictions and OOM kills" in page and "day 1 03:" in page and "container limit" in page
