"""The cgroupfs runtime over a fake cgroup v2 tree (tmp_path): what it writes at each level,
and how it tells an OOM kill from another SIGKILL. Processes are real (they "join" the fake
cgroups by writing their pid into plain files), cgroups are not, so no root is needed."""

from __future__ import annotations

import asyncio
import signal

import pytest

from kvert.clock import WallClock
from kvert.kubelet.cgroups import cgroup_v2_weight, kubelet_cpu_weight
from kvert.kubelet.runtime.base import (ContainerConfig, ContainerResources, CriError, LinuxContainerResources,
                                        PodSandboxConfig)
from kvert.kubelet.runtime.cgroupfs import CgroupfsRuntime
from kvert.kubelet.runtime.cgroupfs_tree import NodeCgroups
from tests.kubelet.test_cgroupfs_tree import kernel, v2_root  # noqa: F401 - the fixture

POD = "kubepods/burstable/podu1"


def runtime(tmp_path) -> CgroupfsRuntime:
    return CgroupfsRuntime(WallClock(), NodeCgroups.open("n1", v2_root(tmp_path)), tmp_path / "data", name="n1")


async def start(rt: CgroupfsRuntime, command: tuple[str, ...], res: LinuxContainerResources) -> tuple[str, str]:
    sandbox = await rt.run_pod_sandbox(PodSandboxConfig(
        uid="u1", namespace="ns", name="p", cgroup_parent="/" + POD,
        resources=LinuxContainerResources(cpu_quota=50_000, cpu_shares=512, memory_limit_in_bytes=2**28)))
    cid = await rt.create_container(sandbox, ContainerConfig(name="c", image="busybox", command=command,
                                                             resources=ContainerResources(linux=res)))
    await rt.start_container(cid)
    return sandbox, cid


def test_v2_values_at_every_level(tmp_path, kernel):  # noqa: F811
    async def main():
        rt = runtime(tmp_path)
        base = tmp_path / "cgroup" / "kvert-n1"
        rt.set_node_cgroups({"kubepods": LinuxContainerResources(cpu_shares=4096, memory_limit_in_bytes=2**33),
                             "burstable": LinuxContainerResources(cpu_shares=512),
                             "besteffort": LinuxContainerResources(cpu_shares=2)})
        # the kubelet's own cgroups get its linear weight (getCPUWeight: 1024 shares -> 39)
        assert (base / "kubepods/cpu.weight").read_text() == str(kubelet_cpu_weight(4096))
        assert (base / "kubepods/memory.max").read_text() == str(2**33)
        assert (base / "kubepods/besteffort/cpu.weight").read_text() == "1"
        res = LinuxContainerResources(cpu_quota=20_000, cpu_shares=204, memory_limit_in_bytes=2**27)
        sandbox, cid = await start(rt, ("sleep", "30"), res)
        assert (base / POD / "cpu.max").read_text() == "50000 100000"
        assert (base / POD / "cpu.weight").read_text() == str(kubelet_cpu_weight(512))
        # a container's weight is the OCI runtime's conversion of its shares
        c = base / POD / cid
        assert (c / "cpu.weight").read_text() == str(cgroup_v2_weight(204))
        assert (c / "cpu.max").read_text() == "20000 100000"
        assert (c / "memory.max").read_text() == str(2**27)
        assert (c / "memory.oom.group").read_text() == "1"
        pid = rt._containers[cid].proc.pid
        assert (c / "cgroup.procs").read_text() == str(pid)
        await rt.update_container_resources(cid, ContainerResources(linux=LinuxContainerResources(
            cpu_quota=0, cpu_shares=204, memory_limit_in_bytes=0)))
        assert (c / "cpu.max").read_text() == "max 100000" and (c / "memory.max").read_text() == "max"
        rt.close()
        await rt.wait_closed()
    asyncio.run(main())


@pytest.mark.parametrize("oom_kill_grew, reason", [(True, "OOMKilled"), (False, "Error")])
def test_a_sigkill_is_an_oom_kill_only_when_the_counter_grew(tmp_path, kernel, oom_kill_grew, reason):  # noqa: F811
    async def main():
        rt = runtime(tmp_path)
        _, cid = await start(rt, ("sleep", "30"), LinuxContainerResources(memory_limit_in_bytes=2**27))
        events = tmp_path / "cgroup" / "kvert-n1" / POD / cid / "memory.events"
        if oom_kill_grew:
            events.write_text("low 0\nhigh 0\nmax 3\noom 1\noom_kill 1\noom_group_kill 1\n")
        rt._containers[cid].proc.send_signal(signal.SIGKILL)
        clock = WallClock()
        while (st := await rt.container_status(cid)).state != "exited":
            await clock.sleep(0.02)
        assert (st.exit_code, st.reason, st.oom_events) == (137, reason, 1 if oom_kill_grew else 0)
        rt.close()
        await rt.wait_closed()
    asyncio.run(main())


def test_a_refused_pod_update_keeps_the_old_values(tmp_path, kernel, monkeypatch):  # noqa: F811
    from kvert.kubelet.runtime import cgroupfs_tree
    real = cgroupfs_tree.write_value

    def write(path, value):
        if path.name == "memory.max" and value == "1048576":
            raise OSError(16, "Device or resource busy")
        real(path, value)

    async def main():
        rt = runtime(tmp_path)
        sandbox, _ = await start(rt, ("sleep", "30"), LinuxContainerResources())
        monkeypatch.setattr(cgroupfs_tree, "write_value", write)
        with pytest.raises(CriError, match="memory.max"):
            await rt.update_pod_sandbox_resources(sandbox, LinuxContainerResources(
                cpu_quota=80_000, cpu_shares=512, memory_limit_in_bytes=2**20))
        pod = tmp_path / "cgroup" / "kvert-n1" / POD
        assert (pod / "cpu.max").read_text() == "50000 100000"
        assert (pod / "memory.max").read_text() == str(2**28)
        rt.close()
        await rt.wait_closed()
    asyncio.run(main())


def test_an_image_without_a_command_is_refused(tmp_path, kernel):  # noqa: F811
    async def main():
        rt = runtime(tmp_path)
        sandbox = await rt.run_pod_sandbox(PodSandboxConfig(uid="u1", namespace="ns", name="p",
                                                            cgroup_parent="/" + POD))
        with pytest.raises(CriError, match="does not pull images"):
            await rt.create_container(sandbox, ContainerConfig(name="c", image="nginx",
                                                               resources=ContainerResources()))
        rt.close()
    asyncio.run(main())


def test_a_restarted_runtime_numbers_logs_on_and_serves_the_previous_one(tmp_path, kernel):  # noqa: F811
    async def run_once(command: str) -> tuple[CgroupfsRuntime, str]:
        rt = runtime(tmp_path)
        sandbox, cid = await start(rt, ("sh", "-c", command), LinuxContainerResources())
        clock = WallClock()
        while (await rt.container_status(cid)).state != "exited":
            await clock.sleep(0.02)
        return rt, sandbox

    async def main():
        first, _ = await run_once("echo one")
        first.close()
        await first.wait_closed()
        for procs in (tmp_path / "cgroup").rglob("cgroup.procs"):
            procs.write_text("")      # the kernel forgets the processes that are gone; plain files do not
        second, sandbox = await run_once("echo two")
        now = WallClock().now()
        current = second.container_log(sandbox, "c")
        assert current.path.name == "1.log" and [t for _, t in current.lines(now)] == ["two"]
        previous = second.container_log(sandbox, "c", previous=True)
        assert previous.path.name == "0.log" and [t for _, t in previous.lines(now)] == ["one"]
        assert 0 < previous.started_at <= previous.finished_at
        second.close()
        await second.wait_closed()
    asyncio.run(main())
