"""The cgroupfs runtime for real: processes in this machine's cgroups (root only)."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import sys
from pathlib import Path

import pytest

from kvert.clock import WallClock
from kvert.kubelet.runtime.base import (ContainerConfig, ContainerResources, CriError, LinuxContainerResources,
                                        PodSandboxConfig)
from kvert.kubelet.runtime.cgroupfs import CgroupfsRuntime, unavailable

pytestmark = pytest.mark.skipif(unavailable() is not None,
                                reason=f"needs root and a cgroup filesystem: {unavailable()}")

BURN = ("sh", "-c", "echo started; while :; do :; done")


class IO:
    """A StreamIO for tests: stdin from a list, output collected."""

    def __init__(self, stdin: list[bytes] | None = None, tty: bool = False,
                 resizes: list[tuple[int, int]] | None = None):
        self.tty = tty
        self._stdin = list(stdin or [])
        self._resizes = list(resizes or [])
        self.stdout = b""
        self.stderr = b""

    async def read_stdin(self):
        if not self._stdin:
            await asyncio.sleep(0)
            return None
        return self._stdin.pop(0)

    async def write_stdout(self, data):
        self.stdout += data

    async def write_stderr(self, data):
        self.stderr += data

    async def next_resize(self):
        return self._resizes.pop(0) if self._resizes else None


def linux(quota: int = 0, memory: int = 0, shares: int = 102, adj: int = 500) -> LinuxContainerResources:
    return LinuxContainerResources(cpu_quota=quota, cpu_shares=shares, memory_limit_in_bytes=memory,
                                   oom_score_adj=adj)


@pytest.fixture
def run(tmp_path):
    """Runs ``body(runtime)`` in a fresh runtime, closed (and its cgroups gone) at the end."""
    def runner(body):
        async def main():
            rt = CgroupfsRuntime.open(WallClock(), f"test-{os.getpid()}-{tmp_path.name[-12:]}", tmp_path)
            try:
                await body(rt)
            finally:
                rt.close()
                await rt.wait_closed()
            assert not any(d.exists() for d in rt.tree.dirs(""))
        asyncio.run(main())
    return runner


async def pod(rt: CgroupfsRuntime, uid: str = "u1", resources: LinuxContainerResources | None = None) -> str:
    return await rt.run_pod_sandbox(PodSandboxConfig(uid=uid, namespace="ns", name="p",
                                                     cgroup_parent=f"/kubepods/burstable/pod{uid}",
                                                     resources=resources or linux()))


async def container(rt: CgroupfsRuntime, sandbox: str, command=BURN, name: str = "c", **options) -> str:
    res = options.pop("resources", linux())
    cid = await rt.create_container(sandbox, ContainerConfig(name=name, image="busybox",
                                                             resources=ContainerResources(linux=res),
                                                             command=tuple(command), **options))
    await rt.start_container(cid)
    return cid


async def until(check, timeout: float = 10.0):
    clock = WallClock()
    deadline = clock.now() + timeout
    while not (value := await check()):
        assert clock.now() < deadline, "timed out"
        await clock.sleep(0.05)
    return value


def test_a_process_runs_in_its_cgroups_with_env_and_log(run):
    async def main(runtime):
        sandbox = await pod(runtime)
        cid = await container(runtime, sandbox, ("sh", "-c", "cat /proc/self/cgroup; echo $GREETING; "
                                                 "cat /proc/self/oom_score_adj; pwd; echo oops >&2"),
                              env=(("GREETING", "hello"),), working_dir="/tmp")
        st = await until(lambda: _exited(runtime, cid))
        assert (st.exit_code, st.reason) == (0, "Completed")
        assert st.started_at <= st.finished_at
        lines = [text for _, text in runtime.container_log(sandbox, "c").lines(WallClock().now())]
        assert f"/kubepods/burstable/podu1/{cid}" in "\n".join(lines)
        assert "hello" in lines and "500" in lines and "/tmp" in lines and "oops" in lines
    run(main)


async def _exited(rt, cid):
    st = await rt.container_status(cid)
    return st if st.state == "exited" else None


def test_exit_codes_and_previous_logs(run):
    async def main(runtime):
        sandbox = await pod(runtime)
        first = await container(runtime, sandbox, ("sh", "-c", "echo one; exit 3"))
        st = await until(lambda: _exited(runtime, first))
        assert (st.exit_code, st.reason) == (3, "Error")
        second = await container(runtime, sandbox, ("sh", "-c", "echo two; exec sleep 30"))
        await runtime.remove_container(first)
        now = WallClock().now()
        assert [t for _, t in runtime.container_log(sandbox, "c", previous=True).lines(now)] == ["one"]
        await until(lambda: _has_line(runtime, sandbox, "two"))
        # StopContainer: SIGTERM first, 128 + 15
        await runtime.stop_container(second, 5)
        st = await runtime.container_status(second)
        assert (st.state, st.exit_code, st.reason) == ("exited", 143, "Error")
    run(main)


async def _has_line(rt, sandbox, text):
    return text in [t for _, t in rt.container_log(sandbox, "c").lines(WallClock().now())]


def test_cpu_quota_throttles_and_a_resize_lifts_it(run):
    async def main(runtime):
        sandbox = await pod(runtime, resources=linux(quota=20_000))
        cid = await container(runtime, sandbox, resources=linux(quota=20_000))
        await WallClock().sleep(1.5)
        st = await runtime.container_status(cid)
        assert st.cpu_throttled_periods > 5 and st.cpu_throttled_nanoseconds > 0
        assert st.cpu_periods >= st.cpu_throttled_periods
        # 200m for ~1.5 s: at most 0.3 core-seconds (plus one period of slack)
        assert st.cpu_usage_core_nanoseconds < 0.4e9
        # seed 000's order for an increase: the pod first, then the container
        await runtime.update_pod_sandbox_resources(sandbox, linux(quota=100_000))
        await runtime.update_container_resources(cid, ContainerResources(linux=linux(quota=100_000)))
        assert runtime.tree.read(f"kubepods/burstable/podu1/{cid}", "cpu.cfs_quota_us" if runtime.tree.version == 1
                                 else "cpu.max").split()[0] == "100000"
        before = (await runtime.container_status(cid)).cpu_throttled_periods
        await WallClock().sleep(1.0)
        after = await runtime.container_status(cid)
        assert after.state == "running" and after.cpu_throttled_periods - before <= 2
    run(main)


HOG = (sys.executable, "-c", "import time\nb = bytearray(96 << 20)\nb[::4096] = b'x' * (len(b) // 4096)\n"
       "print('held', flush=True)\ntime.sleep(60)")


def test_memory_limit_oom_kills_for_real(run):
    async def main(runtime):
        sandbox = await pod(runtime)
        cid = await container(runtime, sandbox, HOG, resources=linux(memory=48 << 20))
        st = await until(lambda: _exited(runtime, cid))
        assert (st.exit_code, st.reason, st.oom_events) == (137, "OOMKilled", 1)
    run(main)


def test_a_memory_limit_below_usage_is_refused_and_rolled_back(run):
    async def main(runtime):
        sandbox = await pod(runtime)
        cid = await container(runtime, sandbox, HOG, resources=linux(quota=50_000, memory=256 << 20))
        await until(lambda: _has_line(runtime, sandbox, "held"))
        rel = f"kubepods/burstable/podu1/{cid}"
        quota_file = "cpu.cfs_quota_us" if runtime.tree.version == 1 else "cpu.max"
        before = runtime.tree.read(rel, quota_file)
        if runtime.tree.version == 2:
            pytest.skip("cgroup v2 reclaims or OOM-kills instead of refusing a lower memory.max")
        with pytest.raises(CriError, match="memory.limit_in_bytes"):
            await runtime.update_container_resources(cid, ContainerResources(
                linux=linux(quota=90_000, memory=16 << 20)))
        assert runtime.tree.read(rel, quota_file) == before
        assert runtime.tree.read(rel, "memory.limit_in_bytes") == str(256 << 20)
        st = await runtime.container_status(cid)
        assert st.state == "running" and st.resources.linux.memory_limit_in_bytes == 256 << 20
        assert st.memory_working_set_bytes > 90 << 20
    run(main)


def test_exec_with_pipes_and_a_tty(run):
    async def main(runtime):
        sandbox = await pod(runtime)
        cid = await container(runtime, sandbox, ("sleep", "60"), env=(("WHO", "world"),))
        io = IO(stdin=[b"from stdin\n"])
        code = await runtime.exec(cid, ["sh", "-c", "read line; echo $line $WHO; echo err >&2; "
                                        "grep -c " + cid + " /proc/self/cgroup; exit 4"], io)
        assert code == 4
        assert io.stdout.decode().splitlines()[0] == "from stdin world"
        assert int(io.stdout.decode().splitlines()[1]) >= 2 and io.stderr == b"err\n"
        tty = IO(tty=True, resizes=[(100, 30)])
        assert await runtime.exec(cid, ["sh", "-c", "sleep 0.3; stty size; tty"], tty) == 0
        assert b"30 100" in tty.stdout and b"/dev/pts/" in tty.stdout
        with pytest.raises(FileNotFoundError):
            await runtime.exec(cid, ["no-such-command-kvert"], IO())
    run(main)


def test_attach_with_stdin(run):
    async def main(runtime):
        sandbox = await pod(runtime)
        cid = await container(runtime, sandbox, ("cat",), stdin=True, stdin_once=True)
        io = IO(stdin=[b"ping\n"])
        await asyncio.wait_for(runtime.attach(cid, io), 10)
        assert io.stdout == b"ping\n"
        st = await until(lambda: _exited(runtime, cid))
        assert st.exit_code == 0
    run(main)


def test_port_forward_reaches_the_host_port(run):
    async def main(runtime):
        sandbox = await pod(runtime)

        async def answer(reader, writer):
            writer.write(await reader.readline())
            await writer.drain()
            writer.close()
        server = await asyncio.start_server(answer, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        reader, writer = await runtime.port_forward(sandbox, port)
        writer.write(b"echo\n")
        assert await reader.readline() == b"echo\n"
        writer.close()
        server.close()
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            closed = s.getsockname()[1]
        with pytest.raises(CriError):
            await runtime.port_forward(sandbox, closed)
    run(main)


def test_stress_image_follows_the_usage_profile(run):
    async def main(runtime):
        sandbox = await pod(runtime, resources=linux(quota=20_000))
        usage = json.dumps({"cpu": "1", "memory": "80Mi"})
        cid = await runtime.create_container(sandbox, ContainerConfig(
            name="c", image="kvert/stress:v1", resources=ContainerResources(linux=linux(quota=20_000)),
            annotations={"kvert.io/usage": usage}))
        await runtime.start_container(cid)
        await until(lambda: _has_line(runtime, sandbox, "usage: cpu=1000m memory=80Mi"), 20)
        await WallClock().sleep(1.5)
        st = await runtime.container_status(cid)
        assert st.state == "running" and st.cpu_throttled_periods > 5
        assert 60 << 20 < st.memory_working_set_bytes < 110 << 20
    run(main)


def test_close_kills_everything(tmp_path):
    async def main():
        rt = CgroupfsRuntime.open(WallClock(), f"close-{os.getpid()}", tmp_path)
        sandbox = await pod(rt)
        cid = await container(rt, sandbox, ("sleep", "60"))
        pid = rt._containers[cid].proc.pid
        rt.close()
        with pytest.raises(CriError, match="shut down"):
            await pod(rt, "u2")
        await rt.wait_closed()
        assert not Path(f"/proc/{pid}").exists()
        assert not any(d.exists() for d in rt.tree.dirs(""))
    asyncio.run(main())


def test_node_cgroups_and_node_stats(run):
    async def main(runtime):
        runtime.set_node_cgroups({"kubepods": LinuxContainerResources(cpu_shares=2048, memory_limit_in_bytes=2**33),
                                  "burstable": LinuxContainerResources(cpu_shares=102),
                                  "besteffort": LinuxContainerResources(cpu_shares=2)})
        memory_file = "memory.limit_in_bytes" if runtime.tree.version == 1 else "memory.max"
        assert runtime.tree.read("kubepods", memory_file) == str(2**33)
        assert runtime.tree.read("kubepods/besteffort",
                                 "cpu.shares" if runtime.tree.version == 1 else "cpu.weight") in ("2", "1")
        sandbox = await pod(runtime)
        await container(runtime, sandbox, HOG)
        await until(lambda: _has_line(runtime, sandbox, "held"))
        stats = await runtime.node_stats()
        meminfo = dict(line.split(":", 1) for line in Path("/proc/meminfo").read_text().splitlines())
        assert stats.memory_capacity == int(meminfo["MemTotal"].split()[0]) * 1024
        assert 0 < stats.memory_working_set <= stats.memory_capacity
        assert stats.pods_memory_limit == 2**33
        assert stats.pods_memory_working_set > 90 << 20
        pod_stats = stats.pods["u1"]
        assert pod_stats.containers["c"].memory > 90 << 20 and pod_stats.processes >= 1
        assert pod_stats.disk > 0 and stats.nodefs.capacity > 0 and stats.max_pid > 0
    run(main)


def test_a_cpuset_pins_the_process_and_moves_with_an_update(run):
    # the static CPU manager's cpuset.cpus (Linux cpusets: the process's Cpus_allowed_list)
    async def main(runtime):
        sandbox = await pod(runtime)
        cid = await container(runtime, sandbox, ("sh", "-c", "exec sleep 30"),
                              resources=LinuxContainerResources(cpu_shares=1024, cpuset_cpus="0"))
        st = await until(lambda: _running(runtime, cid))
        assert runtime.tree.read(runtime._container(cid).rel, "cpuset.cpus") == "0"
        pid = runtime._container(cid).proc.pid
        assert "Cpus_allowed_list:\t0\n" in open(f"/proc/{pid}/status").read()
        await runtime.update_container_resources(cid, ContainerResources(linux=LinuxContainerResources(
            cpu_shares=1024, cpuset_cpus=f"0-{os.cpu_count() - 1}")))
        assert f"Cpus_allowed_list:\t0-{os.cpu_count() - 1}\n" in open(f"/proc/{pid}/status").read() \
            or os.cpu_count() == 1
        assert st.resources.linux.cpuset_cpus == "0"
    run(main)


async def _running(rt, cid):
    st = await rt.container_status(cid)
    return st if st.state == "running" else None
