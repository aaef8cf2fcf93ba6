"""`kvert vpa manifests | kubectl apply -f -` against `kvert up --runtime cgroupfs --no-vpa`
(issue 26): the recommender, updater and admission controller run as real processes from the
image's Deployments (in-cluster configuration from the service-account volume and the
KUBERNETES_SERVICE_* variables, the NAMESPACE variable from the downward API), reach Ready
through their /health-check probes, recommend for a VPA and mutate a new pod through the
vpa-webhook Service; deleting the admission controller's Deployment removes its
MutatingWebhookConfiguration."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time

import pytest

from kvert.kubelet.runtime.cgroupfs import unavailable

from .conftest import Kubectl, KvertUp, wait_for

pytestmark = pytest.mark.skipif(unavailable() is not None,
                                reason=f"needs root and a cgroup filesystem: {unavailable()}")

# the components' ports (upstream's --address defaults and the webhook's 8000): the pods share
# the host's network under cgroupfs
PORTS = (8942, 8943, 8944, 8000)
COMPONENTS = ("vpa-recommender", "vpa-updater", "vpa-admission-controller")

APP = [
    {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "hamster", "namespace": "default"},
     "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "hamster"}},
              "template": {"metadata": {"labels": {"app": "hamster"}},
                           "spec": {"terminationGracePeriodSeconds": 1, "containers": [{
                               "name": "hamster", "image": "registry.k8s.io/ubuntu-slim:0.14",
                               "resources": {"requests": {"cpu": "100m", "memory": "50Mi"}},
                               "command": ["/bin/sh", "-c", "sleep 3600"]}]}}}},
    # Initial: only the admission controller acts, so the new pod below is its doing alone
    {"apiVersion": "autoscaling.k8s.io/v1", "kind": "VerticalPodAutoscaler",
     "metadata": {"name": "hamster-vpa", "namespace": "default"},
     "spec": {"targetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "hamster"},
              "updatePolicy": {"updateMode": "Initial"}}},
]


def _busy(ports) -> list[int]:
    busy = []
    for port in ports:
        with socket.socket() as s:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                s.bind(("0.0.0.0", port))
            except OSError:
                busy.append(port)
    return busy


@pytest.fixture(scope="module")
def kubectl(kubectl_binary, tmp_path_factory):
    busy = _busy(PORTS)
    if busy:
        pytest.skip(f"ports {', '.join(map(str, busy))} are in use on this machine; the VPA's containers "
                    f"listen on 8942-8944 and 8000 of the host's network under the cgroupfs runtime")
    up = KvertUp(tmp_path_factory.mktemp("kvert"), args=(
        "--runtime", "cgroupfs", "--no-vpa", "--metrics-resolution", "5")).start()
    yield Kubectl(kubectl_binary, up.kubeconfig, tmp_path_factory.mktemp("home"))
    assert up.stop() == 0


def _available(kubectl, name: str) -> bool:
    deployment = kubectl.json("get", "deployment", name, "-n", "kube-system")
    return any(c.get("type") == "Available" and c.get("status") == "True"
               for c in (deployment.get("status") or {}).get("conditions") or [])


def _ready_pods(kubectl) -> dict[str, bool]:
    pods = kubectl.json("get", "pods", "-n", "kube-system")["items"]
    return {p["metadata"]["labels"].get("app", ""): any(
        c["type"] == "Ready" and c["status"] == "True" for c in p["status"].get("conditions") or [])
        for p in pods if p["metadata"].get("deletionTimestamp") is None}


def _target(kubectl) -> dict | None:
    status = kubectl.json("get", "vpa", "hamster-vpa").get("status") or {}
    recommendations = (status.get("recommendation") or {}).get("containerRecommendations") or []
    return recommendations[0].get("target") if recommendations else None


def test_manifests_bring_up_kverts_vpa_on_cgroupfs(kubectl):
    kubectl("apply", "-f", "-", input="\n".join(json.dumps(o) for o in APP))
    manifests = subprocess.run([sys.executable, "-m", "kvert.cli.main", "vpa", "manifests"],
                               capture_output=True, text=True, check=True, timeout=60)
    kubectl("apply", "-f", "-", input=manifests.stdout, timeout=60)

    # each Deployment Available, its pod Ready through the /health-check probes
    deadline = time.monotonic() + 90
    while missing := [name for name in COMPONENTS if not _available(kubectl, name)]:
        if time.monotonic() > deadline:
            unhealthy = kubectl("get", "events", "-n", "kube-system", "--field-selector", "reason=Unhealthy",
                                "-o", "custom-columns=OBJECT:.involvedObject.name,MESSAGE:.message").stdout
            pytest.fail(f"not Available after 90 s: {', '.join(missing)}\n{unhealthy}")
        time.sleep(1)
    assert _ready_pods(kubectl) == {name: True for name in COMPONENTS}
    pod = kubectl.json("get", "pods", "-n", "kube-system", "-l", "app=vpa-updater")["items"][0]
    assert pod["status"]["containerStatuses"][0]["restartCount"] == 0
    assert pod["status"]["containerStatuses"][0]["containerID"].startswith("cgroupfs://")

    # the in-cluster recommender (kvert up runs none: --no-vpa) recommends
    target = wait_for(lambda: _target(kubectl), timeout=60, every=1)
    conditions = {c["type"]: c["status"] for c in kubectl.json("get", "vpa", "hamster-vpa")["status"]["conditions"]}
    assert conditions["RecommendationProvided"] == "True"

    # a new pod of the Deployment goes through the in-cluster webhook, by the vpa-webhook Service
    old = kubectl.json("get", "pods", "-l", "app=hamster")["items"][0]["metadata"]["name"]
    kubectl("delete", "pod", old, "--wait=false")

    def new_pod():
        pods = [p for p in kubectl.json("get", "pods", "-l", "app=hamster")["items"] if p["metadata"]["name"] != old]
        return pods[0] if pods else None
    created = wait_for(new_pod, timeout=30)
    assert created["metadata"]["annotations"]["vpaUpdates"] == \
        "Pod resources updated by hamster-vpa: container 0: cpu request, memory request"
    requests = created["spec"]["containers"][0]["resources"]["requests"]
    assert requests == (_target(kubectl) or target)

    # without its Deployment the admission controller's registration goes with it
    assert kubectl("get", "mutatingwebhookconfiguration", "vpa-webhook-config", "-o", "name").stdout.strip()
    kubectl("delete", "deployment", "vpa-admission-controller", "-n", "kube-system")
    wait_for(lambda: kubectl("get", "mutatingwebhookconfiguration", "vpa-webhook-config",
                             check=False).returncode != 0, timeout=30)
