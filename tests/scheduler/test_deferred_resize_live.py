"""KEP-5836 live: a node agent (simulated runtime), the scheduler, one node holding a
low-priority and a high-priority pod; the high-priority pod is resized beyond what is free.
With InPlacePodVerticalScalingSchedulerPreemption on, the scheduler preempts the low-priority
pod and the kubelet then applies the resize (it retries Deferred resizes when a pod leaves);
with it off the resize stays Deferred. upstream: test/e2e/node/pod_resize.go
"InPlaceResizePreemption" (a lower-priority pod is preempted by a higher-priority Deferred
resize, and the kubelet actuates the resize after the preemption completes)."""

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


def scenario(gates: dict) -> tuple[dict, dict | None]:
    clock = VirtualClock()

    async def main():
        client = await cluster(clock)
        await priority_classes(client)
        agent, agent_task = await start_agent(client, clock, config=node_config(cpu=2000))
        sched = Scheduler(client, clock, seed=1, gates=gates)
        sched_task = asyncio.ensure_future(sched.run())
        await sched.synced.wait()
        policy = {"cpu": "NotRequired", "memory": "NotRequired"}
        await client.create("pods", pod("low", container("app", "1", "128Mi", policy=policy),
                                        priorityClassName="low", terminationGracePeriodSeconds=1))
        await client.create("pods", pod("high", container("app", "500m", "128Mi", policy=policy),
                                        priorityClassName="high"))

        async def both_running():
            pods = [await client.get("pods", n, "default") for n in ("low", "high")]
            return all(p["status"].get("phase") == "Running" for p in pods)
        await wait_for(clock, both_running, what="both pods running")
        # 500m -> 1500m: within the node's 2 cpus (admission lets it in), not next to "low"
        await client.resize("default", "high", {"spec": {"containers": [
            {"name": "app", "resources": {"requests": {"cpu": "1500m"}, "limits": {"cpu": "1500m"}}}]}},
            patch_type="strategic")

        async def deferred_or_done():
            p = await client.get("pods", "high", "default")
            pending = condition(p, "PodResizePending")
            applied = (cstatus(p, "app").get("resources") or {}).get("requests", {}).get("cpu")
            return p if (pending and pending.get("reason") == "Deferred") or applied == "1500m" else None
        await wait_for(clock, deferred_or_done, what="the resize deferred")

        async def applied():
            p = await client.get("pods", "high", "default")
            cpu = (cstatus(p, "app").get("resources") or {}).get("requests", {}).get("cpu")
            return p if cpu == "1500m" and not condition(p, "PodResizePending") else None
        try:
            await wait_for(clock, applied, timeout=60, what="the resize applied")
        except AssertionError:
            pass
        high = await client.get("pods", "high", "default")
        try:
            low = await client.get("pods", "low", "default")
        except Exception:
            low = None
        await sched.wait_idle()
        sched.stop()
        await sched_task
        await stop(agent, agent_task)
        return high, low

    return clock.run(main())


def test_gate_on_preempts_the_low_priority_pod_and_the_resize_completes():
    high, low = scenario({GATE: True})
    assert (cstatus(high, "app").get("resources") or {})["requests"]["cpu"] == "1500m"
    assert condition(high, "PodResizePending") is None
    assert high["status"]["containerStatuses"][0]["restartCount"] == 0
    assert low is None or low["metadata"].get("deletionTimestamp")


def test_gate_off_the_resize_stays_deferred():
    high, low = scenario({})
    pending = condition(high, "PodResizePending")
    assert pending is not None and pending["reason"] == "Deferred"
    assert low is not None and not low["metadata"].get("deletionTimestamp")
