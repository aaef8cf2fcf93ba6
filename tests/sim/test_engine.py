import json

import pytest

from kvert.sim.engine import PolicyRun, run_policy, simulate
from kvert.sim.metrics import policy_metrics
from kvert.sim.report import report_json, write_report
from kvert.sim.scenario import parse_scenario

MI = 2**20


def scenario(hours: float = 2, **over):
    doc = {"duration": f"{hours}h", "seed": 5, "tick": "30s", "sampleInterval": "60s",
           "nodes": {"count": 2, "capacity": {"cpu": "4", "memory": "8Gi"}},
           "workloads": [
               {"name": "web", "replicas": 2,
                "containers": [{"name": "app", "requests": {"cpu": "100m", "memory": "50Mi"},
                                "usage": {"cpu": "500m", "memory": "250Mi"}}]},
               {"name": "leak", "replicas": 1,
                "containers": [{"name": "app", "requests": {"cpu": "200m", "memory": "64Mi"},
                                "limits": {"cpu": "200m", "memory": "128Mi"},
                                "usage": {"cpu": "300m",
                                          "memory": {"profile": "linear", "start": "32Mi", "rate": "2Mi/min"}}}]}],
           "policies": [{"name": "none", "vpa": "none"}]}
    doc.update(over)
    return parse_scenario(doc)


@pytest.fixture(scope="module")
def none_run() -> tuple:
    scn = scenario()
    return scn, run_policy(scn, scn.policies[0])


def test_constant_usage_above_requests_gives_negative_slack(none_run):
    scn, run = none_run
    m = policy_metrics(run)["workloads"]["web"]
    hours = scn.duration / 3600
    # 2 replicas x (100m - 500m) and 2 x (50Mi - 250Mi), all the time (pods start within the first sample)
    assert m["cpu_slack_core_hours"] == pytest.approx(-0.8 * hours, rel=0.02)
    assert m["memory_slack_gib_hours"] == pytest.approx(-400 * MI / 2**30 * hours, rel=0.02)
    assert m["cpu_overprovisioned_core_hours"] == 0
    assert m["oom_kills"] == 0 and m["container_restarts"] == 0 and m["evictions"] == 0
    assert m["pods_created"] == 2 and m["cpu_throttled_seconds"] == 0
    s = run.workloads["web"]
    assert s["cpu_request"][-1] == 200 and s["cpu_use"][-1] == pytest.approx(1000)
    assert s["memory_use"][-1] == 500 * MI and s["pods_running"][-1] == 2


def test_memory_leak_gives_oom_kills_and_restarts_and_cpu_limit_throttles(none_run):
    scn, run = none_run
    m = policy_metrics(run)["workloads"]["leak"]
    # 32Mi + 2Mi/min passes the 128Mi limit after 48 min, then again after each restart
    # (plus the crash-loop back-off): at least 2 kills in 2 h.
    assert m["oom_kills"] >= 2
    assert m["container_restarts"] >= m["oom_kills"] - 1
    assert m["container_restarts"] >= 1
    # demand 300m against a 200m quota: 100m throttled whenever it runs
    assert m["cpu_throttled_seconds"] > 0.05 * 3600
    assert run.workloads["leak"]["cpu_use"].max() <= 200 + 1e-6
    totals = policy_metrics(run)["totals"]
    assert totals["node_hours"] == pytest.approx(2 * scn.duration / 3600)
    assert totals["pending_pod_seconds"] < 60


def test_same_seed_gives_identical_metrics_json():
    scn = scenario(hours=0.5)
    a = report_json(scn, simulate(scn))
    b = report_json(scn, simulate(scn))
    assert json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


def test_pending_pods_are_counted_when_nothing_fits():
    scn = scenario(hours=0.5, workloads=[
        {"name": "big", "replicas": 1,
         "containers": [{"name": "app", "requests": {"cpu": "64", "memory": "1Gi"}}]}])
    run = run_policy(scn, scn.policies[0])
    m = policy_metrics(run)["workloads"]["big"]
    assert m["pending_pod_seconds"] == pytest.approx(1800, abs=60)
    assert run.workloads["big"]["pods_pending"][-1] == 1


def test_report_files_written_and_html_self_contained(tmp_path, none_run):
    scn, run = none_run
    skipped = PolicyRun("recreate", "Recreate", run.times[:0], run.interval, {}, {}, {}, run.nodes_ready[:0],
                        skipped="the VPA components are not available")
    doc = report_json(scn, [run, skipped], wall_seconds=1.0)
    paths = write_report(doc, tmp_path / "out")
    assert [p.name for p in paths] == ["report.json", "report.html"]
    loaded = json.loads(paths[0].read_text())
    assert loaded["results"][0]["metrics"]["totals"]["oom_kills"] >= 2
    assert loaded["results"][1]["skipped"]
    text = paths[1].read_text()
    assert text.startswith("<!DOCTYPE html>") and "<svg" in text and "web" in text and "leak" in text
    for external in ("<script", "<link", "src=", "http://", "https://", "url("):
        assert external not in text.replace('xmlns="http://www.w3.org/2000/svg"', "")
    only = write_report(doc, tmp_path / "json", json_only=True)
    assert [p.name for p in only] == ["report.json"]


def test_cli_runs_a_scenario(tmp_path, capsys):
    import argparse

    import yaml

    from kvert.cli import simulate as cli
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump({
        "duration": "20m", "seed": 1, "tick": "30s",
        "nodes": {"count": 1, "capacity": "cpu=2,memory=4Gi"},
        "workloads": [{"name": "w", "replicas": 1, "containers": [{"name": "c", "requests": {"cpu": "100m"}}]}],
        "policies": [{"name": "none"}]}))
    parser = argparse.ArgumentParser()
    cli.register(parser.add_subparsers())
    args = parser.parse_args(["simulate", str(path), "-o", str(tmp_path / "out"), "--no-progress"])
    assert cli.run(args) == 0
    assert (tmp_path / "out" / "report.html").exists()
    assert "simulated 1 policy" in capsys.readouterr().out
    bad = tmp_path / "bad.yaml"
    bad.write_text("duration: 1h\n")
    args = parser.parse_args(["simulate", str(bad)])
    assert cli.run(args) == 2
    assert "nodes: required" in capsys.readouterr().err


def test_progress_bar_draws_on_a_tty_and_is_quiet_otherwise():
    import io

    from kvert.sim.progress import ProgressBar

    quiet = io.StringIO()
    bar = ProgressBar(["a", "b"], stream=quiet)
    bar("a", 0.5)
    bar.close()
    assert quiet.getvalue() == ""
    loud = io.StringIO()
    bar = ProgressBar(["a", "b"], stream=loud, enabled=True)
    bar("b", 0.5)
    bar.close()
    assert "75.0%" in loud.getvalue() and "policy 2/2 b" in loud.getvalue()


def test_vpa_policies_resize_in_place_or_evict():
    pytest.importorskip("kvert.vpa.updater")
    pytest.importorskip("kvert.vpa.recommender")
    scn = scenario(hours=1, workloads=[
        {"name": "hamster", "replicas": 2,
         "containers": [{"name": "hamster", "requests": {"cpu": "100m", "memory": "50Mi"},
                         "usage": {"cpu": "500m", "memory": "250Mi"}}]}],
        policies=[{"name": "recreate", "vpa": {"updateMode": "Recreate", "recommender": {"interval": "1m"},
                                               "updater": {"interval": "1m"}}},
                  {"name": "in-place", "vpa": {"updateMode": "InPlaceOrRecreate",
                                               "recommender": {"interval": "1m"}, "updater": {"interval": "1m"}}}])
    recreate, in_place = simulate(scn)
    assert not recreate.skipped and not in_place.skipped
    r = policy_metrics(recreate)["workloads"]["hamster"]
    i = policy_metrics(in_place)["workloads"]["hamster"]
    assert r["evictions"] >= 2 and r["pods_created"] >= 4 and r["in_place_resizes"] == 0
    assert i["in_place_resizes"] >= 2 and i["evictions"] == 0 and i["pods_created"] == 2
    for run in (recreate, in_place):
        s = run.workloads["hamster"]
        assert s["cpu_request"][-1] >= 2 * 500          # requests raised to cover the use
        assert s["memory_request"][-1] >= 2 * 250 * MI
        assert run.vpa_recommendations["hamster"]["containerRecommendations"]


def test_vpa_policy_is_deterministic_too():
    pytest.importorskip("kvert.vpa.updater")
    scn = scenario(hours=0.75, policies=[{"name": "in-place", "vpa": {
        "updateMode": "InPlaceOrRecreate", "recommender": {"interval": "1m"}, "updater": {"interval": "1m"}}}])
    a = json.dumps(report_json(scn, simulate(scn)), sort_keys=True)
    b = json.dumps(report_json(scn, simulate(scn)), sort_keys=True)
    assert a == b
