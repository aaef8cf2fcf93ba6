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


# ---- Orphan and Foreground propagation -----------------------------------------------------

from .helpers import DEPLOY, FakeNodeAgent, deployment  # noqa: E402


async def _deployment_with_pods(env, replicas=2):
    agent = await FakeNodeAgent(env).start()
    env.start_manager()
    await env.client.create(DEPLOY, deployment("web", replicas))
    await eventually(env, lambda: _n(env, replicas), what="pods")
    return agent


def test_orphan_keeps_the_replica_sets_and_pods_without_their_owner():
    async def scenario(env):
        agent = await _deployment_with_pods(env)
        deleted = await env.client.delete(DEPLOY, "web", namespace=NS, propagation_policy="Orphan")
        assert deleted["metadata"]["finalizers"] == ["orphan"]

        async def gone():
            return not any(d["metadata"]["name"] == "web"
                           for d in (await env.client.list(DEPLOY, namespace=NS))["items"])
        await eventually(env, gone, what="deployment removed")
        await env.clock.sleep(30)
        sets = (await env.client.list(RS, namespace=NS))["items"]
        assert len(sets) == 1 and not sets[0]["metadata"].get("ownerReferences")
        assert len(await env.pods("app=web")) == 2
        agent.stop()

    run(scenario)


def test_foreground_deletes_the_children_before_the_owner():
    async def scenario(env):
        agent = await _deployment_with_pods(env)
        seen: list[tuple[str, int, int]] = []
        deleted = await env.client.delete(DEPLOY, "web", namespace=NS, propagation_policy="Foreground")
        assert deleted["metadata"]["finalizers"] == ["foregroundDeletion"]

        async def state():
            deploys = len((await env.client.list(DEPLOY, namespace=NS))["items"])
            sets = len((await env.client.list(RS, namespace=NS))["items"])
            pods = len(await env.pods("app=web", active_only=False))
            seen.append((deploys, sets, pods))
            return deploys == 0
        await eventually(env, state, what="deployment removed")
        # the owner stayed while anything below it existed, the replica set while its pods did
        for deploys, sets, pods in seen:
            assert deploys == 1 or (sets == 0 and pods == 0)
            assert sets == 1 or pods == 0
        assert seen[0] == (1, 1, 2)
        agent.stop()

    run(scenario)


def test_a_foreground_owner_does_not_wait_for_dependents_that_do_not_block():
    async def scenario(env):
        env.start_manager(controllers=["garbagecollector"])
        a = await env.client.create("configmaps", _cm("a"))
        child = _cm("child", owners=[a])
        child["metadata"]["finalizers"] = ["example.com/hold"]      # never goes by itself
        await env.client.create("configmaps", child)
        await env.clock.sleep(1)
        await env.client.delete("configmaps", "a", namespace=NS, propagation_policy="Foreground")
        await eventually(env, lambda: _gone(env, "a"), what="owner removed")
        left = await env.client.get("configmaps", "child", NS)
        assert left["metadata"].get("deletionTimestamp")

    run(scenario)
