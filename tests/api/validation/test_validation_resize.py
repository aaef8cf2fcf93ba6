"""The pods/resize subresource: seed 000's walkthrough and today's ValidatePodResize rules."""

import pytest

from kvert.api import features
from kvert.api.validation import validate_pod_resize, validate_update
from kvert.api.validation.resize import drop_non_resize_updates
from .validation_helpers import (FORBIDDEN, INVALID, NOT_SUPPORTED, assert_cause, assert_valid,
                                container, edit, pod)


def running(p: dict) -> dict:
    """The stored pod: created (QoS recorded) and running on a node."""
    return edit(p, lambda q: (q["metadata"].update(uid="u-1", resourceVersion="7"),
                              q["spec"].update(nodeName="node-1"),
                              q.update(status={"phase": "Running", "qosClass": "Guaranteed"})))


def set_cpu(value: str):
    def change(p):
        res = container(p)["resources"]
        res["requests"]["cpu"] = value
        res["limits"]["cpu"] = value
    return change


OLD = running(pod("2pod"))


@pytest.mark.parametrize("cpu", ["650m", "3950m", "4650m", "1.5", "100"])
def test_seed_walkthrough_resizes_pass_validation(cpu):
    # 650m is applied, 3950m Deferred and 4650m Infeasible -- but all three are valid requests;
    # feasibility is the node agent's decision (seed 000), not the API server's.
    assert_valid(validate_pod_resize(edit(OLD, set_cpu(cpu)), OLD))


def test_plain_update_may_not_change_resources():
    causes = validate_update(edit(OLD, set_cpu("650m")), OLD)
    assert_cause(causes, "spec", FORBIDDEN, "pod updates may not change fields other than "
                                            "`spec.containers[*].image`")
    assert_cause(causes, "spec", FORBIDDEN, 'spec.containers[0].resources.limits[cpu]: "500m" -> '
                                            '"650m"')


def test_qos_change_is_rejected():
    new = edit(OLD, lambda p: container(p)["resources"]["requests"].update(cpu="250m"))
    assert_cause(validate_pod_resize(new, OLD), "spec", INVALID,
                 "Pod QOS Class may not change as a result of resizing")


def test_burstable_pod_may_stay_burstable():
    old = running(pod(containers=[{"name": "a", "image": "x", "resources": {
        "requests": {"cpu": "100m", "memory": "50Mi"}}}]))
    old["status"]["qosClass"] = "Burstable"
    new = edit(old, lambda p: container(p)["resources"]["requests"].update(cpu="712m",
                                                                            memory="319572800"))
    assert_valid(validate_pod_resize(new, old))


def test_memory_request_above_limit_is_rejected():
    new = edit(OLD, lambda p: container(p)["resources"]["requests"].update(memory="600Mi"))
    assert_cause(validate_pod_resize(new, OLD), "spec.containers[0].resources.requests", INVALID,
                 "must be less than or equal to memory limit of 500Mi")


def test_image_change_through_resize_is_rejected():
    new = edit(OLD, lambda p: container(p).update(image="nginx:1.27"))
    assert_cause(validate_pod_resize(new, OLD), "spec", FORBIDDEN,
                 "only cpu and memory resources are mutable")


def test_other_spec_change_through_resize_is_rejected():
    new = edit(OLD, lambda p: p["spec"].update(activeDeadlineSeconds=30))
    assert_cause(validate_pod_resize(new, OLD), "spec", FORBIDDEN,
                 "only cpu and memory resources are mutable")


def test_other_resources_are_not_resizable():
    old = running(pod())
    container(old)["resources"]["limits"]["ephemeral-storage"] = "1Gi"
    container(old)["resources"]["requests"]["ephemeral-storage"] = "1Gi"
    new = edit(old, lambda p: (container(p)["resources"]["limits"].update({"ephemeral-storage": "2Gi"}),
                               container(p)["resources"]["requests"].update(
                                   {"ephemeral-storage": "2Gi"})))
    assert_cause(validate_pod_resize(new, old), "spec", FORBIDDEN,
                 "only cpu and memory resources are mutable")


def test_resource_requests_and_limits_cannot_be_removed():
    old = running(pod(containers=[{"name": "a", "image": "x", "resources": {
        "requests": {"cpu": "100m", "memory": "64Mi"}, "limits": {"memory": "128Mi"}}}]))
    old["status"]["qosClass"] = "Burstable"
    # (a request with a limit would come back: Pod defaulting sets requests from limits)
    new = edit(old, lambda p: (container(p)["resources"]["requests"].pop("cpu"),
                               container(p)["resources"]["limits"].pop("memory")))
    causes = validate_pod_resize(new, old)
    assert_cause(causes, "spec.containers[0].resources.requests", FORBIDDEN,
                 "resource requests cannot be removed")
    assert_cause(causes, "spec.containers[0].resources.limits", FORBIDDEN,
                 "resource limits cannot be removed")


def test_memory_limit_may_decrease():
    # Seed 000: the node agent lowers the memory limit in a control loop (kvert choice, see resize.py).
    new = edit(OLD, lambda p: container(p)["resources"].update(
        requests={"cpu": "500m", "memory": "300Mi"}, limits={"cpu": "500m", "memory": "300Mi"}))
    assert_valid(validate_pod_resize(new, OLD))


def test_resize_policy_may_not_change_through_resize():
    """Kubernetes 1.35/1.36 (the issue's measurement against kube-apiserver 1.36.2): the
    comparison in ValidatePodResize restores only cpu and memory, so a changed resizePolicy
    alone is 422 ``only cpu and memory resources are mutable``."""
    new = edit(OLD, lambda p: container(p)["resizePolicy"][1].update(restartPolicy="RestartContainer"))
    assert_cause(validate_pod_resize(new, OLD), "spec", FORBIDDEN,
                 "only cpu and memory resources are mutable")


def test_a_container_added_through_resize_is_refused():
    """dropNonResizeUpdates leaves a write with a different number of containers to the
    validation, which refuses it (422), rather than dropping the new container."""
    from kvert.registry.strategies.pods import merge_resize
    extra = {"name": "extra", "image": "busybox"}
    written = edit(OLD, lambda p: p["spec"]["containers"].append(extra))
    merged = merge_resize(written, OLD)
    assert merged["spec"]["containers"][-1]["name"] == "extra"
    assert_cause(validate_pod_resize(merged, OLD), "spec", FORBIDDEN,
                 "only cpu and memory resources are mutable")


def test_the_qos_change_message_shows_the_current_class():
    """ValidatePodResize: field.Invalid(spec, newPod.Status.QOSClass, ...) -- the status the
    resized pod still carries, i.e. the class it has now, not the one it would get."""
    new = edit(OLD, lambda p: container(p)["resources"]["requests"].update(cpu="100m"))
    causes = validate_pod_resize(new, OLD)
    assert_cause(causes, "spec", INVALID, 'Invalid value: "Guaranteed": Pod QOS Class may not change')


def test_a_running_pod_whose_node_reports_no_resources_cannot_be_resized():
    """isPodResizeRequestSupported: the first running container's status has no resources
    -> Forbidden ``Pod running on node without support for resize``; with resources, or no
    running container, the resize is allowed."""
    def with_status(resources):
        st = {"name": "c1", "state": {"running": {}}}
        if resources:
            st["resources"] = {"requests": {"cpu": "500m"}}
        return edit(OLD, lambda p: p["status"].update(containerStatuses=[st]))
    old = with_status(False)
    assert_cause(validate_pod_resize(edit(old, set_cpu("650m")), old), "spec", FORBIDDEN,
                 "Pod running on node without support for resize")
    old = with_status(True)
    assert_valid(validate_pod_resize(edit(old, set_cpu("650m")), old))


def test_seed_policy_names_point_to_todays_names():
    new = edit(OLD, lambda p: container(p)["resizePolicy"][0].update(restartPolicy="RestartNotRequired"))
    assert_cause(validate_pod_resize(new, OLD), "spec.containers[0].resizePolicy", NOT_SUPPORTED,
                 '"RestartNotRequired" is the pre-release name of "NotRequired"')


def test_restart_policy_never_requires_not_required():
    old = running(pod(restartPolicy="Never"))
    new = edit(old, lambda p: container(p)["resizePolicy"][1].update(restartPolicy="RestartContainer"))
    assert_cause(validate_pod_resize(new, old), "spec.containers[0].resizePolicy", INVALID,
                 "must be 'NotRequired' when `restartPolicy` is 'Never'")
    assert_valid(validate_pod_resize(edit(old, set_cpu("650m")), old))


def sidecar_pod():
    p = pod(initContainers=[
        {"name": "init", "image": "busybox", "resources": {"requests": {"cpu": "100m", "memory": "10Mi"},
                                                          "limits": {"cpu": "100m", "memory": "10Mi"}}},
        {"name": "proxy", "image": "envoy", "restartPolicy": "Always",
         "resources": {"requests": {"cpu": "100m", "memory": "64Mi"},
                       "limits": {"cpu": "100m", "memory": "64Mi"}}}])
    return running(p)


def test_sidecars_can_be_resized():
    old = sidecar_pod()
    new = edit(old, lambda p: p["spec"]["initContainers"][1]["resources"].update(
        requests={"cpu": "200m", "memory": "64Mi"}, limits={"cpu": "200m", "memory": "64Mi"}))
    assert_valid(validate_pod_resize(new, old))


def test_plain_init_containers_cannot_be_resized_with_the_1_35_gate():
    old = sidecar_pod()
    new = edit(old, lambda p: p["spec"]["initContainers"][0]["resources"].update(
        requests={"cpu": "200m", "memory": "10Mi"}, limits={"cpu": "200m", "memory": "10Mi"}))
    with features.overridden(InPlacePodVerticalScalingInitContainers=False):
        assert_cause(validate_pod_resize(new, old), "spec", FORBIDDEN,
                     "resources for non-sidecar init containers are immutable")


def test_plain_init_containers_are_resizable_in_1_36():
    """kubernetes#137352 (InPlacePodVerticalScalingInitContainers, on in 1.36): a non-sidecar
    init container's cpu and memory may change; its other fields still may not."""
    old = sidecar_pod()
    new = edit(old, lambda p: p["spec"]["initContainers"][0]["resources"].update(
        requests={"cpu": "200m", "memory": "10Mi"}, limits={"cpu": "200m", "memory": "10Mi"}))
    assert_valid(validate_pod_resize(new, old))
    renamed = edit(old, lambda p: p["spec"]["initContainers"][0].update(image="busybox:2"))
    assert_cause(validate_pod_resize(renamed, old), "spec", FORBIDDEN,
                 "only cpu and memory resources are mutable")


def test_sidecar_restart_policy_counts_for_never_pods():
    old = sidecar_pod()
    old["spec"]["restartPolicy"] = "Never"
    old["spec"]["containers"][0]["resizePolicy"] = []
    new = edit(old, lambda p: p["spec"]["initContainers"][1].update(resizePolicy=[
        {"resourceName": "memory", "restartPolicy": "RestartContainer"}]))
    # the policy itself may not change through /resize, but a sidecar's RestartContainer is
    # valid in a Never pod: the only cause is the immutability one
    causes = validate_pod_resize(new, old)
    assert [c.message for c in causes] == [
        "Forbidden: only cpu and memory resources for sidecar containers are mutable"]


@pytest.mark.parametrize("change, message", [
    (lambda p: p["spec"].update(os={"name": "windows"}), "windows pods cannot be resized"),
    (lambda p: p["metadata"].update(annotations={"kubernetes.io/config.mirror": "x"}),
     "static pods cannot be resized"),
])
def test_pods_that_cannot_be_resized(change, message):
    old = edit(OLD, change)
    assert_cause(validate_pod_resize(edit(old, set_cpu("650m")), old), "", FORBIDDEN, message)


def test_containers_may_not_be_added_through_resize():
    new = edit(OLD, lambda p: p["spec"]["containers"].append({"name": "b", "image": "x"}))
    assert_cause(validate_pod_resize(new, OLD), "spec", FORBIDDEN)


def test_drop_non_resize_updates_keeps_only_resources_and_policy():
    new = edit(OLD, lambda p: (set_cpu("650m")(p), container(p).update(image="evil"),
                               p["spec"].update(nodeName="elsewhere")))
    merged = drop_non_resize_updates(new, OLD)
    assert container(merged)["image"] == container(OLD)["image"]
    assert merged["spec"]["nodeName"] == "node-1"
    assert container(merged)["resources"]["limits"]["cpu"] == "650m"
    assert_valid(validate_pod_resize(merged, OLD))


# ---- checking only what a resize changed gives the whole spec's causes --------------------------

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from kvert.api.validation import resize as resize_module  # noqa: E402

QUANTITIES = st.sampled_from(["100m", "650m", "1", "2", "0", "-1", "1.5", "lots", "128Mi", "1Gi",
                              "600Mi", "0.5Gi", ""])
POLICIES = st.sampled_from([None, [], [{"resourceName": "cpu", "restartPolicy": "NotRequired"}],
                            [{"resourceName": "memory", "restartPolicy": "RestartContainer"}],
                            [{"resourceName": "cpu", "restartPolicy": "Sometimes"}],
                            [{"resourceName": "disk", "restartPolicy": "NotRequired"}],
                            "not a list"])
PARTS = st.dictionaries(st.sampled_from(["cpu", "memory", "ephemeral-storage"]), QUANTITIES, max_size=3)


# what the resize's pod may carry in metadata: the stored pod's (valid when written) or others
LABELS = st.sampled_from(["stored", None, {"app": "web"}, {"app": "not valid!"}, {"-bad": "x"}])


@settings(max_examples=150, deadline=None)
@given(requests=st.one_of(st.none(), PARTS), limits=st.one_of(st.none(), PARTS), policy=POLICIES,
       image=st.sampled_from(["stored", "nginx"]), never=st.booleans(), labels=LABELS,
       annotations=LABELS)
def test_a_resize_is_judged_as_checking_the_whole_spec_would(requests, limits, policy, image, never,
                                                             labels, annotations):
    old = edit(OLD, lambda p: (p["spec"].update(restartPolicy="Never") if never else None,
                               p["metadata"].update(labels={"app": "web", "tier": "a"},
                                                    annotations={"note": "x"})))

    def change(p):
        c = container(p)
        res = c["resources"]
        for part, values in (("requests", requests), ("limits", limits)):
            if values is None:
                res.pop(part, None)
            else:
                res[part] = dict(values)
        if policy is None:
            c.pop("resizePolicy", None)
        else:
            c["resizePolicy"] = policy
        if image != "stored":          # else only resources change: the narrowed check runs
            c["image"] = image
        for field, value in (("labels", labels), ("annotations", annotations)):
            if value is None:
                p["metadata"].pop(field, None)
            elif value != "stored":
                p["metadata"][field] = dict(value)
    new = edit(old, change)
    narrowed = validate_pod_resize(new, old)
    original = resize_module._differs_only_in_resources
    resize_module._differs_only_in_resources = lambda new_spec, old_spec: False
    try:
        whole = validate_pod_resize(new, old)
    finally:
        resize_module._differs_only_in_resources = original
    assert sorted((c.field, c.reason, c.message) for c in narrowed) == \
        sorted((c.field, c.reason, c.message) for c in whole)


def level_pod(cpu="1", memory="1Gi"):
    """A Guaranteed pod whose pod-level resources cover its one container's."""
    p = edit(OLD, lambda q: q["spec"].update(resources={
        "requests": {"cpu": cpu, "memory": memory}, "limits": {"cpu": cpu, "memory": memory}}))
    return p


def test_pod_level_resources_cannot_be_resized_with_the_1_35_gate():
    old = level_pod()
    with features.overridden(InPlacePodLevelResourcesVerticalScaling=False):
        assert_cause(validate_pod_resize(level_pod(cpu="2"), old), "", FORBIDDEN,
                     "pods with pod-level resources cannot be resized")


def test_pod_level_cpu_and_memory_resize_in_1_36():
    """KEP-5419 (InPlacePodLevelResourcesVerticalScaling, beta in 1.36): pod-level cpu and
    memory change through /resize; removing them is refused like a container's."""
    old = level_pod()
    assert_valid(validate_pod_resize(level_pod(cpu="2", memory="2Gi"), old))
    # A removed pod-level request is defaulted again (defaultPodRequests: the containers'
    # aggregate, 500Mi here) before validation, so only a removed limit stays removed.
    def drop_memory(p):
        p["spec"]["resources"]["requests"].pop("memory")
        p["spec"]["resources"]["limits"].pop("memory")
    removed = edit(old, drop_memory)
    assert_cause(validate_pod_resize(removed, old), "spec.resources.limits", FORBIDDEN,
                 "resource limits cannot be removed")
    hugepages = edit(old, lambda p: p["spec"]["resources"]["limits"].update({"hugepages-2Mi": "2Mi"}))
    assert_cause(validate_pod_resize(hugepages, old), "spec", FORBIDDEN,
                 "only cpu and memory resources are mutable")
