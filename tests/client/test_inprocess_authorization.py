"""The in-process client held to the API server's rules by an injected check."""

import asyncio

import pytest

from kvert.api.errors import Forbidden
from kvert.auth import default_authorizer, request_check
from kvert.auth.policy import ensure_bootstrap_policy
from kvert.auth.user import User
from kvert.client import InProcessClient
from kvert.clock import WallClock
from kvert.registry import Registry
from kvert.store import open_store

NODE = User("system:node:node-1", groups=("system:nodes", "system:authenticated"))


def test_a_node_agent_client_meets_the_node_authorizer():
    store = open_store("memory", clock=WallClock())
    registry = Registry(store, WallClock(), None)
    authorizer = default_authorizer(store)

    async def main():
        await ensure_bootstrap_policy(registry)
        await registry.create("namespaces", {"apiVersion": "v1", "kind": "Namespace",
                                             "metadata": {"name": "default"}})
        client = InProcessClient(registry, user=NODE, authorize=request_check(authorizer))
        assert client.user == "system:node:node-1"      # what the registry records
        await client.list("pods", field_selector="spec.nodeName=node-1")
        with pytest.raises(Forbidden) as refused:
            await client.list("pods")
        assert refused.value.message == (
            'pods is forbidden: User "system:node:node-1" cannot list resource "pods" in API group "" '
            "at the cluster scope: can only list/watch pods with spec.nodeName field selector")
        with pytest.raises(Forbidden) as refused:
            await client.delete("namespaces", "default")
        assert refused.value.details == {"name": "default", "kind": "namespaces"}
        # a watch of one object by name is authorized as of that object
        await client.watch("nodes", field_selector="metadata.name=node-1")
        with pytest.raises(Forbidden):
            await client.watch("nodes", field_selector="metadata.name=node-2")
        # without a check, everything is allowed (the default)
        await InProcessClient(registry, user="anyone").delete("namespaces", "default")

    asyncio.run(main())
    authorizer.stop()
    store.close()
