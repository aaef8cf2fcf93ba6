"""`kvert up --runtime cgroupfs`: real processes in cgroups, driven by kubectl. A stress
container limited below its demand is CFS-throttled (cAdvisor's counters through the node
proxy, `kubectl top`), an in-place resize lifts the limit without a restart, a memory limit
below what the process holds is an OOM kill by the kernel, and `kubectl logs` shows what
the process printed."""

from __future__ import annotations

import json
import re
import secrets
import time
from pathlib import Path

import pytest

from kvert.kubelet.runtime.cgroupfs import unavailable

from .conftest import Kubectl, KvertUp, read_until, wait_for

pytestmark = pytest.mark.skipif(unavailable() is not None,
                                reason=f"needs root and a cgroup filesystem: {unavailable()}")


def stress_pod(name: str, usage: dict, resources: dict) -> str:
    return json.dumps({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "annotations": {"kvert.io/usage": json.dumps({name: usage})}},
        "spec": {"terminationGracePeriodSeconds": 1, "containers": [{
            "name": name, "image": "kvert/stress:latest", "resources": resources,
            "resizePolicy": [{"resourceName": "cpu", "restartPolicy": "NotRequired"},
                             {"resourceName": "memory", "restartPolicy": "NotRequired"}]}]}})


@pytest.fixture(scope="module")
def kubectl(kubectl_binary, tmp_path_factory):
    up = KvertUp(tmp_path_factory.mktemp("kvert"), args=(
        "--runtime", "cgroupfs", "--no-vpa", "--metrics-resolution", "2")).start()
    k = Kubectl(kubectl_binary, up.kubeconfig, tmp_path_factory.mktemp("home"))
    k.data_dir = up.data_dir         # what a pod must not reach
    yield k
    assert up.stop() == 0


def counter(kubectl, node: str, metric: str, pod: str) -> float | None:
    text = kubectl("get", "--raw", f"/api/v1/nodes/{node}/proxy/metrics/cadvisor").stdout
    m = re.search(rf'^{metric}{{[^}}]*pod="{pod}"[^}}]*}} (\S+)', text, re.M)
    return float(m.group(1)) if m else None


def throttled_rate(kubectl, node: str, pod: str, seconds: float = 3.0) -> float:
    """cAdvisor's container_cpu_cfs_throttled_seconds_total, per second of wall time."""
    start = counter(kubectl, node, "container_cpu_cfs_throttled_seconds_total", pod) or 0.0
    began = time.monotonic()
    time.sleep(seconds)
    end = counter(kubectl, node, "container_cpu_cfs_throttled_seconds_total", pod) or 0.0
    return (end - start) / (time.monotonic() - began)


def top_millicores(kubectl, pod: str) -> int | None:
    result = kubectl("top", "pod", pod, "--no-headers", check=False)
    if result.returncode != 0:
        return None
    cpu = result.stdout.split()[1]
    return int(cpu[:-1]) if cpu.endswith("m") else int(float(cpu) * 1000)


def container_status(kubectl, pod: str) -> dict:
    return (kubectl.json("get", "pod", pod)["status"].get("containerStatuses") or [{}])[0]


def test_throttling_resize_oom_and_logs(kubectl):
    node_obj = kubectl.json("get", "nodes")["items"][0]
    node = node_obj["metadata"]["name"]
    assert node_obj["status"]["nodeInfo"]["containerRuntimeVersion"].startswith("cgroupfs://cgroup-v")
    # a full core of demand under a 200m limit
    kubectl("create", "-f", "-", input=stress_pod("burn", {"cpu": "1", "memory": "40Mi"}, {
        "requests": {"cpu": "100m", "memory": "200Mi"}, "limits": {"cpu": "200m", "memory": "200Mi"}}))
    # holds 150Mi under a 64Mi limit: the kernel kills it, the agent restarts it
    kubectl("create", "-f", "-", input=stress_pod("hog", {"cpu": "10m", "memory": "150Mi"}, {
        "limits": {"cpu": "100m", "memory": "64Mi"}}))

    kubectl("run", "talker", "--image=busybox", "--restart=Never", "--",
            "sh", "-c", "for i in 1 2 3; do echo line $i; sleep 0.5; done; echo done >&2")

    wait_for(lambda: container_status(kubectl, "burn").get("state", {}).get("running"), timeout=30)
    # kubectl logs -f follows the process's output until it ends
    wait_for(lambda: container_status(kubectl, "talker").get("state", {}).get("running")
             or container_status(kubectl, "talker").get("state", {}).get("terminated"), timeout=20)
    assert kubectl("logs", "-f", "talker", timeout=20).stdout == "line 1\nline 2\nline 3\ndone\n"
    wait_for(lambda: (counter(kubectl, node, "container_cpu_cfs_throttled_periods_total", "burn") or 0) > 10,
             timeout=20)
    before = throttled_rate(kubectl, node, "burn")
    # up to 80% of each period waiting on a 200m quota; much less when other processes hold
    # the machine's two cores, as the whole test suite does (0.40, 0.199 and 0.097 measured
    # there, 0.255 alone): throttled at all is what this asserts, the resize's effect is
    # judged by the ratio below
    assert before > 0.03
    # metrics.k8s.io from two samples: near the 200m quota
    wait_for(lambda: 100 <= (top_millicores(kubectl, "burn") or 0) <= 250, timeout=30)
    assert "usage: cpu=1000m memory=40Mi" in kubectl("logs", "burn").stdout
    first_id = container_status(kubectl, "burn")["containerID"]
    assert first_id.startswith("cgroupfs://")

    kubectl("patch", "pod", "burn", "--subresource", "resize", "-p",
            json.dumps({"spec": {"containers": [{"name": "burn", "resources": {"limits": {"cpu": "1"}}}]}}))
    wait_for(lambda: container_status(kubectl, "burn").get("resources", {}).get("limits", {}).get("cpu") == "1",
             timeout=20)
    # throttled time per second of wall time, before (measured above at 200m) and after: a
    # core's demand under a one-CPU quota is throttled only by the generator's own upkeep
    after = throttled_rate(kubectl, node, "burn")
    print(f"throttled seconds per second: {before:.3f} at 200m, {after:.3f} at 1 CPU")
    assert after < before * 0.1, (before, after)
    status = container_status(kubectl, "burn")
    assert status["restartCount"] == 0 and status["containerID"] == first_id and status["state"].get("running")

    def oom_killed():
        st = container_status(kubectl, "hog")
        terminated = st.get("lastState", {}).get("terminated") or {}
        return st.get("restartCount", 0) >= 1 and terminated.get("reason") == "OOMKilled" and terminated
    terminated = wait_for(oom_killed, timeout=30)
    assert terminated["exitCode"] == 137
    assert "usage: cpu=10m memory=150Mi" in kubectl("logs", "hog", "--previous").stdout

    kubectl("delete", "pod", "burn", "hog", "talker", "--wait=true", timeout=60)


def test_exec_cp_and_port_forward_reach_the_real_process(kubectl, tmp_path):
    """The same kubectl commands as on simulated nodes (tests/e2e/test_streams.py), answered
    by real processes: exec runs in the container's cgroups, port-forward dials the port
    the process listens on (containers share the host's network), and cp moves files
    through the container's own tar (the host's filesystem: no images, no chroot)."""
    import sys
    import urllib.request

    from .conftest import free_port
    port = free_port()
    served = tmp_path / "served"
    served.mkdir()
    (served / "index.html").write_text("served by a real process\n")
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "httpd"},
           "spec": {"terminationGracePeriodSeconds": 1, "containers": [{
               "name": "httpd", "image": "python", "workingDir": str(served),
               "command": [sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1"],
               "ports": [{"containerPort": port}]}]}}
    kubectl("create", "-f", "-", input=json.dumps(pod))
    wait_for(lambda: container_status(kubectl, "httpd").get("state", {}).get("running"), timeout=30)
    assert kubectl("exec", "httpd", "--", "sh", "-c", "echo hi").stdout == "hi\n"
    # the exec'd process sits in the container's cgroup
    cgroup = kubectl("exec", "httpd", "--", "cat", "/proc/self/cgroup").stdout
    assert "kubepods" in cgroup
    assert kubectl("exec", "-i", "httpd", "--", "cat", input="echoed\n").stdout == "echoed\n"
    # kubectl exec -it on a terminal: the process gets a real one (a pty) in the container
    import os
    import pty
    pid, fd = pty.fork()
    if pid == 0:
        os.execve(kubectl.binary, [kubectl.binary, "exec", "-it", "httpd", "--", "sh", "-c",
                                   "echo hi; tty; exit 4"], kubectl.env)
    try:
        seen = read_until(fd, b"exit code 4", timeout=20)
    finally:
        _, status = os.waitpid(pid, 0)
        os.close(fd)
    assert b"hi\r\n/dev/pts/" in seen and os.waitstatus_to_exitcode(status) == 4
    failed = kubectl("exec", "httpd", "--", "sh", "-c", "exit 7", check=False)
    assert failed.returncode == 7
    (tmp_path / "up.txt").write_text("copied up\n")
    kubectl("cp", str(tmp_path / "up.txt"), f"httpd:{served}/up.txt")
    assert (served / "up.txt").read_text() == "copied up\n"
    kubectl("cp", f"httpd:{served}/index.html", str(tmp_path / "down.html"))
    assert (tmp_path / "down.html").read_text() == "served by a real process\n"
    # kubectl ends a port-forward whose dial is refused: wait until the server listens
    probe = f"import socket; socket.create_connection(('127.0.0.1', {port}))"
    wait_for(lambda: kubectl("exec", "httpd", "--", sys.executable, "-c", probe,
                             check=False).returncode == 0, timeout=20)
    local = free_port()
    forward = kubectl.popen("port-forward", "pod/httpd", f"{local}:{port}")
    try:
        assert "Forwarding from 127.0.0.1" in forward.stdout.readline()
        def fetch():
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{local}/index.html", timeout=5) as answer:
                    return answer.read()
            except OSError:
                return None
        assert wait_for(fetch, timeout=20) == b"served by a real process\n"
    finally:
        forward.kill()
        forward.wait()


def test_a_job_of_echo_hi_completes_and_logs_hi(kubectl):
    # the kubectl book's example, as on the simulated runtime (tests/e2e/test_programs.py)
    kubectl("create", "job", "hi", "--image=busybox", "--", "echo", "hi")
    kubectl("wait", "--for=condition=complete", "job/hi", "--timeout=60s")
    assert kubectl("logs", "job/hi").stdout == "hi\n"
    pod = kubectl.json("get", "pods", "-l", "job-name=hi")["items"][0]
    terminated = pod["status"]["containerStatuses"][0]["state"]["terminated"]
    assert (pod["status"]["phase"], terminated["exitCode"], terminated["reason"]) == ("Succeeded", 0, "Completed")


def test_kubectl_debug_runs_a_process_in_the_pod_and_attaches(kubectl):
    kubectl("run", "debuggee", "--image=busybox", "--restart=Never", "--", "sleep", "3600")
    wait_for(lambda: kubectl.json("get", "pod", "debuggee")["status"].get("phase") == "Running", timeout=30)
    before = kubectl.json("get", "pod", "debuggee")["status"]["containerStatuses"][0]["containerID"]
    result = kubectl("debug", "debuggee", "-i", "--image=busybox", "--container=dbg", "--",
                     "sh", "-c", "read name; echo hello $name; cat /proc/self/cgroup", input="kvert\n", timeout=60)
    assert "hello kvert" in result.stdout
    # a process of the pod: in the pod's cgroup (its id in the path), beside the pod's container
    uid = kubectl.json("get", "pod", "debuggee")["metadata"]["uid"]
    assert uid.replace("-", "_") in result.stdout or uid in result.stdout
    status = wait_for(lambda: next((s for s in kubectl.json("get", "pod", "debuggee")["status"].get(
        "ephemeralContainerStatuses") or [] if s["state"].get("terminated")), None), timeout=30)
    assert (status["name"], status["state"]["terminated"]["exitCode"]) == ("dbg", 0)
    app = kubectl.json("get", "pod", "debuggee")["status"]["containerStatuses"][0]
    assert (app["containerID"], app["restartCount"]) == (before, 0)


def _processes_with(marker: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and marker.encode() in (entry / "cmdline").read_bytes():
                found.append(int(entry.name))
        except OSError:
            continue
    return found


def test_a_pod_cannot_reach_beyond_itself(kubectl):
    # issue 27's attack through kubectl: a pod read the cluster-admin token from the data
    # directory, raised its own memory limit and left a process behind that outlived it
    data = kubectl.data_dir
    marker = str(800000 + secrets.randbelow(99999))
    script = (f"id -u; cat {data}/tokens.csv {data}/pki/ca.key {data}/kvert.db; echo read-done; "
              "path=$(grep -E '^0::|:memory:' /proc/self/cgroup | head -1 | cut -d: -f3); "
              "for f in /sys/fs/cgroup$path/memory.max /sys/fs/cgroup/memory$path/memory.limit_in_bytes; do "
              "test -f $f && (echo 4294967296 > $f && echo raised); done; "
              f"(setsid nohup sleep {marker} >/dev/null 2>&1 &) & echo spawned; exec sleep {marker}1")
    kubectl("create", "-f", "-", input=json.dumps({
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "intruder"},
        "spec": {"terminationGracePeriodSeconds": 1, "securityContext": {"runAsUser": 1000, "runAsNonRoot": True},
                 "containers": [{"name": "c", "image": "busybox", "command": ["sh", "-c", script],
                                 "resources": {"limits": {"memory": "64Mi"}}}]}}))
    log = wait_for(lambda: (lambda out: out if "spawned" in out else None)(
        kubectl("logs", "intruder", check=False).stdout), timeout=30)
    lines = log.splitlines()
    assert lines[0] == "1000"
    admin_token = (data / "tokens.csv").read_text().split(",")[0]
    assert admin_token not in log and "PRIVATE KEY" not in log and "raised" not in log
    assert "read-done" in lines
    wait_for(lambda: len(_processes_with(f"sleep\0{marker}")) >= 2, timeout=20)
    kubectl("delete", "pod", "intruder", "--wait=true", "--timeout=60s")
    assert wait_for(lambda: _processes_with(f"sleep\0{marker}") == [], timeout=20)


def test_run_as_non_root_with_uid_0_is_refused_as_the_kubelet_does(kubectl):
    kubectl("create", "-f", "-", input=json.dumps({
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "rooty"},
        "spec": {"securityContext": {"runAsNonRoot": True, "runAsUser": 0},
                 "containers": [{"name": "c", "image": "busybox", "command": ["sleep", "60"]}]}}))
    waiting = wait_for(lambda: (kubectl.json("get", "pod", "rooty")["status"].get("containerStatuses") or [{}])[0]
                       .get("state", {}).get("waiting", {}).get("reason") == "CreateContainerConfigError"
                       and kubectl.json("get", "pod", "rooty")["status"]["containerStatuses"][0]["state"]["waiting"],
                       timeout=30)
    # pkg/kubelet/kuberuntime/security_context_others.go verifyRunAsNonRoot
    assert waiting["message"] == "container's runAsUser breaks non-root policy (pod: \"rooty_default(" + \
        kubectl.json("get", "pod", "rooty")["metadata"]["uid"] + ')", container: c)'
    kubectl("delete", "pod", "rooty", "--wait=false")
