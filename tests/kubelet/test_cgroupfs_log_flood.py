"""Issue 27's attack on the runtime of real processes: a container floods its log
(``yes xxxxxxxxxxxxxxxx``). Its log is rotated (containerLogMaxSize / containerLogMaxFiles,
as pkg/kubelet/logs/container_log_manager.go: rotated files time-stamped, older ones
gzipped, at most MaxFiles kept), so the files on disk stay within MaxFiles x MaxSize
(plus one read of output per file); with ``limits.ephemeral-storage: 10Mi`` the pod is
evicted with upstream's message (pkg/kubelet/eviction/helpers.go podEphemeralStorageMessageFmt).
Sizes are asserted, never timings. Root and a cgroup filesystem are needed."""

from __future__ import annotations

import asyncio
import os
import threading
from pathlib import Path

import pytest

from kvert.clock import WallClock
from kvert.kubelet.config import parse_eviction_thresholds
from kvert.kubelet.runtime.cgroupfs import CgroupfsRuntime, unavailable
from kvert.kubelet.runtime.logrotation import COMPRESS_SUFFIX, LogRotatePolicy

from .test_agent_support import GI, cluster, condition, events, get_pod, node_config, run_pod, start_agent, \
    stop, wait_for

pytestmark = pytest.mark.skipif(unavailable() is not None,
                                reason=f"needs root and a cgroup filesystem: {unavailable()}")

MI = 2**20
READ = 65536                   # the runtime reads a process's output 64KiB at a time
RECORD_GROWTH = 4              # a 17-byte line is a 57-byte CRI record


def _flood_pod(name: str, limit: str | None = None) -> dict:
    resources: dict = {}
    if limit:
        resources = {"limits": {"ephemeral-storage": limit}, "requests": {"ephemeral-storage": limit}}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"},
            "spec": {"terminationGracePeriodSeconds": 1, "containers": [{
                "name": "c", "image": "busybox", "command": ["sh", "-c", "yes xxxxxxxxxxxxxxxx"],
                "resources": resources}]}}


def _log_files(node_dir: Path, pod: str) -> list[Path]:
    pods = node_dir / "pods"
    found = []
    for directory in pods.glob(f"default_{pod}_*/c") if pods.is_dir() else []:
        found += [p for p in directory.iterdir() if p.is_file()]
    return found


def _total(files: list[Path]) -> int:
    total = 0
    for p in files:
        try:
            total += p.stat().st_size
        except FileNotFoundError:
            continue     # rotated away between listing and stat
    return total


def _sample(node_dir: Path, pod: str, samples: list[tuple[int, list[str]]], stop_at: threading.Event) -> None:
    """In a thread of its own: on the event loop, a listing would run only while the loop
    waits for a rotation, and see every file mid-rotation."""
    while not stop_at.wait(0.01):
        files = _log_files(node_dir, pod)
        samples.append((_total(files), sorted(p.name for p in files)))


def _run(tmp_path: Path, policy: LogRotatePolicy, body, **config) -> None:
    clock = WallClock()
    node_dir = tmp_path / "node"

    async def main() -> None:
        client = await cluster(clock)
        runtime = CgroupfsRuntime.open(clock, f"logs-{os.getpid()}-{tmp_path.name[-10:]}", node_dir)
        runtime.log_policy = policy
        config.setdefault("eviction_hard", parse_eviction_thresholds("memory.available<1Mi"))
        agent, task = await start_agent(client, clock, runtime, checkpoint_dir=node_dir,
                                        config=node_config(memory=64 * GI, **config), eviction_interval=0.5)
        try:
            await body(client, clock, agent, node_dir)
        finally:
            await stop(agent, task)
    asyncio.run(main())


def test_a_log_flood_is_rotated_within_max_files_of_max_size(tmp_path):
    policy = LogRotatePolicy(max_size=256 * 1024, max_files=3)

    async def body(client, clock, agent, node_dir):
        await run_pod(client, _flood_pod("flood"))
        samples: list[tuple[int, list[str]]] = []
        done = threading.Event()
        sampler = asyncio.ensure_future(asyncio.to_thread(_sample, node_dir, "flood", samples, done))

        def rotated_names() -> set[str]:
            return {n for _, names in samples for n in names if n != "0.log"}
        # until the log has been rotated many times over: far more was written than is kept
        await wait_for(clock, lambda: len(rotated_names()) > 4 * policy.max_files, timeout=60, step=0.05,
                       what="many rotations")
        done.set()
        await sampler
        bound = policy.max_files * (policy.max_size + RECORD_GROWTH * READ)
        assert max(total for total, _ in samples) <= bound
        assert max(len(names) for _, names in samples) <= policy.max_files + 1    # +1: a .tmp mid-compression
        # the current log beside compressed older ones (not in every listing: mid-rotation the
        # oldest is removed before the next is compressed, and the current log is renamed
        # before it is reopened)
        assert any("0.log" in names and any(n.endswith(COMPRESS_SUFFIX) for n in names) for _, names in samples)
        # kubectl logs reads the current file: whole lines of the flood, nothing else
        pod = await get_pod(client, "flood")
        sandbox = agent.pods[pod["metadata"]["uid"]].sandbox_id
        log = agent.runtime.container_log(sandbox, "c")
        lines = [text for _, text in log.lines(clock.now())]
        assert lines and set(lines) == {"xxxxxxxxxxxxxxxx"}

    _run(tmp_path, policy, body)


def test_a_log_flood_with_a_10Mi_limit_is_evicted(tmp_path):
    policy = LogRotatePolicy()       # the kubelet's defaults: 10Mi, 5 files

    async def body(client, clock, agent, node_dir):
        await run_pod(client, _flood_pod("flood", "10Mi"))
        samples: list[tuple[int, list[str]]] = []
        done = threading.Event()
        sampler = asyncio.ensure_future(asyncio.to_thread(_sample, node_dir, "flood", samples, done))

        async def failed():
            p = await get_pod(client, "flood")
            return p if p["status"].get("phase") == "Failed" else None
        evicted = await wait_for(clock, failed, timeout=60, step=0.1, what="evicted")
        done.set()
        await sampler
        message = "Pod ephemeral local storage usage exceeds the total limit of containers 10Mi. "
        assert (evicted["status"]["reason"], evicted["status"]["message"]) == ("Evicted", message)
        assert condition(evicted, "DisruptionTarget") is None
        assert [e["message"] for e in await events(client, "flood", "Evicted")] == [message]
        assert agent.evictions[0]["gracePeriod"] == 1
        assert max(total for total, _ in samples) <= policy.max_files * (policy.max_size + RECORD_GROWTH * READ)

    _run(tmp_path, policy, body)
