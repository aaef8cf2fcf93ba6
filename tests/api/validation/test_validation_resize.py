"""The pods/resize subresource: seed 000's walkthrough and today's ValidatePodResize rules."""

import pytest

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


def test_resize_policy_may_change_through_resize():
    new = edit(OLD, lambda p: container(p)["resizePolicy"][1].update(restartPolicy="RestartContainer"))
    assert_valid(validate_pod_resize(new, OLD))


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


def test_plain_init_containers_cannot_be_resized():
    old = sidecar_pod()
    new = edit(old, lambda p: p["spec"]["initContainers"][0]["resources"].update(
        requests={"cpu": "200m", "memory": "10Mi"}, limits={"cpu": "200m", "memory": "10Mi"}))
    assert_cause(validate_pod_resize(new, old), "spec", FORBIDDEN,
                 "resources for non-sidecar init containers are immutable")


def test_sidecar_restart_policy_counts_for_never_pods():
    old = sidecar_pod()
    old["spec"]["restartPolicy"] = "Never"
    old["spec"]["containers"][0]["resizePolicy"] = []
    new = edit(old, lambda p: p["spec"]["initContainers"][1].update(resizePolicy=[
        {"resourceName": "memory", "restartPolicy": "RestartContainer"}]))
    assert_valid(validate_pod_resize(new, old))


@pytest.mark.parametrize("change, message", [
    (lambda p: p["spec"].update(os={"name": "windows"}), "windows pods cannot be resized"),
    (lambda p: p["metadata"].update(annotations={"kubernetes.io/config.mirror": "x"}),
     "static pods cannot be resized"),
    (lambda p: p["spec"].update(resources={"limits": {"cpu": "1", "memory": "1Gi"}}),
     "pods with pod-level resources cannot be resized"),
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
