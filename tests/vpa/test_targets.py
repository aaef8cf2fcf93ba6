"""PodIndex: matching many selectors against the pods grouped by label set answers what a
filter over every pod answers."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from kvert.api.selectors import LabelSelector
from kvert.vpa.targets import PodIndex, select_pods

KEYS = ["app", "tier", "env", "example.com/team"]
VALUES = ["a", "b", "c"]
NAMESPACES = ["default", "other"]

label_sets = st.dictionaries(st.sampled_from(KEYS), st.sampled_from(VALUES), max_size=3)


@st.composite
def pod_lists(draw):
    pods = []
    for i, (ns, labels) in enumerate(draw(st.lists(st.tuples(st.sampled_from(NAMESPACES + [None]),
                                                             st.one_of(st.none(), label_sets)),
                                                   max_size=25))):
        # names unique within a namespace, drawn in no particular order
        name = f"{draw(st.sampled_from(['web', 'db', 'job']))}-{i:02d}"
        meta = {"name": name}
        if ns is not None:              # no namespace: read as "default"
            meta["namespace"] = ns
        if labels is not None:
            meta["labels"] = labels
        pods.append({"metadata": meta})
    return pods


expressions = st.one_of(
    st.builds(lambda k, op, vs: {"key": k, "operator": op, "values": vs},
              st.sampled_from(KEYS), st.sampled_from(["In", "NotIn"]),
              st.lists(st.sampled_from(VALUES), min_size=1, max_size=3, unique=True)),
    st.builds(lambda k, op: {"key": k, "operator": op},
              st.sampled_from(KEYS), st.sampled_from(["Exists", "DoesNotExist"])),
)
selectors = st.one_of(
    st.none(),                                       # nothing
    st.just({}),                                     # everything
    st.fixed_dictionaries({}, optional={"matchLabels": label_sets,
                                        "matchExpressions": st.lists(expressions, max_size=3)}),
)


def naive_matches(sel, labels):
    """Kubernetes' semantics of a structured label selector, written out."""
    if sel is None:
        return False
    for k, v in (sel.get("matchLabels") or {}).items():
        if labels.get(k) != v:
            return False
    for e in sel.get("matchExpressions") or []:
        present = e["key"] in labels
        op = e["operator"]
        if op == "In" and not (present and labels[e["key"]] in e["values"]):
            return False
        if op == "NotIn" and present and labels[e["key"]] in e["values"]:
            return False
        if op == "Exists" and not present:
            return False
        if op == "DoesNotExist" and present:
            return False
    return True


def naive_select(pods, namespace, sel):
    out = [p for p in pods
           if p["metadata"].get("namespace", "default") == namespace
           and naive_matches(sel, p["metadata"].get("labels") or {})]
    return sorted(out, key=lambda p: p["metadata"]["name"])


@settings(max_examples=300, deadline=None)
@given(pods=pod_lists(), sels=st.lists(selectors, min_size=1, max_size=4),
       namespace=st.sampled_from(NAMESPACES + ["empty"]))
def test_pod_index_select_equals_a_filter_over_every_pod(pods, sels, namespace):
    index = PodIndex(pods)
    for sel in sels:                                  # one index answers many selectors
        selector = LabelSelector.from_dict(sel)
        expected = naive_select(pods, namespace, sel)
        got = index.select(namespace, selector)
        assert [id(p) for p in got] == [id(p) for p in expected]   # the pods themselves
        assert [id(p) for p in select_pods(pods, namespace, selector)] == [id(p) for p in expected]
        assert [id(p) for p in select_pods(index, namespace, selector)] == [id(p) for p in expected]


def test_replicas_sharing_labels_are_all_selected_by_name():
    pods = [{"metadata": {"name": n, "namespace": "default", "labels": {"app": "web"}}}
            for n in ("web-c", "web-a", "web-b")]
    pods.append({"metadata": {"name": "web-0", "namespace": "other", "labels": {"app": "web"}}})
    index = PodIndex(pods)
    web = LabelSelector.from_dict({"matchLabels": {"app": "web"}})
    assert [p["metadata"]["name"] for p in index.select("default", web)] == ["web-a", "web-b", "web-c"]
    assert [p["metadata"]["name"] for p in index.select("other", web)] == ["web-0"]
    assert index.select("default", LabelSelector.nothing()) == []
    assert index.select("nowhere", LabelSelector.everything()) == []
