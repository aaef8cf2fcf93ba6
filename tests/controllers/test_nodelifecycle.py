"""The node lifecycle and taint eviction controllers: upstream's unit vectors
(node_lifecycle_controller_test.go, rate_limited_queue_test.go, taint_eviction_test.go), then a
whole cluster in virtual time whose node agent stops and comes back."""

import asyncio
import math

import pytest

from kvert.api.taints import no_execute_eviction_delay
from kvert.clock import VirtualClock
from kvert.controllers.nodelifecycle import (FULL_DISRUPTION, NORMAL, PARTIAL_DISRUPTION, RateLimitedTimedQueue,
                                             compute_zone_state, no_schedule_taint_keys, zone_key)

from .helpers import NS, eventually, run


def _node(*conditions, unschedulable=False, labels=None):
    return {"metadata": {"name": "n", "labels": labels or {}},
            "spec": {"unschedulable": True} if unschedulable else {},
            "status": {"conditions": [{"type": t, "status": s} for t, s in conditions]}}


@pytest.mark.parametrize("conditions, expected", [
    # TestTaintsNodeByCondition
    ([("Ready", "True"), ("NetworkUnavailable", "True")], {"node.kubernetes.io/network-unavailable"}),
    ([("Ready", "False")], {"node.kubernetes.io/not-ready"}),
    ([("Ready", "Unknown")], {"node.kubernetes.io/unreachable"}),
    ([("Ready", "True"), ("MemoryPressure", "True"), ("DiskPressure", "False")],
     {"node.kubernetes.io/memory-pressure"}),
    ([("Ready", "True"), ("PIDPressure", "True"), ("DiskPressure", "True")],
     {"node.kubernetes.io/pid-pressure", "node.kubernetes.io/disk-pressure"}),
])
def test_taints_node_by_condition(conditions, expected):
    assert no_schedule_taint_keys(_node(*conditions)) == expected


def test_unschedulable_nodes_get_their_taint():
    assert no_schedule_taint_keys(_node(("Ready", "True"), unschedulable=True)) == {"node.kubernetes.io/unschedulable"}


@pytest.mark.parametrize("ready, not_ready, state", [
    # ComputeZoneState (as TestMonitorNodeHealth's zone cases exercise it)
    (0, 1, FULL_DISRUPTION), (0, 0, NORMAL), (1, 2, NORMAL), (2, 3, PARTIAL_DISRUPTION), (3, 3, NORMAL),
    (10, 3, NORMAL), (1, 3, PARTIAL_DISRUPTION),
])
def test_compute_zone_state(ready, not_ready, state):
    statuses = ["True"] * ready + ["Unknown"] * (not_ready - 1) + [None] * min(1, not_ready)
    assert compute_zone_state(statuses) == (not_ready, state)


def test_zone_key():
    assert zone_key(_node()) == ""
    labels = {"topology.kubernetes.io/region": "r1", "topology.kubernetes.io/zone": "z1"}
    assert zone_key(_node(labels=labels)) == "r1:\x00:z1"


class _Clock:
    def __init__(self):
        self.t = 0.0

    def now(self):
        return self.t


def test_rate_limited_queue_add_remove_and_try():
    # TestAddNode, TestDelNode, TestTry, TestAddAfterTry (with a limiter that always accepts)
    clock = _Clock()
    queue = RateLimitedTimedQueue(clock, math.inf)
    for name in ("first", "second", "third"):
        assert queue.add(name)
    assert not queue.add("first")
    assert queue.remove("second") and not queue.remove("second")
    seen = []
    queue.try_all(lambda v: (seen.append(v), (True, 0.0))[1])
    assert seen == ["first", "third"]
    assert not queue.add("first")       # processed items stay in the set until removed
    seen.clear()
    queue.try_all(lambda v: (seen.append(v), (True, 0.0))[1])
    assert seen == []


def test_rate_limited_queue_retries_after_the_wait():
    # TestTryOrdering: an item that asks to wait is tried again after it
    clock = _Clock()
    queue = RateLimitedTimedQueue(clock, math.inf)
    queue.add("first")
    queue.add("second")
    calls = []

    def fn(value):
        calls.append(value)
        return (value != "second" or calls.count("second") > 1), 2.0
    queue.try_all(fn)
    assert calls == ["first", "second"]
    clock.t = 1.0
    queue.try_all(fn)
    assert calls == ["first", "second"]
    clock.t = 2.5
    queue.try_all(fn)
    assert calls == ["first", "second", "second"]


def test_the_token_bucket_lets_one_node_through_every_ten_seconds():
    clock = _Clock()
    queue = RateLimitedTimedQueue(clock, 0.1)
    for name in ("a", "b", "c"):
        queue.add(name)
    done = []
    queue.try_all(lambda v: (done.append((clock.t, v)), (True, 0.0))[1])
    for t in (5.0, 10.0, 19.0, 20.0):
        clock.t = t
        queue.try_all(lambda v: (done.append((clock.t, v)), (True, 0.0))[1])
    assert done == [(0.0, "a"), (10.0, "b"), (20.0, "c")]


def _tol(key, seconds=None, operator="Equal", value=None):
    t = {"key": key, "operator": operator, "effect": "NoExecute"}
    if value is not None:
        t["value"] = value
    if seconds is not None:
        t["tolerationSeconds"] = seconds
    return t


def _taint(i):
    return {"key": f"testTaint{i}", "value": f"test{i}", "effect": "NoExecute"}


@pytest.mark.parametrize("taints, tolerations, delay", [
    # TestCreatePod / TestUpdateNodeWithMultipleTaints / TestGetMinTolerationTime
    ([_taint(1)], [], 0),
    ([_taint(1)], [_tol("testTaint1", 100, value="test1")], 100),
    ([_taint(1)], [_tol("testTaint1", value="test1")], None),
    ([_taint(1)], [_tol("testTaint2", value="test2")], 0),
    ([_taint(1), _taint(2)], [_tol("testTaint1", operator="Exists"), _tol("testTaint2", 60, value="test2")], 60),
    ([_taint(1), _taint(2)], [_tol("testTaint1", 1, value="test1"), _tol("testTaint2", 100, value="test2")], 1),
    ([_taint(1)], [_tol("testTaint1", -5, value="test1")], 0),
])
def test_eviction_delay(taints, tolerations, delay):
    assert no_execute_eviction_delay(taints, tolerations) == delay


# ---- a whole cluster in virtual time ---------------------------------------------------------------------

def test_a_node_whose_agent_stops_is_tainted_and_its_pods_evicted_after_their_tolerations():
    from kvert.kubelet.agent import NodeAgent
    from kvert.kubelet.config import NodeConfig
    from kvert.kubelet.runtime.sim import SimRuntime
    from kvert.scheduler import Scheduler

    from .helpers import DEPLOY, deployment

    async def scenario(env):
        env.start_manager()
        scheduler = Scheduler(env.client, env.clock, seed=1)
        tasks = [asyncio.ensure_future(scheduler.run())]
        runtimes, agents = {}, {}

        async def start_agent(name):
            runtimes.setdefault(name, SimRuntime(env.clock, memory_capacity=8 * 2**30, name=name))
            agent = NodeAgent(env.client, env.clock, NodeConfig.from_flags(node_name=name,
                                                                          capacity="cpu=4,memory=8Gi"),
                              runtimes[name], name=name)
            agents[name] = (agent, asyncio.ensure_future(agent.run()))
            await agent.ready.wait()
        for name in ("node-1", "node-2"):
            await start_agent(name)
        body = deployment("web", 4)
        body["spec"]["template"]["spec"]["affinity"] = {"podAntiAffinity": {
            "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 100, "podAffinityTerm": {
                "labelSelector": {"matchLabels": {"app": "web"}}, "topologyKey": "kubernetes.io/hostname"}}]}}
        await env.client.create(DEPLOY, body)

        async def pods_on(node, phase="Running"):
            items = (await env.client.list("pods", namespace=NS))["items"]
            return [p for p in items if p["spec"].get("nodeName") == node and p["status"].get("phase") == phase
                    and not p["metadata"].get("deletionTimestamp")]

        async def spread():
            return len(await pods_on("node-1")) == 2 and len(await pods_on("node-2")) == 2
        await eventually(env, spread, timeout=120, what="two pods per node")
        victims = {p["metadata"]["name"] for p in await pods_on("node-1")}
        agent, task = agents["node-1"]
        task.cancel()                                   # the node agent dies (a crash)
        stopped = env.clock.now()

        async def unknown():
            node = await env.client.get("nodes", "node-1")
            ready = next(c for c in node["status"]["conditions"] if c["type"] == "Ready")
            return ready["status"] == "Unknown" and node
        node = await eventually(env, unknown, timeout=120, what="node-1 Unknown")
        assert 50 <= env.clock.now() - stopped <= 70
        ready = next(c for c in node["status"]["conditions"] if c["type"] == "Ready")
        assert (ready["reason"], ready["message"]) == ("NodeStatusUnknown", "Kubelet stopped posting node status.")

        async def tainted():
            node = await env.client.get("nodes", "node-1")
            keys = {(t["key"], t["effect"]) for t in node["spec"].get("taints") or []}
            return {("node.kubernetes.io/unreachable", "NoSchedule"),
                    ("node.kubernetes.io/unreachable", "NoExecute")} <= keys
        await eventually(env, tainted, timeout=30, what="unreachable taints")
        tainted_at = env.clock.now()
        for name in victims:
            pod = await env.client.get("pods", name, NS)
            assert next(c for c in pod["status"]["conditions"] if c["type"] == "Ready")["status"] == "False"

        async def evicted():
            pods = [await env.client.get("pods", name, NS) for name in victims]
            return all(p["metadata"].get("deletionTimestamp") for p in pods) and pods
        pods = await eventually(env, evicted, timeout=400, step=1, what="pods on node-1 deleted")
        assert 295 <= env.clock.now() - tainted_at <= 320        # the default 300 s toleration
        target = next(c for c in pods[0]["status"]["conditions"] if c["type"] == "DisruptionTarget")
        assert (target["reason"], target["message"]) == ("DeletionByTaintManager",
                                                          "Taint manager: deleting due to NoExecute taint")
        await eventually(env, lambda: _count(pods_on, "node-2", 4), timeout=120, what="replacements on node-2")
        # the agent comes back: Ready again, the taints go, the terminating pods are finished
        await start_agent("node-1")

        async def recovered():
            node = await env.client.get("nodes", "node-1")
            ready = next(c for c in node["status"]["conditions"] if c["type"] == "Ready")
            return ready["status"] == "True" and not node["spec"].get("taints")
        await eventually(env, recovered, timeout=120, what="node-1 recovered")

        async def finished():
            names = {p["metadata"]["name"] for p in (await env.client.list("pods", namespace=NS))["items"]}
            return not names & victims
        await eventually(env, finished, timeout=120, what="old pods gone")
        for agent, task in agents.values():
            agent.stop()
        scheduler.stop()
        for task in tasks:
            task.cancel()

    run(scenario)


async def _count(pods_on, node, n):
    return len(await pods_on(node)) == n


def test_memory_pressure_taints_the_node_no_schedule():
    from kvert.kubelet.agent import NodeAgent
    from kvert.kubelet.config import NodeConfig
    from kvert.kubelet.runtime.sim import SimRuntime

    async def scenario(env):
        env.start_manager(controllers=["nodelifecycle"])
        runtime = SimRuntime(env.clock, memory_capacity=8 * 2**30)
        runtime.system_memory = 7 * 2**30 + 600 * 2**20         # the node's own daemons eat it
        agent = NodeAgent(env.client, env.clock,
                          NodeConfig.from_flags(capacity="cpu=4,memory=8Gi", eviction_hard="memory.available<1Gi"),
                          runtime, name="node-1")
        task = asyncio.ensure_future(agent.run())
        await agent.ready.wait()

        async def taint():
            node = await env.client.get("nodes", "node-1")
            return [t for t in node["spec"].get("taints") or [] if t["key"] == "node.kubernetes.io/memory-pressure"]
        taints = await eventually(env, taint, timeout=60, what="memory-pressure taint")
        assert taints[0]["effect"] == "NoSchedule" and taints[0]["timeAdded"]
        runtime.system_memory = 0
        await eventually(env, lambda: _no(taint), timeout=400, step=2, what="taint removed")
        agent.stop()
        await task

    run(scenario, start=VirtualClock().now())


async def _no(check):
    return not await check()
