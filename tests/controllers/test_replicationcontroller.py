"""ReplicationControllers run through the ReplicaSet controller's logic (upstream's
``pkg/controller/replication`` adapts RCs to ``replicaset.ReplicaSetController``), so the
expectations are replica_set_test.go's."""

from .helpers import NS, FakeNodeAgent, eventually, run, template

RC = "replicationcontrollers"


def rc(name: str, replicas: int) -> dict:
    return {"apiVersion": "v1", "kind": "ReplicationController", "metadata": {"name": name, "namespace": NS},
            "spec": {"replicas": replicas, "selector": {"app": name}, "template": template({"app": name})}}


async def _count(env, n):
    pods = await env.pods("app=web")
    return pods if len(pods) == n else None


def test_keeps_replicas_scales_and_reports_status():
    # TestSyncReplicaSetCreates, TestSyncReplicaSetDeletes, TestControllerUpdateStatusWithFailure
    async def scenario(env):
        agent = await FakeNodeAgent(env, delay=1).start()
        env.start_manager(controllers=["replicationcontroller"])
        created = await env.client.create(RC, rc("web", 2))
        pods = await eventually(env, lambda: _count(env, 2), what="2 pods")
        ref = pods[0]["metadata"]["ownerReferences"][0]
        assert ref == {"apiVersion": "v1", "kind": "ReplicationController", "name": "web",
                       "uid": created["metadata"]["uid"], "controller": True, "blockOwnerDeletion": True}
        assert all(p["metadata"]["name"].startswith("web-") for p in pods)
        await env.client.patch(RC, "web", {"spec": {"replicas": 4}}, namespace=NS)
        await eventually(env, lambda: _count(env, 4), what="4 pods")

        async def status():
            s = (await env.get(RC, "web")).get("status") or {}
            return s if s.get("readyReplicas") == 4 and s.get("availableReplicas") == 4 else None
        s = await eventually(env, status, what="status")
        assert s["replicas"] == 4 and s["fullyLabeledReplicas"] == 4 and s["observedGeneration"] == 2
        await env.client.patch(RC, "web", {"spec": {"replicas": 1}}, namespace=NS)
        await eventually(env, lambda: _count(env, 1), what="1 pod")
        agent.stop()

    run(scenario)


def test_adopts_orphans_its_selector_matches():
    # TestPodControllerLookup / adoption in TestSyncReplicaSetDormancy's setup
    async def scenario(env):
        orphan = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "stray", "namespace": NS,
                                                                  "labels": {"app": "web"}},
                  "spec": {"containers": [{"name": "app", "image": "nginx"}]}}
        await env.client.create("pods", orphan, namespace=NS)
        env.start_manager(controllers=["replicationcontroller"])
        await env.client.create(RC, rc("web", 1))

        async def adopted():
            pod = await env.client.get("pods", "stray", NS)
            refs = pod["metadata"].get("ownerReferences") or []
            return refs and refs[0]["kind"] == "ReplicationController"
        await eventually(env, adopted, what="adoption")
        await env.clock.sleep(2)
        assert [p["metadata"]["name"] for p in await env.pods("app=web")] == ["stray"]

    run(scenario)
