"""Defaulting: concrete expectations (Kubernetes' SetDefaults_*) and idempotence."""

import copy

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kvert.api.defaults import (apply_defaults, default_pull_policy, defaulted,
                                effective_controlled_resources, effective_controlled_values,
                                effective_resize_policy, effective_update_mode, image_tag)
from kvert.api.validation import validate


def seed_pod():
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "2pod", "namespace": "default"},
            "spec": {"containers": [{"name": "stress", "image": "skiibum/ubuntu-stress:18.10",
                                     "resources": {"limits": {"cpu": "500m", "memory": "500Mi"}},
                                     "ports": [{"containerPort": 80}],
                                     "livenessProbe": {"httpGet": {"port": 80}}}]}}


def test_pod_defaults():
    pod = seed_pod()
    apply_defaults(pod)
    spec = pod["spec"]
    assert spec["restartPolicy"] == "Always"
    assert spec["dnsPolicy"] == "ClusterFirst"
    assert spec["schedulerName"] == "default-scheduler"
    assert spec["terminationGracePeriodSeconds"] == 30
    assert spec["securityContext"] == {}
    assert spec["enableServiceLinks"] is True
    c = spec["containers"][0]
    assert c["terminationMessagePath"] == "/dev/termination-log"
    assert c["terminationMessagePolicy"] == "File"
    assert c["imagePullPolicy"] == "IfNotPresent"
    assert c["ports"][0]["protocol"] == "TCP"
    assert c["resources"]["requests"] == {"cpu": "500m", "memory": "500Mi"}  # from limits
    probe = c["livenessProbe"]
    assert (probe["timeoutSeconds"], probe["periodSeconds"], probe["successThreshold"],
            probe["failureThreshold"]) == (1, 10, 1, 3)
    assert probe["httpGet"]["path"] == "/" and probe["httpGet"]["scheme"] == "HTTP"


def test_pod_fields_left_alone():
    pod = seed_pod()
    pod["spec"]["tolerations"] = [{"key": "k", "value": "v"}]
    apply_defaults(pod)
    spec = pod["spec"]
    assert "resizePolicy" not in spec["containers"][0]          # not defaulted today
    assert "priority" not in spec and "preemptionPolicy" not in spec  # admission's job
    assert "operator" not in spec["tolerations"][0]
    assert "status" not in pod                                 # phase is the registry's job
    assert effective_resize_policy(spec["containers"][0], "memory") == "NotRequired"


def test_requests_default_per_resource_and_never_override():
    pod = seed_pod()
    pod["spec"]["containers"][0]["resources"] = {"limits": {"cpu": "1", "memory": "1Gi"},
                                                 "requests": {"cpu": "250m"}}
    apply_defaults(pod)
    assert pod["spec"]["containers"][0]["resources"]["requests"] == {"cpu": "250m", "memory": "1Gi"}


@pytest.mark.parametrize("image, tag, policy", [
    ("nginx", "latest", "Always"), ("nginx:latest", "latest", "Always"),
    ("nginx:1.27", "1.27", "IfNotPresent"), ("registry:5000/app", "latest", "Always"),
    ("registry:5000/app:v2", "v2", "IfNotPresent"),
    ("nginx@sha256:" + "a" * 64, "", "IfNotPresent"),
    ("nginx:latest@sha256:" + "a" * 64, "latest", "Always"),
])
def test_image_pull_policy(image, tag, policy):
    assert image_tag(image) == tag
    assert default_pull_policy(image) == policy


def test_explicit_values_win():
    pod = seed_pod()
    pod["spec"].update(restartPolicy="Never", terminationGracePeriodSeconds=0)
    pod["spec"]["containers"][0]["imagePullPolicy"] = "Never"
    apply_defaults(pod)
    assert pod["spec"]["restartPolicy"] == "Never"
    assert pod["spec"]["terminationGracePeriodSeconds"] == 0
    assert pod["spec"]["containers"][0]["imagePullPolicy"] == "Never"


def test_templates_get_pod_spec_but_not_pod_defaults():
    deploy = {"apiVersion": "apps/v1", "kind": "Deployment",
              "metadata": {"name": "hamster", "namespace": "default"},
              "spec": {"selector": {"matchLabels": {"app": "hamster"}},
                       "template": {"metadata": {"labels": {"app": "hamster"}},
                                    "spec": {"containers": [{"name": "hamster", "image": "ubuntu-slim:0.14",
                                                             "resources": {"limits": {"cpu": "1"}}}]}}}}
    apply_defaults(deploy)
    spec = deploy["spec"]
    assert spec["replicas"] == 1
    assert spec["strategy"] == {"type": "RollingUpdate",
                                "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"}}
    assert spec["revisionHistoryLimit"] == 10
    assert spec["progressDeadlineSeconds"] == 600
    tpl = spec["template"]["spec"]
    assert tpl["restartPolicy"] == "Always" and tpl["dnsPolicy"] == "ClusterFirst"
    assert "requests" not in tpl["containers"][0]["resources"]  # SetDefaults_Pod is Pod-only
    assert "enableServiceLinks" not in tpl


def test_recreate_strategy_gets_no_rolling_update():
    deploy = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
              "spec": {"strategy": {"type": "Recreate"}}}
    apply_defaults(deploy)
    assert deploy["spec"]["strategy"] == {"type": "Recreate"}


def test_other_kinds():
    rs = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": "r"}, "spec": {}}
    pc = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "p"},
          "value": 10}
    ns = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team-a"}}
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n"},
            "status": {"capacity": {"cpu": "4", "memory": "32Gi"}}}
    pdb = {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "b"},
           "spec": {"minAvailable": 1}}
    for obj in (rs, pc, ns, node, pdb):
        apply_defaults(obj)
    assert rs["spec"]["replicas"] == 1
    assert pc["preemptionPolicy"] == "PreemptLowerPriority"
    assert ns["metadata"]["labels"] == {"kubernetes.io/metadata.name": "team-a"}
    assert ns["status"] == {"phase": "Active"}
    assert node["status"]["allocatable"] == {"cpu": "4", "memory": "32Gi"}
    assert pdb["spec"] == {"minAvailable": 1}  # unhealthyPodEvictionPolicy is not defaulted


def test_vpa_defaults():
    vpa = {"apiVersion": "autoscaling.k8s.io/v1", "kind": "VerticalPodAutoscaler",
           "metadata": {"name": "hamster-vpa", "namespace": "default"},
           "spec": {"targetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "hamster"},
                    "resourcePolicy": {"containerPolicies": [{"containerName": "*"}]}}}
    assert effective_update_mode(vpa) == "Recreate"
    apply_defaults(vpa)
    assert vpa["spec"]["updatePolicy"] == {"updateMode": "Recreate"}
    policy = vpa["spec"]["resourcePolicy"]["containerPolicies"][0]
    assert policy == {"containerName": "*"}  # the CRD defines no defaults; interpreted instead
    assert effective_controlled_values(policy) == "RequestsAndLimits"
    assert effective_controlled_resources(policy) == ["cpu", "memory"]
    explicit = {"apiVersion": "autoscaling.k8s.io/v1", "kind": "VerticalPodAutoscaler",
                "spec": {"updatePolicy": {"updateMode": "InPlaceOrRecreate"}}}
    apply_defaults(explicit)
    assert effective_update_mode(explicit) == "InPlaceOrRecreate"


def test_defaulted_copy_and_validity():
    pod = seed_pod()
    out = defaulted(pod)
    assert "restartPolicy" not in pod["spec"] and out["spec"]["restartPolicy"] == "Always"
    assert validate(out) == []


def test_unknown_kinds_and_garbage_are_left_alone():
    for obj in ({"apiVersion": "example.com/v1", "kind": "Widget", "spec": {}},
                {"apiVersion": "v1", "kind": "Pod", "spec": "nonsense"},
                {"apiVersion": "v1", "kind": "Pod", "spec": {"containers": [None, 3, "x"]}},
                {"apiVersion": "apps/v1", "kind": "Deployment", "spec": {"strategy": []}},
                "not even a dict"):
        before = copy.deepcopy(obj)
        apply_defaults(obj)
        if isinstance(before, dict) and before.get("kind") == "Widget":
            assert obj == before


# -- idempotence -----------------------------------------------------------------------------------

scalars = st.one_of(st.none(), st.booleans(), st.integers(-5, 100), st.sampled_from(
    ["", "Always", "Never", "500m", "nginx", "nginx:latest", "TCP", "x"]))
quantities = st.sampled_from(["100m", "1", "500Mi", "1Gi", 2, "", None])
resource_lists = st.one_of(st.none(), st.dictionaries(st.sampled_from(["cpu", "memory",
                                                                       "example.com/gpu"]),
                                                      quantities, max_size=3))
containers = st.fixed_dictionaries({}, optional={
    "name": st.sampled_from(["a", "b", ""]),
    "image": st.one_of(st.none(), st.sampled_from(["nginx", "nginx:1.27", "nginx@sha256:ab",
                                                   "reg:5000/x:latest"])),
    "imagePullPolicy": scalars,
    "terminationMessagePolicy": scalars,
    "resources": st.one_of(st.none(), st.fixed_dictionaries(
        {}, optional={"requests": resource_lists, "limits": resource_lists})),
    "ports": st.lists(st.fixed_dictionaries({}, optional={"containerPort": st.integers(0, 90),
                                                          "protocol": scalars,
                                                          "hostPort": st.integers(0, 90)}),
                      max_size=2),
    "livenessProbe": st.one_of(st.none(), st.fixed_dictionaries({}, optional={
        "periodSeconds": st.integers(0, 20), "httpGet": st.fixed_dictionaries(
            {}, optional={"path": scalars, "port": st.integers(1, 90)})})),
    "resizePolicy": st.lists(st.fixed_dictionaries({"resourceName": st.sampled_from(["cpu", "memory"]),
                                                    "restartPolicy": scalars}), max_size=2),
})
pod_specs = st.fixed_dictionaries({}, optional={
    "containers": st.one_of(st.lists(containers, max_size=3), scalars),
    "initContainers": st.lists(st.one_of(containers, scalars), max_size=2),
    "restartPolicy": scalars, "dnsPolicy": scalars, "schedulerName": scalars,
    "terminationGracePeriodSeconds": scalars, "securityContext": st.one_of(st.none(), st.just({})),
    "enableServiceLinks": scalars, "hostNetwork": st.booleans(),
    "volumes": st.lists(st.fixed_dictionaries({"name": st.sampled_from(["v", "w"])},
                                              optional={"emptyDir": st.just({})}), max_size=2),
})


@st.composite
def objects(draw):
    kind = draw(st.sampled_from([("v1", "Pod"), ("apps/v1", "Deployment"), ("apps/v1", "ReplicaSet"),
                                 ("v1", "Namespace"), ("v1", "Node"), ("v1", "Service"),
                                 ("v1", "LimitRange"), ("scheduling.k8s.io/v1", "PriorityClass"),
                                 ("autoscaling.k8s.io/v1", "VerticalPodAutoscaler")]))
    obj = {"apiVersion": kind[0], "kind": kind[1],
           "metadata": draw(st.fixed_dictionaries({}, optional={"name": st.sampled_from(["a", ""]),
                                                                "labels": st.just({"x": "y"})}))}
    spec = draw(pod_specs)
    if kind[1] == "Pod":
        obj["spec"] = spec
    elif kind[1] in ("Deployment", "ReplicaSet"):
        obj["spec"] = draw(st.fixed_dictionaries({}, optional={
            "replicas": scalars, "strategy": st.one_of(st.none(), st.fixed_dictionaries(
                {}, optional={"type": st.sampled_from(["RollingUpdate", "Recreate", ""]),
                              "rollingUpdate": st.one_of(st.none(), st.just({"maxSurge": 1}))})),
            "template": st.one_of(st.none(), st.just({"spec": spec}))}))
    elif kind[1] == "Node":
        obj["status"] = draw(st.fixed_dictionaries({}, optional={"capacity": resource_lists,
                                                                 "allocatable": resource_lists}))
    elif kind[1] == "LimitRange":
        obj["spec"] = {"limits": [draw(st.fixed_dictionaries(
            {"type": st.sampled_from(["Container", "Pod"])},
            optional={"max": resource_lists, "min": resource_lists, "default": resource_lists}))]}
    elif kind[1] == "Service":
        obj["spec"] = draw(st.fixed_dictionaries({}, optional={
            "type": scalars, "ports": st.lists(st.fixed_dictionaries(
                {"port": st.integers(1, 90)}, optional={"targetPort": st.integers(0, 90)}), max_size=2)}))
    elif kind[1] == "VerticalPodAutoscaler":
        obj["spec"] = draw(st.fixed_dictionaries({}, optional={
            "updatePolicy": st.one_of(st.none(), st.just({"updateMode": "Off"}))}))
    elif kind[1] == "PriorityClass":
        obj["preemptionPolicy"] = draw(scalars)
    return obj


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(objects())
def test_apply_defaults_is_idempotent(obj):
    once = copy.deepcopy(obj)
    apply_defaults(once)
    twice = copy.deepcopy(once)
    apply_defaults(twice)
    assert twice == once


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(objects())
def test_defaulting_never_raises_and_validation_never_raises(obj):
    apply_defaults(copy.deepcopy(obj))
    validate(obj)
