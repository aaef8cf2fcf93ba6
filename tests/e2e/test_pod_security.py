"""Pod Security Admission through real kubectl against ``kvert up`` (issue 27). Expected
messages are upstream's (staging/src/k8s.io/pod-security-admission/admission/admission.go
and the policy checks' forbidden reasons, e.g. policy/check_allowPrivilegeEscalation.go):
a pod violating the namespace's ``enforce`` level is refused with 403 'violates PodSecurity
"restricted:latest": ...'; the ``warn`` level admits it with a 'Warning: would violate
PodSecurity ...' that kubectl prints; labelling a namespace whose pods violate the new level
warns 'existing pods in namespace ... violate the new PodSecurity enforce level'."""

from __future__ import annotations

import json

RESTRICTED_CONTAINER = {
    "name": "c", "image": "busybox", "command": ["sleep", "3600"],
    "securityContext": {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]},
                        "runAsNonRoot": True, "runAsUser": 1000,
                        "seccompProfile": {"type": "RuntimeDefault"}}}


def _pod(name: str, namespace: str, container: dict, **spec) -> str:
    return json.dumps({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": namespace},
                       "spec": {"containers": [container], **spec}})


def test_enforce_refuses_a_pod_that_violates_the_level(kubectl):
    kubectl("create", "namespace", "locked")
    kubectl("label", "namespace", "locked", "pod-security.kubernetes.io/enforce=restricted")
    result = kubectl("run", "loose", "-n", "locked", "--image=busybox", "--", "sleep", "3600", check=False)
    assert result.returncode != 0
    assert 'pods "loose" is forbidden: violates PodSecurity "restricted:latest": ' in result.stderr
    assert 'allowPrivilegeEscalation != false (container "loose" must set ' \
           'securityContext.allowPrivilegeEscalation=false)' in result.stderr
    assert 'unrestricted capabilities (container "loose" must set securityContext.capabilities.drop=["ALL"])' \
        in result.stderr
    assert kubectl.json("get", "pods", "-n", "locked")["items"] == []
    # a pod that meets the level is admitted
    kubectl("create", "-f", "-", input=_pod("tight", "locked", RESTRICTED_CONTAINER))
    assert kubectl.json("get", "pod", "tight", "-n", "locked")["metadata"]["name"] == "tight"


def test_warn_admits_with_a_warning_kubectl_prints(kubectl):
    kubectl("create", "namespace", "watched")
    kubectl("label", "namespace", "watched", "pod-security.kubernetes.io/warn=baseline")
    result = kubectl("create", "-f", "-", input=_pod("hosty", "watched", {"name": "c", "image": "busybox",
                                                                          "command": ["sleep", "3600"]},
                                                     hostNetwork=True))
    assert 'Warning: would violate PodSecurity "baseline:latest": host namespaces (hostNetwork=true)' \
        in result.stderr
    assert kubectl.json("get", "pod", "hosty", "-n", "watched")["spec"]["hostNetwork"] is True


def test_labelling_a_namespace_warns_of_its_violating_pods(kubectl):
    kubectl("create", "namespace", "later")
    kubectl("create", "-f", "-", input=_pod("privileged", "later", {
        "name": "c", "image": "busybox", "command": ["sleep", "3600"], "securityContext": {"privileged": True}}))
    result = kubectl("label", "namespace", "later", "pod-security.kubernetes.io/enforce=baseline")
    assert 'Warning: existing pods in namespace "later" violate the new PodSecurity enforce level ' \
           '"baseline:latest"' in result.stderr
    assert 'Warning: privileged: privileged' in result.stderr
    # the pod already running is left alone
    assert kubectl.json("get", "pod", "privileged", "-n", "later")["metadata"]["name"] == "privileged"
