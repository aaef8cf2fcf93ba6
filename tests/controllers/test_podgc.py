"""The pod garbage collector, with upstream's test vectors (pkg/controller/podgc)."""

import pytest

from kvert.api.errors import NotFound
from kvert.controllers.podgc import terminated_to_delete

from .helpers import NS, eventually, run


def _pod(name, phase, reason="", hour=0, node="node"):
    return {"metadata": {"name": name, "namespace": NS,
                         "creationTimestamp": f"2026-01-01T{hour:02d}:00:00Z"},
            "spec": {"nodeName": node}, "status": {"phase": phase, **({"reason": reason} if reason else {})}}


# TestGCTerminated: pods created an hour apart in list order; threshold -> deleted set
@pytest.mark.parametrize("pods, threshold, deleted", [
    ([("a", "Failed"), ("b", "Succeeded"), ("c", "Failed")], 1, {"a", "b"}),
    ([("a", "Failed"), ("b", "Succeeded")], 0, set()),
    ([("a", "Running"), ("b", "Succeeded"), ("c", "Failed")], 1, {"b"}),
    ([("a", "Failed"), ("b", "Succeeded")], 1, {"a"}),
    ([("a", "Failed"), ("b", "Succeeded")], 5, set()),
    ([("a", "Failed"), ("b", "Succeeded"), ("c", "Failed", "Evicted")], 1, {"c", "a"}),
    ([("a", "Running"), ("b", "Succeeded"), ("c", "Failed", "Evicted")], 1, {"c"}),
])
def test_gc_terminated(pods, threshold, deleted):
    objs = [_pod(name, *rest, hour=i + 1) for i, (name, *rest) in enumerate(pods)]
    assert {p["metadata"]["name"] for p in terminated_to_delete(objs, threshold)} == deleted


def test_evicted_pods_go_first_then_the_oldest():
    objs = [_pod("new", "Failed", hour=3), _pod("old", "Succeeded", hour=1),
            _pod("evicted", "Failed", "Evicted", hour=5)]
    assert [p["metadata"]["name"] for p in terminated_to_delete(objs, 1)] == ["evicted", "old"]


def _node(name):
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name}}


def _running_pod(name, node):
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": NS},
            "spec": {"nodeName": node, "containers": [{"name": "c", "image": "x"}]}}


def test_pods_of_a_deleted_node_are_failed_and_deleted_after_the_quarantine():
    async def scenario(env):
        await env.client.create("nodes", _node("gone"))
        await env.client.create("pods", _running_pod("a", "gone"))
        seen = []

        def watch(old, new):
            seen.append(new)
        env.start_manager(controllers=["podgc"])
        await env.clock.sleep(1)
        start = env.clock.now()
        await env.client.delete("nodes", "gone")
        from kvert.client import Informer
        informer = Informer(env.client, "pods", clock=env.clock)
        informer.add_handlers(None, watch, None)
        import asyncio
        task = asyncio.ensure_future(informer.run())

        async def pod_gone():
            try:
                await env.client.get("pods", "a", NS)
                return False
            except NotFound:
                return True
        await eventually(env, pod_gone, timeout=200, what="orphan deleted")
        assert env.clock.now() - start >= 40
        marked = [p for p in seen if p["status"].get("phase") == "Failed"]
        assert marked, "the pod was marked Failed before its deletion"
        condition = [c for c in marked[-1]["status"]["conditions"] if c["type"] == "DisruptionTarget"][0]
        assert (condition["reason"], condition["message"]) == ("DeletionByPodGC", "PodGC: node no longer exists")
        informer.stop()
        task.cancel()

    run(scenario)


def test_unscheduled_pods_being_deleted_are_finished():
    async def scenario(env):
        body = _running_pod("u", "")
        del body["spec"]["nodeName"]
        body["metadata"]["finalizers"] = ["example.com/hold"]
        await env.client.create("pods", body)
        await env.client.delete("pods", "u", namespace=NS)
        env.start_manager(controllers=["podgc"])
        pod = await env.client.get("pods", "u", NS)
        assert pod["metadata"]["deletionTimestamp"]

        async def failed():
            return (await env.client.get("pods", "u", NS))["status"]["phase"] == "Failed"
        await eventually(env, failed, timeout=60, what="unscheduled terminating pod failed")

    run(scenario)
