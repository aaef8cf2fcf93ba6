"""The SQLite store: one file, every write one durable transaction.

Schema::

    revisions(rev PRIMARY KEY, resource, namespace, name, event_type, object, prev_rev)
        every retained revision; object is the JSON with resourceVersion = rev
    current(resource, namespace, name, rev)       the live objects (PRIMARY KEY the key)
    meta(key, value)                              'compacted': the compaction point

WAL journal with ``synchronous=FULL``: a write that returned survives a crash or power
loss. Reopening the file continues the revision sequence, and watches from any revision
still retained replay from ``revisions``. Watchers are in-process, fed by this instance's
writes, so one store instance should own the file.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable, Iterator
from typing import Any

from kvert.api.errors import InternalError
from kvert.clock import Clock
from kvert.store.base import DELETED, BaseStore, Record, storable

_SCHEMA = """
CREATE TABLE IF NOT EXISTS revisions (
    rev INTEGER PRIMARY KEY,
    resource TEXT NOT NULL,
    namespace TEXT NOT NULL,
    name TEXT NOT NULL,
    event_type TEXT NOT NULL,
    object TEXT NOT NULL,
    prev_rev INTEGER
);
CREATE INDEX IF NOT EXISTS revisions_by_key ON revisions (resource, namespace, name, rev);
CREATE TABLE IF NOT EXISTS current (
    resource TEXT NOT NULL,
    namespace TEXT NOT NULL,
    name TEXT NOT NULL,
    rev INTEGER NOT NULL,
    PRIMARY KEY (resource, namespace, name)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS meta (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
INSERT OR IGNORE INTO meta (key, value) VALUES ('schema', '1'), ('compacted', '0');
"""

# Each key touched by revisions in (old, new]: drop its records at or below its latest
# one in that range, and that latest one too if it is a deletion.
_COMPACT = """
DELETE FROM revisions WHERE rev IN (
    SELECT r.rev FROM (
        SELECT resource, namespace, name, max(rev) AS last FROM revisions
        WHERE rev > :old AND rev <= :new GROUP BY resource, namespace, name
    ) AS k
    JOIN revisions AS r
      ON r.resource = k.resource AND r.namespace = k.namespace AND r.name = k.name
     AND r.rev <= k.last
    WHERE r.rev < k.last OR r.event_type = 'DELETED'
)
"""

_SYNC_MODES = ("OFF", "NORMAL", "FULL", "EXTRA")


def _owner_only(path: str, *, create: bool = True) -> None:
    """Make ``path`` readable and writable by its owner only (0600, whatever the umask):
    the store holds every object, Secrets and tokens too."""
    if create:
        os.close(os.open(path, os.O_CREAT | os.O_RDWR, 0o600))
    elif not os.path.exists(path):
        return
    os.chmod(path, 0o600)


class SqliteStore(BaseStore):
    """``synchronous`` may be lowered (e.g. "OFF" for throwaway test files); FULL is the
    durable default."""

    def __init__(self, path: str, clock: Clock | None = None, history: int | None = 100_000,
                 uid_factory: Callable[[], str] | None = None, synchronous: str = "FULL"):
        super().__init__(clock, history, uid_factory)
        sync = synchronous.upper()
        if sync not in _SYNC_MODES:
            raise ValueError(f"synchronous must be one of {', '.join(_SYNC_MODES)}")
        self.path = str(path)
        if self.path != ":memory:":
            _owner_only(self.path)
        db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        self._db = db
        try:
            mode = db.execute("PRAGMA journal_mode=WAL").fetchone()[0]
            if str(mode).lower() != "wal" and self.path != ":memory:":
                raise sqlite3.OperationalError(f"cannot use WAL journal mode (got {mode})")
            if self.path != ":memory:":
                # SQLite gives the WAL and shared-memory files the database's mode; made sure
                for suffix in ("-wal", "-shm"):
                    _owner_only(self.path + suffix, create=False)
            db.execute(f"PRAGMA synchronous={sync}")
            db.execute("PRAGMA busy_timeout=5000")
            db.execute("BEGIN IMMEDIATE")
            for statement in _SCHEMA.split(";"):
                if statement.strip():
                    db.execute(statement)
            db.execute("COMMIT")
            compacted = int(db.execute(
                "SELECT value FROM meta WHERE key = 'compacted'").fetchone()[0])
            last = db.execute("SELECT max(rev) FROM revisions").fetchone()[0] or 0
        except BaseException:
            db.close()
            raise
        self._compacted = compacted
        self._rev = max(last, compacted)

    # ---- hooks ------------------------------------------------------------------------

    def _current(self, resource: str, namespace: str, name: str) -> Record | None:
        row = self._db.execute(
            "SELECT r.rev, r.event_type, r.object FROM current AS c "
            "JOIN revisions AS r ON r.rev = c.rev "
            "WHERE c.resource = ? AND c.namespace = ? AND c.name = ?",
            (resource, storable(namespace), storable(name))).fetchone()
        if row is None:
            return None
        return Record(row[0], resource, namespace, name, row[1], row[2])

    def _write(self, rec: Record, prev: Record | None, compact_to: int | None) -> None:
        db = self._db
        db.execute("BEGIN IMMEDIATE")
        try:
            db.execute("INSERT INTO revisions (rev, resource, namespace, name, event_type, object,"
                       " prev_rev) VALUES (?, ?, ?, ?, ?, ?, ?)",
                       (rec.rev, rec.resource, rec.namespace, rec.name, rec.type, rec.raw,
                        prev.rev if prev is not None else None))
            if rec.type == DELETED:
                db.execute("DELETE FROM current WHERE resource = ? AND namespace = ? AND name = ?",
                           (rec.resource, rec.namespace, rec.name))
            else:
                db.execute("INSERT OR REPLACE INTO current (resource, namespace, name, rev) "
                           "VALUES (?, ?, ?, ?)", (rec.resource, rec.namespace, rec.name, rec.rev))
            if compact_to is not None:
                self._compact_in_txn(self._compacted, compact_to)
            db.execute("COMMIT")
        except sqlite3.Error as e:
            self._rollback()
            raise InternalError(f"storage error: {e}") from e
        except BaseException:
            self._rollback()
            raise

    def _snapshot(self, resource: str, namespace: str | None, rev: int,
                  after: tuple[str, str] | None, hint: int = 0) -> Iterator[Record]:
        where, args = self._range("x", resource, namespace, after)
        if rev >= self._rev:
            sql = ("SELECT x.rev, x.namespace, x.name, r.event_type, r.object FROM current AS x "
                   "JOIN revisions AS r ON r.rev = x.rev "
                   f"WHERE {where} ORDER BY x.namespace, x.name")
        else:
            sql = ("SELECT x.rev, x.namespace, x.name, x.event_type, x.object FROM revisions AS x "
                   f"WHERE {where} AND x.rev <= ? AND NOT EXISTS ("
                   "  SELECT 1 FROM revisions AS y WHERE y.resource = x.resource"
                   "  AND y.namespace = x.namespace AND y.name = x.name"
                   "  AND y.rev > x.rev AND y.rev <= ?) "
                   "AND x.event_type != 'DELETED' ORDER BY x.namespace, x.name")
            args += [rev, rev]
        for row in self._db.execute(sql, args):
            yield Record(row[0], resource, row[1], row[2], row[3], row[4])

    def _count(self, resource: str, namespace: str | None, rev: int,
               after: tuple[str, str] | None) -> int:
        where, args = self._range("x", resource, namespace, after)
        if rev >= self._rev:
            sql = f"SELECT count(*) FROM current AS x WHERE {where}"
        else:
            sql = ("SELECT count(*) FROM revisions AS x "
                   f"WHERE {where} AND x.rev <= ? AND NOT EXISTS ("
                   "  SELECT 1 FROM revisions AS y WHERE y.resource = x.resource"
                   "  AND y.namespace = x.namespace AND y.name = x.name"
                   "  AND y.rev > x.rev AND y.rev <= ?) AND x.event_type != 'DELETED'")
            args += [rev, rev]
        return int(self._db.execute(sql, args).fetchone()[0])

    def _changes(self, resource: str, after_rev: int) -> Iterator[tuple[Record, Record | None]]:
        rows = self._db.execute(
            "SELECT r.rev, r.namespace, r.name, r.event_type, r.object, p.rev, p.event_type,"
            " p.object FROM revisions AS r "
            "LEFT JOIN revisions AS p ON p.rev = r.prev_rev AND r.event_type = 'MODIFIED' "
            # "+r.resource": walk the revision range, not every revision of the resource
            "WHERE r.rev > ? AND +r.resource = ? ORDER BY r.rev", (after_rev, resource)).fetchall()
        for rev, ns, name, kind, raw, prev_rev, prev_kind, prev_raw in rows:
            prev = None
            if prev_rev is not None:
                prev = Record(prev_rev, resource, ns, name, prev_kind, prev_raw)
            yield Record(rev, resource, ns, name, kind, raw), prev

    def _compact(self, old: int, new: int) -> None:
        db = self._db
        db.execute("BEGIN IMMEDIATE")
        try:
            self._compact_in_txn(old, new)
            db.execute("COMMIT")
        except BaseException:
            self._rollback()
            raise

    def _close(self) -> None:
        self._db.close()

    # ---- helpers ----------------------------------------------------------------------

    def _compact_in_txn(self, old: int, new: int) -> None:
        self._db.execute(_COMPACT, {"old": old, "new": new})
        self._db.execute("UPDATE meta SET value = ? WHERE key = 'compacted'", (str(new),))

    def _rollback(self) -> None:
        try:
            self._db.execute("ROLLBACK")
        except sqlite3.Error:
            pass

    @staticmethod
    def _range(t: str, resource: str, namespace: str | None,
               after: tuple[str, str] | None) -> tuple[str, list[Any]]:
        where = [f"{t}.resource = ?"]
        args: list[Any] = [resource]
        if namespace is not None:
            where.append(f"{t}.namespace = ?")
            args.append(storable(namespace))
        if after is not None:
            where.append(f"({t}.namespace, {t}.name) > (?, ?)")
            args += [storable(key) for key in after]
        return " AND ".join(where), args
