"""``kvert snapshot`` against a real ``kvert up``, next to what real kubectl prints: objects
made with ``kubectl apply``, captured by the command and by ``kubectl get -A -o yaml`` (one
output, and two appended to one file), read back by ``load_snapshot``."""

from __future__ import annotations

import json
import subprocess
import sys

import yaml

from kvert.sim.snapshot import load_snapshot

from .conftest import Kubectl, KvertUp, free_port, wait_for

SECRET_VALUE = "s3cr3t-Value-42"
PLAIN_VALUE = "plain-Value-17"


def _container(name, env=()):
    return {"name": name, "image": f"example/{name}:1",
            "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}}, "env": list(env)}


def _deployment(name, namespace, env=()):
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": name, "namespace": namespace, "labels": {"app": name}},
            "spec": {"replicas": 1, "selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": {"app": name}},
                                  "spec": {"containers": [_container(name, env)]}}}}


OBJECTS = [
    {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "shop"}},
    {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
     "metadata": {"name": "shop-high"}, "value": 100000, "description": "checkout"},
    _deployment("web", "shop", env=[
        {"name": "MODE", "value": PLAIN_VALUE},
        {"name": "DB_PASSWORD", "value": SECRET_VALUE},
        {"name": "API_KEY", "valueFrom": {"secretKeyRef": {"name": "api", "key": "key",
                                                           "optional": True}}}]),
    _deployment("api", "default"),
    {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "db", "namespace": "shop"},
     "spec": {"serviceName": "db", "replicas": 1, "selector": {"matchLabels": {"app": "db"}},
              "template": {"metadata": {"labels": {"app": "db"}},
                           "spec": {"containers": [_container("db")]}}}},
    {"apiVersion": "autoscaling.k8s.io/v1", "kind": "VerticalPodAutoscaler",
     "metadata": {"name": "web", "namespace": "shop"},
     "spec": {"targetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
              "updatePolicy": {"updateMode": "Off"}}},
    {"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
     "metadata": {"name": "api", "namespace": "default"},
     "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "api"},
              "minReplicas": 1, "maxReplicas": 3,
              "metrics": [{"type": "Resource", "resource": {"name": "cpu", "target": {
                  "type": "Utilization", "averageUtilization": 80}}}]}},
    {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
     "metadata": {"name": "web", "namespace": "shop"},
     "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "web"}}}},
    {"apiVersion": "v1", "kind": "LimitRange", "metadata": {"name": "limits", "namespace": "shop"},
     "spec": {"limits": [{"type": "Container", "defaultRequest": {"cpu": "50m"}}]}},
]
CREATED = {(o["kind"], o["metadata"].get("namespace", ""), o["metadata"]["name"]) for o in OBJECTS}
KINDS = ("nodes,namespaces,deployments,replicasets,statefulsets,daemonsets,jobs,cronjobs,pods,"
         "verticalpodautoscalers,horizontalpodautoscalers,poddisruptionbudgets,priorityclasses,"
         "limitranges,resourcequotas,runtimeclasses")


def _keys(snapshot) -> set[tuple[str, str, str]]:
    return {(kind, o["metadata"].get("namespace", ""), o["metadata"]["name"])
            for kind, objs in snapshot.objects.items() for o in objs}


def _by_name(snapshot, kind):
    return {(o["metadata"].get("namespace", ""), o["metadata"]["name"]): o
            for o in snapshot.of(kind)}


def _snapshot(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "kvert.cli.main", "snapshot", *args],
                          capture_output=True, text=True, timeout=60, check=False)


def test_snapshot_matches_kubectl_and_keeps_no_secret(tmp_path, kubectl_binary):
    up = KvertUp(tmp_path / "data", args=("--nodes", "2")).start()
    try:
        kubectl = Kubectl(kubectl_binary, up.kubeconfig, tmp_path / "home")
        kubectl("apply", "-f", "-", input=yaml.safe_dump_all(OBJECTS))
        # the Deployments' ReplicaSets exist before anything is captured
        wait_for(lambda: len(kubectl.json("get", "replicasets", "-A")["items"]) >= 2)

        a = tmp_path / "a.yaml"
        out = _snapshot("--kubeconfig", str(up.kubeconfig), "-o", str(a))
        assert out.returncode == 0, out.stderr
        assert out.stdout == ""
        summary = out.stderr.strip().splitlines()[-1]
        assert summary.startswith("captured ") and up.url in summary and "2 Deployments" in summary
        b = tmp_path / "b.yaml"
        b.write_text(kubectl("get", KINDS, "-A", "-o", "yaml").stdout)
        c = tmp_path / "c.yaml"                  # kubectl get ... > c; kubectl get ... >> c
        c.write_text(kubectl("get", "nodes,namespaces,priorityclasses", "-o", "yaml").stdout
                     + kubectl("get", KINDS.split(",", 2)[2], "-A", "-o", "yaml").stdout)
        d = tmp_path / "d.yaml"
        out = _snapshot("--kubeconfig", str(up.kubeconfig), "-n", "shop", "-o", str(d))
        assert out.returncode == 0, out.stderr
    finally:
        assert up.stop() == 0

    text = a.read_text()
    document = yaml.safe_load(text)
    assert document["apiVersion"] == "v1" and document["kind"] == "List"
    assert all(item.get("apiVersion") and item.get("kind") for item in document["items"])
    for leak in (SECRET_VALUE, PLAIN_VALUE, "valueFrom", "secretKeyRef", "managedFields",
                 "last-applied-configuration", "resourceVersion", "uid:"):
        assert leak not in text, leak
    # cluster-scoped kinds first, then by namespace
    namespaces = [item["metadata"].get("namespace", "") for item in document["items"]]
    assert namespaces == sorted(namespaces)

    mine, theirs, appended = load_snapshot([a]), load_snapshot([b]), load_snapshot([c])
    for snap in (mine, theirs, appended):
        assert CREATED <= _keys(snap), CREATED - _keys(snap)
        assert {o["metadata"]["name"] for o in snap.of("Node")} == {"node-1", "node-2"}
        [web] = [o for o in snap.of("Deployment") if o["metadata"]["name"] == "web"]
        assert web["spec"]["template"]["spec"]["containers"][0]["env"] == \
            [{"name": "MODE"}, {"name": "DB_PASSWORD"}, {"name": "API_KEY"}]
        assert SECRET_VALUE not in json.dumps(snap.objects)
        assert all(o["metadata"].get("ownerReferences") for o in snap.of("ReplicaSet"))
        assert all("uid" not in r for o in snap.of("ReplicaSet")
                   for r in o["metadata"]["ownerReferences"])
    # the command and kubectl saw the same cluster: the same objects, sanitized alike
    assert _keys(mine) == _keys(theirs) == _keys(appended)
    for kind in ("Deployment", "StatefulSet", "VerticalPodAutoscaler", "PodDisruptionBudget",
                 "PriorityClass", "LimitRange"):
        assert _by_name(mine, kind) == _by_name(theirs, kind) == _by_name(appended, kind), kind
    assert {k: o["spec"] for k, o in _by_name(mine, "HorizontalPodAutoscaler").items()} == \
        {k: o["spec"] for k, o in _by_name(theirs, "HorizontalPodAutoscaler").items()}
    for node in mine.of("Node"):
        assert set(node["status"]) == {"capacity", "allocatable"}

    # -n shop: only shop's namespaced objects and the shop Namespace; cluster-scoped kinds all
    shop = load_snapshot([d])
    assert {ns for _, ns, _ in _keys(shop) if ns} == {"shop"}
    assert {o["metadata"]["name"] for o in shop.of("Namespace")} == {"shop"}
    assert {k for k in _keys(shop) if k[1] == "shop"} == {k for k in _keys(mine) if k[1] == "shop"}
    assert {k for k in _keys(shop) if k[0] in ("Node", "PriorityClass")} == \
        {k for k in _keys(mine) if k[0] in ("Node", "PriorityClass")}

    # nobody listening: exit 1, the server named, nothing written
    config = yaml.safe_load(up.kubeconfig.read_text())
    server = f"https://127.0.0.1:{free_port()}"
    config["clusters"][0]["cluster"]["server"] = server
    (tmp_path / "closed").write_text(yaml.safe_dump(config))
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    out = _snapshot("--kubeconfig", str(tmp_path / "closed"), "-o", str(out_dir / "e.yaml"))
    assert out.returncode == 1
    assert server in out.stderr and "Nodes" in out.stderr, out.stderr
    assert list(out_dir.iterdir()) == []
