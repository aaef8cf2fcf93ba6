"""Fixtures for the store contract suite: every test using ``store`` runs on each backend.

A new backend joins by adding a factory to ``FACTORIES``.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from kvert.store import MemoryStore, SqliteStore

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


FACTORIES: dict[str, Callable[..., Any]] = {"memory": _memory, "sqlite": _sqlite}


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture(params=sorted(FACTORIES))
def make_store(request, tmp_path, clock):
    """``make_store(history=..., clock=...)``: a fresh store of the parametrized backend."""
    made: list[Any] = []

    def make(**kw: Any) -> Any:
        kw.setdefault("clock", clock)
        kw.setdefault("history", 10000)
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
