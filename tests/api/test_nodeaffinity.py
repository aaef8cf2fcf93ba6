"""Node affinity: the kubernetes.io "Assigning Pods to Nodes" examples and the scheduler's
component-helpers nodeaffinity rules."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kvert.api.nodeaffinity import (
    NodeSelector, NodeSelectorTerm, PreferredSchedulingTerms, RequiredNodeAffinity,
    node_selector_matches, node_selector_requirement_matches, node_selector_term_matches,
    preferred_node_affinity_score, required_node_affinity_matches, validate_node_selector,
    validate_node_selector_requirement, validate_node_selector_term,
)
from kvert.api.selectors import LabelSelector


def node(name="node-1", **labels):
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels}}


def expr(key, op, *values):
    d = {"key": key, "operator": op}
    if values:
        d["values"] = list(values)
    return d


def term(*exprs, fields=()):
    t = {}
    if exprs:
        t["matchExpressions"] = list(exprs)
    if fields:
        t["matchFields"] = list(fields)
    return t


def pod_with(required=None, preferred=None, node_selector=None):
    spec: dict = {"containers": [{"name": "c", "image": "nginx"}]}
    na: dict = {}
    if required is not None:
        na["requiredDuringSchedulingIgnoredDuringExecution"] = required
    if preferred is not None:
        na["preferredDuringSchedulingIgnoredDuringExecution"] = preferred
    if na:
        spec["affinity"] = {"nodeAffinity": na}
    if node_selector is not None:
        spec["nodeSelector"] = node_selector
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": spec}


ZONE = "topology.kubernetes.io/zone"

# --- kubernetes.io "Assigning Pods to Nodes" ------------------------------------------------

DOCS_POD = pod_with(
    required={"nodeSelectorTerms": [term(expr(ZONE, "In", "antarctica-east1",
                                              "antarctica-west1"))]},
    preferred=[{"weight": 1, "preference": term(expr("another-node-label-key", "In",
                                                     "another-node-label-value"))}],
)

WEIGHT_POD = pod_with(
    required={"nodeSelectorTerms": [term(expr("kubernetes.io/os", "In", "linux"))]},
    preferred=[
        {"weight": 1, "preference": term(expr("label-1", "In", "key-1"))},
        {"weight": 50, "preference": term(expr("label-2", "In", "key-2"))},
    ],
)


class TestDocumentedExamples:
    def test_required_zone(self):
        assert required_node_affinity_matches(DOCS_POD, node(**{ZONE: "antarctica-east1"}))
        assert required_node_affinity_matches(DOCS_POD, node(**{ZONE: "antarctica-west1"}))
        assert not required_node_affinity_matches(DOCS_POD, node(**{ZONE: "us-east1"}))
        assert not required_node_affinity_matches(DOCS_POD, node())

    def test_preferred_label(self):
        n = node(**{ZONE: "antarctica-east1", "another-node-label-key": "another-node-label-value"})
        assert preferred_node_affinity_score(DOCS_POD, n) == 1
        assert preferred_node_affinity_score(DOCS_POD, node(**{ZONE: "antarctica-east1"})) == 0

    def test_weights(self):
        linux1 = node("a", **{"kubernetes.io/os": "linux", "label-1": "key-1"})
        linux2 = node("b", **{"kubernetes.io/os": "linux", "label-2": "key-2"})
        both = node("c", **{"kubernetes.io/os": "linux", "label-1": "key-1", "label-2": "key-2"})
        assert required_node_affinity_matches(WEIGHT_POD, linux1)
        assert required_node_affinity_matches(WEIGHT_POD, linux2)
        assert preferred_node_affinity_score(WEIGHT_POD, linux1) == 1
        assert preferred_node_affinity_score(WEIGHT_POD, linux2) == 50  # the scheduler prefers it
        assert preferred_node_affinity_score(WEIGHT_POD, both) == 51

    def test_node_selector_disktype(self):
        p = pod_with(node_selector={"disktype": "ssd"})
        assert required_node_affinity_matches(p, node(disktype="ssd"))
        assert not required_node_affinity_matches(p, node(disktype="hdd"))
        assert not required_node_affinity_matches(p, node())

    def test_node_selector_and_affinity_both_required(self):
        p = pod_with(node_selector={"disktype": "ssd"},
                     required={"nodeSelectorTerms": [term(expr(ZONE, "In", "z1"))]})
        assert required_node_affinity_matches(p, node(disktype="ssd", **{ZONE: "z1"}))
        assert not required_node_affinity_matches(p, node(disktype="ssd", **{ZONE: "z2"}))
        assert not required_node_affinity_matches(p, node(**{ZONE: "z1"}))

    def test_terms_ored_expressions_anded(self):
        ns = {"nodeSelectorTerms": [
            term(expr("a", "In", "1"), expr("b", "In", "2")),
            term(expr("c", "Exists")),
        ]}
        assert node_selector_matches(ns, node(a="1", b="2"))
        assert not node_selector_matches(ns, node(a="1"))
        assert node_selector_matches(ns, node(c="x"))
        assert not node_selector_matches(ns, node(b="2"))

    def test_anti_affinity_operators(self):
        ns = {"nodeSelectorTerms": [term(expr("dedicated", "DoesNotExist"),
                                         expr(ZONE, "NotIn", "z-bad"))]}
        assert node_selector_matches(ns, node())
        assert node_selector_matches(ns, node(**{ZONE: "z1"}))
        assert not node_selector_matches(ns, node(**{ZONE: "z-bad"}))
        assert not node_selector_matches(ns, node(dedicated="gpu"))


# --- requirement operators ------------------------------------------------------------------


@pytest.mark.parametrize("req,labels,expected", [
    (expr("k", "In", "a", "b"), {"k": "a"}, True),
    (expr("k", "In", "a", "b"), {"k": "c"}, False),
    (expr("k", "In", "a"), {}, False),
    (expr("k", "NotIn", "a"), {"k": "b"}, True),
    (expr("k", "NotIn", "a"), {}, True),
    (expr("k", "NotIn", "a"), {"k": "a"}, False),
    (expr("k", "Exists"), {"k": ""}, True),
    (expr("k", "Exists"), {}, False),
    (expr("k", "DoesNotExist"), {}, True),
    (expr("k", "DoesNotExist"), {"k": "x"}, False),
    (expr("cpus", "Gt", "4"), {"cpus": "8"}, True),
    (expr("cpus", "Gt", "4"), {"cpus": "4"}, False),
    (expr("cpus", "Gt", "4"), {"cpus": "10"}, True),  # numeric, not lexical
    (expr("cpus", "Lt", "4"), {"cpus": "3"}, True),
    (expr("cpus", "Lt", "4"), {"cpus": "-3"}, True),  # the label may be negative
    (expr("cpus", "Lt", "4"), {"cpus": "4"}, False),
    (expr("cpus", "Gt", "4"), {"cpus": "eight"}, False),
    (expr("cpus", "Gt", "4"), {}, False),
    # invalid requirements never match
    (expr("cpus", "Gt", "4", "5"), {"cpus": "8"}, False),
    (expr("cpus", "Gt", "four"), {"cpus": "8"}, False),
    (expr("cpus", "Gt"), {"cpus": "8"}, False),
    (expr("k", "In"), {"k": ""}, False),
    (expr("k", "Exists", "a"), {"k": "a"}, False),
    (expr("k", "Equals", "a"), {"k": "a"}, False),
    (expr("-bad", "Exists"), {"-bad": "a"}, False),
    (expr("k", "In", "bad value"), {"k": "bad value"}, False),
])
def test_requirement(req, labels, expected):
    assert node_selector_requirement_matches(req, labels) is expected


# --- terms, fields, edge cases ----------------------------------------------------------------


class TestTerms:
    def test_empty_term_matches_nothing(self):
        assert not node_selector_term_matches({}, node())
        assert not node_selector_term_matches(None, node())
        assert not node_selector_term_matches({"matchExpressions": [], "matchFields": []}, node())
        assert not node_selector_matches({"nodeSelectorTerms": [{}]}, node())

    def test_no_terms_matches_nothing(self):
        assert not node_selector_matches({"nodeSelectorTerms": []}, node())
        assert not node_selector_matches({}, node())
        assert not node_selector_matches(None, node())
        p = pod_with(required={"nodeSelectorTerms": []})
        assert not required_node_affinity_matches(p, node())

    def test_match_fields_metadata_name(self):
        t = term(fields=[expr("metadata.name", "In", "node-1")])
        assert node_selector_term_matches(t, node("node-1"))
        assert not node_selector_term_matches(t, node("node-2"))
        t2 = term(fields=[expr("metadata.name", "NotIn", "node-1")])
        assert not node_selector_term_matches(t2, node("node-1"))
        assert node_selector_term_matches(t2, node("node-2"))

    def test_match_fields_and_expressions_anded(self):
        t = term(expr("a", "In", "1"), fields=[expr("metadata.name", "In", "node-1")])
        assert node_selector_term_matches(t, node("node-1", a="1"))
        assert not node_selector_term_matches(t, node("node-2", a="1"))
        assert not node_selector_term_matches(t, node("node-1", a="2"))

    def test_match_fields_need_exactly_one_value_and_in_or_notin(self):
        for bad in (expr("metadata.name", "In", "n1", "n2"), expr("metadata.name", "In"),
                    expr("metadata.name", "Exists")):
            assert not node_selector_term_matches(term(fields=[bad]), node("n1"))

    def test_match_fields_skipped_for_nameless_node(self):
        # the scheduler only evaluates matchFields when the node has a name
        t = term(fields=[expr("metadata.name", "In", "node-1")])
        assert node_selector_term_matches(t, {"metadata": {"labels": {}}})

    def test_invalid_term_does_not_spoil_others(self):
        ns = {"nodeSelectorTerms": [term(expr("k", "Bogus", "x")), term(expr("a", "Exists"))]}
        assert node_selector_matches(ns, node(a="1"))
        compiled = NodeSelector(ns)
        assert compiled.errors and "Bogus" in compiled.errors[0]
        assert not node_selector_matches(ns, node(k="x"))

    def test_missing_node(self):
        assert not node_selector_matches({"nodeSelectorTerms": [term(expr("a", "Exists"))]},
                                         None)
        assert not required_node_affinity_matches(pod_with(), None)
        assert preferred_node_affinity_score(WEIGHT_POD, None) == 0

    def test_no_constraints_means_any_node(self):
        assert required_node_affinity_matches(pod_with(), node())
        assert required_node_affinity_matches(pod_with(node_selector={}), node())
        assert required_node_affinity_matches({"spec": {"affinity": {}}}, node())
        assert required_node_affinity_matches({"spec": {"affinity": {"nodeAffinity": {}}}},
                                              node())
        assert required_node_affinity_matches({}, node())

    def test_node_selector_map_is_exact_match(self):
        p = pod_with(node_selector={"a": ""})
        assert required_node_affinity_matches(p, node(a=""))
        assert not required_node_affinity_matches(p, node())


class TestPreferred:
    def test_zero_weight_and_empty_terms_skipped(self):
        terms = [{"weight": 0, "preference": term(expr("a", "Exists"))},
                 {"weight": 7, "preference": {}},
                 {"weight": 3, "preference": term(expr("a", "Exists"))}]
        assert PreferredSchedulingTerms(terms).score(node(a="1")) == 3

    def test_invalid_terms_add_nothing(self):
        terms = [{"weight": 5, "preference": term(expr("a", "Gt", "x"))},
                 {"weight": 3, "preference": term(expr("a", "Exists"))}]
        compiled = PreferredSchedulingTerms(terms)
        assert compiled.score(node(a="1")) == 3
        assert compiled.errors

    def test_match_fields_in_preferences(self):
        terms = [{"weight": 10, "preference": term(fields=[expr("metadata.name", "In", "n2")])}]
        assert PreferredSchedulingTerms(terms).score(node("n2")) == 10
        assert PreferredSchedulingTerms(terms).score(node("n1")) == 0

    def test_compiled_for_pod_reused_across_nodes(self):
        pref = PreferredSchedulingTerms.for_pod(WEIGHT_POD)
        req = RequiredNodeAffinity(WEIGHT_POD)
        nodes = [node(f"n{i}", **{"kubernetes.io/os": "linux",
                                  "label-2": "key-2" if i % 2 else "x"}) for i in range(6)]
        assert [pref.score(n) for n in nodes] == [0, 50, 0, 50, 0, 50]
        assert all(req.matches(n) for n in nodes)


# --- validation -----------------------------------------------------------------------------


class TestValidation:
    def test_valid(self):
        assert validate_node_selector_requirement(expr(ZONE, "In", "z1"), "p") == []
        assert validate_node_selector_requirement(expr("a", "Gt", "5"), "p") == []
        assert validate_node_selector_requirement(expr("a", "DoesNotExist"), "p") == []

    @pytest.mark.parametrize("req,fragment", [
        (expr("a", "In"), "p.values: Required value"),
        (expr("a", "Exists", "x"), "p.values: Forbidden"),
        (expr("a", "Gt", "1", "2"), "must be specified single value"),
        (expr("a", "Lt", "x"), "p.values[0]: Invalid value"),
        (expr("a", "Like", "x"), "p.operator: Invalid value: \"Like\""),
        (expr("-a", "Exists"), "p.key: Invalid value: \"-a\""),
        (expr("a", "In", "no spaces"), "p.values[0]: Invalid value: \"no spaces\""),
    ])
    def test_invalid(self, req, fragment):
        problems = validate_node_selector_requirement(req, "p")
        assert any(fragment in p for p in problems), problems

    def test_selector_and_fields(self):
        assert validate_node_selector({"nodeSelectorTerms": []}, "spec.x") == [
            "spec.x.nodeSelectorTerms: Required value: must have at least one node selector term"]
        probs = validate_node_selector_term(
            term(fields=[expr("metadata.uid", "In", "a", "b")]), "t")
        assert any("t.matchFields[0].key: Unsupported value" in p for p in probs)
        assert any("t.matchFields[0].values: Required value" in p for p in probs)
        assert validate_node_selector_term(
            term(fields=[expr("metadata.name", "NotIn", "n1")]), "t") == []


# --- property: node affinity expressions agree with the label selector ----------------------

_keys = st.sampled_from(["a", "b", "example.com/c"])
_vals = st.sampled_from(["", "x", "y", "1", "7", "12"])


@st.composite
def _expr(draw):
    op = draw(st.sampled_from(["In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"]))
    key = draw(_keys)
    if op in ("In", "NotIn"):
        return expr(key, op, *draw(st.lists(_vals, min_size=1, max_size=3)))
    if op in ("Gt", "Lt"):
        return expr(key, op, str(draw(st.integers(0, 15))))
    return expr(key, op)


_SEL_OP = {"In": "in", "NotIn": "notin", "Gt": ">", "Lt": "<"}


def _as_string(e):
    if e["operator"] == "Exists":
        return e["key"]
    if e["operator"] == "DoesNotExist":
        return "!" + e["key"]
    if e["operator"] in ("In", "NotIn"):
        # sorted and de-duplicated like str(selector): Kubernetes' parser rejects "(,,)"
        return f"{e['key']} {_SEL_OP[e['operator']]} ({','.join(sorted(set(e['values'])))})"
    return f"{e['key']}{_SEL_OP[e['operator']]}{e['values'][0]}"


@settings(max_examples=150, deadline=None)
@given(st.lists(_expr(), min_size=1, max_size=4), st.dictionaries(_keys, _vals, max_size=3))
def test_term_equals_label_selector_string(exprs, labels):
    t = term(*exprs)
    sel = LabelSelector.parse(",".join(_as_string(e) for e in exprs))
    assert node_selector_term_matches(t, node(**labels)) == sel.matches(labels)
    assert NodeSelectorTerm(t).matches(node(**labels)) == all(
        node_selector_requirement_matches(e, labels) for e in exprs)
