"""With kubectl against ``kvert up``: a pod with pod-level resources is resized in place (KEP-5419,
beta and on in 1.36) without a restart; the node declares the feature; the node agent's resize
metrics move (``kubectl get --raw /api/v1/nodes/NODE/proxy/metrics``)."""

from __future__ import annotations

import json

from .conftest import wait_for

POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "shared-pool"},
       "spec": {"resources": {"requests": {"cpu": "200m", "memory": "64Mi"},
                              "limits": {"cpu": "1", "memory": "256Mi"}},
                "containers": [{"name": "main", "image": "registry.k8s.io/pause",
                                "resources": {"requests": {"cpu": "100m", "memory": "32Mi"}}}]}}


def _metric(text: str, prefix: str) -> float:
    return sum(float(line.rsplit(" ", 1)[1]) for line in text.splitlines() if line.startswith(prefix))


def test_pod_level_resize_in_place_and_metrics(kubectl):
    kubectl("apply", "-f", "-", input=json.dumps(POD))
    pod = wait_for(lambda: (p := kubectl.json("get", "pod", "shared-pool"))["status"].get("phase") == "Running" and p,
                   timeout=60)
    node = pod["spec"]["nodeName"]
    assert "InPlacePodLevelResourcesVerticalScaling" in kubectl.json("get", "node", node)["status"]["declaredFeatures"]
    restarts = pod["status"]["containerStatuses"][0]["restartCount"]

    kubectl("patch", "pod", "shared-pool", "--subresource", "resize", "--type", "merge", "-p", json.dumps(
        {"spec": {"resources": {"requests": {"cpu": "300m", "memory": "64Mi"},
                                "limits": {"cpu": "2", "memory": "512Mi"}}}}))

    def resized():
        p = kubectl.json("get", "pod", "shared-pool")
        busy = [c for c in p["status"].get("conditions", []) if c["type"].startswith("PodResize")]
        return p if p["status"].get("resources", {}).get("limits", {}).get("cpu") == "2" and not busy else None
    pod = wait_for(resized, timeout=60)
    assert pod["status"]["allocatedResources"] == {"cpu": "300m", "memory": "64Mi"}
    assert pod["status"]["resources"]["limits"] == {"cpu": "2", "memory": "512Mi"}
    assert pod["status"]["containerStatuses"][0]["restartCount"] == restarts

    # a container resize too: counted per resource and requirement
    kubectl("patch", "pod", "shared-pool", "--subresource", "resize", "-p", json.dumps(
        {"spec": {"containers": [{"name": "main", "resources": {"requests": {"cpu": "150m"}}}]}}))
    wait_for(lambda: kubectl.json("get", "pod", "shared-pool")["status"]["containerStatuses"][0]
             .get("resources", {}).get("requests", {}).get("cpu") == "150m", timeout=60)
    text = kubectl("get", "--raw", f"/api/v1/nodes/{node}/proxy/metrics").stdout
    assert "# TYPE kubelet_pod_resize_duration_milliseconds histogram" in text
    assert _metric(text, 'kubelet_pod_resize_duration_milliseconds_count{success="true"}') >= 2
    assert _metric(text, 'kubelet_container_requested_resizes_total{operation="increase",requirement="requests",'
                         'resource="cpu"}') >= 1
    assert "kubelet_pod_in_progress_resizes 0" in text
    kubectl("delete", "pod", "shared-pool", "--grace-period", "0", "--wait=false")
