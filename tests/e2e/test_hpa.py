"""``kubectl autoscale`` against a real ``kvert up --nodes 1``: the HPA controller reads the
pods' cpu from the metrics.k8s.io API the cluster serves and scales the Deployment through
its scale subresource; ``kubectl get hpa`` prints the targets as 1.35 does."""

from __future__ import annotations

import json
import re

import pytest

from .conftest import Kubectl, KvertUp, wait_for

LABELS = {"app": "web"}
DEPLOYMENT = {
    "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
    "spec": {"replicas": 1, "selector": {"matchLabels": LABELS},
             "template": {"metadata": {"labels": LABELS,
                                       "annotations": {"kvert.io/usage": json.dumps({"app": {"cpu": "300m"}})}},
                          "spec": {"containers": [{"name": "app", "image": "nginx", "resources": {
                              "requests": {"cpu": "100m", "memory": "64Mi"}}}]}}}}


@pytest.fixture(scope="module")
def hpa_cluster(tmp_path_factory, kubectl_binary):
    up = KvertUp(tmp_path_factory.mktemp("hpa"),
                 args=("--nodes", "1", "--metrics-resolution", "1", "--no-vpa")).start()
    try:
        yield Kubectl(kubectl_binary, up.kubeconfig, tmp_path_factory.mktemp("home"))
    finally:
        up.stop()


def test_kubectl_autoscale_scales_on_cpu(hpa_cluster):
    kubectl = hpa_cluster
    kubectl("create", "-f", "-", input=json.dumps(DEPLOYMENT))
    kubectl("autoscale", "deployment", "web", "--cpu-percent=50", "--min=1", "--max=3")
    # 300m used of 100m requested is 300 % against 50 %: 6 wanted, held at --max=3
    wait_for(lambda: kubectl.json("get", "deployment", "web")["spec"]["replicas"] == 3, timeout=120)
    status = wait_for(lambda: (s := kubectl.json("get", "hpa", "web")["status"]).get("currentReplicas") == 3
                      and s, timeout=60)
    reasons = {c["type"]: c["reason"] for c in status["conditions"]}
    assert reasons["ScalingActive"] == "ValidMetricFound"
    assert reasons["ScalingLimited"] == "TooManyReplicas"
    events = kubectl.json("get", "events", "--field-selector", "reason=SuccessfulRescale")["items"]
    assert any(e["message"] == "New size: 3; reason: cpu resource utilization (percentage of request) "
                               "above target" for e in events), [e["message"] for e in events]
    header, row = kubectl("get", "hpa", "web").stdout.splitlines()
    assert header.split() == ["NAME", "REFERENCE", "TARGETS", "MINPODS", "MAXPODS", "REPLICAS", "AGE"]
    assert row.split()[:2] == ["web", "Deployment/web"]
    # formatHPAMetrics: "<resource>: <current>/<target>"
    assert re.fullmatch(r"web\s+Deployment/web\s+cpu: \d+%/50%\s+1\s+3\s+3\s+\S+", row), row
    described = kubectl("describe", "hpa", "web").stdout
    assert re.search(r"ScalingLimited\s+True\s+TooManyReplicas\s+the desired replica count is more than "
                     r"the maximum replica count", described), described
    assert re.search(r"Normal\s+SuccessfulRescale\s+.*horizontal-pod-autoscaler\s+New size: 3; reason: cpu "
                     r"resource utilization \(percentage of request\) above target", described), described
