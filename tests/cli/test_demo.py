"""`kvert demo`: the hamster under three policies; the numbers are computed by the run."""

import json

from kvert.cli.main import main


def test_demo_compares_policies_and_in_place_has_no_restarts(tmp_path, capsys):
    assert main(["demo", "--days", "0.25", "-o", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "== none ==" in out and "== recreate ==" in out and "== in-place ==" in out
    # every timeline starts from the template's requests, before the VPA acted
    assert out.count("day 1 00:00  hamster: 2 replicas created, requests per pod 100m / 50Mi") == 3
    in_place = out.split("== in-place ==")[1].split("==")[0]
    assert "requests per pod ->" in in_place
    doc = json.loads((tmp_path / "report.json").read_text())
    totals = {p["name"]: p["metrics"]["totals"] for p in doc["policies"]}
    assert totals["in-place"]["container_restarts"] == 0
    assert totals["in-place"]["evictions"] == 0 and totals["in-place"]["in_place_resizes"] > 0
    assert totals["recreate"]["evictions"] > 0
    # without a VPA the hamster is far under-provisioned; in place it is close to its use
    assert totals["none"]["cpu_underprovisioned_core_hours"] > 10 * totals["in-place"]["cpu_underprovisioned_core_hours"]
    assert abs(totals["in-place"]["cpu_slack_core_hours"]) < abs(totals["none"]["cpu_slack_core_hours"])
    assert (tmp_path / "report.html").read_text().startswith("<!DOCTYPE html>")
