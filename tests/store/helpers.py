"""Helpers shared by the store tests."""

from __future__ import annotations

from typing import Any

from kvert.store import WatchEvent

ETCD_MISSING = "etcd not installed (scripts/setup --test installs it)"


def drain(watch: Any, timeout: float = 5.0) -> list[WatchEvent]:
    """Every event the watch has by now: at once for the local backends; for a store fed
    by a change stream (etcd), once the stream has delivered the current revision (a
    store's own writes are there when they return; this covers other writers)."""
    store = watch._store
    wait_for = getattr(store, "wait_for", None)
    if wait_for is not None and not store.closed:
        wait_for(store.current_revision(), timeout)
    return watch.get_nowait()
