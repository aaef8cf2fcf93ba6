"""Resize of sidecars (restartable init containers) and, since 1.36 (kubernetes#137352, gate
InPlacePodVerticalScalingInitContainers), of running regular init containers: the allocation,
the runtime update, ``initContainerStatuses[].allocatedResources`` / ``resources``, and
resizePolicy RestartContainer restarting a sidecar."""

from __future__ import annotations

from kvert.clock import VirtualClock
from kvert.kubelet import resize as rz
from kvert.kubelet.runtime.sim import SimRuntime

from tests.kubelet.test_agent_support import (cluster, condition, container, node_config, pod, run_pod, running,
                                              start_agent, stop, wait_for)


def _init_status(p: dict, name: str) -> dict:
    return next(cs for cs in p["status"].get("initContainerStatuses") or [] if cs["name"] == name)


def _init_patch(name: str, cpu: str) -> dict:
    return {"spec": {"initContainers": [{"name": name, "resources": {"requests": {"cpu": cpu},
                                                                     "limits": {"cpu": cpu}}}]}}


async def _quiet(client, name: str):
    p = await client.get("pods", name, "default")
    return None if condition(p, "PodResizeInProgress") or condition(p, "PodResizePending") else p


def test_sidecar_resized_in_place_and_reported_in_init_container_statuses():
    """upstream: TestRetryPendingResizes '/sidecar=true' cases -- the sidecar's allocation follows
    its spec; the runtime applies it; initContainerStatuses show allocated and actual values."""
    clock = VirtualClock()

    async def main():
        client = await cluster(clock)
        runtime = SimRuntime(clock)
        agent, task = await start_agent(client, clock, runtime)
        side = container("side", "100m", "64Mi")
        side["restartPolicy"] = "Always"
        await run_pod(client, pod("s", container("c", "500m", "128Mi"), init=[side]))
        p = await running(client, clock, "s")
        before = _init_status(p, "side")["containerID"]
        await client.resize("default", "s", _init_patch("side", "300m"), patch_type="strategic")

        async def applied():
            p = await _quiet(client, "s")
            if p is None:
                return None
            cs = _init_status(p, "side")
            return p if cs.get("resources", {}).get("limits", {}).get("cpu") == "300m" else None
        p = await wait_for(clock, applied, what="sidecar resized")
        cs = _init_status(p, "side")
        assert cs["allocatedResources"] == {"cpu": "300m", "memory": "64Mi"}
        assert cs["resources"] == {"requests": {"cpu": "300m", "memory": "64Mi"},
                                   "limits": {"cpu": "300m", "memory": "64Mi"}}
        assert cs["restartCount"] == 0 and cs["containerID"] == before
        status = await runtime.container_status(before.split("://", 1)[-1])
        assert status.resources.linux.cpu_quota == 30000
        await stop(agent, task)

    clock.run(main())


def test_sidecar_with_restart_container_policy_is_restarted():
    """resizePolicy per sidecar: RestartContainer for cpu restarts it (restartCount 1)."""
    clock = VirtualClock()

    async def main():
        client = await cluster(clock)
        agent, task = await start_agent(client, clock, SimRuntime(clock))
        side = container("side", "100m", "64Mi", policy={"cpu": "RestartContainer"})
        side["restartPolicy"] = "Always"
        await run_pod(client, pod("s", container("c", "500m", "128Mi"), init=[side]))
        await running(client, clock, "s")
        await client.resize("default", "s", _init_patch("side", "200m"), patch_type="strategic")

        async def restarted():
            p = await _quiet(client, "s")
            if p is None:
                return None
            cs = _init_status(p, "side")
            return p if cs["restartCount"] == 1 and "running" in cs["state"] and \
                cs.get("resources", {}).get("limits", {}).get("cpu") == "200m" else None
        p = await wait_for(clock, restarted, what="sidecar restarted")
        assert p["status"]["containerStatuses"][0]["restartCount"] == 0
        await stop(agent, task)

    clock.run(main())


def test_running_regular_init_container_is_resized_in_place():
    """kubernetes#137352 (1.36): a running non-sidecar init container is resized in place."""
    clock = VirtualClock()

    async def main():
        client = await cluster(clock)
        runtime = SimRuntime(clock)
        agent, task = await start_agent(client, clock, runtime)
        init = container("migrate", "100m", "64Mi")
        body = pod("i", container("c", "500m", "128Mi"), init=[init],
                   usage={"migrate": {"cpu": "50m", "memory": "16Mi", "exitAfter": "120s"}})
        await run_pod(client, body)

        async def init_running():
            p = await client.get("pods", "i", "default")
            statuses = p.get("status", {}).get("initContainerStatuses") or []
            return p if statuses and "running" in statuses[0]["state"] else None
        p = await wait_for(clock, init_running, what="init container running")
        cid = _init_status(p, "migrate")["containerID"].split("://", 1)[-1]
        await client.resize("default", "i", _init_patch("migrate", "250m"), patch_type="strategic")

        async def applied():
            p = await _quiet(client, "i")
            if p is None:
                return None
            cs = _init_status(p, "migrate")
            return p if cs.get("allocatedResources", {}).get("cpu") == "250m" else None
        p = await wait_for(clock, applied, what="init container resized", timeout=60)
        status = await runtime.container_status(cid)
        assert status.resources.linux.cpu_quota == 25000
        assert _init_status(p, "migrate")["restartCount"] == 0
        await stop(agent, task)

    clock.run(main())


def test_regular_init_containers_are_not_resized_with_the_gate_off():
    """InPlacePodVerticalScalingInitContainers off: IsResizableContainer is false for them."""
    scope = rz.ResizeScope(init_containers=False)
    body = pod("i", container("c", "500m", "128Mi"), init=[container("migrate", "100m", "64Mi")])
    allocated = rz.spec_allocation(body, scope)
    resized = pod("i", container("c", "500m", "128Mi"), init=[container("migrate", "300m", "64Mi")])
    assert rz.resizable_names(resized, scope) == ["c"]
    assert not rz.resize_requested(resized, allocated, scope)
    assert rz.merged_allocation(resized, allocated, None, scope)["migrate"] == allocated["migrate"]
    assert rz.resize_requested(resized, allocated)          # 1.36's default: on
    config = node_config(feature_gates={"InPlacePodVerticalScalingInitContainers": False})
    assert not config.feature("InPlacePodVerticalScalingInitContainers")


def test_resize_event_summary_as_upstream():
    """upstream: TestRetryPendingResizes (trigger cases) expectedEvent 'Pod resize started:
    {"containers":[{"name":"c1","resources":{"requests":{"cpu":"500m","memory":"500Mi"}}}],"generation":0}';
    init containers (sidecars too) under "initContainers" first (makeResourceSummaryFromSpec),
    a pending resize's message as "error" (PodResizePendingMsg)."""
    plain = {"metadata": {}, "spec": {"containers": [{"name": "c1"}]}}
    allocation = {"c1": {"requests": {"cpu": 500, "memory": 500 * 2**20}, "limits": {}}}
    assert rz.resize_message(plain, allocation) == (
        '{"containers":[{"name":"c1","resources":{"requests":{"cpu":"500m","memory":"500Mi"}}}],"generation":0}')
    with_sidecar = {"metadata": {"generation": 3}, "spec": {
        "initContainers": [{"name": "s", "restartPolicy": "Always"}], "containers": [{"name": "c1"}]}}
    allocation = {"s": {"requests": {"cpu": 100}, "limits": {"cpu": 200}},
                  "c1": {"requests": {"cpu": 500}, "limits": {}}}
    assert rz.resize_message(with_sidecar, allocation, error="Node didn't have enough resource: cpu") == (
        '{"initContainers":[{"name":"s","resources":{"limits":{"cpu":"200m"},"requests":{"cpu":"100m"}}}],'
        '"containers":[{"name":"c1","resources":{"requests":{"cpu":"500m"}}}],"generation":3,'
        '"error":"Node didn\'t have enough resource: cpu"}')
