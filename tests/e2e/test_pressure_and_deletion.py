"""`kvert up` driven by real kubectl: node-pressure eviction on a node whose pods fill its
memory (seed 001 section 13), and deletion as Kubernetes does it (namespaces, --cascade)."""

from __future__ import annotations

import json
import time

import pytest

from .conftest import Kubectl, KvertUp, wait_for

GI = 2**30


@pytest.fixture(scope="module")
def pressure_cluster(tmp_path_factory, kubectl_binary):
    up = KvertUp(tmp_path_factory.mktemp("pressure"), args=(
        "--nodes", "1", "--node-capacity", "cpu=8,memory=8Gi,pods=110", "--no-vpa",
        "--eviction-hard", "memory.available<1Gi", "--eviction-pressure-transition-period", "20s")).start()
    yield up, Kubectl(kubectl_binary, up.kubeconfig, tmp_path_factory.mktemp("home"))
    up.stop()


def _pod(name: str, requests: dict | None, limits: dict | None, usage: dict) -> dict:
    resources = {k: v for k, v in (("requests", requests), ("limits", limits)) if v}
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "annotations": {"kvert.io/usage": json.dumps({"c": usage})}},
            "spec": {"containers": [{"name": "c", "image": "busybox", "resources": resources}]}}


def _node_condition(kubectl: Kubectl, ctype: str) -> str:
    node = kubectl.json("get", "node", "node-1")
    return next(c["status"] for c in node["status"]["conditions"] if c["type"] == ctype)


def _taints(kubectl: Kubectl) -> set[tuple[str, str]]:
    node = kubectl.json("get", "node", "node-1")
    return {(t["key"], t["effect"]) for t in node["spec"].get("taints") or []}


def test_memory_pressure_evicts_in_upstream_order_refuses_best_effort_and_clears(pressure_cluster):
    _, kubectl = pressure_cluster
    spike = {"profile": "spikes", "base": "1Gi", "peak": "5632Mi", "every": "1h", "duration": "30m",
             "offset": "15s", "anchor": "start"}
    pods = [_pod("guaranteed", {"cpu": "500m", "memory": "2Gi"}, {"cpu": "500m", "memory": "2Gi"},
                 {"memory": "1536Mi"}),
            _pod("besteffort", None, None, {"memory": "512Mi"}),
            _pod("hog", {"cpu": "500m", "memory": "500Mi"}, {"memory": "7Gi"}, {"memory": spike})]
    kubectl("create", "-f", "-", input=json.dumps({"apiVersion": "v1", "kind": "List", "items": pods}))
    wait_for(lambda: all(kubectl.json("get", "pod", p["metadata"]["name"])["status"].get("phase") == "Running"
                         for p in pods), timeout=30)
    assert _node_condition(kubectl, "MemoryPressure") == "False"
    # 5.5Gi + 1.5Gi + 0.5Gi: 512Mi available, below the 1Gi threshold, within a 10 s pass
    wait_for(lambda: _node_condition(kubectl, "MemoryPressure") == "True", timeout=45)
    wait_for(lambda: ("node.kubernetes.io/memory-pressure", "NoSchedule") in _taints(kubectl), timeout=20)
    hog = wait_for(lambda: (p := kubectl.json("get", "pod", "hog"))["status"].get("phase") == "Failed" and p,
                   timeout=30)
    # the pod furthest above its requests goes first; the others stay
    assert hog["status"]["reason"] == "Evicted"
    assert hog["status"]["message"] == (
        "The node was low on resource: memory. Threshold quantity: 1Gi, available: 512Mi. "
        "Container c was using 5632Mi, request is 500Mi, has larger consumption of memory. ")
    target = next(c for c in hog["status"]["conditions"] if c["type"] == "DisruptionTarget")
    assert target["reason"] == "TerminationByKubelet"
    for name in ("guaranteed", "besteffort"):
        assert kubectl.json("get", "pod", name)["status"]["phase"] == "Running"
    events = kubectl.json("get", "events", "--field-selector", "involvedObject.name=hog,reason=Evicted")
    assert events["items"] and events["items"][0]["type"] == "Warning"
    # a BestEffort pod is refused while MemoryPressure holds (bound directly: the taint keeps
    # the scheduler away, the node's own admission is what is shown here)
    late = _pod("late", None, None, {"memory": "16Mi"})
    late["spec"]["nodeName"] = "node-1"
    kubectl("create", "-f", "-", input=json.dumps(late))
    refused = wait_for(lambda: (p := kubectl.json("get", "pod", "late"))["status"].get("phase") == "Failed" and p,
                       timeout=20)
    assert (refused["status"]["reason"], refused["status"]["message"]) == (
        "Evicted", "Pod was rejected: The node had condition: [MemoryPressure]. ")
    # the condition clears after the transition period, and the taint goes with it
    wait_for(lambda: _node_condition(kubectl, "MemoryPressure") == "False", timeout=60)
    wait_for(lambda: ("node.kubernetes.io/memory-pressure", "NoSchedule") not in _taints(kubectl), timeout=20)


@pytest.fixture(scope="module")
def delete_cluster(tmp_path_factory, kubectl_binary):
    up = KvertUp(tmp_path_factory.mktemp("delete"), args=("--nodes", "1", "--no-vpa")).start()
    yield up, Kubectl(kubectl_binary, up.kubeconfig, tmp_path_factory.mktemp("home"))
    up.stop()


def _names(kubectl: Kubectl, kind: str, namespace: str) -> list[str]:
    return sorted(o["metadata"]["name"] for o in kubectl.json("get", kind, "-n", namespace)["items"])


def test_deleting_a_namespace_removes_everything_in_it(delete_cluster):
    _, kubectl = delete_cluster
    kubectl("create", "namespace", "x")
    kubectl("create", "deployment", "web", "--image=nginx", "--replicas=2", "-n", "x")
    kubectl("create", "configmap", "settings", "--from-literal=a=b", "-n", "x")
    wait_for(lambda: len(_names(kubectl, "pods", "x")) == 2, timeout=30)
    out = kubectl("delete", "namespace", "x", timeout=90)
    assert 'namespace "x" deleted' in out.stdout
    assert kubectl("get", "namespace", "x", check=False).returncode != 0
    for kind in ("pods", "replicasets", "deployments", "configmaps"):
        assert _names(kubectl, kind, "x") == [], kind


def test_cascade_orphan_keeps_the_replica_sets_and_pods(delete_cluster):
    _, kubectl = delete_cluster
    kubectl("create", "deployment", "orphaned", "--image=nginx", "--replicas=2")
    wait_for(lambda: len([p for p in _names(kubectl, "pods", "default") if p.startswith("orphaned-")]) == 2,
             timeout=30)
    kubectl("delete", "deployment", "orphaned", "--cascade=orphan", timeout=60)
    assert kubectl("get", "deployment", "orphaned", check=False).returncode != 0
    sets = [rs for rs in kubectl.json("get", "replicasets")["items"] if rs["metadata"]["name"].startswith("orphaned-")]
    assert len(sets) == 1 and not sets[0]["metadata"].get("ownerReferences")
    pods = [p for p in kubectl.json("get", "pods")["items"] if p["metadata"]["name"].startswith("orphaned-")]
    assert len(pods) == 2 and all(not p["metadata"].get("deletionTimestamp") for p in pods)


def _watch_events(text: str) -> list[dict]:
    """The objects of a ``kubectl get --watch --output-watch-events -o json`` stream."""
    decoder, out, pos = json.JSONDecoder(), [], 0
    text = text.strip()
    while pos < len(text):
        obj, end = decoder.raw_decode(text, pos)
        out.append(obj)
        pos = end
        while pos < len(text) and text[pos].isspace():
            pos += 1
    return out


def test_cascade_foreground_deletes_the_children_first(delete_cluster):
    _, kubectl = delete_cluster
    kubectl("create", "deployment", "fg", "--image=nginx", "--replicas=2")
    wait_for(lambda: len([p for p in _names(kubectl, "pods", "default") if p.startswith("fg-")]) == 2, timeout=30)
    watchers = {kind: kubectl.popen("get", kind, "-l", "app=fg", "--watch", "--output-watch-events", "-o", "json")
                for kind in ("pods", "replicasets")}
    watchers["deployments"] = kubectl.popen("get", "deployments", "--field-selector", "metadata.name=fg",
                                            "--watch", "--output-watch-events", "-o", "json")
    time.sleep(2)                   # let the watches start
    kubectl("delete", "deployment", "fg", "--cascade=foreground", timeout=60)   # waits until it is gone
    time.sleep(1)
    events = {}
    for kind, proc in watchers.items():
        proc.kill()
        events[kind] = _watch_events(proc.communicate()[0])
    deleted = {kind: [int(e["object"]["metadata"]["resourceVersion"]) for e in evs if e["type"] == "DELETED"]
               for kind, evs in events.items()}
    assert len(deleted["pods"]) == 2 and len(deleted["replicasets"]) == 1 and len(deleted["deployments"]) == 1
    # the store's revisions order the deletions: pods, then their replica set, then the deployment
    assert max(deleted["pods"]) < deleted["replicasets"][0] < deleted["deployments"][0]
    held = [e["object"] for e in events["deployments"] if e["type"] == "MODIFIED"
            and e["object"]["metadata"].get("deletionTimestamp")]
    assert held and held[0]["metadata"]["finalizers"] == ["foregroundDeletion"]
