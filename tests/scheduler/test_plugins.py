"""The in-tree plugins against Kubernetes' documented and tested numbers."""

import numpy as np
import pytest

from kvert.scheduler.config import ConfigError, load_config
from kvert.scheduler.framework import Code, CycleState
from kvert.scheduler.plugins.noderesources import (
    balanced_allocation,
    broken_linear,
    least_allocated,
    most_allocated,
    requested_to_capacity_ratio,
)

from .helpers import Bench, node, pod

CP_TAINT = {"key": "node-role.kubernetes.io/control-plane", "effect": "NoSchedule"}


def rtcr_config(shape, resources, interpolation=None):
    rtcr = {"shape": shape}
    if interpolation:
        rtcr["interpolation"] = interpolation
    return {"profiles": [{"schedulerName": "default-scheduler", "pluginConfig": [{
        "name": "NodeResourcesFit", "args": {"scoringStrategy": {
            "type": "RequestedToCapacityRatio", "resources": resources,
            "requestedToCapacityRatio": rtcr}}}]}]}


# ---- RequestedToCapacityRatio: seed 001's worked example -------------------------------------

SEED_SHAPE = [{"utilization": 0, "score": 0}, {"utilization": 100, "score": 10}]
SEED_WEIGHTS = [{"name": "intel.com/foo", "weight": 5}, {"name": "memory", "weight": 1},
                {"name": "cpu", "weight": 3}]


def seed_cluster(config):
    nodes = [node("node1", cpu="8", memory="1Gi", extra={"intel.com/foo": "4"}),
             node("node2", cpu="8", memory="1Gi", extra={"intel.com/foo": "8"})]
    used = [pod("used1", cpu="1", memory="256Mi", node_name="node1",
                extra_requests={"intel.com/foo": "1"}),
            pod("used2", cpu="6", memory="512Mi", node_name="node2",
                extra_requests={"intel.com/foo": "2"})]
    return Bench(nodes, used, config)


def test_requested_to_capacity_ratio_default_scales_the_shape_first_60_and_69():
    # intel.com/foo: 2, memory: 256MB, cpu: 2 against the seed's Node1 and Node2.
    # kube-scheduler (requested_to_capacity_ratio.go requestedToCapacityRatioScorer) scales
    # the shape's scores x10 before interpolating: per resource 75, 50, 37 and 50, 75, 100;
    # round((75*5 + 50*1 + 37*3) / 9) = round(59.6) = 60, round((50*5 + 75*1 + 100*3) / 9) =
    # round(69.4) = 69.
    b = seed_cluster(rtcr_config(SEED_SHAPE, SEED_WEIGHTS))
    incoming = pod("p", cpu="2", memory="256Mi", extra_requests={"intel.com/foo": "2"})
    assert b.score(incoming, "NodeResourcesFit") == {"node1": 60, "node2": 69}
    b = seed_cluster(rtcr_config(SEED_SHAPE, SEED_WEIGHTS, "NodeScore"))
    assert b.score(incoming, "NodeResourcesFit") == {"node1": 60, "node2": 69}


def test_requested_to_capacity_ratio_shape_score_option_gives_the_seed_5_and_7():
    # Seed 001's worked example interpolates on the shape's 0..10 scale:
    # NodeScore = ((7*5) + (5*1) + (3*3)) / (5+1+3) = 5 and ((5*5) + (7*1) + (10*3)) / 9 = 7;
    # kvert's ShapeScore option reads it so, scaled to the 0..100 node scores.
    b = seed_cluster(rtcr_config(SEED_SHAPE, SEED_WEIGHTS, "ShapeScore"))
    incoming = pod("p", cpu="2", memory="256Mi", extra_requests={"intel.com/foo": "2"})
    assert b.score(incoming, "NodeResourcesFit") == {"node1": 50, "node2": 70}


def test_requested_to_capacity_ratio_raw_function_on_the_seed_numbers():
    req = np.array([[3, 512, 3], [4, 768, 8]], np.int64)      # foo, memory (MB), cpu
    alloc = np.array([[4, 1024, 8], [8, 1024, 8]], np.int64)
    weights = np.array([5, 1, 3], np.int64)
    shape = [(0, 0), (100, 10)]
    # the shape itself, on its 0..10 scale, per resource as the seed computes them
    util = np.where(req > alloc, 100, req * 100 // alloc)
    assert broken_linear(util, shape).tolist() == [[7, 5, 3], [5, 7, 10]]
    assert list(requested_to_capacity_ratio(req, alloc, weights, shape, "ShapeScore") // 10) \
        == [5, 7]
    # the default (kube-scheduler): 60 and 69
    assert requested_to_capacity_ratio(req, alloc, weights, shape).tolist() == [60, 69]


def test_seed_standalone_requested_to_capacity_ratio_plugin():
    def config(extra=None):
        return {"profiles": [{"plugins": {"score": {
            "enabled": [{"name": "RequestedToCapacityRatio", "weight": 2}],
            "disabled": [{"name": "NodeResourcesFit"}]}},
            "pluginConfig": [{"name": "RequestedToCapacityRatio",
                              "args": {"shape": SEED_SHAPE, "resources": SEED_WEIGHTS,
                                       **(extra or {})}}]}]}
    incoming = pod("p", cpu="2", memory="256Mi", extra_requests={"intel.com/foo": "2"})
    b = seed_cluster(config())
    assert b.score(incoming, "RequestedToCapacityRatio") == {"node1": 60, "node2": 69}
    assert b.fw.weights["RequestedToCapacityRatio"] == 2
    assert "NodeResourcesFit" not in b.fw.weights
    b = seed_cluster(config({"interpolation": "ShapeScore"}))
    assert b.score(incoming, "RequestedToCapacityRatio") == {"node1": 50, "node2": 70}


def test_broken_linear_truncates_like_go_for_decreasing_shapes():
    shape = [(0, 10), (100, 0)]          # least-requested shape of the seed
    p = np.array([0, 37, 50, 99, 100, 150])
    # 10 + (-10*37)/100 = 10 - 3 (Go truncates toward zero) = 7
    assert broken_linear(p, shape).tolist() == [10, 7, 5, 1, 0, 0]


@pytest.mark.parametrize("points,cases", [
    # requested_to_capacity_ratio_test.go TestBrokenLinearFunction case_0 .. case_2
    ([(10, 1), (90, 9)], [(-10, 1), (0, 1), (9, 1), (10, 1), (15, 1), (19, 1), (20, 2), (89, 8),
                          (90, 9), (99, 9), (100, 9), (110, 9)]),
    ([(0, 2), (40, 10), (100, 0)], [(-10, 2), (0, 2), (20, 6), (30, 8), (40, 10), (70, 5),
                                    (100, 0), (110, 0)]),
    ([(0, 2), (40, 2), (100, 2)], [(-10, 2), (0, 2), (20, 2), (30, 2), (40, 2), (70, 2),
                                   (100, 2), (110, 2)]),
])
def test_broken_linear_function_upstream_cases(points, cases):
    p = np.array([c[0] for c in cases])
    assert broken_linear(p, points).tolist() == [c[1] for c in cases]


@pytest.mark.parametrize("shape,resources,message", [
    # validateFunctionShape / validateResources (validation_pluginargs.go)
    ([{"utilization": 50, "score": 1}, {"utilization": 10, "score": 2}], SEED_WEIGHTS,
     r"args\.scoringStrategy\.requestedToCapacityRatio\.shape\[1\]\.utilization: Invalid "
     r"value: 10: values must be sorted in increasing order"),
    ([{"utilization": 0, "score": 11}], SEED_WEIGHTS,
     r"shape\[0\]\.score: Invalid value: 11: not in valid range \[0, 10\]"),
    ([{"utilization": 101, "score": 1}], SEED_WEIGHTS,
     r"shape\[0\]\.utilization: Invalid value: 101: not in valid range \[0, 100\]"),
    ([], SEED_WEIGHTS, r"shape: Required value: at least one point must be specified"),
    (SEED_SHAPE, [{"name": "cpu", "weight": 101}],
     r"scoringStrategy\.resources\[0\]\.weight: Invalid value: 101: resource weight of cpu not "
     r"in valid range \(0, 100\]"),
    (SEED_SHAPE, [{"name": "memory", "weight": -1}, {"name": "cpu", "weight": 1}],
     r"resources\[0\]\.weight: Invalid value: -1"),
])
def test_requested_to_capacity_ratio_shape_validation(shape, resources, message):
    with pytest.raises(ConfigError, match=message):
        load_config(rtcr_config(shape, resources))


def test_zero_or_missing_resource_weight_defaults_to_1():
    # v1 SetDefaults_NodeResourcesFitArgs: a weight of 0 is 1 (validation then passes)
    cfg = rtcr_config(SEED_SHAPE, [{"name": "cpu", "weight": 0}, {"name": "memory"}])
    b = Bench([node("a")], config=cfg)
    assert b.fw.plugin("NodeResourcesFit").scorer.resources == [("cpu", 1), ("memory", 1)]


# ---- LeastAllocated / MostAllocated / BalancedAllocation: Kubernetes' test tables ----------


def k8s_nodes(*sizes):
    return [node(f"node{i + 1}", cpu=str(c), memory=str(m)) for i, (c, m) in enumerate(sizes)]


def two_container_pod(name="p", node_name=""):
    return pod(name, node_name=node_name, containers=[
        {"name": "a", "image": "x", "resources": {"requests": {"cpu": "1000", "memory": "2000"}}},
        {"name": "b", "image": "x", "resources": {"requests": {"cpu": "2000", "memory": "3000"}}}])


@pytest.mark.parametrize("sizes,existing,expected", [
    # nothing scheduled, resources requested, differently sized nodes: 37, 50
    ([(4000, 10000), (6000, 10000)], [], [37, 50]),
    # resources requested, pods scheduled with resources: 57, 45
    ([(10000, 20000), (10000, 20000)],
     [("node1", "3000", "0"), ("node2", "3000", "5000")], [57, 45]),
    # ... differently sized nodes: 57, 60
    ([(10000, 20000), (10000, 50000)],
     [("node1", "3000", "0"), ("node2", "3000", "5000")], [57, 60]),
])
def test_least_allocated_kubernetes_cases(sizes, existing, expected):
    pods = [pod(f"e{i}", cpu=c, memory=m, node_name=n) for i, (n, c, m) in enumerate(existing)]
    b = Bench(k8s_nodes(*sizes), pods)
    scores = b.score(two_container_pod(), "NodeResourcesFit")
    assert list(scores.values()) == expected


def test_least_allocated_request_over_capacity_and_weights():
    # requested resources exceed node capacity: cpu scores 0 -> 50 and 25
    b = Bench(k8s_nodes((4000, 10000), (4000, 10000)),
              [pod("e1", cpu="3000", memory="0", node_name="node1"),
               pod("e2", cpu="3000", memory="5000", node_name="node2")])
    assert list(b.score(pod("p", cpu="3000", memory="0"), "NodeResourcesFit").values()) == [50, 25]
    # memory weight 2, cpu weight 1: (25*1 + 50*2) / 3 = 41 and 50
    cfg = {"profiles": [{"pluginConfig": [{"name": "NodeResourcesFit", "args": {"scoringStrategy": {
        "type": "LeastAllocated", "resources": [{"name": "memory", "weight": 2},
                                                {"name": "cpu", "weight": 1}]}}}]}]}
    b = Bench(k8s_nodes((4000, 10000), (6000, 10000)), config=cfg)
    assert list(b.score(two_container_pod(), "NodeResourcesFit").values()) == [41, 50]


def test_least_allocated_counts_default_requests_for_containers_without_any():
    # a container with no requests counts 100m cpu / 200Mi memory when scoring (not filtering)
    b = Bench([node("n", cpu="1", memory="1000Mi")])
    scores = b.score(pod("p"), "NodeResourcesFit")
    # cpu (1000-100)*100/1000 = 90; memory (1000-200)*100/1000 = 80 -> 85
    assert scores == {"n": 85}


def test_most_allocated_kubernetes_case():
    # resources requested, pods scheduled with resources: cpu 60 mem 25 -> 42; cpu 60 mem 50 -> 55
    req = np.array([[6000, 5000], [6000, 10000]])
    alloc = np.array([[10000, 20000], [10000, 20000]])
    assert most_allocated(req, alloc, np.array([1, 1])).tolist() == [42, 55]
    cfg = {"profiles": [{"pluginConfig": [{"name": "NodeResourcesFit", "args": {
        "scoringStrategy": {"type": "MostAllocated"}}}]}]}
    b = Bench(k8s_nodes((10000, 20000), (10000, 20000)),
              [pod("e1", cpu="3000", memory="0", node_name="node1"),
               pod("e2", cpu="3000", memory="5000", node_name="node2")], cfg)
    assert list(b.score(two_container_pod(), "NodeResourcesFit").values()) == [42, 55]


def test_least_allocated_raw_function():
    req = np.array([[3000, 5000], [3000, 5000]])
    alloc = np.array([[4000, 10000], [6000, 10000]])
    assert least_allocated(req, alloc, np.array([1, 1])).tolist() == [37, 50]


def test_balanced_allocation_std_formula():
    # cpu 3000/4000 = 0.75, memory 5000/10000 = 0.5: std = 0.125 -> (1-0.125)*100 = 87
    # cpu 3000/6000 = memory 0.5: 100
    b = Bench(k8s_nodes((4000, 10000), (6000, 10000)))
    assert list(b.score(two_container_pod(), "NodeResourcesBalancedAllocation").values()) == [87, 100]
    # pods scheduled with resources: cpu 0.6/mem 0.25 -> 82; cpu 0.6/mem 0.5 -> 95
    b = Bench(k8s_nodes((10000, 20000), (10000, 20000)),
              [pod("e1", cpu="3000", memory="0", node_name="node1"),
               pod("e2", cpu="3000", memory="5000", node_name="node2")])
    assert list(b.score(two_container_pod(), "NodeResourcesBalancedAllocation").values()) == [82, 95]
    # three resources: population standard deviation
    req = np.array([[1, 2, 3]])
    alloc = np.array([[4, 4, 4]])
    f = np.array([0.25, 0.5, 0.75])
    assert balanced_allocation(req, alloc).tolist() == [int((1 - f.std()) * 100)]


def test_balanced_allocation_skips_best_effort_pods():
    b = Bench(k8s_nodes((4000, 10000)))
    assert b.score(pod("p"), "NodeResourcesBalancedAllocation") == {}


# ---- NodeResourcesFit filter -------------------------------------------------------------------


def test_fit_filter_reasons_and_codes():
    nodes = [node("small", cpu="1", memory="1Gi"), node("busy", cpu="4", memory="8Gi", pods="1"),
             node("ok", cpu="4", memory="8Gi")]
    b = Bench(nodes, [pod("e", cpu="100m", memory="1Mi", node_name="busy")])
    res, _ = b.filter(pod("p", cpu="2", memory="2Gi"), "NodeResourcesFit")
    by_node = {b.cache.names[int(r)]: (int(c), res.node_reasons(i))
               for i, (r, c) in enumerate(zip(b.nodes().rows, res.codes))}
    assert by_node["small"] == (Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                                ["Insufficient cpu", "Insufficient memory"])
    assert by_node["busy"] == (Code.UNSCHEDULABLE, ["Too many pods"])
    assert by_node["ok"] == (0, [])


def test_fit_filter_extended_resources_and_ignored():
    nodes = [node("gpu", extra={"example.com/gpu": "2"}), node("plain")]
    b = Bench(nodes)
    names, diag, _ = b.filter(pod("p", cpu="1", extra_requests={"example.com/gpu": "1"}))
    assert names == ["gpu"]
    assert diag.reason_histogram() == {"Insufficient example.com/gpu": 1}
    cfg = {"profiles": [{"pluginConfig": [{"name": "NodeResourcesFit",
                                           "args": {"ignoredResourceGroups": ["example.com"]}}]}]}
    b = Bench(nodes, config=cfg)
    names, _, _ = b.filter(pod("p", cpu="1", extra_requests={"example.com/gpu": "1"}))
    assert names == ["gpu", "plain"]


def test_fit_counts_pod_overhead():
    b = Bench([node("n", cpu="1", memory="1Gi")])
    p = pod("p", cpu="800m", memory="100Mi", overhead={"cpu": "250m", "memory": "120Mi"})
    names, diag, _ = b.filter(p)
    assert names == [] and diag.reason_histogram() == {"Insufficient cpu": 1}


def test_fit_counts_pending_resize_at_max_of_spec_and_allocated():
    # seed 000: while a resize is pending, the larger of spec and allocated resources counts
    running = pod("running", cpu="3", memory="1Gi", node_name="n")
    running["status"] = {"phase": "Running", "containerStatuses": [{
        "name": "app", "allocatedResources": {"cpu": "1", "memory": "1Gi"},
        "resources": {"requests": {"cpu": "1", "memory": "1Gi"}}}]}
    b = Bench([node("n", cpu="4", memory="8Gi")], [running])
    assert int(b.cache.req[b.cache.row_of["n"], b.cache.col("cpu")]) == 3000
    names, _, _ = b.filter(pod("p", cpu="1500m"))
    assert names == []            # 4 - max(3, 1) = 1 < 1.5
    # a downsize pending: spec 1, allocated 3 -> still 3 counted until applied
    shrinking = pod("shrinking", cpu="1", memory="1Gi", node_name="n")
    shrinking["status"] = {"phase": "Running", "containerStatuses": [{
        "name": "app", "allocatedResources": {"cpu": "3", "memory": "1Gi"},
        "resources": {"requests": {"cpu": "3", "memory": "1Gi"}}}]}
    b = Bench([node("n", cpu="4", memory="8Gi")], [shrinking])
    assert b.filter(pod("p", cpu="1500m"))[0] == []


# ---- TaintToleration (seed 001 §6, the taints page) ------------------------------------------


def test_taint_toleration_filter_docs_examples():
    taint = {"key": "key1", "value": "value1", "effect": "NoSchedule"}
    b = Bench([node("node1", taints=[taint]), node("node2")])
    # no toleration: only node2
    names, diag, state = b.filter(pod("p"))
    assert names == ["node2"]
    assert diag.reason_histogram() == {"node(s) had untolerated taint(s)": 1}
    # both documented tolerations tolerate key1=value1:NoSchedule
    for tol in ({"key": "key1", "operator": "Equal", "value": "value1", "effect": "NoSchedule"},
                {"key": "key1", "operator": "Exists", "effect": "NoSchedule"}):
        assert b.filter(pod("p", tolerations=[tol]))[0] == ["node1", "node2"]
    # a toleration for another effect does not
    tol = {"key": "key1", "operator": "Exists", "effect": "NoExecute"}
    assert b.filter(pod("p", tolerations=[tol]))[0] == ["node2"]


def test_taint_toleration_reason_with_taint_option_and_explanation_detail():
    cfg = {"profiles": [{"pluginConfig": [{"name": "TaintToleration",
                                           "args": {"reasonWithTaint": True}}]}]}
    b = Bench([node("cp", taints=[CP_TAINT]), node("w", taints=[
        {"key": "dedicated", "value": "gpu", "effect": "NoExecute"}])], config=cfg)
    _, diag, state = b.filter(pod("p"))
    assert diag.reason_histogram() == {
        "node(s) had untolerated taint {node-role.kubernetes.io/control-plane: }": 1,
        "node(s) had untolerated taint {dedicated: gpu}": 1}
    plugin = b.fw.plugin("TaintToleration")
    assert plugin.explain_node(state, pod("p"), b.cache.row_of["w"], b.cache) == \
        "untolerated taint dedicated=gpu:NoExecute"


def test_taint_toleration_score_prefer_no_schedule():
    soft = {"key": "soft", "value": "v", "effect": "PreferNoSchedule"}
    soft2 = {"key": "soft2", "value": "v", "effect": "PreferNoSchedule"}
    b = Bench([node("none"), node("one", taints=[soft]), node("two", taints=[soft, soft2])])
    # counts 0, 1, 2 -> reverse-normalized: 100, 50, 0
    assert b.score(pod("p"), "TaintToleration") == {"none": 100, "one": 50, "two": 0}
    tol = {"key": "soft", "operator": "Exists", "effect": "PreferNoSchedule"}
    assert b.score(pod("p", tolerations=[tol]), "TaintToleration") == \
        {"none": 100, "one": 100, "two": 0}


# ---- NodeAffinity (seed 001 §2) ----------------------------------------------------------------


def affinity_pod(required=None, preferred=None, **kw):
    aff = {}
    if required is not None:
        aff["requiredDuringSchedulingIgnoredDuringExecution"] = {"nodeSelectorTerms": required}
    if preferred is not None:
        aff["preferredDuringSchedulingIgnoredDuringExecution"] = preferred
    return pod("p", affinity={"nodeAffinity": aff}, **kw)


def zone_nodes():
    return [node("east", labels={"topology.kubernetes.io/zone": "antarctica-east1",
                                 "another-node-label-key": "another-node-label-value"}),
            node("west", labels={"topology.kubernetes.io/zone": "antarctica-west1"}),
            node("north", labels={"topology.kubernetes.io/zone": "arctic-1"})]


def test_node_affinity_docs_example_required_and_preferred():
    p = affinity_pod(
        required=[{"matchExpressions": [{"key": "topology.kubernetes.io/zone", "operator": "In",
                                         "values": ["antarctica-east1", "antarctica-west1"]}]}],
        preferred=[{"weight": 1, "preference": {"matchExpressions": [{
            "key": "another-node-label-key", "operator": "In",
            "values": ["another-node-label-value"]}]}}])
    b = Bench(zone_nodes())
    names, diag, _ = b.filter(p)
    assert names == ["east", "west"]
    assert diag.reason_histogram() == {"node(s) didn't match Pod's node affinity/selector": 1}
    assert b.score(p, "NodeAffinity") == {"east": 100, "west": 0, "north": 0}


def test_node_affinity_weights_docs_example():
    # label-1=key-1 (weight 1) and label-2=key-2 (weight 50): the node with label-2 wins
    nodes = [node("n1", labels={"kubernetes.io/os": "linux", "label-1": "key-1"}),
             node("n2", labels={"kubernetes.io/os": "linux", "label-2": "key-2"})]
    p = affinity_pod(
        required=[{"matchExpressions": [{"key": "kubernetes.io/os", "operator": "In",
                                         "values": ["linux"]}]}],
        preferred=[{"weight": 1, "preference": {"matchExpressions": [
                       {"key": "label-1", "operator": "In", "values": ["key-1"]}]}},
                   {"weight": 50, "preference": {"matchExpressions": [
                       {"key": "label-2", "operator": "In", "values": ["key-2"]}]}}])
    b = Bench(nodes)
    assert b.score(p, "NodeAffinity", normalize=False) == {"n1": 1, "n2": 50}
    assert b.score(p, "NodeAffinity") == {"n1": 2, "n2": 100}


def test_node_selector_and_operators():
    nodes = [node("ssd", labels={"disktype": "ssd", "cores": "16"}),
             node("hdd", labels={"disktype": "hdd", "cores": "4"}), node("bare")]
    b = Bench(nodes)
    assert b.filter(pod("p", nodeSelector={"disktype": "ssd"}))[0] == ["ssd"]
    gt = affinity_pod(required=[{"matchExpressions": [
        {"key": "cores", "operator": "Gt", "values": ["8"]}]}])
    assert b.filter(gt)[0] == ["ssd"]
    not_in = affinity_pod(required=[{"matchExpressions": [
        {"key": "disktype", "operator": "NotIn", "values": ["ssd"]}]}])
    assert b.filter(not_in)[0] == ["hdd", "bare"]
    absent = affinity_pod(required=[{"matchExpressions": [
        {"key": "disktype", "operator": "DoesNotExist"}]}])
    assert b.filter(absent)[0] == ["bare"]
    # terms are ORed
    either = affinity_pod(required=[
        {"matchExpressions": [{"key": "disktype", "operator": "In", "values": ["hdd"]}]},
        {"matchExpressions": [{"key": "cores", "operator": "Exists"}]}])
    assert b.filter(either)[0] == ["ssd", "hdd"]


def test_node_affinity_match_fields_narrows_nodes_in_prefilter():
    b = Bench([node("a"), node("b"), node("c")])
    p = affinity_pod(required=[{"matchFields": [
        {"key": "metadata.name", "operator": "In", "values": ["b"]}]}])
    state = CycleState()
    result, st, narrowing = b.fw.run_pre_filter(state, p, b.nodes())
    assert st is None and result.node_names == {"b"} and narrowing == {"NodeAffinity"}
    assert b.filter(p)[0] == ["b"]


def test_node_affinity_added_affinity_from_profile():
    # seed 001: a profile that only places pods on nodes labelled scheduler-profile=foo
    cfg = {"profiles": [{"schedulerName": "foo-scheduler", "pluginConfig": [{
        "name": "NodeAffinity", "args": {"addedAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [{
                "matchExpressions": [{"key": "scheduler-profile", "operator": "In",
                                      "values": ["foo"]}]}]}}}}]}]}
    b = Bench([node("foo", labels={"scheduler-profile": "foo"}), node("other")], config=cfg)
    names, diag, _ = b.filter(pod("p"))
    assert names == ["foo"]
    assert diag.reason_histogram() == {"node(s) didn't match scheduler-enforced node affinity": 1}


def test_node_affinity_memo_follows_label_changes():
    b = Bench([node("a", labels={"tier": "web"}), node("b", labels={"tier": "db"})])
    p = pod("p", nodeSelector={"tier": "web"})
    assert b.filter(p)[0] == ["a"]
    b.cache.update_node(None, node("b", labels={"tier": "web"}))
    assert b.filter(p)[0] == ["a", "b"]


# ---- NodeUnschedulable, NodeName -----------------------------------------------------------------


def test_node_unschedulable_and_its_toleration():
    b = Bench([node("cordoned", unschedulable=True), node("open")])
    names, diag, _ = b.filter(pod("p"))
    assert names == ["open"] and diag.reason_histogram() == {"node(s) were unschedulable": 1}
    tol = {"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoSchedule"}
    assert b.filter(pod("p", tolerations=[tol]))[0] == ["cordoned", "open"]


def test_node_name_filter():
    b = Bench([node("a"), node("b")])
    res, _ = b.filter(pod("p", nodeName="b"), "NodeName")
    assert res.passed.tolist() == [False, True]
    assert res.reasons[0][0] == "node(s) didn't match the requested node name"
