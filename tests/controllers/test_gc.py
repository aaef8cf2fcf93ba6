"""The garbage collector: background deletion of dependents whose owners are gone."""

from .helpers import NS, RS, eventually, replica_set, run


def _cm(name, owners=()):
    meta = {"name": name, "namespace": NS}
    if owners:
        meta["ownerReferences"] = [
            {"apiVersion": o["apiVersion"], "kind": o["kind"], "name": o["metadata"]["name"],
             "uid": o["metadata"]["uid"]} for o in owners]
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": {}}


async def _exists(env, resource, name):
    items = (await env.client.list(resource, namespace=NS))["items"]
    return any(o["metadata"]["name"] == name for o in items)


def test_deleting_a_replica_set_deletes_its_pods():
    async def scenario(env):
        env.start_manager()
        await env.client.create(RS, replica_set("web", 3))
        await eventually(env, lambda: _n(env, 3), what="pods")
        await env.client.delete(RS, "web", namespace=NS)
        await eventually(env, lambda: _n(env, 0, active_only=False), what="pods collected")

    run(scenario)


async def _n(env, n, active_only=True):
    return len(await env.pods("app=web", active_only=active_only)) == n


def test_dangling_references_are_removed_when_other_owners_remain():
    async def scenario(env):
        env.start_manager(controllers=["garbagecollector"])
        a = await env.client.create("configmaps", _cm("a"))
        b = await env.client.create("configmaps", _cm("b"))
        await env.client.create("configmaps", _cm("child", owners=[a, b]))
        await env.client.create("configmaps", _cm("only-a", owners=[a]))
        await env.clock.sleep(1)
        await env.client.delete("configmaps", "a", namespace=NS)

        async def done():
            child = await env.client.get("configmaps", "child", NS)
            refs = child["metadata"].get("ownerReferences") or []
            return [r["name"] for r in refs] == ["b"] and not await _exists(env, "configmaps", "only-a")
        await eventually(env, done, what="child keeps b only, only-a deleted")

    run(scenario)


def test_a_namesake_owner_does_not_save_dependents_nor_does_a_late_dependent_survive():
    async def scenario(env):
        env.start_manager(controllers=["garbagecollector"])
        a = await env.client.create("configmaps", _cm("a"))
        await env.client.delete("configmaps", "a", namespace=NS)
        await env.client.create("configmaps", _cm("a"))          # same name, new uid
        await env.client.create("configmaps", _cm("late", owners=[a]))
        await eventually(env, lambda: _gone(env, "late"), what="late dependent collected")
        assert await _exists(env, "configmaps", "a")

    run(scenario)


async def _gone(env, name):
    return not await _exists(env, "configmaps", name)


def test_a_restarted_collector_collects_what_was_orphaned_while_it_was_down():
    async def scenario(env):
        manager = env.start_manager(controllers=["garbagecollector"])
        a = await env.client.create("configmaps", _cm("a"))
        await env.client.create("configmaps", _cm("child", owners=[a]))
        await env.clock.sleep(1)
        await env.stop_manager(manager)
        await env.client.delete("configmaps", "a", namespace=NS)
        await env.clock.sleep(10)
        assert await _exists(env, "configmaps", "child")
        env.start_manager(controllers=["garbagecollector"])
        await eventually(env, lambda: _gone(env, "child"), what="collected after restart")

    run(scenario)


def test_owners_of_unknown_kinds_are_left_alone():
    async def scenario(env):
        env.start_manager(controllers=["garbagecollector"])
        ghost = {"apiVersion": "example.com/v1", "kind": "Ghost", "metadata": {"name": "g", "uid": "u-1"}}
        await env.client.create("configmaps", _cm("child", owners=[ghost]))
        await env.clock.sleep(30)
        assert await _exists(env, "configmaps", "child")

    run(scenario)
