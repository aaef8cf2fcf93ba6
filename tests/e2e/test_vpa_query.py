"""RecommendationQuery (seed 002's Recommender API) in `kvert up`, driven by real kubectl: a pod
that does not exist, with the hamster's labels, gets the hamster VPA's recommendation."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from .conftest import Kubectl, KvertUp

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
HAMSTER = EXAMPLES / "hamster.yaml"
QUERY = EXAMPLES / "hamster-query.yaml"


@pytest.fixture(scope="module")
def vpa_cluster(tmp_path_factory, kubectl_binary):
    up = KvertUp(tmp_path_factory.mktemp("vpaq"), args=(
        "--nodes", "1", "--metrics-resolution", "1",
        "--vpa-recommender-interval", "1", "--vpa-updater-interval", "60")).start()
    yield Kubectl(kubectl_binary, up.kubeconfig, tmp_path_factory.mktemp("home"))
    up.stop()


def test_query_for_a_pod_that_does_not_exist(vpa_cluster):
    kubectl = vpa_cluster
    # discovery: kubectl knows the type, create-only
    resources = kubectl("api-resources", "--api-group", "autoscaling.kvert.io", "-o", "wide").stdout
    line = next(l for l in resources.splitlines() if l.startswith("recommendationqueries"))
    assert "RecommendationQuery" in line and "true" in line and "create" in line
    # nothing matches yet: an answer with an error
    answer = json.loads(kubectl("create", "-f", str(QUERY), "-o", "json").stdout)
    assert answer["kind"] == "RecommendationQuery"
    assert "no VerticalPodAutoscaler matches" in answer["status"]["error"]

    kubectl("apply", "-f", str(HAMSTER))
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        answer = json.loads(kubectl("create", "-f", str(QUERY), "-o", "json").stdout)
        # as upstream, before the pods' first samples their VPA recommends the pod minimum
        # (raised to the example's minAllowed 100m): wait for one from usage
        recs = (answer["status"].get("recommendation") or {}).get("containerRecommendations") or []
        if recs and recs[0]["target"]["cpu"] not in ("25m", "100m"):
            break
        time.sleep(1)
    assert "recommendation" in answer["status"], answer["status"]
    assert answer["metadata"]["name"] == "new-hamster" and answer["metadata"]["namespace"] == "default"
    assert answer["spec"]["pod"]["metadata"]["labels"] == {"app": "hamster"}
    [rec] = answer["status"]["recommendation"]["containerRecommendations"]
    assert rec["containerName"] == "hamster"
    assert set(rec) == {"containerName", "target", "lowerBound", "upperBound", "uncappedTarget"}
    # the hamster burns ~500m: far above its 100m request, within the policy's maxAllowed cpu 1
    target_cpu = rec["target"]["cpu"]
    assert target_cpu.endswith("m") and 300 < int(target_cpu[:-1]) < 1000
    assert rec["upperBound"]["cpu"] in ("1", "1000m")        # capped to maxAllowed
    # the pod was never created, and nothing was stored
    assert kubectl("get", "pod", "new-hamster", check=False).returncode != 0
    listing = kubectl("get", "recommendationqueries", check=False)
    assert listing.returncode != 0 and "MethodNotAllowed" in listing.stderr
    # -o yaml prints the status too; a bad query is refused with the field named
    assert "containerRecommendations:" in kubectl("create", "-f", str(QUERY), "-o", "yaml").stdout
    bad = kubectl("create", "-f", "-", check=False, input=(
        "apiVersion: autoscaling.kvert.io/v1\nkind: RecommendationQuery\nmetadata: {name: bad}\n"
        "spec:\n  pod:\n    spec: {containers: []}\n"))
    assert bad.returncode != 0
    assert 'RecommendationQuery "bad" is invalid' in bad.stderr and "spec.pod.spec.containers" in bad.stderr
