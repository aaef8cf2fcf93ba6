"""The in-memory store: per-object revision histories plus a global change log.

``_objs[resource][namespace][name]`` is the object's history (records in revision order,
the last one its current state or a DELETED tombstone); ``_log`` holds every retained
revision in order, so revision ``r`` sits at ``_log[_log_start + r - compacted - 1]``.
Writes are O(1) (plus watcher fan-out); compaction trims only the histories of the
objects the compacted revisions touched. History beyond ``history`` revisions is
compacted automatically.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable, Iterator

from kvert.clock import Clock
from kvert.store.base import DELETED, BaseStore, Record


def _rev_of(rec: Record) -> int:
    return rec.rev


class MemoryStore(BaseStore):
    def __init__(self, clock: Clock | None = None, history: int | None = 10000,
                 uid_factory: Callable[[], str] | None = None):
        super().__init__(clock, history, uid_factory)
        self._objs: dict[str, dict[str, dict[str, list[Record]]]] = {}
        self._log: list[Record] = []
        self._log_start = 0

    def _current(self, resource: str, namespace: str, name: str) -> Record | None:
        try:
            rec = self._objs[resource][namespace][name][-1]
        except KeyError:
            return None
        return None if rec.type == DELETED else rec

    def _write(self, rec: Record, prev: Record | None, compact_to: int | None) -> None:
        names = self._objs.setdefault(rec.resource, {}).setdefault(rec.namespace, {})
        hist = names.get(rec.name)
        if hist is None:
            names[rec.name] = [rec]
        else:
            hist.append(rec)
        self._log.append(rec)
        if compact_to is not None:
            self._compact(self._compacted, compact_to)

    def _snapshot(self, resource: str, namespace: str | None, rev: int,
                  after: tuple[str, str] | None, hint: int = 0) -> Iterator[Record]:
        by_ns = self._objs.get(resource)
        if not by_ns:
            return
        if namespace is not None:
            spaces = [namespace] if namespace in by_ns else []
        else:
            spaces = sorted(by_ns)
        for ns in spaces:
            if after is not None and ns < after[0]:
                continue
            names = by_ns[ns]
            keys = sorted(names)
            if after is not None and ns == after[0]:
                keys = keys[bisect_right(keys, after[1]):]
            for name in keys:
                hist = names[name]
                rec = hist[-1]
                if rec.rev > rev:
                    i = bisect_right(hist, rev, key=_rev_of)
                    if i == 0:
                        continue
                    rec = hist[i - 1]
                if rec.type != DELETED:
                    yield rec

    def _changes(self, resource: str, after_rev: int) -> Iterator[tuple[Record, Record | None]]:
        start = self._log_start + (after_rev - self._compacted)
        for rec in self._log[start:]:
            if rec.resource == resource:
                yield rec, rec.prev

    def _compact(self, old: int, new: int) -> None:
        start = self._log_start
        end = start + (new - old)
        seen: set[tuple[str, str, str]] = set()
        for rec in self._log[start:end]:
            key = (rec.resource, rec.namespace, rec.name)
            if key not in seen:
                seen.add(key)
                self._trim(rec.resource, rec.namespace, rec.name, new)
        self._log_start = end
        if end > 1024 and end * 2 > len(self._log):
            del self._log[:end]
            self._log_start = 0

    def _trim(self, resource: str, namespace: str, name: str, new: int) -> None:
        """Keep only the object's latest state at ``new`` (none if it was deleted) and later."""
        by_ns = self._objs[resource]
        names = by_ns[namespace]
        hist = names[name]
        i = bisect_right(hist, new, key=_rev_of)
        if i == 0:
            return
        if hist[i - 1].type == DELETED:
            del hist[:i]
        else:
            del hist[:i - 1]
            hist[0].prev = None  # older states are gone; nothing will ask for them
        if not hist:
            del names[name]
            if not names:
                del by_ns[namespace]
                if not by_ns:
                    del self._objs[resource]
