"""Strategic merge patch: Kubernetes' documented examples, apimachinery's directives, and
properties (a two-way patch turns one pod into the other; merging by key ignores order)."""

import copy

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kvert.api.errors import BadRequest, Invalid, UnsupportedMediaType
from kvert.registry.patch import apply_patch
from kvert.registry.strategic import create_two_way_merge_patch, strategic_merge_patch

from .conftest import pod


def deployment():
    """deployment-patch.yaml of "Update API Objects in Place Using kubectl patch"."""
    return {
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "patch-demo"},
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": {"app": "nginx"}},
            "template": {
                "metadata": {"labels": {"app": "nginx"}},
                "spec": {
                    "containers": [{"name": "patch-demo-ctr", "image": "nginx"}],
                    "tolerations": [{"effect": "NoSchedule", "key": "dedicated",
                                     "value": "test-team"}],
                },
            },
        },
    }


def smp_deploy(obj, patch):
    return strategic_merge_patch(obj, patch, "apps/v1", "Deployment")


def smp_pod(obj, patch):
    return strategic_merge_patch(obj, patch, "v1", "Pod")


def template_spec(patch):
    return {"spec": {"template": {"spec": patch}}}


# ---- the kubectl patch task page -------------------------------------------------------


def test_docs_containers_merge_by_name_and_the_new_one_comes_first():
    before = deployment()
    after = smp_deploy(before, template_spec(
        {"containers": [{"name": "patch-demo-ctr-2", "image": "redis"}]}))
    assert after["spec"]["template"]["spec"]["containers"] == [
        {"name": "patch-demo-ctr-2", "image": "redis"},
        {"name": "patch-demo-ctr", "image": "nginx"},
    ]
    assert before == deployment()  # the input is not modified
    assert after["spec"]["replicas"] == 2


def test_docs_tolerations_have_no_merge_key_and_are_replaced():
    after = smp_deploy(deployment(), template_spec(
        {"tolerations": [{"effect": "NoSchedule", "key": "disktype", "value": "ssd"}]}))
    assert after["spec"]["template"]["spec"]["tolerations"] == [
        {"effect": "NoSchedule", "key": "disktype", "value": "ssd"}]


def test_docs_retain_keys_drops_the_rolling_update_parameters():
    obj = deployment()
    obj["spec"]["strategy"] = {"type": "RollingUpdate",
                               "rollingUpdate": {"maxSurge": "30%", "maxUnavailable": "30%"}}
    after = smp_deploy(obj, {"spec": {"strategy": {"$retainKeys": ["type"], "type": "Recreate"}}})
    assert after["spec"]["strategy"] == {"type": "Recreate"}
    # without the directive the maps merge and rollingUpdate stays
    merged = smp_deploy(obj, {"spec": {"strategy": {"type": "Recreate"}}})
    assert merged["spec"]["strategy"]["rollingUpdate"] == {"maxSurge": "30%",
                                                           "maxUnavailable": "30%"}


def test_retain_keys_refuses_patch_keys_it_does_not_name():
    obj = deployment()
    with pytest.raises(BadRequest, match="retainKeys"):
        smp_deploy(obj, {"spec": {"strategy": {"$retainKeys": ["type"], "type": "Recreate",
                                               "rollingUpdate": {"maxSurge": 1}}}})


# ---- directives ---------------------------------------------------------------------------


def test_patch_replace_as_a_list_item_replaces_the_list():
    obj = deployment()
    obj["spec"]["template"]["spec"]["containers"].append({"name": "b", "image": "busybox"})
    after = smp_deploy(obj, template_spec(
        {"containers": [{"name": "only", "image": "x"}, {"$patch": "replace"}]}))
    assert after["spec"]["template"]["spec"]["containers"] == [{"name": "only", "image": "x"}]


def test_patch_delete_as_a_list_item_removes_by_merge_key():
    obj = pod()
    obj["spec"]["containers"].append({"name": "sidecar", "image": "envoy"})
    after = smp_pod(obj, {"spec": {"containers": [{"name": "app", "$patch": "delete"}]}})
    assert [c["name"] for c in after["spec"]["containers"]] == ["sidecar"]


def test_patch_delete_needs_the_merge_key():
    with pytest.raises(BadRequest, match="does not contain declared merge key: name"):
        smp_pod(pod(), {"spec": {"containers": [{"image": "x", "$patch": "delete"}]}})


def test_list_item_without_merge_key_is_a_bad_request():
    with pytest.raises(BadRequest, match="does not contain declared merge key: name"):
        smp_pod(pod(), {"spec": {"containers": [{"image": "nginx:1.28"}]}})


def test_patch_replace_and_delete_in_a_map():
    obj = pod(labels={"app": "web", "tier": "front"})
    after = smp_pod(obj, {"metadata": {"labels": {"$patch": "replace", "team": "a"}}})
    assert after["metadata"]["labels"] == {"team": "a"}
    after = smp_pod(obj, {"metadata": {"labels": {"$patch": "delete"}}})
    assert after["metadata"]["labels"] == {}


def test_unknown_patch_directive_is_a_bad_request():
    with pytest.raises(BadRequest, match="unknown patch type"):
        smp_pod(pod(), {"metadata": {"labels": {"$patch": "explode"}}})
    with pytest.raises(BadRequest, match="merging lists cannot yet be specified"):
        smp_pod(pod(), {"spec": {"containers": [{"$patch": "merge"}]}})


def test_delete_from_primitive_list_and_set_union():
    obj = pod()
    obj["metadata"]["finalizers"] = ["a.io/one", "b.io/two", "c.io/three"]
    after = smp_pod(obj, {"metadata": {"$deleteFromPrimitiveList/finalizers": ["b.io/two"]}})
    assert after["metadata"]["finalizers"] == ["a.io/one", "c.io/three"]
    # merged scalar lists are a set union; the patch's items come first (apimachinery order)
    after = smp_pod(obj, {"metadata": {"finalizers": ["d.io/four", "a.io/one"]}})
    assert after["metadata"]["finalizers"] == ["d.io/four", "a.io/one", "b.io/two", "c.io/three"]


def test_set_element_order_orders_a_merged_list():
    obj = pod()
    obj["spec"]["containers"] = [{"name": n, "image": "i"} for n in ("a", "b", "c")]
    patch = {"spec": {"$setElementOrder/containers": [{"name": "c"}, {"name": "a"}, {"name": "b"}],
                      "containers": [{"name": "a", "image": "new"}]}}
    after = smp_pod(obj, patch)
    assert [(c["name"], c["image"]) for c in after["spec"]["containers"]] == [
        ("c", "i"), ("a", "new"), ("b", "i")]


def test_set_element_order_keeps_server_only_items_where_they_were():
    obj = pod()
    obj["spec"]["containers"] = [{"name": n, "image": "i"} for n in ("a", "b", "c", "d")]
    # the client knows only a, c and d (b was added by someone else) and reorders d first:
    # b, before d in the live list, stays before it (apimachinery's mergeSortedSlice)
    patch = {"spec": {"$setElementOrder/containers": [{"name": "d"}, {"name": "a"}, {"name": "c"}]}}
    after = smp_pod(obj, patch)
    assert [c["name"] for c in after["spec"]["containers"]] == ["b", "d", "a", "c"]
    patch = {"spec": {"$setElementOrder/containers": [{"name": "a"}, {"name": "d"}, {"name": "c"}]}}
    after = smp_pod(obj, patch)
    assert [c["name"] for c in after["spec"]["containers"]] == ["a", "b", "d", "c"]


def test_set_element_order_with_deletions_and_primitives():
    obj = pod()
    obj["metadata"]["finalizers"] = ["x", "y", "z"]
    patch = {"metadata": {"$setElementOrder/finalizers": ["z", "w", "x"],
                          "finalizers": ["w"],
                          "$deleteFromPrimitiveList/finalizers": ["y"]}}
    assert smp_pod(obj, patch)["metadata"]["finalizers"] == ["z", "w", "x"]


def test_set_element_order_must_agree_with_the_patch_list():
    obj = pod()
    patch = {"spec": {"$setElementOrder/containers": [{"name": "app"}],
                      "containers": [{"name": "other", "image": "x"}]}}
    with pytest.raises(BadRequest, match="doesn't match"):
        smp_pod(obj, patch)


def test_bad_directive_formats():
    with pytest.raises(BadRequest, match="primitive list"):
        smp_pod(pod(), {"metadata": {"$deleteFromPrimitiveList/finalizers": "x"}})
    with pytest.raises(BadRequest, match="setElementOrder"):
        smp_pod(pod(), {"spec": {"$setElementOrder/containers": {"name": "app"}}})
    with pytest.raises(BadRequest, match="unknown patch directive"):
        smp_pod(pod(), {"spec": {"$frobnicate": 1}})


# ---- maps, nulls, nested merge keys ------------------------------------------------------------


def test_null_deletes_and_maps_merge_recursively():
    obj = pod(labels={"app": "web", "tier": "front"})
    after = smp_pod(obj, {"metadata": {"labels": {"tier": None, "new": "1"},
                                       "annotations": {"a": None, "b": "2"}}})
    assert after["metadata"]["labels"] == {"app": "web", "new": "1"}
    assert after["metadata"]["annotations"] == {"b": "2"}  # nulls under a new key are dropped


def test_container_fields_merge_inside_the_item():
    obj = pod()
    obj["spec"]["containers"][0]["env"] = [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}]
    obj["spec"]["containers"][0]["ports"] = [{"containerPort": 80, "protocol": "TCP"}]
    after = smp_pod(obj, {"spec": {"containers": [{
        "name": "app",
        "resources": {"requests": {"cpu": "650m"}, "limits": {"cpu": "650m"}},
        "env": [{"name": "B", "value": "3"}, {"name": "C", "value": "4"}],
        "ports": [{"containerPort": 8080}],
        "args": ["--new"],
    }]}})
    c = after["spec"]["containers"][0]
    assert c["resources"] == {"requests": {"cpu": "650m", "memory": "128Mi"},
                              "limits": {"cpu": "650m", "memory": "128Mi"}}
    assert c["env"] == [{"name": "A", "value": "1"}, {"name": "B", "value": "3"},
                        {"name": "C", "value": "4"}]
    assert c["ports"] == [{"containerPort": 8080}, {"containerPort": 80, "protocol": "TCP"}]
    assert c["args"] == ["--new"]


def test_env_merge_keeps_live_items_interleaved():
    obj = pod()
    obj["spec"]["containers"][0]["env"] = [{"name": n, "value": n} for n in "ABC"]
    after = smp_pod(obj, {"spec": {"containers": [{"name": "app", "env": [
        {"name": "B", "value": "b"}]}]}})
    assert [e["name"] for e in after["spec"]["containers"][0]["env"]] == ["A", "B", "C"]
    assert after["spec"]["containers"][0]["env"][1]["value"] == "b"


def test_a_value_of_another_type_replaces():
    obj = pod()
    after = smp_pod(obj, {"spec": {"nodeSelector": {"zone": "a"}}})
    after = smp_pod(after, {"spec": {"nodeSelector": "oops"}})
    assert after["spec"]["nodeSelector"] == "oops"


def test_node_status_conditions_merge_by_type():
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"},
            "status": {"conditions": [{"type": "Ready", "status": "False"},
                                      {"type": "MemoryPressure", "status": "False"}]}}
    after = strategic_merge_patch(node, {"status": {"conditions": [
        {"type": "Ready", "status": "True"}]}}, "v1", "Node")
    assert after["status"]["conditions"] == [{"type": "Ready", "status": "True"},
                                             {"type": "MemoryPressure", "status": "False"}]


def test_pdb_selector_is_replaced_whole():
    pdb = {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "p"},
           "spec": {"selector": {"matchLabels": {"app": "a", "tier": "x"}}}}
    after = strategic_merge_patch(pdb, {"spec": {"selector": {"matchLabels": {"app": "b"}}}},
                                  "policy/v1", "PodDisruptionBudget")
    assert after["spec"]["selector"] == {"matchLabels": {"app": "b"}}


def test_custom_resources_and_vpa_refuse_strategic_merge_patch():
    cr = {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}}
    with pytest.raises(UnsupportedMediaType) as info:
        strategic_merge_patch(cr, {"spec": {}}, "example.com/v1", "Widget")
    assert info.value.code == 415 and "application/merge-patch+json" in info.value.message
    vpa = {"apiVersion": "autoscaling.k8s.io/v1", "kind": "VerticalPodAutoscaler",
           "metadata": {"name": "v"}}
    with pytest.raises(UnsupportedMediaType):
        apply_patch(vpa, {"spec": {}}, "strategic")


def test_apply_patch_dispatches_strategic_by_content_type():
    obj = pod()
    obj["apiVersion"], obj["kind"] = "v1", "Pod"
    patch = {"spec": {"containers": [{"name": "side", "image": "x"}]}}
    for kind in ("strategic", "application/strategic-merge-patch+json"):
        after = apply_patch(obj, patch, kind)
        assert [c["name"] for c in after["spec"]["containers"]] == ["side", "app"]
    assert apply_patch(obj, '{"metadata": {"labels": {"x": "1"}}}', "strategic")[
        "metadata"]["labels"] == {"app": "web", "x": "1"}
    # JSON merge patch still replaces the list
    merged = apply_patch(obj, patch, "merge")
    assert [c["name"] for c in merged["spec"]["containers"]] == ["side"]
    with pytest.raises(Invalid, match="force: Forbidden: may not be specified for non-apply"):
        apply_patch(obj, patch, "strategic", force=True)


def test_strategic_patch_through_the_registry(env):
    env.run(env.client.create("pods", pod(), namespace="default"))
    patched = env.run(env.registry.patch(
        "pods", "web", {"metadata": {"labels": {"tier": "front"}},
                        "spec": {"containers": [{"name": "app", "image": "nginx:1.28"}]}},
        "strategic", namespace="default"))
    assert patched["metadata"]["labels"] == {"app": "web", "tier": "front"}
    assert patched["spec"]["containers"][0]["image"] == "nginx:1.28"
    assert patched["spec"]["containers"][0]["resources"]["requests"]["cpu"] == "500m"


# ---- two-way patches and properties --------------------------------------------------------------


def test_two_way_patch_shape_matches_kubectl():
    a = pod()
    a["apiVersion"], a["kind"] = "v1", "Pod"
    a["metadata"]["finalizers"] = ["x", "y"]
    b = copy.deepcopy(a)
    b["spec"]["containers"].insert(0, {"name": "side", "image": "envoy"})
    b["spec"]["containers"][1]["image"] = "nginx:1.28"
    b["metadata"]["finalizers"] = ["y", "z"]
    del b["metadata"]["labels"]
    patch = create_two_way_merge_patch(a, b, "v1", "Pod")
    assert patch == {
        "metadata": {"labels": None, "finalizers": ["z"],
                     "$deleteFromPrimitiveList/finalizers": ["x"],
                     "$setElementOrder/finalizers": ["y", "z"]},
        "spec": {"containers": [{"name": "side", "image": "envoy"},
                                {"name": "app", "image": "nginx:1.28"}],
                 "$setElementOrder/containers": [{"name": "side"}, {"name": "app"}]},
    }
    assert smp_pod(a, patch) == b


NAMES = ["app", "side", "init", "proxy", "log", "db"]
ENV = ["A", "B", "C", "D"]

env_lists = st.lists(st.sampled_from(ENV), unique=True, max_size=4).flatmap(
    lambda names: st.tuples(*[st.sampled_from(["1", "2", "3"]) for _ in names]).map(
        lambda values, names=names: [{"name": n, "value": v} for n, v in zip(names, values)]))


@st.composite
def containers(draw):
    names = draw(st.lists(st.sampled_from(NAMES), unique=True, min_size=1, max_size=4))
    out = []
    for name in names:
        c = {"name": name, "image": draw(st.sampled_from(["nginx", "redis", "envoy"]))}
        if draw(st.booleans()):
            c["env"] = draw(env_lists)
        if draw(st.booleans()):
            c["args"] = draw(st.lists(st.sampled_from(["-v", "-q", "--x"]), max_size=3))
        if draw(st.booleans()):
            c["resources"] = {"requests": {"cpu": draw(st.sampled_from(["100m", "250m", "1"]))}}
        out.append(c)
    return out


@st.composite
def pods(draw):
    obj = {"apiVersion": "v1", "kind": "Pod",
           "metadata": {"name": "p",
                        "labels": draw(st.dictionaries(st.sampled_from("abc"),
                                                       st.sampled_from("xyz"), max_size=3))},
           "spec": {"containers": draw(containers())}}
    if draw(st.booleans()):
        obj["metadata"]["finalizers"] = draw(st.lists(st.sampled_from(["f1", "f2", "f3", "f4"]),
                                                      unique=True, max_size=4))
    if draw(st.booleans()):
        obj["spec"]["tolerations"] = draw(st.lists(st.fixed_dictionaries(
            {"key": st.sampled_from(["k1", "k2"]), "operator": st.just("Exists")}), max_size=2))
    if draw(st.booleans()):
        obj["spec"]["nodeName"] = draw(st.sampled_from(["n1", "n2"]))
    return obj


@settings(max_examples=100, deadline=None)
@given(pods(), pods())
def test_two_way_patch_applied_to_the_first_yields_the_second(a, b):
    patch = create_two_way_merge_patch(a, b, "v1", "Pod")
    assert smp_pod(a, patch) == b
    # and applying it again changes nothing
    assert smp_pod(b, patch) == b


@settings(max_examples=100, deadline=None)
@given(pods(), containers(), st.randoms(use_true_random=False))
def test_merge_by_key_is_order_independent(base, items, rnd):
    patch_items = [dict(c) for c in items]
    shuffled = list(patch_items)
    rnd.shuffle(shuffled)
    one = smp_pod(base, {"spec": {"containers": patch_items}})
    two = smp_pod(base, {"spec": {"containers": shuffled}})

    def by_name(obj):
        return sorted(obj["spec"]["containers"], key=lambda c: c["name"])

    assert by_name(one) == by_name(two)
    names = {c["name"] for c in base["spec"]["containers"]} | {c["name"] for c in items}
    assert {c["name"] for c in one["spec"]["containers"]} == names
    # items not named by the patch are untouched, in their original relative order
    untouched = [c for c in base["spec"]["containers"] if c["name"] not in
                 {i["name"] for i in items}]
    assert [c for c in one["spec"]["containers"] if c in untouched] == untouched
