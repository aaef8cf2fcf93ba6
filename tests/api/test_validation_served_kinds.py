"""Validation and defaults of PodTemplate, ServiceCIDR, IPAddress, FlowSchema and
PriorityLevelConfiguration (upstream pkg/apis/core/validation TestValidatePodTemplate,
pkg/apis/networking/validation TestValidateServiceCIDR / TestValidateIPAddress /
TestValidateServiceCIDRUpdate, pkg/apis/flowcontrol/validation TestFlowSchemaValidation /
TestPriorityLevelConfigurationValidation, pkg/apis/flowcontrol/v1 defaults_test.go); the
messages those of the validation.go files."""

from __future__ import annotations

import pytest

from kvert.api import validation
from kvert.api.defaults import defaulted


def causes(obj: dict) -> list[tuple[str, str]]:
    return [(c.field, c.message) for c in validation.validate(obj)]


def service_cidr(*cidrs: str, name: str = "test-name") -> dict:
    return {"apiVersion": "networking.k8s.io/v1", "kind": "ServiceCIDR", "metadata": {"name": name},
            "spec": {"cidrs": list(cidrs)}}


@pytest.mark.parametrize("cidrs", [("192.168.0.0/24",), ("fd00:1:d::/64",),
                                   ("192.168.0.0/24", "fd00:1:d::/64")])
def test_service_cidr_good(cidrs):
    assert causes(service_cidr(*cidrs)) == []


def test_service_cidr_bad():
    assert causes(service_cidr()) == [("spec.cidrs", "Required value: at least one CIDR required")]
    assert causes(service_cidr("192.168.0.0/24", "192.168.1.0/24")) == [
        ("spec.cidrs", 'Invalid value: ["192.168.0.0/24","192.168.1.0/24"]: may specify no more '
         "than one IP for each IP family, i.e 192.168.0.0/24 and 2001:db8::/64")]
    assert causes(service_cidr("192.168.0.0/24", "fd00::/64", "10.0.0.0/8"))[0][0] == "spec.cidrs"
    assert causes(service_cidr("192.168.0.0")) == [
        ("spec.cidrs[0]", 'Invalid value: "192.168.0.0": must be a valid CIDR value, (e.g. '
         "10.9.8.0/24 or 2001:db8::/64)")]


def test_service_cidr_update_may_add_the_second_family():
    old = service_cidr("10.0.0.0/16")
    old["metadata"]["resourceVersion"] = "1"
    dual = service_cidr("10.0.0.0/16", "fd00::/108")
    dual["metadata"]["resourceVersion"] = "1"
    assert [(c.field, c.message) for c in validation.validate_update(dual, old)] == []
    moved = service_cidr("10.1.0.0/16")
    moved["metadata"]["resourceVersion"] = "1"
    assert [c.field for c in validation.validate_update(moved, old)] == ["spec.cidrs"]


def ip(name: str, ref: dict | None) -> dict:
    return {"apiVersion": "networking.k8s.io/v1", "kind": "IPAddress", "metadata": {"name": name},
            "spec": {} if ref is None else {"parentRef": ref}}


REF = {"group": "", "resource": "services", "namespace": "foo", "name": "bar"}


def test_ip_address():
    assert causes(ip("192.168.1.1", REF)) == []
    assert causes(ip("2001:db8::1", REF)) == []
    assert causes(ip("2001:db8::0001", REF)) == [
        ("metadata.name", 'Invalid value: "2001:db8::0001": must be in canonical form ("2001:db8::1")')]
    assert causes(ip("not-an-ip", REF)) == [
        ("metadata.name", 'Invalid value: "not-an-ip": must be a valid IP address, (e.g. 10.9.8.7 '
         "or 2001:db8::ffff)")]
    assert causes(ip("192.168.1.1", None)) == [("spec.parentRef", "Required value")]
    assert causes(ip("192.168.1.1", {"resource": "", "name": ""})) == [
        ("spec.parentRef.resource", "Required value"), ("spec.parentRef.name", "Required value")]


def flow_schema(**spec) -> dict:
    body = {"priorityLevelConfiguration": {"name": "exempt"},
            "rules": [{"subjects": [{"kind": "User", "user": {"name": "noxu"}}],
                       "resourceRules": [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"],
                                          "namespaces": ["*"]}]}], **spec}
    return {"apiVersion": "flowcontrol.apiserver.k8s.io/v1", "kind": "FlowSchema",
            "metadata": {"name": "system-foo"}, "spec": body}


def test_flow_schema():
    fs = defaulted(flow_schema())
    assert fs["spec"]["matchingPrecedence"] == 1000
    assert causes(flow_schema(matchingPrecedence=50)) == []
    assert causes(flow_schema(matchingPrecedence=10001)) == [
        ("spec.matchingPrecedence", "Invalid value: 10001: must be between 1 and 10000, inclusive")]
    assert causes(flow_schema(distinguisherMethod={"type": "ByFoo"})) == [
        ("spec.distinguisherMethod.type",
         'Unsupported value: "ByFoo": supported values: "ByNamespace", "ByUser"')]
    assert causes(flow_schema(rules=[{"subjects": [], "nonResourceRules": [
        {"verbs": ["get"], "nonResourceURLs": ["/"]}]}])) == [
        ("spec.rules[0].subjects", "Required value: subjects must contain at least one value")]


def level(**spec) -> dict:
    return {"apiVersion": "flowcontrol.apiserver.k8s.io/v1", "kind": "PriorityLevelConfiguration",
            "metadata": {"name": "broken-limited"}, "spec": spec}


def test_priority_level_configuration_defaults_and_rules():
    limited = defaulted(level(type="Limited", limited={"limitResponse": {
        "type": "Queue", "queuing": {}}}))["spec"]["limited"]
    assert limited["nominalConcurrencyShares"] == 30 and limited["lendablePercent"] == 0
    assert limited["limitResponse"]["queuing"] == {"queues": 64, "handSize": 8, "queueLengthLimit": 50}
    assert causes(level(type="Limited")) == [
        ("spec.limited", "Required value: must not be empty when type is Limited")]
    assert causes(level(type="Exempt", limited={"limitResponse": {"type": "Reject"}})) == [
        ("spec.limited", "Forbidden: must be nil if the type is not Limited")]
    assert causes(level(type="Limited", limited={"limitResponse": {
        "type": "Queue", "queuing": {"queues": 1, "handSize": 2, "queueLengthLimit": 1}}})) == [
        ("spec.limited.limitResponse.queuing.handSize",
         "Invalid value: 2: should not be greater than queues (1)")]


def test_pod_template():
    template = {"apiVersion": "v1", "kind": "PodTemplate",
                "metadata": {"name": "t", "namespace": "default"},
                "template": {"metadata": {"labels": {"a": "b"}},
                             "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}
    assert causes(template) == []
    assert defaulted(template)["template"]["spec"]["restartPolicy"] == "Always"
    bad = dict(template, template={"spec": {"containers": []}})
    assert any(f.startswith("template.spec.containers") for f, _ in causes(bad))
