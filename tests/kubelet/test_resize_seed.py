"""Seed 000's worked examples under today's names: the T=0..T=12 timeline and the kubectl
walk-through (650m accepted, 3950m Deferred, 4650m Infeasible on a 4-CPU node)."""

from __future__ import annotations

import json

import pytest

from kvert.api import features

from kvert.clock import VirtualClock
from kvert.kubelet.runtime.sim import SimRuntime

from tests.kubelet.test_agent_support import (HeldRuntime, cluster, condition, container, cstatus, events,
                                              node_config, pod, run_pod, running, start_agent, stop,
                                              wait_for)



@pytest.fixture(autouse=True)
def resize_decided_by_the_node():
    """Seed 000's walk-through has the node report a resize above its capacity Infeasible;
    Kubernetes 1.36 refuses it at admission unless kvert's KvertResizeInfeasibleAtNode gate is on."""
    with features.overridden(KvertResizeInfeasibleAtNode=True):
        yield


def _cpu_requests(cpu: str) -> dict:
    return {"spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": cpu, "memory": "128Mi"}}}]}}


def test_seed_timeline_t0_to_t12():
    clock = VirtualClock()

    async def main():
        client = await cluster(clock)
        runtime = HeldRuntime(SimRuntime(clock))
        agent, task = await start_agent(client, clock, runtime, config=node_config(cpu=4000))
        # another pod holds 2.2 CPUs of the node's 4, so 1.5 and 1.6 fit, 2 does not (yet)
        await run_pod(client, pod("other", container("c", "2200m", "128Mi", limits=False)))
        await running(client, clock, "other")

        # T=0: a new pod asks for cpu 1 (all resizePolicy NotRequired by default)
        await run_pod(client, pod("p", container("c", "1", "128Mi", limits=False)))
        # T=1/T=2: the node agent admits it (allocated 1), runs it, reports actual 1
        p = await running(client, clock, "p")

        async def state():
            p = await client.get("pods", "p", "default")
            cs = cstatus(p)
            return p, cs.get("allocatedResources", {}).get("cpu"), cs.get("resources", {}).get(
                "requests", {}).get("cpu"), condition(p, "PodResizePending"), condition(p, "PodResizeInProgress")

        p, alloc, actual, pending, progress = await state()
        assert (alloc, actual, pending, progress) == ("1", "1", None, None)
        assert p["spec"]["containers"][0]["resources"]["requests"]["cpu"] == "1"

        # T=3: resize #1 to 1.5 (the runtime is held, so the steps can be seen)
        runtime.hold = True
        await client.resize("default", "p", _cpu_requests("1.5"))
        # T=4: accepted: allocated 1.5, PodResizeInProgress; actual still 1
        await wait_for(clock, lambda: runtime.waiting > 0, what="UpdateContainerResources called")
        p, alloc, actual, pending, progress = await state()
        assert (alloc, actual, pending) == ("1500m", "1", None)
        assert progress is not None and progress["status"] == "True" and "reason" not in progress

        # T=5: resize #2 to 2 arrives while #1 is being applied
        await client.resize("default", "p", _cpu_requests("2"))
        await clock.sleep(3)
        p, alloc, actual, pending, progress = await state()
        assert p["spec"]["containers"][0]["resources"]["requests"]["cpu"] == "2"
        assert (alloc, actual, pending) == ("1500m", "1", None)     # #2 waits for #1
        assert progress is not None

        # T=6: the runtime applies 1.5
        runtime.release()

        # T=7: #2 is feasible in principle but not now: Deferred, actual 1.5
        async def deferred():
            p, alloc, actual, pending, progress = await state()
            return (p, alloc, actual, pending, progress) if pending and progress is None and actual == "1500m" else None
        p, alloc, actual, pending, progress = await wait_for(clock, deferred, what="T=7 Deferred")
        assert alloc == "1500m"
        assert pending["reason"] == "Deferred"
        assert pending["message"] == ("Node didn't have enough resource: cpu, requested: 2000, used: 2200, "
                                      "capacity: 4000")

        # T=8: resize #3 to 1.6
        runtime.hold = True
        runtime.gate.clear()
        await client.resize("default", "p", _cpu_requests("1.6"))
        # T=9: accepted: allocated 1.6, InProgress, actual 1.5
        await wait_for(clock, lambda: runtime.waiting > 0, what="T=9")
        p, alloc, actual, pending, progress = await state()
        assert (alloc, actual, pending) == ("1600m", "1500m", None)
        assert progress is not None
        # T=10: applied: actual 1.6, no condition
        runtime.release()

        async def applied():
            p, alloc, actual, pending, progress = await state()
            return (alloc, actual, pending, progress) == ("1600m", "1600m", None, None)
        await wait_for(clock, applied, what="T=10")

        # T=11: resize #4 to 100 CPUs
        await client.resize("default", "p", _cpu_requests("100"))

        # T=12: this node has no 100 CPUs: Infeasible; allocated and actual stay 1.6
        async def infeasible():
            p, alloc, actual, pending, progress = await state()
            return (p, alloc, actual, pending) if pending and pending["reason"] == "Infeasible" else None
        p, alloc, actual, pending = await wait_for(clock, infeasible, what="T=12")
        assert (alloc, actual) == ("1600m", "1600m")
        assert pending["message"] == "Node didn't have enough capacity: cpu, requested: 100000, capacity: 4000"
        assert condition(p, "PodResizeInProgress") is None
        assert cstatus(p)["restartCount"] == 0

        reasons = [e["reason"] for e in await events(client, "p") if e["reason"].startswith("Resize")]
        assert reasons.count("ResizeStarted") == 2
        assert "ResizeDeferred" in reasons and "ResizeInfeasible" in reasons
        assert reasons.count("ResizeCompleted") == 2
        await stop(agent, task)

    clock.run(main())


def _cpu(cpu: str) -> dict:
    # a strategic merge patch, as kubectl sends it: only cpu changes
    return {"spec": {"containers": [{"name": "stress", "resources": {"requests": {"cpu": cpu},
                                                                      "limits": {"cpu": cpu}}}]}}


def test_kubectl_walkthrough_650m_3950m_4650m_on_a_4_cpu_node():
    clock = VirtualClock()

    async def main():
        client = await cluster(clock)
        runtime = SimRuntime(clock)
        agent, task = await start_agent(client, clock, runtime, config=node_config(cpu=4000))
        # the node's other pods (kube-system daemons in the seed's cluster) hold 350m
        await run_pod(client, pod("coredns", container("coredns", "100m", "70Mi", limits=False),
                                  namespace="kube-system"))
        await run_pod(client, pod("kube-proxy", container("kube-proxy", "250m", "64Mi", limits=False),
                                  namespace="kube-system"))
        await run_pod(client, pod("2pod", container("stress", "500m", "500Mi",
                                                    image="skiibum/ubuntu-stress:18.10")))
        p = await running(client, clock, "2pod")
        cs = cstatus(p, "stress")
        assert p["status"]["qosClass"] == "Guaranteed"
        assert "resizePolicy" not in p["spec"]["containers"][0]     # absent means NotRequired
        assert cs["allocatedResources"] == {"cpu": "500m", "memory": "500Mi"}
        container_id = cs["containerID"]

        async def get():
            p = await client.get("pods", "2pod", "default")
            return p, cstatus(p, "stress")

        # 650m: accepted and applied, no restart
        await client.resize("default", "2pod", patch_type="strategic", patch=_cpu("650m"))

        async def done_650():
            p, cs = await get()
            return (p, cs) if cs["resources"]["limits"]["cpu"] == "650m" and \
                condition(p, "PodResizeInProgress") is None else None
        p, cs = await wait_for(clock, done_650)
        assert cs["allocatedResources"] == {"cpu": "650m", "memory": "500Mi"}
        assert cs["resources"] == {"requests": {"cpu": "650m", "memory": "500Mi"},
                                   "limits": {"cpu": "650m", "memory": "500Mi"}}
        assert cs["restartCount"] == 0 and cs["containerID"] == container_id

        # 3950m: fits a 4-CPU node, but not next to the 350m the other pods hold: Deferred
        await client.resize("default", "2pod", patch_type="strategic", patch=_cpu("3950m"))

        async def pending(reason):
            p, cs = await get()
            c = condition(p, "PodResizePending")
            return (p, cs, c) if c and c["reason"] == reason else None
        p, cs, c = await wait_for(clock, lambda: pending("Deferred"))
        assert c["message"] == "Node didn't have enough resource: cpu, requested: 3950, used: 350, capacity: 4000"
        assert cs["allocatedResources"]["cpu"] == "650m"           # the last accepted size
        assert cs["resources"]["limits"]["cpu"] == "650m"
        # the decision explains itself (kvert explain pod reads this annotation)
        explain = json.loads(p["metadata"]["annotations"]["explain.kvert.io/node"])
        assert explain["resize"]["result"] == "Deferred"
        assert explain["resize"]["requested"]["cpu"] == 3950
        assert explain["resize"]["used"]["cpu"] == 350 and explain["resize"]["allocatable"]["cpu"] == 4000
        assert explain["resize"]["to"]["stress"]["limits"]["cpu"] == "3950m"

        # 4650m: more than the node has: Infeasible
        await client.resize("default", "2pod", patch_type="strategic", patch=_cpu("4650m"))
        p, cs, c = await wait_for(clock, lambda: pending("Infeasible"))
        assert c["message"] == "Node didn't have enough capacity: cpu, requested: 4650, capacity: 4000"
        assert cs["allocatedResources"]["cpu"] == "650m" and cs["restartCount"] == 0

        # back to 3950m (Deferred again); when the other pods leave, the deferred resize goes through
        await client.resize("default", "2pod", patch_type="strategic", patch=_cpu("3950m"))
        await wait_for(clock, lambda: pending("Deferred"))
        await client.delete("pods", "coredns", namespace="kube-system")
        await client.delete("pods", "kube-proxy", namespace="kube-system")

        async def done_3950():
            p, cs = await get()
            return (p, cs) if cs["resources"]["limits"]["cpu"] == "3950m" and not [
                c for c in p["status"]["conditions"] if c["type"].startswith("PodResize")] else None
        p, cs = await wait_for(clock, done_3950)
        assert cs["restartCount"] == 0 and cs["containerID"] == container_id
        counts: dict[str, int] = {}
        deferred: dict[str, int] = {}
        for e in await events(client, "2pod"):
            counts[e["reason"]] = counts.get(e["reason"], 0) + e["count"]
            if e["reason"] == "ResizeDeferred":
                used = e["message"].split("used: ")[1].split(",")[0]
                deferred[used] = deferred.get(used, 0) + e["count"]
        # both requests of 3950m next to the 350m (repeats are counted); the node may also have
        # seen one of the two pods gone before the other (a new message: another event)
        assert deferred.pop("350") == 2 and set(deferred) <= {"250", "100"}
        assert counts["ResizeInfeasible"] == 1
        assert counts["ResizeStarted"] == 2 and counts["ResizeCompleted"] == 2
        await stop(agent, task)

    clock.run(main())


async def _agent_with_running_pod(clock):
    """A 4-CPU node agent running pod "p" (cpu 1), settled."""
    client = await cluster(clock)
    agent, task = await start_agent(client, clock, config=node_config(cpu=4000))
    await run_pod(client, pod("p", container("c", "1", "128Mi", limits=False)))
    await running(client, clock, "p")
    await clock.sleep(5)
    return client, agent, task


def test_the_first_status_of_a_resized_spec_already_says_what_became_of_the_resize():
    # As the kubelet's HandlePodUpdates allocates a resize before the pod worker syncs the
    # new spec (pkg/kubelet/kubelet.go; allocation.Manager.PushPendingResize then
    # RetryPendingResizes), no status is written for the new generation without the
    # allocation: the first one carries observedGeneration, the new allocation and
    # PodResizeInProgress together, then the applied resources follow.
    clock = VirtualClock()

    async def main():
        client, agent, task = await _agent_with_running_pod(clock)
        before = await client.get("pods", "p", "default")
        watch = await client.watch("pods", namespace="default",
                                   resource_version=before["metadata"]["resourceVersion"])
        resized = await client.resize("default", "p", _cpu_requests("1500m"))
        generation = resized["metadata"]["generation"]

        async def applied():
            p = await client.get("pods", "p", "default")
            return cstatus(p).get("resources", {}).get("requests", {}).get("cpu") == "1500m"
        await wait_for(clock, applied, what="the resize applied")
        await clock.sleep(5)
        statuses = [before["status"]]       # each status written (other writes skipped)
        for e in watch.get_nowait():
            if e.type == "MODIFIED" and e.object["metadata"]["name"] == "p" \
                    and e.object["status"] != statuses[-1]:
                statuses.append(e.object["status"])
        statuses = statuses[1:]
        watch.stop()
        await stop(agent, task)
        return generation, statuses

    generation, statuses = clock.run(main())
    assert statuses, "no status written for the resize"
    first = statuses[0]
    assert first.get("observedGeneration") == generation
    assert first["containerStatuses"][0]["allocatedResources"]["cpu"] == "1500m"
    assert any(c["type"] == "PodResizeInProgress" and c["status"] == "True" for c in first["conditions"])
    assert statuses[-1]["containerStatuses"][0]["resources"]["requests"]["cpu"] == "1500m"
    assert len(statuses) == 2       # allocated and in progress, then applied


def test_a_failing_reconcile_still_wakes_the_workers_of_changed_specs():
    clock = VirtualClock()

    async def main():
        _, agent, task = await _agent_with_running_pod(clock)
        (ps,) = agent.pods.values()

        async def broken():
            raise RuntimeError("a bug")
        agent._handle_resizes = broken
        ps.wake.clear()
        agent._spec_changed.add(ps.uid)
        try:
            await agent.reconcile()
        except RuntimeError:
            pass
        woken = ps.wake.is_set()
        await stop(agent, task)
        return woken

    assert clock.run(main())
