import pytest

from kvert.api.errors import AlreadyExists, BadRequest, Conflict, Forbidden, Invalid, NotFound

from .conftest import pod


def test_create_pod_applies_strategy_and_defaults(env):
    created = env.run(env.client.create("pods", pod(), namespace="default"))
    assert created["metadata"]["namespace"] == "default"
    assert created["metadata"]["resourceVersion"]
    assert created["status"] == {"phase": "Pending", "qosClass": "Guaranteed"}
    assert created["spec"]["restartPolicy"] == "Always"
    assert created["spec"]["schedulerName"] == "default-scheduler"
    assert created["spec"]["terminationGracePeriodSeconds"] == 30


def test_create_drops_client_status_for_kinds_with_status_subresource(env):
    obj = pod()
    obj["status"] = {"phase": "Running", "podIP": "10.0.0.1"}
    created = env.run(env.client.create("pods", obj, namespace="ns1"))
    assert created["status"]["phase"] == "Pending" and "podIP" not in created["status"]


def test_generate_name_gets_a_five_character_suffix(env):
    obj = pod()
    del obj["metadata"]["name"]
    obj["metadata"]["generateName"] = "web-"
    created = env.run(env.client.create("pods", obj, namespace="default"))
    name = created["metadata"]["name"]
    assert name.startswith("web-") and len(name) == 9
    assert set(name[4:]) <= set("bcdfghjklmnpqrstvwxz2456789")


def test_invalid_object_is_refused_with_causes_and_changes_nothing(env):
    before = env.store.current_revision()
    bad = pod(cpu="2", memory="1Gi")
    bad["spec"]["containers"][0]["resources"]["limits"]["cpu"] = "1"
    bad["spec"]["containers"].append({"name": "app", "image": "x"})
    with pytest.raises(Invalid) as info:
        env.run(env.client.create("pods", bad, namespace="default"))
    err = info.value
    assert err.code == 422 and err.reason == "Invalid"
    fields = {c.field for c in err.causes}
    assert "spec.containers[0].resources.requests" in fields or any(
        f.startswith("spec.containers[0].resources.requests") for f in fields)
    assert "spec.containers[1].name" in fields
    status = err.to_status()
    assert status["details"]["kind"] == "Pod" and status["details"]["causes"]
    assert env.store.current_revision() == before
    with pytest.raises(NotFound):
        env.run(env.client.get("pods", "web", "default"))


def test_namespace_and_kind_must_match_the_request(env):
    obj = pod()
    obj["metadata"]["namespace"] = "a"
    with pytest.raises(BadRequest, match="namespace"):
        env.run(env.client.create("pods", obj, namespace="b"))
    with pytest.raises(BadRequest, match="does not match"):
        env.run(env.client.create("apps/deployments", pod(), namespace="b"))


def test_duplicate_create_is_already_exists(env):
    env.run(env.client.create("pods", pod(), namespace="default"))
    with pytest.raises(AlreadyExists) as info:
        env.run(env.client.create("pods", pod(), namespace="default"))
    assert info.value.code == 409


def test_update_keeps_status_and_status_update_keeps_spec_and_labels(env):
    created = env.run(env.client.create("pods", pod(), namespace="default"))
    created["status"]["phase"] = "Running"
    created["metadata"]["labels"]["tier"] = "front"
    updated = env.run(env.client.update("pods", created))
    assert updated["status"]["phase"] == "Pending"
    assert updated["metadata"]["labels"]["tier"] == "front"

    updated["status"]["phase"] = "Running"
    updated["metadata"]["labels"]["sneaky"] = "yes"
    updated["spec"]["activeDeadlineSeconds"] = 5
    after = env.run(env.client.update_status("pods", updated))
    assert after["status"]["phase"] == "Running"
    assert "sneaky" not in after["metadata"]["labels"]
    assert "activeDeadlineSeconds" not in after["spec"]


def test_stale_update_is_a_conflict(env):
    created = env.run(env.client.create("pods", pod(), namespace="default"))
    fresh = dict(created, metadata=dict(created["metadata"], labels={"v": "1"}))
    env.run(env.client.update("pods", fresh))
    created["metadata"]["labels"] = {"v": "2"}
    with pytest.raises(Conflict) as info:
        env.run(env.client.update("pods", created))
    assert info.value.code == 409


def test_merge_and_json_patch(env):
    env.run(env.client.create("configmaps", {"apiVersion": "v1", "kind": "ConfigMap",
                                              "metadata": {"name": "cfg"}, "data": {"a": "1", "b": "2"}},
                              namespace="default"))
    merged = env.run(env.client.patch("configmaps", "cfg", {"data": {"a": None, "c": "3"}},
                                      namespace="default"))
    assert merged["data"] == {"b": "2", "c": "3"}
    patched = env.run(env.client.patch("configmaps", "cfg",
                                       [{"op": "replace", "path": "/data/b", "value": "20"},
                                        {"op": "test", "path": "/data/c", "value": "3"}],
                                       "json", namespace="default"))
    assert patched["data"] == {"b": "20", "c": "3"}
    with pytest.raises(BadRequest):
        env.run(env.client.patch("configmaps", "cfg", [{"op": "test", "path": "/data/c", "value": "x"}],
                                 "json", namespace="default"))
    with pytest.raises(Conflict):
        env.run(env.client.patch("configmaps", "cfg", {"metadata": {"resourceVersion": "1"},
                                                       "data": {"z": "9"}}, namespace="default"))
    assert env.run(env.client.get("configmaps", "cfg", "default"))["data"] == {"b": "20", "c": "3"}


def test_resize_changes_only_resources_and_keeps_qos(env):
    env.run(env.client.create("pods", pod(cpu="1", memory="1Gi"), namespace="default"))
    resized = env.run(env.client.resize("default", "web", {"spec": {"containers": [{
        "name": "app", "image": "evil:latest",
        "resources": {"requests": {"cpu": "650m", "memory": "1Gi"},
                      "limits": {"cpu": "650m", "memory": "1Gi"}}}]}}))
    container = resized["spec"]["containers"][0]
    assert container["resources"]["requests"]["cpu"] == "650m"
    assert container["image"] == "nginx:1.27"          # dropped, as Kubernetes' /resize does
    assert resized["metadata"]["generation"] == 2
    with pytest.raises(Invalid):                          # Guaranteed -> Burstable is refused
        env.run(env.client.resize("default", "web", {"spec": {"containers": [{
            "name": "app", "resources": {"requests": {"cpu": "500m", "memory": "1Gi"},
                                         "limits": {"cpu": "650m", "memory": "1Gi"}}}]}}))


def test_spec_resources_cannot_change_through_a_plain_update(env):
    created = env.run(env.client.create("pods", pod(), namespace="default"))
    created["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "250m"
    created["spec"]["containers"][0]["resources"]["limits"]["cpu"] = "250m"
    with pytest.raises(Invalid):
        env.run(env.client.update("pods", created))


def test_bind_sets_node_once(env):
    env.run(env.client.create("pods", pod(), namespace="default"))
    status = env.run(env.client.bind("default", "web", "node-1"))
    assert status["status"] == "Success"
    bound = env.run(env.client.get("pods", "web", "default"))
    assert bound["spec"]["nodeName"] == "node-1"
    assert [c["status"] for c in bound["status"]["conditions"] if c["type"] == "PodScheduled"] == ["True"]
    with pytest.raises(Conflict, match="already assigned"):
        env.run(env.client.bind("default", "web", "node-2"))


def test_pod_delete_is_graceful_once_scheduled(env):
    env.run(env.client.create("pods", pod("a"), namespace="default"))
    env.run(env.client.create("pods", pod("b"), namespace="default"))
    env.run(env.client.bind("default", "b", "node-1"))
    env.run(env.client.delete("pods", "a", namespace="default"))
    with pytest.raises(NotFound):
        env.run(env.client.get("pods", "a", "default"))
    terminating = env.run(env.client.delete("pods", "b", namespace="default"))
    assert terminating["metadata"]["deletionGracePeriodSeconds"] == 30
    assert terminating["metadata"]["deletionTimestamp"]
    env.run(env.client.delete("pods", "b", namespace="default", grace_period_seconds=0))
    with pytest.raises(NotFound):
        env.run(env.client.get("pods", "b", "default"))


def test_dry_run_writes_nothing(env):
    before = env.store.current_revision()
    created = env.run(env.client.create("pods", pod(), namespace="default", dry_run=True))
    assert created["status"]["qosClass"] == "Guaranteed"
    assert env.store.current_revision() == before


def test_admission_plugins_mutate_then_refuse_before_anything_is_stored(env):
    class AddLabel:
        name = "AddLabel"

        async def admit(self, attrs):
            if attrs.object is not None:
                attrs.object["metadata"].setdefault("labels", {})["admitted"] = "true"

    class RefuseForbidden:
        name = "RefuseForbidden"

        async def validate(self, attrs):
            if attrs.object and attrs.object["metadata"]["name"] == "forbidden":
                raise Forbidden('pods "forbidden" is forbidden: by policy')

    env.admission.plugins += [AddLabel(), RefuseForbidden()]
    created = env.run(env.client.create("pods", pod(), namespace="default"))
    assert created["metadata"]["labels"]["admitted"] == "true"
    before = env.store.current_revision()
    with pytest.raises(Forbidden):
        env.run(env.client.create("pods", pod("forbidden"), namespace="default"))
    assert env.store.current_revision() == before


def test_a_plugin_naming_its_resources_is_called_only_for_them_and_plugins_join_late(env):
    calls = []

    class PodsOnly:
        name = "PodsOnly"
        resources = frozenset({"pods"})

        async def admit(self, attrs):
            calls.append(("PodsOnly.admit", attrs.resource))

        async def validate(self, attrs):
            calls.append(("PodsOnly.validate", attrs.resource))

    class Every:
        name = "Every"

        async def validate(self, attrs):
            calls.append(("Every.validate", attrs.resource))

    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}}
    env.admission.plugins.append(PodsOnly())
    env.run(env.client.create("configmaps", cm, namespace="default"))
    env.run(env.client.create("pods", pod(), namespace="default"))
    assert calls == [("PodsOnly.admit", "pods"), ("PodsOnly.validate", "pods")]
    calls.clear()
    env.admission.plugins.append(Every())       # after the chain has served both resources
    env.run(env.client.create("configmaps", dict(cm, metadata={"name": "d"}), namespace="default"))
    env.run(env.client.create("pods", pod("api"), namespace="default"))
    assert calls == [("Every.validate", "configmaps"), ("PodsOnly.admit", "pods"),
                     ("PodsOnly.validate", "pods"), ("Every.validate", "pods")]


def test_subresources_a_kind_does_not_have_are_not_found(env):
    cm = env.run(env.client.create("configmaps", {"apiVersion": "v1", "kind": "ConfigMap",
                                                  "metadata": {"name": "c"}}, namespace="default"))
    for sub in ("status", "resize"):
        with pytest.raises(NotFound):
            env.run(env.client.update("configmaps", cm, subresource=sub))


def test_sidecars_resize_through_the_resize_subresource(env):
    obj = pod(cpu="500m", memory="128Mi")
    obj["spec"]["initContainers"] = [{"name": "proxy", "image": "envoy", "restartPolicy": "Always",
                                      "resources": {"requests": {"cpu": "100m", "memory": "64Mi"},
                                                    "limits": {"cpu": "100m", "memory": "64Mi"}}}]
    env.run(env.client.create("pods", obj, namespace="default"))
    resized = env.run(env.client.resize("default", "web", {"spec": {"initContainers": [{
        "name": "proxy", "resources": {"requests": {"cpu": "200m", "memory": "64Mi"},
                                       "limits": {"cpu": "200m", "memory": "64Mi"}}}]}}))
    assert resized["spec"]["initContainers"][0]["resources"]["requests"]["cpu"] == "200m"
    assert resized["spec"]["containers"][0]["resources"]["requests"]["cpu"] == "500m"


def test_mutations_that_replace_metadata_are_kept_with_generate_name(env):
    class ReplaceMetadata:
        name = "ReplaceMetadata"

        async def admit(self, attrs):
            if attrs.object is not None and attrs.operation == "CREATE":
                patched = dict(attrs.object, metadata={**attrs.object["metadata"], "labels": {"m": "1"}})
                attrs.object.clear()
                attrs.object.update(patched)

    env.admission.plugins.append(ReplaceMetadata())
    obj = pod()
    del obj["metadata"]["name"]
    obj["metadata"]["generateName"] = "web-"
    created = env.run(env.client.create("pods", obj, namespace="default"))
    assert created["metadata"]["name"].startswith("web-")
    assert created["metadata"]["labels"] == {"m": "1"}


# ---- /status of a custom resource: only the status is checked against the schema ----------------

def _widget_type(replicas_max):
    from kvert.api import kinds
    schema = {"type": "object", "properties": {
        "spec": {"type": "object", "properties": {
            "replicas": {"type": "integer", "minimum": 1, "maximum": replicas_max}}},
        "status": {"type": "object", "properties": {
            "phase": {"type": "string", "enum": ["Pending", "Ready"], "default": "Pending"},
            "ready": {"type": "integer", "minimum": 0}}}}}
    return kinds.ResourceType("example.com", "v1", "Widget", "widgets", True,
                              frozenset({"status"}), schema=schema)


@pytest.fixture
def widgets():
    from kvert.api import kinds
    kinds.register(_widget_type(10))
    yield "example.com/widgets"
    kinds.unregister("example.com/widgets")


def _widget(replicas=3):
    return {"apiVersion": "example.com/v1", "kind": "Widget",
            "metadata": {"name": "w", "namespace": "default"}, "spec": {"replicas": replicas}}


def test_custom_status_write_is_pruned_defaulted_and_validated(env, widgets):
    created = env.run(env.client.create(widgets, _widget(), namespace="default"))
    created["status"] = {"ready": 2, "junk": 1}
    written = env.run(env.client.update(widgets, created, subresource="status"))
    assert written["status"] == {"ready": 2, "phase": "Pending"}
    assert written["spec"] == {"replicas": 3}

    bad = dict(written, status={"phase": "Lost", "ready": -1})
    with pytest.raises(Invalid) as info:
        env.run(env.client.update(widgets, bad, subresource="status"))
    assert info.value.code == 422
    assert sorted(c.field for c in info.value.causes) == ["status.phase", "status.ready"]
    stored = env.run(env.client.get(widgets, "w", "default"))
    assert stored == written                    # nothing changed, not even the resourceVersion


def test_custom_status_write_ratchets_a_spec_a_stricter_schema_refuses(env, widgets):
    """The CRD's schema was tightened after the object was stored: the object's spec is now
    invalid, yet its status can still be written (Kubernetes' validation ratcheting: fields a
    write does not change are not held to the new rules)."""
    from kvert.api import kinds
    created = env.run(env.client.create(widgets, _widget(replicas=8), namespace="default"))
    kinds.register(_widget_type(5))
    created["status"] = {"phase": "Ready", "ready": 8}
    written = env.run(env.client.update(widgets, created, subresource="status"))
    assert written["status"] == {"phase": "Ready", "ready": 8}
    assert written["spec"] == {"replicas": 8}


def test_a_created_crd_answers_with_the_status_the_strategy_sets(env):
    """apiextensions-apiserver's strategy PrepareForCreate: status reset, the storage version
    recorded in storedVersions; acceptedNames' plural and kind always serialized."""
    crd = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
           "metadata": {"name": "widgets.example.com"},
           "spec": {"group": "example.com", "scope": "Namespaced",
                    "names": {"kind": "Widget", "plural": "widgets"},
                    "versions": [{"name": "v1beta1", "served": True, "storage": False,
                                  "schema": {"openAPIV3Schema": {"type": "object"}}},
                                 {"name": "v1", "served": True, "storage": True,
                                  "schema": {"openAPIV3Schema": {"type": "object"}}}]},
           "status": {"storedVersions": ["v0"], "conditions": [{"type": "Established"}]}}
    created = env.run(env.registry.create("apiextensions.k8s.io/customresourcedefinitions", crd))
    assert created["status"] == {"acceptedNames": {"plural": "", "kind": ""}, "storedVersions": ["v1"]}
