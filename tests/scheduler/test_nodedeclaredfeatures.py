"""NodeDeclaredFeatures against upstream's nodedeclaredfeatures_test.go.

Upstream tests the plugin with registries of mock features (``createMockFeature``: a name,
whether a pod needs it, a max version); here a :class:`Feature` does the same. 1.35's own
registry infers nothing for scheduling (vectors/nodedeclaredfeatures.py).
"""

from __future__ import annotations

import pytest

from kvert.scheduler.framework import (
    NODE, ActionType, ClusterEvent, Code, CycleState, FitError, QUEUE, QUEUE_SKIP,
)
from kvert.scheduler.plugins.nodedeclaredfeatures import (
    ERR_REASON_UNSATISFIED, FEATURES, STATE_KEY, Feature, FeatureRegistry, NodeDeclaredFeatures,
    parse_version,
)

from .helpers import Bench, node, pod

GO = "nodedeclaredfeatures_test.go "


def mock(name: str, infer: bool, max_version: str = "") -> Feature:
    return Feature(name, lambda spec: infer, parse_version(max_version) if max_version else None)


def ndf_node(name: str, *features: str) -> dict:
    n = node(name)
    if features:
        n["status"]["declaredFeatures"] = list(features)
    return n


def plugin(features, version: str | None = "1.35.0") -> NodeDeclaredFeatures:
    return NodeDeclaredFeatures(features=features,
                                version=parse_version(version) if version else None)


# ---- PreFilter ---------------------------------------------------------------------------------


@pytest.mark.parametrize("case,features,version,code,required", [
    ("Pod with feature requirements",
     [mock("TestFeature1", True), mock("TestFeature2", False)], "1.35.0", None, ["TestFeature1"]),
    ("Pod with multiple feature requirements",
     [mock("TestFeature1", True, "1.38.0"), mock("TestFeature2", True, "1.38.0")], "1.35.0",
     None, ["TestFeature1", "TestFeature2"]),
    ("Pod with no requirements",
     [mock("TestFeature1", False), mock("TestFeature2", False)], "1.35.0", Code.SKIP, None),
    ("Feature not required, version > MaxVersion",
     [mock("TestFeature1", True, "1.33.0"), mock("TestFeature2", False)], "1.34.0", Code.SKIP,
     None),
])
def test_pre_filter(case, features, version, code, required):
    # GO TestPreFilter/<case>
    pl = plugin(features, version)
    state = CycleState()
    result, st = pl.pre_filter(state, pod("test-pod"), None)
    assert result is None
    assert (st.code if st is not None else None) == code
    if required is None:
        assert state.get(STATE_KEY) is None
    else:
        assert pl.registry.names(state.read(STATE_KEY)) == required


def test_pre_filter_needs_a_version():
    # GO TestIsSchedulableAfterTargetPodUpdate/Infer returns error: "target version cannot be nil"
    _, st = plugin([mock("TestFeature", True)], None).pre_filter(CycleState(), pod("p"), None)
    assert st.code == Code.ERROR and st.message() == "target version cannot be nil"


def test_the_135_registry_infers_nothing_for_scheduling():
    # nodedeclaredfeatures/features/registry.go: only inplacepodresize's feature, and
    # guaranteed_cpu_resize_test.go TestGuaranteedQoSPodCPUResizeFeature_InferFromCreate: false
    assert [f.name for f in FEATURES] == ["GuaranteedQoSPodCPUResize"]
    guaranteed = pod("g", containers=[{"name": "c1", "resources": {
        "requests": {"cpu": "1", "memory": "1Gi"}, "limits": {"cpu": "1", "memory": "1Gi"}}}])
    _, st = NodeDeclaredFeatures().pre_filter(CycleState(), guaranteed, None)
    assert st.code == Code.SKIP


# ---- Filter --------------------------------------------------------------------------------------

ABC = [mock("FeatureA", True), mock("FeatureB", True), mock("FeatureC", True)]
FILTER_NODES = [ndf_node("a-b", "FeatureA", "FeatureB"), ndf_node("b", "FeatureB"),
                ndf_node("a-b-c", "FeatureA", "FeatureB", "FeatureC"), ndf_node("none"),
                ndf_node("a", "FeatureA")]


@pytest.mark.parametrize("required,rejected", [
    # TestFilter/Node matches requirements (a-b), Node does not match requirements (b),
    # Node has no declared features (none)
    (["FeatureA"], ["b", "none"]),
    # TestFilter/Node with multiple features, pod requires subset (a-b-c)
    (["FeatureA", "FeatureC"], ["a-b", "b", "none", "a"]),
    # TestFilter/Node with some but not all required features (a)
    (["FeatureA", "FeatureB"], ["b", "none", "a"]),
])
def test_filter(required, rejected):
    b = Bench(FILTER_NODES)
    pl = plugin(ABC)
    state = CycleState()
    state.write(STATE_KEY, sum(pl.registry.bit[n] for n in required))
    nodes = b.nodes()
    res = pl.filter(state, pod("test-pod"), nodes)
    names = b.names(nodes.rows)
    assert sorted(n for n, c in zip(names, res.codes) if c) == sorted(rejected)
    assert set(res.codes[res.codes != 0]) == {Code.UNSCHEDULABLE_AND_UNRESOLVABLE}
    assert [r for r, _ in res.reasons] == [ERR_REASON_UNSATISFIED]


def test_filter_without_pre_filter_state_is_an_error():
    # GO TestFilter/Error getting pre-filter state
    b = Bench([ndf_node("node-1")])
    with pytest.raises(RuntimeError) as e:
        plugin(ABC).filter(CycleState(), pod("test-pod"), b.nodes())
    assert str(e.value) == 'error reading "PreFilterNodeDeclaredFeatures" from cycle-state: not found'


NDF_ONLY = {"profiles": [{"schedulerName": "default-scheduler", "plugins": {
    "multiPoint": {"disabled": [{"name": "*"}], "enabled": [
        {"name": "PrioritySort"}, {"name": "NodeDeclaredFeatures"}, {"name": "DefaultBinder"}]}}}]}


def test_through_the_framework_and_node_updates():
    # TestFilter's reason, counted per node in the FailedScheduling message; a node that
    # starts declaring the feature fits at once (its row's bits are rebuilt)
    b = Bench([ndf_node("n1", "FeatureB"), ndf_node("n2")], config=NDF_ONLY)
    b.fw.plugin("NodeDeclaredFeatures").registry = FeatureRegistry(
        [mock("FeatureA", True), mock("FeatureB", False)])
    p = pod("test-pod")
    ok, diagnosis, state = b.filter(p)
    assert ok == []
    assert str(FitError(p, 2, diagnosis)) == \
        f"0/2 nodes are available: 2 {ERR_REASON_UNSATISFIED}."
    pl = b.fw.plugin("NodeDeclaredFeatures")
    assert pl.explain_node(state, p, b.cache.row_of["n1"], b.cache) == \
        "missing declared features FeatureA"
    old = b.cache.node("n2")
    b.cache.update_node(old, ndf_node("n2", "FeatureA"))
    ok, _, _ = b.filter(p)
    assert ok == ["n2"]


# ---- queueing hints ----------------------------------------------------------------------------


@pytest.mark.parametrize("case,old,new,hint", [
    ("Node Add with feature", None, ndf_node("node-1", "FeatureA"), QUEUE),
    ("Node Update (Features Added)", ndf_node("node-1"), ndf_node("node-1", "FeatureA"), QUEUE),
    ("Node Update (Features Unchanged)", ndf_node("node-1", "FeatureA"),
     ndf_node("node-1", "FeatureA"), QUEUE_SKIP),
])
def test_enqueue_extensions_node_update(case, old, new, hint):
    # GO TestEnqueueExtensionsNodeUpdate/<case>
    assert plugin([]).is_schedulable_after_node_change(pod("test-pod"), old, new) is hint


def _sequence(*answers: bool):
    it = iter(answers)
    return lambda spec: next(it)


@pytest.mark.parametrize("case,answers,version,hint", [
    ("Pod Update adds requirement", (False, True), "1.35.0", QUEUE),
    ("Pod Update removes requirement", (True, False), "1.35.0", QUEUE),
    ("Pod Update with no change in requirements", (False, False), "1.35.0", QUEUE_SKIP),
    ("Infer returns error", (True, True), None, QUEUE),
])
def test_is_schedulable_after_target_pod_update(case, answers, version, hint):
    # GO TestIsSchedulableAfterTargetPodUpdate/<case>: the mock answers the old pod, then the new
    pl = plugin([Feature("TestFeature", _sequence(*answers))], version)
    old, new = pod("test-pod"), pod("test-pod")
    assert pl.is_schedulable_after_target_pod_update(old, old, new) is hint


def test_events_to_register():
    # GO TestEventsToRegister/plugin enabled: two events, node additions and updates first
    events = plugin([]).events_to_register()
    assert len(events) == 2
    assert ClusterEvent(NODE, ActionType.ADD).matches(events[0].event)
    assert ClusterEvent(NODE, ActionType.UPDATE_NODE_DECLARED_FEATURE).matches(events[0].event)
    assert not ClusterEvent(NODE, ActionType.UPDATE_NODE_LABEL).matches(events[0].event)
