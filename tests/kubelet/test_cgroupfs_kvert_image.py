"""The image kvert's own components run from (``kvert.IMAGE_REPOSITORY``, any tag) runs this
installation's kvert under the cgroupfs runtime, its arguments the container's ``args``, as the
image's entrypoint would (root and cgroups only)."""

from __future__ import annotations

import asyncio
import os

import pytest

import kvert
from kvert.clock import WallClock
from kvert.kubelet.runtime.base import ContainerConfig, ContainerResources, LinuxContainerResources, PodSandboxConfig
from kvert.kubelet.runtime.cgroupfs import CgroupfsRuntime, unavailable

pytestmark = pytest.mark.skipif(unavailable() is not None,
                                reason=f"needs root and a cgroup filesystem: {unavailable()}")


@pytest.mark.parametrize(("image", "command"), [
    (f"{kvert.IMAGE_REPOSITORY}:0.1.0", ()),
    (f"{kvert.IMAGE_REPOSITORY}@sha256:{'0' * 64}", ()),
    (f"{kvert.IMAGE_REPOSITORY}:latest", ("kvert",)),       # the entrypoint named as the command
])
def test_the_kvert_image_runs_this_kvert(tmp_path, image, command):
    async def main():
        clock = WallClock()
        rt = CgroupfsRuntime.open(clock, f"img-{os.getpid()}-{tmp_path.name[-12:]}", tmp_path)
        try:
            sandbox = await rt.run_pod_sandbox(PodSandboxConfig(
                uid="u1", namespace="ns", name="p", cgroup_parent="/kubepods/besteffort/podu1",
                resources=LinuxContainerResources()))
            cid = await rt.create_container(sandbox, ContainerConfig(
                name="c", image=image, resources=ContainerResources(linux=LinuxContainerResources()),
                command=command, args=("version",)))
            await rt.start_container(cid)
            deadline = clock.now() + 30
            while (st := await rt.container_status(cid)).state != "exited":
                assert clock.now() < deadline, "timed out"
                await clock.sleep(0.05)
            lines = [text for _, text in rt.container_log(sandbox, "c").lines(clock.now())]
            assert (st.exit_code, lines[0].split()[:2]) == (0, ["kvert", kvert.__version__]), lines
        finally:
            rt.close()
            await rt.wait_closed()
    asyncio.run(main())
