"""scheduling.k8s.io/v1alpha1 Workload validation and the pod's ``spec.workloadRef``.

Cases from ``pkg/apis/scheduling/validation/validation_test.go`` TestValidateWorkload (the
1.35 ``podGroups`` API; case names cited); messages and paths from the 1.35
``ValidateWorkload`` / ``ValidateWorkloadUpdate`` where the test only expects "an error".
"""

from __future__ import annotations

import copy

import pytest

from kvert.api import validation
from kvert.api.validation.workload import validate_workload, validate_workload_update

LABEL_MSG = ("a lowercase RFC 1123 label must consist of lower case alphanumeric characters or "
             "'-', and must start and end with an alphanumeric character (e.g. 'my-name',  or "
             "'123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')")


def workload(mutate=None) -> dict:
    """``mkWorkload``: a controllerRef and two groups, basic and gang(minCount 2)."""
    w = {"apiVersion": "scheduling.k8s.io/v1alpha1", "kind": "Workload",
         "metadata": {"name": "foo", "namespace": "bar"},
         "spec": {"controllerRef": {"apiGroup": "group", "kind": "foo", "name": "baz"},
                  "podGroups": [{"name": "group1", "policy": {"basic": {}}},
                                {"name": "group2", "policy": {"gang": {"minCount": 2}}}]}}
    if mutate:
        mutate(w)
    return w


def causes(errs) -> list[tuple[str, str]]:
    return [(c.field, c.message) for c in errs]


def _set(path, value):
    def mutate(w):
        node = w
        for part in path[:-1]:
            node = node[part]
        node[path[-1]] = value
    return mutate


def test_valid_workloads():
    """TestValidateWorkload: valid, no controllerRef, no apiGroup."""
    assert validate_workload(workload()) == []
    assert validate_workload(workload(lambda w: w["spec"].pop("controllerRef"))) == []
    assert validate_workload(workload(lambda w: w["spec"]["controllerRef"].pop("apiGroup"))) == []


@pytest.mark.parametrize("case, mutate, want", [
    ("invalid controllerRef apiGroup", _set(("spec", "controllerRef", "apiGroup"), ".group"),
     [("spec.controllerRef.apiGroup", None)]),
    ("no controllerRef kind", _set(("spec", "controllerRef", "kind"), ""),
     [("spec.controllerRef.kind", "Required value")]),
    ("invalid controllerRef kind", _set(("spec", "controllerRef", "kind"), "/foo"),
     [("spec.controllerRef.kind", "Invalid value: \"/foo\": may not contain '/'")]),
    ("no controllerRef name", _set(("spec", "controllerRef", "name"), ""),
     [("spec.controllerRef.name", "Required value")]),
    ("invalid controllerRef name", _set(("spec", "controllerRef", "name"), "/baz"),
     [("spec.controllerRef.name", "Invalid value: \"/baz\": may not contain '/'")]),
    ("no pod groups", _set(("spec", "podGroups"), []),
     [("spec.podGroups", "Required value: must have at least one item")]),
    ("too many pod groups",
     _set(("spec", "podGroups"), [{"name": f"group-{i}", "policy": {"basic": {}}}
                                  for i in range(9)]),
     [("spec.podGroups", "Too many: 9: must have at most 8 items")]),
    ("no pod group name", lambda w: w["spec"]["podGroups"][0].update(name=""),
     [("spec.podGroups[0].name", f'Invalid value: "": {LABEL_MSG}')]),
    ("invalid pod group name", lambda w: w["spec"]["podGroups"][0].update(name=".group1"),
     [("spec.podGroups[0].name", f'Invalid value: ".group1": {LABEL_MSG}')]),
    ("too long pod group name", lambda w: w["spec"]["podGroups"][0].update(name="g" * 64),
     [("spec.podGroups[0].name", f'Invalid value: "{"g" * 64}": must be no more than 63 '
                                 "characters")]),
    ("duplicate pod group names", lambda w: w["spec"]["podGroups"][1].update(name="group1"),
     [("spec.podGroups[1].name", 'Duplicate value: "group1"')]),
    ("no policy set", lambda w: w["spec"]["podGroups"][0].update(policy={}),
     [("spec.podGroups[0].policy", "Required value: exactly one of `basic`, `gang` is required")]),
    ("two policies", lambda w: w["spec"]["podGroups"][0]["policy"].update(gang={"minCount": 2}),
     [("spec.podGroups[0].policy", 'Invalid value: "{`basic`, `gang`}": exactly one of `basic`, '
                                   "`gang` is required, but multiple fields are set")]),
    ("zero min count in gang", lambda w: w["spec"]["podGroups"][1]["policy"]["gang"].update(
        minCount=0), [("spec.podGroups[1].policy.gang.minCount",
                       "Invalid value: 0: must be greater than zero")]),
])
def test_invalid_workloads(case, mutate, want):
    """TestValidateWorkload, the invalid cases (named as upstream)."""
    got = causes(validate_workload(workload(mutate)))
    assert [f for f, _ in got] == [f for f, _ in want], case
    for (_, message), (_, expected) in zip(got, want):
        if expected is not None:
            assert message == expected, case


def test_workload_metadata():
    """ValidateWorkload: namespaced, a DNS-subdomain name."""
    assert causes(validation.validate(workload(lambda w: w["metadata"].pop("namespace")))) == [
        ("metadata.namespace", "Required value")]
    [cause] = validation.validate(workload(_set(("metadata", "name"), "Foo")))
    assert cause.field == "metadata.name"


def test_workload_update():
    """ValidateWorkloadUpdate: podGroups and a set controllerRef are immutable, reported at
    upstream 1.35's paths (without the spec prefix); a controllerRef may be set once."""
    old = workload()
    old["metadata"]["resourceVersion"] = "1"
    assert validate_workload_update(copy.deepcopy(old), old) == []
    new = workload(lambda w: w["spec"]["podGroups"][1]["policy"]["gang"].update(minCount=3))
    assert [c.field for c in validate_workload_update(new, old)] == ["podGroups"]
    new = workload(_set(("spec", "controllerRef", "name"), "other"))
    assert [c.field for c in validate_workload_update(new, old)] == ["controllerRef"]
    unset = workload(lambda w: w["spec"].pop("controllerRef"))
    assert validate_workload_update(workload(), unset) == []


def pod(ref) -> dict:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "bar"},
            "spec": {"containers": [{"name": "c", "image": "i"}], "workloadRef": ref}}


def test_pod_workload_reference():
    """The pod's workloadRef: name a DNS subdomain, podGroup and podGroupReplicaKey DNS labels
    (k8s.io/api/core/v1 WorkloadReference), name and podGroup required."""
    assert validation.validate(pod({"name": "foo", "podGroup": "group1"})) == []
    assert validation.validate(pod({"name": "a.b", "podGroup": "g", "podGroupReplicaKey": "r1"})) == []
    assert causes(validation.validate(pod({}))) == [
        ("spec.workloadRef.name", "Required value"),
        ("spec.workloadRef.podGroup", "Required value")]
    assert causes(validation.validate(pod({"name": "foo", "podGroup": "g.1",
                                           "podGroupReplicaKey": "R"}))) == [
        ("spec.workloadRef.podGroup", 'Invalid value: "g.1": must not contain dots'),
        ("spec.workloadRef.podGroupReplicaKey", f'Invalid value: "R": {LABEL_MSG}')]


def test_pod_workload_reference_is_immutable():
    """Like the rest of the pod spec (ValidatePodUpdate)."""
    old = pod({"name": "foo", "podGroup": "group1"})
    old["metadata"]["resourceVersion"] = "1"
    new = pod({"name": "foo", "podGroup": "group2"})
    [cause] = validation.validate_update(new, old)
    assert cause.field == "spec" and "pod updates may not change fields" in cause.message
