"""Versioned object store with watch: the etcd3 + kube-apiserver storage semantics.

``open_store("memory")`` or ``open_store("sqlite:/path/to/file.db")``; every backend
implements ``Store`` (see ``kvert.store.base``) with identical behaviour.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qsl

from kvert.store.base import (ADDED, BOOKMARK, DELETED, ERROR, INITIAL_EVENTS_END, MODIFIED,
                              BaseStore, ListResult, Store, Watch, WatchEvent)
from kvert.store.memory import MemoryStore
from kvert.store.sqlite import SqliteStore

__all__ = [
    "ADDED", "BOOKMARK", "DELETED", "ERROR", "INITIAL_EVENTS_END", "MODIFIED",
    "BaseStore", "ListResult", "MemoryStore", "SqliteStore", "Store", "Watch", "WatchEvent",
    "open_store",
]


def open_store(url: str, clock: Any = None, **options: Any) -> BaseStore:
    """A store from a URL: ``memory`` or ``sqlite:PATH`` (also ``sqlite://PATH``).

    Options may follow a ``?`` (``memory?history=100``) or be given as keyword arguments
    (``history``, ``uid_factory``; ``synchronous`` for sqlite).
    """
    base, _, query = url.partition("?")
    opts: dict[str, Any] = {}
    for key, value in parse_qsl(query, keep_blank_values=True):
        opts[key] = int(value) if key == "history" else value
    opts.update(options)
    scheme, _, rest = base.partition(":")
    if scheme == "memory" and not rest:
        return MemoryStore(clock=clock, **opts)
    if scheme == "sqlite":
        path = rest[2:] if rest.startswith("//") else rest
        if not path:
            raise ValueError(f"store URL {url!r} names no file: use sqlite:PATH")
        return SqliteStore(path, clock=clock, **opts)
    raise ValueError(f"unknown store URL {url!r}: use 'memory' or 'sqlite:PATH'")
