"""pods/eviction against PodDisruptionBudgets: 201, 429 and 500 (seed 001 section 14 says 200;
upstream's EvictionREST.Create returns a success Status, which the create handler answers with 201)."""

import pytest

from kvert.api.errors import InternalError, NotFound, TooManyRequests

from .conftest import pod


def _running(env, name):
    env.run(env.client.create("pods", pod(name), namespace="default"))
    env.run(env.client.bind("default", name, "node-1"))
    p = env.run(env.client.get("pods", name, "default"))
    p["status"]["phase"] = "Running"
    p["status"]["conditions"].append({"type": "Ready", "status": "True"})
    env.run(env.client.update_status("pods", p))


def _pdb(env, name, allowed, selector=None, healthy=3, desired=3):
    env.run(env.client.create("policy/poddisruptionbudgets", {
        "apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": name},
        "spec": {"minAvailable": desired, "selector": selector or {"matchLabels": {"app": "web"}}}},
        namespace="default"))
    pdb = env.run(env.client.get("policy/poddisruptionbudgets", name, "default"))
    pdb["status"] = {"observedGeneration": pdb["metadata"]["generation"], "disruptionsAllowed": allowed,
                     "currentHealthy": healthy, "desiredHealthy": desired, "expectedPods": healthy}
    env.run(env.client.update_status("policy/poddisruptionbudgets", pdb))


def test_without_a_budget_eviction_is_a_graceful_delete(env):
    _running(env, "a")
    status = env.run(env.client.evict("default", "a"))
    # upstream: pkg/registry/core/pod/storage/eviction.go returns Status{Success}; a create
    # answers 201 (staging/.../endpoints/handlers/create.go), as a real kube-apiserver 1.36.2 does.
    assert status["status"] == "Success" and status["code"] == 201
    assert env.run(env.client.get("pods", "a", "default"))["metadata"]["deletionTimestamp"]


def test_a_budget_with_no_disruption_left_refuses_with_429(env):
    _running(env, "a")
    _pdb(env, "web", allowed=0)
    with pytest.raises(TooManyRequests) as info:
        env.run(env.client.evict("default", "a"))
    assert info.value.code == 429
    assert info.value.causes[0].reason == "DisruptionBudget"
    assert "needs 3 healthy pods and has 3 currently" in info.value.causes[0].message
    assert "deletionTimestamp" not in env.run(env.client.get("pods", "a", "default"))["metadata"]


def test_an_allowed_eviction_takes_one_disruption_from_the_budget(env):
    _running(env, "a")
    _running(env, "b")
    _pdb(env, "web", allowed=1, healthy=4)
    env.run(env.client.evict("default", "a"))
    pdb = env.run(env.client.get("policy/poddisruptionbudgets", "web", "default"))
    assert pdb["status"]["disruptionsAllowed"] == 0
    assert "a" in pdb["status"]["disruptedPods"]
    with pytest.raises(TooManyRequests):
        env.run(env.client.evict("default", "b"))


def test_two_budgets_on_one_pod_is_a_500(env):
    _running(env, "a")
    _pdb(env, "one", allowed=5)
    _pdb(env, "two", allowed=5, selector={"matchExpressions": [{"key": "app", "operator": "Exists"}]})
    with pytest.raises(InternalError) as info:
        env.run(env.client.evict("default", "a"))
    assert info.value.code == 500 and "more than one PodDisruptionBudget" in str(info.value)


def test_a_stale_budget_is_still_being_processed(env):
    _running(env, "a")
    _pdb(env, "web", allowed=1)
    pdb = env.run(env.client.get("policy/poddisruptionbudgets", "web", "default"))
    pdb["spec"]["minAvailable"] = 2
    env.run(env.client.update("policy/poddisruptionbudgets", pdb))   # generation moves ahead
    with pytest.raises(TooManyRequests) as info:
        env.run(env.client.evict("default", "a"))
    assert "still being processed" in info.value.causes[0].message


def test_pending_pods_ignore_the_budget(env):
    env.run(env.client.create("pods", pod("pending"), namespace="default"))
    _pdb(env, "web", allowed=0)
    env.run(env.client.evict("default", "pending"))
    with pytest.raises(NotFound):
        env.run(env.client.get("pods", "pending", "default"))


@pytest.mark.parametrize("policy, healthy, evicted", [
    ("AlwaysAllow", 1, True),        # unhealthy pods may always go
    ("IfHealthyBudget", 3, True),    # the budget is met, so an unhealthy pod may go
    ("IfHealthyBudget", 2, False),   # the budget is not met: 429
])
def test_unhealthy_pods_follow_the_unhealthy_pod_eviction_policy(env, policy, healthy, evicted):
    _running(env, "sick")
    p = env.run(env.client.get("pods", "sick", "default"))
    p["status"]["conditions"] = [c for c in p["status"]["conditions"] if c["type"] != "Ready"]
    p["status"]["conditions"].append({"type": "Ready", "status": "False"})
    env.run(env.client.update_status("pods", p))
    _pdb(env, "web", allowed=0, healthy=healthy, desired=3)
    pdb = env.run(env.client.get("policy/poddisruptionbudgets", "web", "default"))
    pdb["spec"]["unhealthyPodEvictionPolicy"] = policy
    pdb = env.run(env.client.update("policy/poddisruptionbudgets", pdb))
    pdb["status"]["observedGeneration"] = pdb["metadata"]["generation"]
    env.run(env.client.update_status("policy/poddisruptionbudgets", pdb))
    if evicted:
        env.run(env.client.evict("default", "sick"))
        assert env.run(env.client.get("pods", "sick", "default"))["metadata"]["deletionTimestamp"]
    else:
        with pytest.raises(TooManyRequests):
            env.run(env.client.evict("default", "sick"))


def test_evicting_a_missing_pod_is_404(env):
    with pytest.raises(NotFound):
        env.run(env.client.evict("default", "ghost"))
