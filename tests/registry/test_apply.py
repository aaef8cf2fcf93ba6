"""Server-side apply and managedFields, checked against the shapes Kubernetes documents."""

import copy
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kvert.api.errors import BadRequest, Conflict, Invalid
from kvert.registry.apply import (ApplyConflict, fields_from_v1, fields_to_v1,
                                  manager_from_user_agent, path_string, server_side_apply,
                                  update_managed_fields)
from kvert.registry.patch import apply_patch

T0, T1, T2, T3 = ("2024-05-01T10:00:0%dZ" % i for i in range(4))

# The Deployment of the Server-Side Apply page, as kubectl apply --server-side sends it.
NGINX = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: nginx-deployment
  labels:
    app: nginx
spec:
  replicas: 3
  selector:
    matchLabels:
      app: nginx
  template:
    metadata:
      labels:
        app: nginx
    spec:
      containers:
      - name: nginx
        image: nginx:1.14.2
        ports:
        - containerPort: 80
"""


def apply(live, config, manager="kubectl", force=False, now=T0, **kw):
    return server_side_apply(live, config, manager, force, "apps/v1", "Deployment", now, **kw)


def managed(obj):
    return {(m["manager"], m["operation"]): m for m in obj["metadata"]["managedFields"]}


def config(**changes):
    import yaml

    obj = yaml.safe_load(NGINX)
    for path, value in changes.items():
        node = obj
        *parents, last = path.split("__")
        for p in parents:
            node = node[p]
        if value is None:
            node.pop(last, None)
        else:
            node[last] = value
    return obj


def test_apply_creates_and_records_managed_fields_like_kubernetes():
    obj = apply(None, NGINX)
    assert obj["apiVersion"] == "apps/v1" and obj["kind"] == "Deployment"
    assert obj["spec"]["replicas"] == 3
    assert obj["spec"]["template"]["spec"]["containers"] == [
        {"name": "nginx", "image": "nginx:1.14.2", "ports": [{"containerPort": 80}]}]
    assert obj["metadata"]["managedFields"] == [{
        "manager": "kubectl",
        "operation": "Apply",
        "apiVersion": "apps/v1",
        "time": T0,
        "fieldsType": "FieldsV1",
        "fieldsV1": {
            "f:metadata": {"f:labels": {"f:app": {}}},
            "f:spec": {
                "f:replicas": {},
                "f:selector": {},  # LabelSelector is an atomic struct
                "f:template": {
                    "f:metadata": {"f:labels": {"f:app": {}}},
                    "f:spec": {"f:containers": {'k:{"name":"nginx"}': {
                        ".": {},
                        "f:image": {},
                        "f:name": {},
                        "f:ports": {'k:{"containerPort":80,"protocol":"TCP"}': {
                            ".": {}, "f:containerPort": {}}},
                    }}},
                },
            },
        },
    }]


def test_json_body_and_decoded_objects_are_accepted():
    as_json = json.dumps(config())
    assert apply(None, as_json)["spec"] == apply(None, config())["spec"]
    assert apply(None, as_json.encode())["spec"]["replicas"] == 3


def test_reapply_with_a_field_removed_removes_it():
    first = apply(None, config(metadata__labels={"app": "nginx", "tier": "web"}))
    second = apply(first, config(spec__replicas=None), now=T1)
    assert "replicas" not in second["spec"]
    assert second["metadata"]["labels"] == {"app": "nginx"}
    entry = managed(second)[("kubectl", "Apply")]
    assert "f:replicas" not in entry["fieldsV1"]["f:spec"]
    assert entry["time"] == T1


def test_reapply_without_changes_keeps_the_time():
    first = apply(None, NGINX)
    again = apply(first, NGINX, now=T2)
    assert again == first


def test_removing_a_container_removes_the_item():
    cfg = config()
    cfg["spec"]["template"]["spec"]["containers"].append({"name": "side", "image": "envoy"})
    first = apply(None, cfg)
    second = apply(first, config(), now=T1)
    assert [c["name"] for c in second["spec"]["template"]["spec"]["containers"]] == ["nginx"]


def test_field_owned_by_another_manager_survives_removal():
    first = apply(None, NGINX)
    other = apply(first, {"apiVersion": "apps/v1", "kind": "Deployment",
                          "metadata": {"name": "nginx-deployment"}, "spec": {"replicas": 3}},
                  manager="hpa", now=T1)
    assert set(managed(other)) == {("kubectl", "Apply"), ("hpa", "Apply")}
    dropped = apply(other, config(spec__replicas=None), now=T2)
    assert dropped["spec"]["replicas"] == 3  # hpa still owns it
    assert "f:replicas" not in managed(dropped)[("kubectl", "Apply")]["fieldsV1"]["f:spec"]
    assert managed(dropped)[("hpa", "Apply")]["fieldsV1"] == {"f:spec": {"f:replicas": {}}}


def test_two_appliers_conflict_on_a_different_value():
    first = apply(None, NGINX)
    with pytest.raises(ApplyConflict) as info:
        apply(first, {"apiVersion": "apps/v1", "kind": "Deployment",
                      "metadata": {"name": "nginx-deployment"}, "spec": {"replicas": 5}},
              manager="other-manager", now=T1)
    err = info.value
    assert isinstance(err, Conflict)
    assert err.code == 409 and err.reason == "Conflict"
    assert err.message == 'Apply failed with 1 conflict: conflict with "kubectl": .spec.replicas'
    assert [c.to_dict() for c in err.causes] == [{
        "reason": "FieldManagerConflict", "message": 'conflict with "kubectl"',
        "field": ".spec.replicas"}]
    status = err.to_status()
    assert status["details"]["causes"][0]["reason"] == "FieldManagerConflict"


def test_same_value_is_shared_ownership_not_a_conflict():
    first = apply(None, NGINX)
    shared = apply(first, {"apiVersion": "apps/v1", "kind": "Deployment",
                           "metadata": {"name": "nginx-deployment"}, "spec": {"replicas": 3}},
                   manager="other", now=T1)
    assert "f:replicas" in managed(shared)[("kubectl", "Apply")]["fieldsV1"]["f:spec"]
    assert managed(shared)[("other", "Apply")]["fieldsV1"] == {"f:spec": {"f:replicas": {}}}


def test_force_takes_ownership():
    first = apply(None, NGINX)
    taken = apply(first, {"apiVersion": "apps/v1", "kind": "Deployment",
                          "metadata": {"name": "nginx-deployment"},
                          "spec": {"replicas": 5, "template": {"spec": {"containers": [
                              {"name": "nginx", "image": "nginx:1.27"}]}}}},
                  manager="other", force=True, now=T1)
    assert taken["spec"]["replicas"] == 5
    assert taken["spec"]["template"]["spec"]["containers"][0] == {
        "name": "nginx", "image": "nginx:1.27", "ports": [{"containerPort": 80}]}
    mine = managed(taken)[("kubectl", "Apply")]["fieldsV1"]
    assert "f:replicas" not in mine["f:spec"]
    container = mine["f:spec"]["f:template"]["f:spec"]["f:containers"]['k:{"name":"nginx"}']
    assert "f:image" not in container and "f:ports" in container
    # kubectl re-applying its old config now conflicts with the new owner
    with pytest.raises(ApplyConflict) as info:
        apply(taken, NGINX, now=T2)
    fields = sorted(c.field for c in info.value.causes)
    assert fields == ['.spec.replicas', '.spec.template.spec.containers[name="nginx"].image']
    assert info.value.message.startswith('Apply failed with 2 conflicts: conflicts with "other":')


def test_update_manager_owns_what_it_changed_and_conflicts_name_its_version():
    first = apply(None, NGINX)
    edited = copy.deepcopy(first)
    edited["spec"]["replicas"] = 7
    edited = update_managed_fields(first, edited, "kubectl-edit", now=T1)
    entry = managed(edited)[("kubectl-edit", "Update")]
    assert entry == {"manager": "kubectl-edit", "operation": "Update", "apiVersion": "apps/v1",
                     "time": T1, "fieldsType": "FieldsV1",
                     "fieldsV1": {"f:spec": {"f:replicas": {}}}}
    assert "f:replicas" not in managed(edited)[("kubectl", "Apply")]["fieldsV1"]["f:spec"]
    # Apply entries sort before Update entries, as Kubernetes orders them
    assert [m["operation"] for m in edited["metadata"]["managedFields"]] == ["Apply", "Update"]
    with pytest.raises(ApplyConflict) as info:
        apply(edited, NGINX, now=T2)
    assert info.value.causes[0].message == 'conflict with "kubectl-edit" using apps/v1'
    assert info.value.message == ('Apply failed with 1 conflict: conflict with "kubectl-edit" '
                                  'using apps/v1: .spec.replicas')


def test_update_on_create_owns_everything_and_marks_new_items():
    pod = {"apiVersion": "v1", "kind": "Pod",
           "metadata": {"name": "p", "namespace": "default", "uid": "u1", "labels": {"a": "b"}},
           "spec": {"containers": [{"name": "c", "image": "nginx", "resources": {}}],
                    "restartPolicy": "Always"},
           "status": {"phase": "Pending"}}
    created = update_managed_fields(None, pod, "kubectl-create", now=T0)
    assert created["metadata"]["managedFields"] == [{
        "manager": "kubectl-create", "operation": "Update", "apiVersion": "v1", "time": T0,
        "fieldsType": "FieldsV1",
        "fieldsV1": {
            "f:metadata": {"f:labels": {".": {}, "f:a": {}}},
            "f:spec": {"f:containers": {".": {}, 'k:{"name":"c"}': {
                ".": {}, "f:image": {}, "f:name": {}, "f:resources": {}}},
                "f:restartPolicy": {}},
            "f:status": {"f:phase": {}},
        }}]
    # an update that changes nothing keeps the record as it is
    assert update_managed_fields(created, copy.deepcopy(created), "kubelet", now=T1) == created
    # kubelet reporting status takes only what it changed
    running = copy.deepcopy(created)
    running["status"] = {"phase": "Running", "podIPs": [{"ip": "10.0.0.5"}]}
    running = update_managed_fields(created, running, "kubelet", now=T1,
                                    subresource="status")
    kubelet = [m for m in running["metadata"]["managedFields"] if m["manager"] == "kubelet"][0]
    assert kubelet["subresource"] == "status"
    assert kubelet["fieldsV1"] == {"f:status": {"f:phase": {}, "f:podIPs": {
        ".": {}, 'k:{"ip":"10.0.0.5"}': {".": {}, "f:ip": {}}}}}
    creator = [m for m in running["metadata"]["managedFields"]
               if m["manager"] == "kubectl-create"][0]
    assert "f:status" not in creator["fieldsV1"]


def test_client_sent_managed_fields_replace_or_clear_the_record():
    first = apply(None, NGINX)
    cleared = copy.deepcopy(first)
    cleared["metadata"]["managedFields"] = []
    assert "managedFields" not in update_managed_fields(first, cleared, "x", now=T1)["metadata"]
    bad = copy.deepcopy(first)
    bad["metadata"]["managedFields"] = [{"manager": "m", "operation": "Sideways"}]
    with pytest.raises(BadRequest, match="managedFields"):
        update_managed_fields(first, bad, "x", now=T1)


def test_untracked_object_belongs_to_before_first_apply():
    live = apply(None, NGINX)
    del live["metadata"]["managedFields"]
    with pytest.raises(ApplyConflict) as info:
        apply(live, config(spec__replicas=4), now=T1)
    assert info.value.causes[0].message.startswith('conflict with "before-first-apply"')
    same = apply(live, NGINX, now=T1)
    assert ("before-first-apply", "Update") in managed(same)


def test_associative_lists_merge_by_key_and_atomic_lists_replace():
    first = apply(None, NGINX)
    cfg = {"apiVersion": "apps/v1", "kind": "Deployment",
           "metadata": {"name": "nginx-deployment"},
           "spec": {"template": {"spec": {
               "containers": [{"name": "side", "image": "envoy", "args": ["-a"]}],
               "tolerations": [{"key": "k", "operator": "Exists"}]}}}}
    both = apply(first, cfg, manager="mesh", now=T1)
    spec = both["spec"]["template"]["spec"]
    assert [c["name"] for c in spec["containers"]] == ["nginx", "side"]
    cfg["spec"]["template"]["spec"]["containers"][0]["args"] = ["-b"]
    cfg["spec"]["template"]["spec"]["tolerations"] = [{"key": "j", "operator": "Exists"}]
    again = apply(both, cfg, manager="mesh", now=T2)
    spec = again["spec"]["template"]["spec"]
    assert spec["containers"][1]["args"] == ["-b"]
    assert spec["tolerations"] == [{"key": "j", "operator": "Exists"}]
    mesh = managed(again)[("mesh", "Apply")]["fieldsV1"]["f:spec"]["f:template"]["f:spec"]
    assert mesh["f:tolerations"] == {}
    assert mesh["f:containers"]['k:{"name":"side"}']["f:args"] == {}


def test_sets_union_across_managers_and_use_value_paths():
    first = apply(None, config(metadata__finalizers=["a.io/x"]))
    other = apply(first, {"apiVersion": "apps/v1", "kind": "Deployment",
                          "metadata": {"name": "nginx-deployment", "finalizers": ["b.io/y"]}},
                  manager="ctrl", now=T1)
    assert other["metadata"]["finalizers"] == ["a.io/x", "b.io/y"]
    assert managed(other)[("ctrl", "Apply")]["fieldsV1"] == {
        "f:metadata": {"f:finalizers": {'v:"b.io/y"': {}}}}
    assert path_string(("f:metadata", "f:finalizers", 'v:"b.io/y"')) == \
        '.metadata.finalizers[="b.io/y"]'


def test_status_is_not_applied_through_the_main_resource():
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
           "spec": {"containers": [{"name": "c", "image": "i"}]},
           "status": {"phase": "Running"}}
    obj = server_side_apply(None, pod, "me", False, "v1", "Pod", T0)
    assert "status" not in obj
    live = dict(obj, status={"phase": "Pending"})
    status = server_side_apply(live, pod, "kubelet", False, "v1", "Pod", T1,
                               subresource="status")
    assert status["status"] == {"phase": "Running"}
    assert status["spec"] == obj["spec"]
    entry = [m for m in status["metadata"]["managedFields"] if m["manager"] == "kubelet"][0]
    assert entry["subresource"] == "status"
    assert entry["fieldsV1"] == {"f:status": {"f:phase": {}}}


def test_bad_apply_requests():
    with pytest.raises(BadRequest, match="error decoding YAML"):
        apply(None, "spec: [unclosed")
    with pytest.raises(BadRequest, match="error decoding YAML"):
        apply(None, "- a list")
    with pytest.raises(BadRequest, match="Incorrect version"):
        apply(None, NGINX.replace("apps/v1", "apps/v2"))
    with pytest.raises(BadRequest, match="managedFields must be nil"):
        apply(None, config(metadata__managedFields=[]))
    with pytest.raises(Invalid) as info:
        apply(None, NGINX, manager="")
    assert info.value.code == 422 and "fieldManager" in info.value.message
    cfg = config()
    cfg["spec"]["template"]["spec"]["containers"].append({"image": "no-name"})
    with pytest.raises(BadRequest, match='omits key field "name"'):
        apply(None, cfg)


def test_yaml_timestamps_stay_strings():
    cfg = NGINX.replace("  labels:\n    app: nginx\n",
                        "  labels:\n    app: nginx\n  annotations:\n    at: 2024-01-01T00:00:00Z\n",
                        1)
    assert apply(None, cfg)["metadata"]["annotations"] == {"at": "2024-01-01T00:00:00Z"}


def test_apply_patch_dispatches_apply_and_creates():
    created = apply_patch(None, NGINX, "apply", field_manager="kubectl", now=T0,
                          api_version="apps/v1", kind="Deployment")
    assert created == apply(None, NGINX)
    updated = apply_patch(created, config(spec__replicas=1), "application/apply-patch+yaml",
                          field_manager="kubectl", now=T1)
    assert updated["spec"]["replicas"] == 1
    with pytest.raises(Invalid):
        apply_patch(created, NGINX, "apply")


def test_manager_from_user_agent():
    assert manager_from_user_agent("kubectl/v1.30.0 (linux/amd64) kubernetes/7c48c2b") == "kubectl"
    assert manager_from_user_agent("") == ""


paths = st.lists(st.lists(st.one_of(
    st.sampled_from(["f:spec", "f:a", "f:b", "f:metadata"]),
    st.sampled_from(['k:{"name":"x"}', 'k:{"name":"y"}', 'v:"z"'])), min_size=1, max_size=4)
    .map(tuple), max_size=8)


@settings(max_examples=200, deadline=None)
@given(paths)
def test_fields_v1_round_trip(members):
    assert fields_from_v1(fields_to_v1(set(members))) == set(members)


# ---- a single applier: the object is what it last applied --------------------------------------

@st.composite
def pod_configs(draw):
    names = draw(st.lists(st.sampled_from(["app", "side", "log"]), unique=True, min_size=1))
    containers = []
    for name in names:
        c = {"name": name, "image": draw(st.sampled_from(["a", "b"]))}
        env = draw(st.lists(st.sampled_from(["X", "Y", "Z"]), unique=True, max_size=3))
        if env:
            c["env"] = [{"name": e, "value": draw(st.sampled_from(["1", "2"]))} for e in env]
        if draw(st.booleans()):
            c["args"] = draw(st.lists(st.sampled_from(["-v", "-q"]), min_size=1, max_size=2))
        if draw(st.booleans()):
            c["resources"] = {"requests": {"cpu": draw(st.sampled_from(["1", "2"]))}}
        containers.append(c)
    metadata = {"name": "p"}
    labels = draw(st.dictionaries(st.sampled_from("abc"), st.sampled_from("xy"), max_size=3))
    if labels:
        metadata["labels"] = labels
    finalizers = draw(st.lists(st.sampled_from(["f/1", "f/2", "f/3"]), unique=True, max_size=3))
    if finalizers:
        metadata["finalizers"] = finalizers
    spec = {"containers": containers}
    if draw(st.booleans()):
        spec["nodeSelector"] = {"zone": draw(st.sampled_from(["a", "b"]))}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": spec}


def without_managed_fields(obj):
    out = copy.deepcopy(obj)
    out["metadata"].pop("managedFields", None)
    return out


@settings(max_examples=100, deadline=None)
@given(pod_configs(), pod_configs())
def test_a_single_applier_ends_with_exactly_its_last_configuration(a, b):
    first = server_side_apply(None, a, "me", False, "v1", "Pod", T0)
    assert without_managed_fields(first) == a
    second = server_side_apply(first, b, "me", False, "v1", "Pod", T1)
    assert without_managed_fields(second) == b
    assert second["metadata"]["managedFields"] == \
        server_side_apply(None, b, "me", False, "v1", "Pod", second["metadata"][
            "managedFields"][0]["time"])["metadata"]["managedFields"]


def test_a_write_whose_fields_cannot_be_tracked_gets_validations_answer(env):
    """FieldManager.UpdateNoErrors (k8s.io/apiserver/pkg/endpoints/handlers/fieldmanager): a
    container without its merge key "name" cannot be tracked, so the object goes on with its
    managedFields cleared and validation answers 422 (kubectl create of such a pod upstream:
    `The Pod "bad" is invalid: spec.containers[0].name: Required value`)."""
    body = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "bad", "namespace": "default"},
            "spec": {"containers": [{"image": "nginx"}]}}
    with pytest.raises(Invalid) as info:
        env.run(env.registry.create("pods", body, namespace="default", field_manager="kubectl-create"))
    assert [c.field for c in info.value.causes] == ["spec.containers[0].name"]
    assert info.value.causes[0].message == "Required value"


def test_kubectl_server_side_apply_takes_over_its_client_side_apply(env):
    """lastAppliedManager (k8s.io/apiserver/pkg/endpoints/handlers/fieldmanager,
    TestApplyUsingLastAppliedAnnotation): `kubectl apply --server-side` (manager "kubectl")
    after `kubectl apply` may change the fields the last-applied configuration set without a
    conflict; other managers, and fields outside the last-applied configuration, still
    conflict."""
    import json as _json
    last = {"apiVersion": "v1", "kind": "ConfigMap", "data": {"a": "1", "b": "2"},
            "metadata": {"annotations": {}, "name": "cm", "namespace": "default"}}
    body = {"apiVersion": "v1", "kind": "ConfigMap", "data": {"a": "1", "b": "2"},
            "metadata": {"name": "cm", "namespace": "default", "annotations": {
                "kubectl.kubernetes.io/last-applied-configuration": _json.dumps(last)}}}

    async def main():
        await env.registry.create("configmaps", body, namespace="default",
                                  field_manager="kubectl-client-side-apply")
        await env.registry.patch("configmaps", "cm", {"data": {"c": "edited"}}, "merge",
                                 namespace="default", field_manager="kubectl-edit")
        config = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm"},
                  "data": {"a": "3", "b": "2"}}
        with pytest.raises(ApplyConflict):
            await env.registry.apply("configmaps", "cm", config, namespace="default", manager="other")
        obj, _ = await env.registry.apply("configmaps", "cm", config, namespace="default",
                                          manager="kubectl")
        assert obj["data"] == {"a": "3", "b": "2", "c": "edited"}
        with pytest.raises(ApplyConflict) as info:      # c: kubectl-edit's, not in last-applied
            await env.registry.apply("configmaps", "cm", {**config, "data": {"a": "3", "c": "x"}},
                                     namespace="default", manager="kubectl")
        assert [c.field for c in info.value.causes] == [".data.c"]

    env.run(main())
