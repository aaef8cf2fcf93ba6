"""The node cache's pod indexes, the copy-on-write view and filtering with nominated pods."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from kvert.api.selectors import LabelSelector
from kvert.scheduler.cache import NodeCache
from kvert.scheduler.framework import CycleState, Diagnosis
from kvert.scheduler.podindex import PodQuery, query_for_term
from kvert.scheduler.view import CacheView

from .helpers import Bench, node, pod


def labelled(name, labels, ns="default", node_name="", **kw):
    p = pod(name, node_name=node_name, ns=ns, **kw)
    p["metadata"]["labels"] = labels
    return p


# ---- per-query counts: incremental == recounted ------------------------------------------------

APPS = ["web", "db", "cache"]
NAMESPACES = ["default", "prod"]
ops = st.lists(st.tuples(st.sampled_from(["add", "remove", "relabel", "terminate", "node"]),
                         st.integers(0, 11), st.sampled_from(APPS), st.integers(0, 3)),
               max_size=60)
queries = [PodQuery(frozenset({"default"}), None, LabelSelector.from_dict({"matchLabels": {"app": "web"}})),
           PodQuery(frozenset(), LabelSelector.everything(),
                    LabelSelector.from_dict({"matchExpressions": [
                        {"key": "app", "operator": "In", "values": ["db", "cache"]}]})),
           PodQuery(frozenset(), LabelSelector.from_dict({"matchLabels": {"env": "prod"}}),
                    LabelSelector.everything()),
           PodQuery(frozenset({"default", "prod"}), None, LabelSelector.everything(),
                    skip_terminating=True),
           # first counted at the end from the pods indexed by the label pairs they require
           PodQuery(frozenset({"default", "prod"}), None,
                    LabelSelector.from_dict({"matchExpressions": [
                        {"key": "app", "operator": "In", "values": ["web", "db"]}]}),
                    skip_terminating=True),
           PodQuery(frozenset({"prod"}), None, LabelSelector.from_dict({"matchLabels": {"app": "cache"}}))]


def brute(cache: NodeCache, q: PodQuery) -> np.ndarray:
    out = np.zeros(cache.capacity, np.int64)
    for e, row in cache.accounted_entries():
        if q.matches(e, lambda ns: cache.namespace_labels.get(ns) or {}):
            out[row] += 1
    return out


@settings(max_examples=60, deadline=None)
@given(ops)
def test_incremental_counts_equal_a_recount(operations):
    cache = NodeCache(capacity=8)
    cache.set_namespace({"metadata": {"name": "prod", "labels": {"env": "prod"}}})
    for i in range(3):
        cache.add_node(node(f"n{i}"))
    for q in queries[:2]:            # two queries tracked from the start, two from the end
        cache.count_matching(q)
    pods: dict[int, dict] = {}
    for op, i, app, where in operations:
        if op == "add" and i not in pods and where < 3:
            p = labelled(f"p{i}", {"app": app}, ns=NAMESPACES[i % 2], node_name=f"n{where}")
            pods[i] = p
            cache.add_pod(p)
        elif op == "remove" and i in pods:
            cache.remove_pod(pods.pop(i))
        elif op in ("relabel", "terminate") and i in pods:
            old = pods[i]
            new = {**old, "metadata": {**old["metadata"], "resourceVersion": str(len(operations) + i)}}
            if op == "relabel":
                new["metadata"]["labels"] = {"app": app}
            else:
                new["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
            cache.update_pod(old, new)
            pods[i] = new
        elif op == "node":
            name = f"n{where % 4}"
            if name in cache.row_of:
                cache.remove_node({"metadata": {"name": name}})
            else:
                cache.add_node(node(name))
    for q in queries:
        assert cache.count_matching(q).tolist() == brute(cache, q).tolist()


def test_affinity_term_namespaces_default_to_the_owners():
    q = query_for_term({"labelSelector": {"matchLabels": {"a": "b"}}, "topologyKey": "zone"}, "team")
    assert q.namespaces == frozenset({"team"}) and q.ns_selector is None
    q = query_for_term({"labelSelector": {}, "namespaceSelector": {}, "topologyKey": "zone"}, "team")
    assert q.namespaces == frozenset() and q.ns_selector.matches({"any": "thing"})
    # a term without a labelSelector matches no pod (labels.Nothing)
    q = query_for_term({"topologyKey": "zone"}, "team")
    assert not q.selector.matches({})


# ---- the copy-on-write view ------------------------------------------------------------------------


def test_view_changes_requests_ports_and_pods_without_touching_the_cache():
    web = pod("web", cpu="1", node_name="n1")
    web["spec"]["containers"][0]["ports"] = [{"containerPort": 80, "hostPort": 8080}]
    cache = NodeCache()
    cache.add_node(node("n1"))
    cache.add_node(node("n2"))
    cache.add_pod(web)
    before = cache.req.copy(), cache.pod_count.copy(), dict(cache.used_ports)
    view = CacheView(cache)
    view.remove_pod(web)
    view.add_pod(pod("big", cpu="3"), "n2")
    r1, r2 = cache.row_of["n1"], cache.row_of["n2"]
    assert view.req[r1, 0] == 0 and view.req[r2, 0] == 3000
    assert view.pod_count[r1] == 0 and view.pod_count[r2] == 1
    assert view.port_count[r1] == 0 and "n1" not in {k for k, v in view.used_ports.items() if v}
    assert [e.key for e in view.node_entries("n2")] == ["default/big"]
    assert view.node_entries("n1") == [] and view.entry(web["metadata"]["uid"]) is None
    assert view.node_info(r2).requested == {"cpu": 3000}
    # the cache is as it was
    assert (cache.req == before[0]).all() and (cache.pod_count == before[1]).all()
    assert cache.used_ports == before[2] and len(cache.node_entries("n1")) == 1
    # a view of a view sees the first view's pods
    inner = CacheView(view)
    inner.remove_pod(view.node_entries("n2")[0])
    assert inner.req[r2, 0] == 0 and view.req[r2, 0] == 3000


def test_filters_see_the_view():
    b = Bench([node("n1", cpu="2")], [pod("low", cpu="2", node_name="n1")])
    incoming = pod("high", cpu="1")
    names, _, _ = b.filter(incoming)
    assert names == []
    view = CacheView(b.cache)
    view.remove_pod(b.cache.node_entries("n1")[0])
    from kvert.scheduler.snapshot import NodeSet
    nodes = NodeSet(view, np.array([b.cache.row_of["n1"]]))
    state = CycleState()
    b.fw.run_pre_filter(state, incoming, b.nodes())
    ok = b.fw.run_filters(state, incoming, nodes, Diagnosis())
    assert len(ok) == 1


# ---- nominated pods ------------------------------------------------------------------------------


def test_nodes_keep_room_for_pods_nominated_there_of_equal_or_higher_priority():
    b = Bench([node("n1", cpu="2"), node("n2", cpu="2")])
    b.cache.add_nominated(pod("preemptor", cpu="2", priority=100), "n1")
    names, diagnosis, _ = b.filter(pod("low", cpu="1", priority=10))
    assert names == ["n2"]
    assert diagnosis.reason_histogram() == {"Insufficient cpu": 1}
    # a pod of higher priority than the nominated one ignores it
    names, _, _ = b.filter(pod("higher", cpu="1", priority=1000))
    assert sorted(names) == ["n1", "n2"]
    # the nominated pod itself is not counted against itself
    nominated = b.cache.nominated_pods("n1")[0]
    names, _, _ = b.filter(nominated)
    assert sorted(names) == ["n1", "n2"]
    b.cache.delete_nominated(nominated)
    names, _, _ = b.filter(pod("low2", cpu="1", priority=10))
    assert sorted(names) == ["n1", "n2"]


def test_state_clone_clones_plugin_states_that_can():
    class Counts:
        def __init__(self, n):
            self.n = n

        def clone(self):
            return Counts(self.n)

    s = CycleState()
    s.write("a", Counts(1))
    s.write("b", [1])
    c = s.clone()
    c.read("a").n = 2
    assert s.read("a").n == 1 and c.read("b") is s.read("b")
