"""`kubectl logs` against `kvert up`'s simulated nodes: what a simulated container "prints"
(kvert.kubelet.runtime.simlogs), and the refusals as upstream words them: container choice
in pkg/registry/core/pod/strategy.go (LogLocation), the kubelet's in
pkg/kubelet/kubelet_pods.go (validateContainerLogStatus), options in
pkg/apis/core/validation (ValidatePodLogOptions)."""

from __future__ import annotations

import json
import ssl
import time
import urllib.error
import urllib.request

from .conftest import wait_for

USAGE = 'kvert.io/usage={"app":{"cpu":{"profile":"constant","value":"250m"},"memory":{"profile":"constant","value":"100Mi"}}}'


def _running(kubectl, name: str) -> bool:
    return kubectl.json("get", "pod", name)["status"].get("phase") == "Running"


def test_logs_of_a_simulated_container(kubectl):
    pod = {"apiVersion": "v1", "kind": "Pod",
           "metadata": {"name": "talker", "annotations": {"kvert.io/usage": USAGE.split("=", 1)[1].replace("app", "talker")}},
           "spec": {"containers": [{"name": "talker", "image": "nginx",
                                    "resources": {"requests": {"cpu": "200m"}}}]}}
    kubectl("create", "-f", "-", input=json.dumps(pod))
    wait_for(lambda: _running(kubectl, "talker"))
    assert kubectl("logs", "talker").stdout == "started: image nginx\n"
    stamped = kubectl("logs", "talker", "--timestamps").stdout
    assert stamped.endswith(" started: image nginx\n") and stamped[:4].isdigit() and "Z " in stamped
    assert kubectl("logs", "talker", "--tail=0").stdout == ""
    refused = kubectl("logs", "talker", "-p", check=False)
    assert 'previous terminated container "talker" in pod "talker" not found' in refused.stderr
    # follow: an in-place resize is written to the log while kubectl streams it
    follower = kubectl.popen("logs", "-f", "talker")
    time.sleep(1.5)
    kubectl("patch", "pod", "talker", "--subresource", "resize", "-p",
            json.dumps({"spec": {"containers": [{"name": "talker", "resources": {
                "requests": {"cpu": "300m"}}}]}}))
    deadline = time.monotonic() + 20
    lines = []
    while time.monotonic() < deadline:
        line = follower.stdout.readline()
        lines.append(line)
        if line.startswith("resources updated:"):
            break
    follower.kill()
    follower.wait()
    assert lines[0] == "started: image nginx\n"
    # 300m is 307 shares (milliCPUToShares), no CPU limit: no quota
    assert lines[-1].startswith("resources updated: cpu shares 307, cpu quota 0/100000")


def test_logs_of_one_container_of_several(kubectl):
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "pair"},
           "spec": {"containers": [{"name": "a", "image": "nginx"}, {"name": "b", "image": "busybox"}]}}
    kubectl("create", "-f", "-", input=json.dumps(pod))
    wait_for(lambda: _running(kubectl, "pair"))
    assert kubectl("logs", "pair", "-c", "b").stdout == "started: image busybox\n"
    defaulted = kubectl("logs", "pair")          # kubectl picks the first container itself
    assert defaulted.stdout == "started: image nginx\n"
    assert 'Defaulted container "a" out of: a, b' in defaulted.stderr


def test_log_options_and_container_choice_over_http(cluster, kubectl):
    """Refusals kubectl never sends (it checks some options itself), straight over HTTP."""
    import base64
    import yaml
    config = yaml.safe_load(cluster.kubeconfig.read_text())
    server = config["clusters"][0]["cluster"]["server"]
    ca = base64.b64decode(config["clusters"][0]["cluster"]["certificate-authority-data"]).decode()
    token = config["users"][0]["user"]["token"]
    context = ssl.create_default_context(cadata=ca)
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "duo"},
           "spec": {"initContainers": [{"name": "setup", "image": "busybox"}],
                    "containers": [{"name": "a", "image": "nginx"}, {"name": "b", "image": "nginx"}]}}
    kubectl("create", "-f", "-", input=json.dumps(pod))

    def get(query: str) -> tuple[int, dict]:
        request = urllib.request.Request(f"{server}/api/v1/namespaces/default/pods/duo/log?{query}",
                                         headers={"Authorization": f"Bearer {token}"})
        try:
            with urllib.request.urlopen(request, context=context, timeout=10) as response:
                return response.status, {}
        except urllib.error.HTTPError as e:
            return e.code, json.loads(e.read())

    code, status = get("")
    assert code == 400 and status["message"] == (
        "a container name must be specified for pod duo, choose one of: [a b] "
        "or one of the init containers: [setup]")
    code, status = get("container=c")
    assert code == 400 and status["message"] == "container c is not valid for pod duo"
    code, status = get("container=a&tailLines=-1&limitBytes=0&sinceSeconds=0")
    assert code == 422 and status["reason"] == "Invalid"
    assert [(c["field"], c["message"]) for c in status["details"]["causes"]] == [
        ("tailLines", "Invalid value: -1: must be greater than or equal to 0"),
        ("limitBytes", "Invalid value: 0: must be greater than 0"),
        ("sinceSeconds", "Invalid value: 0: must be greater than 0")]
    code, status = get("container=a&tailLines=x")
    assert code == 400 and 'parsing "x": invalid syntax' in status["message"]


def test_an_oom_killed_container_leaves_its_previous_log(kubectl):
    usage = ('kvert.io/usage={"hog":{"memory":{"profile":"linear","start":"50Mi","rate":"60Mi/s"}}}')
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "hog", "annotations": {
               "kvert.io/usage": usage.split("=", 1)[1]}},
           "spec": {"containers": [{"name": "hog", "image": "busybox", "resources": {
               "requests": {"memory": "100Mi"}, "limits": {"memory": "100Mi"}}}]}}
    kubectl("create", "-f", "-", input=json.dumps(pod))
    wait_for(lambda: (kubectl.json("get", "pod", "hog")["status"].get("containerStatuses") or [{}])[0]
             .get("restartCount", 0) >= 1, timeout=60)
    previous = kubectl("logs", "hog", "-p").stdout.splitlines()
    assert previous[0] == "started: image busybox"
    assert previous[-2].startswith("killed: out of memory (container limit 104857600")
    assert previous[-1] == "exited: code 137 (OOMKilled)"

