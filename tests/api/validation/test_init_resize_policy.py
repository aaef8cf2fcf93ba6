"""1.36: ``RestartContainer`` as the resize policy of a non-sidecar init container is refused.

upstream: kubernetes#137458 ("validate initContainer restart policy against container resize
policy", validateInitContainers, ratcheting); a 1.36 server answers
``spec.initContainers[0].resizePolicy[0].restartPolicy: Invalid value: "RestartContainer":
must not be set to 'RestartContainer' for non-sidecar initContainers``.
"""

import copy

from kvert.api.validation import validate, validate_update

MSG = "must not be set to 'RestartContainer' for non-sidecar initContainers"


def _pod(init):
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"},
            "spec": {"restartPolicy": "Always", "dnsPolicy": "ClusterFirst",
                     "terminationGracePeriodSeconds": 30, "schedulerName": "default-scheduler",
                     "initContainers": [init],
                     "containers": [{"name": "app", "image": "nginx", "imagePullPolicy": "IfNotPresent",
                                     "terminationMessagePolicy": "File"}]}}


def _init(**fields):
    return {"name": "init", "image": "busybox", "imagePullPolicy": "IfNotPresent",
            "terminationMessagePolicy": "File", **fields}


RESTART = [{"resourceName": "cpu", "restartPolicy": "NotRequired"},
           {"resourceName": "memory", "restartPolicy": "RestartContainer"}]


def _causes(errs):
    return [(c.field, c.message) for c in errs]


def test_restart_container_on_a_plain_init_container_is_refused():
    assert _causes(validate(_pod(_init(resizePolicy=RESTART)))) == [
        ("spec.initContainers[0].resizePolicy[1].restartPolicy",
         f'Invalid value: "RestartContainer": {MSG}')]


def test_not_required_on_a_plain_init_container_is_allowed():
    policy = [{"resourceName": "cpu", "restartPolicy": "NotRequired"}]
    assert validate(_pod(_init(resizePolicy=policy))) == []


def test_a_sidecar_may_restart_on_resize():
    assert validate(_pod(_init(resizePolicy=RESTART, restartPolicy="Always"))) == []


def test_an_update_of_a_pod_that_already_has_it_is_ratcheted():
    old = _pod(_init(resizePolicy=RESTART))
    old["metadata"].update(resourceVersion="1", uid="u", creationTimestamp="2026-01-01T00:00:00Z")
    new = copy.deepcopy(old)
    new["spec"]["activeDeadlineSeconds"] = 60
    assert not [c for c in validate_update(new, old) if MSG in c.message]


def test_an_update_that_adds_it_is_refused():
    old = _pod(_init())
    old["metadata"].update(resourceVersion="1", uid="u", creationTimestamp="2026-01-01T00:00:00Z")
    new = copy.deepcopy(old)
    new["spec"]["initContainers"][0]["resizePolicy"] = RESTART
    assert [c.field for c in validate_update(new, old) if MSG in c.message] == [
        "spec.initContainers[0].resizePolicy[1].restartPolicy"]
