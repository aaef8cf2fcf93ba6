"""Namespace, Events (core/v1 and events.k8s.io/v1), Lease, ConfigMap, LimitRange."""

import pytest

from kvert.api.validation import validate, validate_status_update, validate_update
from .validation_helpers import (FORBIDDEN, INVALID, NOT_SUPPORTED, REQUIRED, TOO_LONG, assert_cause,
                                assert_valid, edit)

NAMESPACE = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team-a"}}

CORE_EVENT = {
    "apiVersion": "v1", "kind": "Event",
    "metadata": {"name": "2pod.17a9c2b3d4e5f601", "namespace": "default"},
    "involvedObject": {"apiVersion": "v1", "kind": "Pod", "name": "2pod", "namespace": "default",
                       "uid": "u-1"},
    "reason": "ResizeDeferred", "message": "Node didn't have enough capacity: cpu",
    "type": "Warning", "count": 1, "source": {"component": "kubelet", "host": "node-1"},
    "firstTimestamp": "2021-06-27T02:06:56Z", "lastTimestamp": "2021-06-27T02:06:56Z",
}

NEW_EVENT = {
    "apiVersion": "events.k8s.io/v1", "kind": "Event",
    "metadata": {"name": "2pod.17a9c2b3d4e5f602", "namespace": "default"},
    "eventTime": "2021-06-27T02:06:56.000000Z",
    "regarding": {"apiVersion": "v1", "kind": "Pod", "name": "2pod", "namespace": "default"},
    "reportingController": "kvert.io/kubelet", "reportingInstance": "node-1",
    "action": "Resize", "reason": "ResizeInfeasible", "type": "Warning",
    "note": "Node didn't have enough capacity: cpu, requested: 4650, capacity: 4000",
    "series": {"count": 2, "lastObservedTime": "2021-06-27T02:07:56.000000Z"},
}

LEASE = {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
         "metadata": {"name": "kvert-scheduler", "namespace": "kube-system"},
         "spec": {"holderIdentity": "scheduler-1", "leaseDurationSeconds": 15,
                  "acquireTime": "2024-01-01T00:00:00.000000Z",
                  "renewTime": "2024-01-01T00:00:10.123456Z", "leaseTransitions": 0}}

CONFIG_MAP = {"apiVersion": "v1", "kind": "ConfigMap",
              "metadata": {"name": "game-demo", "namespace": "default"},
              "data": {"player_initial_lives": "3", "ui_properties_file_name": "user-interface.properties",
                       "game.properties": "enemy.types=aliens,monsters\nplayer.maximum-lives=5\n"},
              "binaryData": {"logo.bin": "aGVsbG8="}}

LIMIT_RANGE = {"apiVersion": "v1", "kind": "LimitRange",
               "metadata": {"name": "cpu-resource-constraint", "namespace": "default"},
               "spec": {"limits": [{"type": "Container", "default": {"cpu": "500m"},
                                    "defaultRequest": {"cpu": "500m"}, "max": {"cpu": "1"},
                                    "min": {"cpu": "100m"}}]}}

VALID = {"namespace": NAMESPACE, "core/v1 event": CORE_EVENT, "events.k8s.io event": NEW_EVENT,
         "lease": LEASE, "configmap": CONFIG_MAP, "limitrange": LIMIT_RANGE,
         "cluster-scoped core event": edit(CORE_EVENT, lambda e: (
             e["metadata"].update(namespace="default"),
             e["involvedObject"].update(kind="Node", name="node-1"),
             e["involvedObject"].pop("namespace")))}


@pytest.mark.parametrize("obj", VALID.values(), ids=VALID.keys())
def test_valid(obj):
    assert_valid(validate(obj))


CASES = [
    (NAMESPACE, "namespace name with dots", lambda n: n["metadata"].update(name="team.a"),
     "metadata.name", INVALID, "must not contain dots"),
    (NAMESPACE, "namespace finalizer", lambda n: n.update(spec={"finalizers": ["bogus"]}),
     "spec.finalizers", INVALID, "neither a standard finalizer name"),
    (CORE_EVENT, "no involved object", lambda e: e.pop("involvedObject"), "involvedObject",
     REQUIRED, None),
    (CORE_EVENT, "namespace mismatch", lambda e: e["involvedObject"].update(namespace="other"),
     "involvedObject.namespace", INVALID, "does not match event.namespace"),
    (CORE_EVENT, "eventTime requires reporting fields", lambda e: e.update(
        eventTime="2021-06-27T02:06:56.000000Z"), "reportingComponent", REQUIRED, None),
    (NEW_EVENT, "type", lambda e: e.update(type="Error"), "type", INVALID, "has invalid value: Error"),
    (NEW_EVENT, "eventTime missing", lambda e: e.pop("eventTime"), "eventTime", REQUIRED, None),
    (NEW_EVENT, "reportingController missing", lambda e: e.pop("reportingController"),
     "reportingController", REQUIRED, None),
    (NEW_EVENT, "action missing", lambda e: e.pop("action"), "action", REQUIRED, None),
    (NEW_EVENT, "reason too long", lambda e: e.update(reason="R" * 129), "reason", INVALID,
     "can have at most 128 characters"),
    (NEW_EVENT, "note too long", lambda e: e.update(note="n" * 1025), "note", INVALID,
     "can have at most 1024 characters"),
    (NEW_EVENT, "deprecated count", lambda e: e.update(deprecatedCount=3), "deprecatedCount",
     INVALID, "needs to be unset"),
    (NEW_EVENT, "series count", lambda e: e["series"].update(count=1), "series.count", INVALID,
     "should be at least 2"),
    (NEW_EVENT, "cluster object from another namespace", lambda e: (
        e["regarding"].pop("namespace"), e["metadata"].update(namespace="team-a")),
     "regarding.namespace", INVALID, "does not match event.namespace"),
    (LEASE, "duration zero", lambda l: l["spec"].update(leaseDurationSeconds=0),
     "spec.leaseDurationSeconds", INVALID, "must be greater than 0"),
    (LEASE, "negative transitions", lambda l: l["spec"].update(leaseTransitions=-1),
     "spec.leaseTransitions", INVALID, "must be greater than or equal to 0"),
    (LEASE, "holder of the wrong type", lambda l: l["spec"].update(holderIdentity=7),
     "spec.holderIdentity", "FieldValueTypeInvalid", None),
    (LEASE, "renewTime not a time", lambda l: l["spec"].update(renewTime="yesterday"),
     "spec.renewTime", INVALID, "RFC 3339"),
    (LEASE, "unknown strategy", lambda l: l["spec"].update(strategy="Newest"), "spec.strategy",
     NOT_SUPPORTED, None),
    (LEASE, "preferredHolder without strategy", lambda l: l["spec"].update(preferredHolder="x"),
     "spec.preferredHolder", FORBIDDEN, "may only be specified if `strategy` is defined"),
    (CONFIG_MAP, "bad key", lambda c: c["data"].update({"a/b": "x"}), "data[a/b]", INVALID,
     "a valid config key"),
    (CONFIG_MAP, "key in both", lambda c: c["data"].update({"logo.bin": "x"}), "data[logo.bin]",
     INVALID, "duplicate of key present in binaryData"),
    (CONFIG_MAP, "too big", lambda c: c["data"].update(big="x" * (1024 * 1024)), "", TOO_LONG,
     "may not be more than 1048576 bytes"),
    (CONFIG_MAP, "binary not base64", lambda c: c["binaryData"].update({"x": "%%%"}),
     "binaryData[x]", INVALID, "base64"),
    (CONFIG_MAP, "non-string value", lambda c: c["data"].update(lives=3), "data[lives]",
     "FieldValueTypeInvalid", None),
    (LIMIT_RANGE, "min above max", lambda l: l["spec"]["limits"][0]["min"].update(cpu="2"),
     "spec.limits[0].min[cpu]", INVALID, "min value 2 is greater than max value 1"),
    (LIMIT_RANGE, "default above max", lambda l: l["spec"]["limits"][0]["default"].update(cpu="2"),
     "spec.limits[0].default[cpu]", INVALID, "default value 2 is greater than max value 1"),
    (LIMIT_RANGE, "unknown type", lambda l: l["spec"]["limits"][0].update(type="Node"),
     "spec.limits[0].type", INVALID, "must be a standard limit type"),
]


@pytest.mark.parametrize("base, name, change, field, reason, contains", CASES,
                         ids=[c[1] for c in CASES])
def test_invalid(base, name, change, field, reason, contains):
    assert_cause(validate(edit(base, change)), field, reason, contains)


def test_immutable_config_map():
    old = edit(CONFIG_MAP, lambda c: c.update(immutable=True))
    new = edit(old, lambda c: (c["data"].update(player_initial_lives="5"), c.update(immutable=False)))
    causes = validate_update(new, old)
    assert_cause(causes, "data", FORBIDDEN, "field is immutable when `immutable` is set")
    assert_cause(causes, "immutable", FORBIDDEN)
    assert_valid(validate_update(edit(CONFIG_MAP, lambda c: c["data"].update(x="1")), CONFIG_MAP))


def test_new_style_event_fields_are_immutable():
    new = edit(NEW_EVENT, lambda e: e.update(note="changed"))
    assert_cause(validate_update(new, NEW_EVENT), "note", INVALID, "field is immutable")
    series = edit(NEW_EVENT, lambda e: e["series"].update(count=3))
    assert_valid(validate_update(series, NEW_EVENT))


def test_namespace_phase_follows_deletion():
    terminating = edit(NAMESPACE, lambda n: n.update(status={"phase": "Terminating"}))
    assert_cause(validate_status_update(terminating, NAMESPACE), "status.Phase", INVALID,
                 "may only be 'Active' if `deletionTimestamp` is empty")


def test_lease_renewal_is_valid():
    new = edit(LEASE, lambda l: l["spec"].update(renewTime="2024-01-01T00:00:20.000001Z"))
    assert_valid(validate_update(new, LEASE))
