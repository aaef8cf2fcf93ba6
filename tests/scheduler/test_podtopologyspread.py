"""PodTopologySpread at the plugin level: args validation, PreFilter and PreScore state,
PreFilterExtensions and clone, queueing hints -- what the ``kvert schedule`` vectors
(``vectors/podtopologyspread.py``) cannot see. Expected values are upstream's (the Go test
and case named in each test); ``fooSelector`` is ``foo Exists`` as upstream's."""

from __future__ import annotations

import math

import numpy as np
import pytest

from kvert.scheduler.config import ConfigError, load_config
from kvert.scheduler.framework import Code, CycleState
from kvert.scheduler.listers import StaticListers
from kvert.scheduler.plugins.podtopologyspread import (
    REASON_CONSTRAINTS_NOT_MATCH, go_round, validate_args,
)

from .helpers import Bench
from .vectors.podtopologyspread import (
    BAR, DNS, FOO, HOSTNAME, SA, TAINTS, foo_pods, hn, mk_node, mk_pod, node_affinity, tsc, zn,
)

NAME = "PodTopologySpread"
PREFILTER_TEST = "filtering_test.go TestPreFilterState"
FOUR = [zn("node-a", "zone1"), zn("node-b", "zone1"), zn("node-x", "zone2"), zn("node-y", "zone2")]


def config(args: dict | None = None) -> dict:
    profile = {"schedulerName": "default-scheduler", "plugins": {"multiPoint": {
        "disabled": [{"name": "*"}],
        "enabled": [{"name": "PrioritySort"}, {"name": "DefaultBinder"}, {"name": NAME}]}}}
    profile["pluginConfig"] = [{"name": NAME,
                                "args": {"defaultingType": "List"} if args is None else args}]
    return {"profiles": [profile]}


def bench(nodes, pods=(), args=None, objects=None) -> Bench:
    b = Bench(nodes, list(pods), config(args))
    if objects:
        b.fw.handle.listers = StaticListers(objects)
    return b


def pre_filter(b: Bench, pod: dict):
    state = CycleState()
    _, st, _ = b.fw.run_pre_filter(state, pod, b.nodes())
    return state, st


def spread(state: CycleState) -> list[dict[str, int]]:
    s = state.read("PreFilter" + NAME)
    return [s.value_counts(i) for i in range(len(s.constraints))]


def min_matches(state: CycleState) -> list[int]:
    s = state.read("PreFilter" + NAME)
    return [s.min_match(i) for i in range(len(s.constraints))]


def pod_foo(*constraints, **kw) -> dict:
    return mk_pod("p", labels={"foo": ""}, constraints=list(constraints), **kw)


# ---- args (validation_pluginargs.go ValidatePodTopologySpreadArgs) ---------------------------


@pytest.mark.parametrize("case,args,error", [
    # validation_pluginargs_test.go TestValidatePodTopologySpreadArgs, messages as
    # ValidatePodTopologySpreadArgs builds them (path nil: fields from the args' root)
    ("maxSkew less than zero",
     {"defaultingType": "List", "defaultConstraints": [
         {"maxSkew": -1, "topologyKey": "node", "whenUnsatisfiable": DNS}]},
     "defaultConstraints[0].maxSkew: Invalid value: -1: not in valid range (0, inf)"),
    ("empty topology key",
     {"defaultingType": "List", "defaultConstraints": [
         {"maxSkew": 1, "topologyKey": "", "whenUnsatisfiable": DNS}]},
     "defaultConstraints[0].topologyKey: Required value: can not be empty"),
    ("whenUnsatisfiable is empty",
     {"defaultingType": "List", "defaultConstraints": [
         {"maxSkew": 1, "topologyKey": "node"}]},
     "defaultConstraints[0].whenUnsatisfiable: Required value: can not be empty"),
    ("whenUnsatisfiable contains unsupported action",
     {"defaultingType": "List", "defaultConstraints": [
         {"maxSkew": 1, "topologyKey": "node", "whenUnsatisfiable": "unknown action"}]},
     ('defaultConstraints[0].whenUnsatisfiable: Unsupported value: "unknown action": '
      'supported values: "DoNotSchedule", "ScheduleAnyway"')),
    ("duplicated constraints",
     {"defaultingType": "List", "defaultConstraints": [
         {"maxSkew": 1, "topologyKey": "node", "whenUnsatisfiable": DNS},
         {"maxSkew": 2, "topologyKey": "node", "whenUnsatisfiable": DNS}]},
     'defaultConstraints[1]: Duplicate value: "{node, DoNotSchedule}"'),
    ("label selector present",
     {"defaultingType": "List", "defaultConstraints": [
         {"maxSkew": 1, "topologyKey": "key", "whenUnsatisfiable": DNS, "labelSelector": {}}]},
     ("defaultConstraints[0].labelSelector: Forbidden: constraint must not define a "
      "selector, as they deduced for each pod")),
    ("system default constraints, but has constraints",
     {"defaultingType": "System", "defaultConstraints": [
         {"maxSkew": 1, "topologyKey": "key", "whenUnsatisfiable": DNS}]},
     'defaultingType: Invalid value: "System": when .defaultConstraints are not empty'),
    ("wrong defaulting type",
     {"defaultingType": "Unknown"},
     'defaultingType: Unsupported value: "Unknown": supported values: "System", "List"'),
])
def test_args_validation(case, args, error):
    with pytest.raises(ValueError) as e:
        validate_args(args)
    assert str(e.value) == error


def test_args_several_errors_are_aggregated_and_config_names_the_plugin():
    args = {"defaultingType": "List", "defaultConstraints": [
        {"maxSkew": 0, "topologyKey": "node", "whenUnsatisfiable": DNS, "labelSelector": {}}]}
    with pytest.raises(ConfigError) as e:
        load_config(config(args))
    assert str(e.value) == (
        "profiles[0].pluginConfig[0].args: [defaultConstraints[0].maxSkew: Invalid value: 0: "
        "not in valid range (0, inf), defaultConstraints[0].labelSelector: Forbidden: "
        "constraint must not define a selector, as they deduced for each pod]")


def test_args_valid_list_and_system_defaults():
    # TestValidatePodTopologySpreadArgs "list default constraints, no constraints" and
    # "system default constraints" are valid; v1 defaults defaultingType to System.
    validate_args({"defaultingType": "List"})
    validate_args({"defaultingType": "System"})
    b = Bench(FOUR, [], {"profiles": [{"schedulerName": "default-scheduler"}]})
    pl = b.fw.plugin(NAME)
    assert pl.system_defaulted
    # plugin.go systemDefaultConstraints
    assert [(c["topologyKey"], c["maxSkew"], c["whenUnsatisfiable"])
            for c in pl.default_constraints] == [(HOSTNAME, 3, SA),
                                                 ("topology.kubernetes.io/zone", 5, SA)]


# ---- PreFilter state (filtering_test.go TestPreFilterState) ----------------------------------


def test_prefilter_normal_case_with_two_constraints():
    # TestPreFilterState/normal case with two spreadConstraints
    b = bench(FOUR, foo_pods(a=2, b=1, y=4))
    state, st = pre_filter(b, pod_foo(tsc(1, "zone", DNS, FOO), tsc(1, "node", DNS, FOO)))
    assert st is None
    assert spread(state) == [{"zone1": 3, "zone2": 4},
                             {"node-a": 2, "node-b": 1, "node-x": 0, "node-y": 4}]
    assert min_matches(state) == [3, 0]


def test_prefilter_node_affinity_policy_ignored():
    # TestPreFilterState/NodeAffinityPolicy ignored with labelSelectors
    nodes = [mk_node("node-a", {"node": "node-a", "foo": ""}),
             mk_node("node-b", {"node": "node-b", "foo": ""}),
             mk_node("node-c", {"node": "node-c", "bar": ""})]
    pods = [mk_pod("p-a", "node-a", {"bar": ""}), mk_pod("p-b", "node-b", {"bar": ""}),
            mk_pod("p-c", "node-b", {"bar": ""}), mk_pod("p-d", "node-c")]
    b = bench(nodes, pods)
    honored, _ = pre_filter(b, pod_foo(tsc(1, "node", DNS, BAR), nodeSelector={"foo": ""}))
    assert spread(honored) == [{"node-a": 1, "node-b": 2}]    # .../NodeAffinityPolicy honored
    ignored, _ = pre_filter(b, pod_foo(tsc(1, "node", DNS, BAR, affinity_policy="Ignore"),
                                       nodeSelector={"foo": ""}))
    assert spread(ignored) == [{"node-a": 1, "node-b": 2, "node-c": 0}]
    assert min_matches(ignored) == [0]


def test_prefilter_node_taints_policy():
    # TestPreFilterState/NodeTaintsPolicy honored (+ "with tolerated taints")
    nodes = [mk_node("node-a", {"node": "node-a"}), mk_node("node-b", {"node": "node-b"}),
             mk_node("node-c", {"node": "node-c", "bar": ""}, taints=TAINTS)]
    pods = [mk_pod("p-a", "node-a", {"bar": ""}), mk_pod("p-b", "node-b", {"bar": ""}),
            mk_pod("p-c", "node-b", {"bar": ""}), mk_pod("p-d", "node-c")]
    b = bench(nodes, pods)
    state, _ = pre_filter(b, pod_foo(tsc(1, "node", DNS, BAR, taints_policy="Honor")))
    assert spread(state) == [{"node-a": 1, "node-b": 2}]
    tolerating = pod_foo(tsc(1, "node", DNS, BAR, taints_policy="Honor"),
                         tolerations=[{"key": "node.kubernetes.io/unschedulable",
                                       "operator": "Exists"}])
    state, _ = pre_filter(b, tolerating)
    assert spread(state) == [{"node-a": 1, "node-b": 2, "node-c": 0}]


def test_prefilter_two_inclusion_policies():
    # TestPreFilterState/two node inclusion Constraints, zone: ignore/ignore, node: honor/honor
    nodes = [zn("node-a", "zone1"),
             mk_node("node-b", {"zone": "zone1", "node": "node-b", "foo": ""}, taints=TAINTS),
             zn("node-x", "zone2", foo=""), zn("node-y", "zone2", foo="")]
    b = bench(nodes, foo_pods(a=2, x=2, y=1))
    state, _ = pre_filter(b, pod_foo(tsc(1, "zone", DNS, FOO, affinity_policy="Ignore"),
                                     tsc(1, "node", DNS, FOO, taints_policy="Honor"),
                                     nodeSelector={"foo": ""}))
    assert spread(state) == [{"zone1": 2, "zone2": 3}, {"node-x": 2, "node-y": 1}]
    assert min_matches(state) == [2, 1]


@pytest.mark.parametrize("case,pod,want", [
    ("matchLabelKeys ANDed with LabelSelector when LabelSelector isn't empty",
     mk_pod("p", labels={"foo": "", "bar": "a"}, constraints=[
         {**tsc(1, "zone", DNS, FOO), "matchLabelKeys": ["bar"]}]),
     {"zone1": 1, "zone2": 1}),
    ("matchLabelKeys ANDed with LabelSelector when LabelSelector is empty",
     mk_pod("p", labels={"foo": "a"}, constraints=[
         {**tsc(1, "zone", DNS, {}), "matchLabelKeys": ["foo"]}]),
     {"zone1": 3, "zone2": 2}),
    ("key in matchLabelKeys is ignored when LabelSelector is nil when feature gate enabled",
     mk_pod("p", labels={"foo": ""}, constraints=[
         {**tsc(1, "zone", DNS, None), "matchLabelKeys": ["bar"]}]),
     {"zone1": 0, "zone2": 0}),
    ("key in matchLabelKeys is ignored when it isn't exist in pod.labels",
     mk_pod("p", labels={"foo": ""}, constraints=[
         {**tsc(1, "zone", DNS, FOO), "matchLabelKeys": ["bar"]}]),
     {"zone1": 3, "zone2": 2}),
])
def test_prefilter_match_label_keys(case, pod, want):
    # TestPreFilterState/<case>: the selector merged with the pod's values for matchLabelKeys
    if case.startswith("matchLabelKeys ANDed with LabelSelector when LabelSelector isn't"):
        pods = [mk_pod("p-a1", "node-a", {"foo": ""}),
                mk_pod("p-a2", "node-a", {"foo": "", "bar": "a"}),
                mk_pod("p-b1", "node-b", {"foo": ""}),
                mk_pod("p-y1", "node-y", {"foo": "", "bar": "a"}),
                mk_pod("p-y2", "node-y", {"bar": ""})]
    else:
        pods = [mk_pod(n, f"node-{n[2]}", {"foo": "a"}) for n in ("p-a1", "p-a2", "p-b1",
                                                                  "p-y1", "p-y2")]
    state, _ = pre_filter(bench(FOUR, pods), pod)
    assert spread(state) == [want]


SERVICE_FOO_BAR = {"services": [{"apiVersion": "v1", "kind": "Service",
                                 "metadata": {"name": "s", "namespace": "default"},
                                 "spec": {"selector": {"foo": "bar"}}}]}
DEFAULTS = {"defaultingType": "List", "defaultConstraints": [
    {"maxSkew": 3, "topologyKey": "node", "whenUnsatisfiable": DNS},
    {"maxSkew": 2, "topologyKey": "node", "whenUnsatisfiable": SA},
    {"maxSkew": 5, "topologyKey": "rack", "whenUnsatisfiable": DNS}]}


def test_prefilter_default_constraints_and_a_service():
    # TestPreFilterState/default constraints and a service: no nodes, so no domains
    b = bench([], [], DEFAULTS, SERVICE_FOO_BAR)
    state = CycleState()
    pod = mk_pod("p", labels={"foo": "bar", "baz": "kar"})
    _, st = b.fw.plugin(NAME).pre_filter(state, pod, b.nodes())
    assert st is None
    s = state.read("PreFilter" + NAME)
    assert [(c.max_skew, c.topology_key, str(c.selector)) for c in s.constraints] == \
        [(3, "node", "foo=bar"), (5, "rack", "foo=bar")]
    assert spread(state) == [{}, {}]


@pytest.mark.parametrize("case,pod,args,objects", [
    ("default constraints and a service that doesn't match", mk_pod("p", labels={"foo": "bar"}),
     {"defaultingType": "List", "defaultConstraints": [
         {"maxSkew": 3, "topologyKey": "node", "whenUnsatisfiable": DNS}]},
     {"services": [{"metadata": {"name": "s", "namespace": "default"},
                    "spec": {"selector": {"baz": "kep"}}}]}),
    ("default soft constraints and a service", mk_pod("p", labels={"foo": "bar"}),
     {"defaultingType": "List", "defaultConstraints": [
         {"maxSkew": 2, "topologyKey": "node", "whenUnsatisfiable": SA}]}, SERVICE_FOO_BAR),
    ("skip if not specified", mk_pod("p", labels={"foo": ""}), None, None),
])
def test_prefilter_skips(case, pod, args, objects):
    # TestPreFilterState/<case>: wantPrefilterStatus Skip
    b = bench([zn("node-a", "zone1")], [], args, objects)
    _, st = b.fw.plugin(NAME).pre_filter(CycleState(), pod, b.nodes())
    assert st is not None and st.code == Code.SKIP


def test_prefilter_pod_constraints_win_over_defaults():
    # TestPreFilterState/default constraints and a service, but pod has constraints
    pod = mk_pod("p", labels={"foo": "bar", "baz": "tar"}, constraints=[
        tsc(1, "zone", DNS, {"matchLabels": {"baz": "tar"}}),
        tsc(2, "planet", SA, {"matchLabels": {"fot": "rok"}})])
    b = bench([], [], {"defaultingType": "List", "defaultConstraints": [
        {"maxSkew": 2, "topologyKey": "node", "whenUnsatisfiable": DNS}]}, SERVICE_FOO_BAR)
    state = CycleState()
    b.fw.plugin(NAME).pre_filter(state, pod, b.nodes())
    s = state.read("PreFilter" + NAME)
    assert [(c.max_skew, c.topology_key, str(c.selector)) for c in s.constraints] == \
        [(1, "zone", "baz=tar")]


# ---- PreFilterExtensions (TestPreFilterStateAddPod / TestPreFilterStateRemovePod) ------------


def _extend(b: Bench, preemptor: dict, other: dict, node: str, add: bool):
    state, st = pre_filter(b, preemptor)
    assert st is None
    clone = state.clone()
    node_obj = b.cache.node(node)
    run = b.fw.run_pre_filter_extension_add_pod if add else \
        b.fw.run_pre_filter_extension_remove_pod
    assert run(clone, preemptor, other, node_obj) is None
    return state, clone


def test_add_pod_updates_a_clone_only():
    # TestPreFilterStateAddPod/node a and b both impact current min match
    b = bench([zn("node-a", "zone1"), zn("node-b", "zone1")])
    before, after = _extend(b, pod_foo(tsc(1, "node", DNS, FOO)),
                            mk_pod("p-a1", "node-a", {"foo": ""}), "node-a", add=True)
    assert spread(after) == [{"node-a": 1, "node-b": 0}] and min_matches(after) == [0]
    assert spread(before) == [{"node-a": 0, "node-b": 0}]


@pytest.mark.parametrize("case,preemptor,added,pods,nodes,node,want", [
    ("add a pod in a different namespace doesn't change topologyKeyToMinPodsMap",
     pod_foo(tsc(1, "node", DNS, FOO)), mk_pod("p-a1", "node-a", {"foo": ""}, ns="ns1"),
     foo_pods(b=1), [zn("node-a", "zone1"), zn("node-b", "zone1")], "node-a",
     [{"node-a": 0, "node-b": 1}]),
    ("Constraints hold different labelSelectors, node a impacts topologyKeyToMinPodsMap on zone",
     mk_pod("p", labels={"foo": "", "bar": ""},
            constraints=[tsc(1, "zone", DNS, FOO), tsc(1, "node", DNS, BAR)]),
     mk_pod("p-a1", "node-a", {"foo": ""}),
     [mk_pod("p-b1", "node-b", {"foo": "", "bar": ""}),
      mk_pod("p-x1", "node-x", {"foo": "", "bar": ""}), mk_pod("p-x2", "node-x", {"bar": ""})],
     [zn("node-a", "zone1"), zn("node-b", "zone1"), zn("node-x", "zone2")], "node-a",
     [{"zone1": 2, "zone2": 1}, {"node-a": 0, "node-b": 1, "node-x": 2}]),
    ("add a pod when scheduling node affinity unmatched pod with NodeInclusionPolicy enabled",
     pod_foo(tsc(1, "zone", DNS, FOO), affinity=node_affinity("foo", "NotIn", ["bar"])),
     mk_pod("p-a1", "node-a", {"foo": "", "zone": "zone1"}),
     [mk_pod("p-a2", "node-a", {"foo": "", "zone": "zone1"}),
      mk_pod("p-b1", "node-b", {"foo": "", "zone": "zone2"})],
     [zn("node-a", "zone1", foo="bar"), zn("node-b", "zone2", foo="")], "node-a",
     [{"zone2": 1}]),
    ("add a pod when scheduling taint tolerated pod with NodeInclusionPolicy enabled",
     pod_foo(tsc(1, "zone", DNS, FOO),
             tolerations=[{"key": "node.kubernetes.io/unschedulable", "operator": "Exists"}]),
     mk_pod("p-b1", "node-b", {"foo": "", "zone": "zone2"}),
     [mk_pod("p-a1", "node-a", {"foo": "", "zone": "zone1"}),
      mk_pod("p-b2", "node-b", {"foo": "", "zone": "zone2"})],
     [mk_node("node-a", {"zone": "zone1", "node": "node-a"}, taints=TAINTS),
      zn("node-b", "zone2")], "node-b",
     [{"zone1": 1, "zone2": 2}]),
])
def test_add_pod(case, preemptor, added, pods, nodes, node, want):
    # TestPreFilterStateAddPod/<case>
    _, after = _extend(bench(nodes, pods), preemptor, added, node, add=True)
    assert spread(after) == want


@pytest.mark.parametrize("case,preemptor,deleted,pods,nodes,node,want", [
    ("one spreadConstraint on node, topologyKeyToMinPodsMap changed",
     pod_foo(tsc(1, "zone", DNS, FOO)), 0, foo_pods(a=1, b=1, x=1, y=1), FOUR, "node-a",
     [{"zone1": 1, "zone2": 2}]),
    ("delete an irrelevant pod won't help",
     pod_foo(tsc(1, "zone", DNS, FOO)), 0,
     [mk_pod("p-a0", "node-a", {"bar": ""})] + foo_pods(a=1, b=1, x=1, y=1), FOUR, "node-a",
     [{"zone1": 2, "zone2": 2}]),
    ("delete a non-existing pod won't help",
     pod_foo(tsc(1, "zone", DNS, FOO)), mk_pod("p-a0", "node-a", {"bar": ""}),
     foo_pods(a=1, b=1, x=1, y=1), FOUR, "node-a", [{"zone1": 2, "zone2": 2}]),
    ("two spreadConstraints",
     pod_foo(tsc(1, "zone", DNS, FOO), tsc(1, "node", DNS, FOO)), 3,
     foo_pods(a=2, b=1, x=2), [zn("node-a", "zone1"), zn("node-b", "zone1"), zn("node-x", "zone2")],
     "node-x", [{"zone1": 3, "zone2": 1}, {"node-a": 2, "node-b": 1, "node-x": 1}]),
])
def test_remove_pod(case, preemptor, deleted, pods, nodes, node, want):
    # TestPreFilterStateRemovePod/<case> (an int: the index of the existing pod removed)
    other = pods[deleted] if isinstance(deleted, int) else deleted
    _, after = _extend(bench(nodes, pods), preemptor, other, node, add=False)
    assert spread(after) == want


def test_nominated_pod_counts_through_the_framework():
    # TestPreFilterStateAddPod/node a and b both impact current min match gives node-a one
    # matching pod and a minimum of 0: with maxSkew 1 the incoming pod then skews node-a by 2.
    b = bench([zn("node-a", "zone1"), zn("node-b", "zone1")])
    nominated = mk_pod("p-a1", labels={"foo": ""})
    b.cache.add_nominated(nominated, "node-a")
    passing, diagnosis, _ = b.filter(pod_foo(tsc(1, "node", DNS, FOO)))
    assert passing == ["node-b"]
    assert diagnosis.reason_histogram() == {REASON_CONSTRAINTS_NOT_MATCH: 1}


# ---- PreScore (scoring_test.go TestPreScoreStateEmptyNodes, TestPreScoreSkip) ---------------


def pre_score(b: Bench, pod: dict):
    state = CycleState()
    st = b.fw.plugin(NAME).pre_score(state, pod, b.nodes())
    return state, st


def test_prescore_normal_case_weights():
    # TestPreScoreStateEmptyNodes/normal case: weights log(2+2) (zones) and log(3+2) (nodes)
    b = bench([hn("node-a", "zone1"), hn("node-b", "zone1"), hn("node-x", "zone2")])
    state, st = pre_score(b, pod_foo(tsc(1, "zone", SA, FOO), tsc(1, HOSTNAME, SA, FOO)))
    s = state.read("PreScore" + NAME)
    assert st is None and len(s.ignored_rows) == 0
    assert s.weights == [math.log(2 + 2), math.log(3 + 2)]


def test_prescore_node_without_zone_is_ignored():
    # TestPreScoreStateEmptyNodes/node-x doesn't have label zone
    b = bench([hn("node-a", "zone1"), hn("node-b", "zone1"), hn("node-x")])
    state, _ = pre_score(b, pod_foo(tsc(1, "zone", SA, FOO), tsc(1, HOSTNAME, SA, BAR)))
    s = state.read("PreScore" + NAME)
    assert b.names(s.ignored_rows) == ["node-x"]
    assert s.weights == [math.log(1 + 2), math.log(2 + 2)]


RS1 = {"replicasets": [{"apiVersion": "apps/v1", "kind": "ReplicaSet",
                        "metadata": {"name": "rs1", "namespace": "default"},
                        "spec": {"selector": FOO}}]}


def rs_pod(name: str = "rs1", **labels: str) -> dict:
    p = mk_pod("p", labels=labels)
    p["metadata"]["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": "ReplicaSet",
                                         "name": name, "uid": "u", "controller": True}]
    return p


def test_prescore_system_defaults_and_a_replicaset():
    # TestPreScoreStateEmptyNodes/system default constraints and a replicaset: nodes without
    # a zone are not ignored, they make up the "" zone
    nodes = [mk_node("node-a", {HOSTNAME: "node-a", "topology.kubernetes.io/zone": "mars"}),
             mk_node("node-b", {HOSTNAME: "node-b", "topology.kubernetes.io/zone": "mars"}),
             mk_node("node-c", {HOSTNAME: "node-c"}), mk_node("node-d", {HOSTNAME: "node-d"})]
    b = bench(nodes, [], {}, RS1)
    state, st = pre_score(b, rs_pod(foo="tar", baz="sup"))
    s = state.read("PreScore" + NAME)
    assert st is None and len(s.ignored_rows) == 0
    assert [(c.max_skew, c.topology_key, str(c.selector)) for c in s.constraints] == \
        [(3, HOSTNAME, "foo"), (5, "topology.kubernetes.io/zone", "foo")]
    assert s.weights == [math.log(4 + 2), math.log(2 + 2)]


def test_prescore_list_defaults_and_a_replicaset():
    # TestPreScoreStateEmptyNodes/default constraints and a replicaset
    args = {"defaultingType": "List", "defaultConstraints": [
        {"maxSkew": 1, "topologyKey": HOSTNAME, "whenUnsatisfiable": SA},
        {"maxSkew": 2, "topologyKey": "rack", "whenUnsatisfiable": DNS},
        {"maxSkew": 2, "topologyKey": "planet", "whenUnsatisfiable": SA}]}
    b = bench([mk_node("node-a", {"rack": "rack1", HOSTNAME: "node-a", "planet": "mars"})],
              [], args, RS1)
    state, _ = pre_score(b, rs_pod(foo="tar", baz="sup"))
    s = state.read("PreScore" + NAME)
    assert [(c.max_skew, c.topology_key, str(c.selector)) for c in s.constraints] == \
        [(1, HOSTNAME, "foo"), (2, "planet", "foo")]
    assert s.weights == [math.log(1 + 2), math.log(1 + 2)]


@pytest.mark.parametrize("case,pod,args,nodes", [
    ("the pod doesn't have soft topology spread Constraints", mk_pod("p"), None,
     [hn("node-a"), hn("node-b")]),
    ("default constraints and a replicaset that doesn't match", rs_pod("rs2", foo="bar", baz="sup"),
     {"defaultingType": "List", "defaultConstraints": [
         {"maxSkew": 2, "topologyKey": "planet", "whenUnsatisfiable": SA}]},
     [mk_node("node-a", {"planet": "mars"})]),
])
def test_prescore_skip(case, pod, args, nodes):
    # TestPreScoreSkip/<case>
    objects = {"replicasets": [{"metadata": {"name": "rs1", "namespace": "default"},
                                "spec": {"selector": {"matchExpressions": [
                                    {"key": "tar", "operator": "Exists"}]}}}]}
    _, st = pre_score(bench(nodes, [], args, objects), pod)
    assert st is not None and st.code == Code.SKIP


def test_go_round_is_half_away_from_zero():
    # Go's math.Round documentation: Round(±0.5) = ±1, Round(2.5) = 3, and it is exact for the
    # largest double below 0.5 (floor(x + 0.5) would give 1)
    x = np.array([0.5, -0.5, 2.5, -2.5, 0.49999999999999994, 1.4, 3.0])
    assert go_round(x).tolist() == [1.0, -1.0, 3.0, -3.0, 0.0, 1.0, 3.0]


# ---- queueing hints (plugin_test.go) ---------------------------------------------------------


def _hints(b: Bench):
    node_hint, pod_hint = None, None
    for reg in b.fw.plugin(NAME).events_to_register():
        if reg.event.resource == "Node":
            node_hint = reg.hint
        else:
            pod_hint = reg.hint
    return node_hint, pod_hint


ZONE_POD = mk_pod("p", labels={"foo": ""}, constraints=[tsc(1, "zone", DNS, FOO)])
ZONE_NODE_POD = mk_pod("p", labels={"foo": ""}, constraints=[tsc(1, "zone", DNS, FOO),
                                                              tsc(1, "node", DNS, FOO)])


@pytest.mark.parametrize("case,pod,old,new,want", [
    ("node updates label which matches topologyKey", ZONE_POD,
     mk_node("node-a", {"zone": "zone1"}), mk_node("node-a", {"zone": "zone2"}), True),
    ("node that doesn't match topologySpreadConstraints updates non-related label", ZONE_POD,
     mk_node("node-a", {"foo": "bar1"}), mk_node("node-a", {"foo": "bar2"}), False),
    ("create node with non-related labels", ZONE_POD, None, mk_node("node-a", {"foo": "bar"}),
     False),
    ("create node with related labels", ZONE_POD, None, mk_node("node-a", {"zone": "zone1"}), True),
    ("delete node with non-related labels", ZONE_POD, mk_node("node-a", {"foo": "bar"}), None,
     False),
    ("delete node with related labels", ZONE_POD, mk_node("node-a", {"zone": "zone1"}), None, True),
    ("add node with related labels that only match one of topologySpreadConstraints",
     ZONE_NODE_POD, None, mk_node("node-a", {"zone": "zone1"}), False),
    ("add node with related labels that match all topologySpreadConstraints", ZONE_NODE_POD, None,
     mk_node("node-a", {"zone": "zone1", "node": "node1"}), True),
    ("update node with related labels that only match one of topologySpreadConstraints",
     ZONE_NODE_POD, mk_node("node-a", {"zone": "zone1"}), mk_node("node-a", {"zone": "zone1"}),
     False),
    ("update node with related labels that match all topologySpreadConstraints", ZONE_NODE_POD,
     mk_node("node-a", {"zone": "zone1", "node": "node1"}),
     mk_node("node-a", {"zone": "zone1", "node": "node2"}), True),
])
def test_node_change_hint(case, pod, old, new, want):
    # plugin_test.go Test_isSchedulableAfterNodeChange/<case>
    node_hint, _ = _hints(bench([]))
    assert node_hint(pod, old, new) is want


def bound(labels: dict | None = None, ns: str = "default", node: str = "fake-node") -> dict:
    p = mk_pod("other", node, labels, ns=ns)
    p["metadata"]["uid"] = "other-uid"
    return p


ZONE_POD_U = {**ZONE_POD, "metadata": {**ZONE_POD["metadata"], "uid": "p-uid"}}
ZONE_BAR_POD = mk_pod("p", labels={"foo": ""}, constraints=[tsc(1, "zone", DNS, FOO),
                                                             tsc(1, "node", DNS, BAR)])
ZONE_BAR_POD["metadata"]["uid"] = "p-uid"


@pytest.mark.parametrize("case,pod,old,new,want", [
    ("add pod with labels match topologySpreadConstraints selector", ZONE_POD_U, None,
     bound({"foo": ""}), True),
    ("add un-scheduled pod", ZONE_POD_U, None, bound({"foo": ""}, node=""), False),
    ("delete un-scheduled pod", ZONE_POD_U, bound({"foo": ""}, node=""), None, False),
    ("add pod with different namespace", ZONE_POD_U, None,
     bound({"foo": ""}, ns="fake-namespace"), False),
    ("add pod with labels don't match topologySpreadConstraints selector", ZONE_POD_U, None,
     bound({"bar": ""}), False),
    ("delete pod with labels that match topologySpreadConstraints selector", ZONE_POD_U,
     bound({"foo": ""}), None, True),
    ("update pod's non-related label", ZONE_POD_U, bound({"foo": "", "bar": "bar1"}),
     bound({"foo": "", "bar": "bar2"}), False),
    ("add pod's label that matches topologySpreadConstraints selector", ZONE_POD_U, bound(),
     bound({"foo": ""}), True),
    ("delete pod label that matches topologySpreadConstraints selector", ZONE_POD_U,
     bound({"foo": ""}), bound(), True),
    ("change pod's label that matches topologySpreadConstraints selector", ZONE_POD_U,
     bound({"foo": "foo1"}), bound({"foo": "foo2"}), False),
    ("add pod's label that matches topologySpreadConstraints selector with multi "
     + "topologySpreadConstraints", ZONE_BAR_POD, bound({"foo": ""}),
     bound({"foo": "", "bar": "bar2"}), True),
    ("change pod's label that match topologySpreadConstraints selector with multi "
     + "topologySpreadConstraints", ZONE_BAR_POD, bound({"foo": "", "bar": ""}),
     bound({"foo": "", "bar": "bar2"}), False),
])
def test_pod_change_hint(case, pod, old, new, want):
    # plugin_test.go Test_isSchedulableAfterPodChange/<case> (pods given distinct uids: the
    # 1.35 hint also requeues on the target pod's own update)
    _, pod_hint = _hints(bench([]))
    assert pod_hint(pod, old, new) is want


def test_own_toleration_update_requeues_with_taints_policy_honor():
    # plugin.go EventsToRegister: UpdatePodToleration is registered because a pod rejected
    # under NodeTaintsPolicy Honor may fit once it tolerates more
    pod = mk_pod("p", labels={"foo": ""}, constraints=[tsc(1, "zone", DNS, FOO,
                                                           taints_policy="Honor")])
    pod["metadata"]["uid"] = "p-uid"
    new = {**pod, "spec": {**pod["spec"], "tolerations": [{"operator": "Exists"}]}}
    _, pod_hint = _hints(bench([]))
    assert pod_hint(pod, pod, new) is True
    no_honor = {**ZONE_POD_U, "spec": {**ZONE_POD_U["spec"], "tolerations": [{"operator": "Exists"}]}}
    assert pod_hint(ZONE_POD_U, ZONE_POD_U, no_honor) is False


def test_diagnosis_records_codes():
    # TestSingleConstraint/pods spread across zones as 1/2 due to absence of label 'zone' on
    # node-b: node-b UnschedulableAndUnresolvable, node-x and node-y Unschedulable
    nodes = [zn("node-a", "zone1"), mk_node("node-b", {"zon": "zone1", "node": "node-b"}),
             zn("node-x", "zone2"), zn("node-y", "zone2")]
    b = bench(nodes, foo_pods(a=1, b=1, x=1, y=1))
    res, _ = b.filter(pod_foo(tsc(1, "zone", DNS, FOO)), NAME)
    assert dict(zip(b.names(b.nodes().rows), res.codes.tolist())) == {
        "node-a": 0, "node-b": int(Code.UNSCHEDULABLE_AND_UNRESOLVABLE),
        "node-x": int(Code.UNSCHEDULABLE), "node-y": int(Code.UNSCHEDULABLE)}
