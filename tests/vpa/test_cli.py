import json
import subprocess
import sys
from pathlib import Path

import pytest

from kvert.api.validation.vpa import validate_vpa
from kvert.cli.main import main
from kvert.cli.vpa import aggregates_from_samples
from kvert.vpa.recommendation import recommend
from kvert.vpa.samples import read_samples

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "examples" / "hamster-samples.csv"
HAMSTER = ROOT / "examples" / "hamster.yaml"


def run(argv, capsys):
    code = main(argv)
    out = capsys.readouterr()
    return code, out.out, out.err


def test_recommend_json_is_the_vpa_status_recommendation(capsys):
    code, out, err = run(["vpa", "recommend", "--samples", str(SAMPLES), "-o", "json"], capsys)
    assert code == 0 and err == ""
    rec = json.loads(out)
    [c] = rec["containerRecommendations"]
    assert c["containerName"] == "hamster"
    assert list(c) == ["containerName", "target", "lowerBound", "upperBound", "uncappedTarget"]
    assert c["target"] == c["uncappedTarget"]
    # The same model as the library, and a status the VPA API accepts.
    assert rec == recommend(aggregates_from_samples(read_samples(SAMPLES)))
    vpa = {"apiVersion": "autoscaling.k8s.io/v1", "kind": "VerticalPodAutoscaler",
           "metadata": {"name": "hamster-vpa", "namespace": "default"},
           "spec": {"targetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "hamster"}},
           "status": {"recommendation": rec}}
    assert validate_vpa(vpa) == []


def test_recommend_with_the_vpa_caps_by_its_policy(capsys):
    code, out, _ = run(["vpa", "recommend", "--samples", str(SAMPLES), "--vpa", str(HAMSTER), "-o", "json"], capsys)
    assert code == 0
    [c] = json.loads(out)["containerRecommendations"]
    assert c["upperBound"] == {"cpu": "1", "memory": "500Mi"}    # hamster.yaml maxAllowed
    assert c["uncappedTarget"]["cpu"] == c["target"]["cpu"]


def test_recommend_table_and_explanation(capsys):
    code, out, _ = run(["vpa", "recommend", "--samples", str(SAMPLES), "--explain"], capsys)
    assert code == 0
    lines = out.splitlines()
    assert lines[0].split() == ["CONTAINER", "RESOURCE", "LOWER", "BOUND", "TARGET", "UPPER", "BOUND", "UNCAPPED", "TARGET"]
    assert lines[1].split()[:2] == ["hamster", "cpu"] and lines[2].split()[:2] == ["hamster", "memory"]
    assert "864 CPU samples from 2 pod(s)" in out
    assert "margin +15%" in out and "percentile cpu p90 / memory peaks p90" in out


def test_annotation_problems_are_warnings(tmp_path, capsys):
    vpa = tmp_path / "vpa.yaml"
    vpa.write_text(HAMSTER.read_text().replace(
        "  name: hamster-vpa\n", "  name: hamster-vpa\n  annotations:\n    vpa.kvert.io/target-cpu-percentile: high\n"))
    code, _, err = run(["vpa", "recommend", "--samples", str(SAMPLES), "--vpa", str(vpa)], capsys)
    assert code == 0 and "warning: vpa.kvert.io/target-cpu-percentile: 'high' is not a number (ignored)" in err


@pytest.mark.parametrize("content, fragment", [
    ("timestamp,pod,container,cpu,memory,event\n1714521600,h,c,lots,,\n", "s.csv:2: column 'cpu': 'lots' is not a number"),
    ("time,pod\n", "s.csv:1: column 'time': unknown column"),
])
def test_bad_samples_fail_with_the_line(tmp_path, capsys, content, fragment):
    path = tmp_path / "s.csv"
    path.write_text(content)
    code, out, err = run(["vpa", "recommend", "--samples", str(path)], capsys)
    assert code == 1 and out == "" and fragment in err and err.startswith("error: ")


def test_usage_errors(tmp_path, capsys):
    code, _, err = run(["vpa", "recommend", "--samples", str(tmp_path / "missing.csv")], capsys)
    assert code == 1 and "cannot read" in err
    code, _, err = run(["vpa", "recommend", "--samples", str(SAMPLES), "--prometheus", "http://prom:9090"], capsys)
    assert code == 2 and "not both" in err
    code, _, err = run(["vpa", "recommend"], capsys)
    assert code == 2 and "--samples" in err
    bad = tmp_path / "vpa.yaml"
    bad.write_text("kind: Deployment\n")
    code, _, err = run(["vpa", "recommend", "--samples", str(SAMPLES), "--vpa", str(bad)], capsys)
    assert code == 1 and "no VerticalPodAutoscaler" in err
    bad.write_text("kind: VerticalPodAutoscaler\nmetadata: {name: x}\nspec: {}\n")
    code, _, err = run(["vpa", "recommend", "--samples", str(SAMPLES), "--vpa", str(bad)], capsys)
    assert code == 1 and "spec.targetRef" in err


def test_help_has_an_example(capsys):
    with pytest.raises(SystemExit):
        main(["vpa", "recommend", "--help"])
    out = capsys.readouterr().out
    assert "example: kvert vpa recommend --samples examples/hamster-samples.csv -o json" in out
    assert "timestamp,pod,container,cpu,memory,event" in out
    assert main(["vpa"]) == 0


def test_end_to_end_through_the_installed_command():
    exe = Path(sys.executable).parent / "kvert"
    argv = [str(exe)] if exe.exists() else [sys.executable, "-m", "kvert.cli.main"]
    done = subprocess.run(argv + ["vpa", "recommend", "--samples", "examples/hamster-samples.csv", "-o", "json"],
                          cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    rec = json.loads(done.stdout)
    assert rec["containerRecommendations"][0]["containerName"] == "hamster"
