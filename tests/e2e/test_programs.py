"""Simulated containers run their programs (issue 27), with real kubectl against
``kvert up``: the attack that failed was "a Job of ``echo hi`` never completes, a pod's
log is kvert's runtime line, a test's own echo server behind port-forward never answers".

Expected values are upstream's: a container exiting 0 is ``terminated`` with reason
``Completed``, non-zero ``Error`` with its exitCode (the kubelet's
toKubeContainerState / containerd's reasons); a ``Never`` pod whose container failed is
``Failed``; ``OnFailure`` restarts it (pkg/kubelet/kuberuntime computePodActions); a
failed liveness probe kills the container and the kubelet restarts it ("Container c
failed liveness probe, will be restarted", pkg/kubelet/kuberuntime/kuberuntime_manager.go);
``kubectl create job NAME --image=busybox -- echo hi`` is the kubectl book's example and
``kubectl logs job/NAME`` prints the pod's output.
"""

from __future__ import annotations

import json
import urllib.request

from .conftest import free_port, wait_for


def _pod(name: str, command: list[str], policy: str = "Never", **container) -> str:
    return json.dumps({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
                       "spec": {"restartPolicy": policy, "terminationGracePeriodSeconds": 1,
                                "containers": [{"name": "c", "image": "busybox", "command": command,
                                                **container}]}})


def _status(kubectl, pod: str) -> dict:
    return (kubectl.json("get", "pod", pod)["status"].get("containerStatuses") or [{}])[0]


def test_a_job_of_echo_hi_completes_and_logs_hi(kubectl):
    kubectl("create", "job", "hi", "--image=busybox", "--", "echo", "hi")
    kubectl("wait", "--for=condition=complete", "job/hi", "--timeout=60s")
    assert kubectl("logs", "job/hi").stdout == "hi\n"
    pod = kubectl.json("get", "pods", "-l", "job-name=hi")["items"][0]
    assert pod["status"]["phase"] == "Succeeded"
    terminated = pod["status"]["containerStatuses"][0]["state"]["terminated"]
    assert (terminated["exitCode"], terminated["reason"]) == (0, "Completed")
    assert terminated["startedAt"] <= terminated["finishedAt"]


def test_exit_3_with_restart_policy_never_fails_the_pod(kubectl):
    kubectl("create", "-f", "-", input=_pod("three", ["sh", "-c", "echo about to fail; exit 3"]))
    wait_for(lambda: kubectl.json("get", "pod", "three")["status"].get("phase") == "Failed", timeout=30)
    terminated = _status(kubectl, "three")["state"]["terminated"]
    assert (terminated["exitCode"], terminated["reason"]) == (3, "Error")
    assert kubectl("logs", "three").stdout == "about to fail\n"


def test_on_failure_restarts_the_container(kubectl):
    kubectl("create", "-f", "-", input=_pod("retry", ["sh", "-c", "exit 1"], policy="OnFailure"))
    wait_for(lambda: _status(kubectl, "retry").get("restartCount", 0) >= 1, timeout=30)
    last = _status(kubectl, "retry")["lastState"]["terminated"]
    assert (last["exitCode"], last["reason"]) == (1, "Error")
    assert kubectl.json("get", "pod", "retry")["status"]["phase"] != "Failed"


def test_a_failing_exec_liveness_probe_restarts_the_container(kubectl):
    probe = {"exec": {"command": ["cat", "/tmp/healthy"]}, "periodSeconds": 1, "failureThreshold": 1}
    kubectl("create", "-f", "-", input=_pod(
        "sick", ["sh", "-c", "touch /tmp/healthy; sleep 2; rm /tmp/healthy; sleep 600"],
        policy="Always", livenessProbe=probe))
    wait_for(lambda: _status(kubectl, "sick").get("restartCount", 0) >= 1, timeout=40)
    events = kubectl("get", "events", "--field-selector", "involvedObject.name=sick").stdout
    assert "Liveness probe failed" in events


def test_an_echo_server_answers_port_forward(kubectl):
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "echo"},
           "spec": {"containers": [{"name": "c", "image": "registry.k8s.io/e2e-test-images/agnhost:2.52",
                                    "args": ["netexec", "--http-port=8080"]}]}}
    kubectl("create", "-f", "-", input=json.dumps(pod))
    wait_for(lambda: kubectl.json("get", "pod", "echo")["status"].get("phase") == "Running")
    port = free_port()
    forward = kubectl.popen("port-forward", "pod/echo", f"{port}:8080")
    try:
        assert "Forwarding from 127.0.0.1" in forward.stdout.readline()
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/echo?msg=ping", timeout=10) as answer:
            assert answer.status == 200 and answer.read() == b"ping"
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/hostname", timeout=10) as answer:
            assert answer.read() == b"echo"
    finally:
        forward.kill()
        forward.wait()


def test_nc_listening_answers_port_forward(kubectl):
    kubectl("create", "-f", "-", input=_pod("nc", ["sh", "-c", "nc -lk -p 9000 -e cat"], policy="Always"))
    wait_for(lambda: kubectl.json("get", "pod", "nc")["status"].get("phase") == "Running")
    import socket
    port = free_port()
    forward = kubectl.popen("port-forward", "pod/nc", f"{port}:9000")
    try:
        assert "Forwarding from 127.0.0.1" in forward.stdout.readline()
        with socket.create_connection(("127.0.0.1", port), timeout=10) as conn:
            conn.sendall(b"hello nc\n")
            conn.shutdown(socket.SHUT_WR)
            answer = b""
            while chunk := conn.recv(4096):
                answer += chunk
        assert answer == b"hello nc\n"
    finally:
        forward.kill()
        forward.wait()
