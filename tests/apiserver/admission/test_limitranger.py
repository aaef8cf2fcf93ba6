import pytest

from kvert.api.errors import Forbidden, Invalid
from kvert.api.quantity import Quantity

from .conftest import pod


def limit_range(name, *items):
    return {"apiVersion": "v1", "kind": "LimitRange", "metadata": {"name": name},
            "spec": {"limits": list(items)}}


def q(text):
    return Quantity.parse(text)


def test_defaults_are_applied_and_annotated(env):
    # "Configure Default CPU Requests and Limits for a Namespace"
    env.create("limitranges", limit_range("cpu-limit-range", {
        "type": "Container", "default": {"cpu": "1"}, "defaultRequest": {"cpu": "0.5"}}))
    created = env.create("pods", pod("default-cpu-demo", containers=[
        {"name": "default-cpu-demo-ctr", "image": "nginx"}]))
    resources = created["spec"]["containers"][0]["resources"]
    assert q(resources["limits"]["cpu"]) == q("1")
    assert q(resources["requests"]["cpu"]) == q("500m")
    assert created["metadata"]["annotations"]["kubernetes.io/limit-ranger"] == (
        "LimitRanger plugin set: cpu request for container default-cpu-demo-ctr; "
        "cpu limit for container default-cpu-demo-ctr")
    assert created["status"]["qosClass"] == "Burstable"


def test_limit_only_container_gets_request_equal_to_limit(env):
    env.create("limitranges", limit_range("cpu-limit-range", {
        "type": "Container", "default": {"cpu": "1"}, "defaultRequest": {"cpu": "0.5"}}))
    created = env.create("pods", pod(limits={"cpu": "1"}))
    resources = created["spec"]["containers"][0]["resources"]
    assert resources["requests"]["cpu"] == "1"


CPU_MIN_MAX = {"type": "Container", "max": {"cpu": "800m"}, "min": {"cpu": "200m"}}


def test_cpu_max_and_min(env):
    # "Configure Minimum and Maximum CPU Constraints for a Namespace"
    env.create("limitranges", limit_range("cpu-min-max-demo-lr", CPU_MIN_MAX))
    ok = env.create("pods", pod("constraints-cpu-demo", limits={"cpu": "800m"},
                                requests={"cpu": "500m"}))
    assert ok["spec"]["containers"][0]["resources"]["limits"]["cpu"] == "800m"
    with pytest.raises(Forbidden) as e:
        env.create("pods", pod("constraints-cpu-demo-2", limits={"cpu": "1.5"},
                               requests={"cpu": "500m"}))
    assert e.value.code == 403
    assert str(e.value) == ('pods "constraints-cpu-demo-2" is forbidden: maximum cpu usage per '
                            "Container is 800m, but limit is 1500m")
    with pytest.raises(Forbidden) as e:
        env.create("pods", pod("constraints-cpu-demo-3", limits={"cpu": "800m"},
                               requests={"cpu": "100m"}))
    assert str(e.value) == ('pods "constraints-cpu-demo-3" is forbidden: minimum cpu usage per '
                            "Container is 200m, but request is 100m")


def test_memory_max(env):
    env.create("limitranges", limit_range("mem-min-max-demo-lr", {
        "type": "Container", "max": {"memory": "1Gi"}, "min": {"memory": "500Mi"}}))
    with pytest.raises(Forbidden) as e:
        env.create("pods", pod("constraints-mem-demo-2", limits={"memory": "1.5Gi"},
                               requests={"memory": "800Mi"}))
    assert str(e.value).endswith("maximum memory usage per Container is 1Gi, but limit is 1536Mi")


def test_missing_limit_and_several_violations(env):
    env.create("limitranges", limit_range("lr", {"type": "Container", "max": {"cpu": "1"}}))
    with pytest.raises(Forbidden) as e:
        env.create("pods", pod(limits={"cpu": "2"}))
    assert str(e.value) == 'pods "web" is forbidden: maximum cpu usage per Container is 1, but limit is 2'
    # a Container max is also the default limit (LimitRange defaulting), so a container
    # without a cpu limit gets one
    defaulted = env.create("pods", pod("defaulted", requests={"cpu": "100m"}))
    assert defaulted["spec"]["containers"][0]["resources"]["limits"]["cpu"] == "1"
    with pytest.raises(Forbidden) as e:
        env.create("pods", pod("two", containers=[
            {"name": "a", "image": "x", "resources": {"limits": {"cpu": "2"}}},
            {"name": "b", "image": "x", "resources": {"limits": {"cpu": "3"}}}]))
    assert str(e.value) == ('pods "two" is forbidden: [maximum cpu usage per Container is 1, but '
                            "limit is 2, maximum cpu usage per Container is 1, but limit is 3]")


def test_max_limit_request_ratio(env):
    env.create("limitranges", limit_range("ratio", {"type": "Container",
                                                    "maxLimitRequestRatio": {"cpu": "2"}}))
    with pytest.raises(Forbidden) as e:
        env.create("pods", pod(requests={"cpu": "100m"}, limits={"cpu": "500m"}))
    assert str(e.value).endswith("cpu max limit to request ratio per Container is 2, but provided "
                                 "ratio is 5.000000")
    env.create("pods", pod("fine", requests={"cpu": "250m"}, limits={"cpu": "500m"}))


def test_pod_type_limits_the_sum(env):
    env.create("limitranges", limit_range("pod-max", {"type": "Pod", "max": {"cpu": "1"}}))
    with pytest.raises(Forbidden) as e:
        env.create("pods", pod(requests={"cpu": "100m"}))
    assert str(e.value).endswith("maximum cpu usage per Pod is 1.  No limit is specified")
    containers = [{"name": n, "image": "x", "resources": {"limits": {"cpu": "600m"}}}
                  for n in ("a", "b")]
    with pytest.raises(Forbidden) as e:
        env.create("pods", pod(containers=containers))
    assert str(e.value).endswith("maximum cpu usage per Pod is 1, but limit is 1200m")


def test_default_limit_below_request_fails_validation(env):
    # "Limit Ranges": a request above the default limit makes an invalid pod
    env.create("limitranges", limit_range("cpu-resource-constraint", {
        "type": "Container", "default": {"cpu": "500m"}, "defaultRequest": {"cpu": "500m"},
        "max": {"cpu": "1"}, "min": {"cpu": "100m"}}))
    with pytest.raises(Invalid) as e:
        env.create("pods", pod("example-conflict-with-limitrange-cpu", requests={"cpu": "700m"}))
    assert e.value.code == 422
    assert "700m" in str(e.value)


def test_resize_is_checked(env):
    created = env.create("pods", pod(requests={"cpu": "500m", "memory": "128Mi"},
                                     limits={"cpu": "500m", "memory": "128Mi"}))
    env.create("limitranges", limit_range("lr", {"type": "Container", "max": {"cpu": "1"}}))
    patch = {"spec": {"containers": [{"name": "app", "resources": {
        "requests": {"cpu": "2", "memory": "128Mi"}, "limits": {"cpu": "2", "memory": "128Mi"}}}]}}
    with pytest.raises(Forbidden) as e:
        env.run(env.client.resize("default", created["metadata"]["name"], patch))
    assert str(e.value) == 'pods "web" is forbidden: maximum cpu usage per Container is 1, but limit is 2'
    patch["spec"]["containers"][0]["resources"] = {"requests": {"cpu": "800m", "memory": "128Mi"},
                                                   "limits": {"cpu": "800m", "memory": "128Mi"}}
    resized = env.run(env.client.resize("default", "web", patch))
    assert resized["spec"]["containers"][0]["resources"]["limits"]["cpu"] == "800m"


def test_pod_type_with_pod_level_limits(env):
    """KEP-2837 / plugin/pkg/admission/limitranger: a Pod item reads the pod's effective
    limits (resourcehelper.PodLimits with pod-level resources), so a pod-level limit of 1 cpu
    satisfies max 1 even though the containers' limits add up to 1200m."""
    env.create("limitranges", limit_range("pod-max", {"type": "Pod", "max": {"cpu": "1"}}))
    containers = [{"name": n, "image": "x", "resources": {"requests": {"cpu": "100m"},
                                                          "limits": {"cpu": "600m"}}}
                  for n in ("a", "b")]
    env.create("pods", pod("level", containers=containers,
                           resources={"limits": {"cpu": "1"}, "requests": {"cpu": "1"}}))
    with pytest.raises(Forbidden) as e:
        env.create("pods", pod("over", containers=containers,
                               resources={"limits": {"cpu": "2"}, "requests": {"cpu": "1200m"}}))
    assert str(e.value).endswith("maximum cpu usage per Pod is 1, but limit is 2")
