"""Scenario containers replaying usage recorded in a samples CSV file (``usage: {trace: ...}``)."""

import json

import numpy as np
import pytest

from kvert.kubelet.usage import USAGE_ANNOTATION
from kvert.sim.engine import run_policy
from kvert.sim.scenario import ScenarioError, load_scenario, parse_scenario
from kvert.sim.traces import TraceError, trace_usage

MI = 2**20
HEADER = "timestamp,pod,container,cpu,memory,event\n"


def write(tmp_path, rows, name="trace.csv"):
    path = tmp_path / name
    path.write_text(HEADER + "".join(r + "\n" for r in rows))
    return path


def test_one_pods_container_rows_become_a_replay_relative_to_the_first(tmp_path):
    write(tmp_path, [
        "1000,b,app,0.9,1000,",            # another pod: the first pod in the file is 'b'
        "1000,a,app,0.2,100,",
        "1060,a,app,,150,",                 # empty cpu holds 0.2
        "1090,a,app,0.4,,",                 # empty memory holds 150
        "1100,a,app,,64,oom",               # OOM rows are left out
        "1120,a,side,0.1,10,",              # another container
    ])
    usage = trace_usage({"file": "trace.csv", "pod": "a", "loop": True}, "app", tmp_path, "u.trace")
    assert usage == {"replay": {"samples": [[0.0, "200m", 100], [60.0, "200m", 150], [90.0, "400m", 150]],
                                "loop": True}}
    # default pod: the file's first for the container; container: another name than the scenario's
    assert trace_usage("trace.csv", "app", tmp_path, "u")["replay"]["samples"] == [[0.0, "900m", 1000]]
    assert trace_usage({"file": str(tmp_path / "trace.csv"), "container": "side"}, "app", tmp_path,
                       "u")["replay"]["samples"] == [[0.0, "100m", 10]]


def test_step_keeps_the_mean_cpu_and_the_peak_memory(tmp_path):
    write(tmp_path, [f"{t},p,app,{cpu},{mem}," for t, cpu, mem in
                     [(0, 0.1, 100), (60, 0.3, 300), (120, 0.5, 200), (300, 1.0, 50), (330, 0.0, 70)]])
    usage = trace_usage({"file": "trace.csv", "step": "5m"}, "app", tmp_path, "u")
    assert usage["replay"]["samples"] == [[0.0, "300m", 300], [300.0, "500m", 70]]


@pytest.mark.parametrize("spec, message", [
    ({"file": "missing.csv"}, "u.file: cannot read"),
    ({"file": "trace.csv", "every": "1m"}, "u.every: unknown field"),
    ({}, "u.file: required"),
    ({"file": "trace.csv", "container": "nope"}, "u.container: "),
    ({"file": "trace.csv", "pod": "nope"}, "u.pod: "),
    ({"file": "trace.csv", "step": "soon"}, "u.step: "),
    ({"file": "trace.csv", "step": 0}, "u.step: must be positive"),
    (42, "u: expected a file name"),
])
def test_errors_name_the_field(tmp_path, spec, message):
    write(tmp_path, ["0,p,app,0.1,100,"])
    with pytest.raises(TraceError) as e:
        trace_usage(spec, "app", tmp_path, "u")
    assert str(e.value).startswith(message)


def test_bad_rows_and_oversized_traces_are_refused(tmp_path):
    write(tmp_path, ["yesterday,p,app,0.1,100,"], "bad.csv")
    with pytest.raises(TraceError, match=r"^u\.file: .*bad\.csv:2"):
        trace_usage("bad.csv", "app", tmp_path, "u")
    write(tmp_path, [f"{t * 60},p,app,0.25,{100 + t}," for t in range(10_000)], "long.csv")
    with pytest.raises(TraceError, match=r"set u\.step"):
        trace_usage("long.csv", "app", tmp_path, "u")
    assert len(trace_usage({"file": "long.csv", "step": "1h"}, "app", tmp_path, "u")["replay"]["samples"]) == 167


def doc(trace):
    return {"duration": "2h", "seed": 1, "tick": "30s", "sampleInterval": "60s",
            "nodes": {"count": 1, "capacity": {"cpu": "4", "memory": "8Gi"}},
            "workloads": [{"name": "web", "replicas": 1, "containers": [
                {"name": "app", "requests": {"cpu": "100m", "memory": "50Mi"}, "usage": {"trace": trace}}]}]}


def test_a_simulated_container_uses_what_the_trace_recorded(tmp_path):
    # 300m and 200Mi for the first hour, then 700m and 400Mi
    write(tmp_path, [f"{t},rec-1,app,{0.3 if t < 3600 else 0.7},{(200 if t < 3600 else 400) * MI},"
                     for t in range(0, 7200, 600)])
    (tmp_path / "scenario.yaml").write_text(json.dumps(doc("trace.csv")))
    scn = load_scenario(tmp_path / "scenario.yaml")          # the path is relative to the file
    annotations = scn.workloads[0].template["metadata"]["annotations"]
    assert json.loads(annotations[USAGE_ANNOTATION])["app"]["replay"]["samples"][0] == [0.0, "300m", 200 * MI]
    run = run_policy(scn, scn.policies[0])
    s = run.workloads["web"]
    early, late = (run.times > 600) & (run.times <= 3000), run.times > 4500
    assert np.allclose(s["cpu_use"][early], 300, rtol=0.05) and np.allclose(s["cpu_use"][late], 700, rtol=0.05)
    assert set(s["memory_use"][early]) == {200 * MI} and set(s["memory_use"][late]) == {400 * MI}


def test_scenario_errors_name_the_container_field(tmp_path):
    with pytest.raises(ScenarioError, match=r"^workloads\[0\]\.containers\[0\]\.usage\.trace\.file: cannot read"):
        parse_scenario(doc("nope.csv"), base_dir=tmp_path)
    bad = doc("nope.csv")
    bad["workloads"][0]["containers"][0]["usage"]["cpu"] = "1"
    with pytest.raises(ScenarioError, match=r"^workloads\[0\]\.containers\[0\]\.usage: a trace gives both"):
        parse_scenario(bad, base_dir=tmp_path)
