"""resource.k8s.io/v1 validation, defaulting and merge semantics, and the pod's resource claims.

Expectations are upstream's: the cases of ``pkg/apis/resource/validation/
validation_resourceclaim_test.go`` (TestValidateClaim, TestValidateClaimUpdate), and where a
rule has no test case at hand, the path and message written in ``pkg/apis/resource/
validation/validation.go`` / ``pkg/apis/core/validation/validation.go`` (cited per test).
The module functions are called on undefaulted objects, as the Go tests call the validators;
``validation.validate`` (what the registry runs) defaults first.
"""

from __future__ import annotations

import copy

import pytest

from kvert.api import validation
from kvert.api.defaults import defaulted
from kvert.api.patchmeta import patch_meta
from kvert.api.validation import dra

DNS_LABEL_MSG = ("a lowercase RFC 1123 label must consist of lower case alphanumeric characters "
                 "or '-', and must start and end with an alphanumeric character (e.g. 'my-name',"
                 "  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')")
SUBDOMAIN_MSG = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric "
                 "characters, '-' or '.', and must start and end with an alphanumeric character "
                 "(e.g. 'example.com', regex used for validation is "
                 "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')")
REF_MSG = ("must be the name of a request in the claim or the name of a request and a subrequest "
           "separated by '/'")
GOOD = "foo"
BAD = "!@#$%^"


def claim(requests=None, **devices) -> dict:
    """``testClaim(goodName, goodNS, validClaimSpec)``: one exact request of class "foo"."""
    if requests is None:
        requests = [{"name": GOOD, "exactly": {"deviceClassName": GOOD,
                                               "allocationMode": "ExactCount", "count": 1}}]
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
            "metadata": {"name": GOOD, "namespace": "kube-system"},
            "spec": {"devices": {"requests": requests, **devices}}}


def first_available_claim() -> dict:
    """``validClaimSpecWithFirstAvailable``: request foo with subrequests bar and baz."""
    return claim([{"name": GOOD, "firstAvailable": [
        {"name": "bar", "deviceClassName": GOOD, "allocationMode": "ExactCount", "count": 1},
        {"name": "baz", "deviceClassName": GOOD, "allocationMode": "ExactCount", "count": 1}]}])


def opaque(parameters) -> dict:
    return {"opaque": {"driver": "dra.example.com", "parameters": parameters}}


def causes(errs) -> list[tuple[str, str]]:
    return [(c.field, c.message) for c in errs]


# -- ResourceClaim ----------------------------------------------------------------------------

def test_valid_claims():
    """TestValidateClaim/good-claim, generate-name, prioritized-list-valid, valid-request and
    the prioritized-list-*-with-{subrequest,parent-request}-reference cases."""
    assert dra.validate_resource_claim(claim()) == []
    c = claim()
    c["metadata"]["generateName"] = "pvc-"
    assert dra.validate_resource_claim(c) == []
    c = first_available_claim()
    assert dra.validate_resource_claim(c) == []
    for ref in ("foo/bar", "foo"):
        c = first_available_claim()
        c["spec"]["devices"]["config"] = [{"requests": [ref], **opaque({"kind": "foo"})}]
        c["spec"]["devices"]["constraints"] = [{"requests": [ref],
                                                "matchAttribute": "dra.example.com/driverVersion"}]
        assert dra.validate_resource_claim(c) == [], ref
    c = claim()
    reqs = c["spec"]["devices"]["requests"]
    reqs += [dict(copy.deepcopy(reqs[0]), name=f"foo{i}") for i in range(1, 32)]
    c["spec"]["devices"]["constraints"] = [{"matchAttribute": "foo/bar"}] * 32
    c["spec"]["devices"]["config"] = [opaque({"kind": "foo"})] * 32
    assert dra.validate_resource_claim(c) == []


def test_claim_metadata():
    """TestValidateClaim/missing-name, bad-name, missing-namespace."""
    c = claim()
    c["metadata"]["name"] = ""
    assert causes(dra.validate_resource_claim(c)) == [
        ("metadata.name", "Required value: name or generateName is required")]
    c["metadata"]["name"] = BAD
    assert causes(dra.validate_resource_claim(c)) == [
        ("metadata.name", f'Invalid value: "{BAD}": {SUBDOMAIN_MSG}')]
    c = claim()
    del c["metadata"]["namespace"]
    assert causes(dra.validate_resource_claim(c)) == [("metadata.namespace", "Required value")]


def test_class_name():
    """TestValidateClaim/bad-classname, missing-classname."""
    c = claim()
    c["spec"]["devices"]["requests"][0]["exactly"]["deviceClassName"] = BAD
    assert causes(dra.validate_resource_claim(c)) == [
        ("spec.devices.requests[0].exactly.deviceClassName", f'Invalid value: "{BAD}": {SUBDOMAIN_MSG}')]
    c["spec"]["devices"]["requests"][0]["exactly"]["deviceClassName"] = ""
    assert causes(dra.validate_resource_claim(c)) == [
        ("spec.devices.requests[0].exactly.deviceClassName", "Required value")]


def test_allocation_mode():
    """TestValidateClaim/allocation-mode."""
    c = claim()
    good = c["spec"]["devices"]["requests"][0]
    reqs = c["spec"]["devices"]["requests"]
    for suffix, mode, count in (("2", "All", 0), ("3", "ExactCount", -1), ("4", "other", 1),
                                ("5", "All", 2), ("", "ExactCount", 1)):
        reqs.append({"name": GOOD + suffix,
                     "exactly": dict(good["exactly"], allocationMode=mode, count=count)})
    p = "spec.devices.requests"
    assert causes(dra.validate_resource_claim(c)) == [
        (f"{p}[2].exactly.count", "Invalid value: -1: must be greater than zero"),
        (f"{p}[3].exactly.allocationMode",
         'Unsupported value: "other": supported values: "All", "ExactCount"'),
        (f"{p}[4].exactly.count", "Invalid value: 2: must not be specified when allocationMode is 'All'"),
        (f"{p}[5].name", 'Duplicate value: "foo"'),
    ]


def test_opaque_configuration():
    """TestValidateClaim/configuration: missing (empty or null) parameters are required, more
    than 10 Ki are too long; exactly 10 Ki is fine. kvert measures the compact JSON encoding
    (as kubectl sends it), upstream's case writes '{"str": "...' with a space: one byte more."""
    fits = {"str": "x" * (10 * 1024 - 8 - 2)}
    c = claim(config=[opaque(None), opaque(fits), opaque({"str": fits["str"] + "x"})])
    assert causes(dra.validate_resource_claim(c)) == [
        ("spec.devices.config[0].opaque.parameters", "Required value"),
        ("spec.devices.config[2].opaque.parameters", "Too long: may not be more than 10240 bytes")]
    # not an object (validation.go validateRawExtension)
    c = claim(config=[opaque("hello-world")])
    assert causes(dra.validate_resource_claim(c)) == [
        ("spec.devices.config[0].opaque.parameters",
         'Invalid value: "<value omitted>": must be a valid JSON object')]
    # validation.go validateDeviceConfiguration: opaque is required
    assert causes(dra.validate_resource_claim(claim(config=[{"requests": []}]))) == [
        ("spec.devices.config[0].opaque", "Required value")]


def test_cel_expression_length():
    """TestValidateClaim/CEL-length: 10 Ki is the longest expression."""
    c = claim()
    reqs = c["spec"]["devices"]["requests"]
    expression = 'device.driver == ""'
    ok = expression.replace('""', '"' + "x" * (10 * 1024 - len(expression)) + '"')
    long = expression.replace('""', '"' + "x" * (10 * 1024 - len(expression) + 1) + '"')
    reqs.append({"name": "foo-2", "exactly": dict(reqs[0]["exactly"], selectors=[
        {"cel": {"expression": ok}}, {"cel": {"expression": long}}])})
    assert causes(dra.validate_resource_claim(c)) == [
        ("spec.devices.requests[1].exactly.selectors[1].cel.expression",
         "Too long: may not be more than 10240 bytes")]


def test_too_many_entries_are_reported_once():
    """TestValidateClaim/invalid-request (the size limits): 33 requests, constraints, configs."""
    c = claim()
    reqs = c["spec"]["devices"]["requests"]
    reqs += [dict(copy.deepcopy(reqs[0]), name=f"foo{i}") for i in range(1, 33)]
    c["spec"]["devices"]["constraints"] = [{"matchAttribute": "foo/bar"}] * 33
    c["spec"]["devices"]["config"] = [opaque({"kind": "foo"})] * 33
    assert causes(dra.validate_resource_claim(c)) == [
        ("spec.devices.requests", "Too many: 33: must have at most 32 items"),
        ("spec.devices.constraints", "Too many: 33: must have at most 32 items"),
        ("spec.devices.config", "Too many: 33: must have at most 32 items")]


def test_request_references():
    """TestValidateClaim/invalid-spec (request names) and
    prioritized-list-{config,constraints}-requests-with-invalid-subrequest-reference."""
    c = claim(constraints=[{"requests": [GOOD, BAD], "matchAttribute": "dra.example.com/a"}],
              config=[{"requests": [GOOD, BAD], **opaque({"kind": "foo"})}])
    assert causes(dra.validate_resource_claim(c)) == [
        ("spec.devices.constraints[0].requests[1]", f'Invalid value: "{BAD}": {DNS_LABEL_MSG}'),
        ("spec.devices.constraints[0].requests[1]", f'Invalid value: "{BAD}": {REF_MSG}'),
        ("spec.devices.config[0].requests[1]", f'Invalid value: "{BAD}": {DNS_LABEL_MSG}'),
        ("spec.devices.config[0].requests[1]", f'Invalid value: "{BAD}": {REF_MSG}')]
    c = first_available_claim()
    c["spec"]["devices"]["config"] = [{"requests": ["foo/baz", "foo/nope"],
                                       **opaque({"kind": "foo"})}]
    assert causes(dra.validate_resource_claim(c)) == [
        ("spec.devices.config[0].requests[1]", f'Invalid value: "foo/nope": {REF_MSG}')]
    # validation.go validateDeviceConstraint: a constraint needs an attribute
    assert causes(dra.validate_resource_claim(claim(constraints=[{"requests": [GOOD]}]))) == [
        ("spec.devices.constraints[0].matchAttribute", "Required value")]


def test_first_available():
    """TestValidateClaim/prioritized-list-invalid-nested-request, -nested-requests-same-name,
    -too-many-subrequests; validation.go validateDeviceRequest for neither/both set."""
    c = first_available_claim()
    c["spec"]["devices"]["requests"][0]["firstAvailable"][0] = {"name": BAD}
    p = "spec.devices.requests[0].firstAvailable[0]"
    assert causes(dra.validate_resource_claim(c)) == [
        (f"{p}.name", f'Invalid value: "{BAD}": {DNS_LABEL_MSG}'),
        (f"{p}.deviceClassName", "Required value"),
        (f"{p}.allocationMode", 'Unsupported value: "": supported values: "All", "ExactCount"')]
    c = first_available_claim()
    c["spec"]["devices"]["requests"][0]["firstAvailable"][1]["name"] = "bar"
    assert causes(dra.validate_resource_claim(c)) == [
        ("spec.devices.requests[0].firstAvailable[1].name", 'Duplicate value: "bar"')]
    c = claim([{"name": GOOD, "firstAvailable": [
        {"name": f"subreq-{i}", "deviceClassName": GOOD, "allocationMode": "ExactCount",
         "count": 1} for i in range(9)]}])
    assert causes(dra.validate_resource_claim(c)) == [
        ("spec.devices.requests[0].firstAvailable", "Too many: 9: must have at most 8 items")]
    assert causes(dra.validate_resource_claim(claim([{"name": GOOD}]))) == [
        ("spec.devices.requests[0]",
         "Required value: exactly one of `exactly` or `firstAvailable` is required")]
    both = first_available_claim()
    both["spec"]["devices"]["requests"][0]["exactly"] = {"deviceClassName": GOOD}
    assert causes(dra.validate_resource_claim(both)) == [
        ("spec.devices.requests[0]", "Invalid value: null: exactly one of `exactly` or "
                                     "`firstAvailable` is required, but multiple fields are set")]


def test_device_tolerations():
    """validation.go validateDeviceToleration."""
    c = claim()
    c["spec"]["devices"]["requests"][0]["exactly"]["tolerations"] = [
        {"key": "a", "operator": "Exists", "value": "x"},
        {"operator": "Smaller"},
        {"operator": "Equal", "effect": "PreferNoSchedule"}]
    p = "spec.devices.requests[0].exactly.tolerations"
    assert causes(dra.validate_resource_claim(c)) == [
        (f"{p}[0].value", 'Invalid value: "x": must be empty for operator `Exists`'),
        (f"{p}[1].operator", 'Unsupported value: "Smaller": supported values: "Equal", "Exists"'),
        (f"{p}[2].effect", 'Unsupported value: "PreferNoSchedule": supported values: '
                           '"NoExecute", "NoSchedule", "None"')]


def test_claim_spec_is_immutable():
    """TestValidateClaimUpdate/valid-no-op-update, invalid-update."""
    old = claim()
    old["metadata"]["resourceVersion"] = "1"
    assert validation.validate_update(copy.deepcopy(old), old) == []
    new = copy.deepcopy(old)
    new["spec"]["devices"]["requests"][0]["exactly"]["deviceClassName"] += "2"
    [cause] = validation.validate_update(new, old)
    assert cause.field == "spec" and cause.message.endswith(": field is immutable")


def allocated(reserved=(), **status) -> dict:
    c = claim()
    c["metadata"]["resourceVersion"] = "1"
    c["status"] = {"allocation": {"devices": {"results": [
        {"request": GOOD, "driver": GOOD, "pool": GOOD, "device": GOOD}]}}, **status}
    if reserved:
        c["status"]["reservedFor"] = [{"resource": "pods", "name": n, "uid": n} for n in reserved]
    return c


def test_claim_status_rules():
    """validation.go validateResourceClaimStatusUpdate."""
    old = claim()
    new = allocated(["a", "b"])
    assert validation.validate_status_update(new, old) == []
    # reservedFor without an allocation
    new = copy.deepcopy(old)
    new["status"] = {"reservedFor": [{"resource": "pods", "name": "a", "uid": "a"}]}
    assert causes(validation.validate_status_update(new, old)) == [
        ("status.reservedFor", "Forbidden: may not be specified when `allocated` is not set")]
    # entries need resource, name and uid, and unique uids
    new = allocated()
    new["status"]["reservedFor"] = [{"resource": "pods", "name": "a", "uid": "u"}, {},
                                    {"resource": "pods", "name": "b", "uid": "u"}]
    assert causes(validation.validate_status_update(new, old)) == [
        ("status.reservedFor[1].resource", "Required value"),
        ("status.reservedFor[1].name", "Required value"),
        ("status.reservedFor[1].uid", "Required value"),
        ("status.reservedFor[2].uid", 'Duplicate value: "u"')]
    # at most 256 consumers
    new = allocated([f"p{i}" for i in range(257)])
    assert causes(validation.validate_status_update(new, old)) == [
        ("status.reservedFor", "Too many: 257: must have at most 256 items")]
    # a set allocation cannot change, only go
    old = allocated()
    new = copy.deepcopy(old)
    new["status"]["allocation"]["devices"]["results"][0]["device"] = "other"
    [cause] = validation.validate_status_update(new, old)
    assert cause.field == "status.allocation" and cause.message.endswith("field is immutable")
    new["status"] = {}
    assert validation.validate_status_update(new, old) == []
    # no new consumers while the claim is being deleted
    old = allocated(["a"])
    old["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    new = allocated(["a", "b"])
    new["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    assert causes(validation.validate_status_update(new, old)) == [
        ("status.reservedFor", "Forbidden: new entries may not be added while "
                               "`deallocationRequested` or `deletionTimestamp` are set")]
    # a new allocation may only name requests of the claim, and its devices must be named
    new = allocated()
    new["status"]["allocation"]["devices"]["results"][0].update(request="nope", pool="", device=BAD)
    assert causes(validation.validate_status_update(new, claim())) == [
        ("status.allocation.devices.results[0].request", f'Invalid value: "nope": {REF_MSG}'),
        ("status.allocation.devices.results[0].pool", "Required value"),
        ("status.allocation.devices.results[0].device", f'Invalid value: "{BAD}": {DNS_LABEL_MSG}')]
    # device status entries must be allocated devices
    new = allocated(devices=[{"driver": GOOD, "pool": GOOD, "device": "other"}])
    assert causes(validation.validate_status_update(new, claim())) == [
        ("status.devices[0]", "Invalid value: foo/foo/other: must be an allocated device in the "
                              "claim")]


def test_claim_defaults():
    """pkg/apis/resource/v1/defaults.go: ExactCount with count 1; toleration operator Equal."""
    c = claim([{"name": "a", "exactly": {"deviceClassName": GOOD,
                                         "tolerations": [{"key": "k"}]}},
               {"name": "b", "exactly": {"deviceClassName": GOOD, "allocationMode": "All"}},
               {"name": "c", "firstAvailable": [{"name": "x", "deviceClassName": GOOD}]}])
    reqs = defaulted(c)["spec"]["devices"]["requests"]
    assert reqs[0]["exactly"] == {"deviceClassName": GOOD, "allocationMode": "ExactCount",
                                  "count": 1, "tolerations": [{"key": "k", "operator": "Equal"}]}
    assert reqs[1]["exactly"] == {"deviceClassName": GOOD, "allocationMode": "All"}
    assert reqs[2]["firstAvailable"][0] == {"name": "x", "deviceClassName": GOOD,
                                            "allocationMode": "ExactCount", "count": 1}
    # so the API accepts a request without mode and count
    assert validation.validate(claim([{"name": "a", "exactly": {"deviceClassName": GOOD}}])) == []


# -- ResourceClaimTemplate, DeviceClass ---------------------------------------------------------

def template(**meta) -> dict:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
            "metadata": {"name": GOOD, "namespace": "default"},
            "spec": {"metadata": meta, "spec": claim()["spec"]}}


def test_template():
    """validation.go ValidateResourceClaimTemplate: only labels and annotations in the claim
    metadata (ValidateTemplateObjectMeta), the claim spec as for a claim, immutable."""
    assert dra.validate_resource_claim_template(template(labels={"a": "b"})) == []
    assert causes(dra.validate_resource_claim_template(template(name="x", finalizers=["a/b"]))) == [
        ("spec.metadata.name", "Forbidden: cannot be set"),
        ("spec.metadata.finalizers", "Forbidden: cannot be set")]
    bad = template()
    bad["spec"]["spec"]["devices"]["requests"][0]["exactly"]["deviceClassName"] = ""
    assert causes(dra.validate_resource_claim_template(bad)) == [
        ("spec.spec.devices.requests[0].exactly.deviceClassName", "Required value")]
    old = template()
    new = template(labels={"changed": "yes"})
    [cause] = validation.validate_update(new, old)
    assert cause.field == "spec" and cause.message.endswith("field is immutable")


def device_class(**spec) -> dict:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": GOOD},
            "spec": spec}


def test_device_class():
    """validation.go ValidateDeviceClass: cluster-scoped, selectors need cel, config needs
    opaque, extendedResourceName an extended resource name; the spec may change."""
    assert validation.validate(device_class(selectors=[{"cel": {"expression": "true"}}])) == []
    ns = device_class()
    ns["metadata"]["namespace"] = "default"
    assert causes(validation.validate(ns)) == [
        ("metadata.namespace", "Forbidden: not allowed on this type")]
    assert causes(validation.validate(device_class(
        selectors=[{}], config=[{}], extendedResourceName="cpu"))) == [
        ("spec.selectors[0].cel", "Required value"),
        ("spec.config[0].opaque", "Required value"),
        ("spec.extendedResourceName", 'Invalid value: "cpu": must be a valid extended resource '
                                      "name")]
    old = device_class()
    old["metadata"]["resourceVersion"] = "1"
    assert validation.validate_update(device_class(selectors=[{"cel": {"expression": "true"}}]),
                                      old) == []


def test_cel_selectors_are_compiled_when_new():
    """validation.go validateCELExpression / convertCELErrorToValidationError: a selector that
    does not compile is an Invalid value with cel-go's report (the scheduler's CEL module
    compiles it); validateDeviceClassSpec treats unchanged selectors as stored: not re-checked.
    (TestValidateClaim/CEL-compile-errors needs cel-go's type checker, which kvert lacks: its
    expression indexes a map with a bool; an undeclared name is used instead.)"""
    c = claim()
    c["spec"]["devices"]["requests"][0]["exactly"]["selectors"] = [
        {"cel": {"expression": 'device.driver == "dra.example.com"'}},
        {"cel": {"expression": "device.driver == nope"}}]
    [cause] = dra.validate_resource_claim(c)
    assert cause.field == "spec.devices.requests[0].exactly.selectors[1].cel.expression"
    assert cause.message == (
        'Invalid value: "device.driver == nope": compilation failed: ERROR: <input>:1:18: '
        "undeclared reference to 'nope' (in container '')\n | device.driver == nope\n"
        " | .................^")
    broken = device_class(selectors=[{"cel": {"expression": "device.driver =="}}])
    [cause] = validation.validate(broken)
    assert cause.field == "spec.selectors[0].cel.expression"
    assert cause.message.startswith('Invalid value: "device.driver ==": compilation failed: ')
    old = copy.deepcopy(broken)
    old["metadata"]["resourceVersion"] = "1"
    new = copy.deepcopy(old)
    new["metadata"]["labels"] = {"a": "b"}
    assert validation.validate_update(new, old) == []


# -- ResourceSlice ------------------------------------------------------------------------------

def resource_slice(**spec) -> dict:
    base = {"driver": "dra.example.com", "nodeName": "worker-1",
            "pool": {"name": "worker-1", "generation": 1, "resourceSliceCount": 1}}
    base.update(spec)
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
            "metadata": {"name": "worker-1-dra.example.com"}, "spec": base}


def test_resource_slice_node_selection():
    """validation.go validateResourceSliceSpec: exactly one of the four node selections."""
    assert dra.validate_resource_slice(resource_slice()) == []
    sel = {"nodeSelectorTerms": [{"matchExpressions": [{"key": "a", "operator": "Exists"}]}]}
    assert dra.validate_resource_slice(resource_slice(nodeName=None, nodeSelector=sel)) == []
    assert causes(dra.validate_resource_slice(resource_slice(nodeName=None))) == [
        ("spec", "Required value: exactly one of `nodeName`, `nodeSelector`, `allNodes`, "
                 "`perDeviceNodeSelection` is required")]
    assert causes(dra.validate_resource_slice(resource_slice(allNodes=True))) == [
        ("spec", 'Invalid value: "{`nodeName`, `allNodes`}": exactly one of `nodeName`, '
                 "`nodeSelector`, `allNodes`, `perDeviceNodeSelection` is required, but multiple "
                 "fields are set")]
    two = {"nodeSelectorTerms": sel["nodeSelectorTerms"] * 2}
    [cause] = dra.validate_resource_slice(resource_slice(nodeName=None, nodeSelector=two))
    assert cause.field == "spec.nodeSelector.nodeSelectorTerms"
    assert cause.message.endswith("must have exactly one node selector term")
    assert causes(dra.validate_resource_slice(resource_slice(nodeName="", allNodes=False))) == [
        ("spec.nodeName", 'Invalid value: "": must be either unset or set to a non-empty string'),
        ("spec.allNodes", "Invalid value: false: must be either unset or set to true"),
        ("spec", "Required value: exactly one of `nodeName`, `nodeSelector`, `allNodes`, "
                 "`perDeviceNodeSelection` is required")]


def test_resource_slice_driver_and_pool():
    """validation.go validateResourcePool and ValidateCSIDriverName."""
    s = resource_slice(driver="", pool={"name": "", "generation": -1, "resourceSliceCount": 0})
    assert causes(dra.validate_resource_slice(s)) == [
        ("spec.driver", "Required value"),
        ("spec.driver", f'Invalid value: "": {SUBDOMAIN_MSG}'),
        ("spec.pool.name", "Required value"),
        ("spec.pool.resourceSliceCount", "Invalid value: 0: must be greater than zero"),
        ("spec.pool.generation", "Invalid value: -1: must be greater than or equal to zero")]
    assert dra.validate_resource_slice(resource_slice(pool={
        "name": "a.example.com/b", "generation": 0, "resourceSliceCount": 2})) == []


def test_resource_slice_devices():
    """validation.go validateDevice / validateDeviceAttribute / validateQualifiedName."""
    devices = [
        {"name": "gpu-0", "attributes": {"model": {"string": "a100"},
                                         "dra.example.com/index": {"int": 0},
                                         "driverVersion": {"version": "1.2.3-rc.1+build.5"}},
         "capacity": {"memory": {"value": "40Gi"}}},
        {"name": "gpu-0", "attributes": {"empty": {}, "two": {"int": 1, "bool": True},
                                         "ver": {"version": "1.2"}, "9lives": {"bool": True},
                                         "s": {"string": "x" * 65}}},
    ]
    p = "spec.devices[1]"
    assert causes(dra.validate_resource_slice(resource_slice(devices=devices))) == [
        (f"{p}.attributes[empty]", 'Invalid value: "": exactly one value must be specified'),
        (f"{p}.attributes[two]", 'Invalid value: {"bool":true,"int":1}: exactly one value must '
                                 "be specified"),
        (f"{p}.attributes[ver].version",
         'Invalid value: "1.2": must be a string compatible with semver.org spec 2.0.0'),
        (f"{p}.attributes", "Invalid value: \"9lives\": a valid C identifier must start with "
                            "alphabetic character or '_', followed by a string of alphanumeric "
                            "characters or '_' (e.g. 'my_name',  or 'MY_NAME',  or 'MyName', "
                            "regex used for validation is '[A-Za-z_][A-Za-z0-9_]*')"),
        (f"{p}.attributes[s].string", "Too long: may not be more than 64 bytes"),
        ("spec.devices[1].name", 'Duplicate value: "gpu-0"')]
    # per-device node selection needs the slice to say so
    devices = [{"name": "d", "nodeName": "worker-2"}]
    assert causes(dra.validate_resource_slice(resource_slice(devices=devices))) == [
        ("spec.devices[0]", "Invalid value: null: `nodeName`, `nodeSelector` and `allNodes` can "
                            "only be set if `perDeviceNodeSelection` is set to true in the "
                            "ResourceSlice spec")]
    assert dra.validate_resource_slice(resource_slice(
        nodeName=None, perDeviceNodeSelection=True, devices=devices)) == []
    # 128 devices, 64 once one has taints
    many = [{"name": f"d{i}"} for i in range(129)]
    assert causes(dra.validate_resource_slice(resource_slice(devices=many))) == [
        ("spec.devices", "Too many: 129: must have at most 128 items")]
    tainted = [{"name": f"d{i}"} for i in range(65)]
    tainted[0]["taints"] = [{"key": "k", "effect": "NoSchedule"}]
    assert causes(dra.validate_resource_slice(resource_slice(devices=tainted))) == [
        ("spec.devices", "Too many: 65: must have at most 64 items")]


def test_resource_slice_immutable_fields():
    """validation.go ValidateResourceSliceUpdate: driver, pool name and nodeName."""
    old = resource_slice()
    old["metadata"]["resourceVersion"] = "1"
    new = resource_slice(driver="other.example.com", nodeName="worker-2",
                         pool={"name": "worker-2", "generation": 2, "resourceSliceCount": 1})
    assert [c.field for c in validation.validate_update(new, old)] == [
        "spec.pool.name", "spec.driver", "spec.nodeName"]
    bumped = resource_slice(pool={"name": "worker-1", "generation": 2, "resourceSliceCount": 1})
    assert validation.validate_update(bumped, old) == []


# -- merge semantics ----------------------------------------------------------------------------

def test_patch_meta_of_the_dra_kinds():
    """k8s.io/api/resource/v1 types.go markers."""
    claim_gvk = ("resource.k8s.io/v1", "ResourceClaim")
    reserved = patch_meta(*claim_gvk, ("status", "reservedFor"))
    assert (reserved.strategy, reserved.merge_key, reserved.list_type, reserved.list_map_keys) == \
        ("merge", "uid", "map", ("uid",))
    devices = patch_meta(*claim_gvk, ("status", "devices"))
    assert devices.list_type == "map" and devices.list_map_keys == ("driver", "device", "pool",
                                                                    "shareID")
    assert patch_meta(*claim_gvk, ("spec", "devices", "requests")).list_type == "atomic"
    assert patch_meta("resource.k8s.io/v1", "ResourceSlice", ("spec", "devices")).list_type == \
        "atomic"
    assert patch_meta("resource.k8s.io/v1", "ResourceSlice", ("spec", "nodeSelector")).map_type \
        == "atomic"
    assert patch_meta("scheduling.k8s.io/v1alpha1", "Workload",
                      ("spec", "podGroups")).list_map_keys == ("name",)


# -- pods ---------------------------------------------------------------------------------------

def pod(claims=(), container_claims=(), name="my-pod") -> dict:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"},
            "spec": {"containers": [{"name": "c", "image": "i",
                                     "resources": {"claims": list(container_claims)}}],
                     "resourceClaims": list(claims)}}


@pytest.mark.parametrize("claims, container_claims, want", [
    ([{"name": "a", "resourceClaimName": "x"}, {"name": "b", "resourceClaimTemplateName": "t"}],
     [{"name": "a"}, {"name": "b", "request": "r"}], []),
    ([{"name": "a", "resourceClaimName": "x"}, {"name": "a", "resourceClaimName": "y"}], [],
     [("spec.resourceClaims[1].name", 'Duplicate value: "a"')]),
    ([{"name": "a"}], [],
     [("spec.resourceClaims[0]", 'Invalid value: {"name":"a"}: must specify one of: '
                                 "`resourceClaimName`, `resourceClaimTemplateName`")]),
    ([{"name": "a", "resourceClaimName": "x", "resourceClaimTemplateName": "t"}], [],
     [("spec.resourceClaims[0]", 'Invalid value: {"name":"a","resourceClaimName":"x",'
                                 '"resourceClaimTemplateName":"t"}: at most one of '
                                 "`resourceClaimName` or `resourceClaimTemplateName` may be "
                                 "specified")]),
    ([{"name": "Bad", "resourceClaimName": "x"}], [],
     [("spec.resourceClaims[0].name", f'Invalid value: "Bad": {DNS_LABEL_MSG}')]),
    ([], [{"name": "a"}],
     [("spec.containers[0].resources.claims[0]",
       'Not found: "a": must be one of the names in pod.spec.resourceClaims which is empty')]),
    ([{"name": "a", "resourceClaimName": "x"}, {"name": "b", "resourceClaimName": "x"}],
     [{"name": "c"}, {"name": "a"}, {"name": "a"}, {}],
     [("spec.containers[0].resources.claims[0]",
       'Not found: "c": must be one of the names in pod.spec.resourceClaims: a, b'),
      ("spec.containers[0].resources.claims[2]", 'Duplicate value: "a"'),
      ("spec.containers[0].resources.claims[3]", "Required value")]),
])
def test_pod_resource_claims(claims, container_claims, want):
    """core validation.go validatePodResourceClaims and validateResourceClaimNames."""
    assert causes(validation.validate(pod(claims, container_claims))) == want


def test_generated_claim_name_must_be_valid():
    """core validation.go validatePodResourceClaim: <pod>-<claim> must be a valid claim name."""
    long_name = "p" * 250
    got = causes(validation.validate(pod([{"name": "gpu", "resourceClaimTemplateName": "t"}],
                                         name=long_name)))
    assert got == [("spec.resourceClaims[0].name",
                    f'Invalid value: "{long_name}-gpu": final ResourceClaim name: must be no more '
                    "than 253 characters")]


def test_pod_resource_claim_statuses():
    """core validation.go validatePodResourceClaimStatuses (status subresource)."""
    old = pod([{"name": "a", "resourceClaimTemplateName": "t"}])
    old["metadata"]["resourceVersion"] = "1"
    new = copy.deepcopy(old)
    new["status"] = {"resourceClaimStatuses": [{"name": "a", "resourceClaimName": "my-pod-a-x"}]}
    assert validation.validate_status_update(new, old) == []
    new["status"]["resourceClaimStatuses"] += [{"name": "a"}, {"name": "z"}]
    assert causes(validation.validate_status_update(new, old)) == [
        ("status.resourceClaimStatuses[1].name", 'Duplicate value: "a"'),
        ("status.resourceClaimStatuses[2].name",
         'Invalid value: "z": must match the name of an entry in `spec.resourceClaims`')]


def test_node_declared_features_are_accepted():
    """1.35 NodeDeclaredFeatures (alpha): status.declaredFeatures is stored as written."""
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n"},
            "status": {"declaredFeatures": ["GuaranteedQoSPodCPUResize", "InPlacePodVerticalScaling"]}}
    assert validation.validate(node) == []
    old = copy.deepcopy(node)
    old["metadata"]["resourceVersion"] = "1"
    assert validation.validate_status_update(node, old) == []
