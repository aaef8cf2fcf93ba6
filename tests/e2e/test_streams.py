"""`kubectl exec`, `cp`, `port-forward` and `attach` against `kvert up`'s simulated nodes, over
both transports kubectl 1.37 speaks: WebSocket first (remotecommand v5, SPDY tunnelled in a
WebSocket for port-forward), SPDY/3.1 when told not to use WebSockets
(KUBECTL_REMOTE_COMMAND_WEBSOCKETS / KUBECTL_PORT_FORWARD_WEBSOCKETS=false, the fallback
path). Exit codes: kubectl exits with the remote command's code and prints "command
terminated with exit code N" (k8s.io/kubectl/pkg/cmd/exec, CodeExitError); a missing
executable is the runtime's error, not an exit code."""

from __future__ import annotations

import copy
import json
import os
import pty
import urllib.error
import urllib.request

import pytest

from .conftest import free_port, read_until, wait_for

FALLBACK = {"KUBECTL_REMOTE_COMMAND_WEBSOCKETS": "false", "KUBECTL_PORT_FORWARD_WEBSOCKETS": "false"}


@pytest.fixture(scope="module", params=["websocket", "spdy"])
def k(request, kubectl):
    """kubectl speaking WebSocket (its default) or SPDY (its fallback)."""
    if request.param == "websocket":
        return kubectl
    spdy = copy.copy(kubectl)
    spdy.env = {**kubectl.env, **FALLBACK}
    return spdy


@pytest.fixture(scope="module")
def web(kubectl):
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web"},
           "spec": {"containers": [{"name": "web", "image": "nginx",
                                    "ports": [{"containerPort": 80}]}]}}
    kubectl("create", "-f", "-", input=json.dumps(pod))
    wait_for(lambda: kubectl.json("get", "pod", "web")["status"].get("phase") == "Running")
    return "web"


def test_exec_output_and_exit_codes(k, web):
    ran = k("exec", web, "--", "sh", "-c", "echo hi; echo oops >&2; echo $HOSTNAME")
    assert ran.stdout == "hi\nweb\n" and ran.stderr == "oops\n"
    failed = k("exec", web, "--", "sh", "-c", "exit 3", check=False)
    assert failed.returncode == 3
    assert "command terminated with exit code 3" in failed.stderr
    missing = k("exec", web, "--", "no-such-binary", check=False)
    assert missing.returncode != 0 and "executable file not found" in missing.stderr


def test_exec_with_stdin(k, web):
    assert k("exec", "-i", web, "--", "cat", input="line one\nline two\n").stdout == "line one\nline two\n"
    assert k("exec", "-i", web, "--", "wc", "-l", input="a\nb\nc\n").stdout == "3\n"


def test_exec_refusals(kubectl, web):
    wrong = kubectl("exec", web, "-c", "nope", "--", "true", check=False)
    # pod.ExecLocation's message (pkg/registry/core/pod/strategy.go)
    assert "container nope is not valid for pod web" in wrong.stderr


def test_cp_both_ways(k, web, tmp_path):
    src = tmp_path / "notes.txt"
    src.write_text("copied by kubectl cp\n")
    k("cp", str(src), f"{web}:/tmp/notes.txt")
    assert k("exec", web, "--", "cat", "/tmp/notes.txt").stdout == "copied by kubectl cp\n"
    tree = tmp_path / "tree" / "sub"
    tree.mkdir(parents=True)
    (tree / "leaf").write_text("leaf\n")
    k("cp", str(tmp_path / "tree"), f"{web}:/tmp/tree")
    back = tmp_path / "back"
    k("cp", f"{web}:/tmp/tree", str(back))
    assert (back / "sub" / "leaf").read_text() == "leaf\n"
    k("cp", f"{web}:/tmp/notes.txt", str(tmp_path / "again.txt"))
    assert (tmp_path / "again.txt").read_text() == "copied by kubectl cp\n"


def test_port_forward(k, web):
    # a simulated nginx serves its web root from the container's files
    k("exec", web, "--", "sh", "-c", "echo served > /usr/share/nginx/html/note.txt")
    port = free_port()
    forward = k.popen("port-forward", f"pod/{web}", f"{port}:80")
    try:
        assert "Forwarding from 127.0.0.1" in forward.stdout.readline()
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=10) as answer:
            assert answer.status == 200 and b"<h1>Welcome to nginx!</h1>" in answer.read()
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/note.txt", timeout=10) as answer:
            assert answer.read() == b"served\n"
        with pytest.raises(urllib.error.HTTPError) as missing:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/missing", timeout=10)
        assert missing.value.code == 404
    finally:
        forward.kill()
        forward.wait()


def test_port_forward_to_a_closed_port_reports_the_refusal(kubectl, web):
    port = free_port()
    forward = kubectl.popen("port-forward", f"pod/{web}", f"{port}:81")
    try:
        forward.stdout.readline()
        with pytest.raises(OSError):
            urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=10).read()
        # kubectl 1.31+ ends a port-forward whose connection failed, after logging the error
        output = forward.communicate(timeout=20)[0]
        assert "connection refused" in output and "error forwarding port 81 to pod web" in output
    finally:
        if forward.poll() is None:
            forward.kill()
            forward.wait()


def test_exec_interactive_terminal(k, web):
    pid, fd = pty.fork()
    if pid == 0:        # the child: kubectl on a terminal, as a user types at it
        os.execve(k.binary, [k.binary, "exec", "-it", web, "--", "sh"], k.env)
    try:
        assert read_until(fd, b"# ").endswith(b"# ")
        os.write(fd, b"echo hello $HOSTNAME\r")
        assert b"hello web\r\n" in read_until(fd, b"hello web\r\n# ")
        os.write(fd, b"exit 5\r")
        read_until(fd, b"exit code 5")
    finally:
        _, status = os.waitpid(pid, 0)
        os.close(fd)
    assert os.waitstatus_to_exitcode(status) == 5


def test_official_client_stream_and_port_forward(cluster, web):
    kubernetes = pytest.importorskip("kubernetes")
    from kubernetes.stream import portforward, stream
    api = kubernetes.config.new_client_from_config(config_file=str(cluster.kubeconfig))
    v1 = kubernetes.client.CoreV1Api(api)
    out = stream(v1.connect_get_namespaced_pod_exec, web, "default",
                 command=["sh", "-c", "echo from-python"], stderr=True, stdin=False, stdout=True, tty=False)
    assert out == "from-python\n"
    forward = portforward(v1.connect_get_namespaced_pod_portforward, web, "default", ports="80")
    sock = forward.socket(80)
    sock.setblocking(True)
    sock.sendall(b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    answer = b""
    while chunk := sock.recv(4096):
        answer += chunk
    sock.close()
    assert answer.startswith(b"HTTP/1.1 200 OK") and b"<h1>Welcome to nginx!</h1>" in answer
    forward.close()


def test_the_pod_ip_comes_from_its_nodes_cidr(kubectl, web):
    import ipaddress
    pod = kubectl.json("get", "pod", web)
    node = kubectl.json("get", "node", pod["spec"]["nodeName"])
    # node IPAM as kind runs it: --cluster-cidr=10.244.0.0/16 --node-cidr-mask-size=24
    cidr = ipaddress.ip_network(node["spec"]["podCIDR"])
    assert cidr.prefixlen == 24 and cidr.subnet_of(ipaddress.ip_network("10.244.0.0/16"))
    assert node["spec"]["podCIDRs"] == [str(cidr)]
    assert ipaddress.ip_address(pod["status"]["podIP"]) in cidr
