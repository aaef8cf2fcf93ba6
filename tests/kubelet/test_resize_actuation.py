"""Applying resizes: resizePolicy, ordering, CRI failures (Kubernetes: the other updates go
ahead; seed 000 behind KvertResizeRollback: roll back), memory limits below usage
(Kubernetes 1.34+: refused untouched; seed 000 behind KvertMemoryLimitReclaim: the control
loop), the static CPU manager rule, the order deferred resizes are retried in."""

from __future__ import annotations

from kvert.clock import VirtualClock
from kvert.kubelet.config import NodeConfig, parse_eviction_thresholds
from kvert.kubelet.runtime.base import CriError
from kvert.kubelet.runtime.sim import SimRuntime

from tests.kubelet.test_agent_support import (GI, MI, HeldRuntime, cluster, condition, container, cstatus,
                                              events, node_config, pod, run_pod, running, start_agent, stop,
                                              wait_for)


def _resize(name: str, cpu: str | None = None, memory: str | None = None) -> dict:
    res: dict = {}
    if cpu:
        res["cpu"] = cpu
    if memory:
        res["memory"] = memory
    return {"spec": {"containers": [{"name": name, "resources": {"requests": res, "limits": res}}]}}


async def _resized(client, clock, pod_name: str, container: str, part: str, resource: str, value: str):
    async def check():
        p = await client.get("pods", pod_name, "default")
        cs = cstatus(p, container)
        busy = [c for c in p["status"]["conditions"] if c["type"].startswith("PodResize")]
        return p if cs.get("resources", {}).get(part, {}).get(resource) == value and not busy else None
    return await wait_for(clock, check, what=f"{pod_name}/{container} {resource}={value}")


async def _resize_error(client, clock, pod_name: str) -> dict:
    """Wait until the pod's resize is in progress with reason Error; the pod."""
    async def check():
        p = await client.get("pods", pod_name, "default")
        c = condition(p, "PodResizeInProgress")
        return p if c and c.get("reason") == "Error" else None
    return await wait_for(clock, check, what=f"{pod_name} resize Error")


def test_resize_policy_not_required_never_restarts_restart_container_restarts_once():
    clock = VirtualClock()

    async def main():
        client = await cluster(clock)
        runtime = SimRuntime(clock)
        agent, task = await start_agent(client, clock, runtime)
        await run_pod(client, pod("app", container("java", "500m", "256Mi",
                                                   policy={"cpu": "NotRequired", "memory": "RestartContainer"}),
                                  container("proxy", "100m", "64Mi")))
        p = await running(client, clock, "app")
        java_id, proxy_id = cstatus(p, "java")["containerID"], cstatus(p, "proxy")["containerID"]

        # memory of "java" (RestartContainer) and cpu of "proxy" (NotRequired) together
        patch = {"spec": {"containers": [
            {"name": "java", "resources": {"requests": {"memory": "512Mi"}, "limits": {"memory": "512Mi"}}},
            {"name": "proxy", "resources": {"requests": {"cpu": "200m"}, "limits": {"cpu": "200m"}}}]}}
        await client.resize("default", "app", patch, patch_type="strategic")
        p = await _resized(client, clock, "app", "java", "limits", "memory", "512Mi")
        p = await _resized(client, clock, "app", "proxy", "limits", "cpu", "200m")
        java, proxy = cstatus(p, "java"), cstatus(p, "proxy")
        assert java["restartCount"] == 1 and java["containerID"] != java_id
        assert "running" in java["state"] and java["lastState"]["terminated"]["containerID"] == java_id
        assert proxy["restartCount"] == 0 and proxy["containerID"] == proxy_id
        java_id = java["containerID"]

        # cpu of "java" is NotRequired: resized in place, no restart
        await client.resize("default", "app", _resize("java", cpu="800m"), patch_type="strategic")
        p = await _resized(client, clock, "app", "java", "limits", "cpu", "800m")
        assert cstatus(p, "java")["restartCount"] == 1 and cstatus(p, "java")["containerID"] == java_id
        assert cstatus(p, "proxy")["restartCount"] == 0
        await clock.sleep(30)
        p = await client.get("pods", "app", "default")
        assert cstatus(p, "java")["restartCount"] == 1 and cstatus(p, "proxy")["restartCount"] == 0
        await stop(agent, task)

    clock.run(main())


class FailingRuntime(HeldRuntime):
    """Fails chosen UpdateContainerResources calls (1-based call numbers)."""

    def __init__(self, inner, fail_calls):
        super().__init__(inner)
        self.fail_calls = set(fail_calls)
        self.count = 0
        self.log: list[tuple[str, int, int]] = []

    async def update_container_resources(self, container_id, resources):
        self.count += 1
        self.log.append((container_id, resources.linux.cpu_quota, self.count))
        if self.count in self.fail_calls:
            raise CriError("injected failure")
        await self.inner.update_container_resources(container_id, resources)


async def _two_raised_with_a_failure(client, clock, fail_calls: set, gates: dict):
    """A pod of containers a and b (500m each) resized to 700m / 600m on a runtime failing
    the given UpdateContainerResources calls; (agent, task, sim, runtime, the pod once its
    resize shows Error, a's and b's container ids)."""
    sim = SimRuntime(clock)
    runtime = FailingRuntime(sim, fail_calls=fail_calls)
    agent, task = await start_agent(client, clock, runtime, config=node_config(feature_gates=gates))
    await run_pod(client, pod("two", container("a", "500m", "128Mi"), container("b", "500m", "128Mi")))
    p = await running(client, clock, "two")
    a_id = cstatus(p, "a")["containerID"].split("://")[1]
    b_id = cstatus(p, "b")["containerID"].split("://")[1]
    patch = {"spec": {"containers": [
        {"name": "a", "resources": {"requests": {"cpu": "700m"}, "limits": {"cpu": "700m"}}},
        {"name": "b", "resources": {"requests": {"cpu": "600m"}, "limits": {"cpu": "600m"}}}]}}
    await client.resize("default", "two", patch, patch_type="strategic")
    return agent, task, sim, runtime, await _resize_error(client, clock, "two"), a_id, b_id


def test_cri_failure_the_other_updates_proceed_and_it_is_retried_later():
    # Kubernetes (KEP-1287): a failed UpdateContainerResources does not stop the other
    # updates of its phase; nothing is rolled back; the failed one is retried later
    clock = VirtualClock()

    async def main():
        client = await cluster(clock)
        agent, task, sim, runtime, p, a_id, b_id = await _two_raised_with_a_failure(client, clock, {1}, {})
        message = condition(p, "PodResizeInProgress")["message"]
        assert message == "container 'a': injected failure"
        # a failed, b still went up; the pod cgroup was raised first
        assert [(cid, quota) for cid, quota, _ in runtime.log] == [(a_id, 70000), (b_id, 60000)]
        assert sim.status(a_id).resources.linux.cpu_quota == 50000
        assert sim.status(b_id).resources.linux.cpu_quota == 60000
        assert cstatus(p, "b")["resources"]["limits"]["cpu"] == "600m"
        assert cstatus(p, "a")["resources"]["limits"]["cpu"] == "500m"
        event = (await events(client, "two", "ResizeError"))[0]["message"]
        assert event.startswith("Pod resize error: {") and '"error":"container \'a\': injected failure"' in event
        p = await _resized(client, clock, "two", "a", "limits", "cpu", "700m")
        assert cstatus(p, "a")["restartCount"] == 0 and cstatus(p, "b")["restartCount"] == 0
        await stop(agent, task)

    clock.run(main())


def test_cri_failure_rolls_back_and_is_retried_later_with_the_seed_gate():
    clock = VirtualClock()

    async def main():
        client = await cluster(clock)
        agent, task, sim, runtime, p, a_id, b_id = await _two_raised_with_a_failure(
            client, clock, {2}, {"KvertResizeRollback": True})
        assert "injected failure" in condition(p, "PodResizeInProgress")["message"]
        # a was raised, b failed, a rolled back; b never touched; the pod cgroup was raised first
        assert [(cid, quota) for cid, quota, _ in runtime.log] == [(a_id, 70000), (b_id, 60000), (a_id, 50000)]
        assert sim.status(a_id).resources.linux.cpu_quota == 50000
        assert sim.status(b_id).resources.linux.cpu_quota == 50000
        pod_quota = sim.sandbox_resources(sim.sandbox_of(a_id)).cpu_quota
        assert pod_quota >= 2 * 50000          # the sum never exceeds the pod's limit
        assert cstatus(p, "a")["resources"]["limits"]["cpu"] == "500m"
        assert cstatus(p, "a")["allocatedResources"]["cpu"] == "700m"
        # retried later: completes
        p = await _resized(client, clock, "two", "b", "limits", "cpu", "600m")
        assert cstatus(p, "a")["resources"]["limits"]["cpu"] == "700m"
        assert sim.sandbox_resources(sim.sandbox_of(a_id)).cpu_quota == 130000
        assert cstatus(p, "a")["restartCount"] == 0 and cstatus(p, "b")["restartCount"] == 0
        assert [e for e in await events(client, "two", "ResizeError")]
        await stop(agent, task)

    clock.run(main())


def test_update_order_decreases_before_increases_and_pod_cgroup_around_them():
    clock = VirtualClock()

    async def main():
        client = await cluster(clock)
        sim = SimRuntime(clock)
        runtime = FailingRuntime(sim, fail_calls=set())
        calls: list[str] = []
        original_pod = sim.update_pod_sandbox_resources

        async def pod_update(sandbox_id, resources):
            calls.append(f"pod {resources.cpu_quota}")
            await original_pod(sandbox_id, resources)
        runtime.update_pod_sandbox_resources = pod_update
        original = runtime.update_container_resources

        async def container_update(container_id, resources):
            calls.append(f"container {resources.linux.cpu_quota}")
            await original(container_id, resources)
        runtime.update_container_resources = container_update
        agent, task = await start_agent(client, clock, runtime)
        await run_pod(client, pod("two", container("a", "500m", "128Mi"), container("b", "500m", "128Mi")))
        await running(client, clock, "two")
        # net increase: pod cgroup first; b decreases before a increases
        patch = {"spec": {"containers": [
            {"name": "a", "resources": {"requests": {"cpu": "900m"}, "limits": {"cpu": "900m"}}},
            {"name": "b", "resources": {"requests": {"cpu": "300m"}, "limits": {"cpu": "300m"}}}]}}
        await client.resize("default", "two", patch, patch_type="strategic")
        await _resized(client, clock, "two", "a", "limits", "cpu", "900m")
        assert calls == ["pod 120000", "container 30000", "container 90000"]
        calls.clear()
        # net decrease: containers first (decrease first), pod cgroup last
        patch = {"spec": {"containers": [
            {"name": "a", "resources": {"requests": {"cpu": "200m"}, "limits": {"cpu": "200m"}}},
            {"name": "b", "resources": {"requests": {"cpu": "400m"}, "limits": {"cpu": "400m"}}}]}}
        await client.resize("default", "two", patch, patch_type="strategic")
        await _resized(client, clock, "two", "a", "limits", "cpu", "200m")
        assert calls == ["container 20000", "container 40000", "pod 60000"]
        await stop(agent, task)

    clock.run(main())


def test_memory_limit_decrease_below_usage_leaves_the_container_untouched():
    # Kubernetes 1.34+ (e2e "decrease memory limit below usage"): no PodResizePending,
    # PodResizeInProgress reason Error, the status keeps the previous values; then it succeeds
    clock = VirtualClock()

    async def main():
        client = await cluster(clock)
        sim = SimRuntime(clock)
        agent, task = await start_agent(client, clock, sim)
        await run_pod(client, pod("mem", container("c", "500m", "256Mi")),)
        p = await running(client, clock, "mem")
        cid = cstatus(p)["containerID"].split("://")[1]
        sim.set_usage(cid, memory=200 * MI)
        await client.resize("default", "mem", _resize("c", cpu="700m", memory="128Mi"), patch_type="strategic")
        p = await _resize_error(client, clock, "mem")
        assert condition(p, "PodResizePending") is None
        assert condition(p, "PodResizeInProgress")["message"] == (
            f"cannot decrease memory limits: [attempting to set pod memory limit ({128 * MI}) below current usage "
            f"({200 * MI}), attempting to set container \"c\" memory limit ({128 * MI}) below current usage "
            f"({200 * MI})]")
        cs = cstatus(p)
        assert cs["allocatedResources"]["memory"] == "128Mi"
        assert cs["resources"]["limits"] == {"cpu": "500m", "memory": "256Mi"}     # untouched, cpu too
        assert sim.status(cid).resources.linux.memory_limit_in_bytes == 256 * MI
        sim.set_usage(cid, memory=100 * MI)
        p = await _resized(client, clock, "mem", "c", "limits", "memory", "128Mi")
        assert cstatus(p)["resources"]["limits"]["cpu"] == "700m"
        assert cstatus(p)["restartCount"] == 0
        await stop(agent, task)

    clock.run(main())


def test_memory_limit_decrease_waits_until_usage_fits_with_the_seed_gate():
    clock = VirtualClock()

    async def main():
        client = await cluster(clock)
        sim = SimRuntime(clock)
        agent, task = await start_agent(client, clock, sim,
                                        config=node_config(feature_gates={"KvertMemoryLimitReclaim": True}))
        await run_pod(client, pod("mem", container("c", "500m", "256Mi")),)
        p = await running(client, clock, "mem")
        cid = cstatus(p)["containerID"].split("://")[1]
        sim.set_usage(cid, memory=200 * MI)
        await client.resize("default", "mem", _resize("c", memory="128Mi"), patch_type="strategic")
        p = await _resize_error(client, clock, "mem")
        message = condition(p, "PodResizeInProgress")["message"]
        assert "below current usage" in message and str(128 * MI) in message and str(200 * MI) in message
        cs = cstatus(p)
        assert cs["allocatedResources"]["memory"] == "128Mi"
        assert cs["resources"]["limits"]["memory"] == "256Mi"        # not reached yet
        applied = sim.status(cid).resources.linux.memory_limit_in_bytes
        assert 200 * MI < applied < 256 * MI                       # lowered to just above the usage
        await clock.sleep(60)
        p = await client.get("pods", "mem", "default")
        assert condition(p, "PodResizeInProgress")["reason"] == "Error"
        assert sim.status(cid).state == "running"                  # never OOM-killed by the resize
        # the usage goes down: the limit reaches its target, status follows
        sim.set_usage(cid, memory=100 * MI)
        p = await _resized(client, clock, "mem", "c", "limits", "memory", "128Mi")
        assert sim.status(cid).resources.linux.memory_limit_in_bytes == 128 * MI
        assert cstatus(p)["restartCount"] == 0 and cstatus(p)["containerID"].endswith(cid)
        await stop(agent, task)

    clock.run(main())


async def _pinned_pod_resized_to(client, clock, gates: dict, cpu: str):
    """A static CPU manager node with a 1-CPU Guaranteed pod asked to resize to ``cpu``;
    (agent, task, the pod, its PodResizePending condition) once the node refused."""
    config = NodeConfig(capacity={"cpu": 8000, "memory": 16 * GI}, cpu_manager_policy="static",
                        kube_reserved={"cpu": 500}, eviction_hard=parse_eviction_thresholds("memory.available<100Mi"),
                        feature_gates=gates)
    agent, task = await start_agent(client, clock, config=config)
    await run_pod(client, pod("pinned", container("c", "1", "256Mi")))
    await running(client, clock, "pinned")
    await client.resize("default", "pinned", _resize("c", cpu=cpu), patch_type="strategic")

    async def refused():
        p = await client.get("pods", "pinned", "default")
        c = condition(p, "PodResizePending")
        return (p, c) if c else None
    p, c = await wait_for(clock, refused)
    return agent, task, p, c


def test_static_cpu_manager_refuses_cpu_resizes_of_guaranteed_pods():
    clock = VirtualClock()

    async def main():
        client = await cluster(clock)
        agent, task, p, c = await _pinned_pod_resized_to(client, clock, {}, "2")
        assert (c["reason"], c["message"]) == (
            "Infeasible", 'Resize is infeasible for Guaranteed Pods alongside CPU Manager policy "static"')
        assert cstatus(p)["allocatedResources"]["cpu"] == "1"
        # a memory-only resize is not the CPU manager's business
        await client.resize("default", "pinned", _resize("c", cpu="1", memory="512Mi"), patch_type="strategic")
        await _resized(client, clock, "pinned", "c", "limits", "memory", "512Mi")
        await stop(agent, task)

    clock.run(main())


def test_static_cpu_manager_whole_cpus_with_exclusive_cpus_gate():
    # seed 000's rule, under InPlacePodVerticalScalingExclusiveCPUs
    clock = VirtualClock()

    async def main():
        client = await cluster(clock)
        agent, task, p, c = await _pinned_pod_resized_to(
            client, clock, {"InPlacePodVerticalScalingExclusiveCPUs": True}, "1500m")
        assert c["reason"] == "Infeasible" and "static policy" in c["message"] and "1500m" in c["message"]
        assert cstatus(p)["allocatedResources"]["cpu"] == "1"
        assert await events(client, "pinned", "ResizeInfeasible")
        # whole CPUs are fine
        await client.resize("default", "pinned", _resize("c", cpu="2"), patch_type="strategic")
        await _resized(client, clock, "pinned", "c", "limits", "cpu", "2")
        await stop(agent, task)

    clock.run(main())


def test_deferred_resizes_are_retried_in_kubernetes_order_when_room_frees_up():
    clock = VirtualClock()

    async def main():
        client = await cluster(clock)
        await client.create("scheduling.k8s.io/priorityclasses",
                            {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
                             "metadata": {"name": "high"}, "value": 1000})
        agent, task = await start_agent(client, clock, config=node_config(cpu=4000))
        await run_pod(client, pod("filler", container("c", "2000m", "128Mi")))
        await run_pod(client, pod("low", container("c", "500m", "128Mi")))
        await run_pod(client, pod("high", container("c", "500m", "128Mi"), priorityClassName="high"))
        for name in ("filler", "low", "high"):
            await running(client, clock, name)
        # "low" asks first (waits longest), "high" later; neither fits next to the filler
        await client.resize("default", "low", _resize("c", cpu="2500m"), patch_type="strategic")
        await clock.sleep(5)
        await client.resize("default", "high", _resize("c", cpu="2500m"), patch_type="strategic")

        async def both_deferred():
            ps = [await client.get("pods", n, "default") for n in ("low", "high")]
            return all((condition(p, "PodResizePending") or {}).get("reason") == "Deferred" for p in ps)
        await wait_for(clock, both_deferred)
        # the filler leaves: room for one of them; priority wins over waiting time
        await client.delete("pods", "filler", namespace="default")
        await _resized(client, clock, "high", "c", "limits", "cpu", "2500m")
        low = await client.get("pods", "low", "default")
        assert condition(low, "PodResizePending")["reason"] == "Deferred"
        assert condition(low, "PodResizePending")["message"] == (
            "Node didn't have enough resource: cpu, requested: 2500, used: 2500, capacity: 4000")
        # "high" shrinks: "low" goes through
        await client.resize("default", "high", _resize("c", cpu="1000m"), patch_type="strategic")
        await _resized(client, clock, "low", "c", "limits", "cpu", "2500m")
        await stop(agent, task)

    clock.run(main())
