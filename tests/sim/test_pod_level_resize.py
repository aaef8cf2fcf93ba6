"""A pod-level resize (KEP-5419) in the simulator: the very node agent, over the shared fleet in
virtual time, applies it to the pod's sandbox (the fleet's pod cpu cap and memory limit), and
the run's tracker counts it as an in-place resize and follows the pod-level requests."""

from __future__ import annotations

import asyncio

from kvert.client.informer import Informer
from kvert.clock import VirtualClock
from kvert.sim.engine import _start_cluster
from kvert.sim.recording import Tracker, requests_of
from kvert.sim.scenario import parse_scenario

MI = 2**20


def _scenario():
    return parse_scenario({
        "duration": "1h", "seed": 5, "tick": "10s", "sampleInterval": "60s",
        "nodes": {"count": 1, "capacity": {"cpu": "4", "memory": "8Gi"}},
        "workloads": [{"name": "web", "replicas": 1,
                       "containers": [{"name": "app", "requests": {"cpu": "100m", "memory": "50Mi"},
                                       "usage": {"cpu": "50m", "memory": "20Mi"}}]}],
        "policies": [{"name": "none", "vpa": "none"}]})


def _pod() -> dict:
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "lvl", "namespace": "default", "labels": {"kvert.io/workload": "web"}},
            "spec": {"resources": {"requests": {"cpu": "500m", "memory": "256Mi"},
                                   "limits": {"cpu": "1", "memory": "512Mi"}},
                     "containers": [{"name": "app", "image": "registry.k8s.io/pause"}]}}


def test_pod_level_resize_in_simulation():
    scn = _scenario()
    clock = VirtualClock()

    async def main():
        cluster = await _start_cluster(scn, clock, vpa=False)
        admin = cluster.admin
        tracker = Tracker(clock, ["web"])
        informer = Informer(admin, "pods", clock=clock)
        informer.add_handlers(tracker.on_add, tracker.on_update, tracker.on_delete)
        informer_task = asyncio.ensure_future(informer.run())
        try:
            await admin.create("pods", _pod())

            async def wait(check, what):
                for _ in range(600):
                    got = await admin.get("pods", "lvl", "default")
                    if check(got):
                        return got
                    await clock.sleep(1)
                raise AssertionError(f"timed out: {what}")
            p = await wait(lambda p: p.get("status", {}).get("phase") == "Running", "running")
            assert requests_of(p) == (500, 256 * MI)
            await admin.resize("default", "lvl", {"spec": {"resources": {
                "requests": {"cpu": "1", "memory": "256Mi"}, "limits": {"cpu": "2", "memory": "1Gi"}}}})
            p = await wait(lambda p: p["status"].get("resources", {}).get("limits", {}).get("cpu") == "2"
                           and not any(c["type"].startswith("PodResize") for c in p["status"]["conditions"]),
                           "resized")
            assert p["status"]["allocatedResources"] == {"cpu": "1", "memory": "256Mi"}
            assert requests_of(p) == (1000, 256 * MI)
            agent = cluster.agents[0]
            ps = next(iter(agent.pods.values()))
            slot = agent.runtime._sandbox(ps.sandbox_id).slot
            assert cluster.fleet.sandboxes.mem_limit[slot] == float(1 << 30)
            assert cluster.fleet.sandboxes.cpu_cap[slot] == 2000.0        # millicores
            await clock.sleep(5)
            assert tracker.resizes["web"] >= 1
        finally:
            informer.stop()
            informer_task.cancel()
            cluster.fleet_task.cancel()
            await cluster.supervisor.stop()
            cluster.store.close()

    clock.run(main())
