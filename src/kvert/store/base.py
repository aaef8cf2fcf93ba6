"""The store protocol and everything backends share: the etcd3 + kube-apiserver semantics.

A store keeps JSON objects under (resource, namespace, name) with one store-wide,
monotonically increasing revision (etcd's): every write is one new revision, and an
object's ``metadata.resourceVersion`` is the revision of its last write. Backends only
persist revisions and answer snapshot and history queries (the ``_``-prefixed hooks of
``BaseStore``); metadata handling, optimistic concurrency, generation, graceful deletion
and finalizers, selector filtering, pagination tokens and watch fan-out live here, once.

In the local backends (memory, sqlite) watches are fed synchronously by the write that
makes the change, in revision order, so they need no threads: a consumer drains them with
``get_nowait()`` or awaits ``next()`` in the asyncio loop the store is written from (a
virtual-time loop works the same). A backend shared by several processes (etcd) feeds its
watches from the database's own change stream instead: it overrides ``_feed`` (what a
write does for the watches after persisting), ``_subscribe`` (how a new watch joins the
stream) and ``_make_watch``, and reports lost optimistic-concurrency races with
``WriteRaced`` so the operation is retried against the fresh state.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import functools
import json
import random
import re
import uuid
from collections import deque
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Concatenate, ParamSpec, Protocol, TypeVar, runtime_checkable

import orjson

from kvert.api.errors import AlreadyExists, BadRequest, Conflict, Expired, NotFound, Timeout
from kvert.api.fields import parse_field_selector
from kvert.api.kinds import by_key
from kvert.api.meta import format_time, parse_time
from kvert.api.selectors import SelectorError, parse_label_selector

# Re-exported: backends and their callers name objects by this alias.
from kvert.api.types import Obj as Obj
from kvert.clock import Clock, WallClock

ADDED = "ADDED"
MODIFIED = "MODIFIED"
DELETED = "DELETED"
BOOKMARK = "BOOKMARK"
ERROR = "ERROR"

INITIAL_EVENTS_END = "k8s.io/initial-events-end"

CONFLICT_MESSAGE = ("the object has been modified; please apply your changes to the latest "
                    "version and try again")
CONTINUE_EXPIRED_MESSAGE = (
    "The provided continue parameter is too old to display a consistent list result. You can "
    "start a new list without the continue parameter, or use the continue token in this "
    "response to retrieve the remainder of the results. Continuing with the provided token "
    "results in an inconsistent list - objects that were created, modified, or deleted between "
    "the time the first chunk was returned and now may show up in the list.")

_CONTINUE_VERSION = "meta.k8s.io/v1"

# The order Kubernetes serializes ObjectMeta in; writes put metadata keys in this order so
# stored objects read the way kubectl users know them.
_META_ORDER = ("name", "generateName", "namespace", "selfLink", "uid", "resourceVersion",
               "generation", "creationTimestamp", "deletionTimestamp",
               "deletionGracePeriodSeconds", "labels", "annotations", "ownerReferences",
               "finalizers", "managedFields")
_META_KNOWN = frozenset(_META_ORDER)
# Set by the store, never by a client update.
_SET_ONCE = ("uid", "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds")

_dumps = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False, check_circular=False).encode
_SURROGATE = re.compile("[\ud800-\udfff]")


def storable(text: str) -> str:
    """``text`` with lone surrogates (which UTF-8 cannot encode, so neither SQLite nor etcd
    can keep) as U+FFFD, as Go's encoder writes invalid UTF-16."""
    return text if text.isascii() else _SURROGATE.sub("\ufffd", text)


def encode(obj: Obj) -> str:
    """An object's stored JSON text. orjson writes it (every write is encoded once and
    decoded by each reader); what orjson refuses -- lone surrogates, integers beyond 64
    bits -- takes the standard library's path."""
    try:
        return orjson.dumps(obj).decode()
    except (TypeError, orjson.JSONEncodeError):
        return storable(_dumps(obj))


def _loads(text: str | bytes) -> Any:
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        return json.loads(text)   # NaN, Infinity and big integers, which orjson refuses

# A delete's preconditions: ``uid`` and/or ``resourceVersion`` the stored object must have.
Preconditions = dict[str, Any]
# (``list`` would name the store's method inside its class.)
Finalizers = list[str]
P = ParamSpec("P")
R = TypeVar("R")
# (field, getter, value) of a selector's ``field=value`` term: the store routes a write only
# to the watches whose getter reads the value from it.
Route = tuple[str, Callable[[Mapping[str, Any]], str], str]


def seeded_uids(seed: int | str) -> Callable[[], str]:
    """A ``uid_factory`` of version-4 UUIDs drawn from a generator seeded with ``seed``: a
    simulation's uids repeat with its seed, and no system call is made per object (``uuid4``
    reads the kernel's entropy for each)."""
    rng = random.Random(f"uids:{seed}")

    def new() -> str:
        return str(uuid.UUID(int=rng.getrandbits(128), version=4))   # sets the version and variant
    return new


# ---- public value types ---------------------------------------------------------------


@dataclass(frozen=True)
class WatchEvent:
    type: str  # ADDED | MODIFIED | DELETED | BOOKMARK | ERROR
    object: Obj


@dataclass
class ListResult:
    items: list[Obj]
    resource_version: str
    continue_token: str = ""
    remaining_item_count: int | None = None


@runtime_checkable
class Store(Protocol):
    def create(self, resource: str, obj: Obj, *, uid: str = "") -> Obj: ...

    def new_uid(self) -> str: ...

    def get(self, resource: str, namespace: str, name: str) -> Obj: ...

    def update(self, resource: str, obj: Obj) -> Obj: ...

    def delete(self, resource: str, namespace: str, name: str, *, grace_period_seconds: int | None = 0,
               preconditions: Preconditions | None = None, finalizers: Finalizers | None = None,
               mark: Callable[[Obj], None] | None = None) -> tuple[Obj, bool]: ...

    def list(self, resource: str, *, namespace: str | None = None, label_selector: str = "",
             field_selector: str = "", limit: int = 0, continue_token: str = "",
             resource_version: str = "") -> ListResult: ...

    def watch(self, resource: str, *, namespace: str | None = None, label_selector: str = "",
              field_selector: str = "", resource_version: str = "",
              send_initial_events: bool = False, allow_bookmarks: bool = False) -> Watch: ...

    def current_revision(self) -> int: ...

    def compact(self, revision: int) -> None: ...

    def close(self) -> None: ...


# ---- stored revisions -----------------------------------------------------------------


class Record:
    """One revision: the write of one object. Never mutated once made (``prev`` aside).

    Only the JSON (``raw``, with ``metadata.resourceVersion == str(rev)``) is kept: it is
    immutable, so every get and list decodes its own copy, and a store of JSON strings costs
    far less memory and garbage-collector time than one of nested dicts. For DELETED the
    object is the last stored state with the deletion's revision, as etcd3/kube-apiserver
    report it. ``prev`` (memory backend only) is the record this one replaced.

    ``stamp``: when set, ``raw`` does not carry the revision (etcd stores objects without
    it, as kube-apiserver does: it is the key's mod_revision) and every decoded copy gets
    ``metadata.resourceVersion = stamp``.

    ``shared()``: the one decoded object the watches following the store are handed for
    this revision (decoded on first use, released when a newer revision replaces it; a
    released record decodes a copy per call): N watches of a resource cost one decode, and
    their informers' caches hold one object, not N. Whoever takes it must never change it
    (see ``Watch``). The store only reads it: to compare a write with the current state
    and to route watch events.
    """

    __slots__ = ("rev", "resource", "namespace", "name", "type", "raw", "prev", "stamp",
                 "_shared")

    def __init__(self, rev: int, resource: str, namespace: str, name: str, type: str, raw: str,
                 prev: Record | None = None, stamp: str | None = None):
        self.rev = rev
        self.resource = resource
        self.namespace = namespace
        self.name = name
        self.type = type
        self.raw = raw
        self.prev = prev
        self.stamp = stamp
        self._shared: Obj | None | bool = None    # False once released

    @property
    def obj(self) -> Obj:
        """A fresh decoded copy (not cached: decode once and keep it where needed)."""
        obj: Obj = _loads(self.raw)
        if self.stamp is not None:
            obj["metadata"]["resourceVersion"] = self.stamp
        return obj

    def copy(self) -> Obj:
        obj: Obj = _loads(self.raw)
        if self.stamp is not None:
            obj["metadata"]["resourceVersion"] = self.stamp
        return obj

    def shared(self) -> Obj:
        obj = self._shared
        if isinstance(obj, dict):
            return obj
        if obj is None:
            self._shared = obj = self.copy()
            return obj
        return self.copy()   # released

    def release(self) -> None:
        self._shared = False

    def __repr__(self) -> str:
        return f"Record({self.rev}, {self.type}, {self.resource}, {self.namespace}/{self.name})"


# What a watch queues: (type, record, resourceVersion override or None), decoded only when
# taken, or a ready WatchEvent.
Queued = WatchEvent | tuple[str, Record, str | None]


# ---- the shared store -----------------------------------------------------------------


class WriteRaced(Exception):
    """Raised by ``_persist`` when the stored state changed since it was read (another
    writer won an optimistic-concurrency race): the operation is retried from the read."""


_MAX_RACES = 100


class BaseStore:
    """Store semantics over a backend's revision log. Subclasses implement the hooks.

    ``history``: how many revisions to keep; older ones are compacted automatically as
    writes go on (None or 0 keeps everything until ``compact``). ``uid_factory`` makes
    ``metadata.uid`` (uuid4 by default; a seeded one makes simulations reproducible).
    """

    # False where ``_persist`` itself refuses to create over an existing object (raising
    # AlreadyExists), saving a read: etcd's create is a txn on create_revision == 0.
    _read_before_create = True
    # True where other processes may write the same backend (etcd): its history is theirs too
    shared = False

    def __init__(self, clock: Clock | None = None, history: int | None = 10000,
                 uid_factory: Callable[[], str] | None = None) -> None:
        self.clock: Clock = clock if clock is not None else WallClock()
        self._history = history if history and history > 0 else None
        self._uid = uid_factory or (lambda: str(uuid.uuid4()))
        self._rev = 0
        self._compacted = 0
        # resource -> watches in registration order (a dict for O(1) removal; ordered, so
        # waiters wake in a reproducible order)
        self._watchers: dict[str, dict[Watch, None]] = {}
        # the local backends' fan-out: watches with a ``field=value`` selector (every node
        # agent's spec.nodeName=NODE) by resource, field and value, so a write is offered to
        # the few watches it can concern, not to every node's
        self._unrouted: dict[str, dict[Watch, None]] = {}
        self._routed: dict[str, dict[str, tuple[Callable[[Obj], str], dict[str, dict[Watch, None]]]]] = {}
        self._closed = False

    # ---- backend hooks ----------------------------------------------------------------

    def _current(self, resource: str, namespace: str, name: str) -> Record | None:
        """The live record of an object, or None."""
        raise NotImplementedError

    def _write(self, rec: Record, prev: Record | None, compact_to: int | None) -> None:
        """Persist one revision atomically (and compact to ``compact_to`` in the same step)."""
        raise NotImplementedError

    def _snapshot(self, resource: str, namespace: str | None, rev: int,
                  after: tuple[str, str] | None, hint: int = 0) -> Iterator[Record]:
        """Objects live at revision ``rev``, sorted by (namespace, name), keys > ``after``.
        ``hint``: how many the caller expects to take (0: all), for backends that page."""
        raise NotImplementedError

    def _count(self, resource: str, namespace: str | None, rev: int,
               after: tuple[str, str] | None) -> int:
        return sum(1 for _ in self._snapshot(resource, namespace, rev, after))

    def _changes(self, resource: str, after_rev: int) -> Iterator[tuple[Record, Record | None]]:
        """Every retained change of ``resource`` after ``after_rev``, in revision order, with
        the record it replaced (needed for MODIFIED only)."""
        raise NotImplementedError

    def _compact(self, old: int, new: int) -> None:
        """Forget history in (old, new] except each object's latest state at ``new``."""
        raise NotImplementedError

    def _close(self) -> None:
        pass

    def _persist(self, resource: str, namespace: str, name: str, type: str, obj: Obj,
                 prev: Record | None) -> Record:
        """Store ``obj`` (ours to change at the top and in metadata) as the next revision of
        the object, ``prev`` being the record it replaces (None for ADDED), and return the
        new record. The local backends number revisions here and persist with ``_write``;
        a backend whose database numbers them (etcd) overrides this, raising WriteRaced
        when ``prev`` is no longer current."""
        rev = self._rev + 1
        obj["metadata"]["resourceVersion"] = str(rev)
        try:
            raw = encode(obj)
        except (TypeError, ValueError, RecursionError) as e:
            raise BadRequest(f"the object is not valid JSON: {e}") from None
        rec = Record(rev, resource, namespace, name, type, raw, prev if type != ADDED else None)
        compact_to = None
        if self._history is not None and rev - self._compacted > self._history:
            compact_to = rev - self._history
        self._write(rec, prev, compact_to)
        self._rev = rev
        if compact_to is not None:
            self._compacted = compact_to
        return rec

    def _feed(self, rec: Record, prev: Record | None, obj: Obj | None,
              prev_obj: Obj | None) -> None:
        """After a write: queue its event on the watches, synchronously (local backends)."""
        watchers = self._unrouted.get(rec.resource)
        if watchers:
            for w in watchers:
                w._offer(rec, prev, obj, prev_obj)
        routed = self._routed.get(rec.resource)
        if not routed:
            return
        if obj is None:
            obj = rec.shared()       # read only (matched)
        if prev_obj is None and prev is not None and rec.type == MODIFIED:
            prev_obj = prev.shared()
        for get, by_value in routed.values():
            value = _route_value(get, obj)
            before = _route_value(get, prev_obj) if prev_obj is not None else value
            for v in (value,) if before == value else (value, before):
                if v is None:   # an odd shape no routed watch can match
                    continue
                for w in by_value.get(v, ()):
                    w._offer(rec, prev, obj, prev_obj)

    def _make_watch(self, resource: str, namespace: str | None, match: Match | None,
                    allow_bookmarks: bool) -> Watch:
        return Watch(self, resource, namespace, match, allow_bookmarks)

    def _subscribe(self, w: Watch, after: int, replay: bool) -> None:
        """Start feeding ``w`` every change after revision ``after`` (replaying retained
        history first when ``replay``; otherwise ``after`` is the current revision)."""
        if replay:
            for rec, prev in self._changes(w.resource, after):
                w._offer(rec, prev)
        self._watchers.setdefault(w.resource, {})[w] = None
        route = w._match.route if w._match is not None else None
        if route is None:
            self._unrouted.setdefault(w.resource, {})[w] = None
        else:
            field, get, value = route
            by_field = self._routed.setdefault(w.resource, {})
            by_field.setdefault(field, (get, {}))[1].setdefault(value, {})[w] = None

    def _retrying(self, op: Callable[Concatenate[str, P], R], resource: str, *args: P.args,
                  **kwargs: P.kwargs) -> R:
        for _ in range(_MAX_RACES):
            try:
                return op(resource, *args, **kwargs)
            except WriteRaced:
                continue
        raise Conflict(resource, "", "too many concurrent writes to the object; try again")

    # ---- reads ------------------------------------------------------------------------

    def current_revision(self) -> int:
        return self._rev

    def compacted_revision(self) -> int:
        """The oldest revision still readable: list and watch at older ones are Expired."""
        return self._compacted

    def get(self, resource: str, namespace: str, name: str) -> Obj:
        self._check_open()
        rec = self._current(resource, namespace or "", name)
        if rec is None:
            raise NotFound(resource, name)
        return rec.copy()

    def peek(self, resource: str, namespace: str, name: str) -> Obj:
        """The stored object, shared with the watches (``Record.shared``): read it, never
        change it -- an admission check's lister (the namespace of every write)."""
        self._check_open()
        rec = self._current(resource, namespace or "", name)
        if rec is None:
            raise NotFound(resource, name)
        return rec.shared()

    def list(self, resource: str, *, namespace: str | None = None, label_selector: str = "",
             field_selector: str = "", limit: int = 0, continue_token: str = "",
             resource_version: str = "") -> ListResult:
        self._check_open()
        match = self._matcher(resource, label_selector, field_selector)
        after: tuple[str, str] | None = None
        if continue_token:
            if resource_version not in ("", "0"):
                raise BadRequest("specifying resource version is not allowed when using continue")
            rev, after = decode_continue(continue_token)
            if rev < self._compacted:
                raise Expired(CONTINUE_EXPIRED_MESSAGE)
            self._check_not_too_large(rev)
        else:
            rev = self._read_revision(resource_version)
        limit = max(0, int(limit or 0))
        items: list[Obj] = []
        last: Record | None = None
        more = False
        records = self._snapshot(resource, namespace, rev, after, limit + 1 if limit else 0)
        try:
            for rec in records:
                if limit and len(items) >= limit:
                    more = True
                    break
                if match is None:
                    items.append(rec.copy())
                    last = rec
                else:
                    obj = rec.copy()
                    if match(obj):
                        items.append(obj)
                        last = rec
        finally:
            close = getattr(records, "close", None)
            if close is not None:
                close()
        token, remaining = "", None
        if more and last is not None:
            key = (last.namespace, last.name)
            token = encode_continue(rev, *key)
            if match is None:
                remaining = self._count(resource, namespace, rev, key)
        return ListResult(items, str(rev), token, remaining)

    # ---- writes -----------------------------------------------------------------------

    def new_uid(self) -> str:
        """A uid for an object about to be created, for a registry whose strategy must name
        it before the write (a Job's generated selector)."""
        return self._uid()

    def create(self, resource: str, obj: Obj, *, uid: str = "") -> Obj:
        """Store a new object; ``uid``: one :meth:`new_uid` gave, else a fresh one."""
        self._check_open()
        return self._retrying(self._create, resource, obj, uid)

    def _create(self, resource: str, obj: Obj, uid: str = "") -> Obj:
        new, md = _copy_in(obj)
        name = md.get("name")
        if not name:
            raise BadRequest("resource name may not be empty")
        if md.get("resourceVersion"):
            raise BadRequest("resourceVersion should not be set on objects to be created")
        namespace = md.get("namespace") or ""
        if self._read_before_create and self._current(resource, namespace, name) is not None:
            raise AlreadyExists(resource, name)
        md.pop("deletionTimestamp", None)
        md.pop("deletionGracePeriodSeconds", None)
        md["uid"] = uid or self._uid()
        md["resourceVersion"] = ""
        md["generation"] = 1
        md["creationTimestamp"] = format_time(self.clock.now())
        new["metadata"] = _ordered(md)
        return _handed_back(self._commit(resource, namespace, name, ADDED, new), new)

    def update(self, resource: str, obj: Obj) -> Obj:
        self._check_open()
        return self._retrying(self._update, resource, obj)

    def _update(self, resource: str, obj: Obj) -> Obj:
        new, md = _copy_in(obj)
        name = md.get("name")
        if not name:
            raise BadRequest("resource name may not be empty")
        namespace = md.get("namespace") or ""
        cur = self._current(resource, namespace, name)
        if cur is None:
            raise NotFound(resource, name)
        stored = cur.shared()     # read only: compared, and the previous state for watches
        smd = stored["metadata"]
        rv = md.get("resourceVersion")
        if rv and str(rv) != smd["resourceVersion"]:
            raise Conflict(resource, name, CONFLICT_MESSAGE)
        uid = md.get("uid")
        if uid and uid != smd.get("uid"):
            raise Conflict(resource, name, f"Precondition failed: UID in precondition: {uid}, "
                                           f"UID in object meta: {smd.get('uid', '')}")
        for k in _SET_ONCE:
            if k in smd:
                md[k] = smd[k]
            else:
                md.pop(k, None)
        md["resourceVersion"] = smd["resourceVersion"]
        generation = smd.get("generation", 0)
        md["generation"] = generation + 1 if _spec_changed(new, stored) else generation
        new["metadata"] = md = _ordered(md)
        if md.get("deletionTimestamp") and not md.get("finalizers") \
                and md.get("deletionGracePeriodSeconds") == 0 and not _held(resource, new):
            # The last finalizer of an object being deleted is gone: remove it now. As in
            # kube-apiserver the update itself is never stored; DELETED carries the last
            # stored state.
            return self._remove(cur, stored).copy()
        if new == stored:
            return cur.copy()  # no-op update: no new revision, no event
        return _handed_back(self._commit(resource, namespace, name, MODIFIED, new, cur, stored), new)

    def delete(self, resource: str, namespace: str, name: str, *,
               grace_period_seconds: int | None = 0,
               preconditions: Preconditions | None = None, finalizers: Finalizers | None = None,
               mark: Callable[[Obj], None] | None = None) -> tuple[Obj, bool]:
        """Delete, or mark for deletion; returns the object and whether it is gone.

        ``finalizers``: the object's finalizers from this deletion on (the garbage
        collector's ``orphan`` / ``foregroundDeletion``), written with the deletion mark in
        the same revision; ignored while a graceful deletion is pending, as in
        kube-apiserver. ``mark(obj)``: the kind's own change to the object being marked (a
        namespace turns ``Terminating``). See ``_held`` for what else keeps an object.
        """
        self._check_open()
        return self._retrying(self._delete, resource, namespace, name,
                              grace_period_seconds, preconditions, finalizers, mark)

    def _delete(self, resource: str, namespace: str, name: str, grace_period_seconds: int | None,
                preconditions: Preconditions | None, new_finalizers: Finalizers | None = None,
                mark: Callable[[Obj], None] | None = None) -> tuple[Obj, bool]:
        namespace = namespace or ""
        cur = self._current(resource, namespace, name)
        if cur is None:
            raise NotFound(resource, name)
        stored = cur.obj
        smd = stored["metadata"]
        _check_preconditions(resource, name, smd, preconditions)
        grace = grace_period_seconds
        if grace is not None and grace < 0:
            grace = 1  # as kube-apiserver: negative means "as soon as possible", i.e. 1s
        md = dict(smd)
        if new_finalizers is not None:
            if new_finalizers:
                md["finalizers"] = list(new_finalizers)
            else:
                md.pop("finalizers", None)
        finalizers = bool(md.get("finalizers"))
        new = dict(stored)
        if smd.get("deletionTimestamp"):
            old_grace = smd.get("deletionGracePeriodSeconds") or 0
            if old_grace > 0:
                # A graceful deletion is pending: only a shorter grace period changes it (and
                # then the finalizers with it); anything else changes nothing.
                if grace is None or grace >= old_grace:
                    return stored, False
                if grace == 0 and not finalizers:
                    return self._remove(cur, stored).copy(), True
                deadline = parse_time(smd["deletionTimestamp"]) - old_grace + grace
                md.update(deletionTimestamp=format_time(deadline), deletionGracePeriodSeconds=grace)
                new["metadata"] = _ordered(md)
                return self._commit(resource, namespace, name, MODIFIED, new, cur, stored).copy(), False
            # Held only by finalizers: a new delete may change the collector's finalizers,
            # and goes through once none is left (kube-apiserver's BeforeDelete then store).
            if not finalizers and not _held(resource, stored):
                return self._remove(cur, stored).copy(), True
            if md == smd:
                return stored, False
            new["metadata"] = _ordered(md)
            return self._commit(resource, namespace, name, MODIFIED, new, cur, stored).copy(), False
        grace = grace or 0
        if mark is not None:
            mark(new)
        if not finalizers and grace == 0 and not _held(resource, new):
            return self._remove(cur, stored).copy(), True
        md["deletionTimestamp"] = format_time(self.clock.now() + grace)
        md["deletionGracePeriodSeconds"] = grace
        md["generation"] = md.get("generation", 0) + 1
        new["metadata"] = _ordered(md)
        return self._commit(resource, namespace, name, MODIFIED, new, cur, stored).copy(), False

    def compact(self, revision: int) -> None:
        """Forget history at or below ``revision`` (each live object keeps its latest
        state); list and watch at a revision older than ``revision`` are then Expired."""
        self._check_open()
        revision = min(int(revision), self.current_revision())
        if revision <= self._compacted:
            return
        self._compact(self._compacted, revision)
        self._compacted = revision

    def _remove(self, cur: Record, stored: Obj) -> Record:
        last = dict(stored)
        last["metadata"] = dict(stored["metadata"])
        return self._commit(cur.resource, cur.namespace, cur.name, DELETED, last, cur, stored)

    def _commit(self, resource: str, namespace: str, name: str, type: str, obj: Obj,
                prev: Record | None = None, prev_obj: Obj | None = None) -> Record:
        """Write ``obj`` (ours to change at the top and in metadata; its nested values may
        be the caller's and are only read) as the next revision and feed the watches."""
        rec = self._persist(resource, namespace, name, type, obj, prev)
        self._feed(rec, prev, obj, prev_obj)
        if prev is not None:
            prev.release()   # kept in the history, but watches now want the new state
        return rec

    # ---- watch ------------------------------------------------------------------------

    def watch(self, resource: str, *, namespace: str | None = None, label_selector: str = "",
              field_selector: str = "", resource_version: str = "",
              send_initial_events: bool = False, allow_bookmarks: bool = False) -> Watch:
        self._check_open()
        match = self._matcher(resource, label_selector, field_selector)
        rv = resource_version or ""
        if rv in ("", "0") or send_initial_events:
            current = self.current_revision()
            if rv not in ("", "0"):
                # sendInitialEvents with a version: any snapshot not older than it will do.
                self._check_not_too_large(_parse_rv(rv), current)
            w = self._make_watch(resource, namespace, match, allow_bookmarks)
            for rec in self._snapshot(resource, namespace, current, None):
                if match is None:
                    # a private copy: only the watches following a write share its object
                    w._push((ADDED, rec, str(rec.rev)))
                else:
                    obj = rec.copy()
                    if match(obj):
                        w._push(WatchEvent(ADDED, obj))
            if send_initial_events:
                w._push(w._bookmark_event({INITIAL_EVENTS_END: "true"}, current))
            self._subscribe(w, current, False)
        else:
            start = _parse_rv(rv)
            if start < self._compacted:
                raise Expired(f"too old resource version: {start} ({self._compacted})")
            self._check_not_too_large(start)
            w = self._make_watch(resource, namespace, match, allow_bookmarks)
            self._subscribe(w, start, True)
        return w

    def send_bookmarks(self) -> None:
        """A BOOKMARK to every watch that allows them (kube-apiserver sends these periodically)."""
        for watchers in list(self._watchers.values()):
            for w in list(watchers):
                w.bookmark()

    def _unregister(self, w: Watch) -> None:
        watchers = self._watchers.get(w.resource)
        if watchers is not None:
            watchers.pop(w, None)
            if not watchers:
                del self._watchers[w.resource]
        watchers = self._unrouted.get(w.resource)
        if watchers is not None:
            watchers.pop(w, None)
        route = w._match.route if w._match is not None else None
        if route is not None:
            field, _, value = route
            by_value = self._routed.get(w.resource, {}).get(field, (None, {}))[1]
            bucket = by_value.get(value)
            if bucket is not None:
                bucket.pop(w, None)
                if not bucket:
                    del by_value[value]

    # ---- lifecycle --------------------------------------------------------------------

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        for watchers in list(self._watchers.values()):
            for w in list(watchers):
                w._terminate()
        self._watchers.clear()
        self._unrouted.clear()
        self._routed.clear()
        self._close()

    @property
    def closed(self) -> bool:
        return self._closed

    def __enter__(self) -> BaseStore:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # ---- helpers ----------------------------------------------------------------------

    def _check_open(self) -> None:
        if self._closed:
            raise RuntimeError("the store is closed")

    def _check_not_too_large(self, rev: int, current: int | None = None) -> None:
        if current is None:
            current = self.current_revision()
        if rev > current:
            raise Timeout(f"Too large resource version: {rev}, current: {current}")

    def _read_revision(self, resource_version: str) -> int:
        if resource_version in ("", "0"):
            return self.current_revision()
        rev = _parse_rv(resource_version)
        if rev < self._compacted:
            raise Expired(f"too old resource version: {rev} ({self._compacted})")
        self._check_not_too_large(rev)
        return rev

    def _matcher(self, resource: str, label_selector: str, field_selector: str) -> Match | None:
        return make_matcher(resource, label_selector, field_selector)


# ---- watch ----------------------------------------------------------------------------


def _expire(fut: asyncio.Future[None]) -> None:
    if not fut.done():
        fut.set_result(None)


class Watch:
    """One subscription. Events queue here as the store is written; nothing is decoded
    until the consumer takes it. A taken event's object is shared with every other watch
    of the same revision (``Record.shared``), as client-go's shared informers share one
    cache: read it, never change it (copy it first, as controllers copy what their
    listers give them)."""

    # How often a consumer need wake with nothing to read (``next(timeout=...)``) to notice
    # that it was stopped: never, ``stop`` wakes it. (An informer polled every minute: a
    # simulated thousand-node week woke ten million times for nothing.)
    poll_seconds: float | None = None

    def __init__(self, store: BaseStore, resource: str, namespace: str | None,
                 match: Match | None, allow_bookmarks: bool = False):
        self._store = store
        self.resource = resource
        self.namespace = namespace
        self._match = match
        self.allow_bookmarks = allow_bookmarks
        self._buf: deque[Queued] = deque()
        self._waiters: list[asyncio.Future[None]] = []
        self._stopped = False
        # the bound of a consumer that must not fall behind without end (``bound``)
        self._max_pending: int | None = None
        self._allowance = 0
        self._on_overflow: Callable[[], None] | None = None
        self.stalled = False
        self.overflowed = False

    def bound(self, max_pending: int, on_overflow: Callable[[], None]) -> None:
        """Stop this watch (``overflowed``) and call ``on_overflow`` when more than
        ``max_pending`` events wait while its consumer says it is ``stalled`` (an HTTP
        stream whose client stopped reading): the watch cache's cacheWatcher, whose input
        channel full for its time budget terminates it. Events queued before the bound
        (the initial state, a replay) are allowed on top, as they are taken; a consumer
        that is not stalled takes whatever a burst queued on its next turn, so in-process
        consumers, which never call this, are never bounded."""
        self._max_pending = max_pending
        self._allowance = len(self._buf) + max_pending
        self._on_overflow = on_overflow

    def _check_bound(self) -> None:
        most = self._max_pending
        if most is None or not self.stalled or len(self._buf) <= self._allowance:
            return
        self.overflowed = True
        # what was buffered is dropped: the client re-watches from its last version.
        # Unsubscribed on the loop's next turn: the store may be iterating its watches.
        self._stopped = True
        self._buf.clear()
        self._wake()
        asyncio.get_running_loop().call_soon(self.stop)
        if self._on_overflow is not None:
            self._on_overflow()

    def _taken(self, n: int) -> None:
        if self._max_pending is not None:
            self._allowance = max(self._max_pending, self._allowance - n)

    # ---- feeding (by the store) ---------------------------------------------------------

    def _offer(self, rec: Record, prev: Record | None, obj: Obj | None = None,
               prev_obj: Obj | None = None) -> None:
        """Queue the change ``rec`` (``obj``/``prev_obj``: its and ``prev``'s decoded
        objects if the caller has them) as this watch sees it."""
        if self.namespace is not None and rec.namespace != self.namespace:
            return
        match = self._match
        if match is None:
            self._push((rec.type, rec, None))
            return
        kind = rec.type
        if obj is None:
            obj = rec.shared()       # read only (matched)
        if kind != MODIFIED:
            # ADDED: the new state; DELETED: its object is the last stored state
            if match(obj):
                self._push((kind, rec, None))
            return
        now = match(obj)
        if prev_obj is None and prev is not None:
            prev_obj = prev.shared()
        before = prev_obj is not None and match(prev_obj)
        if now:
            self._push((MODIFIED if before else ADDED, rec, None))
        elif before:
            # stopped matching: DELETED with the previous state at the event's revision
            assert prev is not None
            self._push((DELETED, prev, str(rec.rev)))

    def _push(self, item: Queued) -> None:
        if self._stopped:
            return
        self._buf.append(item)
        if self._max_pending is not None:
            self._check_bound()
        if self._waiters:
            self._wake()

    def _wake(self) -> None:
        waiters, self._waiters = self._waiters, []
        for fut in waiters:
            if not fut.done():
                fut.set_result(None)

    def _bookmark_revision(self) -> int:
        """The revision a BOOKMARK reports now: every event up to it has been queued."""
        return self._store.current_revision()

    def _bookmark_event(self, annotations: dict[str, str] | None = None,
                        revision: int | None = None) -> WatchEvent:
        try:
            rt = by_key(self.resource)
            kind, api_version = rt.kind, rt.api_version
        except KeyError:
            kind, api_version = "", ""
        if revision is None:
            revision = self._bookmark_revision()
        md: Obj = {"resourceVersion": str(revision)}
        if annotations:
            md["annotations"] = dict(annotations)
        return WatchEvent(BOOKMARK, {"kind": kind, "apiVersion": api_version, "metadata": md})

    def _terminate(self) -> None:
        """Stopped by the store (closed): what is buffered can still be taken."""
        self._stopped = True
        self._wake()

    @staticmethod
    def _decode(item: Queued) -> WatchEvent:
        if isinstance(item, WatchEvent):
            return item
        kind, rec, rv = item
        if rv is None:
            return WatchEvent(kind, rec.shared())
        obj = rec.copy()
        obj["metadata"]["resourceVersion"] = rv
        return WatchEvent(kind, obj)

    # ---- consuming ----------------------------------------------------------------------

    def get_nowait(self) -> list[WatchEvent]:
        """Every buffered event (possibly none), without waiting."""
        buf = self._buf
        events = [self._decode(item) for item in buf]
        buf.clear()
        self._taken(len(events))
        return events

    def pending(self) -> int:
        return len(self._buf)

    async def next(self, timeout: float | None = None) -> WatchEvent | None:
        """The next event; None on timeout (loop time) or once stopped and drained."""
        if not self._buf and not self._stopped:
            await self._ready(timeout)
        if self._buf:
            self._taken(1)
            return self._decode(self._buf.popleft())
        return None

    async def _ready(self, timeout: float | None) -> None:
        # one future and a timer per wait, not asyncio.wait_for's task: a write wakes every
        # watch that follows it, and a large simulation wakes watches millions of times
        loop = asyncio.get_running_loop()
        deadline = None if timeout is None else loop.time() + timeout
        while not self._buf and not self._stopped:
            fut: asyncio.Future[None] = loop.create_future()
            self._waiters.append(fut)
            timer = None if deadline is None else loop.call_at(deadline, _expire, fut)
            try:
                await fut
            finally:
                if timer is not None:
                    timer.cancel()
                if fut in self._waiters:
                    self._waiters.remove(fut)
            if deadline is not None and loop.time() >= deadline:
                return

    def __aiter__(self) -> Watch:
        return self

    async def __anext__(self) -> WatchEvent:
        event = await self.next()
        if event is None:
            raise StopAsyncIteration
        return event

    def bookmark(self) -> None:
        """Queue a BOOKMARK at the store's current revision (if this watch allows them)."""
        if self.allow_bookmarks and not self._stopped:
            self._push(self._bookmark_event())

    def stop(self) -> None:
        """Unsubscribe; buffered events are dropped and waiting consumers get None."""
        self._stopped = True
        self._buf.clear()
        self._store._unregister(self)
        self._wake()

    @property
    def stopped(self) -> bool:
        return self._stopped

    def __enter__(self) -> Watch:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    async def __aenter__(self) -> Watch:
        return self

    async def __aexit__(self, *exc: Any) -> None:
        self.stop()

    def __repr__(self) -> str:
        return (f"Watch({self.resource!r}, namespace={self.namespace!r}, "
                f"pending={len(self._buf)}, stopped={self._stopped})")


# ---- selectors ------------------------------------------------------------------------


def make_matcher(resource: str, label_selector: str = "",
                 field_selector: str = "") -> Match | None:
    """A predicate for an object, or None when nothing is selected out. Bad selectors
    raise BadRequest."""
    if not label_selector and not field_selector:
        return None
    try:
        labels = parse_label_selector(label_selector) if label_selector else None
        fields = parse_field_selector(field_selector, resource) if field_selector else None
    except SelectorError as e:
        raise BadRequest(str(e)) from None
    if labels is not None and labels.empty:
        labels = None
    if fields is not None and fields.empty:
        fields = None
    if labels is None and fields is None:
        return None
    match = Match(_selects, labels.matches if labels is not None else None,
                  fields.matches if fields is not None else None)
    match.route = fields.route() if fields is not None else None
    return match


LabelTest = Callable[[Mapping[str, str] | None], bool]
FieldTest = Callable[[Mapping[str, Any]], bool]


class Match(functools.partial[bool]):
    """A label and field selector's predicate over objects (``match(obj)``), with the
    ``route`` (if any) the store indexes watches by. A partial of ``_selects``: called for
    every watch a write may concern, it costs no more than a closure."""

    route: Route | None = None


def _selects(labels: LabelTest | None, fields: FieldTest | None, obj: Obj) -> bool:
    # An object a selector cannot even read (odd shapes) does not match; a write must
    # never fail half-way through feeding its watches.
    try:
        if labels is not None and not labels((obj.get("metadata") or {}).get("labels") or {}):
            return False
        return fields is None or bool(fields(obj))
    except Exception:
        return False


def _route_value(get: Callable[[Obj], str], obj: Obj) -> str | None:
    try:
        return get(obj)
    except Exception:  # an odd shape: no watch of this route can match it
        return None


# ---- continue tokens ------------------------------------------------------------------


def encode_continue(rev: int, namespace: str, name: str) -> str:
    """kube-apiserver's token: base64url(JSON{v, rv, start}), start = the last key + NUL."""
    start = (f"{namespace}/{name}" if namespace else name) + "\x00"
    data = _dumps({"v": _CONTINUE_VERSION, "rv": rev, "start": start})
    return base64.urlsafe_b64encode(data.encode()).decode().rstrip("=")


def decode_continue(token: str) -> tuple[int, tuple[str, str]]:
    """(revision, (namespace, name) of the last key returned). BadRequest if malformed."""
    try:
        padded = token + "=" * (-len(token) % 4)
        data = _loads(base64.urlsafe_b64decode(padded.encode("ascii")))
    except (ValueError, binascii.Error, UnicodeError) as e:
        raise BadRequest(f"continue key is not valid: {e}") from None
    if not isinstance(data, dict) or data.get("v") != _CONTINUE_VERSION:
        raise BadRequest(f"continue key is not valid: server does not recognize this encoding "
                         f"(expected {_CONTINUE_VERSION})")
    rev, start = data.get("rv"), data.get("start")
    if not isinstance(rev, int) or isinstance(rev, bool) or rev <= 0:
        raise BadRequest("continue key is not valid: incorrect encoded start resourceVersion "
                         f"(version {_CONTINUE_VERSION})")
    if not isinstance(start, str) or not start.strip("\x00"):
        raise BadRequest("continue key is not valid: encoded start key is empty")
    key = start[:-1] if start.endswith("\x00") else start
    namespace, sep, name = key.partition("/")
    if not sep:
        namespace, name = "", key
    if not name or "/" in name:
        raise BadRequest("continue key is not valid: malformed start key")
    return rev, (namespace, name)


# ---- small helpers --------------------------------------------------------------------


def _parse_rv(text: str) -> int:
    if not isinstance(text, str) or not text.isdigit():
        raise BadRequest(f'invalid resource version "{text}"')
    return int(text)


def _copy_in(obj: Any) -> tuple[Obj, Obj]:
    """A copy of the caller's object and of its metadata, the only parts a write changes
    (deeper values are shared, read and serialized, never modified or kept; the written
    object handed back holds them: the caller gives them up)."""
    if not isinstance(obj, dict):
        raise BadRequest("the object must be a JSON object")
    md = obj.get("metadata")
    if md is None:
        md = {}
    elif not isinstance(md, dict):
        raise BadRequest("metadata must be an object")
    new = dict(obj)
    new["metadata"] = md = dict(md)
    return new, md


def _handed_back(rec: Record, obj: Obj) -> Obj:
    """The written object as the writer gets it back: ``obj`` itself (top level and metadata
    the store's copies, deeper values the writer's, which it gave up), stamped with the
    revision -- not a decode of what was stored, as the two hold the same JSON."""
    obj["metadata"]["resourceVersion"] = str(rec.rev)
    return obj


def _ordered(md: Obj) -> Obj:
    out = {k: md[k] for k in _META_ORDER if k in md}
    if len(out) != len(md):
        out.update((k, v) for k, v in md.items() if k not in _META_KNOWN)
    return out


def _held(resource: str, obj: Obj) -> bool:
    """Is an object being deleted kept by finalizers of its own kind, besides
    ``metadata.finalizers``? A namespace stays while ``spec.finalizers`` is not empty (the
    namespace controller's ``kubernetes``); the update that empties it removes it, as
    kube-apiserver's ``ShouldDeleteNamespaceDuringUpdate`` does."""
    return resource == "namespaces" and bool((obj.get("spec") or {}).get("finalizers"))


def _spec_changed(new: Obj, old: Obj) -> bool:
    """Did anything outside metadata and status change (what bumps metadata.generation)?"""
    keys = new.keys() - {"metadata", "status"}
    if keys != old.keys() - {"metadata", "status"}:
        return True
    return any(new[k] != old[k] for k in keys)


def _check_preconditions(resource: str, name: str, smd: Obj, pre: Preconditions | None) -> None:
    if not pre:
        return
    uid = pre.get("uid")
    if uid and uid != smd.get("uid"):
        raise Conflict(resource, name, f"Precondition failed: UID in precondition: {uid}, "
                                       f"UID in object meta: {smd.get('uid', '')}")
    rv = pre.get("resourceVersion")
    if rv and rv != smd.get("resourceVersion"):
        raise Conflict(resource, name, f"Precondition failed: ResourceVersion in precondition: "
                                       f"{rv}, ResourceVersion in object meta: "
                                       f"{smd.get('resourceVersion', '')}")
