"""The DRA (resource.k8s.io/v1) and Workload (scheduling.k8s.io/v1alpha1) kinds served by the
API server: HTTP verbs and the status subresource, discovery, tables, OpenAPI (kubectl
explain) and strategic merge patch.

Printer columns and cells follow ``pkg/printers/internalversion/printers.go``
(printResourceClaim / resourceClaimState, printResourceSlice, printDeviceClass,
printResourceClaimTemplate; Workload has no printer: the default table).
"""

from __future__ import annotations

import copy

import pytest

from kvert.api import kinds
from kvert.apiserver import discovery, openapi
from kvert.apiserver.tables import column_definitions, to_table

from .kubectl_stub import StubServer, kubectl_path
from .test_server import run

NOW = 1_700_000_000
CLAIMS = "/apis/resource.k8s.io/v1/namespaces/default/resourceclaims"

CLAIM = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
         "metadata": {"name": "gpu"},
         "spec": {"devices": {"requests": [{"name": "gpu",
                                            "exactly": {"deviceClassName": "gpu"}}]}}}
ALLOCATION = {"devices": {"results": [{"request": "gpu", "driver": "gpu.example.com",
                                       "pool": "node-1", "device": "gpu-0"}]}}


def cells(key: str, obj: dict) -> list:
    return to_table(kinds.by_key(key), [obj], now=NOW, include_object="None")["rows"][0]["cells"]


def names(key: str) -> list[str]:
    return [c["name"] for c in column_definitions(kinds.by_key(key))]


# -- HTTP ----------------------------------------------------------------------------------------

def test_claim_crud_status_subresource_and_immutability(tmp_path):
    async def scenario(api, server, store):
        out = {}
        body = dict(CLAIM, status={"allocation": ALLOCATION})
        out["create"] = await api.call("POST", CLAIMS, body)
        claim = copy.deepcopy(out["create"][1])
        claim["status"] = {"allocation": ALLOCATION}
        out["main"] = await api.call("PUT", f"{CLAIMS}/gpu", claim)     # status ignored
        claim = copy.deepcopy(out["main"][1])
        claim["status"] = {"allocation": ALLOCATION,
                           "reservedFor": [{"resource": "pods", "name": "p", "uid": "u1"}]}
        out["status"] = await api.call("PUT", f"{CLAIMS}/gpu/status", claim)
        patch = {"status": {"reservedFor": [{"resource": "pods", "name": "q", "uid": "u2"}]}}
        out["merge"] = await api.call("PATCH", f"{CLAIMS}/gpu/status", patch,
                                      "application/strategic-merge-patch+json")
        changed = copy.deepcopy(out["merge"][1])
        changed["spec"]["devices"]["requests"][0]["exactly"]["deviceClassName"] = "other"
        out["spec"] = await api.call("PUT", f"{CLAIMS}/gpu", changed)
        out["table"] = await api.call("GET", CLAIMS, headers={
            "Accept": "application/json;as=Table;v=v1;g=meta.k8s.io"})
        return out

    out = run(tmp_path, scenario)
    assert out["create"][0] == 201 and "status" not in out["create"][1]
    # defaulted on the way in
    assert out["create"][1]["spec"]["devices"]["requests"][0]["exactly"] == {
        "deviceClassName": "gpu", "allocationMode": "ExactCount", "count": 1}
    assert out["main"][0] == 200 and "status" not in out["main"][1]
    assert out["status"][0] == 200 and out["status"][1]["status"]["allocation"] == ALLOCATION
    # reservedFor merges by uid under strategic merge patch
    assert sorted(r["uid"] for r in out["merge"][1]["status"]["reservedFor"]) == ["u1", "u2"]
    code, status = out["spec"]
    assert code == 422 and status["reason"] == "Invalid"
    assert status["details"]["causes"][0]["field"] == "spec"
    assert status["message"].startswith('ResourceClaim.resource.k8s.io "gpu" is invalid: spec: '
                                        "Invalid value:")
    table = out["table"][1]
    assert [c["name"] for c in table["columnDefinitions"]] == ["Name", "State", "Age"]
    assert table["rows"][0]["cells"][:2] == ["gpu", "allocated,reserved"]


def test_status_rules_reach_the_client(tmp_path):
    async def scenario(api, server, store):
        created = (await api.call("POST", CLAIMS, CLAIM))[1]
        created["status"] = {"reservedFor": [{"resource": "pods", "name": "p", "uid": "u1"}]}
        return await api.call("PUT", f"{CLAIMS}/gpu/status", created)

    code, status = run(tmp_path, scenario)
    assert code == 422
    assert status["details"]["causes"] == [{
        "reason": "FieldValueForbidden", "field": "status.reservedFor",
        "message": "Forbidden: may not be specified when `allocated` is not set"}]


def test_cluster_scoped_kinds_and_workloads(tmp_path):
    async def scenario(api, server, store):
        out = {}
        out["class"] = await api.call("POST", "/apis/resource.k8s.io/v1/deviceclasses", {
            "apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass",
            "metadata": {"name": "gpu"},
            "spec": {"selectors": [{"cel": {"expression": "device.driver == 'gpu.example.com'"}}]}})
        out["slice"] = await api.call("POST", "/apis/resource.k8s.io/v1/resourceslices", {
            "apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
            "metadata": {"name": "node-1-gpu"},
            "spec": {"driver": "gpu.example.com", "nodeName": "node-1",
                     "pool": {"name": "node-1", "generation": 0, "resourceSliceCount": 1},
                     "devices": [{"name": "gpu-0", "attributes": {"model": {"string": "a"}},
                                  "capacity": {"memory": {"value": "40Gi"}}}]}})
        out["template"] = await api.call(
            "POST", "/apis/resource.k8s.io/v1/namespaces/default/resourceclaimtemplates", {
                "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
                "metadata": {"name": "gpu"}, "spec": {"spec": CLAIM["spec"]}})
        out["workload"] = await api.call(
            "POST", "/apis/scheduling.k8s.io/v1alpha1/namespaces/default/workloads", {
                "apiVersion": "scheduling.k8s.io/v1alpha1", "kind": "Workload",
                "metadata": {"name": "job"},
                "spec": {"podGroups": [{"name": "workers", "policy": {"gang": {"minCount": 3}}}]}})
        out["pod"] = await api.call("POST", "/api/v1/namespaces/default/pods", {
            "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "w-0"},
            "spec": {"containers": [{"name": "c", "image": "i",
                                     "resources": {"claims": [{"name": "gpu"}]}}],
                     "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "gpu"}],
                     "workloadRef": {"name": "job", "podGroup": "workers"}}})
        out["unknown"] = await api.call(
            "POST", "/apis/resource.k8s.io/v1/namespaces/default/resourceclaims?fieldValidation=Strict",
            dict(CLAIM, metadata={"name": "x"}, spec={"devices": {"requests": [], "bogus": 1}}))
        return out

    out = run(tmp_path, scenario)
    for key in ("class", "slice", "template", "workload", "pod"):
        assert out[key][0] == 201, (key, out[key])
    assert out["class"][1]["metadata"]["generation"] == 1
    assert out["pod"][1]["spec"]["workloadRef"] == {"name": "job", "podGroup": "workers"}
    code, status = out["unknown"]
    assert code == 400 and 'unknown field "spec.devices.bogus"' in status["message"]


# -- discovery -----------------------------------------------------------------------------------

def test_discovery_lists_the_new_kinds():
    types = kinds.all_types()
    doc = discovery.api_resource_list(types, "resource.k8s.io", "v1")
    by_name = {r["name"]: r for r in doc["resources"]}
    assert {name: by_name[name]["namespaced"] for name in (
        "deviceclasses", "resourceclaims", "resourceclaimtemplates", "resourceslices")} == {
        "deviceclasses": False, "resourceclaims": True, "resourceclaimtemplates": True,
        "resourceslices": False}
    assert by_name["resourceclaims/status"]["verbs"] == ["get", "patch", "update"]
    assert by_name["resourceclaims"]["kind"] == "ResourceClaim"
    group = discovery.api_group(types, "scheduling.k8s.io")
    assert [v["version"] for v in group["versions"]] == ["v1", "v1alpha1"]
    assert group["preferredVersion"]["version"] == "v1"
    workloads = discovery.api_resource_list(types, "scheduling.k8s.io", "v1alpha1")
    assert [r["name"] for r in workloads["resources"]] == ["workloads"]
    names_ = [g["name"] for g in discovery.api_group_list(types)["groups"]]
    # kube-apiserver's group order: resource.k8s.io after the other built-in groups here
    assert names_.index("node.k8s.io") < names_.index("resource.k8s.io")


# -- tables --------------------------------------------------------------------------------------

@pytest.mark.parametrize("meta, status, state", [
    ({}, {}, "pending"),
    ({}, {"allocation": ALLOCATION}, "allocated"),
    ({}, {"allocation": ALLOCATION, "reservedFor": [{"resource": "pods", "name": "p",
                                                     "uid": "u"}]}, "allocated,reserved"),
    ({"deletionTimestamp": "2023-11-14T22:13:20Z"}, {}, "deleted"),
    ({"deletionTimestamp": "2023-11-14T22:13:20Z"}, {"allocation": ALLOCATION},
     "deleted,allocated"),
])
def test_resource_claim_state(meta, status, state):
    """printers.go resourceClaimState."""
    obj = {"metadata": {"name": "c", "creationTimestamp": "2023-11-14T22:12:20Z", **meta},
           "spec": {}, "status": status}
    assert cells("resource.k8s.io/resourceclaims", obj) == ["c", state, "60s"]


def test_dra_table_columns():
    assert names("resource.k8s.io/resourceclaims") == ["Name", "State", "Age"]
    assert names("resource.k8s.io/resourceslices") == ["Name", "Node", "Driver", "Pool", "Age"]
    assert names("resource.k8s.io/deviceclasses") == ["Name", "Age"]
    assert names("resource.k8s.io/resourceclaimtemplates") == ["Name", "Age"]
    assert names("scheduling.k8s.io/workloads") == ["Name", "Created At"]
    rs = {"metadata": {"name": "s", "creationTimestamp": "2023-11-14T20:13:20Z"},
          "spec": {"driver": "gpu.example.com", "nodeName": "node-1", "pool": {"name": "p"}}}
    assert cells("resource.k8s.io/resourceslices", rs) == ["s", "node-1", "gpu.example.com", "p",
                                                           "120m"]
    rs["spec"].pop("nodeName")
    assert cells("resource.k8s.io/resourceslices", rs)[1] == ""


# -- OpenAPI and kubectl ---------------------------------------------------------------------------

def test_openapi_documents_describe_the_new_kinds():
    types = kinds.all_types()
    doc = openapi.openapi_v3_document(types, "apis/resource.k8s.io/v1")
    schemas = doc["components"]["schemas"]
    claim = schemas["io.k8s.api.resource.v1.ResourceClaim"]
    assert claim["x-kubernetes-group-version-kind"] == [
        {"group": "resource.k8s.io", "kind": "ResourceClaim", "version": "v1"}]
    reserved = schemas["io.k8s.api.resource.v1.ResourceClaimStatus"]["properties"]["reservedFor"]
    assert reserved["x-kubernetes-list-type"] == "map"
    assert reserved["x-kubernetes-list-map-keys"] == ["uid"]
    assert reserved["x-kubernetes-patch-merge-key"] == "uid"
    doc = openapi.openapi_v3_document(types, "apis/scheduling.k8s.io/v1alpha1")
    spec = doc["components"]["schemas"]["io.k8s.api.scheduling.v1alpha1.WorkloadSpec"]
    assert spec["required"] == ["podGroups"]


needs_kubectl = pytest.mark.skipif(kubectl_path() is None, reason="kubectl not installed")


@pytest.fixture(scope="module")
def stub():
    server = StubServer().start()
    yield server
    server.stop()


@needs_kubectl
def test_kubectl_explain_resource_claims_and_workloads(stub, tmp_path):
    result = stub.kubectl(tmp_path, "explain", "resourceclaims.spec.devices.requests.exactly")
    assert result.returncode == 0, result.stderr
    assert "GROUP:      resource.k8s.io" in result.stdout
    assert "allocationMode\t<string>" in result.stdout
    assert "enum: ExactCount, All" in result.stdout
    result = stub.kubectl(tmp_path, "explain", "workloads.spec.podGroups.policy")
    assert result.returncode == 0, result.stderr
    assert "gang\t<GangSchedulingPolicy>" in result.stdout
    result = stub.kubectl(tmp_path, "explain", "pods.spec.workloadRef")
    assert result.returncode == 0, result.stderr
    assert "podGroup\t<string> -required-" in result.stdout


@needs_kubectl
def test_kubectl_api_resources_lists_dra(stub, tmp_path):
    result = stub.kubectl(tmp_path, "api-resources", "--api-group=resource.k8s.io", "--no-headers")
    assert result.returncode == 0, result.stderr
    rows = {line.split()[0]: line.split()[1:] for line in result.stdout.splitlines()}
    assert rows["resourceclaims"] == ["resource.k8s.io/v1", "true", "ResourceClaim"]
    assert rows["deviceclasses"] == ["resource.k8s.io/v1", "false", "DeviceClass"]
