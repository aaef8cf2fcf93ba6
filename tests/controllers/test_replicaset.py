"""The ReplicaSet controller against an in-process cluster, in virtual time."""

from kvert.controllers import ReplicaSetController

from .helpers import NS, RS, FakeNodeAgent, eventually, mark_failed, replica_set, run


def _names(pods):
    return {p["metadata"]["name"] for p in pods}


def test_keeps_three_pods_and_replaces_a_deleted_one():
    async def scenario(env):
        env.start_manager(controllers=["replicaset"])
        rs = await env.client.create(RS, replica_set("web", 3))
        pods = await eventually(env, lambda: _three(env), what="3 pods")
        for pod in pods:
            assert pod["metadata"]["name"].startswith("web-")
            ref = pod["metadata"]["ownerReferences"][0]
            assert ref == {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web",
                           "uid": rs["metadata"]["uid"], "controller": True,
                           "blockOwnerDeletion": True}
            assert pod["metadata"]["labels"] == {"app": "web"}
        victim = pods[0]["metadata"]["name"]
        await env.client.delete("pods", victim, namespace=NS)
        after = await eventually(env, lambda: _three(env, without=victim), what="replacement")
        assert victim not in _names(after)
        assert len(_names(pods) & _names(after)) == 2
        created = await env.events("SuccessfulCreate")
        assert sorted(e["message"] for e in created) == sorted(
            f"Created pod: {n}" for n in _names(pods) | _names(after))
        assert all(e["involvedObject"]["kind"] == "ReplicaSet" for e in created)
        assert all(e["source"]["component"] == "replicaset-controller" for e in created)

    run(scenario)


async def _three(env, without=None):
    pods = await env.pods("app=web")
    if len(pods) == 3 and all(p["metadata"]["name"] != without for p in pods):
        return pods
    return None


def test_a_failed_pod_is_replaced_and_left_in_place():
    async def scenario(env):
        env.start_manager(controllers=["replicaset"])
        await env.client.create(RS, replica_set("web", 3))
        pods = await eventually(env, lambda: _three(env), what="3 pods")
        failed = pods[1]["metadata"]["name"]
        await mark_failed(env, failed, reason="Evicted")
        after = await eventually(env, lambda: _three(env, without=failed), what="replacement")
        assert failed not in _names(after)
        everything = await env.pods("app=web", active_only=False)
        assert failed in _names(everything)      # as in Kubernetes, pod GC removes failed pods
        rs = await env.get(RS, "web")
        assert rs["status"]["replicas"] == 3

    run(scenario)


def test_status_counts_ready_and_available_after_min_ready_seconds():
    async def scenario(env):
        env.start_manager(controllers=["replicaset"])
        await env.client.create(RS, replica_set("web", 3, minReadySeconds=10))
        agent = await FakeNodeAgent(env, delay=1.0).start()
        try:
            async def ready_not_available():
                rs = await env.get(RS, "web")
                s = rs.get("status") or {}
                return s.get("readyReplicas") == 3 and not s.get("availableReplicas") and rs
            rs = await eventually(env, ready_not_available, what="3 ready, 0 available")
            assert rs["status"]["replicas"] == 3
            assert rs["status"]["fullyLabeledReplicas"] == 3
            assert rs["status"]["observedGeneration"] == rs["metadata"]["generation"]
            t0 = env.clock.now()

            async def available():
                rs = await env.get(RS, "web")
                return (rs.get("status") or {}).get("availableReplicas") == 3
            await eventually(env, available, step=0.05, what="available")
            # ready at ~t0, available once minReadySeconds have passed (second precision)
            assert 8 <= env.clock.now() - t0 <= 12
        finally:
            agent.stop()

    run(scenario)


def test_scale_subresource_up_and_down_deletes_unready_pods_first():
    async def scenario(env):
        env.start_manager(controllers=["replicaset"])
        await env.client.create(RS, replica_set("web", 2))
        agent = await FakeNodeAgent(env, delay=1.0).start()
        try:
            async def ready(n):
                pods = await env.pods("app=web")
                return len(pods) == n and all(_ready(p) for p in pods) and pods
            first = await eventually(env, lambda: ready(2), what="2 ready pods")
            agent.enabled = False
            scale = env.registry.get_scale(RS, "web", NS)
            assert scale["spec"]["replicas"] == 2 and scale["status"]["selector"] == "app=web"
            scale["spec"]["replicas"] = 5
            await env.registry.update_scale(RS, "web", scale, namespace=NS)
            five = await eventually(env, lambda: _count(env, 5), what="5 pods")
            assert _names(first) <= _names(five)
            scale = env.registry.get_scale(RS, "web", NS)
            assert scale["status"]["replicas"] == 5
            scale["spec"]["replicas"] = 2
            await env.registry.update_scale(RS, "web", scale, namespace=NS)
            two = await eventually(env, lambda: _count(env, 2), what="2 pods")
            # the three new, not ready pods went first
            assert _names(two) == _names(first)
            deleted = await env.events("SuccessfulDelete")
            assert len(deleted) == 3
            assert all(e["message"].startswith("Deleted pod: web-") for e in deleted)
        finally:
            agent.stop()

    run(scenario)


def _ready(pod):
    return any(c["type"] == "Ready" and c["status"] == "True"
               for c in pod["status"].get("conditions") or [])


async def _count(env, n, selector="app=web"):
    pods = await env.pods(selector)
    return pods if len(pods) == n else None


def test_adopts_orphans_and_releases_pods_it_no_longer_selects():
    async def scenario(env):
        orphan = {"apiVersion": "v1", "kind": "Pod",
                  "metadata": {"name": "stray", "namespace": NS, "labels": {"app": "web"}},
                  "spec": {"containers": [{"name": "app", "image": "nginx"}]}}
        await env.client.create("pods", orphan)
        env.start_manager(controllers=["replicaset"])
        rs = await env.client.create(RS, replica_set("web", 2))
        pods = await eventually(env, lambda: _count(env, 2), what="2 pods")
        assert "stray" in _names(pods)
        stray = await env.client.get("pods", "stray", NS)
        assert stray["metadata"]["ownerReferences"][0]["uid"] == rs["metadata"]["uid"]
        # relabel one: released, and replaced
        await env.client.patch("pods", "stray", {"metadata": {"labels": {"app": "other"}}},
                               namespace=NS)

        async def released():
            pod = await env.client.get("pods", "stray", NS)
            return not pod["metadata"].get("ownerReferences")
        await eventually(env, released, what="release")
        await eventually(env, lambda: _count(env, 2), what="replacement")

    run(scenario)


def test_creation_failures_set_replica_failure_and_slow_start():
    async def scenario(env):
        quota = {"apiVersion": "v1", "kind": "ResourceQuota",
                 "metadata": {"name": "q", "namespace": NS}, "spec": {"hard": {"pods": "3"}}}
        await env.client.create("resourcequotas", quota)
        manager = env.start_manager(controllers=["replicaset"])
        await env.client.create(RS, replica_set("web", 10))

        async def failing():
            rs = await env.get(RS, "web")
            conditions = (rs.get("status") or {}).get("conditions") or []
            return [c for c in conditions if c["type"] == "ReplicaFailure"]
        conditions = await eventually(env, failing, what="ReplicaFailure")
        assert conditions[0]["status"] == "True" and conditions[0]["reason"] == "FailedCreate"
        assert len(await env.pods("app=web")) == 3
        failed = await env.events("FailedCreate")
        assert failed and failed[0]["message"].startswith("Error creating: ")
        assert failed[0]["type"] == "Warning"
        # slow start: batches 1, 2, 4 -> the 4-batch hit the quota; not 7 failed creates
        assert manager["replicaset"].errors >= 1
        await env.client.delete("resourcequotas", "q", namespace=NS)
        await eventually(env, lambda: _count(env, 10), timeout=600, what="10 pods")

        async def cleared():
            rs = await env.get(RS, "web")
            return not (rs.get("status") or {}).get("conditions")
        await eventually(env, cleared, what="condition removed")

    run(scenario)


def test_a_restarted_controller_does_not_duplicate_pods():
    async def scenario(env):
        created = []
        manager = env.start_manager(controllers=["replicaset"])
        from kvert.client import Informer
        watcher = Informer(env.client, "pods", clock=env.clock)

        def on_add(pod):
            created.append(pod["metadata"]["name"])
            if len(created) == 4:
                manager.stop()      # killed in the middle of creating pods
        watcher.add_handlers(on_add=on_add)
        import asyncio
        task = asyncio.ensure_future(watcher.run())
        await watcher.wait_synced()
        await env.client.create(RS, replica_set("web", 10))
        await eventually(env, lambda: len(created) >= 4, what="first pods")
        await env.stop_manager(manager)
        await env.clock.sleep(5)
        before = len(await env.pods("app=web"))
        assert 4 <= before < 10
        env.start_manager(controllers=["replicaset"])
        await eventually(env, lambda: _count(env, 10), what="10 pods")
        await env.clock.sleep(30)
        assert len(await env.pods("app=web")) == 10
        assert len(created) == 10 and len(set(created)) == 10
        watcher.stop()
        task.cancel()

    run(scenario)


def test_controller_runs_alone_and_stops():
    async def scenario(env):
        import asyncio
        controller = ReplicaSetController(env.client, env.clock)
        task = asyncio.ensure_future(controller.run())
        await env.client.create(RS, replica_set("web", 2))
        await eventually(env, lambda: _count(env, 2), what="2 pods")
        controller.stop()
        await asyncio.wait_for(task, 5)

    run(scenario)
