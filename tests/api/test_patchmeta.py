"""The merge-semantics table: values as Kubernetes' Go struct tags and list markers have them."""

import pytest

from kvert.api import kinds
from kvert.api.patchmeta import (PatchMeta, all_patch_meta, is_builtin, patch_meta,
                                 supports_strategic)

POD = ("v1", "Pod")
DEPLOY = ("apps/v1", "Deployment")


def pm(gvk, *path):
    return patch_meta(gvk[0], gvk[1], tuple(path))


@pytest.mark.parametrize("path, strategy, key, list_type, keys", [
    (("spec", "containers"), "merge", "name", "map", ("name",)),
    (("spec", "initContainers"), "merge", "name", "map", ("name",)),
    (("spec", "ephemeralContainers"), "merge", "name", "map", ("name",)),
    (("spec", "volumes"), "merge,retainKeys", "name", "map", ("name",)),
    (("spec", "imagePullSecrets"), "merge", "name", "map", ("name",)),
    (("spec", "hostAliases"), "merge", "ip", "map", ("ip",)),
    (("spec", "topologySpreadConstraints"), "merge", "topologyKey", "map",
     ("topologyKey", "whenUnsatisfiable")),
    (("spec", "resourceClaims"), "merge,retainKeys", "name", "map", ("name",)),
    (("spec", "schedulingGates"), "merge", "name", "map", ("name",)),
    (("spec", "containers", "env"), "merge", "name", "map", ("name",)),
    (("spec", "containers", "ports"), "merge", "containerPort", "map",
     ("containerPort", "protocol")),
    (("spec", "containers", "volumeMounts"), "merge", "mountPath", "map", ("mountPath",)),
    (("spec", "containers", "volumeDevices"), "merge", "devicePath", "map", ("devicePath",)),
    (("spec", "initContainers", "env"), "merge", "name", "map", ("name",)),
    (("status", "conditions"), "merge", "type", "map", ("type",)),
    (("status", "podIPs"), "merge", "ip", "map", ("ip",)),
    (("metadata", "ownerReferences"), "merge", "uid", "map", ("uid",)),
])
def test_pod_merge_lists(path, strategy, key, list_type, keys):
    assert pm(POD, *path) == PatchMeta(strategy, key, list_type, keys)


@pytest.mark.parametrize("path", [
    ("spec", "tolerations"),  # no patchMergeKey in Kubernetes: replaced whole
    ("spec", "readinessGates"),
    ("spec", "containers", "envFrom"),
    ("spec", "containers", "resizePolicy"),
    ("spec", "containers", "command"),
    ("spec", "containers", "args"),
    ("spec", "securityContext", "supplementalGroups"),
    ("status", "containerStatuses"),
    ("status", "initContainerStatuses"),
])
def test_pod_atomic_lists_have_no_patch_strategy(path):
    meta = pm(POD, *path)
    assert meta.list_type == "atomic" and meta.strategy is None and not meta.merges


def test_host_ips_merge_under_strategic_patch_but_are_atomic_for_apply():
    meta = pm(POD, "status", "hostIPs")
    assert (meta.strategy, meta.merge_key, meta.list_type) == ("merge", "ip", "atomic")


def test_finalizers_are_a_merged_set_and_node_selector_an_atomic_map():
    assert pm(POD, "metadata", "finalizers") == PatchMeta("merge", None, "set")
    assert pm(POD, "spec", "nodeSelector").map_type == "atomic"
    assert pm(POD, "spec", "nodeSelector").strategy is None  # still merges under SMP


def test_node_fields():
    node = ("v1", "Node")
    assert pm(node, "spec", "taints").list_type == "atomic"
    assert pm(node, "spec", "taints").strategy is None
    assert pm(node, "spec", "podCIDRs") == PatchMeta("merge", None, "set")
    assert pm(node, "status", "conditions") == PatchMeta("merge", "type", "map", ("type",))
    assert pm(node, "status", "addresses") == PatchMeta("merge", "type", "map", ("type",))
    assert pm(node, "status", "images").list_type == "atomic"


def test_workloads_reach_the_pod_template():
    for gvk in (DEPLOY, ("apps/v1", "ReplicaSet")):
        assert pm(gvk, "spec", "template", "spec", "containers").merge_key == "name"
        assert pm(gvk, "spec", "template", "spec", "containers", "env").list_map_keys == ("name",)
        assert pm(gvk, "spec", "template", "metadata", "finalizers").list_type == "set"
        assert pm(gvk, "status", "conditions") == PatchMeta("merge", "type", "map", ("type",))
        assert pm(gvk, "spec", "selector").map_type == "atomic"  # LabelSelector: structType
    assert pm(DEPLOY, "spec", "strategy").strategy == "retainKeys"
    assert pm(DEPLOY, "spec", "strategy").retains_keys


def test_pdb_selector_is_replaced_and_conditions_merge():
    pdb = ("policy/v1", "PodDisruptionBudget")
    assert pm(pdb, "spec", "selector").replaces
    assert pm(pdb, "status", "conditions").merge_key == "type"


def test_services_webhooks_and_namespaces():
    svc = ("v1", "Service")
    assert pm(svc, "spec", "ports") == PatchMeta("merge", "port", "map", ("port", "protocol"))
    assert pm(svc, "spec", "selector").map_type == "atomic"
    assert pm(svc, "spec", "clusterIPs").list_type == "atomic"
    hook = ("admissionregistration.k8s.io/v1", "MutatingWebhookConfiguration")
    assert pm(hook, "webhooks").merge_key == "name"
    assert pm(hook, "webhooks", "rules").list_type == "atomic"
    assert pm(("v1", "Namespace"), "spec", "finalizers").list_type == "atomic"
    assert pm(("v1", "Namespace"), "status", "conditions").merge_key == "type"


def test_unknown_paths_have_no_semantics():
    assert pm(POD, "spec", "nothing") == PatchMeta()
    assert pm(POD, "spec", "containers", "name") == PatchMeta()
    assert pm(POD) == PatchMeta()
    assert pm(("v1", "ConfigMap"), "data") == PatchMeta()


def test_every_served_builtin_kind_is_in_the_table_except_crd_served_vpa():
    for rt in kinds.BUILTIN:
        if rt.group == "autoscaling.k8s.io":  # a CustomResourceDefinition in Kubernetes
            assert not is_builtin(rt.api_version, rt.kind)
            assert not supports_strategic(rt.api_version, rt.kind)
        else:
            assert is_builtin(rt.api_version, rt.kind), rt.kind
            assert supports_strategic(rt.api_version, rt.kind)


def test_custom_resources_do_not_support_strategic_merge_patch():
    assert not supports_strategic("example.com/v1", "Widget")
    assert pm(("example.com/v1", "Widget"), "spec", "items") == PatchMeta()
    # standard metadata is still known
    assert pm(("example.com/v1", "Widget"), "metadata", "finalizers").list_type == "set"


def test_custom_resource_schema_markers_are_honoured():
    schema = {"type": "object", "properties": {"spec": {"type": "object", "properties": {
        "ports": {"type": "array", "x-kubernetes-list-type": "map",
                  "x-kubernetes-list-map-keys": ["name"],
                  "items": {"type": "object", "properties": {
                      "tags": {"type": "array", "x-kubernetes-list-type": "set",
                               "items": {"type": "string"}}}}},
        "selector": {"type": "object", "x-kubernetes-map-type": "atomic"},
    }}}}
    rt = kinds.ResourceType("example.com", "v1", "Gadget", "gadgets", True, schema=schema)
    kinds.register(rt)
    try:
        gvk = ("example.com/v1", "Gadget")
        assert pm(gvk, "spec", "ports") == PatchMeta(None, None, "map", ("name",))
        assert pm(gvk, "spec", "ports", "tags").list_type == "set"
        assert pm(gvk, "spec", "selector").map_type == "atomic"
        table = all_patch_meta(*gvk)
        assert table[("spec", "ports")].list_map_keys == ("name",)
        assert table[("spec", "ports", "tags")].list_type == "set"
        assert table[("metadata", "ownerReferences")].merge_key == "uid"
        assert not supports_strategic(*gvk)
    finally:
        kinds.unregister(rt.key)


def test_all_patch_meta_lists_the_table_for_the_openapi_generator():
    table = all_patch_meta(*POD)
    assert table[("spec", "containers")].merge_key == "name"
    assert table[("spec", "containers", "ports")].list_map_keys == ("containerPort", "protocol")
    assert table[("spec", "tolerations")].list_type == "atomic"
    assert table[("metadata", "finalizers")].list_type == "set"
    assert all(not meta.is_empty() for meta in table.values())
    assert all(pm(POD, *path) == meta for path, meta in table.items())
    deploy = all_patch_meta(*DEPLOY)
    assert deploy[("spec", "template", "spec", "volumes")].strategy == "merge,retainKeys"
