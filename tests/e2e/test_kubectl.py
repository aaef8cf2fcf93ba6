"""Real kubectl (v1.37) against `kvert up`: the everyday commands, as a user types them."""

from __future__ import annotations

import json
import time

import yaml

from .conftest import wait_for

POD = """
apiVersion: v1
kind: Pod
metadata:
  name: {name}
  labels: {{app: web}}
spec:
  terminationGracePeriodSeconds: 0
  containers:
  - name: app
    image: nginx:1.27
    resources:
      requests: {{cpu: 100m, memory: 64Mi}}
      limits: {{cpu: 100m, memory: 64Mi}}
"""

DEPLOYMENT = """
apiVersion: apps/v1
kind: Deployment
metadata:
  name: hamster
spec:
  replicas: {replicas}
  selector:
    matchLabels: {{app: hamster}}
  template:
    metadata:
      labels: {{app: hamster}}
    spec:
      containers:
      - name: hamster
        image: registry.k8s.io/ubuntu-slim:0.14
        resources:
          requests: {{cpu: 100m, memory: 50Mi}}
        env:
        - {{name: A, value: "1"}}
"""

NODE = """
apiVersion: v1
kind: Node
metadata:
  name: {name}
status:
  capacity: {{cpu: "4", memory: 32Gi, pods: "110"}}
  allocatable: {{cpu: "4", memory: 32Gi, pods: "110"}}
  conditions:
  - {{type: Ready, status: "True", reason: KubeletReady, message: ready}}
"""


def test_create_get_describe(kubectl):
    assert "pod/web created" in kubectl("create", "-f", "-", input=POD.format(name="web")).stdout
    wide = kubectl("get", "pods", "-o", "wide").stdout.splitlines()
    assert wide[0].split() == ["NAME", "READY", "STATUS", "RESTARTS", "AGE", "IP", "NODE",
                               "NOMINATED", "NODE", "READINESS", "GATES"]
    row = wide[1].split()
    assert row[0] == "web" and row[2] in ("Pending", "ContainerCreating", "Running") and row[3] == "0"
    as_yaml = yaml.safe_load(kubectl("get", "pod", "web", "-o", "yaml").stdout)
    assert as_yaml["status"]["qosClass"] == "Guaranteed"
    assert kubectl("get", "pod", "web", "-o", "jsonpath={.spec.containers[0].resources.limits.cpu}").stdout == "100m"
    described = kubectl("describe", "pod", "web").stdout
    assert "QoS Class:" in described and "Guaranteed" in described
    assert "node.kubernetes.io/not-ready:NoExecute op=Exists for 300s" in described


def test_apply_client_side_and_server_side(kubectl):
    assert "created" in kubectl("apply", "-f", "-", input=DEPLOYMENT.format(replicas=2)).stdout
    assert "configured" in kubectl("apply", "-f", "-", input=DEPLOYMENT.format(replicas=3)).stdout
    assert kubectl("get", "deploy", "hamster", "-o", "jsonpath={.spec.replicas}").stdout == "3"
    # kubectl's server-side apply takes over what its client-side apply set (lastAppliedManager)
    kubectl("apply", "--server-side", "-f", "-", input=DEPLOYMENT.format(replicas=4))
    assert kubectl("get", "deploy", "hamster", "-o", "jsonpath={.spec.replicas}").stdout == "4"
    managers = kubectl("get", "deploy", "hamster", "-o", "jsonpath={.metadata.managedFields[*].manager}").stdout
    assert "kubectl" in managers.split()
    conflict = kubectl("apply", "--server-side", "--field-manager=other", "-f", "-",
                       input=DEPLOYMENT.format(replicas=5), check=False)
    assert conflict.returncode != 0 and 'conflict with "kubectl"' in conflict.stderr
    kubectl("apply", "--server-side", "--field-manager=other", "--force-conflicts", "-f", "-",
            input=DEPLOYMENT.format(replicas=5))
    assert kubectl("get", "deploy", "hamster", "-o", "jsonpath={.spec.replicas}").stdout == "5"
    kubectl("apply", "--server-side", "-f", "-",
            input=DEPLOYMENT.format(replicas=4).replace("name: hamster\nspec", "name: created-by-ssa\nspec"))
    assert kubectl("get", "deploy", "created-by-ssa", "-o", "jsonpath={.spec.replicas}").stdout == "4"
    table = kubectl("get", "deploy", "hamster").stdout.splitlines()
    assert table[0].split() == ["NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE"]


def test_patch_three_kinds_and_resize(kubectl):
    kubectl("create", "-f", "-", input=POD.format(name="patched"))
    kubectl("patch", "pod", "patched", "--type=merge", "-p", '{"metadata":{"labels":{"m":"1"}}}')
    kubectl("patch", "pod", "patched", "--type=json", "-p",
            '[{"op":"add","path":"/metadata/annotations","value":{"j":"2"}}]')
    kubectl("patch", "pod", "patched", "-p",
            '{"spec":{"containers":[{"name":"app","image":"nginx:1.28"}]}}')
    pod = kubectl.json("get", "pod", "patched")
    assert pod["metadata"]["labels"]["m"] == "1" and pod["metadata"]["annotations"]["j"] == "2"
    assert pod["spec"]["containers"][0]["image"] == "nginx:1.28"
    kubectl("patch", "pod", "patched", "--subresource", "resize", "-p",
            '{"spec":{"containers":[{"name":"app","resources":{"requests":{"cpu":"650m"},"limits":{"cpu":"650m"}}}]}}')
    resources = kubectl.json("get", "pod", "patched")["spec"]["containers"][0]["resources"]
    assert resources["requests"]["cpu"] == "650m" and resources["limits"]["cpu"] == "650m"
    refused = kubectl("patch", "pod", "patched", "--subresource", "resize", "-p",
                      '{"spec":{"containers":[{"name":"app","resources":{"requests":{"cpu":"500m"}}}]}}',
                      check=False)
    assert refused.returncode != 0 and "QOS" in refused.stderr.upper()


def test_label_annotate_taint_cordon_uncordon(kubectl):
    kubectl("create", "-f", "-", input=NODE.format(name="node-a"))
    kubectl("label", "node", "node-a", "zone=a")
    kubectl("annotate", "node", "node-a", "owner=kvert")
    kubectl("taint", "nodes", "node-a", "dedicated=gpu:NoSchedule")
    kubectl("cordon", "node-a")
    node = kubectl.json("get", "node", "node-a")
    assert node["metadata"]["labels"]["zone"] == "a"
    assert node["metadata"]["annotations"]["owner"] == "kvert"
    assert {"key": "dedicated", "value": "gpu", "effect": "NoSchedule"} in node["spec"]["taints"]
    assert node["spec"]["unschedulable"] is True
    assert "Ready,SchedulingDisabled" in kubectl("get", "node", "node-a").stdout

    def taint_keys():
        return [t["key"] for t in kubectl.json("get", "node", "node-a")["spec"].get("taints") or []]
    # the node lifecycle controller adds the unschedulable taint of a cordoned node
    wait_for(lambda: "node.kubernetes.io/unschedulable" in taint_keys(), timeout=20)
    kubectl("uncordon", "node-a")
    kubectl("taint", "nodes", "node-a", "dedicated-")
    assert not kubectl.json("get", "node", "node-a")["spec"].get("unschedulable")
    wait_for(lambda: not taint_keys(), timeout=20)


def test_get_watch_sees_live_changes(kubectl):
    kubectl("create", "-f", "-", input=POD.format(name="watched"))
    proc = kubectl.popen("get", "pods", "watched", "-w", "--output-watch-events")
    try:
        time.sleep(1.5)
        kubectl("label", "pod", "watched", "seen=yes")
        kubectl("delete", "pod", "watched")
        deadline = time.monotonic() + 20
        lines: list[str] = []
        while time.monotonic() < deadline and not any(line.startswith("DELETED") for line in lines):
            line = proc.stdout.readline()
            if not line:
                break
            lines.append(line)
    finally:
        proc.kill()
        proc.wait()
    events = [line.split()[0] for line in lines if line.split() and line.split()[0] in
              ("ADDED", "MODIFIED", "DELETED")]
    assert events[0] == "ADDED" and "MODIFIED" in events and events[-1] == "DELETED"


def test_wait_for_condition(kubectl):
    kubectl("create", "-f", "-", input=POD.format(name="waited"))
    waiter = kubectl.popen("wait", "--for=condition=Ready", "pod/waited", "--timeout=30s")
    time.sleep(1.5)
    assert waiter.poll() is None
    status = {"status": {"conditions": [{"type": "Ready", "status": "True"}]}}
    kubectl("patch", "pod", "waited", "--subresource", "status", "--type=merge", "-p", json.dumps(status))
    out, _ = waiter.communicate(timeout=30)
    assert waiter.returncode == 0, out
    assert "condition met" in out


def test_explain(kubectl):
    out = kubectl("explain", "pods.spec.containers.resizePolicy").stdout
    assert "FIELD: resizePolicy" in out
    out = kubectl("explain", "vpa.spec.updatePolicy").stdout
    assert "updateMode" in out


def test_delete(kubectl):
    kubectl("create", "-f", "-", input=POD.format(name="doomed"))
    assert 'pod "doomed" deleted' in kubectl("delete", "pod", "doomed").stdout
    missing = kubectl("get", "pod", "doomed", check=False)
    assert missing.returncode != 0 and "NotFound" in missing.stderr


def test_crd_served_within_a_second_and_schema_enforced(kubectl):
    crd = {
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "crontabs.stable.example.com"},
        "spec": {"group": "stable.example.com", "scope": "Namespaced",
                 "names": {"plural": "crontabs", "singular": "crontab", "kind": "CronTab",
                           "shortNames": ["ct"]},
                 "versions": [{"name": "v1", "served": True, "storage": True, "schema": {
                     "openAPIV3Schema": {"type": "object", "properties": {"spec": {
                         "type": "object", "required": ["cronSpec"], "properties": {
                             "cronSpec": {"type": "string"},
                             "replicas": {"type": "integer", "minimum": 1, "maximum": 10}}}}}}}]}}
    kubectl("create", "-f", "-", input=json.dumps(crd))
    started = time.monotonic()
    good = {"apiVersion": "stable.example.com/v1", "kind": "CronTab", "metadata": {"name": "ok"},
            "spec": {"cronSpec": "* * * * */5", "replicas": 3}}
    while True:
        result = kubectl("create", "-f", "-", input=json.dumps(good), check=False)
        if result.returncode == 0:
            break
        assert time.monotonic() - started < 5, result.stderr
        time.sleep(0.1)
    # served within a second of its creation (kubectl itself takes part of that)
    assert time.monotonic() - started < 2.0
    bad = dict(good, metadata={"name": "bad"}, spec={"cronSpec": "x", "replicas": 30})
    refused = kubectl("create", "-f", "-", input=json.dumps(bad), check=False)
    assert refused.returncode != 0
    assert "spec.replicas" in refused.stderr and "invalid" in refused.stderr.lower()
    assert kubectl("get", "ct", "-o", "name").stdout.split() == ["crontab.stable.example.com/ok"]


def test_drain_waits_for_the_disruption_budget(kubectl):
    kubectl("create", "-f", "-", input=NODE.format(name="drained"))
    for name in ("d1", "d2"):
        pod = yaml.safe_load(POD.format(name=name))
        pod["metadata"]["labels"] = {"app": "guarded"}
        pod["spec"]["nodeName"] = "drained"
        kubectl("create", "-f", "-", input=json.dumps(pod))
        kubectl("patch", "pod", name, "--subresource", "status", "--type=merge", "-p", json.dumps(
            {"status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}}))
    # The disruption controller keeps the budget's status: 2 healthy, 1 required -> 1 allowed.
    pdb = {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "guard"},
           "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "guarded"}}}}
    kubectl("create", "-f", "-", input=json.dumps(pdb))
    deadline = time.monotonic() + 20
    while kubectl.json("get", "pdb", "guard").get("status", {}).get("disruptionsAllowed") != 1:
        assert time.monotonic() < deadline, "the disruption controller did not update the budget"
        time.sleep(0.2)

    drain = kubectl.popen("drain", "drained", "--force", "--ignore-daemonsets", "--timeout=90s")
    output: list[str] = []
    deadline = time.monotonic() + 40
    while time.monotonic() < deadline:
        line = drain.stdout.readline()
        output.append(line)
        if "disruption budget" in line:
            break
    assert any("disruption budget" in line for line in output), "".join(output)
    assert drain.poll() is None          # one pod evicted, the other refused with 429: retrying
    assert len(kubectl("get", "pods", "-l", "app=guarded", "-o", "name").stdout.split()) == 1
    # The owner relaxes the budget; the controller allows the last disruption; drain finishes.
    kubectl("patch", "pdb", "guard", "--type=merge", "-p", '{"spec":{"minAvailable":0}}')
    rest, _ = drain.communicate(timeout=90)
    assert drain.returncode == 0, "".join(output) + rest
    assert "drained" in rest
    assert kubectl("get", "pods", "-l", "app=guarded", "-o", "name").stdout.split() == []
    assert kubectl.json("get", "node", "drained")["spec"]["unschedulable"] is True


def test_deployment_controller_creates_replicasets_and_pods(kubectl):
    kubectl("create", "-f", "-", input=DEPLOYMENT.format(replicas=2).replace("name: hamster\nspec",
                                                                              "name: rolled\nspec"))
    deadline = time.monotonic() + 20
    pods: list[str] = []
    while time.monotonic() < deadline:
        pods = kubectl("get", "pods", "-l", "app=hamster", "-o", "name").stdout.split()
        rs = kubectl("get", "rs", "-o", "name").stdout.split()
        if len(pods) >= 2 and any("rolled-" in r for r in rs):
            break
        time.sleep(0.3)
    assert len(pods) >= 2
    owners = kubectl.json("get", "rs")["items"]
    rolled = [r for r in owners if r["metadata"]["name"].startswith("rolled-")]
    assert rolled and rolled[0]["metadata"]["labels"]["pod-template-hash"]
    kubectl("delete", "deploy", "rolled")
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        if not any("rolled-" in r for r in kubectl("get", "rs", "-o", "name").stdout.split()):
            break
        time.sleep(0.3)
    assert not any("rolled-" in r for r in kubectl("get", "rs", "-o", "name").stdout.split())
