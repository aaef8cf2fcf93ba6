"""EtcdStore as kvert API servers use it: several stores on one etcd.

Two stores on the same key prefix stand for two API server processes sharing one etcd:
each one's watches are fed by etcd's change stream, so they see the other's writes;
optimistic concurrency holds across them; and objects, revisions and history outlive
both a store's restart and etcd's.
"""

from __future__ import annotations

import asyncio
import os
import threading

import pytest

from kvert.api.errors import AlreadyExists, Conflict, Expired, InternalError, NotFound
from kvert.store import ERROR, EtcdStore, open_store
from kvert.store.etcd import LocalEtcd
from tests.store.conftest import FakeClock, etcd_revision, etcd_store, fast_tmp
from tests.store.helpers import ETCD_MISSING, drain

CM = "configmaps"


def cm(name, ns="d", labels=None, **data):
    md = {"name": name, "namespace": ns}
    if labels is not None:
        md["labels"] = labels
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": md, "data": data or {"k": "v"}}


def rv(obj):
    return int(obj["metadata"]["resourceVersion"])


def summary(events):
    return [(e.type, e.object["metadata"]["name"], rv(e.object)) for e in events]


@pytest.fixture
def endpoint(etcd_server):
    return etcd_server.endpoint


@pytest.fixture
def pair(endpoint, clock):
    """Two stores on one prefix, as two API servers sharing one etcd."""
    offset = etcd_revision(endpoint)
    prefix = f"/kvert-test/pair-{offset}"
    a = etcd_store(endpoint, prefix, offset, clock=clock)
    b = etcd_store(endpoint, prefix, offset, clock=clock)
    yield a, b
    a.close()
    b.close()


# ---- watches fed by etcd -----------------------------------------------------------------


def test_a_watch_sees_the_other_servers_writes_in_order(pair):
    a, b = pair

    async def main():
        w = a.watch(CM, resource_version="0")
        sel = a.watch(CM, label_selector="app=web", resource_version="0")
        written = []

        def other_server():  # another process, as far as ``a`` can tell
            for i in range(10):
                obj = b.create(CM, cm(f"o{i}", labels={"app": "db"}))
                written.append(("ADDED", f"o{i}", rv(obj)))
            for i in range(0, 10, 2):
                obj = b.get(CM, "d", f"o{i}")
                obj["metadata"]["labels"] = {"app": "web"}
                written.append(("MODIFIED", f"o{i}", rv(b.update(CM, obj))))
            for i in range(0, 10, 3):
                written.append(("DELETED", f"o{i}", rv(b.delete(CM, "d", f"o{i}")[0])))

        thread = threading.Thread(target=other_server)
        thread.start()
        got = []
        while len(got) < 19:
            event = await w.next(timeout=10)
            assert event is not None, got
            got.append((event.type, event.object["metadata"]["name"], rv(event.object)))
        thread.join()
        assert got == written
        assert [r for _, _, r in got] == list(range(1, 20))
        # the selector watch turns relabels into ADDED and deletions of matching ones
        seen = []
        while len(seen) < 7:
            event = await sel.next(timeout=10)
            assert event is not None
            seen.append((event.type, event.object["metadata"]["name"]))
        assert seen == [("ADDED", f"o{i}") for i in range(0, 10, 2)] + \
            [("DELETED", "o0"), ("DELETED", "o6")]
        assert await w.next(timeout=0.05) is None
        w.stop()
        sel.stop()

    asyncio.run(main())


def test_sync_consumers_wait_for_the_stream(pair):
    a, b = pair
    w = a.watch(CM, resource_version="0", allow_bookmarks=True)
    created = b.create(CM, cm("x"))
    assert a.wait_for(rv(created), timeout=10)
    assert summary(w.get_nowait()) == [("ADDED", "x", 1)]
    pod = b.create("pods", {"metadata": {"name": "p", "namespace": "d"}})
    assert summary(drain(w)) == []
    assert a.stream_position() == rv(pod) == 2
    w.bookmark()  # the stream has delivered revision 2: nothing for this watch up to it
    [mark] = w.get_nowait()
    assert mark.type == "BOOKMARK" and mark.object["metadata"]["resourceVersion"] == "2"
    # a watch from an older revision replays what the stream logged
    replay = a.watch(CM, resource_version="0")
    assert summary(replay.get_nowait()) == [("ADDED", "x", 1)]
    assert summary(a.watch(CM, resource_version="1").get_nowait()) == []


def test_reads_see_the_other_servers_writes_at_once(pair):
    a, b = pair
    x = b.create(CM, cm("x"))
    assert a.get(CM, "d", "x") == x
    assert a.current_revision() == rv(x)
    listed = a.list(CM)
    assert listed.items == [x] and listed.resource_version == str(rv(x))
    b.delete(CM, "d", "x")
    with pytest.raises(NotFound):
        a.get(CM, "d", "x")
    assert a.list(CM, resource_version=str(rv(x))).items == [x]


# ---- optimistic concurrency across servers ------------------------------------------------


def test_a_compaction_by_the_other_server_is_learned(pair):
    a, b = pair
    for i in range(4):
        a.create(CM, cm(f"o{i}"))
    assert a.list(CM, resource_version="2").resource_version == "2"
    b.compact(3)
    assert a.compacted_revision() == 0  # not told
    with pytest.raises(Expired) as e:
        a.list(CM, resource_version="2")
    assert str(e.value) == "too old resource version: 2 (3)"
    assert a.compacted_revision() == 3
    with pytest.raises(Expired):
        a.watch(CM, resource_version="2")
    assert [e.object["metadata"]["name"] for e in drain(a.watch(CM, resource_version="3"))] == ["o3"]


def test_conflicts_across_servers(pair):
    a, b = pair
    stale = a.create(CM, cm("x"))
    with pytest.raises(AlreadyExists):
        b.create(CM, cm("x"))
    fresh = b.get(CM, "d", "x")
    fresh["data"] = {"k": "b"}
    b.update(CM, fresh)
    stale["data"] = {"k": "a"}
    with pytest.raises(Conflict):
        a.update(CM, stale)
    with pytest.raises(Conflict, match="Precondition failed: ResourceVersion"):
        a.delete(CM, "d", "x",
                 preconditions={"resourceVersion": stale["metadata"]["resourceVersion"]})
    del stale["metadata"]["resourceVersion"]  # unconditional: the last writer wins
    out = a.update(CM, stale)
    assert out["data"] == {"k": "a"} and rv(out) == 3
    assert b.get(CM, "d", "x") == out


def test_a_lost_race_is_retried_from_a_fresh_read(pair, monkeypatch):
    a, b = pair
    a.create(CM, cm("x", k="0"))
    read = a._current
    interleave = []

    def racing_read(resource, namespace, name):
        rec = read(resource, namespace, name)
        if interleave:  # the other server writes between this read and the txn
            interleave.pop()()
        return rec

    def b_writes():
        obj = b.get(CM, "d", "x")
        obj["data"] = {"k": "b"}
        b.update(CM, obj)

    monkeypatch.setattr(a, "_current", racing_read)
    interleave.append(b_writes)
    out = a.update(CM, cm("x", k="a"))  # no resourceVersion: retried on top of b's write
    assert out["data"] == {"k": "a"} and rv(out) == 3 and out["metadata"]["generation"] == 3
    interleave.append(lambda: b.delete(CM, "d", "x"))
    with pytest.raises(NotFound):  # retried: gone
        a.delete(CM, "d", "x")
    # a create needs no read: etcd's txn (create_revision == 0) refuses an existing key
    b.create(CM, cm("y"))
    with pytest.raises(AlreadyExists):
        a.create(CM, cm("y"))


def test_concurrent_read_modify_write_loses_no_update(pair):
    a, b = pair
    a.create(CM, cm("counter", v="0"))
    w = a.watch(CM, resource_version="1")
    rounds = 25

    def increment(store):
        for _ in range(rounds):
            while True:
                obj = store.get(CM, "d", "counter")
                obj["data"]["v"] = str(int(obj["data"]["v"]) + 1)
                try:
                    store.update(CM, obj)
                    break
                except Conflict:
                    continue

    threads = [threading.Thread(target=increment, args=(s,)) for s in (a, b)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    final = a.get(CM, "d", "counter")
    assert final["data"]["v"] == str(2 * rounds)
    events = drain(w)
    assert [e.object["data"]["v"] for e in events] == [str(i) for i in range(1, 2 * rounds + 1)]
    assert [rv(e.object) for e in events] == list(range(2, rv(final) + 1))


def test_history_is_compacted_in_batches_and_followed_by_every_server(endpoint, clock):
    offset = etcd_revision(endpoint)
    prefix = f"/kvert-test/history-{offset}"
    a = etcd_store(endpoint, prefix, offset, clock=clock, history=10, compaction_slack=4)
    b = etcd_store(endpoint, prefix, offset, clock=clock, history=10, compaction_slack=4)
    try:
        obj = a.create(CM, cm("x", v="0"))
        compactions = []
        for i in range(1, 40):
            obj["data"] = {"v": str(i)}
            obj = a.update(CM, obj)
            if not compactions or a.compacted_revision() != compactions[-1]:
                compactions.append(a.compacted_revision())
        assert rv(obj) == 40
        # etcd is compacted only when 10 + 4 revisions have piled up, back to 10
        assert compactions == [0, 5, 10, 15, 20, 25, 30]
        assert not a._readable(offset + 29) and a._readable(offset + 30)  # etcd's compaction
        with pytest.raises(Expired):
            b.list(CM, resource_version="29")
        # b never wrote: it keeps the same window of history as the stream moves on
        assert b.wait_for(40, timeout=10)
        assert b.compacted_revision() == 30
        assert len(b._log) - b._log_start <= 14
        with pytest.raises(Expired):
            b.watch(CM, resource_version=str(b.compacted_revision() - 1))
        since = b.compacted_revision()
        replay = drain(b.watch(CM, resource_version=str(since)))
        assert [rv(e.object) for e in replay] == list(range(since + 1, 41))
    finally:
        a.close()
        b.close()


# ---- restarts ----------------------------------------------------------------------------


def test_a_restarted_store_carries_on(endpoint, clock):
    offset = etcd_revision(endpoint)
    prefix = f"/kvert-test/restart-{offset}"
    s = etcd_store(endpoint, prefix, offset, clock=clock)
    a = s.create(CM, cm("a", labels={"x": "1"}))
    s.create(CM, cm("b"))
    a["data"] = {"k": "2"}
    a = s.update(CM, a)
    s.delete(CM, "d", "b")
    s.create("pods", {"metadata": {"name": "p", "namespace": "d"}})
    before = [(e.type, e.object) for e in drain(s.watch(CM, resource_version="1"))]
    s.compact(2)
    s.close()

    s = etcd_store(endpoint, prefix, offset, clock=clock)
    try:
        assert s.current_revision() == 5 and s.compacted_revision() == 2
        assert s.get(CM, "d", "a") == a
        with pytest.raises(NotFound):
            s.get(CM, "d", "b")
        assert [o["metadata"]["name"] for o in s.list(CM, resource_version="2").items] == ["a", "b"]
        with pytest.raises(Expired):
            s.list(CM, resource_version="1")
        with pytest.raises(Expired):
            s.watch(CM, resource_version="1")
        # history still held by etcd is replayed (the stream catches up after opening)
        assert [(e.type, e.object) for e in drain(s.watch(CM, resource_version="2"))] == before[1:]
        c = s.create(CM, cm("c"))
        assert rv(c) == 6
    finally:
        s.close()
    with open_store(f"etcd://{endpoint.split('://')[1]}{prefix}?revision_offset={offset}",
                    clock=clock) as s:
        assert isinstance(s, EtcdStore) and s.prefix == prefix
        assert [o["metadata"]["name"] for o in s.list(CM).items] == ["a", "c"]


@pytest.mark.skipif(not LocalEtcd.available(), reason=ETCD_MISSING)
def test_etcd_restart():
    with LocalEtcd(tmp_dir=fast_tmp()) as etcd:
        s = EtcdStore(etcd.endpoint, clock=FakeClock(), timeout=10)
        try:
            w = s.watch(CM, resource_version="0")
            first = [s.create(CM, cm(f"o{i}")) for i in range(3)]
            etcd.stop()
            with pytest.raises(InternalError, match="unavailable"):
                s.get(CM, "d", "o0")
            etcd.start()
            later = [s.create(CM, cm(f"n{i}")) for i in range(3)]  # the stream reconnected
            assert [rv(o) for o in first + later] == list(range(rv(first[0]), rv(first[0]) + 6))
            assert [e.object for e in drain(w)] == first + later
            assert [o["metadata"]["name"] for o in s.list(CM).items] == \
                ["n0", "n1", "n2", "o0", "o1", "o2"]
        finally:
            s.close()
        data = etcd.data_dir
    assert not os.path.exists(data)


def test_lost_history_ends_watches_with_expired(endpoint, clock):
    s = etcd_store(endpoint, clock=clock)
    try:
        s.create(CM, cm("a"))

        async def main():
            w = s.watch(CM, resource_version="0")
            assert (await w.next(timeout=5)).type == "ADDED"
            # as the stream thread does when etcd compacted past it while disconnected
            lost = threading.Thread(target=s._lost_history,
                                    args=(s.stream_position() + s._offset + 1,))
            lost.start()
            event = await w.next(timeout=5)
            lost.join()
            assert event.type == ERROR and event.object["code"] == 410
            assert await w.next(timeout=5) is None and w.stopped

        asyncio.run(main())
        assert s.compacted_revision() == 2
        with pytest.raises(Expired):
            s.watch(CM, resource_version="1")
    finally:
        s.close()


def test_open_store_etcd_urls(endpoint):
    with pytest.raises(ValueError):
        open_store("etcd://")
    with pytest.raises(ConnectionError):
        open_store("etcd://127.0.0.1:1", timeout=2)
    with open_store(f"etcd://{endpoint.split('://')[1]}?history=7&compaction_slack=0") as s:
        assert isinstance(s, EtcdStore) and s.prefix == "/registry/kvert"
        assert s._history == 7 and s._slack == 0
