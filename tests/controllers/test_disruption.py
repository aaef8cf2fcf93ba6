"""PodDisruptionBudget status, kept by the disruption controller, with the eviction API."""

import pytest

from kvert.api.errors import TooManyRequests
from kvert.api.meta import format_time

from .helpers import DEPLOY, NS, PDB, FakeNodeAgent, deployment, eventually, is_ready, pdb, run


async def _status(env, name, **want):
    p = await env.get(PDB, name)
    s = p.get("status") or {}
    if p["metadata"].get("generation") != s.get("observedGeneration"):
        return None
    got = {k: s.get(k, 0) for k in want}
    return p if got == want else None


async def _ready_pods(env, n, selector="app=web"):
    pods = await env.pods(selector)
    ready = [p for p in pods if is_ready(p)]
    return ready if len(ready) == n and len(pods) == n else None


def test_min_available_eviction_and_recovery():
    async def scenario(env):
        agent = await FakeNodeAgent(env, delay=2.0).start()
        env.start_manager()
        await env.client.create(DEPLOY, deployment("web", 3))
        await env.client.create(PDB, pdb("web-pdb", {"app": "web"}, min_available=2))
        p = await eventually(env, lambda: _status(env, "web-pdb", expectedPods=3, currentHealthy=3,
                                                  desiredHealthy=2, disruptionsAllowed=1),
                             what="allowed 1")
        (condition,) = p["status"]["conditions"]
        assert condition["type"] == "DisruptionAllowed" and condition["status"] == "True"
        assert condition["reason"] == "SufficientPods"
        assert condition["observedGeneration"] == p["metadata"]["generation"]
        assert not p["status"].get("disruptedPods")

        agent.enabled = False                       # the replacement will not be ready for now
        victim, other = (await env.pods("app=web"))[:2]
        await env.client.evict(NS, victim["metadata"]["name"])
        right_after = await env.get(PDB, "web-pdb")
        assert right_after["status"]["disruptionsAllowed"] == 0
        assert victim["metadata"]["name"] in right_after["status"]["disruptedPods"]
        with pytest.raises(TooManyRequests):
            await env.client.evict(NS, other["metadata"]["name"])

        p = await eventually(env, lambda: _status(env, "web-pdb", expectedPods=3, currentHealthy=2,
                                                  desiredHealthy=2, disruptionsAllowed=0),
                             what="replacement counted, not healthy")
        assert not p["status"].get("disruptedPods")   # the evicted pod is gone
        assert len(await env.pods("app=web")) == 3    # replaced, not yet ready
        assert p["status"]["conditions"][0]["reason"] == "InsufficientPods"
        assert p["status"]["conditions"][0]["status"] == "False"
        with pytest.raises(TooManyRequests):
            await env.client.evict(NS, other["metadata"]["name"])

        agent.enabled = True
        await eventually(env, lambda: _status(env, "web-pdb", currentHealthy=3, disruptionsAllowed=1),
                         what="replacement ready")
        await env.client.evict(NS, other["metadata"]["name"])
        agent.stop()

    run(scenario)


def test_a_disrupted_pod_that_is_not_deleted_counts_as_unhealthy_for_two_minutes():
    async def scenario(env):
        agent = await FakeNodeAgent(env, delay=1.0).start()
        env.start_manager()
        await env.client.create(DEPLOY, deployment("web", 3))
        await env.client.create(PDB, pdb("web-pdb", {"app": "web"}, min_available=2))
        p = await eventually(env, lambda: _status(env, "web-pdb", currentHealthy=3, disruptionsAllowed=1),
                             what="allowed 1")
        pod = (await env.pods("app=web"))[0]["metadata"]["name"]
        # An eviction that took its disruption but whose delete never happened.
        p["status"]["disruptionsAllowed"] = 0
        p["status"]["disruptedPods"] = {pod: format_time(env.clock.now())}
        env.store.update(PDB, p)
        t0 = env.clock.now()
        p = await eventually(env, lambda: _status(env, "web-pdb", currentHealthy=2, disruptionsAllowed=0),
                             what="disrupted pod not healthy")
        assert list(p["status"]["disruptedPods"]) == [pod]
        await env.clock.sleep(100)
        assert (await _status(env, "web-pdb", currentHealthy=2, disruptionsAllowed=0)) is not None
        p = await eventually(env, lambda: _status(env, "web-pdb", currentHealthy=3, disruptionsAllowed=1),
                             step=0.5, what="entry expired")
        assert 119 <= env.clock.now() - t0 <= 125
        assert not p["status"].get("disruptedPods")
        notes = await env.events("NotDeleted")
        assert notes and notes[0]["involvedObject"]["name"] == pod
        agent.stop()

    run(scenario)


@pytest.mark.parametrize("spec,expected,desired,allowed", [
    ({"min_available": "50%"}, 4, 2, 2),       # ceil(2.0)
    ({"min_available": "60%"}, 4, 3, 1),       # ceil(2.4)
    ({"max_unavailable": "30%"}, 4, 2, 2),     # 4 - ceil(1.2)
    ({"max_unavailable": 1}, 4, 3, 1),
    ({"max_unavailable": "100%"}, 4, 0, 4),
    ({"min_available": 5}, 4, 5, 0),
])
def test_percentages_and_max_unavailable(spec, expected, desired, allowed):
    async def scenario(env):
        agent = await FakeNodeAgent(env, delay=1.0).start()
        env.start_manager()
        await env.client.create(DEPLOY, deployment("web", 4))
        await env.client.create(PDB, pdb("web-pdb", {"app": "web"}, **spec))
        await eventually(env, lambda: _status(env, "web-pdb", expectedPods=expected, currentHealthy=4,
                                              desiredHealthy=desired, disruptionsAllowed=allowed),
                         what=f"{spec}")
        agent.stop()

    run(scenario)


def test_expected_pods_follow_the_deployment_scale():
    async def scenario(env):
        agent = await FakeNodeAgent(env, delay=1.0).start()
        env.start_manager()
        await env.client.create(DEPLOY, deployment("web", 2))
        await env.client.create(PDB, pdb("web-pdb", {"app": "web"}, max_unavailable="50%"))
        await eventually(env, lambda: _status(env, "web-pdb", expectedPods=2, currentHealthy=2,
                                              desiredHealthy=1, disruptionsAllowed=1), what="2")
        agent.enabled = False
        await env.client.patch(DEPLOY, "web", {"spec": {"replicas": 6}}, namespace=NS)
        await eventually(env, lambda: _status(env, "web-pdb", expectedPods=6, currentHealthy=2,
                                              desiredHealthy=3, disruptionsAllowed=0), what="6")
        agent.enabled = True
        await eventually(env, lambda: _status(env, "web-pdb", expectedPods=6, currentHealthy=6,
                                              desiredHealthy=3, disruptionsAllowed=3), what="ready")
        # a spec change is observed
        await env.client.patch(PDB, "web-pdb", {"spec": {"maxUnavailable": 1}}, namespace=NS)
        p = await eventually(env, lambda: _status(env, "web-pdb", desiredHealthy=5, disruptionsAllowed=1),
                             what="new spec")
        assert p["status"]["observedGeneration"] == 2
        agent.stop()

    run(scenario)


def test_no_pods_and_unmanaged_pods():
    async def scenario(env):
        env.start_manager()
        await env.client.create(PDB, pdb("empty", {"app": "none"}, min_available=1))
        p = await eventually(env, lambda: _status(env, "empty", expectedPods=0, currentHealthy=0,
                                                  desiredHealthy=1, disruptionsAllowed=0), what="empty")
        assert p["status"]["conditions"][0]["reason"] == "InsufficientPods"
        assert [e["message"] for e in await env.events("NoPods")] == ["No matching pods found"]

        bare = {"apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": "bare", "namespace": NS, "labels": {"app": "bare"}},
                "spec": {"containers": [{"name": "c", "image": "x"}]}}
        await env.client.create("pods", bare)
        await env.client.create(PDB, pdb("bare", {"app": "bare"}, max_unavailable=1))
        await eventually(env, lambda: _status(env, "bare", expectedPods=0, disruptionsAllowed=0),
                         what="unmanaged")
        await eventually(env, lambda: env.events("UnmanagedPods"), what="event")

    run(scenario)


def test_fail_safe_when_the_expected_count_cannot_be_computed():
    async def scenario(env):
        env.start_manager(controllers=["disruption"])
        pod = {"apiVersion": "v1", "kind": "Pod",
               "metadata": {"name": "lost", "namespace": NS, "labels": {"app": "lost"},
                            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet",
                                                 "name": "gone", "uid": "u-gone", "controller": True}]},
               "spec": {"containers": [{"name": "c", "image": "x"}]}}
        await env.client.create("pods", pod)
        await env.client.create(PDB, pdb("lost", {"app": "lost"}, max_unavailable="50%"))

        async def failed():
            p = await env.get(PDB, "lost")
            conditions = (p.get("status") or {}).get("conditions") or []
            return conditions and conditions[0]["reason"] == "SyncFailed" and p
        p = await eventually(env, failed, what="SyncFailed")
        assert p["status"]["disruptionsAllowed"] == 0
        assert p["status"]["conditions"][0]["status"] == "False"
        assert p["status"]["conditions"][0]["message"] == 'found no controllers for pod "lost"'
        events = await env.events("CalculateExpectedPodCountFailed")
        assert events and events[0]["type"] == "Warning"

    run(scenario)
