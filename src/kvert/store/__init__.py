"""Versioned object store with watch: the etcd3 + kube-apiserver storage semantics.

``open_store("memory")``, ``open_store("sqlite:/path/to/file.db")`` or
``open_store("etcd://127.0.0.1:2379")``; every backend implements ``Store`` (see
``kvert.store.base``) with identical behaviour (``kvert.store.etcd`` lists what etcd's
shared, cluster-wide revisions change).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qsl

from kvert.clock import Clock
from kvert.store.base import (
    ADDED,
    BOOKMARK,
    DELETED,
    ERROR,
    INITIAL_EVENTS_END,
    MODIFIED,
    BaseStore,
    ListResult,
    Store,
    Watch,
    WatchEvent,
)
from kvert.store.etcd import EtcdStore
from kvert.store.memory import MemoryStore
from kvert.store.sqlite import SqliteStore

__all__ = [
    "ADDED", "BOOKMARK", "DELETED", "ERROR", "INITIAL_EVENTS_END", "MODIFIED",
    "BaseStore", "EtcdStore", "ListResult", "MemoryStore", "SqliteStore", "Store", "Watch",
    "WatchEvent",
    "open_store",
]


def open_store(url: str, clock: Clock | None = None, **options: Any) -> BaseStore:
    """A store from a URL: ``memory``, ``sqlite:PATH`` (also ``sqlite://PATH``) or
    ``etcd://HOST:PORT[/PREFIX]`` (etcd's client URL; the key prefix defaults to
    ``/registry/kvert``).

    Options may follow a ``?`` (``memory?history=100``) or be given as keyword arguments
    (``history``, ``uid_factory``; ``synchronous`` for sqlite; ``prefix``,
    ``revision_offset``, ``compaction_slack``, ``timeout`` for etcd).
    """
    base, _, query = url.partition("?")
    opts: dict[str, Any] = {}
    for key, value in parse_qsl(query, keep_blank_values=True):
        if key in ("history", "revision_offset", "compaction_slack"):
            opts[key] = int(value)
        elif key == "timeout":
            opts[key] = float(value)
        else:
            opts[key] = value
    opts.update(options)
    scheme, _, rest = base.partition(":")
    if scheme == "memory" and not rest:
        return MemoryStore(clock=clock, **opts)
    if scheme == "sqlite":
        path = rest[2:] if rest.startswith("//") else rest
        if not path:
            raise ValueError(f"store URL {url!r} names no file: use sqlite:PATH")
        return SqliteStore(path, clock=clock, **opts)
    if scheme == "etcd":
        host, slash, prefix = rest[2:].partition("/") if rest.startswith("//") else ("", "", "")
        if not host:
            raise ValueError(f"store URL {url!r} names no etcd: use etcd://HOST:PORT")
        if slash and prefix:
            opts.setdefault("prefix", "/" + prefix)
        return EtcdStore(f"http://{host}", clock=clock, **opts)
    raise ValueError(f"unknown store URL {url!r}: use 'memory', 'sqlite:PATH' or "
                     "'etcd://HOST:PORT'")
