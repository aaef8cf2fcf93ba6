"""A cgroupfs container's volumes at their mountPaths (kvert.kubelet.runtime.mountns): bound in
a mount namespace of its own, read-only where asked, at paths the host does not have without
making them on the host, and seen by processes exec'd in the container (root only)."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from kvert.clock import WallClock
from kvert.kubelet.runtime.base import (ContainerConfig, ContainerResources, LinuxContainerResources, Mount,
                                        PodSandboxConfig)
from kvert.kubelet.runtime.cgroupfs import CgroupfsRuntime, unavailable

pytestmark = pytest.mark.skipif(unavailable() is not None,
                                reason=f"needs root and a cgroup filesystem: {unavailable()}")


class IO:
    tty = False
    stdin = False

    def __init__(self):
        self.stdout = b""

    async def read_stdin(self):
        return None

    async def write_stdout(self, data):
        self.stdout += data

    async def write_stderr(self, data):
        self.stdout += data

    async def next_resize(self):
        return None


def _run(tmp_path, body):
    async def main():
        rt = CgroupfsRuntime.open(WallClock(), f"mnt-{os.getpid()}-{tmp_path.name[-12:]}", tmp_path / "node")
        try:
            sandbox = await rt.run_pod_sandbox(PodSandboxConfig(
                uid="u1", namespace="ns", name="p", cgroup_parent="/kubepods/besteffort/podu1",
                resources=LinuxContainerResources()))
            await body(rt, sandbox)
        finally:
            rt.close()
            await rt.wait_closed()
    asyncio.run(main())


async def _start(rt, sandbox, command, mounts, working_dir=""):
    cid = await rt.create_container(sandbox, ContainerConfig(
        name="c", image="busybox", resources=ContainerResources(linux=LinuxContainerResources()),
        command=tuple(command), mounts=tuple(mounts), working_dir=working_dir))
    await rt.start_container(cid)
    return cid


async def _output(rt, sandbox, cid):
    clock = WallClock()
    deadline = clock.now() + 20
    while (await rt.container_status(cid)).state != "exited":
        assert clock.now() < deadline, "timed out"
        await clock.sleep(0.05)
    return "\n".join(text for _, text in rt.container_log(sandbox, "c").lines(clock.now()))


def _mounts() -> list[str]:
    return Path("/proc/self/mountinfo").read_text().splitlines()


def test_volumes_at_missing_and_existing_paths_read_only_where_asked(tmp_path):
    token = tmp_path / "token"
    token.mkdir()
    (token / "token").write_text("secret-token")
    data = tmp_path / "data"
    data.mkdir()
    existing = tmp_path / "existing"
    existing.mkdir()
    (existing / "host-file").write_text("the host's")
    missing = f"/var/run/secrets/kvert-test-{os.getpid()}/serviceaccount"
    before = _mounts()

    async def body(rt, sandbox):
        cid = await _start(rt, sandbox, ["sh", "-c", f"cat {missing}/token; echo; "
                                         f"(echo x > {missing}/new) 2>/dev/null || echo read-only; "
                                         f"echo written > {existing}/mine; ls {existing}; "
                                         f"ls /run | grep -c . >/dev/null && echo run-still-there"],
                           [Mount(missing, str(token), readonly=True), Mount(str(existing), str(data))])
        out = await _output(rt, sandbox, cid)
        assert out.splitlines() == ["secret-token", "read-only", "mine", "run-still-there"]
        # the host saw none of it: no new directory, its own files where they were, no mounts
        assert not os.path.lexists(os.path.dirname(missing))
        assert sorted(os.listdir(existing)) == ["host-file"]
        assert (data / "mine").read_text() == "written\n"
        assert _mounts() == before
    _run(tmp_path, body)


def test_exec_joins_the_containers_mounts(tmp_path):
    volume = tmp_path / "volume"
    volume.mkdir()
    (volume / "f").write_text("in the volume")
    target = f"/etc/kvert-test-{os.getpid()}"

    async def body(rt, sandbox):
        cid = await _start(rt, sandbox, ["sleep", "30"], [Mount(target, str(volume), readonly=True)],
                           working_dir=target)
        io = IO()
        assert await rt.exec(cid, ["sh", "-c", "pwd; cat f"], io) == 0
        assert io.stdout.decode().splitlines() == [target, "in the volume"]
        assert not os.path.lexists(target)
    _run(tmp_path, body)


def test_a_path_below_the_root_and_a_file_mount(tmp_path):
    # nothing on the host's / to bind over: the container's root is a shadow of it
    volume = tmp_path / "volume"
    volume.mkdir()
    config = tmp_path / "app.conf"
    config.write_text("setting=1")
    top = f"/kvert-test-{os.getpid()}"

    async def body(rt, sandbox):
        cid = await _start(rt, sandbox, ["sh", "-c", f"echo made > {top}/data/x; cat {top}/app.conf; echo; "
                                         f"ls {top}; test -d /proc/self && echo proc"],
                           [Mount(f"{top}/data", str(volume)), Mount(f"{top}/app.conf", str(config), readonly=True)])
        out = await _output(rt, sandbox, cid)
        assert out.splitlines() == ["setting=1", "app.conf", "data", "proc"]
        assert (volume / "x").read_text() == "made\n" and not os.path.lexists(top)
    _run(tmp_path, body)


def test_a_mount_inside_another_volume_is_made_in_that_volume(tmp_path):
    outer, inner = tmp_path / "outer", tmp_path / "inner"
    outer.mkdir()
    inner.mkdir()
    (inner / "g").write_text("inner")
    target = f"/opt/kvert-test-{os.getpid()}"

    async def body(rt, sandbox):
        cid = await _start(rt, sandbox, ["cat", f"{target}/sub/g"],
                           [Mount(f"{target}/sub", str(inner)), Mount(target, str(outer))])
        assert await _output(rt, sandbox, cid) == "inner"
        # as runc makes a mount point inside a volume: in the volume's own directory
        assert (outer / "sub").is_dir()
    _run(tmp_path, body)
