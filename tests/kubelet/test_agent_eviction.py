"""The node agent under memory pressure, in virtual time: the condition, the ranking, the
evicted pod's status, admission refused under pressure, the transition period, and the
simulated kernel's OOM kill when eviction is too slow (seed 001 section 13)."""

from kvert.kubelet.config import NodeConfig
from kvert.kubelet.runtime.sim import SimRuntime
from kvert.clock import VirtualClock

from .test_agent_support import GI, cluster, condition, container, events, get_pod, pod, run_pod, \
    running, start_agent, stop, wait_for


def _config(**kw):
    kw.setdefault("eviction_hard", "memory.available<1Gi")
    return NodeConfig.from_flags(capacity="cpu=8,memory=8Gi,ephemeral-storage=100Gi", **kw)


def _pressure(node):
    return next(c for c in node["status"]["conditions"] if c["type"] == "MemoryPressure")


def test_memory_pressure_evicts_the_pod_furthest_above_its_requests_then_clears():
    clock = VirtualClock()

    async def main():
        client = await cluster(clock)
        runtime = SimRuntime(clock, memory_capacity=8 * GI, cpu_capacity=8000)
        agent, task = await start_agent(client, clock, runtime, config=_config())
        await run_pod(client, pod("guaranteed", container("c", "500m", "2Gi"), usage={"c": {"memory": "1536Mi"}}))
        await run_pod(client, pod("besteffort", container("c", None, None, limits=False),
                                  usage={"c": {"memory": "512Mi"}}))
        hog = {"c": {"memory": {"profile": "spikes", "base": "1Gi", "peak": "5632Mi", "every": "1h",
                                "duration": "30m", "offset": "60s", "anchor": "start"}}}
        await run_pod(client, pod("hog", container("c", "500m", "500Mi", limit_memory="7Gi"), usage=hog))
        for name in ("guaranteed", "besteffort", "hog"):
            await running(client, clock, name)
        start = clock.now()

        async def pressure():
            node = await client.get("nodes", "node-1")
            return _pressure(node)["status"] == "True" and node
        node = await wait_for(clock, pressure, timeout=600, what="MemoryPressure")
        assert _pressure(node)["reason"] == "KubeletHasInsufficientMemory"
        evicted = await wait_for(clock, lambda: _failed(client, "hog"), timeout=60, what="hog evicted")
        # 5.5Gi + 1.5Gi + 0.5Gi in use: 0.5Gi available of the 1Gi threshold
        assert evicted["status"]["reason"] == "Evicted"
        assert evicted["status"]["message"] == (
            "The node was low on resource: memory. Threshold quantity: 1Gi, available: 512Mi. "
            "Container c was using 5632Mi, request is 500Mi, has larger consumption of memory. ")
        target = condition(evicted, "DisruptionTarget")
        assert (target["status"], target["reason"]) == ("True", "TerminationByKubelet")
        assert target["message"] == evicted["status"]["message"]
        assert [e["message"] for e in await events(client, "hog", "Evicted")] == [evicted["status"]["message"]]
        for name in ("guaranteed", "besteffort"):
            assert (await get_pod(client, name))["status"]["phase"] == "Running"
        assert [e["pod"] for e in agent.evictions] == ["hog"]
        assert agent.evictions[0]["gracePeriod"] == 1
        # a BestEffort pod is refused while the node reports MemoryPressure; a Burstable one is not
        await run_pod(client, pod("late-besteffort", container("c", None, None, limits=False)))
        await run_pod(client, pod("late-burstable", container("c", "100m", "100Mi", limits=False)))
        refused = await wait_for(clock, lambda: _failed(client, "late-besteffort"), what="refused")
        assert (refused["status"]["reason"], refused["status"]["message"]) == (
            "Evicted", "Pod was rejected: The node had condition: [MemoryPressure]. ")
        await running(client, clock, "late-burstable")
        # the condition stays for the transition period (5 minutes) after the last time it was met
        met_last = clock.now()
        cleared = await wait_for(clock, _no_pressure(client), timeout=900, step=5, what="pressure cleared")
        assert 300 <= clock.now() - met_last <= 330 and cleared
        assert clock.now() - start < 1200
        await stop(agent, task)

    clock.run(main())


async def _failed(client, name):
    p = await get_pod(client, name)
    return p if p["status"].get("phase") == "Failed" else None


def _no_pressure(client):
    async def check():
        return _pressure(await client.get("nodes", "node-1"))["status"] == "False"
    return check


def test_the_kernel_oom_kills_by_oom_score_adj_when_the_node_runs_out_first():
    # No eviction threshold can act in time (a leak of 4Gi per second): the node's memory
    # runs out and the simulated kernel kills the container with the highest
    # working set + oom_score_adj share, i.e. the BestEffort one (oom_score_adj 1000).
    clock = VirtualClock()

    async def main():
        client = await cluster(clock)
        runtime = SimRuntime(clock, memory_capacity=8 * GI, cpu_capacity=8000)
        agent, task = await start_agent(client, clock, runtime, config=_config(eviction_hard=""))
        await run_pod(client, pod("steady", container("c", "500m", "3Gi"), usage={"c": {"memory": "3Gi"}}))
        leak = {"c": {"memory": {"profile": "linear", "start": "1Gi", "rate": "4Gi/s"}}}
        await run_pod(client, pod("leaky", container("c", None, None, limits=False), usage=leak))
        await running(client, clock, "steady")

        async def killed():
            p = await get_pod(client, "leaky")
            cs = (p["status"].get("containerStatuses") or [{}])[0]
            return (cs.get("lastState") or {}).get("terminated", {}).get("reason") == "OOMKilled" and p
        await wait_for(clock, killed, timeout=60, what="leaky OOM-killed")
        kills = [k for k in runtime.oom_kills if k.scope in ("node", "kubepods")]
        assert kills and kills[0].name == "c" and runtime.sandbox_config(kills[0].sandbox_id).name == "leaky"
        assert (await get_pod(client, "steady"))["status"]["containerStatuses"][0]["restartCount"] == 0
        await stop(agent, task)

    clock.run(main())


def test_node_level_cgroups_follow_the_pods():
    clock = VirtualClock()

    async def main():
        client = await cluster(clock)
        runtime = SimRuntime(clock, memory_capacity=8 * GI)
        config = NodeConfig.from_flags(capacity="cpu=8,memory=8Gi", kube_reserved="cpu=1,memory=1Gi",
                                       eviction_hard="memory.available<100Mi")
        agent, task = await start_agent(client, clock, runtime, config=config)
        await run_pod(client, pod("b", container("c", "1500m", "1Gi", limits=False)))
        await running(client, clock, "b")
        values = runtime.node_cgroups()
        # kubepods: capacity - kube-reserved, without the eviction threshold (seed 004)
        assert values["kubepods"].memory_limit_in_bytes == 7 * GI
        assert values["kubepods"].cpu_shares == 7 * 1024
        assert values["burstable"].cpu_shares == 1536
        assert values["besteffort"].cpu_shares == 2
        # kvert explain pod shows them, as applied (cgroup v2, the kubelet's linear weight)
        import json

        async def explained():
            p = await get_pod(client, "b")
            text = (p["metadata"].get("annotations") or {}).get("explain.kvert.io/node")
            return text and json.loads(text)
        out = await wait_for(clock, explained, what="explanation")
        assert out["kubepods"] == {"path": "/kubepods", "cgroup": {
            "cpu.weight": "274", "cpu.max": "max 100000", "memory.max": str(7 * GI)}}
        assert out["qos"]["path"] == "/kubepods/burstable"
        assert out["qos"]["cgroup"]["cpu.weight"] == "59"
        await stop(agent, task)

    clock.run(main())
