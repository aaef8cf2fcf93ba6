"""The pods/ephemeralcontainers subresource: upstream's TestValidatePodEphemeralContainersUpdate
and TestValidateEphemeralContainers (pkg/apis/core/validation/validation_test.go) as cases:
an ephemeral container may be added, never removed or changed; its name is unique among
every container; its target is one of the pod's containers; ports, resources, probes,
lifecycle and restartPolicy "cannot be set for an Ephemeral Container"; a static pod takes
none. And the strategy (pkg/registry/core/pod/strategy.go dropNonEphemeralContainerUpdates):
a write there changes the ephemeral containers only."""

import pytest

from kvert.api.validation import validate_pod_ephemeral_containers
from kvert.registry.strategies.pods import merge_ephemeral_containers

from .validation_helpers import DUPLICATE, FORBIDDEN, NOT_FOUND, assert_cause, assert_valid, edit, pod

OLD = edit(pod("web"), lambda p: (p["metadata"].update(uid="u-1", resourceVersion="7"),
                                  p["spec"].update(nodeName="node-1")))


def debugger(name: str = "debugger", **fields) -> dict:
    return {"name": name, "image": "busybox", "command": ["sh"], **fields}


def with_ephemeral(p: dict, *containers: dict) -> dict:
    return edit(p, lambda q: q["spec"].update(ephemeralContainers=[dict(c) for c in containers]))


def test_adding_one_is_valid_and_adding_another_later_too():
    one = with_ephemeral(OLD, debugger())
    assert_valid(validate_pod_ephemeral_containers(one, OLD))
    assert_valid(validate_pod_ephemeral_containers(with_ephemeral(OLD, debugger(), debugger("second")), one))


def test_no_change_is_valid():
    one = with_ephemeral(OLD, debugger())
    assert_valid(validate_pod_ephemeral_containers(one, one))


def test_one_may_not_be_removed():
    one = with_ephemeral(OLD, debugger())
    assert_cause(validate_pod_ephemeral_containers(OLD, one), "spec.ephemeralContainers", FORBIDDEN,
                 'existing ephemeral containers "debugger" may not be removed')


def test_one_may_not_be_changed():
    one = with_ephemeral(OLD, debugger())
    changed = with_ephemeral(OLD, debugger(image="alpine"))
    assert_cause(validate_pod_ephemeral_containers(changed, one), "spec.ephemeralContainers[debugger]",
                 FORBIDDEN, 'existing ephemeral containers "debugger" may not be changed')


@pytest.mark.parametrize("field, value", [
    ("ports", [{"containerPort": 80}]),
    ("resources", {"limits": {"cpu": "1"}}),
    ("livenessProbe", {"exec": {"command": ["true"]}}),
    ("readinessProbe", {"exec": {"command": ["true"]}}),
    ("startupProbe", {"exec": {"command": ["true"]}}),
    ("lifecycle", {"preStop": {"exec": {"command": ["true"]}}}),
    ("restartPolicy", "Always"),
])
def test_fields_for_a_pods_own_containers_are_forbidden(field, value):
    new = with_ephemeral(OLD, debugger(**{field: value}))
    assert_cause(validate_pod_ephemeral_containers(new, OLD), f"spec.ephemeralContainers[0].{field}",
                 FORBIDDEN, "cannot be set for an Ephemeral Container")


def test_the_name_is_unique_among_every_container():
    new = with_ephemeral(OLD, debugger(OLD["spec"]["containers"][0]["name"]))
    assert_cause(validate_pod_ephemeral_containers(new, OLD), "spec.ephemeralContainers[0].name", DUPLICATE)


def test_the_target_is_one_of_the_pods_containers():
    new = with_ephemeral(OLD, debugger(targetContainerName="bogus"))
    assert_cause(validate_pod_ephemeral_containers(new, OLD), "spec.ephemeralContainers[0].targetContainerName",
                 NOT_FOUND)
    target = OLD["spec"]["containers"][0]["name"]
    assert_valid(validate_pod_ephemeral_containers(with_ephemeral(OLD, debugger(targetContainerName=target)), OLD))


def test_a_static_pod_takes_none():
    static = edit(OLD, lambda p: p["metadata"].setdefault("annotations", {}).update(
        {"kubernetes.io/config.mirror": "mirror"}))
    assert_cause(validate_pod_ephemeral_containers(with_ephemeral(static, debugger()), static), "", FORBIDDEN,
                 "static pods do not support ephemeral containers")


def test_the_subresource_drops_every_other_change():
    sent = with_ephemeral(edit(OLD, lambda p: (p["metadata"].update(labels={"sneaky": "yes"}),
                                               p["spec"]["containers"][0].update(image="evil"),
                                               p.update(status={"phase": "Succeeded"}))), debugger())
    stored = edit(OLD, lambda p: p.update(status={"phase": "Running"}))
    merged = merge_ephemeral_containers(sent, stored)
    assert merged["metadata"].get("labels") == stored["metadata"].get("labels")
    assert merged["spec"]["containers"] == stored["spec"]["containers"]
    assert merged["status"] == {"phase": "Running"}
    (added,) = merged["spec"]["ephemeralContainers"]
    # defaulted as the write's decoding would
    assert (added["name"], added["terminationMessagePolicy"], added["imagePullPolicy"]) == \
        ("debugger", "File", "Always")
