"""A pod-level resize (KEP-5419) on the cgroupfs runtime: real processes, the pod cgroup's
``cpu.max``, ``cpu.weight`` and ``memory.max`` rewritten in place, no container restarted.
Root and a cgroup filesystem are needed."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from kvert.clock import WallClock
from kvert.kubelet.cgroups import kubelet_cpu_weight
from kvert.kubelet.config import parse_eviction_thresholds
from kvert.kubelet.runtime.cgroupfs import CgroupfsRuntime, unavailable

from .test_agent_support import GI, cluster, condition, node_config, run_pod, running, start_agent, stop, wait_for

pytestmark = pytest.mark.skipif(unavailable() is not None,
                                reason=f"needs root and a cgroup filesystem: {unavailable()}")


def _pod() -> dict:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "lvl", "namespace": "default"},
            "spec": {"terminationGracePeriodSeconds": 1,
                     "resources": {"requests": {"cpu": "500m", "memory": "64Mi"},
                                   "limits": {"cpu": "1", "memory": "256Mi"}},
                     "containers": [{"name": "c", "image": "busybox", "command": ["sleep", "600"]}]}}


def test_pod_level_resize_rewrites_the_pod_cgroup(tmp_path: Path):
    """Pod cgroup values as upstream's pod container manager writes them (ResourceConfigForPod,
    cgroup v2: cpu.max "QUOTA PERIOD", cpu.weight from the shares, memory.max in bytes)."""
    clock = WallClock()

    async def main() -> None:
        client = await cluster(clock)
        node_dir = tmp_path / "node"
        runtime = CgroupfsRuntime.open(clock, f"lvl-{os.getpid()}-{tmp_path.name[-10:]}", node_dir)
        agent, task = await start_agent(client, clock, runtime, checkpoint_dir=node_dir,
                                        config=node_config(memory=64 * GI,
                                                           eviction_hard=parse_eviction_thresholds(
                                                               "memory.available<1Mi")))
        try:
            await run_pod(client, _pod())
            p = await running(client, clock, "lvl")
            rel = f"kubepods/burstable/pod{p['metadata']['uid']}"
            v2 = runtime.tree.version == 2

            def files() -> tuple[str, str, str]:
                if v2:
                    return (runtime.tree.read(rel, "cpu.max").strip(), runtime.tree.read(rel, "cpu.weight").strip(),
                            runtime.tree.read(rel, "memory.max").strip())
                return (runtime.tree.read(rel, "cpu.cfs_quota_us").strip(), runtime.tree.read(rel, "cpu.shares").strip(),
                        runtime.tree.read(rel, "memory.limit_in_bytes").strip())
            if v2:
                assert files() == ("100000 100000", str(kubelet_cpu_weight(512)), str(256 * 2**20))
            container_id = p["status"]["containerStatuses"][0]["containerID"]

            await client.resize("default", "lvl", {"spec": {"resources": {
                "requests": {"cpu": "1", "memory": "64Mi"}, "limits": {"cpu": "2", "memory": "512Mi"}}}})

            async def resized():
                got = await client.get("pods", "lvl", "default")
                done = got["status"].get("resources", {}).get("limits", {}).get("cpu") == "2"
                return got if done and condition(got, "PodResizeInProgress") is None else None
            p = await wait_for(clock, resized, timeout=30, step=0.1, what="pod-level resize applied")
            if v2:
                assert files() == ("200000 100000", str(kubelet_cpu_weight(1024)), str(512 * 2**20))
            else:
                assert files() == ("200000", "1024", str(512 * 2**20))
            cs = p["status"]["containerStatuses"][0]
            assert cs["containerID"] == container_id and cs["restartCount"] == 0
        finally:
            await stop(agent, task)
            runtime.close()
            await runtime.wait_closed()
    asyncio.run(main())
