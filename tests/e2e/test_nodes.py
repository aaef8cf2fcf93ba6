"""`kvert up --nodes N` with simulated nodes, driven by real kubectl: scheduling, node
allocatable from kubelet-style flags, and seed 000's in-place resize walk-through."""

from __future__ import annotations

import json

import pytest

from .conftest import Kubectl, KvertUp, wait_for

STRESS = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "stress"},
          "spec": {"containers": [{
              "name": "stress", "image": "skiibum/ubuntu-stress:18.10",
              "resizePolicy": [{"resourceName": "cpu", "restartPolicy": "NotRequired"},
                               {"resourceName": "memory", "restartPolicy": "NotRequired"}],
              "resources": {"requests": {"cpu": "500m", "memory": "500Mi"},
                            "limits": {"cpu": "500m", "memory": "500Mi"}}}]}}


@pytest.fixture(scope="module")
def nodes_cluster(tmp_path_factory, kubectl_binary):
    up = KvertUp(tmp_path_factory.mktemp("nodes"), args=(
        "--nodes", "3", "--node-capacity", "cpu=4,memory=32Gi,pods=110",
        "--kube-reserved", "memory=2Gi", "--system-reserved", "memory=1Gi",
        "--eviction-hard", "memory.available<100Mi")).start()
    yield up, Kubectl(kubectl_binary, up.kubeconfig, tmp_path_factory.mktemp("home"))
    up.stop()


def condition(pod: dict, kind: str) -> dict | None:
    return next((c for c in pod["status"].get("conditions", []) if c["type"] == kind), None)


def test_nodes_register_with_seed_004_allocatable(nodes_cluster):
    _, kubectl = nodes_cluster
    nodes = wait_for(lambda: len(kubectl.json("get", "nodes")["items"]) == 3 and kubectl.json("get", "nodes"))
    for node in nodes["items"]:
        assert node["status"]["capacity"]["memory"] == "32Gi"
        # 32Gi - kube-reserved 2Gi - system-reserved 1Gi - eviction-hard 100Mi = 29596Mi (28.9Gi)
        assert node["status"]["allocatable"]["memory"] == "29596Mi"
        assert [c["status"] for c in node["status"]["conditions"] if c["type"] == "Ready"] == ["True"]


def test_resize_walkthrough_650m_accepted_3950m_deferred_4650m_refused(nodes_cluster):
    """Seed 000's walk-through on Kubernetes 1.36: 650m is applied, 3950m (fits the node, not
    now) Deferred; 4650m, above the node's 4-cpu allocatable, which the seed has the node
    report Infeasible, is refused at admission by 1.36's PodResizeValidator (403, the message
    of plugin/pkg/admission/podresize TestResizeAdmission)."""
    _, kubectl = nodes_cluster
    kubectl("create", "-f", "-", input=json.dumps(STRESS))
    pod = wait_for(lambda: (p := kubectl.json("get", "pod", "stress"))["status"].get("phase") == "Running" and p)
    node = pod["spec"]["nodeName"]
    # something else already runs on the node: 3950m then fits the node, but not now
    other = json.loads(json.dumps(STRESS))
    other["metadata"]["name"] = "neighbour"
    other["spec"]["nodeName"] = node
    other["spec"]["containers"][0]["resources"] = {"requests": {"cpu": "100m"}, "limits": {"cpu": "100m"}}
    kubectl("create", "-f", "-", input=json.dumps(other))
    wait_for(lambda: kubectl.json("get", "pod", "neighbour")["status"].get("phase") == "Running")
    status = pod["status"]["containerStatuses"][0]
    assert status["allocatedResources"] == {"cpu": "500m", "memory": "500Mi"}

    def resize(cpu: str, check: bool = True):
        return kubectl("patch", "pod", "stress", "--subresource", "resize", "-p", json.dumps(
            {"spec": {"containers": [{"name": "stress", "resources": {
                "requests": {"cpu": cpu}, "limits": {"cpu": cpu}}}]}}), check=check)

    resize("650m")

    def applied() -> dict | None:
        p = kubectl.json("get", "pod", "stress")
        s = p["status"]["containerStatuses"][0]
        done = s["allocatedResources"]["cpu"] == "650m" and s["resources"]["limits"]["cpu"] == "650m"
        return done and not condition(p, "PodResizeInProgress") and p

    pod = wait_for(applied)
    assert pod["status"]["containerStatuses"][0]["restartCount"] == 0

    resize("3950m")
    pod = wait_for(lambda: (p := kubectl.json("get", "pod", "stress")) and
                   (c := condition(p, "PodResizePending")) and c.get("reason") == "Deferred" and p)
    assert pod["status"]["containerStatuses"][0]["allocatedResources"]["cpu"] == "650m"

    refused = resize("4650m", check=False)
    assert refused.returncode != 0
    assert ('Error from server (Forbidden): pods "stress" is forbidden: node didn\'t have enough '
            "allocatable resources: cpu, requested: 4650, allocatable: 4000") in refused.stderr
    pod = kubectl.json("get", "pod", "stress")
    assert pod["spec"]["containers"][0]["resources"]["requests"]["cpu"] == "3950m"
    assert pod["status"]["containerStatuses"][0]["allocatedResources"]["cpu"] == "650m"
    yaml_out = kubectl("get", "pod", "stress", "-o", "yaml").stdout
    assert "allocatedResources" in yaml_out and "PodResizePending" in yaml_out


def test_explain_shows_qos_oom_score_adj_and_cgroups(nodes_cluster):
    import subprocess
    import sys
    up, kubectl = nodes_cluster

    def make(name, resources):
        body = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
                "spec": {"containers": [{"name": "c", "image": "busybox", "resources": resources}]}}
        kubectl("create", "-f", "-", input=json.dumps(body))

    make("guaranteed", {"requests": {"cpu": "1", "memory": "1Gi"}, "limits": {"cpu": "1", "memory": "1Gi"}})
    make("burstable", {"requests": {"cpu": "250m", "memory": "1Gi"}})
    make("besteffort", {})

    def explained(name):
        out = subprocess.run([sys.executable, "-m", "kvert.cli.main", "explain", "pod", name, "-o", "json",
                              "--kubeconfig", str(up.kubeconfig)], capture_output=True, text=True)
        doc = json.loads(out.stdout) if out.returncode == 0 else {}
        return doc if doc.get("node", {}).get("containers") else None

    g = wait_for(lambda: explained("guaranteed"))
    b = wait_for(lambda: explained("burstable"))
    e = wait_for(lambda: explained("besteffort"))
    assert (g["qosClass"], b["qosClass"], e["qosClass"]) == ("Guaranteed", "Burstable", "BestEffort")
    assert g["node"]["containers"][0]["oomScoreAdj"] == -997
    assert e["node"]["containers"][0]["oomScoreAdj"] == 1000
    # Burstable: 1000 - 1000 * request / capacity = 1000 - 1000 * 1Gi / 32Gi = 969 (integer division)
    assert b["node"]["containers"][0]["oomScoreAdj"] == 1000 - (1000 * 2**30) // (32 * 2**30)
    gc = g["node"]["containers"][0]["cgroup"]
    # 1 cpu limit -> cpu.max "100000 100000"; 1024 shares -> cpu.weight 100 by the runtime's
    # conversion (opencontainers/cgroups TestConvertCPUSharesToCgroupV2Value); the pod cgroup,
    # the kubelet's own, keeps the linear 1 + (1022 * 9999) // 262142 = 39
    assert gc["cpu.max"] == "100000 100000" and gc["cpu.weight"] == "100"
    assert g["node"]["pod"]["cgroup"]["cpu.weight"] == "39"
    assert g["node"]["kubepods"]["path"] == "/kubepods"
    assert b["node"]["qos"]["path"] == "/kubepods/burstable"
    assert gc["memory.max"] == str(2**30)
    assert e["node"]["containers"][0]["cgroup"]["cpu.weight"] == "1"     # 2 shares
