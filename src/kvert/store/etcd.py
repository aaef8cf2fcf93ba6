"""The etcd store: objects in etcd v3, kept the way kube-apiserver's etcd3 storage keeps them.

Several kvert API servers may share one etcd (each with its own ``EtcdStore``): etcd is
the single source of truth for objects, revisions and history, and every store's watches
are fed from etcd's own watch stream, so they see the writes of the other servers too.

Mapping (kube-apiserver's storage/etcd3):

* resourceVersion = the key's mod_revision (etcd's cluster-wide revision), minus
  ``revision_offset`` (0 in production; see below). Values are the object's JSON with an
  empty ``resourceVersion``, stamped on every read.
* create = txn(create_revision(key) == 0 → put); update and delete = txn(mod_revision(key)
  == the revision read → put / delete). A lost race is retried from a fresh read (an
  update carrying a resourceVersion then fails with Conflict, as in GuaranteedUpdate).
* list at a revision = range with ``revision``; pages = ranges from the continue token's
  start key at the token's revision, ``limit`` at a time; a compacted revision is Expired
  (410), a future one Timeout.
* watch = etcd watch from a start revision with ``prev_kv`` (the previous state makes the
  selector transitions: MODIFIED into ADDED/DELETED); compaction = etcd compaction.

Keys are ``{prefix}/{resource}/{namespace}!{name}`` (``!``: it sorts below every character
a namespace may hold, so etcd's key order is exactly the (namespace, name) order in
which the memory and sqlite stores list; cluster-scoped objects have an empty namespace).

Watches. One background thread per store reads one etcd watch covering the whole prefix
(prev_kv, progress_notify) and keeps the decoded changes, in revision order, in a local
log of the retained history (like the memory store's log: trimmed when compacting). The
thread fans each change out to the store's watches under the store lock, appending to
each watch's thread-safe inbox, and wakes the consumer's event loop with
``loop.call_soon_threadsafe``; the watch's own state (its buffer and waiting futures) is
only touched in that loop's thread, when it pumps its inbox. A new watch joins under the
same lock: it replays the logged changes after its start revision and is then fed live,
so no change is missed or seen twice. A write returns only once the stream has delivered
its own revision (and has pumped the watches owned by the writing thread's loop): a
write's event is observable at once, as with the local backends, and a virtual-time loop
never jumps past it. Writes of other processes arrive asynchronously, in order.
``wait_for(revision)`` blocks until the stream has delivered a revision. BOOKMARKs report
the stream's position (every event up to it has been queued), never more. A broken stream
reconnects from its position; if etcd has compacted past it meanwhile, every watch gets
an ERROR (410 Expired) and ends, as kube-apiserver's do, and its consumer relists.

Transport: etcd's JSON gRPC gateway (``/v3/kv/range``, ``/v3/kv/txn``,
``/v3/kv/compaction``, ``/v3/watch``; keys and values base64) over HTTP/1.1 with the
standard library, no gRPC dependency. Why not aiohttp: the store API is synchronous (as
the sqlite backend's), so request/response calls are plain blocking requests on a small
pool of keep-alive ``http.client`` connections (usable from any thread); and the watch
is one long streamed response read line by line, for which a blocking ``readline`` in
a thread is the simplest correct reader: no second event loop to run in that thread, and
shutting the socket down stops it.

``revision_offset``: resourceVersions are etcd revisions minus this. The test suite runs
each test on a fresh key prefix of one shared etcd and passes the etcd revision at the
start of the test, so that revisions count from 0 as on a fresh memory store. Every store
sharing a prefix must use the same offset.

Differences from the memory and sqlite stores (the contract suite and the equivalence
property test run on all three): revisions are etcd's, so on a shared etcd they have gaps
(writes under other prefixes) and a fresh etcd starts at 1, not 0; changes made by other
servers reach this store's watches asynchronously (in order; ``wait_for``); every call is
a round trip to etcd; ``compacted_revision()`` is what this store knows of (found when
opened, compactions it made, saw refused, or the history window it follows); compaction
is global to etcd, and automatic compaction (``history``) runs in batches
(``compaction_slack`` revisions, default ``history // 10``) since etcd compactions are
costly; a create is one txn with no read first (as in kube-apiserver), so a create that
finds the name taken has already drawn a uid.
"""

from __future__ import annotations

import asyncio
import base64
import http.client
import os
import shutil
import socket
import subprocess
import tempfile
import threading
from bisect import bisect_right
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from typing import Any
from urllib.parse import urlsplit

from kvert.api.errors import AlreadyExists, BadRequest, Expired, InternalError, Timeout
from kvert.clock import Clock
from kvert.store.base import (
    ADDED,
    DELETED,
    ERROR,
    MODIFIED,
    BaseStore,
    Match,
    Obj,
    Queued,
    Record,
    Watch,
    WatchEvent,
    WriteRaced,
    _dumps,
    _loads,
    encode,
    storable,
)

_SEP = "!"
_COMPACTED = "required revision has been compacted"
_FUTURE = "required revision is a future revision"
_PAGE = 500
_MAX_PAGE = 5000
# etcd sends at most this many distinct revisions in one catch-up watch response
_WATCH_BATCH_MAX_REVS = 1000


def _b64(text: str) -> str:
    return base64.b64encode(storable(text).encode()).decode("ascii")


def _unb64(data: str) -> str:
    return base64.b64decode(data).decode()


def _running_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


class _EtcdUnavailable(InternalError):
    pass


class _Client:
    """Blocking JSON calls to etcd's gateway on a pool of keep-alive connections."""

    def __init__(self, host: str, port: int, timeout: float):
        self.host, self.port, self.timeout = host, port, timeout
        self._idle: list[http.client.HTTPConnection] = []
        self._lock = threading.Lock()

    def connection(self, timeout: float | None = None) -> http.client.HTTPConnection:
        return http.client.HTTPConnection(self.host, self.port, timeout=timeout)

    def call(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        data = _dumps(body).encode()
        with self._lock:
            conn = self._idle.pop() if self._idle else None
        fresh = conn is None
        if conn is None:
            conn = self.connection(self.timeout)
        while True:
            try:
                conn.request("POST", path, data, {"Content-Type": "application/json"})
                resp = conn.getresponse()
                payload = resp.read()
                break
            except (OSError, http.client.HTTPException) as e:
                conn.close()
                if fresh:
                    raise _EtcdUnavailable(
                        f"etcd at {self.host}:{self.port} is unavailable: {e}") from None
                # a kept-alive connection the server had closed: once more, on a new one
                conn, fresh = self.connection(self.timeout), True
        with self._lock:
            self._idle.append(conn)
        try:
            answer = _loads(payload) if payload else {}
        except ValueError:
            answer = {"error": payload[:200].decode(errors="replace")}
        if resp.status != 200 or "error" in answer:
            raise _EtcdError(str(answer.get("message") or answer.get("error") or resp.status))
        return answer

    def close(self) -> None:
        with self._lock:
            idle, self._idle = self._idle, []
        for conn in idle:
            conn.close()


class _EtcdError(Exception):
    """etcd refused a request (its message is the text)."""


class EtcdStore(BaseStore):
    """A store in etcd at ``endpoint`` (``http://HOST:PORT`` or ``HOST:PORT``), under
    ``prefix``. ``history``: revisions kept before automatic compaction (None: never).
    ``timeout``: seconds for each etcd request and for a write's wait for its event."""

    _read_before_create = False  # the create txn compares create_revision == 0
    shared = True                # other API servers may use the same etcd (and its history)

    def __init__(self, endpoint: str, clock: Clock | None = None, prefix: str = "/registry/kvert",
                 history: int | None = 10000, uid_factory: Callable[[], str] | None = None,
                 revision_offset: int = 0, compaction_slack: int | None = None,
                 timeout: float = 10.0):
        super().__init__(clock, history, uid_factory)
        url = urlsplit(endpoint if "://" in endpoint else f"http://{endpoint}")
        if url.scheme not in ("http", "etcd") or not url.hostname:
            raise ValueError(f"etcd endpoint {endpoint!r}: use http://HOST:PORT")
        self.endpoint = f"http://{url.hostname}:{url.port or 2379}"
        self.prefix = "/" + prefix.strip("/") if prefix.strip("/") else ""
        self._offset = int(revision_offset)
        if self._history is None:
            self._slack = 0
        else:
            self._slack = self._history // 10 if compaction_slack is None else compaction_slack
        self._timeout = timeout
        self._client = _Client(url.hostname, url.port or 2379, timeout)
        self._lock = threading.Lock()
        self._cond = threading.Condition(self._lock)
        # The change log: (record, previous record) in revision order; _log_revs mirrors
        # the revisions for bisection. Records after _log_start are live.
        self._log: list[tuple[Record, Record | None]] = []
        self._log_revs: list[int] = []
        self._log_start = 0
        try:
            self._rev = self.current_revision()
            low = self._offset + 1
            first = self._find_compacted(low, self._rev + self._offset)
        except _EtcdUnavailable as e:
            self._client.close()
            raise ConnectionError(e.message) from None
        except BaseException:
            self._client.close()
            raise
        self._compacted = first - self._offset if first > low else 0
        # how far this store has compacted etcd (or found it compacted): automatic
        # compaction goes by this, while _compacted, the oldest revision served, also
        # follows the history window as the stream moves on (other servers' writes)
        self._etcd_compacted = self._compacted
        # the stream's position: every change up to it has been logged and fanned out
        self._pos = first - 1 - self._offset
        self._stopping = False
        self._halt = threading.Event()
        self._stream_sock: socket.socket | None = None
        self.stream_error = ""
        self._thread = threading.Thread(target=self._stream_main, daemon=True,
                                        name=f"kvert-etcd-watch {self.prefix}")
        self._thread.start()

    # ---- etcd requests ----------------------------------------------------------------

    def _call(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        try:
            return self._client.call(path, body)
        except _EtcdError as e:
            raise InternalError(f"etcd: {e}") from None

    def _header_rev(self, answer: dict[str, Any]) -> int:
        return int(answer.get("header", {}).get("revision", 0)) - self._offset

    def _find_compacted(self, low: int, high: int) -> int:
        """etcd's compacted revision if above ``low`` (etcd revisions), else ``low``: the
        oldest revision in [low, high] a range may read, found by bisection."""
        if low > high or self._readable(low):
            return low
        while high - low > 1:  # low unreadable, high readable
            mid = (low + high) // 2
            if self._readable(mid):
                high = mid
            else:
                low = mid
        return high

    def _readable(self, etcd_rev: int) -> bool:
        try:
            self._client.call("/v3/kv/range", {"key": _b64(self.prefix + "/"),
                                               "revision": etcd_rev, "count_only": True})
        except _EtcdError as e:
            if _COMPACTED in str(e):
                return False
            raise InternalError(f"etcd: {e}") from None
        return True

    def _range(self, body: dict[str, Any], rev: int) -> dict[str, Any]:
        try:
            return self._client.call("/v3/kv/range", body)
        except _EtcdError as e:
            text = str(e)
            if _COMPACTED in text:  # by another server: find out how far
                found = self._find_compacted(rev + self._offset, self._rev + self._offset)
                self._learn_compaction(found - self._offset)
                raise Expired(f"too old resource version: {rev} ({self._compacted})") from None
            if _FUTURE in text:
                current = self.current_revision()
                raise Timeout(f"Too large resource version: {rev}, current: {current}") from None
            raise InternalError(f"etcd: {text}") from None

    # ---- keys ---------------------------------------------------------------------------

    def _key(self, resource: str, namespace: str, name: str) -> str:
        return f"{self.prefix}/{resource}/{namespace}{_SEP}{name}"

    def _parse_key(self, key: str) -> tuple[str, str, str] | None:
        start = self.prefix + "/"
        if not key.startswith(start):
            return None
        # resources and namespaces hold no "!", namespaces no "/"; names may hold either
        head, sep, name = key[len(start):].partition(_SEP)
        resource, slash, namespace = head.rpartition("/")
        if not slash or not sep or not resource or not name:
            return None
        return resource, namespace, name

    def _record(self, kv: dict[str, Any], resource: str, namespace: str, name: str,
                kind: str | None = None) -> Record:
        rev = int(kv["mod_revision"]) - self._offset
        if kind is None:
            kind = ADDED if kv.get("create_revision") == kv.get("mod_revision") else MODIFIED
        return Record(rev, resource, namespace, name, kind, _unb64(kv.get("value", "")),
                      stamp=str(rev))

    # ---- hooks: reads -------------------------------------------------------------------

    def current_revision(self) -> int:
        """etcd's current revision (a request: another server may have written)."""
        rev = self._header_rev(self._call("/v3/kv/range", {"key": _b64(self.prefix + "/"),
                                                           "count_only": True}))
        if rev > self._rev:
            self._rev = rev
        return rev

    def _current(self, resource: str, namespace: str, name: str) -> Record | None:
        answer = self._call("/v3/kv/range", {"key": _b64(self._key(resource, namespace, name))})
        kvs = answer.get("kvs")
        if not kvs:
            return None
        return self._record(kvs[0], resource, namespace, name)

    def _bounds(self, resource: str, namespace: str | None,
                after: tuple[str, str] | None) -> tuple[str, str]:
        if namespace is None:
            start = f"{self.prefix}/{resource}/"
            end = f"{self.prefix}/{resource}0"  # "0" follows "/"
        else:
            start = f"{self.prefix}/{resource}/{namespace}{_SEP}"
            end = f"{self.prefix}/{resource}/{namespace}{chr(ord(_SEP) + 1)}"
        if after is not None:
            start = max(start, self._key(resource, *after) + "\x00")
        return start, end

    def _snapshot(self, resource: str, namespace: str | None, rev: int,
                  after: tuple[str, str] | None, hint: int = 0) -> Iterator[Record]:
        start, end = self._bounds(resource, namespace, after)
        etcd_rev = rev + self._offset
        if etcd_rev <= 0 or start >= end:
            return
        page = min(hint, _MAX_PAGE) if hint > 0 else _PAGE
        key_end = _b64(end)
        while True:
            answer = self._range({"key": _b64(start), "range_end": key_end,
                                  "revision": etcd_rev, "limit": page}, rev)
            kvs = answer.get("kvs") or ()
            for kv in kvs:
                parsed = self._parse_key(_unb64(kv["key"]))
                if parsed is not None:
                    yield self._record(kv, *parsed)
            if not answer.get("more") or not kvs:
                return
            start = _unb64(kvs[-1]["key"]) + "\x00"
            page = min(page * 2, _MAX_PAGE)

    def _count(self, resource: str, namespace: str | None, rev: int,
               after: tuple[str, str] | None) -> int:
        start, end = self._bounds(resource, namespace, after)
        if start >= end:
            return 0
        answer = self._range({"key": _b64(start), "range_end": _b64(end),
                              "revision": rev + self._offset, "count_only": True}, rev)
        return int(answer.get("count", 0))

    def _changes(self, resource: str, after_rev: int) -> Iterator[tuple[Record, Record | None]]:
        with self._lock:
            i = bisect_right(self._log_revs, after_rev, lo=self._log_start)
            changes = [c for c in self._log[i:] if c[0].resource == resource]
        return iter(changes)

    # ---- hooks: writes ------------------------------------------------------------------

    def _persist(self, resource: str, namespace: str, name: str, type: str, obj: Obj,
                 prev: Record | None) -> Record:
        obj["metadata"]["resourceVersion"] = ""
        try:
            raw = encode(obj)
        except (TypeError, ValueError, RecursionError) as e:
            raise BadRequest(f"the object is not valid JSON: {e}") from None
        key = _b64(self._key(resource, namespace, name))
        if type == ADDED:
            compare = {"key": key, "target": "CREATE", "result": "EQUAL", "create_revision": 0}
        else:
            assert prev is not None
            compare = {"key": key, "target": "MOD", "result": "EQUAL",
                       "mod_revision": prev.rev + self._offset}
        if type == DELETED:
            op = {"request_delete_range": {"key": key}}
        else:
            op = {"request_put": {"key": key, "value": _b64(raw)}}
        answer = self._call("/v3/kv/txn", {"compare": [compare], "success": [op]})
        if not answer.get("succeeded"):
            if type == ADDED:
                raise AlreadyExists(resource, name)
            raise WriteRaced()
        rev = self._header_rev(answer)
        if rev > self._rev:
            self._rev = rev
        rec = Record(rev, resource, namespace, name, type, raw, stamp=str(rev))
        if self._history is not None and \
                rev - self._etcd_compacted > self._history + self._slack:
            target = rev - self._history
            self._compact(self._etcd_compacted, target)
            self._compacted = max(self._compacted, target)
        return rec

    def _feed(self, rec: Record, prev: Record | None, obj: Obj | None,
              prev_obj: Obj | None) -> None:
        """The stream feeds the watches: wait until it has delivered this write, then pump
        the watches this thread consumes, so the event is there when the write returns."""
        self.wait_for(rec.rev, self._timeout)
        loop = _running_loop()
        with self._lock:
            mine = [w for w in _etcd_watches(self._watchers.get(rec.resource, ())) if w._loop is loop]
        for w in mine:
            w._pump()

    def _compact(self, old: int, new: int) -> None:
        try:
            self._client.call("/v3/kv/compaction", {"revision": new + self._offset})
        except _EtcdError as e:
            if _COMPACTED not in str(e):  # already compacted further (by another server)
                raise InternalError(f"etcd: {e}") from None
        self._etcd_compacted = max(self._etcd_compacted, new)
        self._trim_log(new)

    def _learn_compaction(self, compacted: int) -> None:
        self._etcd_compacted = max(self._etcd_compacted, compacted)
        self._compacted = max(self._compacted, compacted)
        self._trim_log(compacted)

    def _trim_log(self, through: int) -> None:
        with self._lock:
            self._trim_log_locked(through)

    def _trim_log_locked(self, through: int) -> None:
        self._log_start = max(self._log_start,
                              bisect_right(self._log_revs, through, lo=self._log_start))
        if self._log_start > 1024 and self._log_start * 2 > len(self._log):
            del self._log[:self._log_start]
            del self._log_revs[:self._log_start]
            self._log_start = 0

    # ---- hooks: watches -----------------------------------------------------------------

    def _make_watch(self, resource: str, namespace: str | None, match: Match | None,
                    allow_bookmarks: bool) -> Watch:
        return _EtcdWatch(self, resource, namespace, match, allow_bookmarks)

    def _subscribe(self, w: Watch, after: int, replay: bool) -> None:
        assert isinstance(w, _EtcdWatch)
        with self._lock:
            w._after = after
            # what the stream delivered after ``after`` (a snapshot may be older than the
            # stream's position); later changes are fanned out to the watch as they come
            i = bisect_right(self._log_revs, after, lo=self._log_start)
            for rec, prev in self._log[i:]:
                if rec.resource == w.resource:
                    w._offer(rec, prev)
            self._watchers.setdefault(w.resource, {})[w] = None

    def _unregister(self, w: Watch) -> None:
        with self._lock:
            super()._unregister(w)

    def wait_for(self, revision: int, timeout: float | None = None) -> bool:
        """Block until the watch stream has delivered every change up to ``revision`` (so
        this store's watches have them queued); False on timeout. Writes of this store
        wait by themselves; use this to wait for another server's write."""
        with self._cond:
            return self._cond.wait_for(lambda: self._pos >= revision or self._stopping,
                                       timeout if timeout is not None else self._timeout) \
                and self._pos >= revision

    def stream_position(self) -> int:
        """The revision up to which the watch stream has delivered every change."""
        return self._pos

    # ---- the watch stream (background thread) ------------------------------------------

    def _stream_main(self) -> None:
        failures = 0
        while not self._stopping:
            conn = self._client.connection(None)
            try:
                conn.connect()
                conn.sock.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)
                with self._lock:
                    if self._stopping:
                        return
                    self._stream_sock = conn.sock
                    start = self._pos + self._offset + 1
                body = {"create_request": {
                    "key": _b64(self.prefix + "/"), "range_end": _b64(self.prefix + "0"),
                    "start_revision": start, "prev_kv": True, "progress_notify": True}}
                conn.request("POST", "/v3/watch", _dumps(body).encode(),
                             {"Content-Type": "application/json"})
                resp = conn.getresponse()
                if resp.status != 200:
                    raise _EtcdError(f"watch answered {resp.status}: {resp.read(200)!r}")
                while True:
                    line = resp.readline()
                    if not line:
                        raise _EtcdError("watch stream ended")
                    msg = _loads(line)
                    result = msg.get("result")
                    if result is None:
                        raise _EtcdError(str(msg.get("error") or msg)[:200])
                    if result.get("canceled"):
                        compacted = int(result.get("compact_revision") or 0)
                        if not compacted:
                            raise _EtcdError(f"watch canceled: {result.get('cancel_reason')}")
                        self._lost_history(compacted)
                        break
                    if result.get("created"):
                        failures = 0
                        self.stream_error = ""
                        continue
                    self._deliver(result)
            except Exception as e:  # noqa: BLE001 - the stream must outlive any failure
                if self._stopping:
                    return
                self.stream_error = str(e) or type(e).__name__
                failures += 1
                self._halt.wait(min(2.0, 0.02 * 2 ** min(failures, 7)))  # back off, retry
            finally:
                with self._lock:
                    self._stream_sock = None
                conn.close()

    def _deliver(self, result: dict[str, Any]) -> None:
        """One watch response: log its changes and fan them out (the stream thread)."""
        offset = self._offset
        header = int(result.get("header", {}).get("revision", 0)) - offset
        changes: list[tuple[Record, Record | None]] = []
        revs = set()
        for ev in result.get("events") or ():
            kv = ev["kv"]
            revs.add(int(kv["mod_revision"]) - offset)
            try:
                change = self._change(ev)
            except (ValueError, KeyError):  # not an object of ours (e.g. not UTF-8): skip it
                continue
            if change is not None:
                changes.append(change)
        # A response's header revision is a promise that nothing up to it is missing when
        # it is a progress notification (no events) or a catch-up batch that etcd did not
        # have to cut short; a live notification's header is its own revision.
        through = max(revs) if revs else header
        if not revs or len(revs) < _WATCH_BATCH_MAX_REVS:
            through = max(through, header)
        touched: dict[_EtcdWatch, None] = {}
        with self._lock:
            seen = self._pos
            for rec, prev in changes:
                if rec.rev <= seen:
                    continue  # delivered before a reconnect
                self._log.append((rec, prev))
                self._log_revs.append(rec.rev)
                for w in _etcd_watches(self._watchers.get(rec.resource, ())):
                    if rec.rev > w._after:
                        try:
                            w._offer(rec, prev)
                        except ValueError:  # a value that is not JSON: nothing to show
                            continue
                        touched[w] = None
                self._pos = rec.rev
            if through > self._pos:
                self._pos = through
            history = self._history
            if history is not None and self._pos - self._compacted > history + self._slack:
                # another server compacted etcd (this one may not write at all): keep the
                # same window of history here
                self._compacted = self._pos - history
                self._trim_log_locked(self._compacted)
            for w in touched:
                w._kick()
            self._cond.notify_all()

    def _change(self, ev: dict[str, Any]) -> tuple[Record, Record | None] | None:
        kv = ev["kv"]
        parsed = self._parse_key(_unb64(kv["key"]))
        if parsed is None:
            return None
        resource, namespace, name = parsed
        prev_kv = ev.get("prev_kv")
        if ev.get("type") == "DELETE":
            if not prev_kv:
                return None
            rev = int(kv["mod_revision"]) - self._offset
            return Record(rev, resource, namespace, name, DELETED,
                          _unb64(prev_kv.get("value", "")), stamp=str(rev)), None
        rec = self._record(kv, resource, namespace, name)
        prev = None
        if rec.type == MODIFIED and prev_kv:
            prev = self._record(prev_kv, resource, namespace, name)
        return rec, prev

    def _lost_history(self, compacted: int) -> None:
        """The stream could not resume: etcd compacted past its position. Every watch
        ends with a 410 ERROR (its consumer relists); the stream restarts at the
        compaction, with the history etcd still has."""
        compacted -= self._offset
        status = Expired(f"too old resource version: {self._pos} ({compacted})").to_status()
        with self._lock:
            watches = [w for ws in self._watchers.values() for w in _etcd_watches(ws)]
            self._watchers.clear()
            for w in watches:
                w._push(WatchEvent(ERROR, status))
                w._end()
            self._log.clear()
            self._log_revs.clear()
            self._log_start = 0
            self._compacted = max(self._compacted, compacted)
            self._etcd_compacted = max(self._etcd_compacted, compacted)
            self._pos = max(self._pos, compacted - 1)
            self._cond.notify_all()

    # ---- lifecycle ----------------------------------------------------------------------

    def close(self) -> None:
        if self._closed:
            return
        with self._lock:
            self._stopping = True
            sock = self._stream_sock
            self._cond.notify_all()
        self._halt.set()
        if sock is not None:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        if self._thread is not threading.current_thread():
            self._thread.join(self._timeout)
        super().close()

    def _close(self) -> None:
        self._client.close()


def _etcd_watches(watches: Iterable[Watch]) -> Iterator[_EtcdWatch]:
    """The store's watches as the stream's (``EtcdStore._make_watch`` makes only these)."""
    for w in watches:
        if isinstance(w, _EtcdWatch):
            yield w


class _EtcdWatch(Watch):
    """A watch fed by the stream thread: it appends to ``_inbox`` (under the store lock)
    and asks the consumer's loop to ``_pump`` it; the buffer and the waiting futures are
    only touched in the consumer's thread."""

    _store: EtcdStore

    def __init__(self, store: EtcdStore, resource: str, namespace: str | None,
                 match: Match | None, allow_bookmarks: bool = False):
        super().__init__(store, resource, namespace, match, allow_bookmarks)
        self._inbox: deque[Queued] = deque()
        self._after = 0
        self._loop = _running_loop()
        self._scheduled = False
        self._ended = False

    # ---- feeding (stream thread, under the store lock; or before subscribing) ---------

    def _push(self, item: Queued) -> None:
        if not self._stopped:
            self._inbox.append(item)

    def _kick(self) -> None:
        loop = self._loop
        if loop is not None and self._inbox and not self._scheduled:
            self._scheduled = True
            try:
                loop.call_soon_threadsafe(self._pump)
            except RuntimeError:  # the loop is closed: the consumer will pump itself
                self._scheduled = False

    def _end(self) -> None:
        """Stopped by the stream (lost history): the consumer gets what is queued first."""
        self._ended = True
        loop = self._loop
        if loop is not None:
            try:
                loop.call_soon_threadsafe(self._pump)
            except RuntimeError:  # the loop is closed
                pass

    # ---- the consumer's side ------------------------------------------------------------

    def _pump(self) -> None:
        self._scheduled = False
        inbox, buf = self._inbox, self._buf
        if self._stopped:
            inbox.clear()
            return
        moved = False
        while inbox:
            buf.append(inbox.popleft())
            moved = True
        if moved and self._max_pending is not None:
            self._check_bound()
        if self._ended:
            Watch._terminate(self)
        elif moved and self._waiters:
            self._wake()

    def _bookmark_revision(self) -> int:
        return max(self._store._pos, self._after)

    def bookmark(self) -> None:
        if self.allow_bookmarks and not self._stopped:
            with self._store._lock:
                # after every event up to the position, which are queued already
                self._inbox.append(self._bookmark_event())
            self._pump()

    def get_nowait(self) -> list[WatchEvent]:
        self._pump()
        return super().get_nowait()

    def pending(self) -> int:
        self._pump()
        return len(self._buf)

    async def next(self, timeout: float | None = None) -> WatchEvent | None:
        self._loop = asyncio.get_running_loop()
        self._pump()
        return await super().next(timeout)

    def _terminate(self) -> None:
        loop = self._loop
        if loop is not None and loop is not _running_loop() and not loop.is_closed():
            try:
                loop.call_soon_threadsafe(self._terminate_here)
                return
            except RuntimeError:
                pass
        self._terminate_here()

    def _terminate_here(self) -> None:
        self._pump()
        super()._terminate()

    def stop(self) -> None:
        self._stopped = True
        self._inbox.clear()
        super().stop()

    @property
    def stopped(self) -> bool:
        if self._ended and not self._stopped:
            self._pump()
        return self._stopped


# ---- a throwaway etcd -------------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


class LocalEtcd:
    """A single-member etcd on free loopback ports, in ``data_dir`` (if None, a temporary
    directory made in ``tmp_dir`` and removed by ``close``): for tests, benchmarks and
    local runs. ``stop`` and ``start`` again restart it on the same ports and data.

        with LocalEtcd() as etcd:
            store = EtcdStore(etcd.endpoint)
    """

    def __init__(self, data_dir: str | None = None, binary: str | None = None,
                 extra_args: tuple[str, ...] = (), tmp_dir: str | None = None):
        self.binary = binary or shutil.which("etcd") or ""
        if not self.binary:
            raise FileNotFoundError("etcd not installed")
        self._own_dir = data_dir is None
        self.data_dir = data_dir or tempfile.mkdtemp(prefix="kvert-etcd-", dir=tmp_dir)
        self.extra_args = tuple(extra_args)
        self.endpoint = ""
        self.ports: tuple[int, int] | None = None
        self.proc: subprocess.Popen[str] | None = None
        self.log: deque[str] = deque(maxlen=200)

    @staticmethod
    def available() -> bool:
        return shutil.which("etcd") is not None

    def start(self, timeout: float = 30.0) -> LocalEtcd:
        for _attempt in range(3):
            client, peer = self.ports or (_free_port(), _free_port())
            self.endpoint = f"http://127.0.0.1:{client}"
            peer_url = f"http://127.0.0.1:{peer}"
            proc = subprocess.Popen(
                [self.binary, "--name", "kvert", "--data-dir", self.data_dir,
                 "--listen-client-urls", self.endpoint, "--advertise-client-urls", self.endpoint,
                 "--listen-peer-urls", peer_url, "--initial-advertise-peer-urls", peer_url,
                 "--initial-cluster", f"kvert={peer_url}", *self.extra_args],
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                text=True, errors="replace")
            killer = threading.Timer(timeout, proc.kill)
            killer.start()
            ready = False
            try:
                assert proc.stderr is not None
                for line in proc.stderr:
                    self.log.append(line)
                    if "ready to serve client requests" in line:
                        ready = True
                        break
            finally:
                killer.cancel()
            if ready:
                self.proc, self.ports = proc, (client, peer)
                threading.Thread(target=self._drain, args=(proc,), daemon=True,
                                 name="kvert-etcd-log").start()
                return self
            proc.kill()
            proc.wait()
            if self.ports or not any("address already in use" in line for line in self.log):
                break
        raise RuntimeError("etcd did not start:\n" + "".join(self.log))

    def _drain(self, proc: subprocess.Popen[str]) -> None:
        assert proc.stderr is not None
        for line in proc.stderr:
            self.log.append(line)

    def stop(self) -> None:
        """Stop the process (its data stays: ``start`` brings it back)."""
        proc, self.proc = self.proc, None
        if proc is not None:
            proc.terminate()
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()

    def close(self) -> None:
        """Stop, and remove the data directory if it was made here."""
        self.stop()
        if self._own_dir and os.path.isdir(self.data_dir):
            shutil.rmtree(self.data_dir, ignore_errors=True)

    def __enter__(self) -> LocalEtcd:
        return self.start() if self.proc is None else self

    def __exit__(self, *exc: Any) -> None:
        self.close()


__all__ = ["EtcdStore", "LocalEtcd"]
