"""GangScheduling against upstream's gangscheduling_test.go and workloadmanager tests (1.35).

The Workload kind is not served yet, so the live Scheduler cannot be tested; the plugin runs
in a real Framework over a Bench cache with StaticListers, in virtual time
(``VirtualClock.run``): Reserve, Permit (WaitingPod, its timers) and WaitOnPermit are the
framework's. The upstream vectors (vectors/gangscheduling.py) also run through
:class:`PermitAwareOffline`, ``kvert schedule``'s OfflineScheduler with the Permit handling
proposed for it.
"""

from __future__ import annotations

import asyncio
import json

import pytest

from kvert.clock import VirtualClock
from kvert.scheduler.algorithm import SchedulingAlgorithm
from kvert.scheduler.cache import NodeCache
from kvert.scheduler.config import build_framework, load_config
from kvert.scheduler.framework import (
    ASSIGNED_POD, POD, ActionType, ClusterEvent, Code, CycleState, FitError,
    Handle, QUEUE, QUEUE_SKIP, is_success,
)
from kvert.scheduler.listers import StaticListers
from kvert.scheduler.offline import OfflineScheduler, parse_objects
from kvert.scheduler.plugins.gangscheduling import (
    DEFAULT_SCHEDULING_TIMEOUT, WAITING_IN_QUEUE, WAITING_ON_PERMIT, PodGroupInfo,
    WorkloadManager, feed,
)

from .helpers import node
from .vectors import gangscheduling as vectors

GO = "gangscheduling_test.go TestGangSchedulingFlow/"
WORKLOAD, BASIC_WL = vectors.GANG_WL, vectors.BASIC_WL
P1, P2, P3, P4, P5 = vectors.P1, vectors.P2, vectors.P3, vectors.P4, vectors.P5
BASIC_POD, NON_GANG = vectors.pod("basic-pod", wl="basic-wl"), vectors.pod("non-gang", wl=None)


class Activator:
    """``podActivatorMock``: records the pods Permit activates."""

    def __init__(self) -> None:
        self.pods: list[dict] = []

    def __call__(self, pods: list[dict]) -> None:
        self.pods.extend(pods)


def gang_framework(workloads=(), nodes=(), bound=(), clock=None):
    cache = NodeCache()
    for n in nodes:
        cache.add_node(n)
    for p in bound:
        cache.add_pod(p)
    handle = Handle(cache, clock=clock, listers=StaticListers({"workloads": list(workloads)}))
    handle.activate = Activator()
    fw = build_framework(load_config(vectors.CONFIG).profiles[0], handle)
    return fw, fw.plugin("GangScheduling"), handle


def names(pods) -> list[str]:
    return sorted(p["metadata"]["name"] for p in pods)


# ---- TestGangSchedulingFlow ----------------------------------------------------------------------


@pytest.mark.parametrize("case,pod,initial,workloads,waiting,pre_enqueue,permit,activated,allowed", [
    ("non-gang pod succeeds immediately", NON_GANG, [], [WORKLOAD, BASIC_WL], [], None, None,
     [], []),
    ("basic policy pod succeeds immediately", BASIC_POD, [], [WORKLOAD, BASIC_WL], [], None, None,
     [], []),
    ("gang pod fails PreEnqueue when workload is not yet created", P1, [P2, P3, P4, P5], [], [],
     (Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
      'waiting for pods\'s workload "gang-wl" to appear in scheduling queue'), None, [], []),
    ("gang pod fails PreEnqueue when quorum is not met", P1, [P2, P4, P5], [WORKLOAD], [],
     (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, WAITING_IN_QUEUE), None, [], []),
    ("gang pod passes PreEnqueue, but waits at Permit", P1, [P2, P3, P4, P5], [WORKLOAD],
     [P2, P4, P5], None, (Code.WAIT, WAITING_ON_PERMIT), ["p3"], []),
    ("final gang pod arrives at Permit and allows all waiting pods from a gang", P1,
     [P2, P3, P4, P5], [WORKLOAD], [P2, P3, P4, P5], None, None, [], ["p2", "p3"]),
])
def test_gang_scheduling_flow(case, pod, initial, workloads, waiting, pre_enqueue, permit,
                              activated, allowed):
    # GO <case>
    async def main():
        fw, pl, handle = gang_framework(workloads)
        feed(pl.manager, [*initial, pod])
        st = pl.pre_enqueue(pod)
        assert (None if st is None else (st.code, st.message())) == pre_enqueue
        if st is not None:
            return
        # the other pods reach Permit first and wait there
        for other in waiting:
            assert pl.reserve(CycleState(), other, "some-node") is None
            assert fw.run_permit(CycleState(), other, "some-node").is_wait
        assert pl.reserve(CycleState(), pod, "some-node") is None
        handle.activate.pods.clear()
        got, timeout = pl.permit(CycleState(), pod, "some-node")
        assert (None if got is None else (got.code, got.message())) == permit
        assert names(handle.activate.pods) == activated
        if got is not None:
            assert timeout == DEFAULT_SCHEDULING_TIMEOUT
            pl.unreserve(CycleState(), pod, "some-node")
            return
        for w in waiting:
            wp = fw.get_waiting_pod(w["metadata"]["uid"])
            done = wp._future.done() and wp._future.result() is None
            assert done == (w["metadata"]["name"] in allowed), w["metadata"]["name"]
    VirtualClock().run(main())


def test_pre_enqueue_and_permit_on_an_unknown_pod_group():
    # gangscheduling.go PreEnqueue / Permit: the Workload has no such pod group
    _, pl, _ = gang_framework([WORKLOAD])
    stray = vectors.pod("stray", group="pg9")
    feed(pl.manager, [stray])
    st = pl.pre_enqueue(stray)
    assert (st.code, st.message()) == (Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                                       'pod group "pg9" doesn\'t exist for a workload "gang-wl"')
    st, _ = pl.permit(CycleState(), stray, "n1")
    assert st.code == Code.ERROR


def test_permit_after_the_workload_was_deleted_is_an_error():
    # gangscheduling.go Permit: "failed to get workload %s/%s: %w" (the pod is retried)
    _, pl, _ = gang_framework([])
    feed(pl.manager, [P1])
    st, timeout = pl.permit(CycleState(), P1, "n1")
    message = 'failed to get workload ns1/gang-wl: workload.scheduling.k8s.io "gang-wl" not found'
    assert (st.code, st.message(), timeout) == (Code.ERROR, message, 0.0)


def test_bound_pods_count_towards_the_quorum():
    # gangscheduling.go Permit: assumed pods united with AssignedPods() reach minCount; the
    # bound ones reach the plugin through the cache (PreEnqueue counts them as pods too)
    bound = [vectors.pod("b1", node_name="n1"), vectors.pod("b2", node_name="n1")]
    fw, pl, _ = gang_framework([WORKLOAD], [node("n1")], bound)
    assert pl.pre_enqueue(P1) is None
    assert pl.reserve(CycleState(), P1, "n1") is None
    assert pl.permit(CycleState(), P1, "n1") == (None, 0.0)
    # a bound pod deleted leaves its group: the quorum is short again
    fw.handle.cache.remove_pod(bound[0])
    info = pl.manager.pod_group_info("ns1", P1["spec"]["workloadRef"])
    assert sorted(info.all_pods) == ["b2", "p1"] and info.assigned == {"b2"}


# ---- workloadmanager: podgroupinfo_test.go -------------------------------------------------------


def test_pod_group_info_assume_forget():
    # podgroupinfo_test.go TestPodGroupInfo_AssumeForget
    pgi = PodGroupInfo()
    pgi.add_pod(P1)
    assert "p1" not in pgi.assumed and "p1" in pgi.unscheduled
    pgi.assume_pod("p1")
    assert "p1" in pgi.assumed and "p1" not in pgi.unscheduled
    pgi.forget_pod("p1")
    assert "p1" not in pgi.assumed and "p1" in pgi.unscheduled


def test_pod_group_info_scheduling_timeout():
    # podgroupinfo_test.go TestPodGroupInfo_SchedulingTimeout: the deadline is set by the
    # first call, kept (so the time left shrinks), and renewed once it has passed
    pgi = PodGroupInfo()
    timeout = pgi.scheduling_timeout(1000.0)
    assert pgi.deadline is not None and timeout > 0
    deadline = pgi.deadline
    assert pgi.scheduling_timeout(1010.0) < timeout and pgi.deadline == deadline
    pgi.deadline = 1099.0
    assert pgi.scheduling_timeout(1100.0) > 0 and pgi.deadline not in (deadline, 1099.0)


def test_workload_manager_tracks_binding_and_deletion():
    # podgroupinfo.go updatePod / deletePod: binding moves a pod to assigned; the last pod
    # deleted removes the group; replica keys are groups of their own
    m = WorkloadManager()
    feed(m, [P1, P5])
    ref = P1["spec"]["workloadRef"]
    m.pod_group_info("ns1", ref).assume_pod("p1")
    bound = {**P1, "spec": {**P1["spec"], "nodeName": "n1"}}
    m.update_pod(P1, bound)
    info = m.pod_group_info("ns1", ref)
    assert (info.assigned, info.assumed, info.unscheduled) == ({"p1"}, set(), set())
    assert sorted(m.pod_group_info("ns1", P5["spec"]["workloadRef"]).all_pods) == ["p5"]
    m.delete_pod(bound)
    with pytest.raises(LookupError):
        m.pod_group_info("ns1", ref)


# ---- Permit's timeout, in virtual time ----------------------------------------------------------


def run_gang(pods, nodes, *, stagger: float = 0.0):
    """Schedule ``pods`` one by one (filter, score, assume, Reserve, Permit) in virtual time,
    ``stagger`` seconds apart; returns {name: (node, status, loop time when Permit ended)}."""
    clock = VirtualClock()

    async def main():
        fw, pl, _ = gang_framework([WORKLOAD], nodes, clock=clock)
        feed(pl.manager, pods)
        algorithm = SchedulingAlgorithm(fw.handle.cache)
        loop = asyncio.get_running_loop()
        results, tasks = {}, []

        async def bind(name, state, assumed, node_name):
            st = await fw.wait_on_permit(assumed)
            if not is_success(st):
                fw.run_unreserve(state, assumed, node_name)
                fw.handle.cache.forget_pod(assumed)
            results[name] = (node_name if is_success(st) else None, st, loop.time())

        for pod in pods:
            name = pod["metadata"]["name"]
            assert pl.pre_enqueue(pod) is None
            state = CycleState()
            try:
                r = algorithm.schedule_pod(fw, state, pod)
            except FitError as e:   # this one fits nowhere
                results[name] = (None, e, loop.time())
                continue
            assumed = fw.handle.cache.assume_pod(pod, r.node)
            assert fw.run_reserve(state, assumed, r.node) is None
            st = fw.run_permit(state, assumed, r.node)
            assert st is None or st.is_wait
            tasks.append(asyncio.ensure_future(bind(name, state, assumed, r.node)))
            await asyncio.sleep(stagger)
        await asyncio.gather(*tasks)
        return results, pl
    return clock.run(main())


def test_a_complete_gang_binds_together():
    # GO final gang pod arrives at Permit and allows all waiting pods from a gang
    results, _ = run_gang([P1, P2, P3], [node("n1")], stagger=10)
    assert {n: r[0] for n, r in results.items()} == {"p1": "n1", "p2": "n1", "p3": "n1"}
    # p1 and p2 waited for p3, which arrived at t=20
    assert {n: r[2] for n, r in results.items()} == {"p1": 20, "p2": 20, "p3": 20}


def test_an_incomplete_gang_times_out_together_and_can_try_again():
    # GO gang pod passes PreEnqueue, but waits at Permit; podgroupinfo.go SchedulingTimeout:
    # the deadline is the group's, set when p1 waits, so p2 (waiting from t=100) is rejected
    # at t=300 with p1; both are unreserved and the group's pods are unscheduled again
    results, pl = run_gang([P1, P2, P3], [node("n1", pods="2")], stagger=100)
    assert results["p1"][0] is None and results["p2"][0] is None
    assert results["p1"][2] == results["p2"][2] == DEFAULT_SCHEDULING_TIMEOUT
    st = results["p1"][1]
    assert (st.code, st.plugin) == (Code.UNSCHEDULABLE, "GangScheduling")
    assert st.message() == "rejected due to timeout after waiting 5m0s at plugin GangScheduling"
    assert results["p2"][1].message() == \
        "rejected due to timeout after waiting 3m20s at plugin GangScheduling"
    info = pl.manager.pod_group_info("ns1", P1["spec"]["workloadRef"])
    assert info.unscheduled == {"p1", "p2", "p3"} and not info.assumed
    # the next attempt gets a fresh deadline
    assert info.scheduling_timeout(info.deadline + 1) == DEFAULT_SCHEDULING_TIMEOUT


# ---- queueing hints ----------------------------------------------------------------------------


@pytest.mark.parametrize("added,hint", [
    (P2, QUEUE),                                          # same workload, pod group, replica
    (P4, QUEUE_SKIP),                                     # another pod group
    (P5, QUEUE_SKIP),                                     # another replica key
    (NON_GANG, QUEUE_SKIP),
    ({**P2, "metadata": {**P2["metadata"], "namespace": "ns2"}}, QUEUE_SKIP),
])
def test_is_schedulable_after_pod_added(added, hint):
    # gangscheduling.go isSchedulableAfterPodAdded / matchingWorkloadReference
    _, pl, _ = gang_framework()
    assert pl.is_schedulable_after_pod_added(P1, None, added) is hint
    assert pl.is_schedulable_after_pod_added(NON_GANG, None, added) is QUEUE_SKIP


@pytest.mark.parametrize("added,hint", [
    (WORKLOAD, QUEUE), (BASIC_WL, QUEUE_SKIP),
    ({**WORKLOAD, "metadata": {"name": "gang-wl", "namespace": "ns2"}}, QUEUE_SKIP),
])
def test_is_schedulable_after_workload_added(added, hint):
    # gangscheduling.go isSchedulableAfterWorkloadAdded
    _, pl, _ = gang_framework()
    assert pl.is_schedulable_after_workload_added(P1, None, added) is hint


def test_events_to_register():
    # gangscheduling.go EventsToRegister: Pod/Add (a bound pod added too), Workload/Add
    _, pl, _ = gang_framework()
    events = [e.event for e in pl.events_to_register()]
    assert ClusterEvent(ASSIGNED_POD, ActionType.ADD).matches(events[0])
    assert ClusterEvent(POD, ActionType.ADD).matches(events[0])
    assert not ClusterEvent(POD, ActionType.UPDATE_POD_LABEL).matches(events[0])
    assert (events[1].resource, events[1].action) == ("Workload", ActionType.ADD)


def test_config_enables_it_at_pre_enqueue_reserve_and_permit():
    fw, _, _ = gang_framework()
    for point in ("preEnqueue", "reserve", "permit"):
        assert "GangScheduling" in [p.name for p in fw.points[point]]
    default = build_framework(load_config(None).profiles[0], Handle(NodeCache()))
    assert default.plugin("GangScheduling") is None   # alpha: off by default


# ---- the vectors, with Permit honoured ----------------------------------------------------------


def run_vector(v) -> dict:
    from .test_upstream_vectors import _pending, _with_kind
    objects = _with_kind(v.nodes, "Node") + _with_kind(v.pods, "Pod") + list(v.objects) \
        + [_pending(v.pod)]
    objects = parse_objects(json.dumps({"kind": "List", "items": objects}))
    return {p["name"]: p for p in OfflineScheduler(objects, v.config).run()["pods"]}


@pytest.mark.parametrize("v", vectors.VECTORS, ids=lambda v: v.id)
def test_vectors_with_permit(v):
    got = run_vector(v)[v.pod["metadata"]["name"]]
    assert got["node"] == v.node


def test_permit_vectors_outcome_of_the_whole_gang():
    # the vectors check the pod under test; here its gang mates: all or nothing
    waits, completes = vectors.PERMIT_VECTORS
    report = run_vector(waits)
    assert [report[n]["node"] for n in ("p1", "p2", "p3")] == [None, None, None]
    assert report["p1"]["message"] == \
        "rejected due to timeout after waiting 5m0s at plugin GangScheduling"
    assert report["p2"]["message"] == report["p1"]["message"]
    assert report["p3"]["message"].startswith("0/1 nodes are available: 1 Too many pods.")
    report = run_vector(completes)
    assert {n: report[n]["node"] for n in ("p4", "p6", "p7", "p8")} == dict.fromkeys(
        ("p4", "p6", "p7", "p8"), "n1")
    # PreEnqueue's message for a gang short of pods
    report = run_vector(vectors.VECTORS[3])
    assert report["p1"]["message"] == WAITING_IN_QUEUE
