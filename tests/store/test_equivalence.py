"""Property test: random operation sequences give identical results on every backend.

Each step runs on a memory and a sqlite store (and, in ``TestEtcdEquivalence``, a memory
and an etcd store) sharing one fake clock and compares the outcome (objects modulo uid,
errors by type/code/message, list pages and tokens, revisions). Watches opened along the
way must deliver identical streams, and an unfiltered watch opened at the start doubles
as an oracle: replaying it gives the state at every revision, which
``list(resource_version=N)`` must return.
"""

from __future__ import annotations

import re
import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from kvert.api.errors import ApiError, NotFound
from kvert.store import ListResult, MemoryStore, SqliteStore, WatchEvent
from tests.store.conftest import etcd_store
from tests.store.helpers import drain

HISTORY = 14
ETCD_EXAMPLES = 25  # each step costs a few etcd round trips
RESOURCES = st.sampled_from(["configmaps", "pods"])
NAMESPACES = st.sampled_from(["a", "b"])
NAMES = st.sampled_from(["x", "y", "z"])
LABELS = st.sampled_from([{}, {"app": "web"}, {"app": "db"}])
LABEL_SELECTORS = st.sampled_from(["", "app=web", "app!=web", "app"])
FIELD_SELECTORS = st.sampled_from(["", "", "metadata.name=x", "metadata.namespace!=a"])
_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


class Clock:
    def __init__(self) -> None:
        self.t = 1767225600.0

    def now(self) -> float:
        return self.t

    async def sleep(self, seconds: float) -> None:
        self.t += seconds


def _strip(value):
    """Drop uids, the one thing that legitimately differs between two stores."""
    if isinstance(value, dict):
        return {k: _strip(v) for k, v in value.items() if k != "uid"}
    if isinstance(value, (list, tuple)):
        return [_strip(v) for v in value]
    if isinstance(value, ListResult):
        return ("list", _strip(value.items), value.resource_version, value.continue_token,
                value.remaining_item_count)
    if isinstance(value, WatchEvent):
        return (value.type, _strip(value.object))
    return value


def _key(obj):
    md = obj["metadata"]
    return (md.get("namespace", ""), md["name"])


class Equivalence(RuleBasedStateMachine):
    backends = ("memory", "sqlite")
    etcd_endpoint = ""

    def make(self, backend):
        if backend == "memory":
            return MemoryStore(clock=self.clock, history=HISTORY)
        if backend == "sqlite":
            return SqliteStore(str(Path(self.dir) / "eq.db"), clock=self.clock, history=HISTORY,
                               synchronous="OFF")
        return etcd_store(self.etcd_endpoint, clock=self.clock, history=HISTORY)

    def __init__(self) -> None:
        super().__init__()
        self.clock = Clock()
        self.dir = tempfile.mkdtemp(prefix="kvert-store-eq-")
        self.stores = [self.make(b) for b in self.backends]
        # per store, the same watches in the same order
        self.watches: list[list] = [[] for _ in self.stores]
        self.oracle = [self.stores[0].watch(r, resource_version="0")
                       for r in ("configmaps", "pods")]
        self.state: dict[str, dict] = {"configmaps": {}, "pods": {}}
        self.snapshots: dict[str, list[tuple[int, dict]]] = {"configmaps": [], "pods": []}

    def teardown(self) -> None:
        for s in self.stores:
            s.close()
        shutil.rmtree(self.dir, ignore_errors=True)

    # ---- running one operation on both --------------------------------------------------

    def both(self, op):
        outcomes = []
        for s in self.stores:
            try:
                outcomes.append(("ok", _strip(op(s))))
            except ApiError as e:
                outcomes.append(("error", type(e).__name__, e.code, _UUID.sub("<uid>", e.message)))
        for other, s in zip(outcomes[1:], self.stores[1:]):
            assert other == outcomes[0], outcomes
            assert s.current_revision() == self.stores[0].current_revision()
            assert s.compacted_revision() == self.stores[0].compacted_revision()
        return outcomes[0]

    def change(self, resource, ns, name, edit, rv_mode="current"):
        def op(s):
            try:
                obj = s.get(resource, ns, name)
            except NotFound:
                obj = {"metadata": {"name": name, "namespace": ns}, "spec": {"v": 0}}
            edit(obj)
            md = obj["metadata"]
            if rv_mode == "none":
                md.pop("resourceVersion", None)
            elif rv_mode == "stale" and md.get("resourceVersion"):
                md["resourceVersion"] = str(int(md["resourceVersion"]) - 1)
            elif rv_mode == "wrong-uid":
                md["uid"] = "11111111-2222-3333-4444-555555555555"
            return s.update(resource, obj)

        return self.both(op)

    # ---- writes -------------------------------------------------------------------------

    @rule(resource=RESOURCES, ns=NAMESPACES, name=NAMES, labels=LABELS,
          finalizers=st.sampled_from([[], [], ["f1"], ["f1", "f2"]]), v=st.integers(0, 3))
    def create(self, resource, ns, name, labels, finalizers, v):
        md = {"name": name, "namespace": ns, "labels": labels}
        if finalizers:
            md["finalizers"] = finalizers
        obj = {"kind": "Thing", "metadata": md, "spec": {"v": v}, "status": {"phase": "new"}}
        self.both(lambda s: s.create(resource, obj))

    @rule(resource=RESOURCES, ns=NAMESPACES, name=NAMES, v=st.integers(0, 3),
          rv_mode=st.sampled_from(["current", "current", "none", "stale", "wrong-uid"]))
    def update_spec(self, resource, ns, name, v, rv_mode):
        def edit(obj):
            obj["spec"] = {"v": v}
        self.change(resource, ns, name, edit, rv_mode)

    @rule(resource=RESOURCES, ns=NAMESPACES, name=NAMES, phase=st.sampled_from(["a", "b"]))
    def update_status(self, resource, ns, name, phase):
        def edit(obj):
            obj["status"] = {"phase": phase}
        self.change(resource, ns, name, edit)

    @rule(resource=RESOURCES, ns=NAMESPACES, name=NAMES, labels=LABELS)
    def relabel(self, resource, ns, name, labels):
        def edit(obj):
            obj["metadata"]["labels"] = labels
        self.change(resource, ns, name, edit)

    @rule(resource=RESOURCES, ns=NAMESPACES, name=NAMES, keep=st.sampled_from([[], ["f2"]]))
    def set_finalizers(self, resource, ns, name, keep):
        def edit(obj):
            obj["metadata"]["finalizers"] = keep
        self.change(resource, ns, name, edit)

    @rule(resource=RESOURCES, ns=NAMESPACES, name=NAMES, grace=st.sampled_from([0, 0, 5, 30, None]),
          pre=st.sampled_from(["none", "none", "rv", "stale-rv", "uid"]))
    def delete(self, resource, ns, name, grace, pre):
        def op(s):
            preconditions = None
            if pre != "none":
                try:
                    md = s.get(resource, ns, name)["metadata"]
                except NotFound:
                    md = {"resourceVersion": "1", "uid": "x"}
                if pre == "rv":
                    preconditions = {"resourceVersion": md["resourceVersion"]}
                elif pre == "stale-rv":
                    preconditions = {"resourceVersion": str(int(md["resourceVersion"]) - 1)}
                else:
                    preconditions = {"uid": "not-" + md["uid"]}
            return s.delete(resource, ns, name, grace_period_seconds=grace,
                            preconditions=preconditions)

        self.both(op)

    @rule(fraction=st.floats(0, 1))
    def compact(self, fraction):
        s0 = self.stores[0]
        low, high = s0.compacted_revision(), s0.current_revision()
        target = low + int(fraction * (high - low))
        self.both(lambda s: s.compact(target))

    @rule(seconds=st.integers(1, 40))
    def tick(self, seconds):
        self.clock.t += seconds

    # ---- reads --------------------------------------------------------------------------

    @rule(resource=RESOURCES, ns=st.sampled_from([None, "a", "b"]), labels=LABEL_SELECTORS,
          fields=FIELD_SELECTORS, limit=st.sampled_from([0, 1, 2]),
          back=st.sampled_from([None, 0, 1, 3, 20]))
    def list_all_pages(self, resource, ns, labels, fields, limit, back):
        rv = ""
        if back is not None:
            rv = str(max(0, self.stores[0].current_revision() - back))
        token, items = "", []
        for _ in range(20):
            out = self.both(lambda s: s.list(resource, namespace=ns, label_selector=labels,
                                             field_selector=fields, limit=limit,
                                             continue_token=token,
                                             resource_version="" if token else rv))
            if out[0] != "ok":
                return
            items += out[1][1]
            token = out[1][3]
            if not token:
                break
        else:
            raise AssertionError("pagination did not end")
        # the pages add up to the whole list at the first page's revision
        whole = self.stores[0].list(resource, namespace=ns, label_selector=labels,
                                    field_selector=fields, resource_version=out[1][2])
        assert _strip(whole.items) == items

    @rule(resource=RESOURCES, ns=st.sampled_from([None, "a"]), labels=LABEL_SELECTORS,
          fields=FIELD_SELECTORS, back=st.sampled_from([None, "0", 0, 2, 6, 30]),
          initial=st.booleans())
    def open_watch(self, resource, ns, labels, fields, back, initial):
        if back is None or back == "0":
            rv = back or ""
        else:
            rv = str(max(0, self.stores[0].current_revision() - back))
        opened = []

        def op(s):
            w = s.watch(resource, namespace=ns, label_selector=labels, field_selector=fields,
                        resource_version=rv, send_initial_events=initial, allow_bookmarks=True)
            opened.append(w)
            return drain(w)

        if self.both(op)[0] == "ok":
            for i, w in enumerate(opened):
                self.watches[i].append(w)

    @precondition(lambda self: self.watches[0])
    @rule(data=st.data())
    def bookmark_or_stop(self, data):
        i = data.draw(st.integers(0, len(self.watches[0]) - 1))
        stop = data.draw(st.booleans())
        for ws in self.watches:
            if stop:
                ws[i].stop()
            else:
                ws[i].bookmark()
        if stop:
            for ws in self.watches:
                del ws[i]

    @rule(resource=RESOURCES, ns=NAMESPACES, name=NAMES)
    def get(self, resource, ns, name):
        self.both(lambda s: s.get(resource, ns, name))

    # ---- invariants ---------------------------------------------------------------------

    @invariant()
    def watches_agree(self):
        for mine, *theirs in zip(*self.watches):
            expected = _strip(drain(mine))
            for other in theirs:
                assert _strip(drain(other)) == expected

    @invariant()
    def history_matches_the_oracle(self):
        # oracle[0] watches configmaps on the memory store, oracle[1] pods on it; the
        # sqlite store is checked against the same expected states.
        for w, resource in zip(self.oracle, ("configmaps", "pods")):
            for event in drain(w):
                state = self.state[resource]
                key = _key(event.object)
                if event.type == "DELETED":
                    state.pop(key, None)
                else:
                    state[key] = _strip(event.object)
                rev = int(event.object["metadata"]["resourceVersion"])
                self.snapshots[resource].append((rev, dict(state)))
        s0 = self.stores[0]
        for resource, snaps in self.snapshots.items():
            for rev, state in snaps[-4:]:
                if rev < s0.compacted_revision():
                    continue
                expected = [state[k] for k in sorted(state)]
                for s in self.stores:
                    assert _strip(s.list(resource, resource_version=str(rev)).items) == expected
            current = [snaps[-1][1][k] for k in sorted(snaps[-1][1])] if snaps else []
            for s in self.stores:
                assert _strip(s.list(resource).items) == current


Equivalence.TestCase.settings = settings(
    max_examples=40, stateful_step_count=30, deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
TestEquivalence = Equivalence.TestCase


class EtcdEquivalence(Equivalence):
    backends = ("memory", "etcd")


@pytest.fixture
def _etcd_endpoint(etcd_server):
    EtcdEquivalence.etcd_endpoint = etcd_server.endpoint


EtcdEquivalence.TestCase.settings = settings(
    max_examples=ETCD_EXAMPLES, stateful_step_count=30, deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
TestEtcdEquivalence = pytest.mark.usefixtures("_etcd_endpoint")(EtcdEquivalence.TestCase)
