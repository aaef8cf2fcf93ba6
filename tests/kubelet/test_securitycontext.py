"""The kubelet's securityContext handling (kvert.kubelet.securitycontext): upstream's
runAsNonRoot vectors and messages, the effective context (container over pod), what the
runtime is given; and the attack of issue 27, a runAsNonRoot pod whose image runs as root,
now waiting with CreateContainerConfigError instead of running as uid 0."""

from __future__ import annotations

import pytest

from kvert.clock import VirtualClock
from kvert.kubelet.runtime.base import LinuxContainerSecurity
from kvert.kubelet.runtime.sim import SimRuntime
from kvert.kubelet.securitycontext import SecurityContextError, effective, linux_security, verify_run_as_non_root

from tests.kubelet.test_agent_support import (cluster, container, cstatus, events, pod, run_pod, running,
                                              start_agent, stop, wait_for)

# TestVerifyRunAsNonRoot (pkg/kubelet/kuberuntime/security_context_others_test.go): its pod
# (uid 12345678, name bar, namespace new; container foo) and its cases as
# (container securityContext, image uid, image username, fails)
ROOT, ANY_USER = 0, 1000
VERIFY_CASES = [
    ("SecurityContext is not set", None, ROOT, "", False),
    ("RunAsUser is non-root and RunAsNonRoot is true", {"runAsNonRoot": True, "runAsUser": ANY_USER}, None, "",
     False),
    ("RunAsNonRoot is not set", {"runAsUser": ROOT}, ROOT, "", False),
    ("RunAsNonRoot is false (image user is root)", {"runAsNonRoot": False}, ROOT, "", False),
    ("RunAsNonRoot is false (RunAsUser is root)", {"runAsNonRoot": False, "runAsUser": ROOT}, ROOT, "", False),
    ("container's RunAsUser is root and RunAsNonRoot is true", {"runAsNonRoot": True, "runAsUser": ROOT}, ROOT,
     "", True),
    ("image's user is root and RunAsNonRoot is true", {"runAsNonRoot": True}, ROOT, "", True),
    ("image's username is set and RunAsNonRoot is true", {"runAsNonRoot": True}, None, "test", True),
    ("image's user is non-root and RunAsNonRoot is true", {"runAsNonRoot": True}, ANY_USER, "", False),
    ("container's user and image's user aren't set and RunAsNonRoot is true", {"runAsNonRoot": True}, None, "",
     False),
]
UPSTREAM_POD = {"metadata": {"uid": "12345678", "name": "bar", "namespace": "new"},
                "spec": {"containers": [{"name": "foo", "image": "busybox"}]}}


@pytest.mark.parametrize(("desc", "sc", "uid", "username", "fails"), VERIFY_CASES, ids=[c[0] for c in VERIFY_CASES])
def test_verify_run_as_non_root_as_upstream(desc, sc, uid, username, fails):
    c = {"name": "foo", "image": "busybox", **({"securityContext": sc} if sc is not None else {})}
    if fails:
        with pytest.raises(SecurityContextError):
            verify_run_as_non_root(UPSTREAM_POD, c, uid, username)
    else:
        verify_run_as_non_root(UPSTREAM_POD, c, uid, username)


def test_the_messages_are_upstreams():
    # verifyRunAsNonRoot's texts, format.Pod quoted (%q) as name_namespace(uid)
    where = '(pod: "bar_new(12345678)", container: foo)'
    cases = [({"runAsNonRoot": True}, 0, "", f"container has runAsNonRoot and image will run as root {where}"),
             ({"runAsNonRoot": True, "runAsUser": 0}, 0, "", f"container's runAsUser breaks non-root policy {where}"),
             ({"runAsNonRoot": True}, None, "nginx",
              f"container has runAsNonRoot and image has non-numeric user (nginx), cannot verify user is non-root "
              f"{where}")]
    for sc, uid, username, message in cases:
        with pytest.raises(SecurityContextError) as e:
            verify_run_as_non_root(UPSTREAM_POD, {"name": "foo", "securityContext": sc}, uid, username)
        assert str(e.value) == message


def test_an_image_runs_as_root_here_so_run_as_non_root_needs_a_user():
    # getImageUser: an image without a user is root; images here name none
    p = {**UPSTREAM_POD, "spec": {"securityContext": {"runAsNonRoot": True}}}
    with pytest.raises(SecurityContextError, match="image will run as root"):
        verify_run_as_non_root(p, {"name": "foo"})
    verify_run_as_non_root({**p, "spec": {"securityContext": {"runAsNonRoot": True, "runAsUser": 1000}}},
                           {"name": "foo"})


def test_the_container_context_wins_over_the_pods():
    # DetermineEffectiveSecurityContext; the doc's security-context-2 example: pod runAsUser
    # 1000, container runAsUser 2000 -> the container's processes run as 2000
    p = {"spec": {"securityContext": {"runAsUser": 1000, "runAsGroup": 3000, "runAsNonRoot": True,
                                      "fsGroup": 2000, "supplementalGroups": [4000]}}}
    c = {"name": "c", "securityContext": {"runAsUser": 2000}}
    assert effective(p, c) == {"runAsUser": 2000, "runAsGroup": 3000, "runAsNonRoot": True}
    # fsGroup, then supplementalGroups (determineEffectiveSecurityContext's order)
    assert linux_security(p, c) == LinuxContainerSecurity(run_as_user=2000, run_as_group=3000,
                                                          supplemental_groups=(2000, 4000), no_new_privs=True)


def test_no_new_privs_unless_privileged_or_escalation_allowed():
    # kvert's choice (upstream's AddNoNewPrivileges sets it only for allowPrivilegeEscalation: false)
    def nnp(sc):
        return linux_security({"spec": {}}, {"name": "c", "securityContext": sc}).no_new_privs
    assert nnp({}) and nnp({"allowPrivilegeEscalation": False})
    assert not nnp({"allowPrivilegeEscalation": True})
    assert not nnp({"privileged": True})


def test_a_run_as_non_root_pod_of_a_root_image_waits_with_create_container_config_error():
    clock = VirtualClock()

    async def main():
        client = await cluster(clock)
        runtime = SimRuntime(clock)
        agent, task = await start_agent(client, clock, runtime)
        await run_pod(client, pod("rootless", container("c"), securityContext={"runAsNonRoot": True}))
        await run_pod(client, pod("user", container("c"),
                                  securityContext={"runAsNonRoot": True, "runAsUser": 1000}))

        async def waiting():
            p = await client.get("pods", "rootless", "default")
            return p if (cstatus(p).get("state") or {}).get("waiting", {}).get("reason") else None
        p = await wait_for(clock, waiting)
        uid = p["metadata"]["uid"]
        assert cstatus(p)["state"]["waiting"] == {
            "reason": "CreateContainerConfigError",
            "message": f'container has runAsNonRoot and image will run as root (pod: "rootless_default({uid})", '
                       f"container: c)"}
        assert not [c for c in runtime._containers.values() if c.config.name == "c" and c.sandbox_id ==
                    agent.pods[uid].sandbox_id]
        failed = await events(client, "rootless", "Failed")
        assert failed and failed[0]["message"].startswith("Error: container has runAsNonRoot")
        # with a user it runs, and the runtime is told whom as
        await running(client, clock, "user")
        configs = [c.config for c in runtime._containers.values()]
        assert [c.security.run_as_user for c in configs] == [1000]
        await stop(agent, task)

    clock.run(main())
