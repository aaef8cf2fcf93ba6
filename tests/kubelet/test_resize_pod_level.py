"""In-place resize of pod-level resources (KEP-5419, InPlacePodLevelResourcesVerticalScaling, beta
and on in 1.36) on the node: the allocation of ``spec.resources``, the decision, the pod cgroup
grown first and shrunk last, ``status.allocatedResources`` / ``status.resources``."""

from __future__ import annotations

from kvert.clock import VirtualClock
from kvert.kubelet import resize as rz
from kvert.kubelet.runtime.sim import SimRuntime

from tests.kubelet.test_agent_support import (GI, MI, cluster, condition, container, events, node_config, pod,
                                              run_pod, running, start_agent, stop, wait_for)

CPU_4 = {"cpu": 4000, "memory": 4 * GI, "pods": 110}


def _pod(pod_requests: dict | None, c_requests: dict, *, name: str = "p", uid: str = "1111") -> dict:
    """upstream TestRetryPendingResizes' testPod1: one container c1 with requests only, and
    pod-level requests when given."""
    spec: dict = {"containers": [{"name": "c1", "image": "i1", "resources": {"requests": c_requests}}]}
    if pod_requests is not None:
        spec["resources"] = {"requests": pod_requests}
    return {"metadata": {"name": name, "namespace": "ns1", "uid": uid, "generation": 2},
            "spec": spec, "status": {"phase": "Running", "qosClass": "Burstable"}}


def _decide(old_level: dict, new_level: dict):
    """The pod resized from ``old_level`` to ``new_level`` pod-level requests on upstream's test
    node (4 cpus, 4Gi) next to two other pods of 1 cpu / 1Gi each (testPod2, testPod3)."""
    original = _pod(old_level, {"cpu": "1", "memory": "1Gi"})
    allocated = rz.spec_allocation(original)
    resized = _pod(new_level, {"cpu": "1", "memory": "1Gi"})
    others = [{"cpu": 1000, "memory": GI}, {"cpu": 1000, "memory": GI}]
    limits = rz.NodeLimits(CPU_4, CPU_4)
    return allocated, rz.decide(resized, allocated, None, others, limits, 2, 0.0)


def test_pod_level_cpu_and_memory_increase_is_accepted():
    """upstream: TestRetryPendingResizes / 'pod-level: Request CPU and memory increase - expect InProgress'"""
    _, decision = _decide({"cpu": "1500m", "memory": "1500Mi"}, {"cpu": "2", "memory": "2Gi"})
    assert decision.ok
    assert decision.allocation[rz.POD_LEVEL]["requests"] == {"cpu": 2000, "memory": 2 * GI}
    assert decision.allocation["c1"]["requests"] == {"cpu": 1000, "memory": GI}


def test_pod_level_decrease_is_accepted():
    """upstream: TestRetryPendingResizes / 'pod-level: Request CPU and memory decrease - expect InProgress'"""
    _, decision = _decide({"cpu": "1500m", "memory": "1500Mi"}, {"cpu": "1200m", "memory": "1200Mi"})
    assert decision.ok
    assert decision.allocation[rz.POD_LEVEL]["requests"] == {"cpu": 1200, "memory": 1200 * MI}


def test_pod_level_cpu_increase_beyond_current_capacity_is_deferred():
    """upstream: TestRetryPendingResizes / 'pod-level: Request CPU increase beyond current capacity -
    expect Deferred' (message contains "Node didn't have enough resource: cpu")"""
    allocated, decision = _decide({"cpu": "1500m", "memory": "1500Mi"}, {"cpu": "2500m", "memory": "1500Mi"})
    assert not decision.ok and decision.reason == "Deferred"
    assert decision.message.startswith("Node didn't have enough resource: cpu")
    assert allocated[rz.POD_LEVEL]["requests"] == {"cpu": 1500, "memory": 1500 * MI}


def test_pod_level_memory_increase_beyond_node_capacity_is_infeasible():
    """upstream: TestRetryPendingResizes / 'pod-level: Request memory increase beyond node capacity -
    expect Infeasible', and its kubelet_pod_infeasible_resizes_total reason_detail"""
    _, decision = _decide({"cpu": "1500m", "memory": "1500Mi"}, {"cpu": "1500m", "memory": "4500Mi"})
    assert not decision.ok and decision.reason == "Infeasible"
    assert decision.message == "Node didn't have enough capacity: memory, requested: 4718592000, capacity: 4294967296"
    assert decision.reason_detail == "insufficient_node_allocatable"


def test_the_allocation_overrides_the_spec_pod_level_resources_only_with_the_gate():
    """upstream: TestUpdatePodFromAllocation / 'resized pod-level resources and allocation' and
    'resized pod-level resources with feature gate disabled'"""
    level = {"requests": {"cpu": "1200m", "memory": "1700"}, "limits": {"cpu": "2", "memory": "2500"}}
    resized = {"requests": {"cpu": "1500m", "memory": "1700"}, "limits": {"cpu": "2200m", "memory": "2500"}}
    pod_ = {"metadata": {"uid": "u"}, "spec": {"resources": level, "containers": [
        {"name": "c1", "resources": {"requests": {"cpu": "100m", "memory": "200"},
                                     "limits": {"cpu": "300m", "memory": "400"}}}]}}
    resized_pod = {**pod_, "spec": {**pod_["spec"], "resources": resized}}
    allocation = rz.spec_allocation(resized_pod)
    assert allocation[rz.POD_LEVEL] == {"requests": {"cpu": 1500, "memory": 1700},
                                        "limits": {"cpu": 2200, "memory": 2500}}
    view = rz.with_allocation(pod_, allocation)
    assert view["spec"]["resources"] == {"requests": {"cpu": "1500m", "memory": "1700"},
                                         "limits": {"cpu": "2200m", "memory": "2500"}}
    assert rz.resize_requested(pod_, allocation)
    # gate off: pod-level resources are neither allocated nor resized
    off = rz.ResizeScope(pod_level=False)
    assert rz.POD_LEVEL not in rz.spec_allocation(resized_pod, off)
    assert not rz.resize_requested(pod_, rz.spec_allocation(resized_pod, off), off)


def test_pod_cgroup_follows_the_allocated_pod_level_resources():
    """upstream: pkg/kubelet/cm ResourceConfigForPod (helpers_linux.go; TestResourceConfigForPod's
    formulas) on the allocated pod -- with pod-level resources, shares from the pod-level cpu
    request (MilliCPUToShares), quota from its cpu limit (MilliCPUToQuota, period 100000), the
    memory limit from its memory limit."""
    pod_ = {"metadata": {"uid": "u"}, "spec": {
        "resources": {"requests": {"cpu": "1", "memory": "1Gi"}, "limits": {"cpu": "2", "memory": "2Gi"}},
        "containers": [{"name": "c1", "resources": {}}]}}
    wanted = {**pod_, "spec": {**pod_["spec"], "resources": {"requests": {"cpu": "2", "memory": "1Gi"},
                                                             "limits": {"cpu": "3", "memory": "3Gi"}}}}
    options = rz.CgroupOptions(16 * GI)
    before = rz.AllocatedPod(pod_, rz.spec_allocation(pod_), options).pod_cgroup
    after = rz.AllocatedPod(pod_, rz.spec_allocation(wanted), options).pod_cgroup
    assert (before.cpu_shares, before.cpu_quota, before.memory_limit_in_bytes) == (1024, 200000, 2 * GI)
    assert (after.cpu_shares, after.cpu_quota, after.memory_limit_in_bytes) == (2048, 300000, 3 * GI)


def _level_pod(name: str, cpu_limit: str, memory_limit: str, *containers: dict) -> dict:
    body = pod(name, *containers)
    body["spec"]["resources"] = {"requests": {"cpu": "500m", "memory": "256Mi"},
                                 "limits": {"cpu": cpu_limit, "memory": memory_limit}}
    return body


def _bare(name: str, **policy: str) -> dict:
    """A container with no resources of its own: it inherits the pod's limits."""
    c: dict = {"name": name, "image": "busybox"}
    if policy:
        c["resizePolicy"] = [{"resourceName": r, "restartPolicy": p} for r, p in policy.items()]
    return c


async def _settled(client, clock, name: str, check):
    async def done():
        p = await client.get("pods", name, "default")
        busy = [c for c in p["status"].get("conditions", []) if c["type"].startswith("PodResize")]
        return p if not busy and check(p) else None
    return await wait_for(clock, done, what=f"{name} resized")


def test_pod_level_resize_grows_the_pod_cgroup_and_reports_status():
    """A pod-level resize in the simulated runtime: PodResizeInProgress, the pod cgroup set
    (cpu.max 300000, memory.max 1Gi), status.allocatedResources / status.resources at pod level,
    no container restarted (resizePolicy NotRequired), ResizeStarted / ResizeCompleted events."""
    clock = VirtualClock()

    async def main():
        client = await cluster(clock)
        runtime = SimRuntime(clock)
        calls: list[str] = []
        original = runtime.update_pod_sandbox_resources

        async def pod_update(sandbox_id, resources):
            calls.append(f"pod {resources.cpu_quota} {resources.memory_limit_in_bytes}")
            await original(sandbox_id, resources)
        runtime.update_pod_sandbox_resources = pod_update  # type: ignore[method-assign]
        agent, task = await start_agent(client, clock, runtime)
        await run_pod(client, _level_pod("lvl", "2", "512Mi", _bare("a"), _bare("b")))
        p = await running(client, clock, "lvl")
        assert p["status"]["allocatedResources"] == {"cpu": "500m", "memory": "256Mi"}
        assert p["status"]["resources"]["limits"] == {"cpu": "2", "memory": "512Mi"}
        ids = {cs["name"]: cs["containerID"] for cs in p["status"]["containerStatuses"]}

        await client.resize("default", "lvl", {"spec": {"resources": {
            "requests": {"cpu": "1", "memory": "256Mi"}, "limits": {"cpu": "3", "memory": "1Gi"}}}})
        p = await _settled(client, clock, "lvl",
                           lambda p: p["status"].get("resources", {}).get("limits", {}).get("cpu") == "3")
        assert p["status"]["allocatedResources"] == {"cpu": "1", "memory": "256Mi"}
        assert p["status"]["resources"] == {"requests": {"cpu": "1", "memory": "256Mi"},
                                            "limits": {"cpu": "3", "memory": "1Gi"}}
        # one pass per resource, memory then cpu (doPodResizeAction)
        assert calls == [f"pod 200000 {GI}", f"pod 300000 {GI}"]
        ps = next(iter(agent.pods.values()))
        applied = runtime.sandbox_resources(ps.sandbox_id)
        assert (applied.cpu_shares, applied.cpu_quota, applied.memory_limit_in_bytes) == (1024, 300000, GI)
        assert {cs["name"]: cs["containerID"] for cs in p["status"]["containerStatuses"]} == ids
        assert all(cs["restartCount"] == 0 for cs in p["status"]["containerStatuses"])
        reasons = [e["reason"] for e in await events(client, "lvl") if e["reason"].startswith("Resize")]
        assert reasons == ["ResizeStarted", "ResizeCompleted"]
        await stop(agent, task)

    clock.run(main())


def test_pod_cgroup_grown_before_containers_and_shrunk_after_them():
    """upstream doPodResizeAction (kuberuntime_manager.go, resizeContainers): the pod cgroup's
    values raised before updatePodContainerResources and lowered after it, per resource."""
    clock = VirtualClock()

    async def main():
        client = await cluster(clock)
        runtime = SimRuntime(clock)
        calls: list[str] = []
        pod_original, container_original = runtime.update_pod_sandbox_resources, runtime.update_container_resources

        async def pod_update(sandbox_id, resources):
            calls.append(f"pod {resources.cpu_quota}")
            await pod_original(sandbox_id, resources)

        async def container_update(container_id, resources):
            calls.append(f"container {resources.linux.cpu_quota}")
            await container_original(container_id, resources)
        runtime.update_pod_sandbox_resources = pod_update  # type: ignore[method-assign]
        runtime.update_container_resources = container_update  # type: ignore[method-assign]
        agent, task = await start_agent(client, clock, runtime)
        await run_pod(client, _level_pod("lvl", "2", "1Gi", container("a", "500m", "128Mi", limits=True)))
        await running(client, clock, "lvl")

        up = {"spec": {"resources": {"requests": {"cpu": "1", "memory": "256Mi"},
                                     "limits": {"cpu": "3", "memory": "1Gi"}},
                       "containers": [{"name": "a", "resources": {"requests": {"cpu": "1"},
                                                                  "limits": {"cpu": "1"}}}]}}
        await client.resize("default", "lvl", up, patch_type="strategic")
        await _settled(client, clock, "lvl", lambda p: p["status"]["resources"]["limits"]["cpu"] == "3")
        assert calls == ["pod 300000", "container 100000"]
        calls.clear()
        down = {"spec": {"resources": {"requests": {"cpu": "700m", "memory": "256Mi"},
                                       "limits": {"cpu": "1500m", "memory": "1Gi"}},
                         "containers": [{"name": "a", "resources": {"requests": {"cpu": "700m"},
                                                                    "limits": {"cpu": "700m"}}}]}}
        await client.resize("default", "lvl", down, patch_type="strategic")
        await _settled(client, clock, "lvl", lambda p: p["status"]["resources"]["limits"]["cpu"] == "1500m")
        assert calls == ["container 70000", "pod 150000"]
        await stop(agent, task)

    clock.run(main())


def test_container_inheriting_a_changed_pod_limit_restarts_on_restart_container_policy():
    """KEP-5419 (1.36 blog 'Resource inheritance and the resizePolicy'): a container without a
    limit of its own for a resource whose pod-level limit changes is resized with it; with
    resizePolicy RestartContainer for that resource it is restarted, with NotRequired it is not."""
    clock = VirtualClock()

    async def main():
        client = await cluster(clock)
        agent, task = await start_agent(client, clock, SimRuntime(clock))
        await run_pod(client, _level_pod("lvl", "2", "512Mi", _bare("keep", cpu="NotRequired"),
                                         _bare("bounce", memory="RestartContainer")))
        await running(client, clock, "lvl")
        await client.resize("default", "lvl", {"spec": {"resources": {
            "requests": {"cpu": "500m", "memory": "256Mi"}, "limits": {"cpu": "2", "memory": "1Gi"}}}})

        def restarted(p):
            counts = {cs["name"]: cs["restartCount"] for cs in p["status"]["containerStatuses"]}
            return counts == {"keep": 0, "bounce": 1} and all("running" in cs["state"]
                                                              for cs in p["status"]["containerStatuses"])
        p = await _settled(client, clock, "lvl", restarted)
        assert p["status"]["resources"]["limits"]["memory"] == "1Gi"
        assert condition(p, "PodResizeInProgress") is None
        await stop(agent, task)

    clock.run(main())


def test_pod_level_resize_survives_a_node_agent_restart_through_the_checkpoint():
    """The pod-level allocation is checkpointed with the containers' (upstream PodResourceInfo)."""
    clock = VirtualClock()

    async def main(tmp: str):
        client = await cluster(clock)
        runtime = SimRuntime(clock)
        agent, task = await start_agent(client, clock, runtime, checkpoint_dir=tmp)
        await run_pod(client, _level_pod("lvl", "2", "512Mi", _bare("a")))
        await running(client, clock, "lvl")
        await client.resize("default", "lvl", {"spec": {"resources": {
            "requests": {"cpu": "700m", "memory": "256Mi"}, "limits": {"cpu": "2", "memory": "512Mi"}}}})
        await _settled(client, clock, "lvl", lambda p: p["status"].get("allocatedResources", {}).get("cpu") == "700m")
        await stop(agent, task)
        agent, task = await start_agent(client, clock, runtime, checkpoint_dir=tmp)
        ps = next(iter(agent.pods.values()))
        assert ps.allocated[rz.POD_LEVEL]["requests"] == {"cpu": 700, "memory": 256 * MI}
        await stop(agent, task)

    import tempfile
    with tempfile.TemporaryDirectory() as tmp:
        clock.run(main(tmp))


def test_node_config_gate_off_leaves_pod_level_resources_unallocated():
    config = node_config(feature_gates={"InPlacePodLevelResourcesVerticalScaling": False})
    assert not config.feature("InPlacePodLevelResourcesVerticalScaling")
