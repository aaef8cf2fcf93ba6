"""Real kubectl against `kvert up`: the commands whose typed clients send protobuf bodies.

``kubectl create namespace|deployment|configmap|priorityclass|pdb|quota|service`` POST
``application/vnd.kubernetes.protobuf`` with no JSON fallback; kvert decodes them
(kvert.apiserver.protobuf) and answers JSON. (``run``, ``expose``, ``delete``, ``scale``
and ``drain``'s evictions send JSON in kubectl v1.37.)
"""

from __future__ import annotations

import json


def test_create_commands_that_send_protobuf(kubectl):
    kubectl("create", "namespace", "pb")
    kubectl("create", "deployment", "d", "--image=nginx", "--replicas=3", "--port=8080", "-n", "pb")
    kubectl("create", "configmap", "c", "--from-literal=a=b", "-n", "pb")
    kubectl("create", "priorityclass", "pb-high", "--value=1000", "--description=d")
    kubectl("create", "pdb", "p", "--selector=app=a", "--min-available=50%", "-n", "pb")
    kubectl("create", "quota", "q", "--hard=cpu=1,memory=1Gi,pods=2", "-n", "pb")
    kubectl("create", "service", "clusterip", "s", "--tcp=80:8080", "-n", "pb")

    assert kubectl.json("get", "namespace", "pb")["status"]["phase"] == "Active"
    deployment = kubectl.json("get", "deployment", "d", "-n", "pb")
    assert deployment["spec"]["replicas"] == 3
    container = deployment["spec"]["template"]["spec"]["containers"][0]
    assert container["image"] == "nginx"
    assert container["ports"][0]["containerPort"] == 8080
    assert kubectl.json("get", "configmap", "c", "-n", "pb")["data"] == {"a": "b"}
    priority = kubectl.json("get", "priorityclass", "pb-high")
    assert (priority["value"], priority["description"]) == (1000, "d")
    pdb = kubectl.json("get", "pdb", "p", "-n", "pb")
    assert pdb["spec"]["minAvailable"] == "50%"
    assert pdb["spec"]["selector"] == {"matchLabels": {"app": "a"}}
    quota = kubectl.json("get", "quota", "q", "-n", "pb")
    assert quota["spec"]["hard"] == {"cpu": "1", "memory": "1Gi", "pods": "2"}
    port = kubectl.json("get", "service", "s", "-n", "pb")["spec"]["ports"][0]
    assert (port["port"], port["targetPort"], port["protocol"]) == (80, 8080, "TCP")


def test_zero_replicas_survive_protobuf(kubectl):
    # DeploymentSpec.replicas is a pointer: a present 0 must not be defaulted to 1.
    kubectl("create", "deployment", "zero", "--image=nginx", "--replicas=0")
    assert kubectl.json("get", "deployment", "zero")["spec"]["replicas"] == 0


def test_dry_run_server_and_conflicts(kubectl):
    done = kubectl("create", "configmap", "dry", "--from-literal=k=v", "--dry-run=server",
                   "-o", "json")
    assert json.loads(done.stdout)["data"] == {"k": "v"}
    assert kubectl("get", "configmap", "dry", check=False).returncode != 0
    kubectl("create", "configmap", "twice")
    again = kubectl("create", "configmap", "twice", check=False)
    assert again.returncode != 0 and "already exists" in again.stderr


def test_kubectl_really_sends_protobuf(kubectl):
    # -v=8 logs the request headers: the typed create clients use protobuf bodies.
    done = kubectl("create", "namespace", "pb-verbose", "-v=8")
    post = done.stderr[done.stderr.index('verb="POST"'):]
    assert "Content-Type: application/vnd.kubernetes.protobuf" in post
    assert kubectl.json("get", "namespace", "pb-verbose")["metadata"]["name"] == "pb-verbose"
