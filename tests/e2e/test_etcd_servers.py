"""Two `kvert up` API servers on one real etcd serve the same objects, and a watch on
either sees writes made through the other."""

from __future__ import annotations

import json
import time

import pytest

from kvert.store.etcd import LocalEtcd

from .conftest import Kubectl, KvertUp


@pytest.fixture
def etcd(tmp_path):
    if not LocalEtcd.available():
        pytest.skip("etcd not installed (scripts/setup --test installs it)")
    server = LocalEtcd(str(tmp_path / "etcd")).start()
    yield "etcd://" + server.endpoint.split("://", 1)[1]
    server.stop()


def test_two_api_servers_share_one_etcd(tmp_path, etcd, kubectl_binary):
    one = KvertUp(tmp_path / "one", store=etcd).start()
    two = KvertUp(tmp_path / "two", store=etcd).start()
    k1 = Kubectl(kubectl_binary, one.kubeconfig, tmp_path / "home1")
    k2 = Kubectl(kubectl_binary, two.kubeconfig, tmp_path / "home2")
    try:
        watcher = k2.popen("get", "configmaps", "--watch-only", "--output-watch-events")
        time.sleep(1.5)
        k1("create", "-f", "-", input=json.dumps({"apiVersion": "v1", "kind": "ConfigMap",
                                                  "metadata": {"name": "shared"}, "data": {"k": "v"}}))
        k1("patch", "configmap", "shared", "--type=merge", "-p", '{"data":{"k":"w"}}')
        seen: list[str] = []
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and len(seen) < 2:
            line = watcher.stdout.readline()
            if not line:
                break
            if " shared " in f" {line} ":
                seen.append(line.split()[0])
        watcher.kill()
        watcher.wait()
        assert seen == ["ADDED", "MODIFIED"]
        via_two = k2.json("get", "configmap", "shared")
        via_one = k1.json("get", "configmap", "shared")
        assert via_two["data"] == {"k": "w"}
        assert via_two["metadata"]["resourceVersion"] == via_one["metadata"]["resourceVersion"]
        stale = dict(via_one, data={"k": "stale"})
        k2("replace", "-f", "-", input=json.dumps(dict(via_two, data={"k": "x"})))
        conflict = k1("replace", "-f", "-", input=json.dumps(stale), check=False)
        assert conflict.returncode != 0 and "the object has been modified" in conflict.stderr
    finally:
        one.stop()
        two.stop()
