import pytest

from kvert.api.errors import Forbidden
from kvert.apiserver.admission import recalculate_quota_usage

from .conftest import pod


def quota(name, hard, **spec):
    return {"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": name},
            "spec": {"hard": hard, **spec}}


def used(env, name, namespace="default"):
    return env.get("resourcequotas", name, namespace)["status"]["used"]


def test_docs_memory_and_cpu_quota(env):
    # "Configure Memory and CPU Quotas for a Namespace"
    env.create("resourcequotas", quota("mem-cpu-demo", {
        "requests.cpu": "1", "requests.memory": "1Gi", "limits.cpu": "2", "limits.memory": "2Gi"}))
    env.create("pods", pod("quota-mem-cpu-demo", requests={"memory": "600Mi", "cpu": "400m"},
                           limits={"memory": "800Mi", "cpu": "800m"}))
    assert used(env, "mem-cpu-demo") == {"requests.cpu": "400m", "requests.memory": "600Mi",
                                         "limits.cpu": "800m", "limits.memory": "800Mi"}
    status = env.get("resourcequotas", "mem-cpu-demo", "default")["status"]
    assert status["hard"] == {"requests.cpu": "1", "requests.memory": "1Gi", "limits.cpu": "2",
                              "limits.memory": "2Gi"}
    with pytest.raises(Forbidden) as e:
        env.create("pods", pod("quota-mem-cpu-demo-2", requests={"memory": "700Mi", "cpu": "400m"},
                               limits={"memory": "1Gi", "cpu": "800m"}))
    assert e.value.code == 403
    assert str(e.value) == (
        'pods "quota-mem-cpu-demo-2" is forbidden: exceeded quota: mem-cpu-demo, requested: '
        "requests.memory=700Mi, used: requests.memory=600Mi, limited: requests.memory=1Gi")
    with pytest.raises(Exception):
        env.get("pods", "quota-mem-cpu-demo-2", "default")
    assert used(env, "mem-cpu-demo")["requests.memory"] == "600Mi"


def test_exceeded_cpu_wording(env):
    env.create("resourcequotas", quota("compute", {"requests.cpu": "1"}))
    for name in ("a", "b"):
        env.create("pods", pod(name, requests={"cpu": "500m"}))
    assert used(env, "compute") == {"requests.cpu": "1"}
    with pytest.raises(Forbidden) as e:
        env.create("pods", pod("c", requests={"cpu": "500m"}))
    assert str(e.value) == ('pods "c" is forbidden: exceeded quota: compute, requested: '
                            "requests.cpu=500m, used: requests.cpu=1, limited: requests.cpu=1")


def test_pod_count_and_release_on_delete(env):
    env.create("resourcequotas", quota("pod-demo", {"pods": "2"}))
    env.create("pods", pod("a"))
    env.create("pods", pod("b"))
    with pytest.raises(Forbidden) as e:
        env.create("pods", pod("c"))
    assert str(e.value).endswith("exceeded quota: pod-demo, requested: pods=1, used: pods=2, "
                                 "limited: pods=2")
    env.run(env.client.delete("pods", "a", namespace="default"))
    assert used(env, "pod-demo") == {"pods": "1"}
    env.create("pods", pod("c"))
    assert used(env, "pod-demo") == {"pods": "2"}


def test_containers_must_state_what_quota_limits(env):
    env.create("resourcequotas", quota("compute-resources", {"limits.cpu": "4", "requests.memory": "1Gi"}))
    with pytest.raises(Forbidden) as e:
        env.create("pods", pod("nginx", requests={"cpu": "100m"}))
    assert str(e.value) == ('pods "nginx" is forbidden: failed quota: compute-resources: must specify '
                            "limits.cpu for: app; requests.memory for: app")


def test_dry_run_charges_nothing(env):
    env.create("resourcequotas", quota("pods", {"pods": "1"}))
    env.create("pods", pod("a"), dry_run=True)
    assert used(env, "pods") == {"pods": "0"}
    env.create("pods", pod("a"))
    with pytest.raises(Forbidden):
        env.create("pods", pod("b"), dry_run=True)


def test_best_effort_scope(env):
    env.create("resourcequotas", quota("best-effort", {"pods": "1"}, scopes=["BestEffort"]))
    env.create("pods", pod("be-1"))
    env.create("pods", pod("burstable", requests={"cpu": "100m"}))
    with pytest.raises(Forbidden, match="exceeded quota: best-effort"):
        env.create("pods", pod("be-2"))
    env.create("resourcequotas", quota("not-best-effort", {"requests.cpu": "150m"},
                                       scopes=["NotBestEffort"]))
    assert used(env, "not-best-effort") == {"requests.cpu": "100m"}
    assert used(env, "best-effort") == {"pods": "1"}


def test_priority_class_scope_selector(env):
    # "Resource Quotas": quota per PriorityClass
    for name, value in (("high", 1000), ("low", 10)):
        env.create("scheduling.k8s.io/priorityclasses",
                   {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
                    "metadata": {"name": name}, "value": value})
    env.create("resourcequotas", quota("pods-high", {"pods": "1", "cpu": "1"}, scopeSelector={
        "matchExpressions": [{"operator": "In", "scopeName": "PriorityClass", "values": ["high"]}]}))
    env.create("pods", pod("h1", priorityClassName="high", requests={"cpu": "500m"}))
    env.create("pods", pod("l1", priorityClassName="low", requests={"cpu": "500m"}))
    env.create("pods", pod("none", requests={"cpu": "500m"}))
    assert used(env, "pods-high") == {"pods": "1", "cpu": "500m"}
    with pytest.raises(Forbidden, match="exceeded quota: pods-high, requested: pods=1"):
        env.create("pods", pod("h2", priorityClassName="high", requests={"cpu": "100m"}))


def test_resize_is_charged_by_the_increase(env):
    env.create("resourcequotas", quota("compute", {"requests.cpu": "1"}))
    resources = {"cpu": "500m", "memory": "128Mi"}
    env.create("pods", pod(requests=resources, limits=resources))

    def resize(cpu):
        r = {"cpu": cpu, "memory": "128Mi"}
        patch = {"spec": {"containers": [{"name": "app", "resources": {"requests": r, "limits": r}}]}}
        return env.run(env.client.resize("default", "web", patch))

    resize("800m")
    assert used(env, "compute") == {"requests.cpu": "800m"}
    with pytest.raises(Forbidden) as e:
        resize("1200m")
    assert str(e.value) == ('pods "web" is forbidden: exceeded quota: compute, requested: '
                            "requests.cpu=400m, used: requests.cpu=800m, limited: requests.cpu=1")
    # a decrease is not released by admission but by the recalculation
    resize("300m")
    assert used(env, "compute") == {"requests.cpu": "800m"}
    recalculate_quota_usage(env.store, "default", clock=env.clock)
    assert used(env, "compute") == {"requests.cpu": "300m"}


def test_recalculation_from_live_pods(env):
    env.create("resourcequotas", quota("compute", {"pods": "10", "requests.memory": "1Gi",
                                                   "count/pods": "10"}))
    env.create("pods", pod("a", requests={"memory": "100Mi"}))
    done = env.create("pods", pod("b", requests={"memory": "200Mi"}))
    done["status"]["phase"] = "Succeeded"
    env.run(env.client.update_status("pods", done))
    assert used(env, "compute") == {"pods": "1", "requests.memory": "100Mi", "count/pods": "2"}
    q = env.get("resourcequotas", "compute", "default")
    q["status"]["used"] = {"pods": "7"}
    env.store.update("resourcequotas", q)
    updated = recalculate_quota_usage(env.store, "default", clock=env.clock)
    assert [u["metadata"]["name"] for u in updated] == ["compute"]
    assert used(env, "compute") == {"pods": "1", "requests.memory": "100Mi", "count/pods": "2"}
    assert recalculate_quota_usage(env.store, clock=env.clock) == []


def test_object_counts(env):
    env.create("resourcequotas", quota("objects", {"count/configmaps": "1", "configmaps": "5",
                                                   "resourcequotas": "2"}))
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}, "data": {"k": "v"}}
    env.create("configmaps", cm)
    assert used(env, "objects") == {"count/configmaps": "1", "configmaps": "1", "resourcequotas": "1"}
    with pytest.raises(Forbidden) as e:
        env.create("configmaps", {**cm, "metadata": {"name": "b"}})
    assert str(e.value) == ('configmaps "b" is forbidden: exceeded quota: objects, requested: '
                            "count/configmaps=1, used: count/configmaps=1, limited: count/configmaps=1")


def test_quotas_elsewhere_do_not_apply(env):
    env.namespace("other")
    env.create("resourcequotas", quota("none", {"pods": "0"}), namespace="other")
    env.create("pods", pod("free"))
    with pytest.raises(Forbidden):
        env.create("pods", pod("blocked", namespace="other"))


def test_pod_level_requests_are_what_quota_charges(env):
    """pkg/quota/v1/evaluator/core PodUsageFunc: resourcehelper.PodRequests/PodLimits, which
    take pod-level resources when set (PodLevelResources, on in 1.36)."""
    env.create("resourcequotas", quota("compute", {"requests.cpu": "4", "limits.cpu": "4"}))
    env.create("pods", pod("level", requests={"cpu": "500m"}, limits={"cpu": "500m"},
                           resources={"requests": {"cpu": "2"}, "limits": {"cpu": "3"}}))
    assert used(env, "compute") == {"requests.cpu": "2", "limits.cpu": "3"}
