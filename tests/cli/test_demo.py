"""`kvert demo`: the hamster under three policies; the numbers are computed by the run."""

import json

from kvert.cli.main import main

POLICIES = ("no VPA", "Recreate", "InPlaceOrRecreate")      # named by the VPA update modes


def test_demo_compares_policies_and_in_place_has_no_restarts(tmp_path, capsys):
    assert main(["demo", "--days", "0.25", "-o", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    for name in POLICIES:
        assert f"== {name} ==" in out
    # the template's requests are printed before anything runs
    before = out.split("== no VPA ==")[0]
    assert "hamster/hamster: requests cpu 100m, memory 50Mi" in before
    # every timeline starts from the template's requests, before the VPA acted
    assert out.count("day 1 00:00  hamster: 2 replicas created, requests per pod 100m / 50Mi") == 3
    in_place = out.split("== InPlaceOrRecreate ==")[1].split("==")[0]
    assert "requests per pod ->" in in_place
    doc = json.loads((tmp_path / "report.json").read_text())
    totals = {p["name"]: p["metrics"]["totals"] for p in doc["results"]}
    assert list(totals) == list(POLICIES)
    assert totals["InPlaceOrRecreate"]["container_restarts"] == 0
    assert totals["InPlaceOrRecreate"]["evictions"] == 0 and totals["InPlaceOrRecreate"]["in_place_resizes"] > 0
    assert totals["Recreate"]["evictions"] > 0
    # without a VPA the hamster is far under-provisioned; in place it is close to its use
    assert (totals["no VPA"]["cpu_underprovisioned_core_hours"]
            > 10 * totals["InPlaceOrRecreate"]["cpu_underprovisioned_core_hours"])
    assert abs(totals["InPlaceOrRecreate"]["cpu_slack_core_hours"]) < abs(totals["no VPA"]["cpu_slack_core_hours"])
    assert (tmp_path / "report.html").read_text().startswith("<!DOCTYPE html>")
