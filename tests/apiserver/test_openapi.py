"""OpenAPI v2/v3 documents of the served types, and real kubectl using them: explain, client-side
validation, server-side field validation, client-side apply (strategic merge patch)."""

from __future__ import annotations

import copy
import dataclasses
import hashlib
import json
import time

import pytest
import yaml

from kvert.api import kinds
from kvert.api.kinds import ResourceType
from kvert.apiserver import openapi
from kvert.apiserver.openapi import builder, proto, schemas

from .kubectl_stub import StubServer, kubectl_path
from .sample_manifests import OTHER_KINDS, RICH_DEPLOYMENT, UNKNOWN_FIELD_DEPLOYMENT

TYPES = kinds.all_types()
V3 = "#/components/schemas/"


def _doc(path: str, types=TYPES) -> dict:
    doc = openapi.openapi_v3_document(types, path)
    assert doc is not None, path
    return doc


def _gv_path(rt) -> str:
    return "api/v1" if rt.group == "" else f"apis/{rt.group}/{rt.version}"


def _schema(doc: dict, name: str) -> dict:
    return doc["components"]["schemas"][name]


def _resolve(doc: dict, prop: dict) -> dict:
    """A property's schema, through allOf/$ref (as kubectl walks it)."""
    if "allOf" in prop:
        prop = prop["allOf"][0]
    if "$ref" in prop:
        return _schema(doc, prop["$ref"][len(V3):])
    return prop


def _walk(doc: dict, kind_schema: str, *fields: str) -> dict:
    """The property at a field path, resolving references and list items on the way."""
    node = _schema(doc, kind_schema)
    prop = None
    for f in fields:
        if prop is not None:
            node = _resolve(doc, prop.get("items", prop))
        prop = node["properties"][f]
    return prop


def _widget(schema: dict | None = None, version: str = "v1") -> ResourceType:
    return ResourceType("example.com", version, "Widget", "widgets", True, frozenset({"status"}),
                        ("wd",), (), schema=schema)


WIDGET_SCHEMA = {
    "type": "object",
    "description": "A widget.",
    "properties": {
        "spec": {"type": "object", "required": ["size"], "properties": {
            "size": {"type": "integer", "minimum": 1, "nullable": True},
            "port": {"x-kubernetes-int-or-string": True, "anyOf": [{"type": "integer"},
                                                                    {"type": "string"}]},
            "tags": {"type": "array", "items": {"type": "string"},
                     "x-kubernetes-list-type": "set"},
            "extra": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
        }},
        "status": {"type": "object", "properties": {"ready": {"type": "boolean"}}},
    },
}


# -- schemas -----------------------------------------------------------------------------------

def test_schema_tables_have_no_dangling_references():
    assert schemas.check() == []


def test_every_builtin_kind_has_a_schema():
    for rt in kinds.BUILTIN:
        assert openapi.kind_schema_name(rt) in schemas.DEFINITIONS, rt.kind


# -- v3 index and documents --------------------------------------------------------------------

def test_v3_index_lists_every_group_version_with_the_document_hash():
    index = openapi.openapi_v3_index(TYPES)
    for rt in TYPES:
        assert _gv_path(rt) in index["paths"]
    for path in ("api", "apis", "apis/apps", "version"):
        assert path in index["paths"]
    for path, entry in index["paths"].items():
        url = entry["serverRelativeURL"]
        data, digest = openapi.openapi_v3_json(TYPES, path)
        assert url == f"/openapi/v3/{path}?hash={digest}"
        assert digest == hashlib.sha512(data).hexdigest().upper()
        assert json.loads(data) == openapi.openapi_v3_document(TYPES, path)


def test_unknown_v3_path_is_none():
    assert openapi.openapi_v3_document(TYPES, "apis/apps/v2") is None
    assert openapi.openapi_v3_document(TYPES, "apis/nope") is None
    assert openapi.openapi_v3_document(TYPES, "nope") is None


def test_v3_document_shape():
    doc = _doc("apis/apps/v1")
    assert doc["openapi"] == "3.0.0"
    assert doc["info"] == {"title": "Kubernetes", "version": "unversioned"}
    assert "BearerToken" in doc["components"]["securitySchemes"]
    assert all(p.startswith("/apis/apps/v1/") for p in doc["paths"])


def test_every_reference_resolves_in_its_document():
    docs = {p: _doc(p) for p in openapi.openapi_v3_index(TYPES)["paths"]}
    for path, doc in docs.items():
        names = set(doc["components"]["schemas"])
        for ref in builder._refs(doc, V3):
            assert ref in names, (path, ref)
    v2 = openapi.openapi_v2(TYPES)
    for ref in builder._refs(v2, "#/definitions/"):
        assert ref in v2["definitions"], ref


def test_each_kind_schema_carries_its_group_version_kind():
    for rt in TYPES:
        doc = _doc(_gv_path(rt))
        name = openapi.kind_schema_name(rt)
        schema = _schema(doc, name)
        assert schema["x-kubernetes-group-version-kind"] == [
            {"group": rt.group, "kind": rt.kind, "version": rt.version}], name
        assert set(schema["properties"]) >= {"apiVersion", "kind", "metadata"}
        if "list" not in rt.verbs:
            continue   # the review kinds: only POST is served, no list type exists
        listed = _schema(doc, name + "List")
        assert listed["x-kubernetes-group-version-kind"][0]["kind"] == rt.kind + "List"
        assert listed["properties"]["items"]["items"] == {"$ref": V3 + name}


def test_field_validation_is_advertised_on_every_patch_operation():
    """kubectl leaves validation to the server only if the PATCH operation of the kind lists
    the fieldValidation query parameter inline."""
    for rt in TYPES:
        if "patch" not in rt.verbs:
            continue
        doc = _doc(_gv_path(rt))
        gvk = {"group": rt.group, "kind": rt.kind, "version": rt.version}
        patches = [item["patch"] for item in doc["paths"].values()
                   if "patch" in item and item["patch"].get("x-kubernetes-group-version-kind")
                   == gvk]
        assert patches, rt.kind
        for op in patches:
            names = {p["name"] for p in op["parameters"] if p["in"] == "query"}
            assert {"fieldValidation", "dryRun", "fieldManager", "force"} <= names
            assert op["x-kubernetes-action"] == "patch"


def test_pod_paths_and_operations():
    doc = _doc("api/v1")
    paths = doc["paths"]
    coll = paths["/api/v1/namespaces/{namespace}/pods"]
    assert coll["get"]["x-kubernetes-action"] == "list"
    assert coll["post"]["x-kubernetes-action"] == "post"
    assert coll["delete"]["x-kubernetes-action"] == "deletecollection"
    assert coll["get"]["operationId"] == "listCoreV1NamespacedPod"
    list_params = {p["name"] for p in coll["get"]["parameters"]}
    assert {"labelSelector", "fieldSelector", "limit", "continue", "resourceVersion", "watch",
            "timeoutSeconds", "allowWatchBookmarks", "sendInitialEvents"} <= list_params
    assert coll["post"]["requestBody"]["content"]["*/*"]["schema"] == {
        "$ref": V3 + "io.k8s.api.core.v1.Pod"}
    assert "fieldValidation" in {p["name"] for p in coll["post"]["parameters"]}
    assert {p["name"] for p in coll["parameters"]} == {"namespace", "pretty"}
    item = paths["/api/v1/namespaces/{namespace}/pods/{name}"]
    assert set(item) == {"parameters", "get", "put", "patch", "delete"}
    assert set(item["patch"]["requestBody"]["content"]) == {
        "application/apply-patch+yaml", "application/json-patch+json",
        "application/merge-patch+json", "application/strategic-merge-patch+json"}
    assert item["put"]["x-kubernetes-group-version-kind"] == {"group": "", "kind": "Pod",
                                                              "version": "v1"}
    assert "fieldValidation" in {p["name"] for p in item["put"]["parameters"]}
    assert {"gracePeriodSeconds", "propagationPolicy", "dryRun"} <= {
        p["name"] for p in item["delete"]["parameters"]}
    assert paths["/api/v1/pods"]["get"]["operationId"] == "listCoreV1PodForAllNamespaces"
    assert paths["/api/v1/watch/namespaces/{namespace}/pods/{name}"]["get"][
        "x-kubernetes-action"] == "watch"
    assert paths["/api/v1/watch/pods"]["get"]["x-kubernetes-action"] == "watchlist"
    # subresources
    base = "/api/v1/namespaces/{namespace}/pods/{name}"
    assert set(paths[base + "/status"]) == {"parameters", "get", "put", "patch"}
    assert set(paths[base + "/resize"]) == {"parameters", "get", "put", "patch"}
    assert paths[base + "/resize"]["patch"]["operationId"] == "patchCoreV1NamespacedPodResize"
    binding = paths[base + "/binding"]["post"]
    assert binding["x-kubernetes-group-version-kind"] == {"group": "", "kind": "Binding",
                                                          "version": "v1"}
    assert binding["requestBody"]["content"]["*/*"]["schema"]["$ref"] == \
        V3 + "io.k8s.api.core.v1.Binding"
    eviction = paths[base + "/eviction"]["post"]
    assert eviction["x-kubernetes-group-version-kind"] == {"group": "policy",
                                                           "kind": "Eviction", "version": "v1"}
    assert "io.k8s.api.policy.v1.Eviction" in doc["components"]["schemas"]
    assert paths[base + "/log"]["get"]["responses"]["200"]["content"] == {
        "text/plain": {"schema": {"type": "string"}}}
    # cluster-scoped kinds have no namespace in their paths
    assert "/api/v1/nodes/{name}/status" in paths
    assert not any("namespaces/{namespace}/nodes" in p for p in paths)


def test_scale_subresource_uses_autoscaling_v1_scale():
    doc = _doc("apis/apps/v1")
    scale = doc["paths"]["/apis/apps/v1/namespaces/{namespace}/deployments/{name}/scale"]
    assert scale["patch"]["x-kubernetes-group-version-kind"] == {
        "group": "autoscaling", "kind": "Scale", "version": "v1"}
    assert scale["put"]["requestBody"]["content"]["*/*"]["schema"]["$ref"] == \
        V3 + "io.k8s.api.autoscaling.v1.Scale"
    scale_schema = _schema(doc, "io.k8s.api.autoscaling.v1.Scale")
    assert scale_schema["x-kubernetes-group-version-kind"] == [
        {"group": "autoscaling", "kind": "Scale", "version": "v1"}]


def test_custom_resources_do_not_offer_strategic_merge_patch():
    doc = _doc("apis/autoscaling.k8s.io/v1")
    item = doc["paths"]["/apis/autoscaling.k8s.io/v1/namespaces/{namespace}/"
                        "verticalpodautoscalers/{name}"]
    assert set(item["patch"]["requestBody"]["content"]) == {
        "application/apply-patch+yaml", "application/json-patch+json",
        "application/merge-patch+json"}


def test_pod_fields():
    doc = _doc("api/v1")
    pod = "io.k8s.api.core.v1.Pod"
    resources = _walk(doc, pod, "spec", "containers", "resources")
    assert resources["allOf"] == [{"$ref": V3 + "io.k8s.api.core.v1.ResourceRequirements"}]
    limits = _walk(doc, pod, "spec", "containers", "resources", "limits")
    assert limits["type"] == "object"
    assert limits["additionalProperties"] == {
        "$ref": V3 + "io.k8s.apimachinery.pkg.api.resource.Quantity"}
    policy = _walk(doc, pod, "spec", "containers", "resizePolicy", "restartPolicy")
    assert policy["enum"] == ["NotRequired", "RestartContainer"]
    allocated = _walk(doc, pod, "status", "containerStatuses", "allocatedResources")
    assert allocated["additionalProperties"]["$ref"].endswith("Quantity")
    assert "allocated" in allocated["description"]
    status = _resolve(doc, _walk(doc, pod, "status"))
    assert {"conditions", "containerStatuses", "qosClass", "resize", "phase",
            "startTime"} <= set(status["properties"])
    assert _walk(doc, pod, "spec", "containers", "name")["type"] == "string"
    assert _schema(doc, "io.k8s.api.core.v1.Container")["required"] == ["name"]
    port = _walk(doc, pod, "spec", "containers", "livenessProbe", "httpGet", "port")
    assert port["allOf"][0]["$ref"].endswith("IntOrString")


def test_scalar_types_in_v3_and_v2():
    doc = _doc("api/v1")
    quantity = _schema(doc, "io.k8s.apimachinery.pkg.api.resource.Quantity")
    assert quantity["oneOf"] == [{"type": "string"}, {"type": "number"}]
    intstr = _schema(_doc("apis/apps/v1"), "io.k8s.apimachinery.pkg.util.intstr.IntOrString")
    assert intstr["format"] == "int-or-string"
    assert intstr["oneOf"] == [{"type": "integer"}, {"type": "string"}]
    assert _schema(doc, "io.k8s.apimachinery.pkg.apis.meta.v1.Time") == {
        "description": _schema(doc, "io.k8s.apimachinery.pkg.apis.meta.v1.Time")["description"],
        "format": "date-time", "type": "string"}
    v2 = openapi.openapi_v2(TYPES)["definitions"]
    assert v2["io.k8s.apimachinery.pkg.api.resource.Quantity"]["type"] == "string"
    assert v2["io.k8s.apimachinery.pkg.util.intstr.IntOrString"]["format"] == "int-or-string"


def test_patch_extensions_come_from_patchmeta():
    doc = _doc("api/v1")
    spec = _schema(doc, "io.k8s.api.core.v1.PodSpec")["properties"]
    assert spec["containers"]["x-kubernetes-patch-merge-key"] == "name"
    assert spec["containers"]["x-kubernetes-patch-strategy"] == "merge"
    assert spec["containers"]["x-kubernetes-list-type"] == "map"
    assert spec["containers"]["x-kubernetes-list-map-keys"] == ["name"]
    assert spec["volumes"]["x-kubernetes-patch-strategy"] == "merge,retainKeys"
    assert spec["tolerations"]["x-kubernetes-list-type"] == "atomic"
    assert "x-kubernetes-patch-merge-key" not in spec["tolerations"]
    container = _schema(doc, "io.k8s.api.core.v1.Container")["properties"]
    assert container["ports"]["x-kubernetes-list-map-keys"] == ["containerPort", "protocol"]
    assert container["env"]["x-kubernetes-patch-merge-key"] == "name"
    assert container["resizePolicy"]["x-kubernetes-list-type"] == "atomic"
    status = _schema(doc, "io.k8s.api.core.v1.PodStatus")["properties"]
    assert status["conditions"]["x-kubernetes-patch-merge-key"] == "type"
    meta = _schema(doc, "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta")["properties"]
    assert meta["ownerReferences"]["x-kubernetes-patch-merge-key"] == "uid"
    assert meta["finalizers"]["x-kubernetes-list-type"] == "set"
    apps = _doc("apis/apps/v1")
    dspec = _schema(apps, "io.k8s.api.apps.v1.DeploymentSpec")["properties"]
    assert dspec["strategy"]["x-kubernetes-patch-strategy"] == "retainKeys"
    dstatus = _schema(apps, "io.k8s.api.apps.v1.DeploymentStatus")["properties"]
    assert dstatus["conditions"]["x-kubernetes-list-map-keys"] == ["type"]
    node = _schema(doc, "io.k8s.api.core.v1.NodeStatus")["properties"]
    assert node["addresses"]["x-kubernetes-patch-merge-key"] == "type"


def test_crd_schema_is_used_for_custom_resources():
    types = TYPES + [_widget(WIDGET_SCHEMA)]
    doc = _doc("apis/example.com/v1", types)
    widget = _schema(doc, "com.example.v1.Widget")
    assert widget["x-kubernetes-group-version-kind"] == [
        {"group": "example.com", "kind": "Widget", "version": "v1"}]
    assert widget["description"] == "A widget."
    assert widget["properties"]["metadata"]["allOf"] == [
        {"$ref": V3 + "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"}]
    assert widget["properties"]["spec"]["properties"]["tags"]["x-kubernetes-list-type"] == "set"
    assert widget["properties"]["spec"]["properties"]["size"]["nullable"] is True
    assert "com.example.v1.WidgetList" in doc["components"]["schemas"]
    item = doc["paths"]["/apis/example.com/v1/namespaces/{namespace}/widgets/{name}/status"]
    assert item["patch"]["x-kubernetes-group-version-kind"]["kind"] == "Widget"
    # v2 gets the OpenAPI v2 subset of the schema
    v2 = openapi.openapi_v2(types)["definitions"]["com.example.v1.Widget"]
    spec = v2["properties"]["spec"]["properties"]
    assert "nullable" not in spec["size"]
    assert "anyOf" not in spec["port"] and "type" not in spec["port"]
    # the VPA kinds, served as custom resources, use their schema when they have one
    vpa = next(rt for rt in TYPES if rt.kind == "VerticalPodAutoscaler")
    served = [dataclasses.replace(vpa, schema=WIDGET_SCHEMA) if rt is vpa else rt for rt in TYPES]
    vdoc = _doc("apis/autoscaling.k8s.io/v1", served)
    assert _schema(vdoc, "io.k8s.autoscaling.v1.VerticalPodAutoscaler")["description"] == \
        "A widget."


def test_custom_resource_without_schema_preserves_unknown_fields():
    doc = _doc("apis/example.com/v1", TYPES + [_widget(None)])
    widget = _schema(doc, "com.example.v1.Widget")
    assert widget["x-kubernetes-preserve-unknown-fields"] is True


def test_documents_change_with_the_types_and_are_cached():
    base = openapi.openapi_v3_index(TYPES)
    assert openapi.openapi_v3_index(list(reversed(TYPES))) is base
    more = openapi.openapi_v3_index(TYPES + [_widget(WIDGET_SCHEMA)])
    assert "apis/example.com/v1" in more["paths"] and "apis/example.com/v1" not in base["paths"]
    # a changed CRD schema changes the hash of its document only
    changed = copy.deepcopy(WIDGET_SCHEMA)
    changed["properties"]["spec"]["properties"]["size"]["minimum"] = 2
    other = openapi.openapi_v3_index(TYPES + [_widget(changed)])
    key = "apis/example.com/v1"
    assert other["paths"][key] != more["paths"][key]
    assert other["paths"]["apis/apps/v1"] == more["paths"]["apis/apps/v1"]


def test_documents_are_deterministic_and_fast():
    builder._CACHE.clear()
    start = time.perf_counter()
    paths = list(openapi.openapi_v3_index(TYPES)["paths"])
    first = {p: openapi.openapi_v3_json(TYPES, p)[0] for p in paths}
    v2 = openapi.openapi_v2_json(TYPES)
    built = time.perf_counter() - start
    builder._CACHE.clear()
    again = {p: openapi.openapi_v3_json(TYPES, p)[0] for p in paths}
    assert first == again and openapi.openapi_v2_json(TYPES) == v2
    assert built < 2.0
    start = time.perf_counter()
    for _ in range(100):
        openapi.openapi_v3_document(TYPES, "api/v1")
    assert time.perf_counter() - start < 0.5


def test_v2_document():
    doc = openapi.openapi_v2(TYPES)
    assert doc["swagger"] == "2.0"
    for rt in TYPES:
        name = openapi.kind_schema_name(rt)
        assert doc["definitions"][name]["x-kubernetes-group-version-kind"] == [
            {"group": rt.group, "kind": rt.kind, "version": rt.version}]
    patch = doc["paths"]["/apis/apps/v1/namespaces/{namespace}/deployments/{name}"]["patch"]
    assert patch["consumes"] == list(builder.PATCH_TYPES)
    assert patch["parameters"][0] == {
        "in": "body", "name": "body", "required": True,
        "schema": {"$ref": "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.Patch"}}
    assert "fieldValidation" in {p["name"] for p in patch["parameters"]}
    ref = doc["definitions"]["io.k8s.api.core.v1.Container"]["properties"]["resources"]
    assert ref["$ref"] == "#/definitions/io.k8s.api.core.v1.ResourceRequirements"


def test_v2_protobuf_encodes_the_document():
    data = openapi.openapi_v2_protobuf(TYPES)
    assert data.startswith(b"\x0a\x032.0")   # field 1 (swagger) = "2.0"
    assert b"io.k8s.api.core.v1.Pod" in data and b"x-kubernetes-group-version-kind" in data
    assert proto._varint(300) == b"\xac\x02"


# -- unknown fields (server-side fieldValidation) ---------------------------------------------

def test_unknown_fields_of_builtin_kinds():
    obj = yaml.safe_load(UNKNOWN_FIELD_DEPLOYMENT)
    assert openapi.unknown_fields(TYPES, obj) == [
        "spec.bogus", "spec.template.spec.containers[0].foo"]
    assert openapi.unknown_fields(TYPES, yaml.safe_load(RICH_DEPLOYMENT)) == []
    for doc in yaml.safe_load_all(OTHER_KINDS):
        assert openapi.unknown_fields(TYPES, doc) == [], doc["kind"]
    obj = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "nope": 1},
           "spec": {"containers": [{"name": "c", "resources": {"limits": {"cpu": "1"}},
                                    "securityContext": {"capabilities": {"x": 1}}}]}}
    assert openapi.unknown_fields(TYPES, obj) == [
        "metadata.nope", "spec.containers[0].securityContext.capabilities.x"]
    assert openapi.unknown_fields(TYPES, {"apiVersion": "x/v1", "kind": "Nope"}) == []
    eviction = {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": "p"},
                "deleteOptions": {"gracePeriodSeconds": 0, "bogus": 1}}
    assert openapi.unknown_fields(TYPES, eviction) == ["deleteOptions.bogus"]
    scale = {"apiVersion": "autoscaling/v1", "kind": "Scale", "metadata": {"name": "d"},
             "spec": {"replicas": 2, "x": 1}}
    assert openapi.unknown_fields(TYPES, scale) == ["spec.x"]


def test_unknown_fields_of_custom_resources():
    types = TYPES + [_widget(WIDGET_SCHEMA)]
    obj = {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"},
           "spec": {"size": 1, "extra": {"anything": [1]}, "color": "red"}, "other": 1}
    assert openapi.unknown_fields(types, obj) == ["spec.color", "other"]


# -- real kubectl -----------------------------------------------------------------------------

needs_kubectl = pytest.mark.skipif(kubectl_path() is None,
                                   reason="kubectl not installed (.venv/bin/kubectl or PATH)")


@pytest.fixture(scope="module")
def stub():
    server = StubServer().start()
    yield server
    server.stop()


@pytest.fixture
def old_stub():
    """A server whose v3 documents lack the fieldValidation parameter: kubectl validates on
    the client, with the protobuf v2 document."""
    server = StubServer(no_field_validation=True).start()
    yield server
    server.stop()


def _explain(stub, tmp_path, field: str) -> str:
    stub.requests.clear()
    result = stub.kubectl(tmp_path, "explain", field)
    assert result.returncode == 0, result.stderr
    return result.stdout


@needs_kubectl
def test_kubectl_explain_container_resources(stub, tmp_path):
    out = _explain(stub, tmp_path, "pods.spec.containers.resources")
    assert "KIND:       Pod" in out and "FIELD: resources <ResourceRequirements>" in out
    assert "Compute resources (cpu, memory, ...) the container requests" in out
    assert "limits\t<map[string]Quantity>" in out
    assert "requests\t<map[string]Quantity>" in out
    # kubectl read the hashed v3 document of the core group, as JSON
    index = openapi.openapi_v3_index(TYPES)
    gets = [(r.path_qs.split("&")[0].split("?timeout")[0], r.accept) for r in stub.requests]
    assert ("/openapi/v3", "application/json, */*") in gets
    assert (index["paths"]["api/v1"]["serverRelativeURL"], "application/json") in gets


@needs_kubectl
def test_kubectl_explain_deployment_strategy(stub, tmp_path):
    out = _explain(stub, tmp_path, "deployment.spec.strategy")
    assert "GROUP:      apps" in out and "FIELD: strategy <DeploymentStrategy>" in out
    assert "How existing pods are replaced by new ones." in out
    assert "rollingUpdate\t<RollingUpdateDeployment>" in out
    assert "enum: Recreate, RollingUpdate" in out


@needs_kubectl
def test_kubectl_explain_allocated_resources_and_vpa(stub, tmp_path):
    out = _explain(stub, tmp_path, "pods.status.containerStatuses.allocatedResources")
    assert "FIELD: allocatedResources <map[string]Quantity>" in out
    assert "Resources the node has allocated to the container" in out
    out = _explain(stub, tmp_path, "vpa.spec.updatePolicy")
    assert "KIND:       VerticalPodAutoscaler" in out and "updateMode\t<string>" in out
    out = _explain(stub, tmp_path, "pods.spec.containers.resizePolicy")
    assert "restartPolicy\t<string> -required-" in out
    assert "enum: NotRequired, RestartContainer" in out


@needs_kubectl
def test_kubectl_create_client_dry_run_leaves_validation_to_the_server(stub, tmp_path):
    """With fieldValidation advertised, `create --dry-run=client --validate=strict` does no
    client-side validation (the server would do it): the unknown field passes, nothing is
    sent, and /openapi/v2 is never fetched."""
    stub.requests.clear()
    result = stub.kubectl(tmp_path, "create", "--dry-run=client", "--validate=strict", "-f", "-",
                          "-o", "name", stdin=UNKNOWN_FIELD_DEPLOYMENT)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "deployment.apps/web"
    paths = [r.path_qs.split("?")[0] for r in stub.requests]
    assert "/openapi/v3/apis/apps/v1" in paths
    assert "/openapi/v2" not in paths
    assert all(r.method == "GET" for r in stub.requests)


@needs_kubectl
def test_kubectl_create_server_dry_run_strict_reports_unknown_fields(stub, tmp_path):
    stub.requests.clear()
    result = stub.kubectl(tmp_path, "create", "--dry-run=server", "--validate=strict", "-f", "-",
                          stdin=UNKNOWN_FIELD_DEPLOYMENT)
    assert result.returncode == 1
    assert 'strict decoding error: unknown field "spec.bogus", unknown field ' \
           '"spec.template.spec.containers[0].foo"' in result.stderr
    post = next(r for r in stub.requests if r.method == "POST")
    assert post.path_qs.startswith("/apis/apps/v1/namespaces/default/deployments?")
    assert "dryRun=All" in post.path_qs and "fieldValidation=Strict" in post.path_qs
    result = stub.kubectl(tmp_path, "create", "--dry-run=server", "--validate=strict", "-f", "-",
                          "-o", "name", stdin=RICH_DEPLOYMENT)
    assert result.returncode == 0, result.stderr


@needs_kubectl
def test_kubectl_client_side_validation_with_the_v2_document(old_stub, tmp_path):
    result = old_stub.kubectl(tmp_path, "create", "--dry-run=client", "--validate=strict",
                              "-f", "-", stdin=UNKNOWN_FIELD_DEPLOYMENT)
    assert result.returncode == 1
    assert 'unknown field "bogus" in io.k8s.api.apps.v1.DeploymentSpec' in result.stderr
    v2 = next(r for r in old_stub.requests if r.path_qs.startswith("/openapi/v2"))
    assert v2.accept == "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"
    # real manifests of every kind pass kubectl's validation against the schemas
    everything = RICH_DEPLOYMENT + "---\n" + OTHER_KINDS
    result = old_stub.kubectl(tmp_path, "create", "--dry-run=client", "--validate=strict",
                              "-f", "-", "-o", "name", stdin=everything)
    assert result.returncode == 0, result.stderr
    assert len(result.stdout.split()) == 17
    bad = RICH_DEPLOYMENT.replace("replicas: 3", "replicas: three")
    result = old_stub.kubectl(tmp_path, "create", "--dry-run=client", "--validate=strict",
                              "-f", "-", stdin=bad)
    assert 'invalid type for io.k8s.api.apps.v1.DeploymentSpec.replicas: got "string", ' \
           'expected "integer"' in result.stderr


@needs_kubectl
def test_kubectl_apply_computes_a_strategic_merge_patch_from_v3(stub, tmp_path):
    original = yaml.safe_load(RICH_DEPLOYMENT)
    stored = copy.deepcopy(original)
    stored["metadata"]["namespace"] = "default"
    stored["metadata"]["annotations"]["kubectl.kubernetes.io/last-applied-configuration"] = \
        json.dumps(original)
    stub.objects["apps/deployments/default/web"] = stored
    changed = copy.deepcopy(original)
    container = changed["spec"]["template"]["spec"]["containers"][0]
    container["image"] = "nginx:1.28"
    container["env"].append({"name": "NEW", "value": "1"})
    container["resources"]["requests"]["cpu"] = "500m"
    stub.requests.clear()
    result = stub.kubectl(tmp_path, "apply", "-f", "-", stdin=yaml.safe_dump(changed))
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""   # no "error calculating patch from openapi v3 spec" warning
    patch_req = next(r for r in stub.requests if r.method == "PATCH")
    assert patch_req.content_type == "application/strategic-merge-patch+json"
    assert "fieldValidation=Strict" in patch_req.path_qs
    patch = json.loads(patch_req.body)
    spec = patch["spec"]["template"]["spec"]
    # merged by the containers' and env's merge key "name", not replaced whole
    assert spec["$setElementOrder/containers"] == [{"name": "app"}]
    assert spec["containers"] == [{
        "$setElementOrder/env": [{"name": n} for n in
                                 ("MODE", "POD_NAME", "CPU_LIMIT", "PASSWORD", "LEVEL", "NEW")],
        "env": [{"name": "NEW", "value": "1"}], "image": "nginx:1.28", "name": "app",
        "resources": {"requests": {"cpu": "500m"}}}]
    assert not any(r.path_qs.startswith("/openapi/v2") for r in stub.requests)
