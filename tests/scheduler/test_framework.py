"""Framework, configuration, FitError messages, percentageOfNodesToScore, the node walk."""

import asyncio

import numpy as np
import pytest

from kvert.clock import VirtualClock
from kvert.scheduler import Scheduler
from kvert.scheduler.cache import NodeCache
from kvert.scheduler.config import ConfigError, load_config
from kvert.scheduler.framework import (
    Code, CycleState, FitError, Plugin, Status, default_normalize_score,
)
from kvert.scheduler.snapshot import num_feasible_nodes_to_find

from .helpers import Bench, node, pod

CP_TAINT = {"key": "node-role.kubernetes.io/control-plane", "effect": "NoSchedule"}


def scheduler_with(nodes, pods=(), config=None, **kw):
    s = Scheduler(None, VirtualClock(), config, seed=7, **kw)
    for n in nodes:
        s.cache.add_node(n)
    for p in pods:
        s.cache.add_pod(p)
    return s


def fit_error(s, p):
    fw = s.framework_for(p)
    with pytest.raises(FitError) as e:
        s.schedule_pod(fw, CycleState(), p)
    return e.value


# ---- FitError ---------------------------------------------------------------------------------


def three_nodes():
    return [node("cp-1", taints=[CP_TAINT]), node("cp-2", taints=[CP_TAINT]),
            node("worker", cpu="2")]


def test_fit_error_message_three_node_cluster():
    s = scheduler_with(three_nodes())
    err = fit_error(s, pod("big", cpu="3"))
    assert str(err) == ("0/3 nodes are available: 1 Insufficient cpu, "
                        "2 node(s) had untolerated taint(s).")
    assert err.diagnosis.unschedulable_plugins == {"TaintToleration", "NodeResourcesFit"}


def test_fit_error_message_with_taint_named():
    cfg = {"profiles": [{"pluginConfig": [{"name": "TaintToleration",
                                           "args": {"reasonWithTaint": True}}]}]}
    s = scheduler_with(three_nodes(), config=cfg)
    assert str(fit_error(s, pod("big", cpu="3"))) == (
        "0/3 nodes are available: 1 Insufficient cpu, "
        "2 node(s) had untolerated taint {node-role.kubernetes.io/control-plane: }.")


def test_fit_error_keeps_every_reason_of_a_node_and_sorts_the_histogram():
    s = scheduler_with([node("a", cpu="1", memory="1Gi"), node("b", cpu="1", memory="1Gi"),
                        node("c", cpu="8", memory="1Gi", unschedulable=True)])
    err = fit_error(s, pod("p", cpu="2", memory="2Gi"))
    assert str(err) == ("0/3 nodes are available: 1 node(s) were unschedulable, "
                        "2 Insufficient cpu, 2 Insufficient memory.")


def test_fit_error_with_post_filter_message_appended():
    class Preempt(Plugin):
        name = "FakePreemption"

        def post_filter(self, state, pod, diagnosis):
            n = diagnosis.num_all_nodes
            return None, Status(Code.UNSCHEDULABLE, f"preemption: 0/{n} nodes are available: "
                                f"{n} Preemption is not helpful for scheduling.")

    from kvert.scheduler.plugins import REGISTRY
    REGISTRY["FakePreemption"] = Preempt
    try:
        cfg = {"profiles": [{"plugins": {"postFilter": {
            "enabled": [{"name": "FakePreemption"}], "disabled": [{"name": "DefaultPreemption"}]}}}]}
        s = scheduler_with([node("a", taints=[CP_TAINT])], config=cfg)
        fw = s.framework_for(pod("p"))
        err = fit_error(s, pod("p"))
        _, st = fw.run_post_filter(CycleState(), pod("p"), err.diagnosis)
        err.diagnosis.post_filter_msg = st.message()
        assert str(err) == ("0/1 nodes are available: 1 node(s) had untolerated taint(s). "
                            "preemption: 0/1 nodes are available: 1 Preemption is not helpful "
                            "for scheduling.")
    finally:
        REGISTRY.pop("FakePreemption")


def test_prefilter_rejection_and_narrowing_messages():
    s = scheduler_with([node("a"), node("b"), node("c")])
    conflict = pod("p", affinity={"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchFields": [
            {"key": "metadata.name", "operator": "In", "values": ["a"]},
            {"key": "metadata.name", "operator": "In", "values": ["b"]}]}]}}})
    assert str(fit_error(s, conflict)) == "0/3 nodes are available: pod affinity terms conflict."
    # a PreFilterResult naming a node that is too small: the rest "didn't satisfy plugin(s)"
    pinned = pod("p", cpu="8", affinity={"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchFields": [
            {"key": "metadata.name", "operator": "In", "values": ["a"]}]}]}}})
    assert str(fit_error(s, pinned)) == (
        "0/3 nodes are available: 1 Insufficient cpu, "
        "2 node(s) didn't satisfy plugin(s) [NodeAffinity].")


# ---- percentageOfNodesToScore --------------------------------------------------------------------


@pytest.mark.parametrize("pct,nodes,expected", [
    (None, 50, 50),        # fewer than 100 nodes: all
    (None, 100, 100),      # 50% of 100 = 50, but at least 100
    (None, 1000, 420),     # 50 - 1000/125 = 42%
    (None, 5000, 500),     # 10% at 5000 nodes (the seed's figure)
    (None, 6000, 300),     # 50 - 48 = 2% -> at least 5%
    (None, 20000, 1000),   # 5%
    (50, 1000, 500),
    (100, 1000, 1000),
    (1, 5000, 100),        # never fewer than 100
])
def test_num_feasible_nodes_to_find(pct, nodes, expected):
    assert num_feasible_nodes_to_find(pct, nodes) == expected


def test_scheduler_stops_filtering_after_enough_nodes_and_walks_round_robin():
    nodes = [node(f"n{i:03d}") for i in range(300)]
    s = scheduler_with(nodes)
    fw = s.framework_for(pod("p"))
    # 50 - 300/125 = 48% of 300 = 144 nodes examined and scored
    r = s.schedule_pod(fw, CycleState(), pod("p", cpu="100m"))
    assert (r.evaluated, r.feasible) == (144, 144)
    assert s.algorithm.next_start == 144
    r = s.schedule_pod(fw, CycleState(), pod("q", cpu="100m"))
    assert s.algorithm.next_start == 288
    assert set(s.cache.names[int(x)] for x in r.scored_rows) == \
        {f"n{i:03d}" for i in range(144, 288)}
    # the profile's percentageOfNodesToScore wins over the adaptive default
    s = scheduler_with(nodes, config={"percentageOfNodesToScore": 100})
    r = s.schedule_pod(s.framework_for(pod("p")), CycleState(), pod("p"))
    assert r.feasible == 300


def test_node_walk_interleaves_zones_like_the_node_tree():
    # seed 001: Zone 1: Node 1-4, Zone 2: Node 5-6 -> 1, 5, 2, 6, 3, 4
    cache = NodeCache()
    for i in range(1, 7):
        zone = "zone-1" if i <= 4 else "zone-2"
        cache.add_node(node(f"Node {i}", labels={"topology.kubernetes.io/zone": zone}))
    order = cache.snapshot().order
    assert [cache.names[int(r)] for r in order] == \
        ["Node 1", "Node 5", "Node 2", "Node 6", "Node 3", "Node 4"]


def test_single_feasible_node_is_not_scored():
    s = scheduler_with([node("a"), node("b", taints=[CP_TAINT])])
    r = s.schedule_pod(s.framework_for(pod("p")), CycleState(), pod("p"))
    assert r.node == "a" and r.per_plugin is None


def test_ties_are_broken_at_random_among_the_best():
    s = scheduler_with([node(f"n{i}") for i in range(4)])
    fw = s.framework_for(pod("p"))
    picks = {s.schedule_pod(fw, CycleState(), pod("p")).node for _ in range(40)}
    assert len(picks) > 1


# ---- configuration ---------------------------------------------------------------------------------


def test_default_profile_plugins_and_weights():
    b = Bench([node("a")])
    fw = b.fw
    # kube-scheduler 1.36's default profile (getDefaultPlugins, DynamicResources enabled,
    # NodeDeclaredFeatures -- beta, on -- appended by applyFeatureGates)
    assert [p.name for p in fw.points["filter"]] == [
        "NodeUnschedulable", "NodeName", "TaintToleration", "NodeAffinity", "NodePorts",
        "NodeResourcesFit", "VolumeRestrictions", "NodeVolumeLimits", "VolumeBinding", "VolumeZone",
        "PodTopologySpread", "InterPodAffinity", "DynamicResources", "NodeDeclaredFeatures"]
    assert fw.weights == {"TaintToleration": 3, "NodeAffinity": 2, "NodeResourcesFit": 1,
                          "VolumeBinding": 1, "PodTopologySpread": 2, "InterPodAffinity": 2,
                          "NodeResourcesBalancedAllocation": 1, "ImageLocality": 1}
    assert [p.name for p in fw.points["postFilter"]] == ["DynamicResources", "DefaultPreemption"]
    assert [p.name for p in fw.points["queueSort"]] == ["PrioritySort"]
    assert [p.name for p in fw.points["preEnqueue"]] == [
        "SchedulingGates", "DynamicResources", "DefaultPreemption"]
    assert [p.name for p in fw.points["bind"]] == ["DefaultBinder"]


def test_profiles_from_yaml_with_score_overrides_and_disabled_plugins():
    text = """
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
percentageOfNodesToScore: 30
profiles:
  - schedulerName: default-scheduler
  - schedulerName: bin-packer
    percentageOfNodesToScore: 80
    plugins:
      score:
        enabled:
          - name: NodeResourcesFit
            weight: 5
        disabled:
          - name: NodeResourcesBalancedAllocation
    pluginConfig:
      - name: NodeResourcesFit
        args:
          scoringStrategy:
            type: MostAllocated
"""
    cfg = load_config(text)
    assert [p.scheduler_name for p in cfg.profiles] == ["default-scheduler", "bin-packer"]
    s = Scheduler(None, VirtualClock(), text)
    packer = s.frameworks["bin-packer"]
    assert packer.weights == {"NodeResourcesFit": 5, "TaintToleration": 3, "NodeAffinity": 2,
                              "VolumeBinding": 1, "PodTopologySpread": 2, "InterPodAffinity": 2,
                              "ImageLocality": 1}
    assert [p.name for p in packer.points["score"]] == [
        "NodeResourcesFit", "TaintToleration", "NodeAffinity", "VolumeBinding", "PodTopologySpread",
        "InterPodAffinity", "ImageLocality"]
    assert packer.plugin("NodeResourcesFit").scorer.strategy == "MostAllocated"
    assert packer.percentage_of_nodes_to_score == 80
    assert s.frameworks["default-scheduler"].percentage_of_nodes_to_score == 30


@pytest.mark.parametrize("config,message", [
    ({"profiles": [{"plugins": {"score": {"enabled": [{"name": "NoSuchPlugin"}]}}}]},
     "plugin 'NoSuchPlugin' does not exist"),
    ({"profiles": [{"schedulerName": "a"}, {"schedulerName": "a"}]}, "Duplicate value: 'a'"),
    ({"percentageOfNodesToScore": 101}, r"percentageOfNodesToScore: Invalid value: 101"),
    ({"profiles": [{"plugins": {"multiPoint": {"disabled": [{"name": "*"}]}}}]},
     "exactly one queueSort plugin"),
    ({"profiles": [{"plugins": {"filter": {"enabled": [{"name": "DefaultBinder"}]}}}]},
     "does not implement the filter extension point"),
    ({"kind": "Pod"}, "kind: Unsupported value"),
    ({"profiles": [{"plugins": {"scoring": {}}}]}, "unknown extension point"),
    ({"profiles": [{"pluginConfig": [{"name": "NodeResourcesFit", "args": {
        "scoringStrategy": {"type": "Fancy"}}}]}]}, "Unsupported value: 'Fancy'"),
    ("profiles: [", "not valid YAML"),
])
def test_invalid_configurations_are_refused_with_the_field(config, message):
    with pytest.raises(ConfigError, match=message):
        load_config(config)


def test_default_normalize_score():
    assert default_normalize_score(100, False, np.array([1, 50, 25])).tolist() == [2, 100, 50]
    assert default_normalize_score(100, True, np.array([0, 1, 2])).tolist() == [100, 50, 0]
    assert default_normalize_score(100, True, np.array([0, 0])).tolist() == [100, 100]
    assert default_normalize_score(100, False, np.array([0, 0])).tolist() == [0, 0]


# ---- Permit: allow / deny / wait with a timeout --------------------------------------------------


class Gate(Plugin):
    name = "Gate"

    def permit(self, state, pod, node):
        return Status(Code.WAIT), 10.0


def test_permit_wait_allow_and_timeout():
    b = Bench([node("a")], config=None)
    fw = b.fw
    fw.points["permit"] = [Gate()]
    clock = VirtualClock()

    async def main():
        p1, p2 = pod("p1"), pod("p2")
        assert fw.run_permit(CycleState(), p1, "a").code == Code.WAIT
        assert fw.run_permit(CycleState(), p2, "a").code == Code.WAIT
        waiter1 = asyncio.ensure_future(fw.wait_on_permit(p1))
        waiter2 = asyncio.ensure_future(fw.wait_on_permit(p2))
        await asyncio.sleep(0)
        fw.get_waiting_pod(p1["metadata"]["uid"]).allow("Gate")
        assert await waiter1 is None
        start = clock.now()
        st = await waiter2
        assert st.code == Code.UNSCHEDULABLE and clock.now() - start == pytest.approx(10.0)
        assert st.message() == "rejected due to timeout after waiting 10s at plugin Gate"
        assert not fw.waiting_pods

    clock.run(main())


# ---- the explanation ---------------------------------------------------------------------------


def test_explanation_is_capped_for_big_clusters():
    from kvert.scheduler import explain
    nodes = [node(f"cp-{i:02d}", taints=[CP_TAINT]) for i in range(50)] + \
        [node(f"w-{i:02d}", cpu="1" if i % 2 else "4") for i in range(30)]
    s = scheduler_with(nodes)
    p = pod("p", cpu="2")
    fw = s.framework_for(p)
    state = CycleState()
    r = s.schedule_pod(fw, state, p)
    ex = explain.build(fw, state, p, result="Scheduled", attempt=1, now=0.0, node=r.node,
                       total_nodes=80, evaluated=r.evaluated, feasible=r.feasible,
                       diagnosis=r.diagnosis, scored_rows=r.scored_rows,
                       per_plugin=r.per_plugin, total=r.total)
    assert ex["nodes"] == {"total": 80, "evaluated": 80, "feasible": 15}
    # at most MAX_NODES nodes per map, in the order the scheduler examined them
    assert len(ex["filtered"]) == explain.MAX_NODES
    assert all(r in (["node(s) had untolerated taint(s)"], ["Insufficient cpu"])
               for r in ex["filtered"].values())
    assert len(ex["scores"]) == explain.MAX_NODES and next(iter(ex["scores"])) == r.node
    totals = list(ex["totals"].values())
    assert totals == sorted(totals, reverse=True) and list(ex["totals"]) == list(ex["scores"])
    full = explain.build(fw, state, p, result="Scheduled", attempt=1, now=0.0, node=r.node,
                         total_nodes=80, evaluated=r.evaluated, feasible=r.feasible,
                         diagnosis=r.diagnosis, limit=None)
    reasons = list(full["filtered"].values())
    assert reasons.count(["node(s) had untolerated taint(s)"]) == 50
    assert reasons.count(["Insufficient cpu"]) == 15
    assert len(explain.encode(ex)) < 8000


def test_stop_before_the_informers_sync_ends_run():
    class Down:
        async def list(self, *a, **k):
            raise OSError("connection refused")

    clock = VirtualClock()

    async def main():
        s = Scheduler(Down(), clock)
        task = asyncio.ensure_future(s.run())
        await clock.sleep(3)
        s.stop()
        await asyncio.wait_for(task, 5)
        return s.synced.is_set()

    assert clock.run(main()) is False
