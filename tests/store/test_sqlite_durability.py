"""SqliteStore: acknowledged writes survive SIGKILL; a reopened store carries on."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import textwrap

import pytest

from kvert.api.errors import Expired, NotFound
from kvert.store import MemoryStore, SqliteStore, open_store

CM = "configmaps"


class Clock:
    def __init__(self) -> None:
        self.t = 1767225600.0

    def now(self) -> float:
        return self.t

    async def sleep(self, seconds: float) -> None:
        self.t += seconds


CHILD = textwrap.dedent("""
    import sys
    from kvert.store import SqliteStore

    class Clock:
        def now(self):
            return 1767225600.0

    store = SqliteStore(sys.argv[1], clock=Clock())
    out = sys.stdout
    counter = store.create("configmaps", {"metadata": {"name": "counter", "namespace": "d"},
                                          "data": {"v": "-1"}})
    out.write(f"update counter -1 {counter['metadata']['resourceVersion']}\\n")
    out.flush()
    i = 0
    while True:
        obj = store.create("configmaps", {"metadata": {"name": f"cm-{i}", "namespace": "d"},
                                          "data": {"v": str(i)}})
        out.write(f"create cm-{i} {i} {obj['metadata']['resourceVersion']}\\n")
        out.flush()
        obj = store.update("configmaps", {"metadata": {"name": "counter", "namespace": "d"},
                                          "data": {"v": str(i)}})
        out.write(f"update counter {i} {obj['metadata']['resourceVersion']}\\n")
        out.flush()
        i += 1
""")


def test_acknowledged_writes_survive_sigkill(tmp_path):
    path = str(tmp_path / "crash.db")
    child = subprocess.Popen([sys.executable, "-c", CHILD, path], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
    acks = []
    try:
        assert child.stdout is not None
        for _ in range(400):
            line = child.stdout.readline()
            if not line:
                break
            acks.append(line.split())
        os.kill(child.pid, signal.SIGKILL)
        rest, err = child.communicate(timeout=30)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    assert child.returncode == -signal.SIGKILL, err
    # whatever the child flushed before dying was acknowledged too (a torn last line is not)
    complete = rest.endswith("\n")
    tail = [line.split() for line in rest.splitlines()]
    if tail and not complete:
        tail.pop()
    acks += tail
    assert len(acks) >= 400

    revisions = [int(a[3]) for a in acks]
    assert revisions == sorted(set(revisions)), "acknowledged revisions must strictly increase"

    store = SqliteStore(path, clock=Clock())
    try:
        last_counter = None
        for op, name, value, rev in acks:
            if op == "create":
                obj = store.get(CM, "d", name)
                assert obj["data"] == {"v": value}
                assert obj["metadata"]["resourceVersion"] == rev  # created once, never changed
            else:
                last_counter = (int(value), int(rev))
        counter = store.get(CM, "d", "counter")
        assert last_counter is not None
        assert int(counter["data"]["v"]) >= last_counter[0]
        assert int(counter["metadata"]["resourceVersion"]) >= last_counter[1]

        top = store.current_revision()
        assert top >= revisions[-1]
        # the revision log is gapless and ordered (nothing was compacted)
        db = sqlite3.connect(path)
        count, low, high = db.execute("SELECT count(*), min(rev), max(rev) FROM revisions").fetchone()
        db.close()
        assert (count, low, high) == (top, 1, top)
        # replaying the log from the start gives back every acknowledged write
        replay = store.watch(CM, resource_version="1").get_nowait()
        assert [int(e.object["metadata"]["resourceVersion"]) for e in replay] == list(range(2, top + 1))
        created = store.create(CM, {"metadata": {"name": "after", "namespace": "d"}})
        assert int(created["metadata"]["resourceVersion"]) == top + 1
    finally:
        store.close()


def test_reopen_preserves_objects_revision_and_history(tmp_path):
    path = str(tmp_path / "restart.db")
    clock = Clock()
    store = SqliteStore(path, clock=clock)
    a = store.create(CM, {"metadata": {"name": "a", "namespace": "d", "labels": {"x": "1"}}})
    store.create(CM, {"metadata": {"name": "b", "namespace": "d"}})
    a["data"] = {"k": "v"}
    a = store.update(CM, a)
    store.delete(CM, "d", "b")
    store.create("pods", {"metadata": {"name": "p", "namespace": "d"}})
    before = [(e.type, e.object) for e in store.watch(CM, resource_version="1").get_nowait()]
    store.close()

    store = SqliteStore(path, clock=clock)
    try:
        assert store.current_revision() == 5
        assert store.get(CM, "d", "a") == a
        with pytest.raises(NotFound):
            store.get(CM, "d", "b")
        after = [(e.type, e.object) for e in store.watch(CM, resource_version="1").get_nowait()]
        assert after == before
        assert [o["metadata"]["name"] for o in store.list(CM, resource_version="2").items] == ["a", "b"]
        live = store.watch(CM, resource_version="5")
        c = store.create(CM, {"metadata": {"name": "c", "namespace": "d"}})
        assert c["metadata"]["resourceVersion"] == "6"
        assert [e.type for e in live.get_nowait()] == ["ADDED"]
        store.compact(3)
    finally:
        store.close()

    store = open_store(f"sqlite:{path}", clock=clock)
    try:
        assert store.compacted_revision() == 3
        with pytest.raises(Expired):
            store.watch(CM, resource_version="2")
        assert [e.type for e in store.watch(CM, resource_version="3").get_nowait()] == \
            ["DELETED", "ADDED"]
    finally:
        store.close()


def test_revision_survives_compacting_away_the_last_deletion(tmp_path):
    path = str(tmp_path / "tomb.db")
    store = SqliteStore(path, clock=Clock())
    store.create(CM, {"metadata": {"name": "a", "namespace": "d"}})
    store.delete(CM, "d", "a")
    store.compact(2)
    store.close()
    store = SqliteStore(path, clock=Clock())
    try:
        assert store.current_revision() == 2 and store.compacted_revision() == 2
        assert store.list(CM).items == []
        assert store.create(CM, {"metadata": {"name": "a", "namespace": "d"}})[
            "metadata"]["resourceVersion"] == "3"
    finally:
        store.close()


def test_open_store_urls(tmp_path):
    clock = Clock()
    with open_store("memory", clock=clock) as s:
        assert isinstance(s, MemoryStore)
    with open_store("memory?history=3", clock=clock) as s:
        for i in range(5):
            s.create(CM, {"metadata": {"name": f"o{i}"}})
        assert s.compacted_revision() == 2
    with open_store(f"sqlite://{tmp_path}/x.db", clock=clock) as s:
        assert isinstance(s, SqliteStore) and s.path == f"{tmp_path}/x.db"
        assert s._db.execute("PRAGMA synchronous").fetchone()[0] == 2  # FULL
    with pytest.raises(ValueError):
        open_store("etcd://")  # etcd URLs are tested with an etcd in test_etcd.py
    with pytest.raises(ValueError):
        open_store("redis://localhost:6379")
    with pytest.raises(ValueError):
        open_store("sqlite:")
    db = sqlite3.connect(f"{tmp_path}/x.db")
    assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    db.close()
