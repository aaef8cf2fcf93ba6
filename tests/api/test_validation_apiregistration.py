"""apiregistration.k8s.io/v1 APIService validation and defaults.

kube-aggregator has no validation_test.go: the expected fields and messages are those
``pkg/apis/apiregistration/validation/validation.go`` writes (ValidateAPIService,
ValidateAPIServiceUpdate, ValidateAPIServiceStatusUpdate), the default port that of
``pkg/apis/apiregistration/v1/defaults.go`` (SetDefaults_ServiceReference)."""

from __future__ import annotations

import base64

import pytest

from kvert.api import validation
from kvert.api.defaults import defaulted


def api_service(name: str = "v1beta1.metrics.k8s.io", **spec) -> dict:
    body = {"group": "metrics.k8s.io", "version": "v1beta1", "groupPriorityMinimum": 100,
            "versionPriority": 100, **spec}
    return {"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
            "metadata": {"name": name}, "spec": {k: v for k, v in body.items() if v is not None}}


SERVICE = {"namespace": "kube-system", "name": "metrics-server"}
PEM = base64.b64encode(b"12345").decode()


def causes(obj: dict) -> list[tuple[str, str]]:
    return [(c.field, c.message) for c in validation.validate(obj)]


def test_valid_local_and_service_backed():
    assert causes(api_service()) == []
    assert causes(api_service(service=SERVICE, caBundle=PEM)) == []
    assert causes(api_service(service=SERVICE, insecureSkipTLSVerify=True)) == []


def test_the_legacy_group_is_v1_dot():
    core = api_service("v1.", group="", version="v1", groupPriorityMinimum=18000, versionPriority=1)
    assert causes(core) == []
    # only v1 may have an empty group
    assert causes(api_service("v2.", group="", version="v2")) == [
        ("spec.group", "Required value: only v1 may have an empty group and it better be legacy kube")]


def test_the_name_must_be_version_dot_group():
    assert causes(api_service("v1.metrics.k8s.io")) == [
        ("metadata.name", 'Invalid value: "v1.metrics.k8s.io": must be '
                          '`spec.version+"."+spec.group`: "v1beta1.metrics.k8s.io"')]
    # path.IsValidPathSegmentName first
    assert causes(api_service("a/b")) == [("metadata.name", "Invalid value: \"a/b\": may not contain '/'")]


def test_group_and_version_names():
    got = causes(api_service("V1.Bad_Group", group="Bad_Group", version="V1"))
    fields = [f for f, _ in got]
    assert "spec.group" in fields and "spec.version" in fields
    assert any(m.startswith('Invalid value: "V1": a DNS-1035 label must consist of lower case')
               for f, m in got if f == "spec.version")


@pytest.mark.parametrize("group, version, problems", [
    (0, 100, [("spec.groupPriorityMinimum", "Invalid value: 0: must be positive and less than 20000")]),
    (20001, 100, [("spec.groupPriorityMinimum",
                   "Invalid value: 20001: must be positive and less than 20000")]),
    (20000, 1000, []),
    (1, 1, []),
    (100, 0, [("spec.versionPriority", "Invalid value: 0: must be positive and less than 1000")]),
    (100, 1001, [("spec.versionPriority", "Invalid value: 1001: must be positive and less than 1000")]),
    (None, None, [("spec.groupPriorityMinimum", "Invalid value: 0: must be positive and less than 20000"),
                  ("spec.versionPriority", "Invalid value: 0: must be positive and less than 1000")]),
])
def test_priorities(group, version, problems):
    assert causes(api_service(groupPriorityMinimum=group, versionPriority=version)) == problems


def test_a_local_api_service_has_no_tls_settings():
    assert causes(api_service(caBundle=PEM, insecureSkipTLSVerify=True)) == [
        ("spec.caBundle", 'Invalid value: "5 bytes": local APIServices may not have a caBundle'),
        ("spec.insecureSkipTLSVerify",
         "Invalid value: true: local APIServices may not have insecureSkipTLSVerify")]


def test_a_service_needs_namespace_and_name_and_not_both_tls_settings():
    assert causes(api_service(service={"port": 443})) == [
        ("spec.service.namespace", "Required value"), ("spec.service.name", "Required value")]
    assert causes(api_service(service=SERVICE, caBundle=PEM, insecureSkipTLSVerify=True)) == [
        ("spec.insecureSkipTLSVerify", "Invalid value: true: may not be true if caBundle is present")]


def test_update_checks_metadata_and_the_whole_object():
    old = api_service()
    old["metadata"]["uid"] = "u1"
    new = api_service(groupPriorityMinimum=0)
    new["metadata"]["uid"] = "u1"
    assert [(c.field, c.message) for c in validation.validate_update(new, old)] == [
        ("spec.groupPriorityMinimum", "Invalid value: 0: must be positive and less than 20000")]


def test_status_conditions_are_true_false_or_unknown():
    old = api_service()
    new = api_service()
    new["status"] = {"conditions": [{"type": "Available", "status": "True"},
                                    {"type": "Available", "status": "Maybe"}]}
    assert [(c.field, c.message) for c in validation.validate_status_update(new, old)] == [
        ("status.conditions[1].status",
         'Unsupported value: "Maybe": supported values: "True", "False", "Unknown"')]


def test_the_service_port_defaults_to_443():
    assert defaulted(api_service(service=dict(SERVICE)))["spec"]["service"]["port"] == 443
    assert defaulted(api_service(service={**SERVICE, "port": 8443}))["spec"]["service"]["port"] == 8443
    assert "service" not in defaulted(api_service())["spec"]
