"""Ingress, IngressClass and NetworkPolicy validation and defaulting (TestValidateIngress*,
TestValidateIngressClass, TestValidateNetworkPolicy in
pkg/apis/networking/validation/validation_test.go; TestSetDefaultNetworkPolicy in
pkg/apis/networking/v1/defaults_test.go)."""

import pytest

from kvert.api.defaults import defaulted
from kvert.api.validation import validate, validate_update


def _messages(causes):
    return [f"{c.field}: {c.message}" for c in causes]


def _backend(name="web", **port):
    return {"service": {"name": name, "port": port or {"number": 80}}}


def _ingress(**spec):
    base = {"rules": [{"host": "foo.bar.com", "http": {"paths": [
        {"path": "/foo", "pathType": "Prefix", "backend": _backend()}]}}]}
    base.update(spec)
    return {"apiVersion": "networking.k8s.io/v1", "kind": "Ingress",
            "metadata": {"name": "foo", "namespace": "default"}, "spec": base}


def _path(**fields):
    return _ingress(rules=[{"host": "foo.bar.com", "http": {"paths": [
        {"path": "/foo", "pathType": "Prefix", "backend": _backend(), **fields}]}}])


def test_ingress_needs_rules_or_default_backend():
    # TestValidateIngress "both backend and rules missing"
    [cause] = validate(_ingress(rules=None))
    assert cause.field == "spec" and cause.message.endswith(
        "either `defaultBackend` or `rules` must be specified")


def test_valid_ingress():
    assert validate(_ingress()) == []
    assert validate(_ingress(rules=[], defaultBackend=_backend())) == []
    assert validate(_ingress(rules=[{"host": "*.bar.com", "http": {"paths": [
        {"pathType": "ImplementationSpecific", "backend": _backend(name="svc")}]}}])) == []


@pytest.mark.parametrize("ingress, expected", [
    # "invalid path type" / pathType required (TestValidateIngressCreate)
    (_path(pathType="Wrong"),
     ['spec.rules[0].http.paths[0].pathType: Unsupported value: "Wrong": supported values: '
      '"Exact", "ImplementationSpecific", "Prefix"']),
    (_path(pathType=None),
     ["spec.rules[0].http.paths[0].pathType: Required value: pathType must be specified"]),
    # TestValidateIngressRuleValue: Prefix/Exact paths are absolute, without '//'
    (_path(path="foo"),
     ['spec.rules[0].http.paths[0].path: Invalid value: "foo": must be an absolute path']),
    (_path(path="/foo//bar"),
     ["spec.rules[0].http.paths[0].path: Invalid value: \"/foo//bar\": must not contain '//'"]),
    # "backend (v1) with both service and resource"
    (_path(backend={**_backend(), "resource": {"kind": "Bucket", "name": "b"}}),
     ['spec.rules[0].http.paths[0].backend: Invalid value: "": cannot set both resource and '
      'service backends']),
    (_path(backend={"service": {"name": "web", "port": {}}}),
     ["spec.rules[0].http.paths[0].backend: Required value: port name or number is required"]),
    (_path(backend={"service": {"name": "web", "port": {"name": "http", "number": 80}}}),
     ['spec.rules[0].http.paths[0].backend: Invalid value: "": cannot set both port name & '
      'port number']),
    (_path(backend={"service": {"port": {"number": 80}}}),
     ["spec.rules[0].http.paths[0].backend.service.name: Required value"]),
    # "spec.rules[0].host: Invalid value: ... must be a DNS name, not an IP address"
    (_ingress(rules=[{"host": "127.0.0.1"}]),
     ['spec.rules[0].host: Invalid value: "127.0.0.1": must be a DNS name, not an IP address']),
])
def test_invalid_ingress(ingress, expected):
    assert _messages(validate(ingress)) == expected


def _ingress_class(**spec):
    return {"apiVersion": "networking.k8s.io/v1", "kind": "IngressClass",
            "metadata": {"name": "nginx"}, "spec": {"controller": "foo.co/bar", **spec}}


def test_ingress_class():
    # TestValidateIngressClass "valid name, valid controller" / "invalid controller"
    assert validate(_ingress_class()) == []
    assert _messages(validate(_ingress_class(controller="foo"))) == [
        'spec.controller: Invalid value: "foo": must be a domain-prefixed path (such as '
        '"acme.io/foo")']
    # TestValidateIngressClassUpdate "invalid name, valid controller" (controller immutable)
    assert _messages(validate_update(_ingress_class(controller="foo.co/baz"), _ingress_class())) == [
        'spec.controller: Invalid value: "foo.co/baz": field is immutable']


def _policy(**spec):
    return {"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
            "metadata": {"name": "bar", "namespace": "default"},
            "spec": {"podSelector": {"matchLabels": {"a": "b"}}, **spec}}


def test_network_policy_defaults():
    # TestSetDefaultNetworkPolicy: Ingress only without egress rules, both with them; TCP ports
    assert defaulted(_policy())["spec"]["policyTypes"] == ["Ingress"]
    out = defaulted(_policy(ingress=[{"ports": [{"port": 80}]}], egress=[{}]))
    assert out["spec"]["policyTypes"] == ["Ingress", "Egress"]
    assert out["spec"]["ingress"][0]["ports"][0]["protocol"] == "TCP"
    assert defaulted(_policy(policyTypes=["Egress"]))["spec"]["policyTypes"] == ["Egress"]


def test_valid_network_policy():
    assert validate(_policy(ingress=[{"ports": [{"port": 80, "endPort": 90}, {"port": "http"}],
                                      "from": [{"ipBlock": {"cidr": "192.168.0.0/16",
                                                            "except": ["192.168.3.0/24"]}}]}])) == []


@pytest.mark.parametrize("spec, expected", [
    # TestValidateNetworkPolicy "invalid ingress.ports.protocol"
    ({"ingress": [{"ports": [{"protocol": "FOO", "port": 80}]}]},
     ['spec.ingress[0].ports[0].protocol: Unsupported value: "FOO": supported values: "SCTP", '
      '"TCP", "UDP"']),
    ({"ingress": [{"ports": [{"port": 0}]}]},
     ["spec.ingress[0].ports[0].port: Invalid value: 0: must be between 1 and 65535, inclusive"]),
    ({"ingress": [{"ports": [{"port": 80, "endPort": 70}]}]},
     ["spec.ingress[0].ports[0].endPort: Invalid value: 80: must be greater than or equal to "
      "`port`"]),
    ({"ingress": [{"ports": [{"port": "http", "endPort": 90}]}]},
     ["spec.ingress[0].ports[0].endPort: Invalid value: 90: may not be specified when `port` "
      "is non-numeric"]),
    # "missing from and to type" / "invalid ingress.from.ipBlock"
    ({"ingress": [{"from": [{}]}]},
     ["spec.ingress[0].from[0]: Required value: must specify a peer"]),
    ({"ingress": [{"from": [{"ipBlock": {"cidr": "192.168.1.1/24",
                                         "except": ["192.168.2.0/24"]}}]}]},
     ['spec.ingress[0].from[0].ipBlock.except[0]: Invalid value: "192.168.2.0/24": must be a '
      'strict subset of `cidr`']),
    ({"egress": [{"to": [{"ipBlock": {"cidr": "foo"}}]}]},
     ['spec.egress[0].to[0].ipBlock.cidr: Invalid value: "foo": must be a valid CIDR value, '
      '(e.g. 10.9.8.0/24 or 2001:db8::/64)']),
    ({"ingress": [{"from": [{"podSelector": {}, "ipBlock": {"cidr": "10.0.0.0/8"}}]}]},
     ["spec.ingress[0].from[0]: Forbidden: may not specify both ipBlock and another peer"]),
    ({"policyTypes": ["foo"]},
     ['spec.policyTypes[0]: Unsupported value: "foo": supported values: "Ingress", "Egress"']),
])
def test_invalid_network_policy(spec, expected):
    assert _messages(validate(_policy(**spec))) == expected


def _capacity(**fields):
    return {"apiVersion": "storage.k8s.io/v1", "kind": "CSIStorageCapacity",
            "metadata": {"name": "foo", "namespace": "default"},
            "storageClassName": "bar", "capacity": "1Gi", **fields}


def test_csi_storage_capacity():
    # TestCSIStorageCapacityValidation (pkg/apis/storage/validation/validation_test.go)
    assert validate(_capacity()) == []
    assert [c.field for c in validate(_capacity(storageClassName=""))] == ["storageClassName"]
    assert _messages(validate(_capacity(capacity="-1"))) == [
        'capacity: Invalid value: "-1": must be greater than or equal to 0']
    assert _messages(validate_update(_capacity(storageClassName="baz"), _capacity())) == [
        'storageClassName: Invalid value: "baz": field is immutable']
