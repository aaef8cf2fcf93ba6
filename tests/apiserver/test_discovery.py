"""Discovery documents: legacy (APIVersions, APIGroupList, APIGroup, APIResourceList) and
aggregated (apidiscovery.k8s.io/v2 APIGroupDiscoveryList), and real kubectl reading them."""

from __future__ import annotations

import json

import pytest

from kvert.api import kinds
from kvert.api.kinds import ResourceType
from kvert.apiserver import discovery

from .kubectl_stub import StubServer, kubectl_path

TYPES = kinds.all_types()


def _widget(version: str) -> ResourceType:
    return ResourceType("example.com", version, "Widget", "widgets", True, frozenset({"status"}),
                        ("wd",), ("all",))


def _entry(doc: dict, name: str) -> dict:
    return next(r for r in doc["resources"] if r["name"] == name)


# -- legacy -----------------------------------------------------------------------------------

def test_api_versions():
    doc = discovery.api_versions("10.0.0.1:6443")
    assert doc == {"kind": "APIVersions", "versions": ["v1"],
                   "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0",
                                                   "serverAddress": "10.0.0.1:6443"}]}


def test_api_group_list_names_every_group_but_core_with_preferred_versions():
    doc = discovery.api_group_list(TYPES)
    assert doc["kind"] == "APIGroupList" and doc["apiVersion"] == "v1"
    names = [g["name"] for g in doc["groups"]]
    assert "" not in names
    for group in ("apps", "policy", "scheduling.k8s.io", "node.k8s.io", "coordination.k8s.io",
                  "events.k8s.io", "apiextensions.k8s.io", "admissionregistration.k8s.io",
                  "autoscaling.k8s.io"):
        assert group in names
    # kube-apiserver's order for built-in groups, custom resource groups after them
    assert names.index("apps") < names.index("events.k8s.io") < names.index("policy")
    assert names.index("policy") < names.index("autoscaling.k8s.io")
    apps = doc["groups"][names.index("apps")]
    assert apps["versions"] == [{"groupVersion": "apps/v1", "version": "v1"}]
    assert apps["preferredVersion"] == {"groupVersion": "apps/v1", "version": "v1"}


def test_versions_are_in_kubernetes_priority_order():
    types = [_widget("v1beta1"), _widget("v2alpha1"), _widget("v1"), _widget("v1beta2")]
    group = discovery.api_group(types, "example.com")
    assert [v["version"] for v in group["versions"]] == ["v1", "v1beta2", "v1beta1", "v2alpha1"]
    assert group["preferredVersion"] == {"groupVersion": "example.com/v1", "version": "v1"}
    assert group["kind"] == "APIGroup" and group["name"] == "example.com"
    agg = discovery.aggregated_discovery(types, legacy=False)
    assert [v["version"] for v in agg["items"][0]["versions"]] == \
        ["v1", "v1beta2", "v1beta1", "v2alpha1"]


def test_api_group_unknown_or_core_is_none():
    assert discovery.api_group(TYPES, "nope.example.com") is None
    assert discovery.api_group(TYPES, "") is None


def test_core_resource_list():
    doc = discovery.api_resource_list(TYPES, "", "v1")
    assert doc["kind"] == "APIResourceList" and doc["groupVersion"] == "v1"
    assert "apiVersion" not in doc   # as kube-apiserver answers /api/v1
    pods = _entry(doc, "pods")
    assert pods == {
        "name": "pods", "singularName": "pod", "namespaced": True, "kind": "Pod",
        "verbs": ["create", "delete", "deletecollection", "get", "list", "patch", "update",
                  "watch"],
        "shortNames": ["po"], "categories": ["all"],
        "storageVersionHash": "xPOwRZ+Yhw8=",   # the value a real cluster reports for pods
    }
    assert _entry(doc, "pods/status") == {"name": "pods/status", "singularName": "",
                                          "namespaced": True, "kind": "Pod",
                                          "verbs": ["get", "patch", "update"]}
    assert _entry(doc, "pods/resize")["verbs"] == ["get", "patch", "update"]
    assert _entry(doc, "pods/binding") == {"name": "pods/binding", "singularName": "",
                                           "namespaced": True, "kind": "Binding",
                                           "verbs": ["create"]}
    assert _entry(doc, "pods/eviction") == {"name": "pods/eviction", "singularName": "",
                                            "namespaced": True, "group": "policy",
                                            "version": "v1", "kind": "Eviction",
                                            "verbs": ["create"]}
    nodes = _entry(doc, "nodes")
    assert nodes["namespaced"] is False and nodes["shortNames"] == ["no"]
    assert "categories" not in nodes
    names = [r["name"] for r in doc["resources"]]
    assert names.index("pods") < names.index("pods/binding") < names.index("pods/status")
    assert all(r["kind"] != "Deployment" for r in doc["resources"])


def test_group_resource_list_with_scale_subresource():
    doc = discovery.api_resource_list(TYPES, "apps", "v1")
    assert doc["apiVersion"] == "v1" and doc["groupVersion"] == "apps/v1"
    deploy = _entry(doc, "deployments")
    assert deploy["shortNames"] == ["deploy"] and deploy["categories"] == ["all"]
    assert _entry(doc, "deployments/scale") == {
        "name": "deployments/scale", "singularName": "", "namespaced": True,
        "group": "autoscaling", "version": "v1", "kind": "Scale",
        "verbs": ["get", "patch", "update"]}
    vpa = _entry(discovery.api_resource_list(TYPES, "autoscaling.k8s.io", "v1"),
                 "verticalpodautoscalers")
    assert vpa["shortNames"] == ["vpa"] and vpa["kind"] == "VerticalPodAutoscaler"


def test_resource_list_of_unserved_group_version_is_none():
    assert discovery.api_resource_list(TYPES, "apps", "v1beta1") is None
    assert discovery.api_resource_list(TYPES, "nope", "v1") is None


# -- aggregated -------------------------------------------------------------------------------

def test_aggregated_legacy_has_only_the_core_group():
    doc = discovery.aggregated_discovery(TYPES, legacy=True)
    assert doc["kind"] == "APIGroupDiscoveryList"
    assert doc["apiVersion"] == "apidiscovery.k8s.io/v2"
    assert len(doc["items"]) == 1
    core = doc["items"][0]
    assert "name" not in core["metadata"]
    version = core["versions"][0]
    assert version["version"] == "v1" and version["freshness"] == "Current"
    pods = next(r for r in version["resources"] if r["resource"] == "pods")
    assert pods["responseKind"] == {"group": "", "version": "v1", "kind": "Pod"}
    assert pods["scope"] == "Namespaced" and pods["singularResource"] == "pod"
    assert pods["shortNames"] == ["po"] and pods["categories"] == ["all"]
    subs = {s["subresource"]: s for s in pods["subresources"]}
    assert subs["eviction"] == {"subresource": "eviction", "verbs": ["create"],
                                "responseKind": {"group": "policy", "version": "v1",
                                                 "kind": "Eviction"}}
    assert subs["binding"]["responseKind"]["kind"] == "Binding"
    assert subs["resize"]["verbs"] == ["get", "patch", "update"]
    assert subs["status"]["responseKind"]["kind"] == "Pod"
    nodes = next(r for r in version["resources"] if r["resource"] == "nodes")
    assert nodes["scope"] == "Cluster"


def test_aggregated_groups():
    doc = discovery.aggregated_discovery(TYPES, legacy=False)
    names = [item["metadata"]["name"] for item in doc["items"]]
    # kube-aggregator lists its own group first (handler_apis.go), then kube-apiserver's
    assert names[:2] == ["apiregistration.k8s.io", "apps"] and "" not in names
    apps = doc["items"][1]["versions"][0]["resources"]
    deploy = next(r for r in apps if r["resource"] == "deployments")
    scale = next(s for s in deploy["subresources"] if s["subresource"] == "scale")
    assert scale["responseKind"] == {"group": "autoscaling", "version": "v1", "kind": "Scale"}


def test_aggregated_v2beta1_has_the_same_shape():
    v2 = discovery.aggregated_discovery(TYPES, legacy=False)
    beta = discovery.aggregated_discovery(TYPES, legacy=False, version="v2beta1")
    assert beta["apiVersion"] == "apidiscovery.k8s.io/v2beta1"
    assert beta["items"] == v2["items"]
    assert discovery.aggregated_media_type("v2beta1").endswith(
        "g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList")
    with pytest.raises(ValueError):
        discovery.aggregated_discovery(TYPES, legacy=False, version="v3")


def test_documents_are_deterministic():
    shuffled = list(reversed(TYPES))
    for make in (lambda t: discovery.api_group_list(t),
                 lambda t: discovery.api_resource_list(t, "", "v1"),
                 lambda t: discovery.aggregated_discovery(t, legacy=False)):
        assert json.dumps(make(TYPES)) == json.dumps(make(shuffled))


# -- real kubectl -----------------------------------------------------------------------------

needs_kubectl = pytest.mark.skipif(kubectl_path() is None,
                                   reason="kubectl not installed (.venv/bin/kubectl or PATH)")


@pytest.fixture
def stub():
    server = StubServer().start()
    yield server
    server.stop()


def _rows(output: str) -> dict[str, list[str]]:
    rows = {}
    for line in output.splitlines()[1:]:
        cols = line.split()
        rows.setdefault(cols[0], []).append(line)
    return rows


@needs_kubectl
def test_kubectl_api_resources_from_aggregated_discovery(stub, tmp_path):
    result = stub.kubectl(tmp_path, "api-resources")
    assert result.returncode == 0, result.stderr
    rows = _rows(result.stdout)
    assert rows["pods"][0].split()[:5] == ["pods", "po", "v1", "true", "Pod"]
    assert rows["deployments"][0].split()[:5] == ["deployments", "deploy", "apps/v1", "true",
                                                  "Deployment"]
    assert rows["verticalpodautoscalers"][0].split()[1] == "vpa"
    assert rows["priorityclasses"][0].split()[1:4] == ["pc", "scheduling.k8s.io/v1", "false"]
    assert len(rows["events"]) == 2   # core/v1 and events.k8s.io/v1
    # Aggregated discovery answered everything: no per-group-version requests.
    paths = [r.path_qs.split("?")[0] for r in stub.requests]
    assert "/api" in paths and "/apis" in paths
    assert not any(p.startswith("/api/v1") or p.startswith("/apis/apps") for p in paths)
    accept = next(r.accept for r in stub.requests if r.path_qs.startswith("/apis?"))
    assert accept.startswith("application/json;g=apidiscovery.k8s.io;v=v2;"
                             "as=APIGroupDiscoveryList")


@needs_kubectl
def test_kubectl_api_resources_wide_shows_verbs_and_categories(stub, tmp_path):
    result = stub.kubectl(tmp_path, "api-resources", "-o", "wide", "--api-group=apps")
    assert result.returncode == 0, result.stderr
    line = _rows(result.stdout)["deployments"][0]
    assert "create,delete,deletecollection,get,list,patch,update,watch" in line
    assert line.rstrip().endswith("all")


@needs_kubectl
def test_kubectl_falls_back_to_legacy_discovery(tmp_path):
    server = StubServer(aggregated=False).start()
    try:
        result = server.kubectl(tmp_path, "api-resources")
    finally:
        server.stop()
    assert result.returncode == 0, result.stderr
    rows = _rows(result.stdout)
    assert rows["pods"][0].split()[:2] == ["pods", "po"]
    assert rows["verticalpodautoscalers"][0].split()[1] == "vpa"
    paths = {r.path_qs.split("?")[0] for r in server.requests}
    assert {"/api/v1", "/apis/apps/v1", "/apis/autoscaling.k8s.io/v1"} <= paths
