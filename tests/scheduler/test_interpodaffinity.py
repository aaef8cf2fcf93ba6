"""InterPodAffinity at plugin level: what ``kvert schedule`` vectors cannot show (args, the
PreFilter state and its extensions, clone, parse errors, queueing hints, the incremental
index). Expected values are kube-scheduler's (the Go test and case named in each test)."""

from __future__ import annotations

import numpy as np
import pytest

from kvert.scheduler.cache import NodeCache
from kvert.scheduler.config import ConfigError, load_config
from kvert.scheduler.framework import QUEUE, QUEUE_SKIP, Code, CycleState, Handle
from kvert.scheduler.plugins.interpodaffinity import _STATE, InterPodAffinity, existing_pod_terms

from .helpers import Bench
from .vectors.interpodaffinity import affinity, expr, mk_node, mk_pod, term

F = "interpodaffinity/filtering_test.go"
P = "interpodaffinity/plugin_test.go"


def plugin(bench: Bench) -> InterPodAffinity:
    return bench.fw.plugin("InterPodAffinity")


def pairs(cache, counts: dict) -> dict:
    """A state's per-key, per-value-id counts as upstream's topologyToMatchedTermCount."""
    return {(k, cache.label_value(k, i)): int(v)
            for k, arr in counts.items() for i, v in enumerate(arr) if v}


def pre_filter(bench: Bench, pod: dict):
    state = CycleState()
    _, st = plugin(bench).pre_filter(state, pod, bench.nodes())
    return state, st


def with_uid(pod: dict, uid: str) -> dict:
    pod["metadata"]["uid"] = uid
    return pod


# ---- args -------------------------------------------------------------------------------------


def test_args_defaults():
    # apis/config/v1/defaults_test.go TestPluginArgsDefaults/"InterPodAffinityArgs empty":
    # HardPodAffinityWeight 1 (IgnorePreferredTermsOfExistingPods false)
    p = InterPodAffinity({}, Handle(NodeCache()))
    assert (p.hard_pod_affinity_weight, p.ignore_preferred_terms_of_existing_pods) == (1, False)
    p = InterPodAffinity({"hardPodAffinityWeight": 0, "ignorePreferredTermsOfExistingPods": True})
    assert (p.hard_pod_affinity_weight, p.ignore_preferred_terms_of_existing_pods) == (0, True)


@pytest.mark.parametrize("weight", [-1, 101])
def test_args_validation(weight):
    # apis/config/validation/validation_pluginargs_test.go TestValidateInterPodAffinityArgs/
    # "hardPodAffinityWeight less than min" / "... more than max"
    with pytest.raises(ValueError) as e:
        InterPodAffinity({"hardPodAffinityWeight": weight})
    assert str(e.value).endswith(f"hardPodAffinityWeight: Invalid value: {weight}: "
                                 "not in valid range [0-100]")
    cfg = {"profiles": [{"pluginConfig": [{"name": "InterPodAffinity",
                                           "args": {"hardPodAffinityWeight": weight}}]}]}
    with pytest.raises(ConfigError, match=r"hardPodAffinityWeight: Invalid value"):
        load_config(cfg)


# ---- PreFilter / Filter -----------------------------------------------------------------------


def test_filter_without_pre_filter_is_an_error():
    # filtering_test.go TestPreFilterDisabled
    bench = Bench([mk_node("node1", {})])
    with pytest.raises(RuntimeError) as e:
        plugin(bench).filter(CycleState(), mk_pod("p"), bench.nodes())
    assert str(e.value) == 'error reading "PreFilterInterPodAffinity" from cycleState: not found'


def test_invalid_label_syntax_fails_pre_filter():
    # filtering_test.go TestRequiredAffinitySingleNode/
    # "PodAffinity fails PreFilter with an invalid affinity label syntax"
    bench = Bench([mk_node("node1", {"region": "r1", "zone": "z11"})])
    pod = mk_pod("p", labels={"service": "securityscan"}, affinity=affinity([
        term("region", expr("service", "In", "{{.bad-value.}}")),
        term("node", expr("service", "In", "antivirusscan", "value2"))]))
    _, st = pre_filter(bench, pod)
    assert st.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    assert st.message() == (
        'parsing pod: requiredAffinityTerms: values[0][service]: Invalid value: "{{.bad-value.}}": '
        "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' "
        "or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or "
        "'my_value',  or '12345', regex used for validation is "
        "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')")


def test_invalid_preferred_terms_fail_pre_score():
    # scoring_test.go TestPreferredAffinity/"invalid Affinity fails PreScore",
    # "invalid AntiAffinity fails PreScore"
    bench = Bench([mk_node("node1", {"region": "China"}), mk_node("node2", {"region": "China"})])
    for aff in (affinity(preferred=[(8, term("region", expr("security", "In", "{{.bad-value.}}")))]),
                affinity(anti_preferred=[(5, term("az", expr("security", "In", "{{.bad-value.}}")))])):
        st = plugin(bench).pre_score(CycleState(), mk_pod("p", affinity=aff), bench.nodes())
        assert st.code == Code.ERROR
        assert 'Invalid value: "{{.bad-value.}}"' in st.message()


def test_pre_filter_skips_without_terms():
    # filtering_test.go TestRequiredAffinitySingleNode/"A pod that has no required pod affinity
    # scheduling rules can schedule onto a node with no existing pods", and /"verify that
    # PodAntiAffinity from existing pod is respected when pod has no AntiAffinity constraints.
    # satisfy PodAntiAffinity symmetry with the existing pod"
    node1 = mk_node("node1", {"region": "r1", "zone": "z11"})
    _, st = pre_filter(Bench([node1]), mk_pod("p"))
    assert st.code == Code.SKIP
    existing = mk_pod("e", "node1", {"service": "securityscan"}, affinity=affinity(anti=[
        term("zone", expr("service", "NotIn", "securityscan", "value2"))]))
    _, st = pre_filter(Bench([node1], [existing]), mk_pod("p", labels={"service": "securityscan"}))
    assert st.code == Code.SKIP


LABEL1, LABEL2, LABEL3 = ({"region": "r1", "zone": "z11"}, {"region": "r1", "zone": "z12"},
                          {"region": "r2", "zone": "z21"})
FOO_BAR = {"foo": "bar"}
ANTI_FOO_BAR = [term("region", expr("foo", "In", "bar"))]
COMPLEX = [term("region", expr("foo", "In", "bar", "buzz")),
           term("zone", expr("service", "NotIn", "bar", "security", "test"))]


def _add_remove_cases():
    nodes = [mk_node("nodeA", LABEL1), mk_node("nodeB", LABEL2), mk_node("nodeC", LABEL3)]
    return [
        ("preFilterState anti-affinity terms are updated correctly after adding and removing a pod",
         mk_pod("pending", labels=FOO_BAR, affinity=affinity(anti=ANTI_FOO_BAR)),
         [mk_pod("p1", "nodeA", FOO_BAR), mk_pod("p2", "nodeC", affinity=affinity(anti=ANTI_FOO_BAR))],
         mk_pod("addedPod", "nodeB", FOO_BAR, affinity=affinity(anti=ANTI_FOO_BAR)), nodes,
         {("region", "r1"): 2}, {}),
        ("preFilterState anti-affinity terms are updated correctly after adding and removing a pod",
         mk_pod("pending", labels=FOO_BAR, affinity=affinity(anti=COMPLEX)),
         [mk_pod("p1", "nodeA", FOO_BAR), mk_pod("p2", "nodeC", affinity=affinity(anti=ANTI_FOO_BAR))],
         mk_pod("addedPod", "nodeA", FOO_BAR, affinity=affinity(anti=COMPLEX)), nodes,
         {("region", "r1"): 2, ("zone", "z11"): 2, ("zone", "z21"): 1}, {}),
        (("preFilterState matching pod affinity and anti-affinity are updated correctly after adding "
         "and removing a pod"),
         mk_pod("pending", labels=FOO_BAR, affinity=affinity(COMPLEX)),
         [mk_pod("p1", "nodeA", FOO_BAR),
          mk_pod("p2", "nodeC", affinity=affinity(COMPLEX, anti=ANTI_FOO_BAR))],
         mk_pod("addedPod", "nodeA", FOO_BAR, affinity=affinity(anti=COMPLEX)), nodes,
         {}, {("region", "r1"): 2, ("zone", "z11"): 2}),
    ]


@pytest.mark.parametrize("case", _add_remove_cases(), ids=lambda c: c[0][:60])
def test_pre_filter_state_add_remove_pod(case):
    # filtering_test.go TestPreFilterStateAddRemovePod/<case>
    _, pending, existing, added, nodes, want_anti, want_aff = case
    all_bench = Bench(nodes, existing + [added])
    all_state, _ = pre_filter(all_bench, pending)
    bench = Bench(nodes, existing)
    state, st = pre_filter(bench, pending)
    assert st is None
    s = state.read(_STATE)
    original = s.clone()
    node = bench.cache.node(added["spec"]["nodeName"])
    assert plugin(bench).pre_filter_add_pod(state, pending, added, node) is None
    assert pairs(bench.cache, s.anti) == want_anti
    assert pairs(bench.cache, s.affinity) == want_aff
    full = all_state.read(_STATE)
    for name in ("existing", "affinity", "anti"):
        assert pairs(bench.cache, getattr(s, name)) == pairs(all_bench.cache, getattr(full, name))
    plugin(bench).pre_filter_remove_pod(state, pending, added, node)
    for name in ("existing", "affinity", "anti"):
        assert pairs(bench.cache, getattr(s, name)) == pairs(bench.cache, getattr(original, name))


def test_pre_filter_state_clone_is_independent():
    # filtering_test.go TestPreFilterStateClone: the clone equals the source, and (CycleState
    # clones for nominated pods) changing it leaves the source alone
    nodes = [mk_node("nodeA", LABEL1), mk_node("nodeB", LABEL2)]
    bench = Bench(nodes, [mk_pod("p1", "nodeA", FOO_BAR)])
    pending = mk_pod("pending", labels=FOO_BAR, affinity=affinity(COMPLEX, anti=ANTI_FOO_BAR))
    state, _ = pre_filter(bench, pending)
    s = state.read(_STATE)
    before = {n: pairs(bench.cache, getattr(s, n)) for n in ("existing", "affinity", "anti")}
    clone = state.clone()
    c = clone.read(_STATE)
    assert c is not s
    assert {n: pairs(bench.cache, getattr(c, n)) for n in before} == before
    plugin(bench).pre_filter_add_pod(clone, pending, mk_pod("x", "nodeB", FOO_BAR,
                                                            affinity=affinity(anti=ANTI_FOO_BAR)),
                                     bench.cache.node("nodeB"))
    assert {n: pairs(bench.cache, getattr(s, n)) for n in before} == before
    assert pairs(bench.cache, c.anti) == {("region", "r1"): 2}


def _incoming_cases():
    a, b, ab = ({"aaa": ""}, {"bbb": ""}, {"aaa": "", "bbb": ""})
    aff = {k: term("hostname", expr(k, "Exists")) for k in ("aaa", "bbb", "ccc")}
    one = {("hostname", "nodeA"): 1}
    return [
        ("incoming pod without affinity/anti-affinity causes a no-op", a, {}, {}, {}),
        ("no pod has label that violates incoming pod's affinity and anti-affinity", b,
         affinity([aff["aaa"]], anti=[aff["aaa"]]), {}, {}),
        ("existing pod matches incoming pod's affinity and anti-affinity - single term case", a,
         affinity([aff["aaa"]], anti=[aff["aaa"]]), one, one),
        ("existing pod matches incoming pod's affinity and anti-affinity - multiple terms case", ab,
         affinity([aff["aaa"], aff["bbb"]], anti=[aff["aaa"]]), {("hostname", "nodeA"): 2}, one),
        ("existing pod not match incoming pod's affinity but matches anti-affinity", a,
         affinity([aff["aaa"], aff["bbb"]], anti=[aff["aaa"], aff["bbb"]]), {}, one),
        (("incoming pod's anti-affinity has more than one term - existing pod violates partial term "
         "- case 1"), ab, affinity([aff["aaa"], aff["ccc"]], anti=[aff["aaa"], aff["ccc"]]), {}, one),
    ]


@pytest.mark.parametrize("case", _incoming_cases(), ids=lambda c: c[0][:60])
def test_incoming_affinity_anti_affinity_counts(case):
    # filtering_test.go TestGetTPMapMatchingIncomingAffinityAntiAffinity/<case>
    _, labels, aff, want_aff, want_anti = case
    bench = Bench([mk_node("nodeA", {"hostname": "nodeA"})], [mk_pod("normal", "nodeA", labels)])
    state, st = pre_filter(bench, mk_pod("p", affinity=aff or None))
    if not aff:
        assert st.code == Code.SKIP
        return
    s = state.read(_STATE)
    assert pairs(bench.cache, s.affinity) == want_aff
    assert pairs(bench.cache, s.anti) == want_anti


def test_nominated_pod_counts_for_anti_affinity():
    # RunFilterPluginsWithNominatedPods (runtime/framework.go): a pod nominated to a node with a
    # priority >= the incoming pod's is added through AddPod before the node is filtered, so
    # the incoming pod's anti-affinity keeps it off that node (filtering_test.go
    # TestRequiredAffinityMultipleNodes/"NodeA and nodeB have same topologyKey and label value.
    # NodeA has an existing pod that matches the inter pod affinity rule. The pod can not be
    # scheduled onto nodeA and nodeB.", with the existing pod nominated instead of bound)
    nodes = [mk_node("nodeA", {"region": "r1", "hostname": "nodeA"}),
             mk_node("nodeB", {"region": "r2", "hostname": "nodeB"})]
    bench = Bench(nodes)
    pod = mk_pod("p", affinity=affinity(anti=[term("hostname", expr("foo", "In", "abc"))]))
    nominated = with_uid(mk_pod("n", labels={"foo": "abc"}), "uid-n")
    bench.cache.add_nominated(nominated, "nodeA")
    names, diagnosis, _ = bench.filter(pod)
    assert names == ["nodeB"]
    assert diagnosis.reason_histogram() == {"node(s) didn't match pod anti-affinity rules": 1}


# ---- the incremental index ----------------------------------------------------------------------


def _index_snapshot(cache) -> dict:
    index = existing_pod_terms(cache)
    return {(kind, t): (g.pods, dict(g.rows))
            for kind, groups in enumerate(index.by_kind) for t, g in groups.items()}


def test_index_follows_pod_and_node_changes():
    # The index must equal one built from scratch over the same pods, whatever happened before
    # (kvert's incremental form of upstream's per-cycle walk over NodeInfo.PodsWithAffinity).
    nodes = [mk_node(f"n{i}", {"zone": f"z{i % 2}"}) for i in range(4)]
    anti = affinity(anti=[term("zone", expr("app", "In", "a"))],
                    preferred=[(3, term("zone", expr("app", "In", "b")))])
    cache = NodeCache()
    for n in nodes:
        cache.add_node(n)
    existing_pod_terms(cache)       # registered before the pods arrive
    pods = [mk_pod(f"p{i}", f"n{i % 4}", {"app": "a"}, affinity=anti) for i in range(6)]
    for p in pods:
        cache.add_pod(p)
    cache.remove_pod(pods[0])
    cache.remove_node(nodes[3])
    cache.add_node(nodes[3])
    moved = mk_pod("p1", "n2", {"app": "a"}, affinity=anti)
    moved["metadata"]["uid"] = pods[1]["metadata"].get("uid")
    cache.update_pod(pods[1], moved)
    fresh = NodeCache()
    for n in nodes:
        fresh.add_node(n)
    for p in pods[2:] + [moved]:
        fresh.add_pod(p)
    assert _index_snapshot(cache) == _index_snapshot(fresh)
    assert _index_snapshot(cache)       # not trivially empty


def test_cycle_does_not_walk_the_pods(monkeypatch):
    # DESIGN: per-cycle cost must not grow with pods: once the queries are warm, PreFilter and
    # PreScore read only per-term counts.
    nodes = [mk_node(f"n{i}", {"zone": f"z{i % 3}", "hostname": f"n{i}"}) for i in range(6)]
    pods = [mk_pod(f"e{i}", f"n{i % 6}", {"app": "a"}, affinity=affinity(
        anti=[term("hostname", expr("app", "In", "x"))],
        preferred=[(5, term("zone", expr("app", "In", "a")))])) for i in range(30)]
    bench = Bench(nodes, pods)
    pod = mk_pod("p", labels={"app": "a"}, affinity=affinity(
        [term("zone", expr("app", "In", "a"))], anti=[term("hostname", expr("app", "In", "b"))],
        preferred=[(2, term("zone", expr("app", "In", "a")))]))
    first = bench.score(pod, "InterPodAffinity")

    def boom(*a, **k):
        raise AssertionError("a cycle walked the pods")
    monkeypatch.setattr(bench.cache, "accounted_entries", boom)
    monkeypatch.setattr(bench.cache, "node_entries", boom)
    names, _, _ = bench.filter(pod)
    assert len(names) == 6
    assert bench.score(pod, "InterPodAffinity") == first


# ---- queueing hints ------------------------------------------------------------------------------


def _hint(kind: str):
    p = InterPodAffinity({}, Handle(NodeCache()))
    regs = p.events_to_register()
    return regs[0].hint if kind == "pod" else regs[1].hint


def _on(pod: dict, node: str = "fake-node") -> dict:
    pod["spec"]["nodeName"] = node
    return pod


SCAN_AFF = affinity([term("region", expr("service", "In", "securityscan", "value2"))])
SCAN_ANTI = affinity(anti=[term("region", expr("service", "In", "securityscan", "value2"))])
AB_AFF = affinity([term("hostname", expr("aaa", "Exists")), term("hostname", expr("bbb", "Exists"))])


def _pod_hint_cases():
    m = mk_pod
    return [
        ("add a pod which matches the pod affinity", m("p", affinity=SCAN_AFF), None,
         _on(m("other", labels={"service": "securityscan"})), QUEUE),
        ("add an un-scheduled pod", m("p", affinity=SCAN_AFF), None,
         m("other", labels={"service": "securityscan"}), QUEUE_SKIP),
        ("add a pod which doesn't match the pod affinity", m("p", affinity=SCAN_AFF), None,
         _on(m("other", labels={"aaa": "a"})), QUEUE_SKIP),
        ("update a pod from non-match to match pod affinity", m("p", affinity=SCAN_AFF),
         _on(m("other", labels={"aaa": "a"})), _on(m("other", labels={"service": "securityscan"})),
         QUEUE),
        ("the updating pod matches target pod's affinity both before and after label changes",
         m("p", affinity=SCAN_AFF), _on(m("other", labels={"service": "value2"})),
         _on(m("other", labels={"service": "securityscan"})), QUEUE_SKIP),
        ("update an un-scheduled pod", m("p", affinity=SCAN_AFF), m("other", labels={"aaa": "a"}),
         m("other", labels={"service": "securityscan"}), QUEUE_SKIP),
        ("update a pod from match to non-match the pod affinity", m("p", affinity=SCAN_AFF),
         _on(m("other", labels={"service": "securityscan"})), _on(m("other", labels={"aaa": "a"})),
         QUEUE_SKIP),
        ("update a pod from match to non-match pod's affinity - multiple terms case",
         m("p", affinity=AB_AFF), _on(m("other", labels={"aaa": "a"})),
         _on(m("other", labels={"service": "securityscan"})), QUEUE_SKIP),
        ("update a pod from non-match to match pod's affinity - multiple terms case",
         m("p", affinity=AB_AFF), _on(m("other", labels={"aaa": "a"})),
         _on(m("other", labels={"aaa": "", "bbb": ""})), QUEUE),
        ("updated pod is the target pod", with_uid(m("p", labels={"foo": "baz"}), "p"),
         with_uid(m("p", labels={"foo": "bar"}), "p"), with_uid(m("p", labels={"foo": "baz"}), "p"),
         QUEUE),
        (("modify pod label to change it from satisfying pod anti-affinity to not satisfying "
         "anti-affinity"), m("p", affinity=SCAN_ANTI),
         _on(m("other", labels={"service": "securityscan"})),
         _on(m("other", labels={"service": "aaaa"})), QUEUE),
        (("modify pod label to change it from not satisfying pod anti-affinity to satisfying "
         "anti-affinity"), m("p", affinity=SCAN_ANTI), _on(m("other", labels={"service": "bbb"})),
         _on(m("other", labels={"service": "securityscan"})), QUEUE_SKIP),
        ("delete a pod which doesn't match pod's anti-affinity", m("p", affinity=SCAN_ANTI),
         _on(m("other", labels={"aaa": "a"})), None, QUEUE_SKIP),
        ("delete a pod which matches pod's anti-affinity", m("p", affinity=SCAN_ANTI),
         _on(m("other", labels={"service": "securityscan"})), None, QUEUE),
        ("delete a pod with anti-affinity that matches pending pod",
         m("p", labels={"service": "securityscan"}), _on(m("other", affinity=SCAN_ANTI)), None, QUEUE),
        ("delete a pod with anti-affinity that doesn't match pending pod",
         m("p", labels={"service": "foo"}), _on(m("other", affinity=SCAN_ANTI)), None, QUEUE_SKIP),
        (("delete a pod which doesn't match pending pod's anti-affinity and has anti-affinity that "
         "doesn't match pending pod"), m("p", labels={"service": "foo"}, affinity=SCAN_ANTI),
         _on(m("other", labels={"service": "foo"}, affinity=SCAN_ANTI)), None, QUEUE_SKIP),
    ]


@pytest.mark.parametrize("case", _pod_hint_cases(), ids=lambda c: c[0][:70])
def test_pod_change_hint(case):
    # plugin_test.go Test_isSchedulableAfterPodChange/<case>
    _, pod, old, new, want = case
    assert _hint("pod")(pod, old, new) == want


ZONE_AFF = affinity([term("zone", expr("service", "In", "securityscan", "value2"))])
REGION_AFF = affinity([term("region", expr("service", "In", "securityscan", "value2"))])
ZONE_ANTI = affinity(anti=[{"labelSelector": {"matchLabels": {"another": "label"}},
                            "topologyKey": "zone"}])


def _node_hint_cases():
    n = mk_node
    return [
        ("add a new node with matched pod affinity topologyKey", ZONE_AFF, None,
         n("node-a", {"zone": "zone1"}), QUEUE),
        ("add a new node without matched topologyKey", REGION_AFF, None,
         n("node-a", {"zone": "zone1"}), QUEUE_SKIP),
        ("update node label but not topologyKey", ZONE_AFF, n("node-a", {"aaa": "a"}),
         n("node-a", {"aaa": "b"}), QUEUE_SKIP),
        ("update node label that isn't related to the pod affinity", ZONE_AFF,
         n("node-a", {"zone": "zone1"}), n("node-a", {"zone": "zone1", "unrelated-label": "x"}),
         QUEUE_SKIP),
        ("update node with different affinity topologyKey value", ZONE_AFF,
         n("node-a", {"zone": "zone1"}), n("node-a", {"zone": "zone2"}), QUEUE),
        ("update node to have the affinity topology label", ZONE_AFF, n("node-a", {"aaa": "a"}),
         n("node-a", {"zone": "zone1"}), QUEUE),
        ("add a new node with matched pod anti-affinity topologyKey", ZONE_ANTI, None,
         n("node-a", {"zone": "zone1"}), QUEUE),
        ("add a new node without matched pod anti-affinity topologyKey", ZONE_ANTI, None,
         n("node-a", {}), QUEUE),
        ("update node label that isn't related to the pod anti-affinity", ZONE_ANTI,
         n("node-a", {"zone": "zone1"}), n("node-a", {"zone": "zone1", "unrelated-label": "x"}),
         QUEUE_SKIP),
        ("update node with different anti-affinity topologyKey value", ZONE_ANTI,
         n("node-a", {"zone": "zone1"}), n("node-a", {"zone": "zone2"}), QUEUE),
        ("update node to have the anti-affinity topology label", ZONE_ANTI,
         n("node-a", {"aaa": "a"}), n("node-a", {"zone": "zone1"}), QUEUE_SKIP),
        ("update node label not to have anti-affinity topology label", ZONE_ANTI,
         n("node-a", {"zone": "zone1"}), n("node-a", {"aaa": "a"}), QUEUE),
    ]


@pytest.mark.parametrize("case", _node_hint_cases(), ids=lambda c: c[0][:70])
def test_node_change_hint(case):
    # plugin_test.go Test_isSchedulableAfterNodeChange/<case>
    _, aff, old, new, want = case
    assert _hint("node")(mk_pod("p", affinity=aff), old, new) == want


def test_normalize_score_truncates_in_float64():
    # scoring.go NormalizeScore: int64(float64(MaxNodeScore) * float64(s-min) / float64(max-min));
    # scoring_test.go TestPreferredAffinity/"Affinity: different Label operators and values for
    # pod affinity scheduling preference, including some match failures " (2, 10, 0 -> 20, 100, 0)
    p = InterPodAffinity({})
    got = p.normalize_score(CycleState(), {}, None, np.array([2, 10, 0], np.int64))
    assert got.tolist() == [20, 100, 0]
    assert p.normalize_score(CycleState(), {}, None, np.array([-5, -5], np.int64)).tolist() == [0, 0]
