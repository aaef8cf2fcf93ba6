"""`kvert up` registers the VPA admission webhook: a pod of a Deployment whose VPA has a
recommendation is created with the recommended requests."""

from __future__ import annotations

import json
import time

DEPLOYMENT = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "vpad"},
              "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "vpad"}},
                       "template": {"metadata": {"labels": {"app": "vpad"}},
                                    "spec": {"containers": [{
                                        "name": "c", "image": "busybox",
                                        "resources": {"requests": {"cpu": "100m", "memory": "50Mi"},
                                                      "limits": {"cpu": "200m", "memory": "100Mi"}}}]}}}}
VPA = {"apiVersion": "autoscaling.k8s.io/v1", "kind": "VerticalPodAutoscaler", "metadata": {"name": "vpad"},
       "spec": {"targetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "vpad"},
                "updatePolicy": {"updateMode": "Initial"}}}
RECOMMENDATION = {"status": {"recommendation": {"containerRecommendations": [{
    "containerName": "c", "target": {"cpu": "300m", "memory": "200Mi"},
    "lowerBound": {"cpu": "250m", "memory": "150Mi"}, "upperBound": {"cpu": "400m", "memory": "300Mi"},
    "uncappedTarget": {"cpu": "300m", "memory": "200Mi"}}]}}}


def test_new_pods_get_the_recommendation_through_the_webhook(kubectl):
    hooks = kubectl.json("get", "mutatingwebhookconfigurations")["items"]
    assert any(w["name"] == "vpa.k8s.io" for h in hooks for w in h["webhooks"])
    kubectl("create", "-f", "-", input=json.dumps(VPA))
    kubectl("patch", "vpa", "vpad", "--subresource", "status", "--type=merge", "-p", json.dumps(RECOMMENDATION))
    kubectl("create", "-f", "-", input=json.dumps(DEPLOYMENT))
    deadline = time.monotonic() + 20
    pods: list = []
    while time.monotonic() < deadline and not pods:
        pods = kubectl.json("get", "pods", "-l", "app=vpad")["items"]
        time.sleep(0.2)
    resources = pods[0]["spec"]["containers"][0]["resources"]
    assert resources["requests"] == {"cpu": "300m", "memory": "200Mi"}
    # limits keep the original limit/request ratio (2x)
    assert resources["limits"] == {"cpu": "600m", "memory": "400Mi"}
    assert "vpaUpdates" in pods[0]["metadata"]["annotations"]
