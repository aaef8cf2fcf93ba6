"""Fixtures for the store contract suite: every test using ``store`` runs on each backend.

A new backend joins by adding a factory to ``FACTORIES``. The etcd backend runs against
one etcd started for the whole session (on free loopback ports, its data in memory when
/dev/shm exists); each store gets a fresh key prefix and counts revisions from the etcd
revision it was made at, so tests see revisions 1, 2, 3... as on the other backends.
Without an ``etcd`` binary the etcd cases skip.
"""

from __future__ import annotations

import json
import os
import urllib.request
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from kvert.store import EtcdStore, MemoryStore, SqliteStore
from kvert.store.etcd import LocalEtcd
from tests.store.helpers import ETCD_MISSING

START = 1767225600.0  # 2026-01-01T00:00:00Z


class FakeClock:
    """A clock that only moves when told to."""

    def __init__(self, start: float = START):
        self.t = start

    def now(self) -> float:
        return self.t

    def advance(self, seconds: float) -> None:
        self.t += seconds

    async def sleep(self, seconds: float) -> None:
        self.t += seconds


def _memory(tmp: Path, index: int, **kw: Any) -> MemoryStore:
    return MemoryStore(**kw)


def _sqlite(tmp: Path, index: int, **kw: Any) -> SqliteStore:
    return SqliteStore(str(tmp / f"store{index}.db"), **kw)


def etcd_revision(endpoint: str) -> int:
    """etcd's current revision."""
    req = urllib.request.Request(f"{endpoint}/v3/kv/range",
                                 data=b'{"key":"AA==","count_only":true}',
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=10) as resp:
        return int(json.load(resp)["header"]["revision"])


def etcd_store(endpoint: str, prefix: str | None = None, offset: int | None = None,
               **kw: Any) -> EtcdStore:
    """A store on a fresh prefix (or ``prefix``) whose revisions count from ``offset``
    (default: etcd's revision now, so a fresh prefix starts at 0)."""
    kw.setdefault("compaction_slack", 0)  # compact exactly as the local backends do
    return EtcdStore(endpoint, prefix=prefix or f"/kvert-test/{uuid.uuid4().hex[:12]}",
                     revision_offset=etcd_revision(endpoint) if offset is None else offset, **kw)


def _etcd(tmp: Path, index: int, *, endpoint: str, **kw: Any) -> EtcdStore:
    return etcd_store(endpoint, **kw)


FACTORIES: dict[str, Callable[..., Any]] = {"memory": _memory, "sqlite": _sqlite, "etcd": _etcd}


def fast_tmp() -> str | None:
    """Where a test etcd keeps its data: memory (/dev/shm) when possible."""
    return "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else None


@pytest.fixture(scope="session")
def etcd_server() -> Iterator[LocalEtcd]:
    """One etcd for the session (skips the test when etcd is not installed)."""
    if not LocalEtcd.available():
        pytest.skip(ETCD_MISSING)
    server = LocalEtcd(tmp_dir=fast_tmp())
    try:
        server.start()
        yield server
    finally:
        server.close()


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture(params=sorted(FACTORIES))
def make_store(request, tmp_path, clock):
    """``make_store(history=..., clock=...)``: a fresh store of the parametrized backend."""
    made: list[Any] = []
    if request.param == "etcd":
        endpoint = request.getfixturevalue("etcd_server").endpoint

    def make(**kw: Any) -> Any:
        kw.setdefault("clock", clock)
        kw.setdefault("history", 10000)
        if request.param == "etcd":
            kw["endpoint"] = endpoint
        store = FACTORIES[request.param](tmp_path, len(made), **kw)
        made.append(store)
        return store

    make.backend = request.param  # type: ignore[attr-defined]
    yield make
    for store in made:
        store.close()


@pytest.fixture
def store(make_store):
    return make_store()
