"""kvert.sim.sweep: jobs in this process, in local worker processes, on Ray; several seeds."""

import json
import math
import os
import socket
import subprocess
import sys
import threading

import numpy as np
import pytest
import yaml

from kvert.cli.main import main
from kvert.sim import sweep
from kvert.sim.scenario import ScenarioError, parse_scenario
from kvert.sim.sweep import Job, SweepError, run_jobs

DOC = {"duration": "1h", "seed": 5, "tick": "30s", "sampleInterval": "60s",
       "nodes": {"count": 2, "capacity": {"cpu": "4", "memory": "8Gi"}},
       "vpa": {"updatePolicy": {"minReplicas": 1}},
       "workloads": [
           {"name": "web", "replicas": 2,
            "containers": [{"name": "app", "requests": {"cpu": "300m", "memory": "256Mi"},
                            "usage": {"cpu": {"profile": "constant", "value": "200m", "noise": 0.2},
                                      "memory": {"profile": "constant", "value": "150Mi", "noise": 0.1}}}]},
           {"name": "leak", "replicas": 1,
            "containers": [{"name": "app", "requests": {"cpu": "100m", "memory": "64Mi"},
                            "limits": {"memory": "128Mi"},
                            "usage": {"cpu": {"profile": "constant", "value": "100m", "noise": 0.2},
                                      "memory": {"profile": "linear", "start": "32Mi", "rate": "4Mi/min"}}}]}],
       "policies": [{"name": "none", "vpa": "none"},
                    {"name": "in-place", "vpa": {"updateMode": "InPlaceOrRecreate", "recommender": {"interval": "1m"},
                                                 "updater": {"interval": "1m"}}}]}


@pytest.fixture(scope="module")
def scn():
    return parse_scenario(DOC)


def figures(result):
    return {"metrics": result.metrics, "slack": result.slack}


# -- several seeds: statistics --------------------------------------------------------------------

@pytest.mark.parametrize("df, t", [(1, 12.706), (2, 4.303), (3, 3.182), (4, 2.776), (9, 2.262), (30, 2.042)])
def test_t_quantiles_match_the_tables(df, t):
    assert sweep.t_quantile(0.975, df) == pytest.approx(t, abs=5e-4)
    assert sweep.t_quantile(0.025, df) == pytest.approx(-t, abs=5e-4)
    assert sweep.t_cdf(sweep.t_quantile(0.9, df), df) == pytest.approx(0.9, abs=1e-9)


def test_mean_and_interval_by_hand():
    # 1, 2, 3: mean 2, s = 1, n = 3: 2 ± 4.303 / sqrt(3)
    mean, (low, high) = sweep.mean_interval([1, 2, 3])
    assert mean == 2
    assert low == pytest.approx(2 - 4.303 / math.sqrt(3), abs=1e-3)
    assert high == pytest.approx(2 + 4.303 / math.sqrt(3), abs=1e-3)
    # two seeds: 10 and 14, s = 2*sqrt(2), half = 12.706 * s / sqrt(2) = 25.412
    stats = sweep.seed_statistics([(7, {"oom_kills": 10, "cpu_slack_percent": 5.0}),
                                   (8, {"oom_kills": 14, "cpu_slack_percent": 5.0})])
    assert stats["seeds"] == [7, 8] and stats["mean"] == {"oom_kills": 12.0, "cpu_slack_percent": 5.0}
    assert stats["ci95"]["oom_kills"] == pytest.approx([12 - 25.412, 12 + 25.412], abs=1e-2)
    assert stats["ci95"]["cpu_slack_percent"] == [5.0, 5.0]           # the same every seed
    assert stats["per_seed"][1] == {"seed": 8, "totals": {"oom_kills": 14, "cpu_slack_percent": 5.0}}
    # one seed: a mean, no interval
    one = sweep.seed_statistics([(7, {"oom_kills": 3})])
    assert one["mean"] == {"oom_kills": 3.0} and one["ci95"] is None
    assert sweep.mean_interval([4.0]) == (4.0, None)


def test_seeds_from():
    assert sweep.seeds_from(13, 3) == [13, 14, 15]
    with pytest.raises(SweepError, match="--seeds"):
        sweep.seeds_from(13, 0)


# -- where the jobs run ---------------------------------------------------------------------------------

def test_two_local_processes_give_the_figures_of_this_process(scn):
    jobs = [Job(scn, policy, seed, full=(seed == 5)) for seed in (5, 6) for policy in ("none", "in-place")]
    here = run_jobs(jobs)
    there = run_jobs(jobs, parallel=2)
    assert [r.label for r in there] == [j.label for j in jobs]           # in the jobs' order
    assert [figures(r) for r in there] == [figures(r) for r in here]
    for a, b in zip(here, there):
        assert (a.run is None) == (b.run is None) == (a.seed != 5)
        if a.run is not None:                        # what the report needs came back too
            for w in a.run.workloads:
                for series, values in a.run.workloads[w].items():
                    np.testing.assert_array_equal(values, b.run.workloads[w][series])
            assert a.run.events == b.run.events
    # the seed matters: another seed, other figures
    assert figures(here[0]) != figures(here[2])
    assert here[1].metrics["totals"]["in_place_resizes"] > 0


SUBPROCESS = """
import json, sys, yaml
from kvert.sim.scenario import parse_scenario
from kvert.sim.sweep import run_job
scn = parse_scenario(yaml.safe_load(open(sys.argv[1])))
r = run_job(scn, "in-place", 6, {"leak": {"annotations": {"vpa.kvert.io/model": "in-place"}}})
print(json.dumps({"metrics": r.metrics, "slack": r.slack, "hash": hash("kvert")}, sort_keys=True))
"""


def test_a_job_gives_the_same_figures_whatever_the_hash_seed(scn, tmp_path):
    path = tmp_path / "scenario.yaml"
    path.write_text(yaml.safe_dump(DOC))
    outputs = []
    for hash_seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": hash_seed}
        done = subprocess.run([sys.executable, "-c", SUBPROCESS, str(path)], check=False, env=env, capture_output=True,
                              text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        outputs.append(json.loads(done.stdout.strip().splitlines()[-1]))
    assert outputs[0]["hash"] != outputs[1]["hash"]                      # the hash seeds did differ
    here = sweep.run_job(scn, "in-place", 6, {"leak": {"annotations": {"vpa.kvert.io/model": "in-place"}}})
    expected = json.loads(json.dumps({"metrics": here.metrics, "slack": here.slack}, sort_keys=True))
    for out in outputs:
        assert {"metrics": out["metrics"], "slack": out["slack"]} == expected


def test_overrides_are_layered_over_the_workloads_settings(scn):
    tuned = sweep.with_overrides(scn, "in-place", {"leak": {
        "annotations": {"vpa.kvert.io/target-memory-percentile": "0.8"},
        "resourcePolicy": {"containerPolicies": [{"containerName": "*", "controlledValues": "RequestsOnly"}]}}}, seed=9)
    assert tuned.seed == 9 and scn.seed == 5                              # the scenario itself unchanged
    policy = sweep.find_policy(tuned, "in-place")
    leak = next(w for w in tuned.workloads if w.name == "leak")
    vpa = tuned.vpa_object(leak, policy)
    assert vpa["metadata"]["annotations"] == {"vpa.kvert.io/target-memory-percentile": "0.8"}
    assert vpa["spec"]["resourcePolicy"]["containerPolicies"] == [{"containerName": "*",
                                                                   "controlledValues": "RequestsOnly"}]
    assert next(w for w in scn.workloads if w.name == "leak").vpa == {}
    with pytest.raises(SweepError, match=r"overrides\[leak\]: vpa.kvert.io/no-such-setting: unknown setting"):
        sweep.with_overrides(scn, "in-place", {"leak": {"annotations": {"vpa.kvert.io/no-such-setting": "1"}}})
    with pytest.raises(SweepError, match="no workload 'nope'"):
        sweep.with_overrides(scn, "in-place", {"nope": {"annotations": {}}})


def test_slack_fractions():
    series = {"cpu_request": np.array([100.0, 100.0]), "cpu_use": np.array([50.0, 150.0]),
              "memory_request": np.array([0.0, 0.0]), "memory_use": np.array([0.0, 0.0])}
    out = sweep.slack_fractions(series)
    # cpu: (50 + 0) / 200 (use beyond the request is not slack); memory: nothing requested
    assert out == {"cpu_slack": 0.25, "memory_slack": 1.0, "slack": 0.625}


def test_a_stalled_job_is_noticed():
    stalled = threading.Event()
    dog = sweep._Watchdog(lambda label: stalled.set(), stall_seconds=0.5)
    dog.start("trial 3 (seed 5)")
    assert stalled.wait(30)                    # this process computes (nearly) nothing meanwhile
    dog.stop()


# -- kvert simulate: --seeds, --parallel, a directory ----------------------------------------------------

def test_simulate_a_directory_with_seeds_in_two_processes(tmp_path, capsys):
    directory = tmp_path / "imported"
    directory.mkdir()
    (directory / "scenario.yaml").write_text(yaml.safe_dump(DOC))
    out = tmp_path / "out"
    assert main(["simulate", str(directory), "--seeds", "2", "--parallel", "2", "--no-progress", "-o", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "4 simulations (2 policies x 2 seeds)" in printed and "over 2 seeds (5..6)" in printed
    doc = json.loads((out / "report.json").read_text())
    assert doc["scenario"]["seed"] == 5 and doc["seeds"]["seeds"] == [5, 6]
    for policy in doc["results"]:
        stats = policy["seeds"]
        assert [row["seed"] for row in stats["per_seed"]] == [5, 6]
        assert stats["per_seed"][0]["totals"] == policy["metrics"]["totals"]      # the page's seed
        for key, mean in stats["mean"].items():
            values = [row["totals"][key] for row in stats["per_seed"]]
            assert mean == pytest.approx(sum(values) / 2, abs=1e-6)
            half = 12.706 * float(np.std(values, ddof=1)) / math.sqrt(2)
            assert stats["ci95"][key] == pytest.approx([mean - half, mean + half], abs=1e-3 * max(1, half))
    page = (out / "report.html").read_text()
    assert "Over 2 seeds" in page and page.index("Over 2 seeds") < page.index("Metrics side by side")


def test_a_directory_without_scenario_yaml(tmp_path, capsys):
    assert main(["simulate", str(tmp_path), "--no-progress", "-o", str(tmp_path / "out")]) == 2
    assert "a directory without scenario.yaml" in capsys.readouterr().err
    with pytest.raises(ScenarioError, match="without scenario.yaml"):
        sweep.load(tmp_path)


# -- Ray: missing, unreachable ----------------------------------------------------------------------------

def test_ray_not_installed_is_a_clear_error(scn, tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "ray", None)          # import ray raises ImportError
    with pytest.raises(SweepError, match=r"--ray needs Ray.*pip install 'kvert\[ray\]'"):
        run_jobs([Job(scn, "none")], ray_address="127.0.0.1:6379")
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump(DOC))
    assert main(["simulate", str(path), "--ray", "127.0.0.1:6379", "--no-progress", "-o", str(tmp_path / "o")]) == 1
    assert "pip install 'kvert[ray]'" in capsys.readouterr().err


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_an_unreachable_ray_address_is_a_clear_error(scn):
    port = _free_port()
    with pytest.raises(SweepError, match=f"--ray 127.0.0.1:{port}: no Ray cluster reachable there"):
        sweep.check_reachable(f"127.0.0.1:{port}", timeout=2)
    with pytest.raises(SweepError, match="expected HOST:PORT"):
        sweep.check_reachable("nowhere")
    pytest.importorskip("ray", reason="the whole path needs ray installed (kvert[ray])")
    with pytest.raises(SweepError, match="no Ray cluster reachable there"):
        run_jobs([Job(scn, "none")], ray_address=f"127.0.0.1:{port}")


def test_parallel_must_be_positive(scn, capsys, tmp_path):
    with pytest.raises(SweepError, match="--parallel"):
        run_jobs([Job(scn, "none")], parallel=0)
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump(DOC))
    assert main(["simulate", str(path), "--parallel", "0", "-o", str(tmp_path / "o")]) == 2
    assert "--parallel" in capsys.readouterr().err
