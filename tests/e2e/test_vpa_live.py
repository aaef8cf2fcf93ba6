"""The live VPA in `kvert up`: the hamster example gets a recommendation and its pods are
resized in place (restartCount 0), driven by real kubectl with fast VPA intervals."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from .conftest import Kubectl, KvertUp

HAMSTER = Path(__file__).resolve().parents[2] / "examples" / "hamster.yaml"


@pytest.fixture(scope="module")
def vpa_cluster(tmp_path_factory, kubectl_binary):
    up = KvertUp(tmp_path_factory.mktemp("vpa"), args=(
        "--nodes", "2", "--metrics-resolution", "1",
        "--vpa-recommender-interval", "2", "--vpa-updater-interval", "2")).start()
    yield Kubectl(kubectl_binary, up.kubeconfig, tmp_path_factory.mktemp("home"))
    up.stop()


def test_hamster_is_recommended_and_resized_in_place(vpa_cluster):
    kubectl = vpa_cluster
    kubectl("apply", "-f", str(HAMSTER))
    deadline = time.monotonic() + 90
    vpa = {}
    while time.monotonic() < deadline:
        vpa = kubectl.json("get", "vpa", "hamster-vpa")
        if vpa.get("status", {}).get("recommendation"):
            break
        time.sleep(1)
    target = vpa["status"]["recommendation"]["containerRecommendations"][0]["target"]
    assert target["cpu"] and target["memory"]
    table = kubectl("get", "vpa").stdout.splitlines()
    assert table[0].split()[:5] == ["NAME", "MODE", "CPU", "MEM", "PROVIDED"]
    assert "True" in table[1]
    # the updater resizes the running pods in place (their cpu use is far above 100m)
    resized = []
    while time.monotonic() < deadline:
        pods = kubectl.json("get", "pods", "-l", "app=hamster")["items"]
        resized = [p for p in pods if p["spec"]["containers"][0]["resources"]["requests"]["cpu"] != "100m"
                   and p["status"].get("containerStatuses")]
        if len(resized) == len(pods) == 2:
            break
        time.sleep(1)
    assert len(resized) == 2, [p["spec"]["containers"][0]["resources"] for p in pods]
    for p in resized:
        assert p["status"]["containerStatuses"][0]["restartCount"] == 0
    events = kubectl("get", "events", "--field-selector", "reason=InPlaceResizedByVPA").stdout
    assert "InPlaceResizedByVPA" in events
