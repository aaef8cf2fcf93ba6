"""The HTTP client against kvert's API server: same results and errors as in-process."""

from __future__ import annotations

import asyncio

import pytest

from kvert.api.errors import AlreadyExists, Conflict, Expired, Invalid, NotFound
from kvert.apiserver.admission import default_chain
from kvert.auth.tokens import ADMIN, TokenAuthenticator
from kvert.apiserver.server import ApiServer
from kvert.client import Informer
from kvert.client.http import HttpClient
from kvert.clock import WallClock
from kvert.store import open_store

POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web", "labels": {"app": "web"}},
       "spec": {"containers": [{"name": "app", "image": "nginx",
                                "resources": {"requests": {"cpu": "100m", "memory": "64Mi"},
                                              "limits": {"cpu": "100m", "memory": "64Mi"}}}]}}


def run(tmp_path, scenario):
    async def main():
        clock = WallClock()
        store = open_store("memory", clock=clock)
        tokens = TokenAuthenticator.load_or_create(tmp_path / "tokens.csv")
        server = ApiServer(store, clock, authenticator=tokens, admission=default_chain(store, clock))
        await server.bootstrap()
        url = await server.start("127.0.0.1", 0)
        client = HttpClient(url, {"Authorization": f"Bearer {tokens.token_for(ADMIN)}"})
        try:
            return await scenario(client, store, clock)
        finally:
            await client.close()
            await server.stop()
            store.close()

    return asyncio.run(main())


def test_crud_subresources_and_errors(tmp_path):
    async def scenario(client, store, clock):
        created = await client.create("pods", POD, namespace="default")
        assert created["status"]["qosClass"] == "Guaranteed"
        with pytest.raises(AlreadyExists):
            await client.create("pods", POD, namespace="default")
        with pytest.raises(NotFound):
            await client.get("pods", "nope", "default")
        bad = dict(POD, metadata={"name": "Bad_Name"})
        with pytest.raises(Invalid) as info:
            await client.create("pods", bad, namespace="default")
        assert any(c.field == "metadata.name" for c in info.value.causes)
        listed = await client.list("pods", namespace="default", label_selector="app=web")
        assert [p["metadata"]["name"] for p in listed["items"]] == ["web"]
        patched = await client.patch("pods", "web", {"metadata": {"labels": {"x": "1"}}}, namespace="default")
        assert patched["metadata"]["labels"]["x"] == "1"
        stale = dict(created)
        with pytest.raises(Conflict):
            await client.update("pods", stale)
        # 1.36's PodResizeValidator needs the pod's node to exist
        await client.create("nodes", {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "node-1"},
                                      "status": {"allocatable": {"cpu": "4", "memory": "8Gi"}}})
        await client.bind("default", "web", "node-1")
        resized = await client.resize("default", "web", {"spec": {"containers": [{
            "name": "app", "resources": {"requests": {"cpu": "650m", "memory": "64Mi"},
                                         "limits": {"cpu": "650m", "memory": "64Mi"}}}]}})
        assert resized["spec"]["containers"][0]["resources"]["requests"]["cpu"] == "650m"
        status = await client.evict("default", "web", grace_period_seconds=0)
        assert status["status"] == "Success"
        with pytest.raises(NotFound):
            await client.get("pods", "web", "default")

    run(tmp_path, scenario)


def test_watch_and_expiry(tmp_path):
    async def scenario(client, store, clock):
        created = await client.create("pods", POD, namespace="default")
        watch = await client.watch("pods", namespace="default",
                                   resource_version=created["metadata"]["resourceVersion"])
        await client.patch("pods", "web", {"metadata": {"labels": {"x": "1"}}}, namespace="default")
        event = await watch.next(timeout=5)
        assert event.type == "MODIFIED" and event.object["metadata"]["labels"]["x"] == "1"
        watch.stop()
        store.compact(store.current_revision())
        old = await client.watch("pods", namespace="default", resource_version="1")
        with pytest.raises(Expired):
            await old.next(timeout=5)

    run(tmp_path, scenario)


def test_informer_over_http(tmp_path):
    async def scenario(client, store, clock):
        await client.create("pods", POD, namespace="default")
        informer = Informer(client, "pods", clock=clock, namespace="default")
        seen = []
        informer.add_handlers(on_add=lambda o: seen.append(("add", o["metadata"]["name"])),
                              on_delete=lambda o: seen.append(("delete", o["metadata"]["name"])))
        task = asyncio.ensure_future(informer.run())
        await asyncio.wait_for(informer.wait_synced(), 5)
        await client.delete("pods", "web", namespace="default")
        for _ in range(50):
            if ("delete", "web") in seen:
                break
            await asyncio.sleep(0.05)
        informer.stop()
        task.cancel()
        return seen

    assert run(tmp_path, scenario) == [("add", "web"), ("delete", "web")]


def test_create_subresource_over_http_and_in_process(tmp_path):
    # TokenRequest through both clients: the same answer shape and the same errors
    from kvert.auth.serviceaccount import ServiceAccountTokens
    from kvert.client import InProcessClient
    from kvert.registry.tokenrequest import TokenRequests

    async def main():
        clock = WallClock()
        store = open_store("memory", clock=clock)
        tokens = TokenAuthenticator.load_or_create(tmp_path / "tokens.csv")
        signer = ServiceAccountTokens.load_or_create(tmp_path / "sa.key")
        server = ApiServer(store, clock, authenticator=tokens, admission=default_chain(store, clock),
                           token_requests=TokenRequests(signer))
        await server.bootstrap()
        url = await server.start("127.0.0.1", 0)
        http = HttpClient(url, {"Authorization": f"Bearer {tokens.token_for(ADMIN)}"})
        local = InProcessClient(server.registry)
        request = {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
                   "spec": {"audiences": ["vault"], "expirationSeconds": 600}}
        try:
            await http.create("serviceaccounts", {"metadata": {"name": "robot"}}, namespace="default")
            for client in (http, local):
                answer = await client.create_subresource("serviceaccounts", "robot", "token", request,
                                                         namespace="default")
                assert answer["kind"] == "TokenRequest"
                assert answer["spec"]["audiences"] == ["vault"]
                assert signer.verify(answer["status"]["token"])["aud"] == ["vault"]
                with pytest.raises(NotFound):
                    await client.create_subresource("serviceaccounts", "nobody", "token", request,
                                                    namespace="default")
                with pytest.raises(Invalid):
                    await client.create_subresource("serviceaccounts", "robot", "token",
                                                    {"spec": {"expirationSeconds": 60}},
                                                    namespace="default")
            await http.create("pods", POD, namespace="default")
            status = await local.create_subresource(
                "pods", "web", "binding", {"target": {"kind": "Node", "name": "node-1"}},
                namespace="default")
            assert status["status"] == "Success"
            assert (await http.get("pods", "web", "default"))["spec"]["nodeName"] == "node-1"
        finally:
            await http.close()
            await server.stop()
            store.close()

    asyncio.run(main())
