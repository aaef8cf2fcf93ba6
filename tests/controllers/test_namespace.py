"""The namespace controller: a deleted namespace is emptied of every kind, then finalized."""

from kvert.api.errors import NotFound

from .helpers import DEPLOY, FakeNodeAgent, deployment, eventually, run


def _ns(name):
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}


async def _exists(env, resource, name, namespace=""):
    try:
        await env.client.get(resource, name, namespace)
        return True
    except NotFound:
        return False


def _conditions(ns):
    return {c["type"]: c for c in (ns.get("status") or {}).get("conditions") or []}


def test_deleting_a_namespace_deletes_everything_in_it_then_the_namespace():
    async def scenario(env):
        agent = await FakeNodeAgent(env).start()
        env.start_manager()
        await env.client.create("namespaces", _ns("x"))
        body = deployment("web", 2)
        body["metadata"]["namespace"] = "x"
        await env.client.create(DEPLOY, body)
        await env.client.create("configmaps", {"apiVersion": "v1", "kind": "ConfigMap",
                                               "metadata": {"name": "c", "namespace": "x"}})

        async def pods():
            return len((await env.client.list("pods", namespace="x"))["items"]) == 2
        await eventually(env, pods, what="pods")
        await env.client.delete("namespaces", "x")
        await eventually(env, lambda: _gone(env), what="namespace gone")
        for resource in ("pods", "apps/replicasets", DEPLOY, "configmaps", "events"):
            assert (await env.client.list(resource, namespace="x"))["items"] == [], resource
        agent.stop()

    async def _gone(env):
        return not await _exists(env, "namespaces", "x")

    run(scenario)


def test_content_held_by_a_finalizer_keeps_the_namespace_and_is_reported():
    async def scenario(env):
        env.start_manager(controllers=["namespace"])
        await env.client.create("namespaces", _ns("x"))
        await env.client.create("configmaps", {"apiVersion": "v1", "kind": "ConfigMap",
                                               "metadata": {"name": "held", "namespace": "x",
                                                            "finalizers": ["example.com/hold"]}})
        await env.client.delete("namespaces", "x")

        async def reported():
            ns = await env.client.get("namespaces", "x")
            return _conditions(ns).get("NamespaceFinalizersRemaining", {}).get("status") == "True" and ns
        ns = await eventually(env, reported, what="conditions")
        conditions = _conditions(ns)
        assert ns["status"]["phase"] == "Terminating"
        assert conditions["NamespaceContentRemaining"]["reason"] == "SomeResourcesRemain"
        assert conditions["NamespaceContentRemaining"]["message"] == \
            "Some resources are remaining: configmaps. has 1 resource instances"
        assert conditions["NamespaceFinalizersRemaining"]["message"] == \
            "Some content in the namespace has finalizers remaining: example.com/hold in 1 resource instances"
        assert conditions["NamespaceDeletionDiscoveryFailure"]["status"] == "False"
        assert conditions["NamespaceDeletionContentFailure"]["reason"] == "ContentDeleted"
        cm = await env.client.get("configmaps", "held", "x")
        cm["metadata"]["finalizers"] = []
        await env.client.update("configmaps", cm)

        async def gone():
            return not await _exists(env, "namespaces", "x")
        await eventually(env, gone, what="namespace gone")

    run(scenario)
