"""DefaultPreemption: args, the dry run, eligibility, errors (plugin level, against
``defaultpreemption/default_preemption_test.go`` and the args validation tests), and the live
scheduler preempting through the API. Selection and most dry-run cases are upstream vectors
in ``vectors/defaultpreemption.py``."""

import asyncio

import numpy as np
import pytest

from kvert.scheduler import Scheduler
from kvert.scheduler.algorithm import SchedulingAlgorithm
from kvert.scheduler.config import ConfigError
from kvert.scheduler.framework import Code, CycleState, FitError, Plugin, Status
from kvert.scheduler.plugins import REGISTRY, register_plugin
from kvert.scheduler.plugins.defaultpreemption import DefaultPreemption, validate_args
from kvert.scheduler.preemption import Budget

from .helpers import Bench, Cluster, condition, node, pod

T = "default_preemption_test.go"
MID, HIGH, VERY_HIGH = 100, 1000, 10000


def vnode(name, **kw):
    """``st.MakeNode().Capacity(veryLargeRes)``: 500m cpu, 500 bytes, 32 pods."""
    return node(name, cpu="500m", memory="500", pods="32", **kw)


def args_config(**args):
    return {"profiles": [{"schedulerName": "default-scheduler",
                          "pluginConfig": [{"name": "DefaultPreemption", "args": args}]}]}


class Offsets:
    """Stands in for ``getOffsetRand``: upstream seeds it with 4, which draws 4, 1, 3 for five
    nodes (the offsets its test comments name)."""

    def __init__(self, *values):
        self.values = list(values)

    def randrange(self, n):
        return self.values.pop(0)


def fail_then_post_filter(b: Bench, p: dict):
    """A scheduling attempt that fails, then the plugin's PostFilter on its diagnosis."""
    state = CycleState()
    with pytest.raises(FitError) as fit:
        SchedulingAlgorithm(b.cache).schedule_pod(b.fw, state, p)
    result, st = b.fw.plugin("DefaultPreemption").post_filter(state, p, fit.value.diagnosis)
    return result, st, state


def names(pods):
    return sorted(v["metadata"]["name"] for v in pods)


# ---- args -----------------------------------------------------------------------------------


def test_default_args():
    # config/v1 SetDefaults_DefaultPreemptionArgs: 10 % and 100 nodes
    pl = DefaultPreemption({}, None)
    assert (pl.min_percentage, pl.min_absolute) == (10, 100)


@pytest.mark.parametrize("args,message", [
    # apis/config/validation/validation_pluginargs_test.go TestValidateDefaultPreemptionArgs
    ({"minCandidateNodesPercentage": -1, "minCandidateNodesAbsolute": 100},
     "minCandidateNodesPercentage: Invalid value: -1: not in valid range [0, 100]"),
    ({"minCandidateNodesPercentage": 900, "minCandidateNodesAbsolute": 100},
     "minCandidateNodesPercentage: Invalid value: 900: not in valid range [0, 100]"),
    ({"minCandidateNodesPercentage": 20, "minCandidateNodesAbsolute": -1},
     "minCandidateNodesAbsolute: Invalid value: -1: not in valid range [0, inf)"),
    ({"minCandidateNodesPercentage": 0, "minCandidateNodesAbsolute": 0},
     ("[minCandidateNodesPercentage: Invalid value: 0: cannot be zero at the same time as "
      "minCandidateNodesAbsolute, minCandidateNodesAbsolute: Invalid value: 0: cannot be zero "
      "at the same time as minCandidateNodesPercentage]")),
    ({"minCandidateNodesPercentage": -1, "minCandidateNodesAbsolute": -1},
     ("[minCandidateNodesPercentage: Invalid value: -1: not in valid range [0, 100], "
      "minCandidateNodesAbsolute: Invalid value: -1: not in valid range [0, inf)]")),
])
def test_invalid_args_name_the_field(args, message):
    with pytest.raises(ValueError) as e:
        validate_args(args)
    assert str(e.value) == message
    with pytest.raises(ConfigError, match="minCandidateNodes"):
        Bench([vnode("n")], config=args_config(**args))


def test_valid_edge_args():
    assert validate_args({"minCandidateNodesPercentage": 0, "minCandidateNodesAbsolute": 1}) == (0, 1)
    assert validate_args({"minCandidateNodesPercentage": 100, "minCandidateNodesAbsolute": 0}) == (100, 0)


# ---- the dry run: offsets and the number of candidates ------------------------------------


def five_nodes(pods, **args):
    b = Bench([vnode(f"node{i}") for i in range(1, 6)], pods,
              config=args_config(minCandidateNodesPercentage=40, **args))
    return b


def dry_run(b, preemptor, offsets, budgets=()):
    """Upstream's loop: PreFilter, GetOffsetAndNumCandidates, DryRunPreemption over all nodes
    sorted by name; (node, victims, violations) per candidate by node name, per cycle."""
    pl = b.fw.plugin("DefaultPreemption")
    pl.rng = Offsets(*offsets)
    rows = np.array([b.cache.row_of[f"node{i}"] for i in range(1, 6)], np.int64)
    cycles = []
    for p in preemptor if isinstance(preemptor, list) else [preemptor]:
        state = CycleState()
        _, st, _ = b.fw.run_pre_filter(state, p, b.nodes())
        assert st is None
        offset, num = pl.get_offset_and_num_candidates(len(rows))
        got, _, errors = pl.evaluator.dry_run_preemption(state, p, rows, list(budgets), offset, num)
        assert errors == []
        cycles.append(sorted((c.node, [v.key for v in c.victims], c.num_pdb_violations)
                             for c in got))
    return cycles


def large(name, node_name="", priority=MID, labels=None):
    p = pod(name, cpu="300m", memory="300", node_name=node_name, priority=priority)
    p["metadata"]["labels"] = dict(labels or {})
    return p


def test_candidates_limited_by_args():
    # T TestDryRunPreemption/all nodes are possible candidates, but DefaultPreemptionArgs limits to 2
    b = five_nodes([large(f"p{i}", f"node{i}") for i in range(1, 6)], minCandidateNodesAbsolute=1)
    assert dry_run(b, large("p", priority=HIGH), [4]) == [
        [("node1", ["default/p1"], 0), ("node5", ["default/p5"], 0)]]


def test_some_nodes_are_not_candidates():
    # T TestDryRunPreemption/some nodes are not possible candidates, DefaultPreemptionArgs limits to 2
    prios = {1: MID, 2: VERY_HIGH, 3: MID, 4: MID, 5: VERY_HIGH}
    b = five_nodes([large(f"p{i}", f"node{i}", prios[i]) for i in range(1, 6)],
                   minCandidateNodesAbsolute=1)
    assert dry_run(b, large("p", priority=HIGH), [4]) == [
        [("node1", ["default/p1"], 0), ("node3", ["default/p3"], 0)]]


def test_offset_wraps_around_across_cycles():
    # T TestDryRunPreemption/preemption offset across multiple scheduling cycles and wrap around
    b = five_nodes([large(f"p{i}", f"node{i}") for i in range(1, 6)], minCandidateNodesAbsolute=1)
    preemptors = [large(f"tp{i}", priority=HIGH) for i in (1, 2, 3)]
    assert dry_run(b, preemptors, [4, 1, 3]) == [
        [("node1", ["default/p1"], 0), ("node5", ["default/p5"], 0)],
        [("node2", ["default/p2"], 0), ("node3", ["default/p3"], 0)],
        [("node4", ["default/p4"], 0), ("node5", ["default/p5"], 0)],
    ]


def test_dry_run_looks_past_num_candidates_for_a_node_without_pdb_violation():
    # T TestDryRunPreemption/preemption looks past numCandidates until a non-PDB violating node
    # is found: node5 (pdb), node1 (pdb), node2 (pdb, over the limit), node3 (no pdb): stop
    foo = {"app": "foo"}
    pods = [large("p1", "node1", labels=foo), large("p2", "node2", labels=foo),
            large("p3", "node3"), large("p4", "node4"), large("p5", "node5", labels=foo)]
    b = five_nodes(pods, minCandidateNodesAbsolute=2)
    budgets = Budget.parse_all([{"metadata": {"namespace": "default"},
                                 "spec": {"selector": {"matchLabels": foo}},
                                 "status": {"disruptionsAllowed": 0}}])
    assert dry_run(b, large("p", priority=HIGH), [4], budgets) == [
        [("node1", ["default/p1"], 1), ("node3", ["default/p3"], 0),
         ("node5", ["default/p5"], 1)]]


def test_pdb_selectors_that_match_nothing():
    # filterPodsWithPDBViolation: "A PDB with a nil or empty selector matches nothing."
    budgets = Budget.parse_all([
        {"metadata": {"namespace": "default"}, "spec": {}, "status": {}},
        {"metadata": {"namespace": "default"}, "spec": {"selector": {}}, "status": {}},
        {"metadata": {"namespace": "other"}, "spec": {"selector": {"matchLabels": {"a": "b"}}}},
    ])
    assert [b.namespace for b in budgets] == ["other"]


# ---- PostFilter end to end on a cache ---------------------------------------------------------


def test_post_filter_leaves_cache_and_state_untouched():
    # T TestPreempt/basic preemption logic, checking the dry runs worked on copies
    b = Bench([vnode("node1"), vnode("node2"), vnode("node3")], [
        pod("p1.1", cpu="100m", memory="100", node_name="node1", priority=0),
        pod("p1.2", cpu="100m", memory="100", node_name="node1", priority=0),
        pod("p2.1", cpu="300m", memory="300", node_name="node2", priority=HIGH),
        pod("p3.1", cpu="200m", memory="200", node_name="node3", priority=MID)])
    req, count = b.cache.req.copy(), b.cache.pod_count.copy()
    p = pod("p", cpu="500m", memory="500", priority=HIGH)
    result, st, _ = fail_then_post_filter(b, p)
    assert st is None and result.nominated_node_name == "node1"
    assert names(result.victims) == ["p1.1", "p1.2"]
    assert (b.cache.req == req).all() and (b.cache.pod_count == count).all()
    assert len(b.cache.node_entries("node1")) == 2
    # again: the same answer, nothing was consumed
    result, _, _ = fail_then_post_filter(b, p)
    assert result.nominated_node_name == "node1"


def test_nominated_higher_priority_pods_keep_their_room():
    # RunFilterPluginsWithNominatedPods in SelectVictimsOnNode: a pod of higher priority
    # nominated to node1 counts there, so only node2 can be made to fit
    b = Bench([vnode("node1"), vnode("node2")], [
        pod("v1", cpu="200m", memory="200", node_name="node1", priority=0),
        pod("v2", cpu="400m", memory="400", node_name="node2", priority=0)])
    b.cache.add_nominated(pod("waiting", cpu="300m", memory="300", priority=VERY_HIGH), "node1")
    result, _, _ = fail_then_post_filter(b, pod("p", cpu="400m", memory="400", priority=HIGH))
    assert result.nominated_node_name == "node2" and names(result.victims) == ["v2"]


class ExtensionError(Plugin):
    """upstream's TestPlugin: AddPod/RemovePod fail on nodes labelled error=true."""

    name = "test-plugin"

    def pre_filter(self, state, p, nodes):
        return None, None

    def _fail(self, verb, p, node_obj):
        if (node_obj["metadata"].get("labels") or {}).get("error") == "true":
            return Status(Code.ERROR, f"failed to {verb} pod: {p['metadata']['name']}")
        return None

    def pre_filter_add_pod(self, state, p, other, node_obj):
        return self._fail("add", p, node_obj)

    def pre_filter_remove_pod(self, state, p, other, node_obj):
        return self._fail("remove", p, node_obj)


@pytest.fixture
def test_plugin():
    register_plugin("test-plugin", ExtensionError)
    yield {"profiles": [{"schedulerName": "default-scheduler",
                         "plugins": {"multiPoint": {"enabled": [{"name": "test-plugin"}]}}}]}
    REGISTRY.pop("test-plugin")


def test_extension_error_on_the_only_node(test_plugin):
    # T TestPostFilter/only one node but failed with TestPlugin (node1 is made full: upstream
    # hands PostFilter an Unschedulable status for it)
    b = Bench([node("node1", cpu="300m", memory="300", labels={"error": "true"})],
              [pod("p1", cpu="100m", node_name="node1")], config=test_plugin)
    result, st, _ = fail_then_post_filter(b, pod("p", cpu="300m", memory="300", priority=HIGH))
    assert result is None and st.code == Code.ERROR
    assert st.message().startswith("preemption: running ")
    assert st.message().endswith("failed to remove pod: p")


def test_extension_error_on_one_node_other_passes(test_plugin):
    # T TestPostFilter/one failed with TestPlugin and the other pass
    b = Bench([node("node1", cpu="300m", memory="300", labels={"error": "true"}),
               node("node2", cpu="300m", memory="300")],
              [pod("p1", cpu="100m", node_name="node1"),
               pod("p2", cpu="200m", memory="200", node_name="node2")], config=test_plugin)
    result, st, _ = fail_then_post_filter(b, pod("p", cpu="300m", memory="300", priority=HIGH))
    assert st is None and result.nominated_node_name == "node2"


# ---- eligibility ------------------------------------------------------------------------------


def terminating(p, disruption_target=False):
    p["metadata"]["deletionTimestamp"] = "2024-01-01T00:00:00Z"
    if disruption_target:
        p["status"]["conditions"] = [{"type": "DisruptionTarget", "status": "True",
                                      "reason": "PreemptionByScheduler"}]
    return p


def nominated(p, node_name):
    p["status"]["nominatedNodeName"] = node_name
    return p


@pytest.mark.parametrize("case,preemptor,victim,status,expected", [
    ("Pod with nominated node", nominated(pod("p", priority=HIGH), "node1"),
     terminating(pod("p1", priority=0, node_name="node1")),
     Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "node(s) had untolerated taint(s)"), True),
    ("Pod without nominated node", pod("p", priority=HIGH), None, None, True),
    ("Pod with 'PreemptNever' preemption policy",
     pod("p", priority=HIGH, preemptionPolicy="Never"), None, None, False),
    (("preemption victim pod terminating, as indicated by the dedicated DisruptionTarget "
      "condition"), nominated(pod("p", priority=HIGH), "node1"),
     terminating(pod("p1", priority=0, node_name="node1"), True), None, False),
    ("non-victim Pods terminating", nominated(pod("p", priority=HIGH), "node1"),
     terminating(pod("p1", priority=0, node_name="node1")), None, True),
])
def test_pod_eligible_to_preempt_others(case, preemptor, victim, status, expected):
    # T TestPodEligibleToPreemptOthers/<case>
    b = Bench([vnode("node1")], [victim] if victim else [])
    ok, _ = b.fw.plugin("DefaultPreemption").pod_eligible_to_preempt_others(preemptor, status)
    assert ok is expected


def test_unresolvable_nominated_node_lets_a_pod_preempt_again():
    # PodEligibleToPreemptOthers: the nominated node's UnschedulableAndUnresolvable status wins
    # over its terminating victims
    b = Bench([vnode("node1")], [terminating(pod("p1", priority=0, node_name="node1"), True)])
    pl = b.fw.plugin("DefaultPreemption")
    p = nominated(pod("p", priority=HIGH), "node1")
    assert pl.pod_eligible_to_preempt_others(p, Status(Code.UNSCHEDULABLE))[0] is False
    assert pl.pod_eligible_to_preempt_others(
        p, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE))[0] is True


# ---- the live scheduler -------------------------------------------------------------------------


async def start(c: Cluster, config=None):
    s = Scheduler(c.client, c.clock, config, seed=11)
    task = asyncio.ensure_future(s.run())
    await s.synced.wait()
    return s, task


async def stop(s, task):
    await s.wait_idle()
    s.stop()
    await task


async def priority_classes(c: Cluster):
    for name, value, policy in (("low", 10, None), ("high", 1000, None),
                                ("high-never", 1000, "Never")):
        pc = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
              "metadata": {"name": name}, "value": value}
        if policy:
            pc["preemptionPolicy"] = policy
        await c.client.create("scheduling.k8s.io/priorityclasses", pc)


def classed(name, cls, node_name="", cpu="800m", labels=None):
    p = pod(name, cpu=cpu, node_name=node_name, priorityClassName=cls)
    if labels:
        p["metadata"]["labels"] = labels
    return p


def test_live_preemption_marks_deletes_nominates_then_binds():
    c = Cluster()

    async def main():
        await priority_classes(c)
        for n in ("n1", "n2"):
            await c.create_node(node(n, cpu="1"))
        await c.create_pod(classed("low-1", "low", "n1"))
        await c.create_pod(classed("low-2", "low", "n2"))
        s, task = await start(c)
        await c.create_pod(classed("high", "high"))
        await c.settle(1)
        high = await c.get_pod("high")
        lows = {n: await c.get_pod(n) for n in ("low-1", "low-2")}
        victims = [p for p in lows.values() if p["metadata"].get("deletionTimestamp")]
        events = {n: await c.events(n) for n in lows}
        # no kubelet here: finish the victim's graceful deletion as one would
        for v in victims:
            await c.client.delete("pods", v["metadata"]["name"], namespace="default",
                                  grace_period_seconds=0)
        await c.settle(15)
        bound = await c.get_pod("high")
        await stop(s, task)
        return high, lows, victims, events, bound

    high, lows, victims, events, bound = c.run(main)
    [victim] = victims
    target = victim["spec"]["nodeName"]
    assert high["status"]["nominatedNodeName"] == target
    assert "nodeName" not in high["spec"]
    assert condition(high)["message"] == "0/2 nodes are available: 2 Insufficient cpu."
    cond = condition(victim, "DisruptionTarget")
    assert (cond["status"], cond["reason"], cond["message"]) == (
        "True", "PreemptionByScheduler",
        "default-scheduler: preempting to accommodate a higher priority pod")
    [ev] = [e for e in events[victim["metadata"]["name"]] if e["reason"] == "Preempted"]
    assert (ev["type"], ev["message"]) == (
        "Normal", f"Preempted by pod {high['metadata']['uid']} on node {target}")
    survivor = next(p for p in lows.values() if p is not victim)
    assert not survivor["metadata"].get("deletionTimestamp")
    assert condition(survivor, "DisruptionTarget") is None
    assert bound["spec"]["nodeName"] == target


def test_live_pdb_steers_the_victim_and_never_policy_does_not_preempt():
    c = Cluster()

    async def main():
        await priority_classes(c)
        for n in ("n1", "n2"):
            await c.create_node(node(n, cpu="1"))
        # a PDB allowing no disruption (no disruption controller runs here: status stays 0)
        await c.client.create("policy/poddisruptionbudgets", {
            "apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
            "metadata": {"name": "protect", "namespace": "default"},
            "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "db"}}}},
            namespace="default")
        await c.create_pod(classed("db", "low", "n1", labels={"app": "db"}))
        await c.create_pod(classed("batch", "low", "n2", labels={"app": "batch"}))
        s, task = await start(c)
        await c.create_pod(classed("polite", "high-never"))
        await c.settle(1)
        polite = await c.get_pod("polite")
        untouched = [await c.get_pod(n) for n in ("db", "batch")]
        await c.create_pod(classed("urgent", "high"))
        await c.settle(1)
        urgent = await c.get_pod("urgent")
        after = {n: await c.get_pod(n) for n in ("db", "batch")}
        await stop(s, task)
        return polite, untouched, urgent, after

    polite, untouched, urgent, after = c.run(main)
    assert condition(polite)["message"] == (
        "0/2 nodes are available: 2 Insufficient cpu. preemption: not eligible due to "
        "preemptionPolicy=Never.")
    assert "nominatedNodeName" not in polite.get("status", {})
    assert not any(p["metadata"].get("deletionTimestamp") for p in untouched)
    # T TestPostFilter/pod can be made schedulable on minHighestPriority node: the candidate
    # violating no PDB wins
    assert urgent["status"]["nominatedNodeName"] == "n2"
    assert after["batch"]["metadata"].get("deletionTimestamp")
    assert not after["db"]["metadata"].get("deletionTimestamp")


def test_the_preemptor_is_held_at_pre_enqueue_while_its_victims_api_calls_run():
    # 1.35's SchedulerAsyncPreemption: DefaultPreemption.PreEnqueue answers
    # UnschedulableAndUnresolvable "waiting for the preemption for this pod to be finished"
    # until prepareCandidateAsync ends; then a deleted pod requeues the preemptor
    from kvert.scheduler.cache import NodeCache
    from kvert.scheduler.framework import Handle
    from kvert.scheduler.preemption import Candidate

    handle = Handle(NodeCache())
    plugin = DefaultPreemption({}, handle)
    [deleted] = plugin.events_to_register()
    preemptor = pod("high", cpu="1", priority=HIGH)
    uid = preemptor["metadata"]["uid"]
    plugin.evaluator.preempting.add(uid)
    st = plugin.pre_enqueue(preemptor)
    assert (st.code, st.message()) == (Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                                       "waiting for the preemption for this pod to be finished")
    assert plugin.pre_enqueue(pod("other", cpu="1")) is None
    victim = pod("low", cpu="1", node_name="n1")
    assert deleted.hint(preemptor, victim, None) is False
    asyncio.run(plugin.evaluator.prepare_candidate_async(Candidate("n1", 0, []), preemptor))
    assert plugin.pre_enqueue(preemptor) is None
    assert deleted.hint(preemptor, victim, None) is True
