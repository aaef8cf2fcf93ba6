"""Two `kvert up` processes on one etcd act as one cluster: each controller and the
scheduler run once (Lease leader election), each process runs its own nodes, and when the
leader's process is killed the other takes over within the lease duration plus retries."""

from __future__ import annotations

import json
import re
import signal
import time

from kvert.api.meta import parse_time

from .conftest import Kubectl, KvertUp, wait_for
from .test_etcd_servers import etcd  # noqa: F401 - the fixture

DEPLOYMENT = {
    "apiVersion": "apps/v1", "kind": "Deployment",
    "metadata": {"name": "web", "namespace": "default"},
    "spec": {"replicas": 4, "selector": {"matchLabels": {"app": "web"}},
             "template": {"metadata": {"labels": {"app": "web"}},
                          "spec": {"containers": [{"name": "c", "image": "nginx",
                                                   "resources": {"requests": {"cpu": "100m"}}}]}}},
}


def _nodes(up: KvertUp) -> list[str]:
    for line in up.output:
        m = re.search(r"^nodes: (.*)$", line.strip())
        if m:
            return m.group(1).split(", ")
    return []


def _holder(k: Kubectl, lease: str) -> str:
    return k.json("get", "lease", lease, "-n", "kube-system")["spec"].get("holderIdentity", "")


def _pods(k: Kubectl) -> list[dict]:
    return k.json("get", "pods", "-l", "app=web")["items"]


def test_two_kvert_up_share_one_etcd_with_leader_election(tmp_path, etcd, kubectl_binary):  # noqa: F811
    one = KvertUp(tmp_path / "one", store=etcd, args=("--nodes", "2", "--no-vpa")).start()
    k1 = Kubectl(kubectl_binary, one.kubeconfig, tmp_path / "home1")
    two = None
    try:
        # one leads both loops before two starts
        wait_for(lambda: _holder(k1, "kube-controller-manager") and _holder(k1, "kube-scheduler"),
                 timeout=30)
        leader = _holder(k1, "kube-controller-manager")
        two = KvertUp(tmp_path / "two", store=etcd, args=("--nodes", "2", "--no-vpa")).start()
        k2 = Kubectl(kubectl_binary, two.kubeconfig, tmp_path / "home2")
        assert _nodes(one) == ["node-1", "node-2"]
        assert _nodes(two) == ["node-3", "node-4"]      # one's nodes are alive: two joins with its own

        k2("create", "-f", "-", input=json.dumps(DEPLOYMENT))
        wait_for(lambda: len(_pods(k2)) == 4
                 and all(p["status"].get("phase") == "Running" for p in _pods(k2)), timeout=60)
        time.sleep(3)
        assert len(_pods(k1)) == 4
        assert len(k1.json("get", "replicasets", "-l", "app=web")["items"]) == 1
        assert _holder(k2, "kube-controller-manager") == leader

        one.proc.send_signal(signal.SIGKILL)
        killed = time.monotonic()
        wait_for(lambda: _holder(k2, "kube-controller-manager") not in ("", leader), timeout=40, every=0.2)
        handover = time.monotonic() - killed
        # upstream's 15 s lease, retried every 2 s (+ up to 1.2 x jitter) by the standby
        print(f"lease handed over {handover:.1f} s after SIGKILL")
        assert handover <= 20, handover
        wait_for(lambda: _holder(k2, "kube-scheduler") not in ("", leader), timeout=40)
        lease = k2.json("get", "lease", "kube-controller-manager", "-n", "kube-system")["spec"]
        assert lease["leaseTransitions"] == 1 and lease["leaseDurationSeconds"] == 15
        assert parse_time(lease["acquireTime"]) <= parse_time(lease["renewTime"])

        # the new leader adopts what exists: nothing is created twice
        time.sleep(5)
        assert len(_pods(k2)) == 4
        assert len(k2.json("get", "replicasets", "-l", "app=web")["items"]) == 1
        k2("scale", "deployment", "web", "--replicas=5")
        wait_for(lambda: len(_pods(k2)) == 5, timeout=30)
        time.sleep(3)
        assert len(_pods(k2)) == 5
    finally:
        one.stop()
        if two is not None:
            two.stop()
