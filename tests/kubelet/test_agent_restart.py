"""Restart tolerance (seed 000): the node agent dies between "allocated" and "applied"; a new
agent with the same runtime and checkpoint directory re-admits the pod at its allocated
values, restarts no container and finishes the resize."""

from __future__ import annotations

import json

from kvert.clock import VirtualClock
from kvert.kubelet.checkpoint import FILENAME
from kvert.kubelet.runtime.sim import SimRuntime

from tests.kubelet.test_agent_support import (HeldRuntime, cluster, condition, container, cstatus, in_phase, kill,
                                              node_config, pod, run_pod, running, start_agent, stop, wait_for)


def test_agent_killed_during_a_resize_restarts_without_restarting_containers(tmp_path):
    clock = VirtualClock()

    async def main():
        client = await cluster(clock)
        sim = SimRuntime(clock)
        runtime = HeldRuntime(sim)
        config = node_config(cpu=4000)
        agent, task = await start_agent(client, clock, runtime, config=config, checkpoint_dir=tmp_path)
        await run_pod(client, pod("web", container("c", "500m", "256Mi"), container("side", "100m", "64Mi")))
        await run_pod(client, pod("other", container("c", "1", "128Mi")))
        p = await running(client, clock, "web")
        await running(client, clock, "other")
        ids = {cs["name"]: cs["containerID"] for cs in p["status"]["containerStatuses"]}
        uid = p["metadata"]["uid"]
        runtime.hold = True
        await client.resize("default", "web", {"spec": {"containers": [
            {"name": "c", "resources": {"requests": {"cpu": "1500m"}, "limits": {"cpu": "1500m"}}}]}},
            patch_type="strategic")
        await wait_for(clock, lambda: runtime.waiting > 0, what="the resize being applied")
        # allocated (and checkpointed) but not applied: kill the agent right here
        saved = json.loads((tmp_path / FILENAME).read_text())
        assert saved["pods"][uid]["allocated"]["c"]["requests"]["cpu"] == 1500
        assert saved["pods"][uid]["actuated"]["c"]["requests"]["cpu"] == 500
        await kill(task)
        assert sim.status(ids["c"].split("://")[1]).resources.linux.cpu_quota == 50000
        started = len(sim.list_sandboxes())

        # a resize of another pod while the agent is down waits for the agent
        await client.resize("default", "other", {"spec": {"containers": [
            {"name": "c", "resources": {"requests": {"cpu": "2"}, "limits": {"cpu": "2"}}}]}},
            patch_type="strategic")
        await clock.sleep(30)

        runtime.release()
        agent2, task2 = await start_agent(client, clock, runtime, config=config, checkpoint_dir=tmp_path)

        async def done():
            p = await client.get("pods", "web", "default")
            cs = cstatus(p)
            return p if cs["resources"]["limits"]["cpu"] == "1500m" and \
                condition(p, "PodResizeInProgress") is None else None
        p = await wait_for(clock, done)
        for cs in p["status"]["containerStatuses"]:
            assert cs["restartCount"] == 0 and cs["containerID"] == ids[cs["name"]]
        assert cstatus(p)["allocatedResources"]["cpu"] == "1500m"
        assert len(sim.list_sandboxes()) == started                 # no new sandbox
        assert sim.status(ids["c"].split("://")[1]).resources.linux.cpu_quota == 150000
        # the other pod's resize, handled after the existing pods were re-admitted
        async def other_done():
            p = await client.get("pods", "other", "default")
            return cstatus(p).get("resources", {}).get("limits", {}).get("cpu") == "2"
        await wait_for(clock, other_done)
        await stop(agent2, task2)

    clock.run(main())


def test_restart_keeps_allocations_of_deferred_resizes_and_counts_them(tmp_path):
    clock = VirtualClock()

    async def main():
        client = await cluster(clock)
        sim = SimRuntime(clock)
        config = node_config(cpu=2000)
        agent, task = await start_agent(client, clock, sim, config=config, checkpoint_dir=tmp_path)
        await run_pod(client, pod("a", container("c", "1", "128Mi")))
        await running(client, clock, "a")
        await client.resize("default", "a", {"spec": {"containers": [
            {"name": "c", "resources": {"requests": {"cpu": "1500m"}, "limits": {"cpu": "1500m"}}}]}},
            patch_type="strategic")
        await wait_for(clock, lambda: agent.pods and next(iter(agent.pods.values())).allocated["c"]
                       ["requests"]["cpu"] == 1500)
        await stop(agent, task)
        # while the agent is down, a pod that would fit next to the *spec* but not the
        # allocation must not be admitted ahead of the re-admitted pod
        await run_pod(client, pod("b", container("c", "1", "128Mi")))
        agent2, task2 = await start_agent(client, clock, sim, config=config, checkpoint_dir=tmp_path)
        p = await in_phase(client, clock, "b", "Failed")
        assert p["status"]["reason"] == "OutOfcpu"
        assert "used: 1500" in p["status"]["message"]
        a = await client.get("pods", "a", "default")
        assert cstatus(a)["restartCount"] == 0
        await stop(agent2, task2)

    clock.run(main())


def test_restart_with_a_new_runtime_recreates_the_pod_at_its_allocation(tmp_path):
    """``kvert up`` restarted: the checkpoint survived, the (simulated) containers did not."""
    clock = VirtualClock()

    async def main():
        client = await cluster(clock)
        config = node_config(cpu=4000)
        agent, task = await start_agent(client, clock, config=config, checkpoint_dir=tmp_path)
        await run_pod(client, pod("web", container("c", "500m", "256Mi")))
        await running(client, clock, "web")
        await client.resize("default", "web", {"spec": {"containers": [
            {"name": "c", "resources": {"requests": {"cpu": "700m"}, "limits": {"cpu": "700m"}}}]}},
            patch_type="strategic")

        async def resized():
            p = await client.get("pods", "web", "default")
            return cstatus(p)["resources"]["limits"]["cpu"] == "700m"
        await wait_for(clock, resized)
        await stop(agent, task)
        fresh = SimRuntime(clock, name="sim2")
        agent2, task2 = await start_agent(client, clock, fresh, config=config, checkpoint_dir=tmp_path)

        async def back():
            p = await client.get("pods", "web", "default")
            cs = cstatus(p)
            return p if cs.get("restartCount") == 1 and "running" in cs.get("state", {}) else None
        p = await wait_for(clock, back)
        cs = cstatus(p)
        assert cs["lastState"]["terminated"]["reason"] == "ContainerStatusUnknown"
        assert cs["resources"]["limits"]["cpu"] == "700m"
        assert len(fresh.list_sandboxes()) == 1
        linux = fresh.status(cs["containerID"].split("://")[1]).resources.linux
        assert linux.cpu_quota == 70000
        await stop(agent2, task2)

    clock.run(main())
