"""Seed 001 §8 and §9 live with real kubectl against ``kvert up``: a ResourceClaim made from
a template is allocated a device of a ResourceSlice and the pod lands on that device's node;
a gang (a Workload pod group with minCount) is scheduled all together or not at all."""

from __future__ import annotations

import json

import pytest

from .conftest import Kubectl, KvertUp, wait_for

SCHEDULER_CONFIG = """\
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  plugins:
    multiPoint:
      enabled: [{name: GangScheduling}]
"""


@pytest.fixture(scope="module")
def cluster3(tmp_path_factory, kubectl_binary):
    home = tmp_path_factory.mktemp("dra")
    cfg = home / "scheduler.yaml"
    cfg.write_text(SCHEDULER_CONFIG)
    up = KvertUp(home / "data", args=(
        "--nodes", "3", "--node-capacity", "cpu=4,memory=8Gi,pods=110", "--no-vpa",
        "--scheduler-config", str(cfg))).start()
    yield up, Kubectl(kubectl_binary, up.kubeconfig, home / "home")
    up.stop()


def apply(kubectl: Kubectl, *objects: dict) -> None:
    kubectl("apply", "-f", "-", input="\n---\n".join(json.dumps(o) for o in objects))


def container(cpu: str = "100m", claims: list | None = None) -> dict:
    c = {"name": "c", "image": "registry.k8s.io/pause:3.10",
         "resources": {"requests": {"cpu": cpu}}}
    if claims:
        c["resources"]["claims"] = [{"name": n} for n in claims]
    return c


def test_a_claim_from_a_template_gets_the_gpu_and_the_pod_its_node(cluster3):
    _, kubectl = cluster3
    apply(kubectl,
          {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass",
           "metadata": {"name": "gpu.example.com"},
           "spec": {"selectors": [{"cel": {"expression": 'device.driver == "gpu.example.com"'}}]}},
          {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
           "metadata": {"name": "node-2-gpus"},
           "spec": {"driver": "gpu.example.com", "nodeName": "node-2",
                    "pool": {"name": "node-2", "generation": 1, "resourceSliceCount": 1},
                    "devices": [{"name": "gpu-0",
                                 "attributes": {"model": {"string": "a100"}}}]}},
          {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
           "metadata": {"name": "one-gpu"},
           "spec": {"spec": {"devices": {"requests": [{
               "name": "gpu", "exactly": {"deviceClassName": "gpu.example.com",
                                          "selectors": [{"cel": {"expression":
                                              'device.attributes["gpu.example.com"].model == "a100"'}}]}}]}}}})
    trainer = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "trainer"},
               "spec": {"resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "one-gpu"}],
                        "containers": [container(claims=["gpu"])]}}
    apply(kubectl, trainer)
    pod = wait_for(lambda: (lambda p: p if p["spec"].get("nodeName") else None)(
        kubectl.json("get", "pod", "trainer")), timeout=30)
    assert pod["spec"]["nodeName"] == "node-2"
    [status] = pod["status"]["resourceClaimStatuses"]
    claim = kubectl.json("get", "resourceclaim", status["resourceClaimName"])
    [result] = claim["status"]["allocation"]["devices"]["results"]
    assert (result["request"], result["driver"], result["pool"], result["device"]) == \
        ("gpu", "gpu.example.com", "node-2", "gpu-0")
    assert [r["name"] for r in claim["status"]["reservedFor"]] == ["trainer"]
    # the only GPU is taken: a second pod waits, with the scheduler's reason
    apply(kubectl, {**trainer, "metadata": {"name": "trainer-2"}})
    message = wait_for(lambda: next((c.get("message") for c in kubectl.json(
        "get", "pod", "trainer-2")["status"].get("conditions", [])
        if c["type"] == "PodScheduled" and c.get("reason") == "Unschedulable"), None), timeout=30)
    assert message.startswith("0/3 nodes are available: 3 cannot allocate all claims.")
    # deleting the first pod releases the device: the second gets it
    kubectl("delete", "pod", "trainer", "--wait=false")
    placed = wait_for(lambda: kubectl.json("get", "pod", "trainer-2")["spec"].get("nodeName"),
                      timeout=60)
    assert placed == "node-2"


def test_a_gang_is_scheduled_only_when_all_its_members_exist(cluster3):
    _, kubectl = cluster3
    apply(kubectl, {"apiVersion": "scheduling.k8s.io/v1alpha1", "kind": "Workload",
                    "metadata": {"name": "train"},
                    "spec": {"podGroups": [{"name": "workers", "policy": {"gang": {"minCount": 3}}}]}})

    def worker(i: int) -> dict:
        return {"apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": f"worker-{i}", "labels": {"gang": "train"}},
                "spec": {"workloadRef": {"name": "train", "podGroup": "workers"},
                         "containers": [container("500m")]}}

    apply(kubectl, worker(0), worker(1))
    wait_for(lambda: len(kubectl.json("get", "pods", "-l", "gang=train")["items"]) == 2)
    import time
    time.sleep(2)
    # two of three: neither is scheduled
    assert all(not p["spec"].get("nodeName")
               for p in kubectl.json("get", "pods", "-l", "gang=train")["items"])
    apply(kubectl, worker(2))
    placed = wait_for(lambda: (lambda items: items if len(items) == 3 and all(
        p["spec"].get("nodeName") for p in items) else None)(
        kubectl.json("get", "pods", "-l", "gang=train")["items"]), timeout=30)
    assert len(placed) == 3
