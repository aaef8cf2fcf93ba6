"""Every component as its own process: `kvert apiserver`, then `kvert controller-manager`,
`kvert scheduler` and `kvert node-agent` against it through a kubeconfig, make a Deployment's
pods run as `kvert up` does; a crashed component is reported by name."""

from __future__ import annotations

import json
import os
import signal
import ssl
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

from .conftest import Kubectl, KvertUp, free_port, wait_for
from .test_leader_election import DEPLOYMENT


class Process:
    def __init__(self, *args: str, env: dict | None = None):
        self.proc = subprocess.Popen([sys.executable, "-m", "kvert.cli.main", *args],
                                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                     env=env)

    def wait_for_line(self, text: str, timeout: float = 30.0) -> None:
        deadline = time.monotonic() + timeout
        seen = []
        while time.monotonic() < deadline:
            line = self.proc.stdout.readline()
            if not line:
                break
            seen.append(line)
            if text in line:
                return
        raise AssertionError(f"no {text!r} in:\n" + "".join(seen))

    def stop(self) -> tuple[int, str]:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        return self.proc.returncode, self.proc.stdout.read()


def test_components_as_their_own_processes(tmp_path: Path, kubectl_binary):
    # the API server verifies node agents' serving certificates against the cluster CA, which
    # the controller manager signs their CSRs with (kube-controller-manager's csrsigning)
    pki = tmp_path / "data" / "pki"
    api = KvertUp(tmp_path / "data", command="apiserver", args=(
        "--metrics-resolution", "2", "--kubelet-certificate-authority", str(pki / "ca.crt"))).start()
    kubeconfig = str(api.kubeconfig)
    k = Kubectl(kubectl_binary, api.kubeconfig, tmp_path / "home")
    env = {**os.environ, "KVERT_HOME": str(tmp_path / "home")}
    parts = [Process("controller-manager", "--kubeconfig", kubeconfig, "--controllers", "*,kubelet-serving-approver",
                     "--cluster-signing-cert-file", str(pki / "ca.crt"),
                     "--cluster-signing-key-file", str(pki / "ca.key"), env=env),
             Process("scheduler", "--kubeconfig", kubeconfig, env=env),
             Process("node-agent", "--data-dir", str(api.data_dir), "--name", "worker-1", "--port", "0",
                     env=env)]
    try:
        for part in parts:
            part.wait_for_line("running against")
        wait_for(lambda: [n["metadata"]["name"] for n in k.json("get", "nodes")["items"]] == ["worker-1"])
        k("create", "-f", "-", input=json.dumps(dict(DEPLOYMENT, spec=dict(DEPLOYMENT["spec"], replicas=2))))
        wait_for(lambda: len(k.json("get", "pods")["items"]) == 2 and all(
            p["status"].get("phase") == "Running" and p["spec"].get("nodeName") == "worker-1"
            for p in k.json("get", "pods")["items"]), timeout=60)
        # the agent's serving certificate came through the CSR API: approved and issued
        csr = wait_for(lambda: next((c for c in k.json("get", "csr")["items"]
                                     if c["spec"]["signerName"] == "kubernetes.io/kubelet-serving"
                                     and c["status"].get("certificate")), None), timeout=30)
        assert csr["spec"]["username"] == "system:node:worker-1"
        row = next(line for line in k("get", "csr").stdout.splitlines() if line.startswith(csr["metadata"]["name"]))
        assert row.split()[-1] == "Approved,Issued"
        # logs and exec reach the agent through its kubelet endpoint, as kube-apiserver's do
        pod = k.json("get", "pods")["items"][0]["metadata"]["name"]
        assert k("logs", pod).stdout.startswith("started: image ")
        assert k("exec", pod, "--", "sh", "-c", "echo $HOSTNAME; exit 0").stdout == f"{pod}\n"
        assert k("exec", pod, "--", "sh", "-c", "exit 6", check=False).returncode == 6
        k("run", "web", "--image=nginx", "--port=80")
        wait_for(lambda: k.json("get", "pod", "web")["status"].get("phase") == "Running", timeout=30)
        local = free_port()
        forward = k.popen("port-forward", "pod/web", f"{local}:80")
        try:
            assert "Forwarding from" in forward.stdout.readline()
            with urllib.request.urlopen(f"http://127.0.0.1:{local}/", timeout=10) as answer:
                assert b"<h1>Welcome to nginx!</h1>" in answer.read()
        finally:
            forward.kill()
            forward.wait()
        # the node proxy paths Prometheus scrapes reach the agent's endpoint too
        cadvisor = k("get", "--raw", "/api/v1/nodes/worker-1/proxy/metrics/cadvisor").stdout
        assert 'container_memory_working_set_bytes{' in cadvisor and 'pod="web"' in cadvisor
        assert 'kubelet_node_name{node="worker-1"} 1' in k("get", "--raw", "/api/v1/nodes/worker-1/proxy/metrics").stdout
        # metrics.k8s.io: the API server scrapes the agent's /metrics/resource, as metrics-server
        usage = wait_for(lambda: k("top", "pod", "web", "--no-headers", check=False).stdout, timeout=30)
        assert usage.split()[0] == "web"
        node = k.json("get", "node", "worker-1")["status"]
        port = node["daemonEndpoints"]["kubeletEndpoint"]["Port"]
        assert port != 10250 and node["addresses"][0] == {"type": "InternalIP", "address": "127.0.0.1"}
        insecure = ssl.create_default_context()
        insecure.check_hostname, insecure.verify_mode = False, ssl.CERT_NONE
        for token, code in ((None, 401), ("not-a-token", 401)):
            request = urllib.request.Request(f"https://127.0.0.1:{port}/healthz")
            if token:
                request.add_header("Authorization", f"Bearer {token}")
            try:
                urllib.request.urlopen(request, context=insecure, timeout=10)
                raise AssertionError("the kubelet endpoint answered an unauthenticated request")
            except urllib.error.HTTPError as e:
                assert e.code == code
        # the agent runs as its own node identity, bootstrapped from the data directory
        lease = k.json("get", "lease", "worker-1", "-n", "kube-node-lease")
        assert lease["spec"]["holderIdentity"] == "worker-1"
        worker = Kubectl(k.binary, api.data_dir / "kubeconfigs" / "system-node-worker-1.kubeconfig",
                         tmp_path / "home-worker")
        assert worker("auth", "whoami", "-o", "jsonpath={.status.userInfo.username}").stdout == \
            "system:node:worker-1"
        holders = {lease: k.json("get", "lease", lease, "-n", "kube-system")["spec"]["holderIdentity"]
                   for lease in ("kube-scheduler", "kube-controller-manager")}
        assert all(holders.values())
        # a second agent may not take a live node's name
        clash = subprocess.run([sys.executable, "-m", "kvert.cli.main", "node-agent", "--kubeconfig",
                                kubeconfig, "--name", "worker-1", "--checkpoint-dir",
                                str(tmp_path / "elsewhere")], capture_output=True, text=True, timeout=60,
                               env=env)
        assert clash.returncode == 1
        assert "node worker-1 is run by another agent" in clash.stderr
    finally:
        results = [part.stop() for part in parts]
        api.stop()
    for code, output in results:
        assert code == 0, output
