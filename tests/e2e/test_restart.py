"""A restarted `kvert up` keeps every acknowledged object; old watch versions get 410."""

from __future__ import annotations

import json

from .conftest import Kubectl, KvertUp

CM = '{{"apiVersion":"v1","kind":"ConfigMap","metadata":{{"name":"{name}"}},"data":{{"k":"{value}"}}}}'


def test_restart_keeps_objects_and_versions_and_expires_old_watches(tmp_path, kubectl_binary):
    up = KvertUp(tmp_path / "data").start()
    kubectl = Kubectl(kubectl_binary, up.kubeconfig, tmp_path / "home")
    try:
        first = json.loads(kubectl("create", "-f", "-", "-o", "json",
                                   input=CM.format(name="a", value="1")).stdout)
        old_rv = first["metadata"]["resourceVersion"]
        for i in range(5):
            kubectl("create", "-f", "-", input=CM.format(name=f"cm{i}", value=str(i)))
        kubectl("patch", "configmap", "a", "--type=merge", "-p", '{"data":{"k":"2"}}')
        before = {o["metadata"]["name"]: o["metadata"]["resourceVersion"]
                  for o in kubectl.json("get", "configmaps")["items"]}
    finally:
        assert up.stop() == 0
    assert "stopped" in "".join(up.output)

    up2 = KvertUp(tmp_path / "data").start()
    try:
        after = {o["metadata"]["name"]: o["metadata"]["resourceVersion"]
                 for o in kubectl.json("get", "configmaps")["items"]}
        assert after == before
        assert kubectl.json("get", "configmap", "a")["data"] == {"k": "2"}
        raw = kubectl("get", "--raw",
                      f"/api/v1/namespaces/default/configmaps?watch=1&resourceVersion={old_rv}"
                      "&timeoutSeconds=3").stdout
        events = [json.loads(line) for line in raw.splitlines() if line.strip()]
        assert events[0]["type"] == "ERROR"
        assert events[0]["object"]["code"] == 410 and events[0]["object"]["reason"] == "Expired"
    finally:
        assert up2.stop() == 0
