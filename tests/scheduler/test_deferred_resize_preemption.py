"""KEP-5836 (InPlacePodVerticalScalingSchedulerPreemption, alpha in 1.37): the scheduler
preempts lower-priority pods so that a Deferred in-place resize of a higher-priority pod can
proceed. Expected values from upstream's tests:

* pkg/scheduler/framework/plugins/deferredpodscheduling/deferred_pod_scheduling_test.go
  (TestDeferredPodScheduling_PreFilter / _Filter / _isSchedulableAfterNodeChange /
  _isSchedulableAfterNodeAdd / _Permit);
* test/integration/scheduler/preemption/deferred_resize_preemption_test.go
  (TestDeferredResizePodPreemption, TestDeferredResizeQueueingHints,
  TestDeferredResizeNodePreemptionPolicy, TestDeferredResizeQueueingHandlers).
"""

from __future__ import annotations

import asyncio

import numpy as np
import pytest

from kvert.scheduler import Scheduler
from kvert.scheduler.cache import NodeCache
from kvert.scheduler.config import build_framework, load_config
from kvert.scheduler.deferred import GATE
from kvert.scheduler.framework import QUEUE, QUEUE_SKIP, Code, CycleState, Handle
from kvert.scheduler.plugins import default_plugins
from kvert.scheduler.plugins.deferredpodscheduling import (
    ERR_REASON_NODE_DISABLES_RESIZE_PREEMPTION,
    ERR_REASON_OTHER_NODE,
    MSG_RESIZE_FITS,
    DeferredPodScheduling,
)

from .helpers import Cluster, condition, node, pod

ON = {GATE: True}
DEFERRED = {"type": "PodResizePending", "status": "True", "reason": "Deferred"}


def deferred(p: dict) -> dict:
    p = {**p, "status": {"phase": "Running", "conditions": [DEFERRED]}}
    return p


def disabled_node(name: str = "node1") -> dict:
    n = node(name)
    n["spec"]["podPreemptionPolicy"] = {"disableResizePreemption": ["policy1"]}
    return n


def plugin_on(nodes: list[dict], gate: bool) -> tuple[DeferredPodScheduling, NodeCache]:
    cache = NodeCache()
    for n in nodes:
        cache.add_node(n)
    return DeferredPodScheduling({}, Handle(cache), enabled=gate), cache


# ---- the plugin (deferred_pod_scheduling_test.go) ------------------------------------------


@pytest.mark.parametrize("name,p,gate,skip", [
    ("feature gate off, deferred pod -> skip", deferred(pod("pod1", node_name="node1")), False, True),
    ("feature gate on, non-deferred pod -> skip", pod("pod1", node_name="node1"), True, True),
    ("feature gate on, deferred pod -> success/nil", deferred(pod("pod1", node_name="node1")), True,
     False),
])
def test_pre_filter(name, p, gate, skip):
    """upstream: TestDeferredPodScheduling_PreFilter"""
    pl, cache = plugin_on([node("node1")], gate)
    _, st = pl.pre_filter(CycleState(), p, cache.snapshot().all())
    assert (st is not None and st.is_skip) == skip, name
    if not skip:
        assert st is None


@pytest.mark.parametrize("name,p,n,gate,want", [
    ("feature gate off -> success (ignore disabled policy)",
     deferred(pod("pod1", node_name="node1")), disabled_node(), False, None),
    ("feature gate on, non-deferred pod -> success (ignore disabled policy)",
     pod("pod1", node_name="node1"), disabled_node(), True, None),
    ("node has nil preemption policy -> success",
     deferred(pod("pod1", node_name="node1")), node("node1"), True, None),
    ("node has empty disable preemption policy -> success",
     deferred(pod("pod1", node_name="node1")),
     {**node("node1"), "spec": {"podPreemptionPolicy": {"disableResizePreemption": []}}}, True, None),
    ("node has disabled preemption policy -> unschedulable",
     deferred(pod("pod1", node_name="node1")), disabled_node(), True,
     ERR_REASON_NODE_DISABLES_RESIZE_PREEMPTION),
    ("node name does not match pod assigned node -> unschedulable",
     deferred(pod("pod1", node_name="node1")), node("node2"), True, ERR_REASON_OTHER_NODE),
])
def test_filter(name, p, n, gate, want):
    """upstream: TestDeferredPodScheduling_Filter"""
    pl, cache = plugin_on([n], gate)
    res = pl.filter(CycleState(), p, cache.snapshot().all())
    if want is None:
        assert res.passed.all(), name
        return
    assert int(res.codes[0]) == Code.UNSCHEDULABLE_AND_UNRESOLVABLE, name
    assert [reason for reason, mask in res.reasons if mask[0]] == [want]


ENABLED, DISABLED, OTHER = node("node1"), disabled_node(), node("node2")


@pytest.mark.parametrize("name,p,old,new,gate,want", [
    ("gate off, deferred pod, transition to enabled -> skip",
     deferred(pod("pod1", node_name="node1")), DISABLED, ENABLED, False, QUEUE_SKIP),
    ("gate on, non-deferred pod, transition to enabled -> skip",
     pod("pod1", node_name="node1"), DISABLED, ENABLED, True, QUEUE_SKIP),
    ("gate on, deferred pod, node is not pod's assigned node -> skip",
     deferred(pod("pod1", node_name="node1")), OTHER, OTHER, True, QUEUE_SKIP),
    ("gate on, deferred pod, policy transition disabled -> enabled -> queue",
     deferred(pod("pod1", node_name="node1")), DISABLED, ENABLED, True, QUEUE),
    ("gate on, deferred pod, policy transition enabled -> disabled -> skip",
     deferred(pod("pod1", node_name="node1")), ENABLED, DISABLED, True, QUEUE_SKIP),
    ("gate on, deferred pod, other node field updated -> skip",
     deferred(pod("pod1", node_name="node1")), ENABLED, ENABLED, True, QUEUE_SKIP),
])
def test_is_schedulable_after_node_change(name, p, old, new, gate, want):
    """upstream: TestDeferredPodScheduling_isSchedulableAfterNodeChange"""
    pl = DeferredPodScheduling({}, None, enabled=gate)
    assert pl.is_schedulable_after_node_change(p, old, new) == want, name


@pytest.mark.parametrize("name,p,new,gate,want", [
    ("gate off, deferred pod, add enabled node -> skip",
     deferred(pod("pod1", node_name="node1")), ENABLED, False, QUEUE_SKIP),
    ("gate on, non-deferred pod, add enabled node -> skip",
     pod("pod1", node_name="node1"), ENABLED, True, QUEUE_SKIP),
    ("gate on, deferred pod, node is not pod's assigned node -> skip",
     deferred(pod("pod1", node_name="node1")), OTHER, True, QUEUE_SKIP),
    ("gate on, deferred pod, add enabled node -> queue",
     deferred(pod("pod1", node_name="node1")), ENABLED, True, QUEUE),
    ("gate on, deferred pod, add disabled node -> skip",
     deferred(pod("pod1", node_name="node1")), DISABLED, True, QUEUE_SKIP),
])
def test_is_schedulable_after_node_add(name, p, new, gate, want):
    """upstream: TestDeferredPodScheduling_isSchedulableAfterNodeAdd"""
    pl = DeferredPodScheduling({}, None, enabled=gate)
    assert pl.is_schedulable_after_node_change(p, None, new) == want, name


@pytest.mark.parametrize("name,p,gate,rejected", [
    ("feature gate off, deferred pod -> success/nil", deferred(pod("pod1", node_name="node1")),
     False, False),
    ("feature gate on, non-deferred pod -> success/nil", pod("pod1", node_name="node1"), True, False),
    ("feature gate on, deferred pod -> reject with UnschedulableAndUnresolvable",
     deferred(pod("pod1", node_name="node1")), True, True),
])
def test_permit(name, p, gate, rejected):
    """upstream: TestDeferredPodScheduling_Permit"""
    st, _ = DeferredPodScheduling({}, None, enabled=gate).permit(CycleState(), p, "node1")
    if not rejected:
        assert st is None, name
        return
    assert (st.code, st.message()) == (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, MSG_RESIZE_FITS)


def test_default_profile_gains_the_plugin_only_with_the_gate():
    names = [n for n, _ in default_plugins()]
    assert "DeferredPodScheduling" not in names and names[-1] == "NodeDeclaredFeatures"
    with_gate = [n for n, _ in default_plugins(ON)]
    assert with_gate[with_gate.index("NodeName") + 1] == "DeferredPodScheduling"
    assert "NodeDeclaredFeatures" not in [n for n, _ in default_plugins({"NodeDeclaredFeatures": False})]


# ---- NodeResourcesFit's delta (adjustDeltasToAccomodateCacheDiscrepancy) --------------------


def resized(name: str, spec_cpu: str, allocated_cpu: str, priority: int = 0, node_name="node1"):
    """A running pod whose spec asks ``spec_cpu`` while ``allocated_cpu`` is allocated."""
    p = pod(name, cpu=spec_cpu, memory="100", node_name=node_name, priority=priority)
    p["status"] = {"phase": "Running", "conditions": [DEFERRED], "containerStatuses": [{
        "name": "app", "allocatedResources": {"cpu": allocated_cpu, "memory": "100"},
        "resources": {"requests": {"cpu": allocated_cpu, "memory": "100"}}}]}
    return p


def fit_codes(nodes: list[dict], pods: list[dict], target: dict, gates: dict) -> list[int]:
    cache = NodeCache()
    for n in nodes:
        cache.add_node(n)
    for p in pods:
        cache.add_pod(p)
    fw = build_framework(load_config(None).profiles[0], Handle(cache, gates=gates))
    state = CycleState()
    snap = cache.snapshot().all()
    fit = fw.plugin("NodeResourcesFit")
    fit.pre_filter(state, target, snap)
    return [int(c) for c in fit.filter(state, target, snap).codes]


def test_fit_counts_only_what_the_resize_adds_on_the_pods_own_node():
    """The KEP's example (integration 'preempt single low priority pod'): node 300m, a 200m
    victim, the preemptor asking 300m with 100m allocated. The cache counts the preemptor at
    max(spec, allocated) = 300m, so the node is over (500m): Unschedulable, resolvable by
    preemption (300m <= 300m allocatable). Without the victim the delta (0) fits."""
    n = node("node1", cpu="300m", memory="300")
    target = resized("preemptor", "300m", "100m", priority=1000)
    victim = pod("victim-1", cpu="200m", memory="100", node_name="node1", priority=100)
    assert fit_codes([n], [victim, target], target, ON) == [Code.UNSCHEDULABLE]
    assert fit_codes([n], [target], target, ON) == [0]
    # gate off: the pod's own footprint is counted twice (the KEP's double counting): it is
    # rejected on the node it already fits
    assert fit_codes([n], [target], target, {}) == [Code.UNSCHEDULABLE]


def test_fit_unresolvable_when_the_resize_exceeds_the_node():
    n = node("node1", cpu="300m", memory="300")
    target = resized("preemptor", "400m", "100m", priority=1000)
    assert fit_codes([n], [target], target, ON) == [Code.UNSCHEDULABLE_AND_UNRESOLVABLE]


def test_framework_runs_only_the_plugins_that_handle_a_deferred_resize():
    cache = NodeCache()
    cache.add_node(node("node1", taints=[{"key": "k", "effect": "NoSchedule"}]))
    target = resized("p", "100m", "100m")
    cache.add_pod(target)
    fw = build_framework(load_config(None).profiles[0], Handle(cache, gates=ON))
    state = CycleState()
    _, st, _ = fw.run_pre_filter(state, target, cache.snapshot().all())
    assert st is None
    # the taint the pod does not tolerate is not looked at: only NodeName, NodeResourcesFit
    # and DeferredPodScheduling filter
    assert [p.name for p in fw.filter_plugins(state)] == [
        "NodeName", "DeferredPodScheduling", "NodeResourcesFit"]


# ---- the scheduler on an in-process cluster (deferred_resize_preemption_test.go) --------------


LOW, HIGH = 100, 1000


async def priority_classes(c: Cluster) -> None:
    for name, value, policy in (("low", LOW, None), ("high", HIGH, None),
                                ("high-never", HIGH, "Never")):
        pc = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
              "metadata": {"name": name}, "value": value}
        if policy:
            pc["preemptionPolicy"] = policy
        await c.client.create("scheduling.k8s.io/priorityclasses", pc)


def pause(name: str, cls: str, cpu: str, memory: str, node_name: str = "node1") -> dict:
    return pod(name, cpu=cpu, memory=memory, node_name=node_name, priorityClassName=cls)


async def defer(c: Cluster, name: str, allocated: dict, *, extra_conditions=()) -> None:
    """What the integration test writes: Running, PodScheduled True, PodResizePending
    Deferred, the container's allocated and actual resources below its spec."""
    await c.client.patch("pods", name, {"status": {
        "phase": "Running",
        "conditions": [{"type": "PodScheduled", "status": "True"}, DEFERRED, *extra_conditions],
        "containerStatuses": [{"name": "app", "image": "registry.k8s.io/pause:3.10",
                               "imageID": "", "ready": True, "restartCount": 0,
                               "allocatedResources": allocated,
                               "resources": {"requests": allocated}}]}},
        "merge", namespace="default", subresource="status")


async def start(c: Cluster, gates: dict) -> tuple[Scheduler, asyncio.Task]:
    s = Scheduler(c.client, c.clock, seed=5, gates=gates)
    task = asyncio.ensure_future(s.run())
    await s.synced.wait()
    return s, task


async def stop(s: Scheduler, task: asyncio.Task) -> None:
    await s.wait_idle()
    s.stop()
    await task


SINGLE = ("300m", "300", [("victim-1", "low", "200m", "100")], ("high", "300m", "100"),
          ["victim-1"])
MULTIPLE = ("300m", "300", [("victim-1", "low", "100m", "50"), ("victim-2", "low", "100m", "50")],
            ("high", "300m", "100"), ["victim-1", "victim-2"])
NEVER = ("300m", "300", [("victim-1", "low", "200m", "100")], ("high-never", "300m", "100"), [])
FITS = ("300m", "300", [], ("high", "300m", "100"), [])


@pytest.mark.parametrize("name,case,node_policy", [
    ("preempt single low priority pod", SINGLE, False),
    ("preempt multiple low priority pods", MULTIPLE, False),
    ("no preemption when preemptor policy is PreemptNever", NEVER, False),
    ("parking strategy when deferred resize fits on node", FITS, False),
    ("node-level preemption policy disables preemption", SINGLE, True),
])
def test_deferred_resize_pod_preemption(name, case, node_policy):
    """upstream: TestDeferredResizePodPreemption (its five cases)"""
    cpu, memory, existing, (cls, want_cpu, want_mem), evicted = case
    if node_policy:
        evicted = []
    c = Cluster()

    async def main():
        await priority_classes(c)
        n = node("node1", cpu=cpu, memory=memory, pods="32")
        if node_policy:
            n["spec"]["podPreemptionPolicy"] = {"disableResizePreemption": ["test-skew-operator"]}
        await c.create_node(n)
        for vname, vcls, vcpu, vmem in existing:
            await c.create_pod(pause(vname, vcls, vcpu, vmem))
        await c.create_pod(pause("preemptor-pod", cls, want_cpu, want_mem))
        s, task = await start(c, ON)
        await defer(c, "preemptor-pod", {"cpu": "100m", "memory": "100"})
        await c.settle(3)
        victims = {v[0]: await c.get_pod(v[0]) for v in existing}
        preemptor = await c.get_pod("preemptor-pod")
        queued = s.queue.get(preemptor)
        events = await c.events("preemptor-pod")
        await stop(s, task)
        return victims, preemptor, queued, events

    victims, preemptor, queued, events = c.run(main)
    for vname, v in victims.items():
        terminating = bool(v["metadata"].get("deletionTimestamp"))
        assert terminating == (vname in evicted), (name, vname)
        if terminating:
            cond = condition(v, "DisruptionTarget")
            assert (cond["status"], cond["reason"]) == ("True", "PreemptionByScheduler")
    # the resized pod keeps its place: no nominated node, PodScheduled still True, no
    # FailedScheduling event, and it waits in the queue for the kubelet
    assert not preemptor["status"].get("nominatedNodeName")
    assert condition(preemptor)["status"] == "True"
    assert not [e for e in events if e["reason"] == "FailedScheduling"]
    assert queued is not None


def test_gate_off_leaves_the_resize_deferred():
    c = Cluster()

    async def main():
        await priority_classes(c)
        await c.create_node(node("node1", cpu="300m", memory="300", pods="32"))
        await c.create_pod(pause("victim-1", "low", "200m", "100"))
        await c.create_pod(pause("preemptor-pod", "high", "300m", "100"))
        s, task = await start(c, {})
        await defer(c, "preemptor-pod", {"cpu": "100m", "memory": "100"})
        await c.settle(3)
        victim = await c.get_pod("victim-1")
        queued = s.queue.get(await c.get_pod("preemptor-pod"))
        await stop(s, task)
        return victim, queued

    victim, queued = c.run(main)
    assert not victim["metadata"].get("deletionTimestamp")
    assert queued is None


def test_queueing_handlers():
    """upstream: TestDeferredResizeQueueingHandlers -- a Deferred pod already there when the
    scheduler starts is queued (AddPod), not when PodResizePreemptionDisabled is True; a
    transition to Deferred queues it (UpdatePod); PodResizePreemptionDisabled turning True
    takes it out, and turning back queues it again."""
    disabled = {"type": "PodResizePreemptionDisabled", "status": "True"}
    c = Cluster()

    async def main():
        await priority_classes(c)
        await c.create_node(node("node1", cpu="200m", pods="32"))
        await c.create_pod(pause("deferred-pod", "low", "100m", "10Mi"))
        await c.create_pod(pause("disabled-pod", "low", "10m", "10Mi"))
        await c.create_pod(pause("later-pod", "low", "10m", "10Mi"))
        await defer(c, "deferred-pod", {"cpu": "50m", "memory": "10Mi"})
        await defer(c, "disabled-pod", {"cpu": "5m", "memory": "10Mi"}, extra_conditions=[disabled])
        s, task = await start(c, ON)
        await c.settle(1)
        seen = {}
        seen["startup deferred"] = s.queue.get(await c.get_pod("deferred-pod")) is not None
        seen["startup disabled"] = s.queue.get(await c.get_pod("disabled-pod")) is not None
        seen["plain"] = s.queue.get(await c.get_pod("later-pod")) is not None
        await defer(c, "later-pod", {"cpu": "5m", "memory": "10Mi"})
        await c.settle(1)
        seen["became deferred"] = s.queue.get(await c.get_pod("later-pod")) is not None
        await defer(c, "later-pod", {"cpu": "5m", "memory": "10Mi"}, extra_conditions=[disabled])
        await c.settle(1)
        seen["disabled now"] = s.queue.get(await c.get_pod("later-pod")) is not None
        await defer(c, "later-pod", {"cpu": "5m", "memory": "10Mi"})
        await c.settle(1)
        seen["enabled again"] = s.queue.get(await c.get_pod("later-pod")) is not None
        await stop(s, task)
        return seen

    assert c.run(main) == {"startup deferred": True, "startup disabled": False, "plain": False,
                           "became deferred": True, "disabled now": False, "enabled again": True}


def test_node_events_elsewhere_do_not_wake_a_parked_resize():
    """upstream: TestDeferredResizeQueueingHints -- 'irrelevant pod deletion ignores queue'
    and 'assigned pod deletion on same node wakes queue' (node1 200m with a 200m high-priority
    pod, node2 500m; the low-priority deferred pod asks 100m with 50m allocated)."""
    c = Cluster()

    async def main():
        await priority_classes(c)
        await c.create_node(node("node1", cpu="200m", pods="32"))
        await c.create_node(node("node2", cpu="500m", pods="32"))
        await c.create_pod(pause("other-pod", "high", "200m", "10Mi"))
        await c.create_pod(pause("irrelevant-pod", "high", "200m", "10Mi", node_name="node2"))
        await c.create_pod(pause("deferred-pod", "low", "100m", "10Mi"))
        s, task = await start(c, ON)
        await defer(c, "deferred-pod", {"cpu": "50m", "memory": "10Mi"})
        await c.settle(2)
        q = s.queue.get(await c.get_pod("deferred-pod"))
        attempts = [q.attempts if q else None]
        await c.client.delete("pods", "irrelevant-pod", namespace="default", grace_period_seconds=0)
        await c.settle(20)
        q = s.queue.get(await c.get_pod("deferred-pod"))
        attempts.append(q.attempts if q else None)
        await c.client.delete("pods", "other-pod", namespace="default", grace_period_seconds=0)
        await c.settle(20)
        q = s.queue.get(await c.get_pod("deferred-pod"))
        attempts.append(q.attempts if q else None)
        await stop(s, task)
        return attempts

    first, after_irrelevant, after_same_node = c.run(main)
    assert first is not None and first >= 1
    assert after_irrelevant == first
    assert after_same_node > first


def test_np_int_codes_are_int8():
    # a FilterResult's codes are int8 (the framework's contract)
    pl, cache = plugin_on([node("node1")], True)
    res = pl.filter(CycleState(), deferred(pod("p", node_name="node1")), cache.snapshot().all())
    assert res.codes.dtype == np.int8


# ---- queueing hints and node policy (TestDeferredResizeQueueingHints,
# TestDeferredResizeNodePreemptionPolicy) -----------------------------------------------------


async def hints_setup(c: Cluster, *, node_cpu="200m", other_cpu="200m", deferred_cpu="100m",
                      disabled=False) -> Scheduler:
    """setUpPreemptionTestWithContext: node1 (``node_cpu``) with a high-priority
    ``other-pod`` and the low-priority ``deferred-pod`` (allocated 50m), node2 (500m) with a
    high-priority 200m ``irrelevant-pod``; the deferred pod parked as unschedulable."""
    await priority_classes(c)
    n1 = node("node1", cpu=node_cpu, pods="32")
    if disabled:
        n1["spec"]["podPreemptionPolicy"] = {"disableResizePreemption": ["test-policy"]}
    await c.create_node(n1)
    await c.create_node(node("node2", cpu="500m", pods="32"))
    await c.create_pod(pause("other-pod", "high", other_cpu, "10Mi"))
    await c.create_pod(pause("irrelevant-pod", "high", "200m", "10Mi", node_name="node2"))
    await c.create_pod(pause("deferred-pod", "low", deferred_cpu, "10Mi"))
    s, _ = await start(c, ON)
    await defer(c, "deferred-pod", {"cpu": "50m", "memory": "10Mi"})
    await c.settle(2)
    return s


async def attempts(s: Scheduler, c: Cluster) -> int | None:
    q = s.queue.get(await c.get_pod("deferred-pod"))
    return q.attempts if q is not None else None


async def resize_cpu(c: Cluster, name: str, cpu: str) -> None:
    await c.client.resize("default", name, {"spec": {"containers": [
        {"name": "app", "resources": {"requests": {"cpu": cpu}}}]}}, patch_type="strategic")


async def relabel(c: Cluster, name: str) -> None:
    await c.client.patch("pods", name, {"metadata": {"labels": {"updated-by-test": "true"}}},
                         "merge", namespace="default")


async def node_cpu(c: Cluster, name: str, cpu: str) -> None:
    await c.client.patch("nodes", name, {"status": {"capacity": {"cpu": cpu},
                                                    "allocatable": {"cpu": cpu}}},
                         "merge", subresource="status")


async def node_policy(c: Cluster, name: str, owners: list[str] | None) -> None:
    await c.client.patch("nodes", name, {"spec": {"podPreemptionPolicy": (
        {"disableResizePreemption": owners} if owners else None)}}, "merge")


async def delete(c: Cluster, name: str) -> None:
    await c.client.delete("pods", name, namespace="default", grace_period_seconds=0)


HINTS = [
    ("irrelevant pod scale down ignores queue", {}, lambda c: resize_cpu(c, "irrelevant-pod", "100m"), False),
    ("assigned pod scale down on same node wakes queue", {}, lambda c: resize_cpu(c, "other-pod", "100m"), True),
    ("irrelevant pod deletion ignores queue", {}, lambda c: delete(c, "irrelevant-pod"), False),
    ("assigned pod deletion on same node wakes queue", {}, lambda c: delete(c, "other-pod"), True),
    ("irrelevant pod scale up ignores queue", {"node_cpu": "300m", "deferred_cpu": "200m"},
     lambda c: resize_cpu(c, "irrelevant-pod", "300m"), False),
    ("assigned pod scale up on same node wakes queue", {"node_cpu": "300m", "deferred_cpu": "200m"},
     lambda c: resize_cpu(c, "other-pod", "250m"), True),
    ("non-resource label change ignores queue", {}, lambda c: relabel(c, "other-pod"), False),
    ("irrelevant node capacity increase ignores queue", {}, lambda c: node_cpu(c, "node2", "1"), False),
    ("assigned node capacity increase wakes queue", {}, lambda c: node_cpu(c, "node1", "1"), True),
    ("target pod spec scale down wakes queue", {}, lambda c: resize_cpu(c, "deferred-pod", "80m"), True),
    ("target pod spec scale up wakes queue", {"node_cpu": "500m", "deferred_cpu": "400m"},
     lambda c: resize_cpu(c, "deferred-pod", "450m"), True),
    # TestDeferredResizeNodePreemptionPolicy
    ("disabling node preemption policy does not wake queue", {},
     lambda c: node_policy(c, "node1", ["test-policy"]), False),
    ("enabling node preemption policy wakes queue", {"disabled": True},
     lambda c: node_policy(c, "node1", None), True),
    ("irrelevant node preemption policy change ignores queue", {},
     lambda c: node_policy(c, "node2", ["test-policy"]), False),
]


@pytest.mark.parametrize("name,setup,trigger,wakes", HINTS, ids=[h[0] for h in HINTS])
def test_deferred_resize_queueing_hints(name, setup, trigger, wakes):
    """upstream: TestDeferredResizeQueueingHints and TestDeferredResizeNodePreemptionPolicy
    (an attempt more after the event, or none)."""
    c = Cluster()

    async def main():
        s = await hints_setup(c, **setup)
        before = await attempts(s, c)
        await trigger(c)
        await c.settle(15)    # past the backoff, so a requeued pod has been tried again
        after = await attempts(s, c)
        await s.wait_idle()
        s.stop()
        return before, after

    before, after = c.run(main)
    assert before is not None, name
    assert (after is not None and after > before) == wakes, (name, before, after)


def test_cleared_deferred_condition_takes_the_pod_out_of_the_queue():
    """upstream: TestDeferredResizeQueueingHandlers / 'UpdatePod handler removes pod from
    queue when deferred condition is cleared'."""
    c = Cluster()

    async def main():
        s = await hints_setup(c)
        queued = await attempts(s, c)
        await c.client.patch("pods", "deferred-pod", {"status": {"conditions": [
            {"type": "PodScheduled", "status": "True"}]}}, "merge", namespace="default",
            subresource="status")
        await c.settle(1)
        gone = await attempts(s, c)
        await s.wait_idle()
        s.stop()
        return queued, gone

    queued, gone = c.run(main)
    assert queued is not None and gone is None
