"""Pod updates (ValidatePodUpdate) and pod status updates (ValidatePodStatusUpdate)."""

import pytest

from kvert.api.validation import validate_status_update, validate_update
from kvert.api.validation.pod import POD_UPDATE_FORBIDDEN_MSG
from .validation_helpers import (FORBIDDEN, INVALID, assert_cause, assert_valid, container, edit,
                                pod)

OLD = edit(pod(tolerations=[{"key": "k", "operator": "Exists", "effect": "NoExecute",
                             "tolerationSeconds": 300}],
               activeDeadlineSeconds=600),
           lambda p: p["metadata"].update(uid="u-1", resourceVersion="3"))

ALLOWED = {
    "image": lambda p: container(p).update(image="skiibum/ubuntu-stress:19.04"),
    "shorter activeDeadlineSeconds": lambda p: p["spec"].update(activeDeadlineSeconds=300),
    "added toleration": lambda p: p["spec"]["tolerations"].append(
        {"key": "other", "operator": "Exists"}),
    "changed tolerationSeconds": lambda p: p["spec"]["tolerations"][0].update(tolerationSeconds=10),
    "labels and annotations": lambda p: p["metadata"].update(labels={"a": "b"},
                                                             annotations={"note": "x"}),
    "same quantity spelled differently": lambda p: container(p)["resources"]["limits"].update(
        cpu="0.5"),
}


@pytest.mark.parametrize("change", ALLOWED.values(), ids=ALLOWED.keys())
def test_allowed_updates(change):
    assert_valid(validate_update(edit(OLD, change), OLD))


FORBIDDEN_UPDATES = {
    "restartPolicy": lambda p: p["spec"].update(restartPolicy="Never"),
    "nodeSelector": lambda p: p["spec"].update(nodeSelector={"disk": "ssd"}),
    "container command": lambda p: container(p).update(command=["sleep"]),
    "resources (use /resize)": lambda p: container(p)["resources"]["limits"].update(cpu="650m"),
    "priorityClassName": lambda p: p["spec"].update(priorityClassName="high"),
}


@pytest.mark.parametrize("change", FORBIDDEN_UPDATES.values(), ids=FORBIDDEN_UPDATES.keys())
def test_forbidden_updates(change):
    assert_cause(validate_update(edit(OLD, change), OLD), "spec", FORBIDDEN, POD_UPDATE_FORBIDDEN_MSG)


def test_removing_a_toleration_is_forbidden():
    new = edit(OLD, lambda p: p["spec"].update(tolerations=[]))
    assert_cause(validate_update(new, OLD), "spec.tolerations", FORBIDDEN,
                 "existing toleration can not be modified except its tolerationSeconds")


def test_active_deadline_rules():
    longer = edit(OLD, lambda p: p["spec"].update(activeDeadlineSeconds=900))
    assert_cause(validate_update(longer, OLD), "spec.activeDeadlineSeconds", INVALID,
                 "must be less than or equal to previous value")
    unset = edit(OLD, lambda p: p["spec"].pop("activeDeadlineSeconds"))
    assert_cause(validate_update(unset, OLD), "spec.activeDeadlineSeconds", INVALID,
                 "must not update from a positive integer to nil value")


def test_containers_may_not_be_added():
    new = edit(OLD, lambda p: p["spec"]["containers"].append({"name": "b", "image": "x"}))
    assert_cause(validate_update(new, OLD), "spec.containers", FORBIDDEN,
                 "pod updates may not add or remove containers")


def test_scheduling_gates_may_only_be_removed():
    gated = edit(OLD, lambda p: p["spec"].update(schedulingGates=[{"name": "example.com/a"}]))
    cleared = edit(gated, lambda p: p["spec"].update(schedulingGates=[]))
    assert_valid(validate_update(cleared, gated))
    added = edit(gated, lambda p: p["spec"]["schedulingGates"].append({"name": "example.com/b"}))
    assert_cause(validate_update(added, gated), "spec.schedulingGates[1].name", FORBIDDEN,
                 "only deletion is allowed, but found new scheduling gate 'example.com/b'")


def test_gated_pods_may_gain_node_constraints():
    gated = edit(OLD, lambda p: p["spec"].update(schedulingGates=[{"name": "example.com/a"}],
                                                 nodeSelector={"zone": "a"}))
    more = edit(gated, lambda p: p["spec"]["nodeSelector"].update(disk="ssd"))
    assert_valid(validate_update(more, gated))
    changed = edit(gated, lambda p: p["spec"].update(nodeSelector={"zone": "b"}))
    assert_cause(validate_update(changed, gated), "spec.nodeSelector", INVALID,
                 "only additions to spec.nodeSelector are allowed")
    affinity = edit(gated, lambda p: p["spec"].update(affinity={"nodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}]}}}))
    assert_valid(validate_update(affinity, gated))


def test_negative_grace_period_may_become_one():
    old = edit(OLD, lambda p: p["spec"].update(terminationGracePeriodSeconds=-1))
    new = edit(old, lambda p: p["spec"].update(terminationGracePeriodSeconds=1))
    assert not [c for c in validate_update(new, old) if c.field == "spec"]


def running(p):
    return edit(p, lambda q: (q["spec"].update(nodeName="node-1"),
                              q.update(status={"phase": "Running", "qosClass": "Guaranteed",
                                               "containerStatuses": [{"name": "stress", "ready": True,
                                                                      "restartCount": 0,
                                                                      "state": {"running": {}}}]})))


def test_kubelet_status_update_with_resize_condition():
    old = running(OLD)
    status = dict(old["status"])
    status["conditions"] = [{"type": "PodResizePending", "status": "True", "reason": "Deferred",
                             "message": "Node didn't have enough capacity"}]
    status["containerStatuses"] = [{"name": "stress", "ready": True, "restartCount": 0,
                                    "state": {"running": {}},
                                    "allocatedResources": {"cpu": "650m", "memory": "500Mi"},
                                    "resources": {"requests": {"cpu": "500m", "memory": "500Mi"},
                                                  "limits": {"cpu": "500m", "memory": "500Mi"}}}]
    status["podIP"], status["podIPs"] = "10.244.1.5", [{"ip": "10.244.1.5"}]
    status["hostIP"], status["hostIPs"] = "192.168.1.10", [{"ip": "192.168.1.10"}]
    assert_valid(validate_status_update(edit(old, lambda p: p.update(status=status)), old))


STATUS_CASES = [
    ("qosClass changes", lambda s: s.update(qosClass="Burstable"), "status.qosClass", INVALID,
     "field is immutable"),
    ("negative allocated", lambda s: s["containerStatuses"][0].update(
        allocatedResources={"cpu": "-1"}), "status.containerStatuses[0].allocatedResources[cpu]",
     INVALID, "must be greater than or equal to 0"),
    ("bad actual resources", lambda s: s["containerStatuses"][0].update(
        resources={"limits": {"memory": "huge"}}), "status.containerStatuses[0].resources.limits[memory]",
     INVALID, None),
    ("bad condition type", lambda s: s.update(conditions=[{"type": "a b", "status": "True"}]),
     "status.conditions[0].type", INVALID, None),
    ("bad pod IP", lambda s: s.update(podIPs=[{"ip": "300.1.1.1"}]), "status.podIPs[0]", INVALID,
     "must be a valid IP address"),
]


@pytest.mark.parametrize("name, change, field, reason, contains", STATUS_CASES,
                         ids=[c[0] for c in STATUS_CASES])
def test_invalid_status_updates(name, change, field, reason, contains):
    old = running(OLD)
    new = edit(old, lambda p: change(p["status"]))
    assert_cause(validate_status_update(new, old), field, reason, contains)


def test_node_name_cannot_change_through_status():
    old = running(OLD)
    new = edit(old, lambda p: p["spec"].update(nodeName="node-2"))
    assert_cause(validate_status_update(new, old), "status.nodeName", FORBIDDEN,
                 "may not be changed directly")


def test_never_restarting_containers_stay_terminated():
    old = running(edit(OLD, lambda p: p["spec"].update(restartPolicy="Never")))
    old["status"]["containerStatuses"][0]["state"] = {"terminated": {"exitCode": 0}}
    new = edit(old, lambda p: p["status"]["containerStatuses"][0].update(state={"running": {}}))
    assert_cause(validate_status_update(new, old), "status.containerStatuses[0].state", FORBIDDEN,
                 "may not be transitioned to non-terminated state")


def test_an_update_leaving_spec_and_metadata_fields_alone_still_checks_what_changed():
    # The write path skips re-checking a spec (or labels, annotations, owner references,
    # finalizers) the update leaves as stored; what the update does change is still checked
    # (ValidatePodUpdate's metadata rules: TestValidateObjectMetaUpdate, TestValidateLabels).
    unchanged = edit(OLD, lambda p: p["metadata"].update(labels={"app": "web"}))
    assert_valid(validate_update.of_defaulted(edit(unchanged, lambda p: None), unchanged))
    bad_label = edit(unchanged, lambda p: p["metadata"]["labels"].update({"a/b/c": "x"}))
    assert_cause(validate_update.of_defaulted(bad_label, unchanged), "metadata.labels", INVALID)
    bad_owner = edit(unchanged, lambda p: p["metadata"].update(
        ownerReferences=[{"apiVersion": "v1", "kind": "", "name": "x", "uid": "u"}]))
    assert_cause(validate_update.of_defaulted(bad_owner, unchanged), "metadata.ownerReferences.kind", INVALID)
    bad_image = edit(unchanged, lambda p: container(p).update(image=""))
    assert_cause(validate_update.of_defaulted(bad_image, unchanged), "spec.containers[0].image", "FieldValueRequired")
    status = edit(unchanged, lambda p: p.update(status={"conditions": [{"type": "a/b/c"}]}))
    assert_cause(validate_status_update.of_defaulted(status, unchanged), "status.conditions[0].type", INVALID)
