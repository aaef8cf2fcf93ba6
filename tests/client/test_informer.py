import asyncio

from kvert.client import InProcessClient, Informer
from kvert.clock import VirtualClock
from kvert.registry import Registry
from kvert.store import open_store


def _cm(name, value="1", ns="default"):
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": ns},
            "data": {"v": value}}


def _pod(name, node=""):
    spec = {"containers": [{"name": "c", "image": "busybox"}]}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": spec}


class Recorder:
    def __init__(self, informer):
        self.events = []
        informer.add_handlers(
            on_add=lambda o: self.events.append(("add", o["metadata"]["name"])),
            on_update=lambda old, new: self.events.append(("update", new["metadata"]["name"])),
            on_delete=lambda o: self.events.append(("delete", o["metadata"]["name"])))


def _setup(history=10000):
    clock = VirtualClock()
    store = open_store("memory", clock=clock) if history == 10000 else _memory(clock, history)
    client = InProcessClient(Registry(store, clock, seed=1))
    return clock, store, client


def _memory(clock, history):
    from kvert.store.memory import MemoryStore
    return MemoryStore(clock=clock, history=history)


async def _settle(clock):
    for _ in range(5):
        await asyncio.sleep(0)
    await clock.sleep(0.001)


def test_informer_lists_then_follows_changes_in_order():
    clock, store, client = _setup()

    async def main():
        await client.create("configmaps", _cm("before"))
        informer = Informer(client, "configmaps", clock=clock)
        rec = Recorder(informer)
        task = asyncio.ensure_future(informer.run())
        await informer.wait_synced()
        assert [o["metadata"]["name"] for o in informer.list()] == ["before"]
        await client.create("configmaps", _cm("a"))
        await client.patch("configmaps", "a", {"data": {"v": "2"}}, namespace="default")
        await client.delete("configmaps", "before", namespace="default")
        await _settle(clock)
        informer.stop()
        await task
        return rec.events, informer

    events, informer = clock.run(main())
    assert events == [("add", "before"), ("add", "a"), ("update", "a"), ("delete", "before")]
    assert informer.get("a", "default")["data"] == {"v": "2"}
    assert informer.get("before", "default") is None


def test_index_follows_updates():
    clock, store, client = _setup()

    async def main():
        informer = Informer(client, "pods", clock=clock)
        informer.add_index("node", lambda p: [p["spec"].get("nodeName", "")])
        task = asyncio.ensure_future(informer.run())
        await informer.wait_synced()
        for name in ("p1", "p2", "p3"):
            await client.create("pods", _pod(name), namespace="default")
        await client.bind("default", "p1", "n1")
        await client.bind("default", "p3", "n1")
        await _settle(clock)
        on_n1 = [p["metadata"]["name"] for p in informer.by_index("node", "n1")]
        unbound = [p["metadata"]["name"] for p in informer.by_index("node", "")]
        informer.stop()
        await task
        return on_n1, unbound

    assert clock.run(main()) == (["p1", "p3"], ["p2"])


def test_expired_watch_is_recovered_by_listing_again():
    clock, store, client = _setup(history=5)

    async def main():
        for i in range(3):
            await client.create("configmaps", _cm(f"keep{i}"))
        await client.create("configmaps", _cm("doomed"))
        informer = Informer(client, "configmaps", clock=clock)
        rec = Recorder(informer)
        task = asyncio.ensure_future(informer.run())
        await informer.wait_synced()
        # Cut the informer off, then change more than the store's history keeps.
        informer._watch.stop()
        await client.delete("configmaps", "doomed", namespace="default")
        await client.patch("configmaps", "keep0", {"data": {"v": "changed"}}, namespace="default")
        for i in range(10):
            await client.create("configmaps", _cm(f"new{i}"))
        await _settle(clock)
        informer.stop()
        await task
        return rec.events, informer

    events, informer = clock.run(main())
    assert informer.relists == 2
    assert ("delete", "doomed") in events and ("update", "keep0") in events
    assert sorted(o["metadata"]["name"] for o in informer.list()) == sorted(
        [f"keep{i}" for i in range(3)] + [f"new{i}" for i in range(10)])
    assert informer.get("keep0", "default")["data"] == {"v": "changed"}


def test_resync_replays_the_cache_as_updates():
    clock, store, client = _setup()

    async def main():
        await client.create("configmaps", _cm("x"))
        informer = Informer(client, "configmaps", clock=clock, resync_period=10)
        rec = Recorder(informer)
        task = asyncio.ensure_future(informer.run())
        await informer.wait_synced()
        await clock.sleep(25)
        informer.stop()
        await task
        return rec.events

    assert clock.run(main()) == [("add", "x"), ("update", "x"), ("update", "x")]


def test_failing_handler_does_not_stop_the_informer():
    clock, store, client = _setup()

    async def main():
        informer = Informer(client, "configmaps", clock=clock)
        informer.add_handlers(on_add=lambda o: 1 / 0)
        rec = Recorder(informer)
        task = asyncio.ensure_future(informer.run())
        await informer.wait_synced()
        await client.create("configmaps", _cm("a"))
        await client.create("configmaps", _cm("b"))
        await _settle(clock)
        informer.stop()
        await task
        return rec.events

    assert clock.run(main()) == [("add", "a"), ("add", "b")]


def _index_from_cache(informer, fn):
    expected = {}
    for obj in informer.list():
        for value in fn(obj):
            expected.setdefault(value, set()).add((obj["metadata"].get("namespace", ""), obj["metadata"]["name"]))
    return expected


from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_changes = st.lists(st.tuples(st.sampled_from(["ADDED", "MODIFIED", "DELETED"]),
                              st.sampled_from(["a", "b", "c"]),
                              st.lists(st.sampled_from(["x", "y", "z"]), max_size=3),
                              st.integers(0, 2)), max_size=30)


@settings(max_examples=150, deadline=None)
@given(_changes)
def test_indexes_always_equal_a_recount_of_the_cache(changes):
    # whatever the order of adds, updates (which may or may not move an index value: a
    # status change moves none) and deletes, each index is what recounting the cache gives
    clock, store, client = _setup()
    informer = Informer(client, "configmaps", clock=clock)
    by_team = lambda o: (o.get("metadata", {}).get("labels") or {}).get("teams", "").split(",")  # noqa: E731
    by_first = lambda o: [v for v in ((o.get("metadata", {}).get("labels") or {}).get("teams", "").split(",")[:1]) if v]  # noqa: E731
    informer.add_index("team", by_team)
    informer.add_index("first", by_first)
    rv = 0
    for kind, name, teams, status in changes:
        rv += 1
        obj = {"metadata": {"name": name, "namespace": "default", "resourceVersion": str(rv),
                            "labels": {"teams": ",".join(teams)}}, "data": {"status": str(status)}}
        if kind == "DELETED" and informer.get(name, "default") is None:
            continue
        informer._apply(kind, obj)
        for index, fn in (("team", by_team), ("first", by_first)):
            assert {v: keys for v, keys in informer._indexes[index].items()} == _index_from_cache(informer, fn)
            for value, keys in _index_from_cache(informer, fn).items():
                assert sorted(o["metadata"]["name"] for o in informer.by_index(index, value)) == \
                    sorted(n for _, n in keys)
