"""Cluster snapshots (``kvert.sim.snapshot``): sanitizing, reading what ``kvert snapshot`` and
``kubectl get -o yaml|json`` write, and capturing through a Client."""

from __future__ import annotations

import asyncio
import copy
import json
import textwrap

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kvert.api.errors import Expired, Forbidden, InternalError, NotFound, RouteNotFound
from kvert.api.kinds import by_key
from kvert.sim.snapshot import (
    SNAPSHOT_KINDS, CaptureError, SnapshotError, capture, load_snapshot, parse_snapshot, sanitize,
)

LAST_APPLIED = json.dumps({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {
    "name": "web", "namespace": "shop"}, "spec": {"template": {"spec": {"containers": [
        {"name": "app", "env": [{"name": "DB_PASSWORD", "value": "hunter2"}]}]}}}})

# A Deployment as kube-apiserver returns it (kubectl get deploy web -o yaml)
DEPLOYMENT = {
    "apiVersion": "apps/v1", "kind": "Deployment",
    "metadata": {
        "annotations": {"deployment.kubernetes.io/revision": "3",
                        "kubectl.kubernetes.io/last-applied-configuration": LAST_APPLIED + "\n",
                        "team": "checkout"},
        "creationTimestamp": "2025-03-01T10:00:00Z", "generation": 7,
        "labels": {"app": "web"},
        "managedFields": [{"apiVersion": "apps/v1", "fieldsType": "FieldsV1",
                           "fieldsV1": {"f:spec": {"f:replicas": {}}},
                           "manager": "kubectl-client-side-apply", "operation": "Update",
                           "time": "2025-03-01T10:00:00Z"}],
        "name": "web", "namespace": "shop", "resourceVersion": "123456",
        "uid": "0f8d8c51-7d3e-4a4a-9b43-7e2b2f1a4c11"},
    "spec": {
        "progressDeadlineSeconds": 600, "replicas": 3, "revisionHistoryLimit": 10,
        "selector": {"matchLabels": {"app": "web"}},
        "strategy": {"rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"},
                     "type": "RollingUpdate"},
        "template": {
            "metadata": {"creationTimestamp": None, "labels": {"app": "web"}},
            "spec": {
                "containers": [{
                    "name": "app", "image": "shop/web:1.4",
                    "env": [
                        {"name": "DB_HOST", "value": "db.shop.svc"},
                        {"name": "DB_PASSWORD", "valueFrom": {"secretKeyRef": {
                            "name": "db", "key": "password"}}},
                        {"name": "POD_IP", "valueFrom": {"fieldRef": {
                            "apiVersion": "v1", "fieldPath": "status.podIP"}}}],
                    "envFrom": [{"secretRef": {"name": "api-keys"}},
                                {"configMapRef": {"name": "settings"}}],
                    "resources": {"requests": {"cpu": "250m", "memory": "256Mi"},
                                  "limits": {"memory": "512Mi"}},
                    "terminationMessagePath": "/dev/termination-log",
                    "terminationMessagePolicy": "File", "imagePullPolicy": "IfNotPresent"}],
                "initContainers": [{"name": "migrate", "image": "shop/migrate:1.4",
                                    "env": [{"name": "TOKEN", "value": "s3cr3t"}]}],
                "dnsPolicy": "ClusterFirst", "restartPolicy": "Always",
                "schedulerName": "default-scheduler", "terminationGracePeriodSeconds": 30}}},
    "status": {
        "availableReplicas": 3, "observedGeneration": 7, "readyReplicas": 3, "replicas": 3,
        "updatedReplicas": 3,
        "conditions": [{"type": "Available", "status": "True", "reason": "MinimumReplicasAvailable",
                        "lastTransitionTime": "2025-03-01T10:00:05Z",
                        "lastUpdateTime": "2025-03-01T10:00:05Z",
                        "message": "Deployment has minimum availability."}]}}

# A Node as a kubelet registers and reports it
NODE = {
    "apiVersion": "v1", "kind": "Node",
    "metadata": {
        "annotations": {"node.alpha.kubernetes.io/ttl": "0",
                        "volumes.kubernetes.io/controller-managed-attach-detach": "true",
                        "example.com/rack": "r12"},
        "creationTimestamp": "2025-01-01T00:00:00Z",
        "labels": {"kubernetes.io/hostname": "worker-1", "kubernetes.io/os": "linux",
                   "node.kubernetes.io/instance-type": "m5.xlarge",
                   "topology.kubernetes.io/zone": "eu-west-1a"},
        "name": "worker-1", "resourceVersion": "998", "uid": "b7c1f0c4-1111-2222-3333-444455556666"},
    "spec": {"podCIDR": "10.244.1.0/24", "podCIDRs": ["10.244.1.0/24"],
             "providerID": "aws:///eu-west-1a/i-0abc",
             "taints": [{"effect": "NoSchedule", "key": "dedicated", "value": "batch"}],
             "unschedulable": True},
    "status": {
        "addresses": [{"address": "10.0.0.11", "type": "InternalIP"},
                      {"address": "worker-1", "type": "Hostname"}],
        "allocatable": {"cpu": "3920m", "ephemeral-storage": "95551679124", "memory": "15208924Ki",
                        "pods": "58"},
        "capacity": {"cpu": "4", "ephemeral-storage": "103681212Ki", "memory": "16069084Ki",
                     "pods": "58"},
        "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady",
                        "lastHeartbeatTime": "2025-03-01T10:00:00Z",
                        "lastTransitionTime": "2025-01-01T00:01:00Z",
                        "message": "kubelet is posting ready status"}],
        "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
        "images": [{"names": ["shop/web:1.4"], "sizeBytes": 123456789}],
        "nodeInfo": {"architecture": "amd64", "kubeletVersion": "v1.35.0", "osImage": "Ubuntu",
                     "containerRuntimeVersion": "containerd://2.0.0", "kernelVersion": "6.8.0",
                     "machineID": "x", "systemUUID": "y", "bootID": "z",
                     "kubeProxyVersion": "v1.35.0", "operatingSystem": "linux"},
        "volumesAttached": [{"devicePath": "", "name": "kubernetes.io/csi/ebs^vol-1"}],
        "volumesInUse": ["kubernetes.io/csi/ebs^vol-1"]}}

SECRET = {"apiVersion": "v1", "kind": "Secret", "type": "Opaque",
          "metadata": {"name": "db", "namespace": "shop"}, "data": {"password": "aHVudGVyMg=="}}


def _lst(items, api_version="v1", kind="List"):
    return {"apiVersion": api_version, "items": items, "kind": kind,
            "metadata": {"resourceVersion": ""}}


def _kubectl_yaml(items, **kw) -> str:
    """What ``kubectl get -o yaml`` prints: keys sorted, a List with items first."""
    return yaml.safe_dump(_lst(items, **kw), sort_keys=True, default_flow_style=False)


def _env_entries(value):
    if isinstance(value, dict):
        for key, item in value.items():
            if key == "env" and isinstance(item, list):
                yield from item
            yield from _env_entries(item)
    elif isinstance(value, list):
        for item in value:
            yield from _env_entries(item)


# ---------------------------------------------------------------------------------------------
# sanitize
# ---------------------------------------------------------------------------------------------


def test_sanitize_a_deployment_keeps_what_was_declared_and_no_secret_value():
    original = copy.deepcopy(DEPLOYMENT)
    out = sanitize(DEPLOYMENT)
    assert DEPLOYMENT == original                               # the input is not changed
    assert out["metadata"] == {"annotations": {"team": "checkout"}, "labels": {"app": "web"},
                               "name": "web", "namespace": "shop"}
    assert "status" not in out
    template = out["spec"]["template"]
    assert template["metadata"] == {"labels": {"app": "web"}}   # kubectl's creationTimestamp: null
    [app] = template["spec"]["containers"]
    assert app["env"] == [{"name": "DB_HOST"}, {"name": "DB_PASSWORD"}, {"name": "POD_IP"}]
    assert app["envFrom"] == DEPLOYMENT["spec"]["template"]["spec"]["containers"][0]["envFrom"]
    assert app["resources"] == {"requests": {"cpu": "250m", "memory": "256Mi"},
                                "limits": {"memory": "512Mi"}}
    assert template["spec"]["initContainers"][0]["env"] == [{"name": "TOKEN"}]
    # everything else of the spec is as declared (defaults included)
    spec = {k: v for k, v in out["spec"].items() if k != "template"}
    assert spec == {k: v for k, v in DEPLOYMENT["spec"].items() if k != "template"}
    text = json.dumps(out)
    for secret in ("hunter2", "s3cr3t", "db.shop.svc", "secretKeyRef", "managedFields", "123456"):
        assert secret not in text


def test_sanitize_a_node_keeps_capacity_allocatable_labels_taints_and_unschedulable():
    out = sanitize(NODE)
    assert out["status"] == {"capacity": NODE["status"]["capacity"],
                             "allocatable": NODE["status"]["allocatable"]}
    assert out["spec"] == NODE["spec"]
    assert out["metadata"] == {"annotations": {"example.com/rack": "r12"},
                               "labels": NODE["metadata"]["labels"], "name": "worker-1"}


def test_sanitize_never_keeps_a_secret():
    assert sanitize(SECRET) is None


def test_sanitize_keeps_what_each_kind_starts_from_and_owner_references_without_uid():
    pod = {"apiVersion": "v1", "kind": "Pod",
           "metadata": {"name": "web-7d4b9-x2x", "namespace": "shop", "uid": "u",
                        "deletionTimestamp": "2025-03-01T10:00:00Z",
                        "deletionGracePeriodSeconds": 30, "selfLink": "/api/v1/x",
                        "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet",
                                             "name": "web-7d4b9", "uid": "r-uid",
                                             "controller": True, "blockOwnerDeletion": True}]},
           "spec": {"nodeName": "worker-1",
                    "containers": [{"name": "app", "env": [{"name": "A", "value": "1"}]}],
                    "ephemeralContainers": [{"name": "debug",
                                             "env": [{"name": "B", "value": "2"}]}]},
           "status": {"phase": "Running", "podIP": "10.244.1.7", "qosClass": "Burstable",
                      "containerStatuses": [{"name": "app", "ready": True}]}}
    out = sanitize(pod)
    assert out["metadata"] == {"name": "web-7d4b9-x2x", "namespace": "shop", "ownerReferences": [
        {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-7d4b9", "controller": True,
         "blockOwnerDeletion": True}]}
    assert out["status"] == {"phase": "Running"}
    assert out["spec"]["containers"][0]["env"] == [{"name": "A"}]
    assert out["spec"]["ephemeralContainers"][0]["env"] == [{"name": "B"}]

    vpa = {"apiVersion": "autoscaling.k8s.io/v1", "kind": "VerticalPodAutoscaler",
           "metadata": {"name": "web", "namespace": "shop"},
           "spec": {"targetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}},
           "status": {"conditions": [{"type": "RecommendationProvided", "status": "True"}],
                      "recommendation": {"containerRecommendations": [
                          {"containerName": "app", "target": {"cpu": "300m", "memory": "300Mi"}}]}}}
    assert sanitize(vpa)["status"] == {"recommendation": vpa["status"]["recommendation"]}
    hpa = {"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
           "metadata": {"name": "web", "namespace": "shop"},
           "spec": {"maxReplicas": 10, "scaleTargetRef": {"kind": "Deployment", "name": "web"}},
           "status": {"currentReplicas": 3, "desiredReplicas": 4, "lastScaleTime": "x",
                      "currentMetrics": [], "conditions": []}}
    assert sanitize(hpa)["status"] == {"currentReplicas": 3, "desiredReplicas": 4}
    cronjob = {"apiVersion": "batch/v1", "kind": "CronJob",
               "metadata": {"name": "report", "namespace": "shop"},
               "spec": {"schedule": "0 * * * *", "jobTemplate": {"spec": {"template": {"spec": {
                   "restartPolicy": "OnFailure",
                   "containers": [{"name": "r", "env": [{"name": "KEY", "value": "v"}]}]}}}}},
               "status": {"lastScheduleTime": "2025-03-01T10:00:00Z"}}
    out = sanitize(cronjob)
    assert "status" not in out
    assert out["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"][0]["env"] == \
        [{"name": "KEY"}]
    namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "shop"},
                 "spec": {"finalizers": ["kubernetes"]}, "status": {"phase": "Active"}}
    assert sanitize(namespace) == {"apiVersion": "v1", "kind": "Namespace",
                                   "metadata": {"name": "shop"},
                                   "spec": {"finalizers": ["kubernetes"]}}


_names = st.text("abcdefghijklmnopqrstuvwxyz_ABCDEFGHIJKLMNOPQRSTUVWXYZ", min_size=1, max_size=8)
_env_entry = st.one_of(
    st.fixed_dictionaries({"name": _names, "value": st.text(max_size=12)}),
    st.fixed_dictionaries({"name": _names, "valueFrom": st.fixed_dictionaries(
        {"secretKeyRef": st.fixed_dictionaries({"name": _names, "key": _names})})}),
    st.fixed_dictionaries({"name": _names, "valueFrom": st.fixed_dictionaries(
        {"configMapKeyRef": st.fixed_dictionaries({"name": _names, "key": _names})})}),
    st.fixed_dictionaries({"name": _names}))
_container = st.fixed_dictionaries(
    {"name": _names, "image": _names},
    optional={"env": st.lists(_env_entry, max_size=4),
              "envFrom": st.lists(st.fixed_dictionaries({"secretRef": st.fixed_dictionaries(
                  {"name": _names})}), max_size=2),
              "resources": st.fixed_dictionaries({"requests": st.fixed_dictionaries(
                  {"cpu": st.sampled_from(["100m", "1", "2500m"])})})})
_pod_spec = st.fixed_dictionaries(
    {"containers": st.lists(_container, min_size=1, max_size=3)},
    optional={"initContainers": st.lists(_container, max_size=2),
              "ephemeralContainers": st.lists(_container, max_size=2),
              "nodeName": _names})
_meta = st.fixed_dictionaries(
    {"name": _names, "namespace": _names},
    optional={"uid": _names, "resourceVersion": st.integers(0, 9).map(str),
              "managedFields": st.just([{"manager": "kubectl"}]),
              "annotations": st.dictionaries(st.sampled_from(
                  ["kubectl.kubernetes.io/last-applied-configuration",
                   "deployment.kubernetes.io/revision", "team"]), _names, max_size=3),
              "ownerReferences": st.lists(st.fixed_dictionaries(
                  {"apiVersion": st.just("apps/v1"), "kind": st.just("ReplicaSet"),
                   "name": _names, "uid": _names, "controller": st.booleans()}), max_size=1)})


@st.composite
def _objects_with_pod_specs(draw):
    spec, meta = draw(_pod_spec), draw(_meta)
    template = {"metadata": {"labels": {"app": "x"}, "creationTimestamp": None}, "spec": spec}
    shape = draw(st.sampled_from(["Pod", "Deployment", "StatefulSet", "Job", "CronJob"]))
    if shape == "Pod":
        return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec,
                "status": {"phase": draw(st.sampled_from(["Pending", "Running"])),
                           "podIP": "10.0.0.1"}}
    if shape == "CronJob":
        return {"apiVersion": "batch/v1", "kind": "CronJob", "metadata": meta,
                "spec": {"schedule": "* * * * *", "jobTemplate": {"spec": {"template": template}}}}
    group = "batch/v1" if shape == "Job" else "apps/v1"
    return {"apiVersion": group, "kind": shape, "metadata": meta,
            "spec": {"template": template}, "status": {"replicas": 1}}


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_objects_with_pod_specs())
def test_sanitize_is_idempotent_and_leaves_no_env_value_anywhere(obj):
    once = sanitize(obj)
    assert sanitize(once) == once
    for entry in _env_entries(once):
        assert set(entry) == {"name"}
    # every env entry of the input is still there by name, in order
    assert [e["name"] for e in _env_entries(obj)] == [e["name"] for e in _env_entries(once)]
    assert "managedFields" not in once["metadata"] and "uid" not in once["metadata"]
    for owner in once["metadata"].get("ownerReferences", []):
        assert "uid" not in owner
    assert set(once.get("status", {})) <= {"phase"}


# ---------------------------------------------------------------------------------------------
# reading files
# ---------------------------------------------------------------------------------------------

WEB = {"apiVersion": "apps/v1", "kind": "Deployment",
       "metadata": {"name": "web", "namespace": "shop"},
       "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}},
                "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [
                    {"name": "app", "image": "web", "env": [{"name": "A", "value": "x"}]}]}}}}
SHOP = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "shop"}}


def _keys(snapshot):
    return {(kind, o["metadata"].get("namespace", ""), o["metadata"]["name"])
            for kind, objs in snapshot.objects.items() for o in objs}


def test_two_kubectl_lists_appended_without_a_separator_are_both_read():
    # kubectl get nodes -o yaml > f; kubectl get deploy -A -o yaml >> f
    text = _kubectl_yaml([NODE]) + _kubectl_yaml([DEPLOYMENT, WEB])
    assert text.count("\napiVersion: v1\n") == 1           # no '---' between the two
    snap = parse_snapshot(text, "cluster.yaml")
    assert _keys(snap) == {("Node", "", "worker-1"), ("Deployment", "shop", "web")}
    assert [o["metadata"]["name"] for o in snap.of("Node")] == ["worker-1"]
    assert len(snap.of("Deployment")) == 1                 # the same Deployment twice: later wins
    assert snap.of("Deployment")[0]["spec"]["replicas"] == 2
    assert any("duplicate" in w and "Deployment shop/web" in w for w in snap.warnings)
    assert snap.of("Node")[0] == sanitize(NODE)


def test_an_indented_apiversion_or_one_in_a_block_scalar_does_not_split_a_document():
    text = textwrap.dedent("""\
        apiVersion: v1
        kind: Namespace
        metadata:
          name: shop
          annotations:
            note: |
              apiVersion: v1
              kind: Secret
        """)
    snap = parse_snapshot(text, "ns.yaml")
    assert snap.of("Namespace")[0]["metadata"]["annotations"]["note"] == \
        "apiVersion: v1\nkind: Secret\n"
    assert snap.warnings == []


def test_a_yaml_stream_of_objects_and_lists():
    text = "---\n" + yaml.safe_dump(SHOP) + "---\n" + _kubectl_yaml([WEB]) + "---\n" + \
        yaml.safe_dump(NODE) + "...\n"
    snap = parse_snapshot(text)
    assert _keys(snap) == {("Namespace", "", "shop"), ("Deployment", "shop", "web"),
                           ("Node", "", "worker-1")}
    assert snap.warnings == []


def test_json_and_appended_json():
    one = json.dumps(_lst([SHOP, WEB]), indent=4)
    assert _keys(parse_snapshot(one, "c.json")) == {("Namespace", "", "shop"),
                                                    ("Deployment", "shop", "web")}
    two = one + "\n" + json.dumps(_lst([NODE]), indent=4) + "\n"
    assert _keys(parse_snapshot(two, "c.json")) == {("Namespace", "", "shop"),
                                                    ("Deployment", "shop", "web"),
                                                    ("Node", "", "worker-1")}


def test_typed_lists_give_their_items_kind_and_apiversion():
    bare = {k: v for k, v in WEB.items() if k not in ("apiVersion", "kind")}
    text = yaml.safe_dump({"apiVersion": "apps/v1", "kind": "DeploymentList", "metadata": {},
                           "items": [bare]})
    [web] = parse_snapshot(text).of("Deployment")
    assert web["apiVersion"] == "apps/v1" and web["kind"] == "Deployment"


def test_unknown_kinds_and_secrets_are_warnings_and_left_out():
    configmap = {"apiVersion": "v1", "kind": "ConfigMap",
                 "metadata": {"name": "settings", "namespace": "default"}, "data": {"a": "b"}}
    role = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
            "metadata": {"name": "viewer"}}
    snap = parse_snapshot(_kubectl_yaml([configmap, role, SECRET, WEB]), "c.yaml")
    assert set(snap.objects) == {"Deployment"}
    assert "ConfigMap default/settings: ignored (kvert does not simulate ConfigMaps)" in snap.warnings
    assert any(w.startswith("ClusterRole viewer: ignored") for w in snap.warnings)
    assert any(w.startswith("Secret shop/db: dropped") for w in snap.warnings)
    assert "aHVudGVyMg" not in json.dumps(snap.objects)


def test_a_kind_of_another_group_is_not_taken_for_the_kubernetes_one():
    other = {"apiVersion": "example.com/v1", "kind": "Deployment",
             "metadata": {"name": "web", "namespace": "shop"}}
    snap = parse_snapshot(yaml.safe_dump(other))
    assert snap.objects == {}
    assert any("Deployment shop/web: ignored" in w for w in snap.warnings)


def test_only_bare_pods_are_loaded():
    owned = {"apiVersion": "v1", "kind": "Pod", "metadata": {
        "name": "web-1", "namespace": "shop", "ownerReferences": [
            {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web", "uid": "u",
             "controller": True}]}, "spec": {"containers": [{"name": "a"}]}}
    bare = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "debug", "namespace": "shop"},
            "spec": {"containers": [{"name": "a"}]}}
    snap = parse_snapshot(_kubectl_yaml([owned, bare]))
    assert [p["metadata"]["name"] for p in snap.of("Pod")] == ["debug"]
    assert any("1 owned by a controller" in w for w in snap.warnings)


def test_an_autoscaling_v1_hpa_is_read_in_v2_shape():
    hpa = {"apiVersion": "autoscaling/v1", "kind": "HorizontalPodAutoscaler",
           "metadata": {"name": "web", "namespace": "shop"},
           "spec": {"minReplicas": 1, "maxReplicas": 5, "targetCPUUtilizationPercentage": 60,
                    "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment",
                                       "name": "web"}}}
    [out] = parse_snapshot(yaml.safe_dump(hpa)).of("HorizontalPodAutoscaler")
    assert out["apiVersion"] == "autoscaling/v2"
    assert out["spec"]["metrics"] == [{"type": "Resource", "resource": {
        "name": "cpu", "target": {"type": "Utilization", "averageUtilization": 60}}}]
    assert "targetCPUUtilizationPercentage" not in out["spec"]


def test_a_truncated_file_is_an_error_naming_the_file_and_line():
    text = _kubectl_yaml([SHOP, WEB])
    lines = text.splitlines(keepends=True)
    cut = next(i for i, line in enumerate(lines) if "image:" in line)
    truncated = "".join(lines[:cut]) + lines[cut].split(":")[0]     # "      image" with no ':'
    with pytest.raises(SnapshotError, match=rf"cluster\.yaml line {cut + 1}\b"):
        parse_snapshot(truncated, "cluster.yaml")
    # cut at a line boundary: valid YAML, but the List lacks the kind kubectl prints last
    with pytest.raises(SnapshotError, match=r"cluster\.yaml line 1: a List without kind"):
        parse_snapshot("".join(lines[:cut]), "cluster.yaml")


def test_a_truncated_json_file_is_an_error_naming_the_line():
    text = json.dumps(_lst([SHOP, WEB]), indent=2)
    lines = text.splitlines(keepends=True)
    with pytest.raises(SnapshotError, match=r"c\.json line \d+: not valid JSON"):
        parse_snapshot("".join(lines[:12]), "c.json")


def test_an_item_without_kind_or_name_is_an_error_naming_the_file_and_item():
    no_kind = {"apiVersion": "v1", "metadata": {"name": "x"}}
    with pytest.raises(SnapshotError, match=r"c\.yaml line \d+ items\[1\]: kind required"):
        parse_snapshot(_kubectl_yaml([SHOP, no_kind]), "c.yaml")
    with pytest.raises(SnapshotError, match=r"c\.json items\[0\]: kind and apiVersion required"):
        parse_snapshot(json.dumps(_lst([{"metadata": {"name": "x"}}])), "c.json")
    no_name = {"apiVersion": "v1", "kind": "Namespace", "metadata": {}}
    with pytest.raises(SnapshotError, match=r"items\[0\]: Namespace has no metadata.name"):
        parse_snapshot(_kubectl_yaml([no_name]), "c.yaml")


def test_an_empty_file_is_an_error(tmp_path):
    for text in ("", "\n# nothing\n", "---\n---\n"):
        with pytest.raises(SnapshotError, match="empty"):
            parse_snapshot(text, "e.yaml")
    (tmp_path / "e.yaml").write_text("")
    with pytest.raises(SnapshotError, match=r"e\.yaml: empty"):
        load_snapshot([tmp_path / "e.yaml"])


def test_several_files_merge_and_a_duplicate_warns_and_the_later_wins(tmp_path):
    a, b = tmp_path / "a.yaml", tmp_path / "b.yaml"
    a.write_text(_kubectl_yaml([SHOP, WEB]))
    b.write_text(_kubectl_yaml([{**WEB, "spec": {**WEB["spec"], "replicas": 5}}, NODE]))
    snap = load_snapshot([a, b])
    assert snap.source == f"{a}, {b}"
    assert [d["spec"]["replicas"] for d in snap.of("Deployment")] == [5]
    [warning] = [w for w in snap.warnings if "duplicate" in w]
    assert "Deployment shop/web" in warning and str(a) in warning and str(b) in warning
    assert snap.of("Job") == []
    with pytest.raises(SnapshotError, match="cannot read"):
        load_snapshot([tmp_path / "missing.yaml"])


def test_unquoted_timestamps_stay_strings():
    text = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  namespace: d\n" \
           "  annotations:\n    at: 2025-03-01T10:00:00Z\nspec:\n  containers: []\n"
    [pod] = parse_snapshot(text).of("Pod")
    assert pod["metadata"]["annotations"]["at"] == "2025-03-01T10:00:00Z"


# ---------------------------------------------------------------------------------------------
# capturing
# ---------------------------------------------------------------------------------------------


class FakeClient:
    """A Client serving fixed objects as kube-apiserver lists them (items without kind and
    apiVersion, pages of ``limit`` with a continue token)."""

    server = "https://cluster.example:6443"

    def __init__(self, objects: dict[str, list[dict]], errors: dict[str, Exception] | None = None):
        self.objects, self.errors, self.calls = objects, errors or {}, []

    async def list(self, resource, *, namespace=None, label_selector="", field_selector="",
                   limit=0, continue_token="", resource_version=""):
        self.calls.append((resource, namespace, limit, continue_token))
        if resource in self.errors:
            raise self.errors[resource]
        items = [o for o in self.objects.get(resource, [])
                 if namespace is None or o["metadata"].get("namespace") == namespace]
        start = int(continue_token or 0)
        end = start + limit if limit else len(items)
        page = [{k: v for k, v in o.items() if k not in ("apiVersion", "kind")}
                for o in items[start:end]]
        meta = {"resourceVersion": "42"}
        if end < len(items):
            meta["continue"] = str(end)
        rt = by_key(resource)
        return {"apiVersion": rt.api_version, "kind": f"{rt.kind}List", "metadata": meta,
                "items": page}

    async def get(self, resource, name, namespace=""):
        for o in self.objects.get(resource, []):
            if o["metadata"]["name"] == name:
                return {k: v for k, v in o.items() if k not in ("apiVersion", "kind")}
        raise NotFound(resource, name)


def _pod(name, namespace, owned=False):
    meta = {"name": name, "namespace": namespace, "uid": name}
    if owned:
        meta["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs",
                                    "uid": "x", "controller": True}]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta,
            "spec": {"containers": [{"name": "a", "env": [{"name": "E", "value": "v"}]}]},
            "status": {"phase": "Running"}}


def _cluster():
    deps = [{**WEB, "metadata": {"name": f"d{i}", "namespace": ns}}
            for ns in ("shop", "b") for i in (2, 1)]
    return {"nodes": [NODE, {**NODE, "metadata": {"name": "worker-0"}}],
            "namespaces": [SHOP, {**SHOP, "metadata": {"name": "b"}}],
            "apps/deployments": deps,
            "pods": [_pod("bare", "shop"), _pod("owned", "shop", owned=True), _pod("x", "b")],
            "secrets": [SECRET],
            "scheduling.k8s.io/priorityclasses": [{"apiVersion": "scheduling.k8s.io/v1",
                                                   "kind": "PriorityClass",
                                                   "metadata": {"name": "high"}, "value": 1000}]}


def test_capture_pages_fills_kinds_keeps_bare_pods_and_sorts():
    client = FakeClient(_cluster(), errors={
        "autoscaling.k8s.io/verticalpodautoscalers": RouteNotFound()})
    snapshot, warnings = asyncio.run(capture(client, page_size=1))
    assert snapshot["apiVersion"] == "v1" and snapshot["kind"] == "List"
    refs = [(o["kind"], o["metadata"].get("namespace", ""), o["metadata"]["name"])
            for o in snapshot["items"]]
    assert refs == [("Node", "", "worker-0"), ("Node", "", "worker-1"),
                    ("Namespace", "", "b"), ("Namespace", "", "shop"),
                    ("PriorityClass", "", "high"),
                    ("Deployment", "b", "d1"), ("Deployment", "b", "d2"), ("Pod", "b", "x"),
                    ("Deployment", "shop", "d1"), ("Deployment", "shop", "d2"),
                    ("Pod", "shop", "bare")]
    api_versions = {o["kind"]: o["apiVersion"] for o in snapshot["items"]}
    assert api_versions == {"Node": "v1", "Namespace": "v1", "Deployment": "apps/v1",
                            "PriorityClass": "scheduling.k8s.io/v1", "Pod": "v1"}
    assert warnings == [("VerticalPodAutoscalers: not served by https://cluster.example:6443; "
                         "none captured")]
    # pages of one object, following the continue token
    assert ("apps/deployments", None, 1, "3") in client.calls
    assert [e for e in _env_entries(snapshot) if set(e) != {"name"}] == []
    assert all("uid" not in o["metadata"] for o in snapshot["items"])
    # what capture writes, the loader reads back as the same objects
    text = yaml.safe_dump(snapshot, sort_keys=False)
    loaded = parse_snapshot(text)
    assert loaded.warnings == []
    assert sorted(loaded.objects) == sorted({"Node", "Namespace", "PriorityClass", "Deployment",
                                             "Pod"})
    assert sum(map(len, loaded.objects.values())) == len(snapshot["items"])
    assert set(SNAPSHOT_KINDS) >= set(loaded.objects)


def test_capture_reads_a_plain_404_as_not_served_and_a_plain_401_as_refused():
    # an API server's answer without a Status body (the client raises InternalError)
    not_found = InternalError("GET /apis/node.k8s.io/v1/runtimeclasses: HTTP 404: 404 page "
                              "not found")
    _, warnings = asyncio.run(capture(FakeClient(_cluster(), errors={
        "node.k8s.io/runtimeclasses": not_found})))
    assert warnings == [("RuntimeClasses: not served by https://cluster.example:6443; none "
                         "captured")]
    unauthorized = InternalError("GET /api/v1/nodes: HTTP 401: Unauthorized")
    with pytest.raises(CaptureError, match=r"Nodes from https://cluster\.example:6443: .*\(401\)"):
        asyncio.run(capture(FakeClient(_cluster(), errors={"nodes": unauthorized})))


def test_capture_restricted_to_namespaces():
    client = FakeClient(_cluster())
    snapshot, warnings = asyncio.run(capture(client, ["shop", "gone"]))
    refs = {(o["kind"], o["metadata"].get("namespace", ""), o["metadata"]["name"])
            for o in snapshot["items"]}
    assert ("Namespace", "", "shop") in refs and ("Namespace", "", "b") not in refs
    assert ("Node", "", "worker-1") in refs and ("PriorityClass", "", "high") in refs
    assert {ns for _, ns, _ in refs if ns} == {"shop"}
    assert warnings == [("Namespace gone: not found on https://cluster.example:6443; nothing "
                         "captured from it")]
    listed = {(r, ns) for r, ns, _, _ in client.calls if ns is not None}
    assert ("apps/deployments", "shop") in listed and ("pods", "shop") in listed
    assert all(ns == "shop" for _, ns in listed)


def test_capture_refused_is_an_error_naming_server_and_kind():
    client = FakeClient(_cluster(), errors={"apps/deployments": Forbidden(
        'deployments.apps is forbidden: User "bob" cannot list resource "deployments"')})
    with pytest.raises(CaptureError, match=r"Deployments from https://cluster\.example:6443: "
                                           r"Forbidden \(403\)"):
        asyncio.run(capture(client))


def test_capture_falls_back_to_a_full_list_when_the_continue_token_expires():
    class Expiring(FakeClient):
        async def list(self, resource, **kw):
            if kw.get("continue_token"):
                raise Expired("The provided continue parameter is too old")
            return await super().list(resource, **kw)

    client = Expiring(_cluster())
    snapshot, _ = asyncio.run(capture(client, page_size=1))
    assert sum(o["kind"] == "Deployment" for o in snapshot["items"]) == 4


def test_the_file_is_replaced_whole_or_not_at_all(tmp_path, monkeypatch):
    import os

    from kvert.cli.snapshot import write_atomically
    target = tmp_path / "cluster.yaml"
    target.write_text("old\n")
    write_atomically(str(target), "new\n")
    assert target.read_text() == "new\n" and [p.name for p in tmp_path.iterdir()] == ["cluster.yaml"]

    def broken(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", broken)
    with pytest.raises(OSError, match="disk full"):
        write_atomically(str(target), "newer\n")
    assert target.read_text() == "new\n" and [p.name for p in tmp_path.iterdir()] == ["cluster.yaml"]
