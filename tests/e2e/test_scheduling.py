"""Seed 001's scheduling, live with real kubectl against ``kvert up --nodes 3``: required
pod anti-affinity, priority preemption that respects a PodDisruptionBudget, and scheduling
gates. Expected messages are kube-scheduler's."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from .conftest import Kubectl, KvertUp, wait_for

NODES = ("node-1", "node-2", "node-3")


@pytest.fixture(scope="module")
def sched_cluster(tmp_path_factory, kubectl_binary):
    up = KvertUp(tmp_path_factory.mktemp("sched"), args=(
        "--nodes", "3", "--node-capacity", "cpu=4,memory=8Gi,pods=110", "--no-vpa")).start()
    yield up, Kubectl(kubectl_binary, up.kubeconfig, tmp_path_factory.mktemp("home"))
    up.stop()


def apply(kubectl: Kubectl, *objects: dict) -> None:
    kubectl("apply", "-f", "-", input="\n---\n".join(json.dumps(o) for o in objects))


def pod(name: str, cpu: str, *, labels=None, node=None, priority_class=None, **spec) -> dict:
    s = {"containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10",
                         "resources": {"requests": {"cpu": cpu, "memory": "64Mi"}}}], **spec}
    if node:
        s["nodeName"] = node
    if priority_class:
        s["priorityClassName"] = priority_class
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "labels": labels or {}}, "spec": s}


def pods(kubectl: Kubectl, selector: str) -> list[dict]:
    return kubectl.json("get", "pods", "-l", selector)["items"]


def condition(p: dict, kind: str = "PodScheduled") -> dict | None:
    return next((c for c in p["status"].get("conditions", []) if c["type"] == kind), None)


def failed_scheduling(kubectl: Kubectl, name: str) -> list[str]:
    events = kubectl.json("get", "events", "--field-selector",
                          f"involvedObject.name={name},reason=FailedScheduling")["items"]
    return [e["message"] for e in events]


def test_required_anti_affinity_spreads_three_replicas_and_the_fourth_stays_pending(sched_cluster,
                                                                                   tmp_path):
    _, kubectl = sched_cluster
    term = {"labelSelector": {"matchLabels": {"app": "spread"}},
            "topologyKey": "kubernetes.io/hostname"}
    apply(kubectl, {
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "spread"},
        "spec": {"replicas": 4, "selector": {"matchLabels": {"app": "spread"}},
                 "template": {"metadata": {"labels": {"app": "spread"}}, "spec": {
                     "affinity": {"podAntiAffinity": {
                         "requiredDuringSchedulingIgnoredDuringExecution": [term]}},
                     "containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10",
                                     "resources": {"requests": {"cpu": "100m"}}}]}}}})

    def settled():
        items = pods(kubectl, "app=spread")
        placed = [p for p in items if p["spec"].get("nodeName")]
        pending = [p for p in items if not p["spec"].get("nodeName")]
        if len(placed) == 3 and len(pending) == 1 and condition(pending[0]):
            return placed, pending[0]
        return None

    placed, pending = wait_for(settled, timeout=30)
    assert sorted(p["spec"]["nodeName"] for p in placed) == list(NODES)
    message = ("0/3 nodes are available: 3 node(s) didn't match pod anti-affinity rules. "
               "preemption: 0/3 nodes are available: 3 No preemption victims found for "
               "incoming pod.")
    cond = condition(pending)
    assert (cond["status"], cond["reason"], cond["message"]) == ("False", "Unschedulable", message)
    assert message in wait_for(lambda: failed_scheduling(kubectl, pending["metadata"]["name"]))
    # the cluster's snapshot, as kubectl prints it, scheduled offline: the same verdict
    snapshot = kubectl("get", "nodes,pods,pdb,priorityclasses,namespaces,services", "-A",
                       "-o", "yaml").stdout
    path = tmp_path / "cluster.yaml"
    path.write_text(snapshot)
    out = subprocess.run([sys.executable, "-m", "kvert.cli.main", "schedule", str(path),
                          "-o", "json"], capture_output=True, text=True, check=True).stdout
    [offline] = json.loads(out)["pods"]
    assert offline["name"] == pending["metadata"]["name"]
    assert (offline["node"], offline["message"]) == (None, message)
    assert offline["filtered"] == {n: ["node(s) didn't match pod anti-affinity rules"]
                                   for n in NODES}
    kubectl("delete", "deployment", "spread", "--wait=false")


def test_a_high_priority_pod_preempts_the_cheapest_victims_respecting_a_pdb(sched_cluster):
    _, kubectl = sched_cluster
    wait_for(lambda: not pods(kubectl, "app=spread"), timeout=60)
    classes = [{"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
                "metadata": {"name": name}, "value": value}
               for name, value in (("low", 100), ("mid", 200), ("top", 300), ("urgent", 1000))]
    apply(kubectl, *classes)
    # every node is full (2 x 2 cpu); node-1 holds the lowest-priority pods but a budget
    # protects them, node-2 the next lowest
    fillers = []
    for node, klass in (("node-1", "low"), ("node-2", "mid"), ("node-3", "top")):
        for i in range(2):
            fillers.append(pod(f"{node}-{i}", "2", labels={"app": f"fill-{node}"}, node=node,
                               priority_class=klass))
    apply(kubectl, *fillers, {
        "apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "guard"},
        "spec": {"minAvailable": 2, "selector": {"matchLabels": {"app": "fill-node-1"}}}})
    wait_for(lambda: all(p["status"].get("phase") == "Running" for p in pods(kubectl, "app")
                         if p["metadata"]["name"].startswith("node-")) and
             kubectl.json("get", "pdb", "guard")["status"].get("currentHealthy") == 2, timeout=60)

    apply(kubectl, pod("vip", "2", labels={"app": "vip"}, priority_class="urgent"))
    nominated = wait_for(lambda: kubectl.json("get", "pod", "vip")["status"].get(
        "nominatedNodeName") or kubectl.json("get", "pod", "vip")["spec"].get("nodeName"), timeout=30)
    assert nominated == "node-2"
    vip = wait_for(lambda: (lambda p: p if p["spec"].get("nodeName") else None)(
        kubectl.json("get", "pod", "vip")), timeout=60)
    assert vip["spec"]["nodeName"] == "node-2"
    survivors = {p["metadata"]["name"] for p in pods(kubectl, "app") if
                 p["metadata"]["name"].startswith("node-") and
                 not p["metadata"].get("deletionTimestamp")}
    # exactly one mid-priority pod was preempted; the budget-protected ones were spared
    assert {"node-1-0", "node-1-1", "node-3-0", "node-3-1"} <= survivors
    assert len(survivors & {"node-2-0", "node-2-1"}) == 1
    events = kubectl.json("get", "events", "--field-selector", "reason=Preempted")["items"]
    assert any(e["involvedObject"]["name"].startswith("node-2-") for e in events)
    kubectl("delete", "pods", "-l", "app", "--grace-period=0", "--force", "--wait=false")


def test_a_gated_pod_waits_until_its_gates_are_removed(sched_cluster):
    _, kubectl = sched_cluster
    wait_for(lambda: not pods(kubectl, "app"), timeout=60)
    apply(kubectl, pod("gated", "10m", schedulingGates=[{"name": "example.com/approval"}]))
    gated = kubectl.json("get", "pod", "gated")
    cond = condition(gated)
    assert (cond["status"], cond["reason"]) == ("False", "SchedulingGated")
    assert "SchedulingGated" in kubectl("get", "pod", "gated").stdout
    assert not gated["spec"].get("nodeName")
    kubectl("patch", "pod", "gated", "--type=json",
            "-p", '[{"op": "remove", "path": "/spec/schedulingGates"}]')
    placed = wait_for(lambda: kubectl.json("get", "pod", "gated")["spec"].get("nodeName"), timeout=20)
    assert placed in NODES
