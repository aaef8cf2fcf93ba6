"""Endpoints and EndpointSlice validation (TestValidateEndpointsCreate in
pkg/apis/core/validation/validation_test.go, TestValidateEndpointSlice in
pkg/apis/discovery/validation/validation_test.go)."""

import pytest

from kvert.api.validation import validate, validate_update


def _messages(causes):
    return [f"{c.field}: {c.message}" for c in causes]


def _slice(**fields):
    return {"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
            "metadata": {"name": "hello", "namespace": "default"},
            "addressType": "IPv4", "endpoints": [{"addresses": ["10.1.2.3"]}],
            "ports": [{"name": "http", "port": 80, "protocol": "TCP"}], **fields}


def test_valid_slice_and_placeholder():
    assert validate(_slice()) == []
    assert validate(_slice(endpoints=None, ports=[])) == []


@pytest.mark.parametrize("fields, expected", [
    ({"addressType": "IP"},
     ['addressType: Unsupported value: "IP": supported values: "FQDN", "IPv4", "IPv6"']),
    ({"endpoints": [{"addresses": []}]},
     ["endpoints[0].addresses: Required value: must contain at least 1 address"]),
    ({"endpoints": [{"addresses": ["123.456.789.012"]}]},
     ['endpoints[0].addresses[0]: Invalid value: "123.456.789.012": must be a valid IP address, '
      '(e.g. 10.9.8.7 or 2001:db8::ffff)']),
    ({"ports": [{"name": "http", "port": 80}, {"name": "http", "port": 81}]},
     ['ports[1].name: Duplicate value: "http"']),
    ({"ports": [{"name": "x", "port": 80, "protocol": "HTTP"}]},
     ['ports[0].protocol: Unsupported value: "HTTP": supported values: "SCTP", "TCP", "UDP"']),
])
def test_invalid_slices(fields, expected):
    assert _messages(validate(_slice(**fields))) == expected


def test_address_type_is_immutable():
    old = _slice()
    old["metadata"]["resourceVersion"] = "1"
    new = _slice(addressType="IPv6", endpoints=[{"addresses": ["::1"]}])
    new["metadata"]["resourceVersion"] = "1"
    assert 'addressType: Invalid value: "IPv6": field is immutable' in \
        _messages(validate_update(new, old))


def test_endpoints():
    ep = {"apiVersion": "v1", "kind": "Endpoints", "metadata": {"name": "mysvc", "namespace": "ns"},
          "subsets": [{"addresses": [{"ip": "10.10.1.1"}], "ports": [{"name": "a", "port": 8675,
                                                                       "protocol": "TCP"}]}]}
    assert validate(ep) == []
    ep["subsets"][0]["addresses"][0]["ip"] = "[2001:db8::1]"
    ep["subsets"][0]["ports"].append({"port": 0, "protocol": "TCP"})
    assert _messages(validate(ep)) == [
        'subsets[0].addresses[0].ip: Invalid value: "[2001:db8::1]": must be a valid IP address, '
        '(e.g. 10.9.8.7 or 2001:db8::ffff)',
        "subsets[0].ports[1].name: Required value",
        "subsets[0].ports[1].port: Invalid value: 0: must be between 1 and 65535, inclusive"]
