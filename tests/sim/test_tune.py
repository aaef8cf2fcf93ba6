"""kvert.sim.tune and ``kvert vpa tune``: per-workload VPA settings searched by simulation."""

import copy
import re
from pathlib import Path

import pytest
import yaml

from kvert.api.validation.vpa import validate_vpa
from kvert.cli import vpa_tune
from kvert.cli.main import main
from kvert.sim import sweep, tune
from kvert.sim.scenario import parse_scenario
from kvert.sim.tune import Constraint, TuneError, TuneOptions, parse_constraint
from kvert.vpa.recommendation import DEFAULT_CONFIG

SUITE = Path(__file__).resolve().parents[2] / "examples" / "scenarios" / "quality.yaml"
TRIALS = 6


def small_doc() -> dict:
    """Two workloads of the quality suite (steady, oom-prone) on two nodes for 6 hours, under
    upstream's Recreate and InPlaceOrRecreate."""
    doc = yaml.safe_load(SUITE.read_text())
    doc["workloads"] = [w for w in doc["workloads"] if w["name"] in ("steady", "oom-prone")]
    doc["policies"] = [p for p in doc["policies"] if p["name"] in ("Recreate", "InPlaceOrRecreate")]
    doc["nodes"]["count"] = 2
    doc["duration"] = "6h"
    return doc


@pytest.fixture(scope="module")
def small():
    return parse_scenario(small_doc(), base_dir=SUITE.parent)


@pytest.fixture(scope="module")
def tuned(small):
    return tune.tune(small, TuneOptions(trials=TRIALS, batch=3, parallel=2))


# -- constraints ------------------------------------------------------------------------------------

def test_constraints_parse():
    assert parse_constraint("oom_kills<=baseline") == Constraint("oom_kills", "<=", "baseline",
                                                                 text="oom_kills<=baseline")
    c = parse_constraint(" cpu_throttled_seconds <= 1.1*baseline ")
    assert (c.metric, c.op, c.ref, c.factor) == ("cpu_throttled_seconds", "<=", "baseline", 1.1)
    assert parse_constraint("evictions<=baseline*2").factor == 2
    assert parse_constraint("pending_pod_seconds<=600").reference() == 600
    assert parse_constraint("container_restarts<=as-is").ref == "as-is"
    floor = parse_constraint("memory_slack>=0.05")
    assert floor.violation(0.02, floor.reference()) == pytest.approx(0.03)     # broken by 0.03
    assert c.violation(5.0, c.reference(baseline=10.0)) == -6.0                # holds
    assert parse_constraint("oom_kills<=baseline").reference(baseline=2) == 2


@pytest.mark.parametrize("text, message", [
    ("oom_kills<baseline", "expected METRIC<=REF or METRIC>=REF"),
    ("oom_kils<=baseline", "unknown metric 'oom_kils'"),
    ("oom_kills<=basline", "must be a number, baseline, as-is or FACTOR\\*baseline"),
    ("oom_kills<=2*baseline*3", "must be a number"),
    ("oom_kills<=inf", "finite"),
])
def test_constraint_errors_name_the_flag(text, message):
    with pytest.raises(TuneError, match=f"^--subject-to '{re.escape(text)}': .*{message}"):
        parse_constraint(text)


def test_option_errors_name_the_flag(small):
    with pytest.raises(TuneError, match="^--subject-to 'oom_kills<=as-is': the scenario has no \"as is\" policy"):
        tune.tune(small, TuneOptions(constraints=["oom_kills<=as-is"]))
    with pytest.raises(TuneError, match="^--baseline 'nope': no such policy"):
        tune.tune(small, TuneOptions(baseline="nope"))
    with pytest.raises(TuneError, match="^--policy 'Recreat': no such policy"):
        tune.tune(small, TuneOptions(policy="Recreat"))
    with pytest.raises(TuneError, match="^--workload web: no workload matches"):
        tune.tune(small, TuneOptions(workloads=["web"]))
    with pytest.raises(TuneError, match="^--minimize 'cost'"):
        tune.tune(small, TuneOptions(minimize="cost"))


def test_the_cli_repeats_the_tuner_defaults():
    assert vpa_tune.OBJECTIVES == tune.OBJECTIVES
    assert vpa_tune.DEFAULT_BATCH == tune.DEFAULT_BATCH
    assert vpa_tune.DEFAULT_CONSTRAINT == tune.DEFAULT_CONSTRAINT
    assert vpa_tune.DEFAULT_TRIALS == TuneOptions().trials


# -- the search space -------------------------------------------------------------------------------

def test_the_first_trials_are_the_known_settings(small):
    policy = sweep.find_policy(small, "InPlaceOrRecreate")
    vpa = small.vpa_object(small.workloads[0], policy)
    points = tune.starting_points(vpa)
    assert len(points) == 3                    # as they are under the policy = upstream's defaults
    upstream, in_place, capped = (tune.settings_of(p)["annotations"] for p in points)
    assert upstream["vpa.kvert.io/model"] == "upstream"
    assert upstream["vpa.kvert.io/target-cpu-percentile"] == "0.9"
    assert upstream["vpa.kvert.io/cpu-histogram-decay-half-life"] == "24h"
    assert upstream["vpa.kvert.io/memory-aggregation-interval"] == "24h"
    assert upstream["vpa.kvert.io/memory-aggregation-interval-count"] == "8"
    assert in_place["vpa.kvert.io/memory-aggregation-interval"] == "5m"
    assert in_place["vpa.kvert.io/memory-aggregation-interval-count"] == "72"      # 6 h
    assert in_place["vpa.kvert.io/cpu-histogram-decay-half-life"] == "30m"
    assert capped["vpa.kvert.io/capacity-aware"] == "true"
    for point in points:                       # every point is settings the recommender accepts
        settings = tune.settings_of(point)
        _, problems = DEFAULT_CONFIG.with_annotations(settings["annotations"])
        assert problems == []
        override = tune.override_of(vpa, settings)
        entry = override["resourcePolicy"]["containerPolicies"][0]
        assert entry["containerName"] == "*" and entry["minAllowed"] == {"cpu": "25m", "memory": "64Mi"}
        assert entry["controlledValues"] == settings["controlledValues"]


# -- a tuning ------------------------------------------------------------------------------------------

def test_tuned_vpas_meet_the_constraint_with_less_slack(small, tuned):
    assert tuned.policy == "InPlaceOrRecreate" and tuned.baseline == "Recreate"
    assert tuned.trials == TRIALS and tuned.constraints == ["oom_kills<=baseline"]
    # references, the trials and at least one verification
    assert tuned.simulations >= 1 + TRIALS + 1
    assert [w.key for w in tuned.workloads] == ["steady", "oom-prone"]
    for w in tuned.workloads:
        assert w.vpa is not None, w.note
        assert all(c["holds"] for c in w.checks)
        assert w.figures["oom_kills"] <= w.baseline["oom_kills"]
        assert w.figures["slack"] < w.baseline["slack"], w.key
        vpa = w.vpa
        assert vpa["apiVersion"] == "autoscaling.k8s.io/v1" and vpa["kind"] == "VerticalPodAutoscaler"
        assert vpa["spec"]["targetRef"] == {"apiVersion": "apps/v1", "kind": "Deployment", "name": w.name}
        assert vpa["spec"]["updatePolicy"]["updateMode"] == "InPlaceOrRecreate"
        assert validate_vpa(copy.deepcopy(vpa)) == []
        assert DEFAULT_CONFIG.for_vpa(vpa)[1] == []
        for k, v in w.settings["annotations"].items():
            assert vpa["metadata"]["annotations"][k] == v
    # checked again here: the chosen settings together, simulated once more
    overrides = {w.key: tune.override_of(small.vpa_object(next(x for x in small.workloads if x.name == w.key),
                                                          sweep.find_policy(small, "InPlaceOrRecreate")), w.settings)
                 for w in tuned.workloads}
    again = sweep.run_job(small, "InPlaceOrRecreate", small.seed, overrides)
    base = sweep.run_job(small, "Recreate", small.seed, {})
    for w in tuned.workloads:
        assert again.metrics["workloads"][w.key]["oom_kills"] <= base.metrics["workloads"][w.key]["oom_kills"]
        assert again.slack[w.key]["slack"] == pytest.approx(w.figures["slack"], abs=1e-6)
        assert again.slack[w.key]["slack"] < base.slack[w.key]["slack"]
    text = tune.format_result(tuned)
    assert "default/steady: trial" in text and "oom_kills" in text and "vs baseline" in text


def test_the_cli_repeats_the_tuning(tuned, small, tmp_path, capsys):
    """Same seed, same settings: the command line tunes the same scenario to the same VPAs."""
    path = tmp_path / "scenario.yaml"
    path.write_text(yaml.safe_dump(small_doc()))
    out = tmp_path / "tuned.yaml"
    code = main(["vpa", "tune", str(tmp_path), "--minimize", "slack", "--subject-to", "oom_kills<=baseline",
                 "--trials", str(TRIALS), "--batch", "3", "--parallel", "1", "--quiet", "-o", str(out)])
    printed = capsys.readouterr().out
    assert code == 0, printed
    docs = [d for d in yaml.safe_load_all(out.read_text()) if d]
    assert [d["metadata"]["name"] for d in docs] == ["steady", "oom-prone"]
    for doc, w in zip(docs, tuned.workloads):
        assert doc == w.vpa                       # the same settings, found again
    assert f"wrote {out} (2 VerticalPodAutoscalers" in printed
    assert out.read_text().startswith("# kvert vpa tune: quality, policy 'InPlaceOrRecreate'")


def test_no_trial_meets_an_impossible_constraint(small):
    result = tune.tune(small, TuneOptions(workloads=["oom-prone"], constraints=["cpu_slack<=-1"], trials=2,
                                          batch=2, parallel=2))
    [w] = result.workloads
    assert w.vpa is None and w.settings is None and w.feasible_trials == 0
    assert w.note.startswith("no trial met cpu_slack<=-1")
    assert result.vpas() == []
    assert "default/oom-prone: no VPA written: no trial met cpu_slack<=-1" in tune.format_result(result)
    assert "# oom-prone: no VPA" in tune.vpa_yaml(result)
