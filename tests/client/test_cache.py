"""InformerFactory: shared informers read like a client (get/list), started on first use."""

from __future__ import annotations

import asyncio

import pytest

from kvert.api import kinds
from kvert.api.errors import ApiError, NotFound
from kvert.client import InProcessClient
from kvert.client.cache import InformerFactory
from kvert.clock import VirtualClock
from kvert.registry import Registry
from kvert.store import open_store


def _cm(name, value="1", ns="default"):
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": ns},
            "data": {"v": value}}


def _node(name):
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name}}


class CountingClient:
    """An in-process client that counts lists and watches per resource."""

    def __init__(self, inner):
        self.inner = inner
        self.lists: dict[str, int] = {}
        self.watches: dict[str, int] = {}

    async def list(self, resource, **kw):
        self.lists[resource] = self.lists.get(resource, 0) + 1
        return await self.inner.list(resource, **kw)

    async def watch(self, resource, **kw):
        self.watches[resource] = self.watches.get(resource, 0) + 1
        return await self.inner.watch(resource, **kw)

    def __getattr__(self, name):
        return getattr(self.inner, name)


def _setup():
    clock = VirtualClock()
    store = open_store("memory", clock=clock)
    client = InProcessClient(Registry(store, clock, seed=1))
    return clock, store, client


def _run(clock, client, main):
    """``main(cache)`` in virtual time; the cache is stopped however main ends (an informer left
    running would keep the loop from closing)."""
    cache = InformerFactory(client, clock)

    async def body():
        try:
            return await main(cache)
        finally:
            cache.stop()

    return clock.run(body())


async def _settle(clock):
    for _ in range(5):
        await asyncio.sleep(0)
    await clock.sleep(0.001)


def _names(listed):
    return [(o["metadata"].get("namespace", ""), o["metadata"]["name"]) for o in listed["items"]]


def test_get_and_list_follow_creates_updates_and_deletes():
    clock, store, client = _setup()

    async def main(cache):
        await client.create("configmaps", _cm("before"))
        assert (await cache.get("configmaps", "before", "default"))["data"] == {"v": "1"}
        await client.create("configmaps", _cm("a"))
        await client.patch("configmaps", "a", {"data": {"v": "2"}}, namespace="default")
        await client.delete("configmaps", "before", namespace="default")
        await _settle(clock)
        got = await cache.get("configmaps", "a", "default")
        with pytest.raises(NotFound):
            await cache.get("configmaps", "before", "default")
        listed = await cache.list("configmaps")
        # the cache answers what the server answers now
        server = await client.list("configmaps")
        return got, listed, server

    got, listed, server = _run(clock, client, main)
    assert got["data"] == {"v": "2"}
    assert _names(listed) == [("default", "a")]
    assert _names(listed) == _names(server)
    assert listed["items"][0]["metadata"]["resourceVersion"] == server["items"][0]["metadata"]["resourceVersion"]


def test_in_process_reads_see_writes_made_just_before():
    """No yield between the write and the read: the cache applies what its watch queued, so a
    component that writes and then reads (and writes again with that resourceVersion) does not
    work from a stale copy."""
    clock, store, client = _setup()

    async def main(cache):
        await client.create("configmaps", _cm("a"))
        await cache.list("configmaps")                    # started and synced
        written = await client.patch("configmaps", "a", {"data": {"v": "2"}}, namespace="default")
        seen = await cache.get("configmaps", "a", "default")
        await client.create("configmaps", _cm("b"))
        await client.delete("configmaps", "a", namespace="default")
        listed = _names(await cache.list("configmaps"))
        # a write based on the cached copy is not a conflict
        fresh = await cache.get("configmaps", "b", "default")
        again = await client.update("configmaps", {**fresh, "data": {"v": "3"}})
        return written, seen, listed, again

    written, seen, listed, again = _run(clock, client, main)
    assert seen["metadata"]["resourceVersion"] == written["metadata"]["resourceVersion"]
    assert listed == [("default", "b")]
    assert again["data"] == {"v": "3"}


def test_missing_object_is_not_found():
    clock, store, client = _setup()

    async def main(cache):
        await client.create("configmaps", _cm("x", ns="default"))
        with pytest.raises(NotFound):
            await cache.get("configmaps", "nope", "default")
        with pytest.raises(NotFound):            # the right name in another namespace
            await cache.get("configmaps", "x", "other")
        # an empty resource is synced too: NotFound, not a hang
        with pytest.raises(NotFound):
            await asyncio.wait_for(cache.get("limitranges", "nope", "default"), 5)

    _run(clock, client, main)


def test_list_filters_by_namespace_and_orders_like_the_client():
    clock, store, client = _setup()

    async def main(cache):
        await client.create("namespaces", {"apiVersion": "v1", "kind": "Namespace",
                                           "metadata": {"name": "other"}})
        for name, ns in (("b", "default"), ("z", "other"), ("a", "default"), ("c", "other")):
            await client.create("configmaps", _cm(name, ns=ns))
        await client.create("nodes", _node("n2"))
        await client.create("nodes", _node("n1"))
        out = {}
        for ns in (None, "default", "other", "missing"):
            out[ns] = (_names(await cache.list("configmaps", namespace=ns)),
                       _names(await client.list("configmaps", namespace=ns)))
        # a cluster-scoped resource ignores the namespace, as the client does
        out["nodes"] = (_names(await cache.list("nodes", namespace="default")),
                        _names(await client.list("nodes", namespace="default")))
        node = await cache.get("nodes", "n1", "default")
        return out, node

    out, node = _run(clock, client, main)
    assert out["default"][0] == [("default", "a"), ("default", "b")]
    assert out["other"][0] == [("other", "c"), ("other", "z")]
    assert out["missing"][0] == []
    assert len(out[None][0]) == 4
    for cached, direct in out.values():
        assert cached == direct
    assert [n for _, n in out["nodes"][0]] == ["n1", "n2"]
    assert node["metadata"]["name"] == "n1"


def test_callers_share_one_informer_per_resource():
    clock, store, inner = _setup()
    client = CountingClient(inner)

    async def main(cache):
        await inner.create("configmaps", _cm("a"))
        # concurrent first uses start one informer, not one each
        results = await asyncio.gather(cache.get("configmaps", "a", "default"),
                                       cache.list("configmaps"),
                                       cache.list("configmaps", namespace="default"))
        for _ in range(3):
            await cache.get("configmaps", "a", "default")
            await cache.list("configmaps")
        await cache.list("pods")
        first = await cache.synced("configmaps")
        assert first is await cache.synced("configmaps")
        return results

    results = _run(clock, client, main)
    assert results[0]["metadata"]["name"] == "a"
    assert client.watches == {"configmaps": 1, "pods": 1}
    # the probe (limit=1) and the informer's own list, once per resource
    assert client.lists == {"configmaps": 2, "pods": 2}


def test_stop_ends_the_informer_tasks():
    clock, store, client = _setup()

    async def main():
        cache = InformerFactory(client, clock)
        await client.create("configmaps", _cm("a"))
        await cache.list("configmaps")
        await cache.list("pods")
        me = asyncio.current_task()
        running = [t for t in asyncio.all_tasks() if t is not me]
        cache.stop()
        await _settle(clock)
        return running, [t for t in asyncio.all_tasks() if t is not me and not t.done()]

    running, left = clock.run(main())
    assert len(running) >= 2                   # one informer per resource
    assert all(t.done() for t in running)
    assert left == []


def test_unknown_resource_in_process_raises_at_once():
    clock, store, client = _setup()

    async def main(cache):
        for _ in range(2):                     # and again: nothing left half-started
            with pytest.raises(KeyError):
                await asyncio.wait_for(cache.get("example.com/nothings", "x", "default"), 5)
        assert [t for t in asyncio.all_tasks() if t is not asyncio.current_task()] == []
        start = clock.now()
        with pytest.raises(KeyError):
            await cache.list("example.com/nothings")
        return clock.now() - start

    assert _run(clock, client, main) == 0


def test_resource_the_server_does_not_serve_raises_its_error(tmp_path, monkeypatch):
    """A client that knows a type the server does not serve (a real cluster without the VPA
    CRDs): the server's 404 comes back instead of an informer retrying forever."""
    from kvert.apiserver.admission import default_chain
    from kvert.auth.tokens import ADMIN, TokenAuthenticator
    from kvert.apiserver.server import ApiServer
    from kvert.client.http import HttpClient
    from kvert.clock import WallClock

    # known to the client's table of types only (kinds.by_key), not served (no version of it)
    rt = kinds.ResourceType("example.com", "v1", "Widget", "widgets", True)
    monkeypatch.setitem(kinds._BY_KEY, rt.key, rt)

    async def main():
        clock = WallClock()
        store = open_store("memory", clock=clock)
        tokens = TokenAuthenticator.load_or_create(tmp_path / "tokens.csv")
        server = ApiServer(store, clock, authenticator=tokens, admission=default_chain(store, clock))
        await server.bootstrap()
        url = await server.start("127.0.0.1", 0)
        client = HttpClient(url, {"Authorization": f"Bearer {tokens.token_for(ADMIN)}"})
        cache = InformerFactory(client, clock)
        try:
            with pytest.raises(ApiError) as info:
                await asyncio.wait_for(cache.get(rt.key, "w", "default"), 5)
            with pytest.raises(ApiError):
                await asyncio.wait_for(cache.list(rt.key), 5)
            await client.create("pods", {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
                                         "spec": {"containers": [{"name": "c", "image": "x"}]}},
                                namespace="default")
            pods = await asyncio.wait_for(cache.list("pods"), 5)
            return info.value, _names(pods)
        finally:
            cache.stop()
            await client.close()
            await server.stop()
            store.close()

    error, pods = asyncio.run(main())
    assert isinstance(error, NotFound) and error.code == 404
    assert pods == [("default", "p")]
