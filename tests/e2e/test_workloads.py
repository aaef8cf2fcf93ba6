"""StatefulSets, DaemonSets, ReplicationControllers and HorizontalPodAutoscalers with real kubectl
against ``kvert up --nodes 3``: the docs' ``web`` StatefulSet scaled 3 -> 1 -> 3, a DaemonSet
that skips a tainted node until it tolerates the taint, ``kubectl scale rc`` and ``kubectl
autoscale``."""

from __future__ import annotations

import json
import subprocess

import pytest

from .conftest import Kubectl, KvertUp, wait_for

STATEFULSET = {
    "apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "web"},
    "spec": {"serviceName": "nginx", "replicas": 3, "selector": {"matchLabels": {"app": "nginx"}},
             "template": {"metadata": {"labels": {"app": "nginx"}}, "spec": {"containers": [{
                 "name": "nginx", "image": "registry.k8s.io/nginx-slim:0.24",
                 "volumeMounts": [{"name": "www", "mountPath": "/usr/share/nginx/html"}]}]}},
             "volumeClaimTemplates": [{"metadata": {"name": "www"}, "spec": {
                 "accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}]}}

DAEMONSET = {
    "apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "agent"},
    "spec": {"selector": {"matchLabels": {"app": "agent"}},
             "template": {"metadata": {"labels": {"app": "agent"}},
                          "spec": {"containers": [{"name": "agent", "image": "busybox"}]}}}}


@pytest.fixture(scope="module")
def kubectl3(tmp_path_factory, kubectl_binary):
    up = KvertUp(tmp_path_factory.mktemp("workloads"), args=("--nodes", "3", "--no-vpa")).start()
    yield Kubectl(kubectl_binary, up.kubeconfig, tmp_path_factory.mktemp("home"))
    up.stop()


def _watch_pods(kubectl: Kubectl, selector: str) -> subprocess.Popen:
    return kubectl.popen("get", "pods", "-l", selector, "-w", "-o",
                         'jsonpath={.metadata.name} {.metadata.deletionTimestamp}{"\\n"}')


def _first_seen(lines: list[str], deleting: bool) -> list[str]:
    """Pod names in the order they first appear (being deleted or not)."""
    order: list[str] = []
    for line in lines:
        parts = line.split()
        if parts and (len(parts) > 1) == deleting and parts[0] not in order:
            order.append(parts[0])
    return order


def test_statefulset_scales_in_order_and_keeps_its_names(kubectl3):
    watch = _watch_pods(kubectl3, "app=nginx")
    try:
        kubectl3("apply", "-f", "-", input=json.dumps(STATEFULSET))
        kubectl3("rollout", "status", "statefulset/web", "--timeout=30s")
        kubectl3("scale", "statefulset", "web", "--replicas=1")
        kubectl3("wait", "--for=delete", "pod/web-2", "pod/web-1", "--timeout=20s")
        kubectl3("scale", "statefulset", "web", "--replicas=3")
        kubectl3("rollout", "status", "statefulset/web", "--timeout=30s")
    finally:
        watch.terminate()
    lines = watch.communicate(timeout=10)[0].splitlines()
    assert _first_seen(lines, deleting=False) == ["web-0", "web-1", "web-2"]
    assert _first_seen(lines, deleting=True) == ["web-2", "web-1"]      # highest ordinal first
    pods = kubectl3.json("get", "pods", "-l", "app=nginx")["items"]
    assert sorted(p["metadata"]["name"] for p in pods) == ["web-0", "web-1", "web-2"]
    web1 = next(p for p in pods if p["metadata"]["name"] == "web-1")
    assert web1["spec"]["hostname"] == "web-1" and web1["spec"]["subdomain"] == "nginx"
    assert web1["metadata"]["labels"]["apps.kubernetes.io/pod-index"] == "1"
    claims = kubectl3("get", "pvc", "-o", "name").stdout.split()
    assert claims == [f"persistentvolumeclaim/www-web-{i}" for i in range(3)]
    sts = kubectl3.json("get", "statefulset", "web")
    assert sts["status"]["readyReplicas"] == 3
    assert sts["status"]["currentRevision"] == sts["status"]["updateRevision"]
    header, row = kubectl3("get", "statefulset", "web").stdout.splitlines()
    assert header.split() == ["NAME", "READY", "AGE"] and row.split()[:2] == ["web", "3/3"]


def test_daemonset_skips_a_tainted_node_until_tolerated(kubectl3):
    nodes = wait_for(lambda: len(kubectl3.json("get", "nodes")["items"]) == 3 and
                     [n["metadata"]["name"] for n in kubectl3.json("get", "nodes")["items"]])
    tainted = sorted(nodes)[-1]
    kubectl3("taint", "node", tainted, "dedicated=db:NoSchedule")
    kubectl3("apply", "-f", "-", input=json.dumps(DAEMONSET))
    kubectl3("rollout", "status", "daemonset/agent", "--timeout=30s")

    def placed():
        pods = kubectl3.json("get", "pods", "-l", "app=agent")["items"]
        return sorted(p["spec"].get("nodeName", "") for p in pods if not p["metadata"].get("deletionTimestamp"))
    assert wait_for(lambda: len(placed()) == 2 and placed()) == sorted(nodes)[:-1]
    ds = kubectl3.json("get", "daemonset", "agent")["status"]
    assert ds["desiredNumberScheduled"] == 2 and ds["numberReady"] == 2
    toleration = [{"key": "dedicated", "operator": "Equal", "value": "db", "effect": "NoSchedule"}]
    kubectl3("patch", "daemonset", "agent", "--type=merge", "-p",
             json.dumps({"spec": {"template": {"spec": {"tolerations": toleration}}}}))
    kubectl3("rollout", "status", "daemonset/agent", "--timeout=30s")
    assert wait_for(lambda: len(placed()) == 3 and placed()) == sorted(nodes)
    row = kubectl3("get", "daemonset", "agent").stdout.splitlines()[1].split()
    assert row[:6] == ["agent", "3", "3", "3", "3", "3"]


def test_replication_controller_scaled_with_kubectl(kubectl3):
    rc = {"apiVersion": "v1", "kind": "ReplicationController", "metadata": {"name": "nginx-rc"},
          "spec": {"replicas": 2, "template": {"metadata": {"labels": {"app": "nginx-rc"}},
                                               "spec": {"containers": [{"name": "nginx", "image": "nginx"}]}}}}
    kubectl3("apply", "-f", "-", input=json.dumps(rc))
    assert kubectl3.json("get", "rc", "nginx-rc")["spec"]["selector"] == {"app": "nginx-rc"}
    kubectl3("scale", "rc", "nginx-rc", "--replicas=4")

    def ready():
        status = kubectl3.json("get", "rc", "nginx-rc")["status"]
        return status.get("readyReplicas") == 4
    wait_for(ready, timeout=20)
    header, row = kubectl3("get", "rc", "nginx-rc").stdout.splitlines()
    assert header.split() == ["NAME", "DESIRED", "CURRENT", "READY", "AGE"]
    assert row.split()[:4] == ["nginx-rc", "4", "4", "4"]


def test_kubectl_autoscale_creates_an_hpa(kubectl3):
    kubectl3("create", "deployment", "php-apache", "--image=registry.k8s.io/hpa-example")
    kubectl3("autoscale", "deployment", "php-apache", "--cpu=50%", "--min=1", "--max=10")
    hpa = kubectl3.json("get", "hpa", "php-apache")
    assert hpa["apiVersion"] == "autoscaling/v2"
    assert hpa["spec"]["scaleTargetRef"] == {"apiVersion": "apps/v1", "kind": "Deployment", "name": "php-apache"}
    assert hpa["spec"]["metrics"] == [{"type": "Resource", "resource": {
        "name": "cpu", "target": {"type": "Utilization", "averageUtilization": 50}}}]
    header, row = kubectl3("get", "hpa", "php-apache").stdout.splitlines()
    assert header.split() == ["NAME", "REFERENCE", "TARGETS", "MINPODS", "MAXPODS", "REPLICAS", "AGE"]
    assert row.split()[:7] == ["php-apache", "Deployment/php-apache", "cpu:", "<unknown>/50%", "1", "10", "0"]
