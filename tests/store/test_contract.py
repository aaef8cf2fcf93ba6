"""The store contract: every backend behaves like etcd3 under kube-apiserver.

Watches are read with ``drain(w)``: at once on the local backends, and on etcd once its
change stream has delivered the current revision.
"""

from __future__ import annotations

import asyncio
import base64
import json

import pytest

from kvert.api.errors import AlreadyExists, BadRequest, Conflict, Expired, NotFound, Timeout
from kvert.api.meta import format_time
from kvert.store import INITIAL_EVENTS_END, Store, WatchEvent
from tests.store.helpers import drain

START = 1767225600.0  # the fake clock's start (conftest.FakeClock)

CM = "configmaps"


def cm(name, ns="default", labels=None, data=None, finalizers=None, **meta):
    md = {"name": name, **meta}
    if ns:
        md["namespace"] = ns
    if labels is not None:
        md["labels"] = labels
    if finalizers is not None:
        md["finalizers"] = finalizers
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": md, "data": data or {"k": "v"}}


def deploy(name, replicas=1, ns="default", labels=None):
    md = {"name": name, "namespace": ns, "labels": labels or {"app": name}}
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": md,
            "spec": {"replicas": replicas}, "status": {}}


def rv(obj):
    return int(obj["metadata"]["resourceVersion"])


def names(items):
    return [o["metadata"]["name"] for o in items]


def summary(events):
    return [(e.type, e.object["metadata"]["name"], rv(e.object)) for e in events]


def kinds(events):
    return [(e.type, e.object["metadata"]["name"]) for e in events]


# ---- create / get ---------------------------------------------------------------------


def test_backend_implements_the_protocol(store):
    assert isinstance(store, Store)
    assert store.current_revision() == 0


def test_create_sets_system_metadata(store, clock):
    clock.advance(42)
    src = cm("a", labels={"x": "1"})
    out = store.create(CM, src)
    md = out["metadata"]
    assert len(md["uid"]) == 36
    assert md["creationTimestamp"] == format_time(START + 42)
    assert md["generation"] == 1
    assert md["resourceVersion"] == "1" == str(store.current_revision())
    assert "resourceVersion" not in src["metadata"]  # the caller's object is left alone
    assert store.get(CM, "default", "a") == out


def test_create_errors(store):
    store.create(CM, cm("a"))
    with pytest.raises(AlreadyExists) as e:
        store.create(CM, cm("a"))
    assert e.value.code == 409 and 'configmaps "a" already exists' in str(e.value)
    with pytest.raises(BadRequest):
        store.create(CM, {"metadata": {"namespace": "default"}})
    with pytest.raises(BadRequest, match="resourceVersion should not be set on objects to be created"):
        store.create(CM, cm("b", resourceVersion="1"))
    assert store.current_revision() == 1
    store.create(CM, cm("a", ns="other"))  # same name, other namespace
    store.create("nodes", {"kind": "Node", "metadata": {"name": "a"}})  # same name, other resource
    assert store.current_revision() == 3


def test_create_ignores_client_set_system_fields(store):
    out = store.create(CM, cm("a", deletionTimestamp="2020-01-01T00:00:00Z", generation=7,
                              deletionGracePeriodSeconds=3))
    md = out["metadata"]
    assert md["generation"] == 1
    assert "deletionTimestamp" not in md and "deletionGracePeriodSeconds" not in md


def test_cluster_scoped_objects(store):
    node = store.create("nodes", {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}})
    assert "namespace" not in node["metadata"]
    assert store.get("nodes", "", "n1")["metadata"]["uid"] == node["metadata"]["uid"]
    assert names(store.list("nodes").items) == ["n1"]
    assert names(store.list("nodes", namespace="").items) == ["n1"]
    store.delete("nodes", "", "n1")
    with pytest.raises(NotFound):
        store.get("nodes", "", "n1")


def test_get_not_found_and_copies(store):
    with pytest.raises(NotFound) as e:
        store.get(CM, "default", "nope")
    assert e.value.code == 404
    store.create(CM, cm("a"))
    got = store.get(CM, "default", "a")
    got["data"]["k"] = "mutated"
    got["metadata"]["labels"] = {"evil": "1"}
    assert store.get(CM, "default", "a")["data"] == {"k": "v"}
    listed = store.list(CM).items[0]
    listed["data"]["k"] = "mutated"
    assert store.get(CM, "default", "a")["data"] == {"k": "v"}
    # what the caller passed in stays the caller's: later changes to it do not leak in
    src = cm("b", labels={"x": "1"})
    store.create(CM, src)
    src["data"]["k"] = "changed"
    src["metadata"]["labels"]["x"] = "2"
    assert store.get(CM, "default", "b")["metadata"]["labels"] == {"x": "1"}
    upd = store.get(CM, "default", "b")
    upd["data"] = {"k": "2"}
    out = store.update(CM, upd)
    assert upd["metadata"]["resourceVersion"] != out["metadata"]["resourceVersion"]
    # the written object handed back is the writer's (it gave its values up): changing it
    # changes nothing stored
    assert out["data"] == {"k": "2"}
    out["data"]["k"] = "3"
    out["metadata"]["labels"]["x"] = "3"
    assert store.get(CM, "default", "b")["data"] == {"k": "2"}
    assert store.get(CM, "default", "b")["metadata"]["labels"] == {"x": "1"}
    created = store.create(CM, cm("c"))
    assert created["metadata"]["resourceVersion"] == store.get(CM, "default", "c")["metadata"]["resourceVersion"]
    created["data"]["k"] = "changed"
    assert store.get(CM, "default", "c")["data"] == {"k": "v"}


def test_peek_reads_the_stored_state(store):
    with pytest.raises(NotFound):
        store.peek(CM, "default", "nope")
    store.create(CM, cm("a"))
    store.update(CM, {**store.get(CM, "default", "a"), "data": {"k": "2"}})
    seen = store.peek(CM, "default", "a")
    assert seen == store.get(CM, "default", "a") and seen["data"] == {"k": "2"}


def test_revisions_are_store_wide_and_increasing(store):
    seen = []
    seen.append(rv(store.create(CM, cm("a"))))
    seen.append(rv(store.create("apps/deployments", deploy("d"))))
    seen.append(rv(store.create(CM, cm("b", ns="x"))))
    a = store.get(CM, "default", "a")
    a["data"] = {"k": "2"}
    seen.append(rv(store.update(CM, a)))
    obj, gone = store.delete(CM, "x", "b")
    assert gone
    seen.append(rv(obj))
    assert seen == [1, 2, 3, 4, 5] and store.current_revision() == 5


# ---- update ---------------------------------------------------------------------------


def test_update_conflicts_on_stale_resource_version(store):
    a = store.create(CM, cm("a"))
    b = dict(a, data={"k": "2"})
    store.update(CM, b)
    stale = dict(a, data={"k": "3"})
    with pytest.raises(Conflict) as e:
        store.update(CM, stale)
    assert e.value.code == 409
    assert "the object has been modified; please apply your changes to the latest version" in str(e.value)
    # an empty resourceVersion is unconditional
    stale["metadata"] = dict(stale["metadata"], resourceVersion="")
    assert store.update(CM, stale)["data"] == {"k": "3"}
    del stale["metadata"]["resourceVersion"]
    stale["data"] = {"k": "4"}
    assert store.update(CM, stale)["data"] == {"k": "4"}


def test_update_not_found(store):
    with pytest.raises(NotFound):
        store.update(CM, cm("ghost"))


def test_update_uid_precondition_and_immutable_fields(store, clock):
    a = store.create(CM, cm("a"))
    wrong = json.loads(json.dumps(a))
    wrong["metadata"]["uid"] = "00000000-0000-0000-0000-000000000000"
    with pytest.raises(Conflict, match="Precondition failed: UID"):
        store.update(CM, wrong)
    clock.advance(100)
    b = json.loads(json.dumps(a))
    del b["metadata"]["uid"]
    b["metadata"]["creationTimestamp"] = "1999-01-01T00:00:00Z"
    b["metadata"]["deletionTimestamp"] = "1999-01-01T00:00:00Z"
    b["metadata"]["deletionGracePeriodSeconds"] = 5
    b["metadata"]["generation"] = 99
    b["data"] = {"k": "new"}
    out = store.update(CM, b)
    md = out["metadata"]
    assert md["uid"] == a["metadata"]["uid"]
    assert md["creationTimestamp"] == a["metadata"]["creationTimestamp"]
    assert "deletionTimestamp" not in md and "deletionGracePeriodSeconds" not in md
    assert md["generation"] == 2  # data changed; the client's generation is ignored


def test_generation_moves_on_spec_changes_only(store):
    d = store.create("apps/deployments", deploy("d"))
    assert d["metadata"]["generation"] == 1
    d["status"] = {"replicas": 1}
    d = store.update("apps/deployments", d)
    assert d["metadata"]["generation"] == 1
    d["metadata"]["labels"]["tier"] = "web"
    d["metadata"]["annotations"] = {"a": "b"}
    d = store.update("apps/deployments", d)
    assert d["metadata"]["generation"] == 1
    d["spec"]["replicas"] = 3
    d = store.update("apps/deployments", d)
    assert d["metadata"]["generation"] == 2
    d["extra"] = {"x": 1}  # anything outside metadata and status
    d = store.update("apps/deployments", d)
    assert d["metadata"]["generation"] == 3
    assert store.get("apps/deployments", "default", "d")["metadata"]["generation"] == 3


def test_noop_update_makes_no_revision_and_no_event(store):
    a = store.create(CM, cm("a", labels={"x": "1"}))
    w = store.watch(CM, resource_version=a["metadata"]["resourceVersion"])
    same = json.loads(json.dumps(a))
    same["metadata"]["labels"] = {"x": "1"}
    out = store.update(CM, same)
    assert out == a and store.current_revision() == 1
    del same["metadata"]["resourceVersion"]
    assert store.update(CM, same) == a
    assert drain(w) == []


# ---- delete, graceful deletion, finalizers --------------------------------------------


def test_delete_removes_with_a_new_revision(store):
    a = store.create(CM, cm("a"))
    w = store.watch(CM, resource_version="1")
    obj, deleted = store.delete(CM, "default", "a")
    assert deleted
    assert rv(obj) == 2 and obj["data"] == a["data"] and obj["metadata"]["uid"] == a["metadata"]["uid"]
    with pytest.raises(NotFound):
        store.get(CM, "default", "a")
    with pytest.raises(NotFound):
        store.delete(CM, "default", "a")
    assert summary(drain(w)) == [("DELETED", "a", 2)]
    again = store.create(CM, cm("a"))  # a new object under the old name
    assert again["metadata"]["uid"] != a["metadata"]["uid"] and rv(again) == 3


def test_delete_preconditions(store):
    a = store.create(CM, cm("a"))
    with pytest.raises(Conflict, match="Precondition failed: UID"):
        store.delete(CM, "default", "a", preconditions={"uid": "other"})
    with pytest.raises(Conflict, match="Precondition failed: ResourceVersion"):
        store.delete(CM, "default", "a", preconditions={"resourceVersion": "99"})
    _, deleted = store.delete(CM, "default", "a", preconditions={
        "uid": a["metadata"]["uid"], "resourceVersion": a["metadata"]["resourceVersion"]})
    assert deleted


def test_graceful_deletion(store, clock):
    store.create("pods", {"kind": "Pod", "metadata": {"name": "p", "namespace": "d"},
                          "spec": {"containers": []}})
    w = store.watch("pods", resource_version="1")
    clock.advance(10)
    obj, deleted = store.delete("pods", "d", "p", grace_period_seconds=30)
    assert not deleted
    md = obj["metadata"]
    assert md["deletionTimestamp"] == format_time(START + 40)
    assert md["deletionGracePeriodSeconds"] == 30 and md["generation"] == 2
    assert store.get("pods", "d", "p") == obj
    # a longer or equal grace period changes nothing
    clock.advance(5)
    assert store.delete("pods", "d", "p", grace_period_seconds=60) == (obj, False)
    assert store.delete("pods", "d", "p", grace_period_seconds=30) == (obj, False)
    # a shorter one moves the deadline, counted from the first request
    obj2, deleted = store.delete("pods", "d", "p", grace_period_seconds=10)
    assert not deleted
    assert obj2["metadata"]["deletionTimestamp"] == format_time(START + 20)
    assert obj2["metadata"]["deletionGracePeriodSeconds"] == 10
    assert obj2["metadata"]["generation"] == 2
    # grace 0 (force) removes it
    obj3, deleted = store.delete("pods", "d", "p", grace_period_seconds=0)
    assert deleted and rv(obj3) == rv(obj2) + 1
    assert kinds(drain(w)) == [("MODIFIED", "p"), ("MODIFIED", "p"), ("DELETED", "p")]


def test_finalizers_hold_deletion_until_removed(store, clock):
    store.create(CM, cm("a", finalizers=["example.com/guard"]))
    w = store.watch(CM, resource_version="1")
    clock.advance(7)
    obj, deleted = store.delete(CM, "default", "a")
    assert not deleted
    md = obj["metadata"]
    assert md["deletionTimestamp"] == format_time(START + 7)
    assert md["deletionGracePeriodSeconds"] == 0 and md["generation"] == 2
    # deleting again changes nothing
    assert store.delete(CM, "default", "a") == (obj, False)
    assert store.current_revision() == 2
    # updates cannot undo the deletion
    upd = json.loads(json.dumps(obj))
    del upd["metadata"]["deletionTimestamp"]
    upd["metadata"]["labels"] = {"still": "here"}
    upd = store.update(CM, upd)
    assert upd["metadata"]["deletionTimestamp"] == md["deletionTimestamp"]
    # removing the last finalizer removes the object
    upd["metadata"]["finalizers"] = []
    last = store.update(CM, upd)
    assert rv(last) == 4
    with pytest.raises(NotFound):
        store.get(CM, "default", "a")
    events = drain(w)
    assert kinds(events) == [("MODIFIED", "a"), ("MODIFIED", "a"), ("DELETED", "a")]
    # as kube-apiserver: DELETED carries the last stored state at the deletion's revision
    assert events[-1].object["metadata"]["resourceVersion"] == "4"
    assert events[-1].object["metadata"]["labels"] == {"still": "here"}


def test_finalizers_with_grace_period(store, clock):
    store.create(CM, cm("a", finalizers=["f1", "f2"]))
    obj, deleted = store.delete(CM, "default", "a", grace_period_seconds=30)
    assert not deleted and obj["metadata"]["deletionGracePeriodSeconds"] == 30
    obj["metadata"]["finalizers"] = ["f2"]
    obj = store.update(CM, obj)
    obj["metadata"]["finalizers"] = []
    obj = store.update(CM, obj)  # grace period not over: it stays until deleted with grace 0
    assert store.get(CM, "default", "a")["metadata"].get("finalizers") == []
    obj, deleted = store.delete(CM, "default", "a", grace_period_seconds=0)
    assert deleted
    assert store.list(CM).items == []


def test_force_delete_with_finalizers_keeps_object(store):
    store.create(CM, cm("a", finalizers=["f"]))
    store.delete(CM, "default", "a", grace_period_seconds=30)
    obj, deleted = store.delete(CM, "default", "a", grace_period_seconds=0)
    assert not deleted and obj["metadata"]["deletionGracePeriodSeconds"] == 0
    assert store.get(CM, "default", "a")["metadata"]["finalizers"] == ["f"]
    obj["metadata"].pop("finalizers")
    store.update(CM, obj)
    with pytest.raises(NotFound):
        store.get(CM, "default", "a")


# ---- list -----------------------------------------------------------------------------


def _populate(store):
    store.create(CM, cm("b", ns="ns1", labels={"app": "web", "tier": "front"}))
    store.create(CM, cm("a", ns="ns2", labels={"app": "web"}))
    store.create(CM, cm("a", ns="ns1", labels={"app": "db"}))
    store.create(CM, cm("c", ns="ns1"))
    store.create("pods", {"kind": "Pod", "metadata": {"name": "a", "namespace": "ns1"}})


def test_list_sorted_and_filtered(store):
    _populate(store)
    res = store.list(CM)
    assert [(o["metadata"]["namespace"], o["metadata"]["name"]) for o in res.items] == [
        ("ns1", "a"), ("ns1", "b"), ("ns1", "c"), ("ns2", "a")]
    assert res.resource_version == "5" and res.continue_token == "" and res.remaining_item_count is None
    assert names(store.list(CM, namespace="ns1").items) == ["a", "b", "c"]
    assert store.list(CM, namespace="nope").items == []
    assert store.list("nothing").items == []
    assert store.list(CM, resource_version="0").resource_version == "5"


def test_list_with_selectors(store):
    _populate(store)
    sel = store.list(CM, label_selector="app=web")
    assert [(o["metadata"]["namespace"], o["metadata"]["name"]) for o in sel.items] == [
        ("ns1", "b"), ("ns2", "a")]
    assert names(store.list(CM, label_selector="app in (web,db),tier!=front").items) == ["a", "a"]
    assert names(store.list(CM, label_selector="!app").items) == ["c"]
    assert names(store.list(CM, field_selector="metadata.name=a").items) == ["a", "a"]
    assert names(store.list(CM, field_selector="metadata.namespace!=ns1").items) == ["a"]
    both = store.list(CM, namespace="ns1", label_selector="app", field_selector="metadata.name!=b")
    assert names(both.items) == ["a"]
    with pytest.raises(BadRequest):
        store.list(CM, label_selector="app==(")
    with pytest.raises(BadRequest):
        store.list(CM, field_selector="spec.nope=1")


def test_list_at_a_revision(store):
    a = store.create(CM, cm("a", data={"k": "1"}))
    store.create(CM, cm("b"))
    a["data"] = {"k": "2"}
    store.update(CM, a)
    store.delete(CM, "default", "b")
    store.create(CM, cm("c"))
    at = lambda r: [(o["metadata"]["name"], o["data"]["k"], rv(o))
                    for o in store.list(CM, resource_version=str(r)).items]
    assert at(1) == [("a", "1", 1)]
    assert at(2) == [("a", "1", 1), ("b", "v", 2)]
    assert at(3) == [("a", "2", 3), ("b", "v", 2)]
    assert at(4) == [("a", "2", 3)]
    assert at(5) == [("a", "2", 3), ("c", "v", 5)]
    assert store.list(CM, resource_version="2").resource_version == "2"
    with pytest.raises(Timeout, match="Too large resource version"):
        store.list(CM, resource_version="6")
    with pytest.raises(BadRequest):
        store.list(CM, resource_version="abc")
    store.compact(3)
    assert at(3) == [("a", "2", 3), ("b", "v", 2)]
    with pytest.raises(Expired) as e:
        store.list(CM, resource_version="2")
    assert e.value.code == 410


def test_pagination_is_one_consistent_snapshot(store):
    for i in range(5):
        store.create(CM, cm(f"o{i}", data={"k": "old"}))
    page = store.list(CM, limit=2)
    assert names(page.items) == ["o0", "o1"] and page.resource_version == "5"
    assert page.continue_token and page.remaining_item_count == 3
    # changes after the first page do not show in later pages
    store.create(CM, cm("o25"))
    store.delete(CM, "default", "o3")
    o2 = store.get(CM, "default", "o2")
    o2["data"] = {"k": "new"}
    store.update(CM, o2)
    page2 = store.list(CM, limit=2, continue_token=page.continue_token)
    assert names(page2.items) == ["o2", "o3"] and page2.resource_version == "5"
    assert page2.items[0]["data"] == {"k": "old"}
    assert page2.remaining_item_count == 1
    page3 = store.list(CM, limit=2, continue_token=page2.continue_token)
    assert names(page3.items) == ["o4"]
    assert page3.continue_token == "" and page3.remaining_item_count is None
    # an exact fit leaves no token
    assert store.list(CM, limit=5).continue_token == ""


def test_pagination_with_selector_and_namespace(store):
    for i in range(6):
        store.create(CM, cm(f"o{i}", labels={"even": str(i % 2 == 0).lower()}))
        store.create(CM, cm(f"o{i}", ns="zz", labels={"even": "true"}))
    seen, token = [], ""
    while True:
        page = store.list(CM, namespace="default", label_selector="even=true", limit=2,
                          continue_token=token)
        assert page.remaining_item_count is None  # unknown when filtering
        seen += names(page.items)
        token = page.continue_token
        if not token:
            break
    assert seen == ["o0", "o2", "o4"]


def test_continue_token_errors(store):
    for i in range(4):
        store.create(CM, cm(f"o{i}"))
    page = store.list(CM, limit=1)
    with pytest.raises(BadRequest):
        store.list(CM, continue_token="not a token!")
    bogus = base64.urlsafe_b64encode(b'{"v":"other","rv":1,"start":"x"}').decode()
    with pytest.raises(BadRequest):
        store.list(CM, continue_token=bogus)
    with pytest.raises(BadRequest, match="not allowed when using continue"):
        store.list(CM, continue_token=page.continue_token, resource_version="3")
    for i in range(3):
        store.create(CM, cm(f"later{i}"))
    store.compact(store.current_revision())
    with pytest.raises(Expired) as e:
        store.list(CM, limit=1, continue_token=page.continue_token)
    assert e.value.code == 410
    assert str(e.value).startswith("The provided continue parameter is too old")


# ---- watch ----------------------------------------------------------------------------


def test_watch_initial_events_then_changes(store):
    store.create(CM, cm("b"))
    store.create(CM, cm("a"))
    store.create(CM, cm("c", ns="other"))
    w = store.watch(CM)
    a = store.get(CM, "default", "a")
    a["data"] = {"k": "2"}
    store.update(CM, a)
    store.delete(CM, "default", "b")
    store.create(CM, cm("d"))
    store.create("pods", {"kind": "Pod", "metadata": {"name": "p", "namespace": "default"}})
    assert summary(drain(w)) == [
        ("ADDED", "a", 2), ("ADDED", "b", 1), ("ADDED", "c", 3),
        ("MODIFIED", "a", 4), ("DELETED", "b", 5), ("ADDED", "d", 6)]
    assert drain(w) == []
    w0 = store.watch(CM, resource_version="0", namespace="default")
    assert kinds(drain(w0)) == [("ADDED", "a"), ("ADDED", "d")]


def test_watch_from_revision_replays_everything_after_it(store):
    store.create(CM, cm("a"))
    for i in range(3):
        a = store.get(CM, "default", "a")
        a["data"] = {"k": str(i)}
        store.update(CM, a)
    store.create("pods", {"kind": "Pod", "metadata": {"name": "p", "namespace": "default"}})
    store.delete(CM, "default", "a")
    w = store.watch(CM, resource_version="2")
    assert summary(drain(w)) == [("MODIFIED", "a", 3), ("MODIFIED", "a", 4), ("DELETED", "a", 6)]
    store.create(CM, cm("b"))
    assert summary(drain(w)) == [("ADDED", "b", 7)]
    latest = store.watch(CM, resource_version=str(store.current_revision()))
    assert drain(latest) == []
    with pytest.raises(Timeout):
        store.watch(CM, resource_version=str(store.current_revision() + 1))
    with pytest.raises(BadRequest):
        store.watch(CM, resource_version="-1")


def test_watch_from_revision_matches_live_stream(store):
    live = store.watch(CM, resource_version="0")
    store.create(CM, cm("a", labels={"x": "1"}))
    a = store.get(CM, "default", "a")
    a["metadata"]["labels"] = {"x": "2"}
    store.update(CM, a)
    store.delete(CM, "default", "a", grace_period_seconds=5)
    store.delete(CM, "default", "a")
    replay = store.watch(CM, resource_version="1")
    assert [(e.type, e.object) for e in drain(live)][1:] == \
        [(e.type, e.object) for e in drain(replay)]


def test_watch_namespace_filter(store):
    w = store.watch(CM, namespace="ns1", resource_version="0")
    store.create(CM, cm("a", ns="ns1"))
    store.create(CM, cm("a", ns="ns2"))
    store.delete(CM, "ns2", "a")
    store.delete(CM, "ns1", "a")
    assert kinds(drain(w)) == [("ADDED", "a"), ("DELETED", "a")]


def test_selector_watch_turns_modifications_into_adds_and_deletes(store):
    store.create(CM, cm("a", labels={"app": "web"}))
    store.create(CM, cm("b", labels={"app": "db"}))
    w = store.watch(CM, label_selector="app=web")
    replayed_from = store.current_revision()

    def relabel(name, app):
        o = store.get(CM, "default", name)
        o["metadata"]["labels"] = {"app": app}
        return store.update(CM, o)

    relabel("a", "db")     # stops matching -> DELETED (previous state, new revision)
    relabel("b", "web")    # starts matching -> ADDED
    b = store.get(CM, "default", "b")
    b["data"] = {"k": "2"}
    store.update(CM, b)    # still matching -> MODIFIED
    relabel("a", "cache")  # never matched -> nothing
    store.delete(CM, "default", "a")  # not matching -> nothing
    store.delete(CM, "default", "b")  # matching -> DELETED
    events = drain(w)
    assert summary(events) == [("ADDED", "a", 1), ("DELETED", "a", 3), ("ADDED", "b", 4),
                               ("MODIFIED", "b", 5), ("DELETED", "b", 8)]
    assert events[1].object["metadata"]["labels"] == {"app": "web"}
    # the same from history
    replay = store.watch(CM, label_selector="app=web", resource_version=str(replayed_from))
    assert summary(drain(replay)) == summary(events)[1:]
    fw = store.watch(CM, field_selector="metadata.name=b", resource_version="1")
    assert kinds(drain(fw)) == [("ADDED", "b"), ("MODIFIED", "b"), ("MODIFIED", "b"),
                                      ("DELETED", "b")]
    with pytest.raises(BadRequest):
        store.watch(CM, label_selector="a in (")


def test_field_equality_watches_follow_the_field_as_it_changes(store):
    """Watches on ``field=value`` (each node agent's spec.nodeName=NODE) see a pod arrive,
    change and leave, and nothing of the other values' pods."""
    def pod(name, node=""):
        return {"kind": "Pod", "apiVersion": "v1", "metadata": {"name": name, "namespace": "d"},
                "spec": {"nodeName": node} if node else {}}

    on_a = store.watch("pods", field_selector="spec.nodeName=a")
    on_b = store.watch("pods", field_selector="spec.nodeName=b,metadata.name!=q")
    not_a = store.watch("pods", field_selector="spec.nodeName!=a")
    store.create("pods", pod("p"))
    store.create("pods", pod("q", "b"))                  # b's, but q is excluded by name
    p = store.get("pods", "d", "p")
    p["spec"]["nodeName"] = "a"
    store.update("pods", p)                             # unassigned -> a
    p = store.get("pods", "d", "p")
    p["spec"]["nodeName"] = "b"
    store.update("pods", p)                             # a -> b
    store.delete("pods", "d", "p")
    assert kinds(drain(on_a)) == [("ADDED", "p"), ("DELETED", "p")]
    assert kinds(drain(on_b)) == [("ADDED", "p"), ("DELETED", "p")]
    assert kinds(drain(not_a)) == [("ADDED", "p"), ("ADDED", "q"), ("DELETED", "p"), ("ADDED", "p"),
                                   ("DELETED", "p")]
    on_a.stop()
    store.create("pods", pod("r", "a"))
    assert drain(on_a) == []


def test_send_initial_events_ends_with_a_bookmark(store):
    store.create(CM, cm("b"))
    store.create(CM, cm("a"))
    w = store.watch(CM, send_initial_events=True, allow_bookmarks=True)
    events = drain(w)
    assert kinds(events[:2]) == [("ADDED", "a"), ("ADDED", "b")]
    mark = events[2]
    assert mark.type == "BOOKMARK" and len(events) == 3
    assert mark.object["kind"] == "ConfigMap" and mark.object["apiVersion"] == "v1"
    assert mark.object["metadata"]["resourceVersion"] == "2"
    assert mark.object["metadata"]["annotations"] == {INITIAL_EVENTS_END: "true"}
    store.create(CM, cm("c"))
    assert kinds(drain(w)) == [("ADDED", "c")]
    # with a version: a snapshot at least that new, then the bookmark
    w2 = store.watch(CM, send_initial_events=True, resource_version="1", allow_bookmarks=True)
    events = drain(w2)
    assert [e.type for e in events] == ["ADDED"] * 3 + ["BOOKMARK"]
    assert events[-1].object["metadata"]["resourceVersion"] == "3"


def test_bookmarks(store):
    store.create(CM, cm("a"))
    quiet = store.watch(CM, resource_version="1")
    w = store.watch(CM, resource_version="1", allow_bookmarks=True)
    store.create("pods", {"kind": "Pod", "metadata": {"name": "p", "namespace": "d"}})
    w.bookmark()
    quiet.bookmark()
    assert drain(quiet) == []
    [mark] = drain(w)
    assert mark == WatchEvent("BOOKMARK", {"kind": "ConfigMap", "apiVersion": "v1",
                                           "metadata": {"resourceVersion": "2"}})
    crd = store.watch("example.com/widgets", resource_version="2", allow_bookmarks=True)
    store.send_bookmarks()
    assert drain(crd)[0].object == {"kind": "", "apiVersion": "",
                                          "metadata": {"resourceVersion": "2"}}
    assert [e.type for e in drain(w)] == ["BOOKMARK"]


def test_watch_stop_and_context_manager(store):
    with store.watch(CM) as w:
        store.create(CM, cm("a"))
    assert w.stopped
    assert drain(w) == []
    store.create(CM, cm("b"))
    assert drain(w) == []


def test_watch_events_share_one_object_that_never_reaches_the_store(store):
    # The watches following a write share its decoded object (as client-go's shared
    # informers share one cache); whatever a consumer does to it, reads, lists, new watches
    # and replays decode the stored state afresh.
    w1 = store.watch(CM)
    w2 = store.watch(CM)
    store.create(CM, cm("a"))
    [e1] = drain(w1)
    [e2] = drain(w2)
    assert e1.object is e2.object
    e1.object["data"]["k"] = "mutated"
    assert store.get(CM, "default", "a")["data"] == {"k": "v"}
    assert store.list(CM).items[0]["data"] == {"k": "v"}
    [initial] = drain(store.watch(CM))
    assert initial.object["data"] == {"k": "v"}
    [replayed] = drain(store.watch(CM, resource_version="0"))
    assert replayed.object["data"] == {"k": "v"}
    got = store.get(CM, "default", "a")
    got["data"]["k"] = "mine"
    assert store.get(CM, "default", "a")["data"] == {"k": "v"}
    assert store.list(CM).items[0] is not store.list(CM).items[0]


def test_watch_expired_after_compaction(store):
    for i in range(5):
        store.create(CM, cm(f"o{i}"))
    store.compact(3)
    with pytest.raises(Expired) as e:
        store.watch(CM, resource_version="2")
    assert e.value.code == 410 and str(e.value) == "too old resource version: 2 (3)"
    assert kinds(drain(store.watch(CM, resource_version="3"))) == [("ADDED", "o3"), ("ADDED", "o4")]
    # compaction keeps the latest state of every live object
    assert names(store.list(CM).items) == [f"o{i}" for i in range(5)]
    store.compact(2)  # going back is a no-op
    assert store.compacted_revision() == 3
    store.compact(100)  # clamped to the current revision
    assert store.compacted_revision() == 5
    assert drain(store.watch(CM, resource_version="5")) == []


def test_automatic_compaction_keeps_history_revisions(make_store):
    store = make_store(history=5)
    store.create(CM, cm("a", data={"k": "0"}))
    store.create(CM, cm("gone"))
    store.delete(CM, "default", "gone")
    for i in range(1, 10):
        a = store.get(CM, "default", "a")
        a["data"] = {"k": str(i)}
        store.update(CM, a)
    assert store.current_revision() == 12
    assert store.compacted_revision() == 7
    with pytest.raises(Expired):
        store.watch(CM, resource_version="6")
    assert len(drain(store.watch(CM, resource_version="7"))) == 5
    assert [o["data"]["k"] for o in store.list(CM, resource_version="7").items] == ["4"]
    assert [o["data"]["k"] for o in store.list(CM).items] == ["9"]


def test_compaction_keeps_untouched_objects_and_history_after_it(store):
    store.create(CM, cm("stable"))
    store.create(CM, cm("busy"))
    for i in range(4):
        o = store.get(CM, "default", "busy")
        o["data"] = {"k": str(i)}
        store.update(CM, o)
    store.delete(CM, "default", "busy")
    store.create(CM, cm("busy", data={"k": "reborn"}))
    store.compact(4)
    assert [(o["metadata"]["name"], o["data"]["k"]) for o in
            store.list(CM, resource_version="4").items] == [("busy", "1"), ("stable", "v")]
    assert [(o["metadata"]["name"], o["data"]["k"]) for o in
            store.list(CM, resource_version="7").items] == [("stable", "v")]
    assert summary(drain(store.watch(CM, resource_version="4"))) == [
        ("MODIFIED", "busy", 5), ("MODIFIED", "busy", 6), ("DELETED", "busy", 7),
        ("ADDED", "busy", 8)]
    sel = store.watch(CM, resource_version="4", field_selector="metadata.name=busy")
    assert len(drain(sel)) == 4


# ---- asyncio --------------------------------------------------------------------------


def test_async_consumption(store):
    async def main():
        w = store.watch(CM, resource_version="0")
        got = []

        async def consume():
            async for event in w:
                got.append((event.type, event.object["metadata"]["name"]))

        task = asyncio.ensure_future(consume())
        await asyncio.sleep(0)
        store.create(CM, cm("a"))
        await asyncio.sleep(0)
        assert got == [("ADDED", "a")]
        store.create(CM, cm("b"))
        store.delete(CM, "default", "a")
        for _ in range(3):
            await asyncio.sleep(0)
        assert got == [("ADDED", "a"), ("ADDED", "b"), ("DELETED", "a")]
        w.stop()
        await asyncio.wait_for(task, 1)
        return got

    assert len(asyncio.run(main())) == 3


def test_async_next_timeout_and_close(store):
    async def main():
        loop = asyncio.get_running_loop()
        w = store.watch(CM, resource_version="0")
        t0 = loop.time()
        assert await w.next(timeout=0.01) is None
        assert loop.time() - t0 >= 0.009
        assert not w.stopped
        loop.call_soon(store.create, CM, cm("a"))
        event = await w.next(timeout=5)
        assert event is not None and event.type == "ADDED"
        # two consumers waiting on one watch: both are woken, each event goes to one
        t1 = asyncio.ensure_future(w.next(timeout=5))
        t2 = asyncio.ensure_future(w.next(timeout=0.05))
        await asyncio.sleep(0)
        store.create(CM, cm("b"))
        results = await asyncio.gather(t1, t2)
        assert sorted(e is None for e in results) == [False, True]
        # closing the store ends the watch after what was buffered
        store.create(CM, cm("c"))
        waiter = asyncio.ensure_future(w.next())
        await asyncio.sleep(0)
        closing = store.watch(CM, resource_version=str(store.current_revision()))
        nxt = asyncio.ensure_future(closing.next())
        await asyncio.sleep(0)
        store.close()
        assert (await waiter).object["metadata"]["name"] == "c"
        assert await nxt is None
        assert w.stopped and await w.next() is None
        return True

    assert asyncio.run(main())


def test_watch_in_a_virtual_time_loop(store):
    from kvert.clock import VirtualClock

    vclock = VirtualClock()

    async def main():
        loop = asyncio.get_running_loop()
        w = store.watch(CM, resource_version=str(store.current_revision()))
        t0 = loop.time()
        assert await w.next(timeout=3600) is None  # an hour of virtual time, instantly
        assert loop.time() - t0 >= 3600

        async def writer():
            await vclock.sleep(30)
            store.create(CM, cm("late"))

        task = asyncio.ensure_future(writer())
        event = await w.next(timeout=60)
        await task
        assert event is not None and event.object["metadata"]["name"] == "late"
        assert 30 <= loop.time() - t0 - 3600 < 31
        w.stop()

    vclock.run(main())

