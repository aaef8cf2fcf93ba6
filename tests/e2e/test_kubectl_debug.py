"""``kubectl debug`` against ``kvert up`` (issue 27): kubectl adds an ephemeral container
through ``pods/ephemeralcontainers`` (a strategic merge patch), the node agent runs it in
the pod beside the pod's own containers, which are left as they were, and ``-i`` attaches
to it. Expected values are upstream's: the ephemeral container's status is in
``status.ephemeralContainerStatuses``, a container exiting 0 is ``terminated`` with reason
``Completed``, it is never ready and never restarted; the API refuses removing or changing
one ("existing ephemeral containers ... may not be removed", ValidatePodEphemeralContainersUpdate)
and a port on one ("cannot be set for an Ephemeral Container", validateEphemeralContainers).
"""

from __future__ import annotations

import json

import pytest

from .conftest import wait_for


def _ephemeral_status(kubectl, pod: str, name: str) -> dict:
    statuses = kubectl.json("get", "pod", pod)["status"].get("ephemeralContainerStatuses") or []
    return next((s for s in statuses if s["name"] == name), {})


@pytest.fixture(scope="module")
def target(kubectl):
    kubectl("run", "target", "--image=busybox", "--restart=Never", "--", "sleep", "3600")
    wait_for(lambda: kubectl.json("get", "pod", "target")["status"].get("phase") == "Running", timeout=30)
    return kubectl.json("get", "pod", "target")["status"]["containerStatuses"][0]


def test_debug_adds_an_ephemeral_container_that_runs_beside_the_pods_own(kubectl, target):
    kubectl("debug", "target", "--image=busybox", "--container=dbg", "--target=target", "--",
            "sh", "-c", "echo debugged; hostname")
    pod = kubectl.json("get", "pod", "target")
    (added,) = pod["spec"]["ephemeralContainers"]
    assert (added["name"], added["image"], added["targetContainerName"]) == ("dbg", "busybox", "target")
    terminated = wait_for(lambda: _ephemeral_status(kubectl, "target", "dbg").get("state", {}).get("terminated"),
                          timeout=30)
    assert (terminated["exitCode"], terminated["reason"]) == (0, "Completed")
    status = _ephemeral_status(kubectl, "target", "dbg")
    assert status["ready"] is False and status["restartCount"] == 0
    # the pod's hostname is the debugger's too: it runs in the pod
    assert kubectl("logs", "target", "-c", "dbg").stdout == "debugged\ntarget\n"
    # the pod's own container untouched: same container, not restarted, the pod still Running
    after = kubectl.json("get", "pod", "target")
    app = after["status"]["containerStatuses"][0]
    assert (app["containerID"], app["restartCount"]) == (target["containerID"], 0)
    assert after["status"]["phase"] == "Running"


def test_debug_interactive_attaches_to_the_new_container(kubectl, target):
    result = kubectl("debug", "target", "-i", "--image=busybox", "--container=talk", "--",
                     "sh", "-c", "read name; echo hello $name", input="kvert\n", timeout=60)
    assert "hello kvert" in result.stdout
    terminated = wait_for(lambda: _ephemeral_status(kubectl, "target", "talk").get("state", {}).get("terminated"),
                          timeout=30)
    assert terminated["exitCode"] == 0


def test_an_ephemeral_container_may_not_be_removed_or_take_ports(kubectl, target):
    wait_for(lambda: _ephemeral_status(kubectl, "target", "dbg"), timeout=30)
    pod = kubectl.json("get", "pod", "target")
    removed = dict(pod, spec={**pod["spec"], "ephemeralContainers": []})
    result = kubectl("replace", "--raw", "/api/v1/namespaces/default/pods/target/ephemeralcontainers",
                     "-f", "-", input=json.dumps(removed), check=False)
    assert result.returncode != 0
    assert 'spec.ephemeralContainers: Forbidden: existing ephemeral containers "dbg" may not be removed' in result.stderr
    patch = {"spec": {"ephemeralContainers": [{"name": "porty", "image": "busybox",
                                               "ports": [{"containerPort": 80}]}]}}
    result = kubectl("patch", "pod", "target", "--subresource=ephemeralcontainers", "-p", json.dumps(patch),
                     check=False)
    assert result.returncode != 0
    # a strategic merge patch without $setElementOrder puts the new item first (kubectl debug
    # sends the order; kubectl patch -p does not)
    assert "spec.ephemeralContainers[0].ports: Forbidden: cannot be set for an Ephemeral Container" \
        in result.stderr
    names = [c["name"] for c in kubectl.json("get", "pod", "target")["spec"]["ephemeralContainers"]]
    assert "porty" not in names
