"""kvert.sim.recording.FleetSampler: cpu over an interval counts every container that lived in it."""

from __future__ import annotations

import json

import pytest

from kvert.clock import VirtualClock
from kvert.kubelet.runtime.base import ContainerConfig, ContainerResources, LinuxContainerResources, PodSandboxConfig
from kvert.kubelet.runtime.fleet import Fleet
from kvert.kubelet.runtime.sim import SimRuntime
from kvert.kubelet.usage import USAGE_ANNOTATION
from kvert.sim.recording import WORKLOAD_LABEL, FleetSampler, Tracker

MI = 2**20


def pod(uid: str, workload: str) -> dict:
    return {"metadata": {"uid": uid, "name": f"pod-{uid}", "namespace": "ns", "labels": {WORKLOAD_LABEL: workload}},
            "spec": {"containers": []}, "status": {"phase": "Pending"}}


def test_containers_that_exit_or_go_during_an_interval_count_what_they_used_in_it():
    clock = VirtualClock()

    async def main():
        fleet = Fleet(clock, tick=10)
        node = SimRuntime(clock, name="n", fleet=fleet)
        tracker = Tracker(clock, ["batch", "other"])
        for uid, workload in (("a", "batch"), ("b", "batch"), ("c", "other"), ("d", "other")):
            tracker.on_add(pod(uid, workload))
        sampler = FleetSampler(fleet, tracker)
        t0 = clock.now()
        sandboxes = {}

        async def start(uid, usage, quota=0):
            if uid not in sandboxes:
                sandboxes[uid] = await node.run_pod_sandbox(PodSandboxConfig(uid=uid, namespace="ns",
                                                                              name=f"pod-{uid}"))
            resources = ContainerResources(linux=LinuxContainerResources(cpu_quota=quota))
            cid = await node.create_container(sandboxes[uid], ContainerConfig(
                "app", "img", resources, annotations={USAGE_ANNOTATION: json.dumps(usage)}))
            await node.start_container(cid)
            return cid

        async def at(seconds):
            await clock.sleep(t0 + seconds - clock.now())

        # t=0: a1 wants 400m for 130 s under a 200m quota (20 000 of 100 000 us), b1 uses 250m
        # for 130 s and stays exited, c1 uses 100m, d1 300m for good
        a1 = await start("a", {"cpu": "400m", "memory": "64Mi", "exitAfter": "130s"}, quota=20_000)
        await start("b", {"cpu": "250m", "memory": "64Mi", "exitAfter": "130s"})
        await start("c", {"cpu": "100m", "memory": "16Mi"})
        await start("d", {"cpu": "300m", "memory": "32Mi"})
        await at(100)
        await node.stop_pod_sandbox(sandboxes["c"])          # killed (evicted) at 100 s ...
        await at(150)
        await node.remove_pod_sandbox(sandboxes["c"])        # ... and its pod removed at 150 s
        await at(200)
        await node.remove_container(a1)                      # a's worker restarts: the old row goes
        await start("a", {"cpu": "400m", "memory": "64Mi", "exitAfter": "130s"})   # a2: 200 s .. 330 s
        await at(300)
        first = sampler.sample(300)
        await at(600)
        second = sampler.sample(300)
        return first, second, sampler

    first, second, sampler = clock.run(main())
    # by hand, in core-seconds over (0, 300]: batch a1 200m x 130 s = 26 used, 400m x 130 s =
    # 52 wanted (26 throttled), b1 250m x 130 s = 32.5, a2 400m x 100 s = 40 (until the
    # sample); other: c1 100m x 100 s = 10, d1 300m x 300 s = 90
    assert first["cpu_use"].tolist() == pytest.approx([(26 + 32.5 + 40) / 300 * 1000, (10 + 90) / 300 * 1000])
    assert first["cpu_demand"].tolist() == pytest.approx([(52 + 32.5 + 40) / 300 * 1000, 100 / 300 * 1000])
    # the working set is the running containers' at the instant: a2 and d1
    assert first["memory_use"].tolist() == [64 * MI, 32 * MI]
    # over (300, 600]: a2's last 30 s (exits at 330 s), d1's 300 s; nothing counted twice
    assert second["cpu_use"].tolist() == pytest.approx([400 * 30 / 300, 300])
    assert second["cpu_demand"].tolist() == pytest.approx([400 * 30 / 300, 300])
    assert second["memory_use"].tolist() == [0, 32 * MI]
    assert sampler.throttled_ns.tolist() == pytest.approx([26e9, 0])


def _pod_with(cpu: str, memory: str, *conditions: str) -> dict:
    return {"metadata": {"name": "web-1", "namespace": "default", "uid": "u1", "labels": {WORKLOAD_LABEL: "web"}},
            "spec": {"containers": [{"name": "app", "resources": {"requests": {"cpu": cpu, "memory": memory}}}]},
            "status": {"phase": "Running", "conditions": [{"type": c, "status": "True"} for c in conditions],
                       "containerStatuses": [{"name": "app", "restartCount": 0,
                                              "resources": {"requests": {"cpu": cpu, "memory": memory}}}]}}


def test_a_resize_counts_once_when_it_completes():
    """A resize whose status first shows memory applied with PodResizeInProgress, then CPU
    with the condition gone, is one resize (one ResizeCompleted event); one written in a
    single status is one too; a status write that changes nothing is none."""
    tracker = Tracker(VirtualClock(0.0), ["web"])
    start = _pod_with("100m", "50Mi")
    halfway = _pod_with("100m", "300Mi", "PodResizeInProgress")
    done = _pod_with("500m", "300Mi")
    tracker.on_add(start)
    tracker.on_update(start, halfway)
    assert tracker.resizes["web"] == 0
    tracker.on_update(halfway, done)
    assert tracker.resizes["web"] == 1
    tracker.on_update(done, _pod_with("500m", "300Mi"))
    assert tracker.resizes["web"] == 1
    tracker.on_update(done, _pod_with("700m", "400Mi"))
    assert tracker.resizes["web"] == 2


def test_a_finished_pod_cleaned_up_is_no_eviction():
    """A CronJob's old Jobs go with their pods (successfulJobsHistoryLimit): a Succeeded pod's
    deletion disrupts nothing; a running pod's deletion is an eviction ("api")."""
    tracker = Tracker(VirtualClock(0.0), ["web"])
    done = _pod_with("100m", "50Mi")
    done["metadata"]["uid"] = "done"
    done["status"]["phase"] = "Succeeded"
    tracker.on_add(done)
    tracker.on_delete(done)
    assert tracker.evictions["web"] == 0 and tracker.events == []
    running = _pod_with("100m", "50Mi")
    tracker.on_add(running)
    tracker.on_delete(running)
    assert tracker.evictions["web"] == 1 and tracker.events[0]["cause"] == "api"
