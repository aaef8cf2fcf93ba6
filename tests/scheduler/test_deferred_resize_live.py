"""KEP-5836 live: a node agent (simulated runtime), the scheduler, one node holding a
low-priority and a high-priority pod; the high-priority pod is resized beyond what is free.
With InPlacePodVerticalScalingSchedulerPreemption on, the scheduler preempts the low-priority
pod (a ``Preempted`` event) and the kubelet then applies the resize (it retries Deferred resizes
when a pod leaves); with it off the resize stays Deferred.

upstream: the v1.37 blog "Scheduler Preemption for In-Place Pod Resize (Alpha)" mini-tutorial
(8-cpu node; low-priority pod 3 cpu / 500Mi, high-priority pod 4 cpu / 1Gi; the high one
resized to 6 cpu: the low one gets ``Preempted by pod <uid> on node <node>``, the high one's
allocated cpu becomes 6, no restart) and test/e2e/node/pod_resize.go "InPlaceResizePreemption"."""

from __future__ import annotations

import asyncio

from kvert.clock import VirtualClock
from kvert.scheduler import Scheduler
from kvert.scheduler.deferred import GATE

from tests.kubelet.test_agent_support import (
    cluster,
    condition,
    container,
    cstatus,
    node_config,
    pod,
    start_agent,
    stop,
    wait_for,
)


async def priority_classes(client) -> None:
    for name, value in (("low", 100), ("high", 1000)):
        await client.create("scheduling.k8s.io/priorityclasses", {
            "apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
            "metadata": {"name": name}, "value": value})


def scenario(gates: dict) -> tuple[dict, dict | None, list[dict]]:
    clock = VirtualClock()

    async def main():
        client = await cluster(clock)
        await priority_classes(client)
        agent, agent_task = await start_agent(client, clock, config=node_config(cpu=8000))
        sched = Scheduler(client, clock, seed=1, gates=gates)
        sched_task = asyncio.ensure_future(sched.run())
        await sched.synced.wait()
        policy = {"cpu": "NotRequired", "memory": "NotRequired"}
        await client.create("pods", pod("low", container("worker", "3", "500Mi", policy=policy),
                                        priorityClassName="low", terminationGracePeriodSeconds=1))
        await client.create("pods", pod("high", container("app", "4", "1Gi", policy=policy),
                                        priorityClassName="high"))

        async def both_running():
            pods = [await client.get("pods", n, "default") for n in ("low", "high")]
            return all(p["status"].get("phase") == "Running" for p in pods)
        await wait_for(clock, both_running, what="both pods running")
        # 4 -> 6 cpus: within the node's 8 (admission lets it in), not next to "low"'s 3
        await client.resize("default", "high", {"spec": {"containers": [
            {"name": "app", "resources": {"requests": {"cpu": "6"}, "limits": {"cpu": "6"}}}]}},
            patch_type="strategic")

        async def deferred_or_done():
            p = await client.get("pods", "high", "default")
            pending = condition(p, "PodResizePending")
            applied = (cstatus(p, "app").get("resources") or {}).get("requests", {}).get("cpu")
            return p if (pending and pending.get("reason") == "Deferred") or applied == "6" else None
        await wait_for(clock, deferred_or_done, what="the resize deferred")

        async def applied():
            p = await client.get("pods", "high", "default")
            cpu = (cstatus(p, "app").get("resources") or {}).get("requests", {}).get("cpu")
            return p if cpu == "6" and not condition(p, "PodResizePending") else None
        try:
            await wait_for(clock, applied, timeout=60, what="the resize applied")
        except AssertionError:
            pass
        high = await client.get("pods", "high", "default")
        low_events = [e for e in (await client.list("events", namespace="default"))["items"]
                      if e["involvedObject"].get("name") == "low" and e["reason"] == "Preempted"]
        try:
            low = await client.get("pods", "low", "default")
        except Exception:
            low = None
        await sched.wait_idle()
        sched.stop()
        await sched_task
        await stop(agent, agent_task)
        return high, low, low_events

    return clock.run(main())


def test_gate_on_preempts_the_low_priority_pod_and_the_resize_completes():
    high, low, preempted = scenario({GATE: True})
    assert cstatus(high, "app")["allocatedResources"]["cpu"] == "6"
    assert (cstatus(high, "app").get("resources") or {})["requests"]["cpu"] == "6"
    assert condition(high, "PodResizePending") is None
    assert cstatus(high, "app")["restartCount"] == 0
    assert low is None or low["metadata"].get("deletionTimestamp")
    [event] = preempted
    assert (event["type"], event["message"]) == (
        "Normal", f"Preempted by pod {high['metadata']['uid']} on node node-1")


def test_gate_off_the_resize_stays_deferred():
    high, low, preempted = scenario({})
    pending = condition(high, "PodResizePending")
    assert pending is not None and pending["reason"] == "Deferred"
    assert low is not None and not low["metadata"].get("deletionTimestamp")
    assert preempted == []
