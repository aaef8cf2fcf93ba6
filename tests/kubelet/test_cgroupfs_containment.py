"""Issue 27's attacks on the cgroupfs runtime, each of which now fails: a container runs as
its runAsUser / runAsGroup / supplemental groups (not as root), with no_new_privs, cannot
read kvert's data directory (the store, the admin kubeconfig, other pods' volumes), cannot
raise its own memory limit or move itself out of its cgroup, and leaves no process behind
when its pod stops, daemonized or not (root and a cgroup filesystem needed)."""

from __future__ import annotations

import asyncio
import os
import secrets
from pathlib import Path

import pytest

from kvert.clock import WallClock
from kvert.kubelet.runtime.base import (ContainerConfig, ContainerResources, LinuxContainerResources,
                                        LinuxContainerSecurity, Mount, PodSandboxConfig)
from kvert.kubelet.runtime.cgroupfs import CgroupfsRuntime, kvert_directories, unavailable

pytestmark = pytest.mark.skipif(unavailable() is not None,
                                reason=f"needs root and a cgroup filesystem: {unavailable()}")

MEMORY = 256 * 1024 * 1024


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


@pytest.fixture
def cluster_dir(tmp_path):
    """A data directory laid out as ``kvert up``'s: the store, the PKI and the admin
    kubeconfig at the top, the node's pods below ``nodes/<name>``."""
    top = tmp_path / "kvert"
    (top / "pki").mkdir(parents=True)
    (top / "admin.kubeconfig").write_text("token: cluster-admin-secret\n")
    (top / "store.db").write_text("every secret of the cluster\n")
    (top / "pki" / "ca.key").write_text("the CA's key\n")
    node = top / "nodes" / "n1"
    volume = node / "pods" / "u1" / "volumes" / "data"
    volume.mkdir(parents=True)
    (volume / "mine").write_text("this pod's own file\n")
    other = node / "pods" / "u2" / "volumes" / "secret"
    other.mkdir(parents=True)
    (other / "token").write_text("another pod's token\n")
    return top


def _run(data_dir: Path, body):
    async def main():
        rt = CgroupfsRuntime.open(WallClock(), f"contain-{os.getpid()}-{secrets.token_hex(3)}", data_dir)
        try:
            sandbox = await rt.run_pod_sandbox(PodSandboxConfig(
                uid="u1", namespace="ns", name="p", cgroup_parent="/kubepods/burstable/podu1",
                resources=LinuxContainerResources(memory_limit_in_bytes=MEMORY)))
            await body(rt, sandbox)
        finally:
            rt.close()
            await rt.wait_closed()
    asyncio.run(main())


async def _start(rt, sandbox, script: str, security=LinuxContainerSecurity(), mounts=(), name="c"):
    cid = await rt.create_container(sandbox, ContainerConfig(
        name=name, image="busybox", command=("sh", "-c", script), mounts=tuple(mounts), security=security,
        resources=ContainerResources(linux=LinuxContainerResources(memory_limit_in_bytes=MEMORY))))
    await rt.start_container(cid)
    return cid


async def _output(rt, sandbox, cid, name="c") -> list[str]:
    clock = WallClock()
    deadline = clock.now() + 20
    while (await rt.container_status(cid)).state != "exited":
        assert clock.now() < deadline, "timed out"
        await clock.sleep(0.05)
    return [text for _, text in rt.container_log(sandbox, name).lines(clock.now())]


def _processes_with(marker: str) -> list[int]:
    """The pids whose command line names ``marker`` (anywhere on the host)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if marker.encode() in (entry / "cmdline").read_bytes():
                    found.append(int(entry.name))
            except OSError:
                pass
    return found


def test_the_container_runs_as_its_user_and_groups_not_as_root(tmp_path):
    # the example of "Configure a Security Context for a Pod or Container"
    # (kubernetes.io/docs/tasks/configure-pod-container/security-context): runAsUser 1000,
    # runAsGroup 3000, fsGroup 2000, supplementalGroups [4000] -> `id` shows uid=1000 gid=3000
    # groups=2000,3000,4000; a process exec'd in the container runs as the same user
    security = LinuxContainerSecurity(run_as_user=1000, run_as_group=3000, supplemental_groups=(2000, 4000))

    async def body(rt, sandbox):
        cid = await _start(rt, sandbox, "id -u; id -g; id -G; exec sleep 30", security)
        clock = WallClock()
        deadline = clock.now() + 20
        while len(lines := [t for _, t in rt.container_log(sandbox, "c").lines(clock.now())]) < 3:
            assert clock.now() < deadline, "timed out"
            await clock.sleep(0.05)
        assert lines[0] == "1000" and lines[1] == "3000"
        assert sorted(lines[2].split()) == ["2000", "3000", "4000"]
        io = IO()
        assert await rt.exec(cid, ["sh", "-c", "id -u; id -G"], io) == 0
        assert io.stdout.decode().split("\n")[0] == "1000"
        # the saved set-user-ID is not root's either: nothing can switch back
        status = (Path("/proc") / str(rt._containers[cid].proc.pid) / "status").read_text()
        assert next(line for line in status.splitlines() if line.startswith("Uid:")).split()[1:] == ["1000"] * 4
    _run(tmp_path / "node", body)


def test_a_user_without_group_takes_its_passwd_group_or_0(tmp_path):
    # containerd's WithUserID: the user's group from /etc/passwd, 0 without an entry
    async def body(rt, sandbox):
        cid = await _start(rt, sandbox, "id -u; id -g; id -G", LinuxContainerSecurity(run_as_user=4242424))
        assert await _output(rt, sandbox, cid) == ["4242424", "0", "0"]
    _run(tmp_path / "node", body)


def test_no_new_privs_is_set_for_the_container_and_its_execs(tmp_path):
    # the kernel's no_new_privs.txt: the flag shows as NoNewPrivs in /proc/<pid>/status
    async def body(rt, sandbox):
        cid = await _start(rt, sandbox, "grep NoNewPrivs /proc/self/status; exec sleep 30",
                           LinuxContainerSecurity(run_as_user=1000, no_new_privs=True))
        io = IO()
        assert await rt.exec(cid, ["grep", "NoNewPrivs", "/proc/self/status"], io) == 0
        assert io.stdout.decode().split() == ["NoNewPrivs:", "1"]
        other = await _start(rt, sandbox, "grep NoNewPrivs /proc/self/status", name="escalating")
        assert (await _output(rt, sandbox, other, "escalating"))[0].split() == ["NoNewPrivs:", "0"]
    _run(tmp_path / "node", body)


@pytest.mark.parametrize("user", [None, 1000], ids=["root", "user-1000"])
def test_the_data_directory_and_other_pods_files_are_not_visible(cluster_dir, user):
    node = cluster_dir / "nodes" / "n1"
    own = node / "pods" / "u1" / "volumes" / "data"
    script = (f"cat {cluster_dir}/admin.kubeconfig; cat {cluster_dir}/store.db; cat {cluster_dir}/pki/ca.key; "
              f"cat {node}/pods/u2/volumes/secret/token; echo listing; ls -A {cluster_dir}; echo listed; "
              f"echo planted > {cluster_dir}/planted; cat /data/mine")

    async def body(rt, sandbox):
        assert kvert_directories(node) == [cluster_dir, node]
        cid = await _start(rt, sandbox, script, LinuxContainerSecurity(run_as_user=user),
                           mounts=[Mount("/data", str(own))])
        lines = await _output(rt, sandbox, cid)
        text = "\n".join(lines)
        assert "cluster-admin-secret" not in text and "every secret" not in text
        assert "the CA's key" not in text and "another pod's token" not in text
        # root finds an empty directory; a user is stopped on the way (pytest's 0700 tmp)
        assert text.count("No such file or directory") + text.count("Permission denied") >= 4
        listing = lines[lines.index("listing") + 1:lines.index("listed")]
        assert listing in ([], [f"ls: cannot open directory '{cluster_dir}': Permission denied"],
                           [f"ls: cannot access '{cluster_dir}': Permission denied"])
        assert "this pod's own file" in text          # its own volume is still there
        assert not (cluster_dir / "planted").exists()
    _run(node, body)


@pytest.mark.parametrize("user", [None, 1000], ids=["root", "user-1000"])
def test_a_container_cannot_raise_its_memory_limit_or_leave_its_cgroup(tmp_path, user):
    # the attack of issue 27: write its own cgroup's memory limit (v2 memory.max, v1
    # memory.limit_in_bytes), or move itself to the root cgroup
    script = r"""
        path=$(grep -E ':memory:|^0::' /proc/self/cgroup | head -1 | cut -d: -f3)
        if [ -d /sys/fs/cgroup/memory ]; then
            dir=/sys/fs/cgroup/memory$path; file=memory.limit_in_bytes; root=/sys/fs/cgroup/memory
        else
            dir=/sys/fs/cgroup$path; file=memory.max; root=/sys/fs/cgroup
        fi
        test -f $dir/$file && echo found-own-cgroup
        echo 4294967296 > $dir/$file && echo raised
        echo $$ > $root/cgroup.procs && echo escaped
        grep -E ':memory:|^0::' /proc/self/cgroup
    """

    async def body(rt, sandbox):
        cid = await _start(rt, sandbox, script, LinuxContainerSecurity(run_as_user=user))
        text = "\n".join(await _output(rt, sandbox, cid))
        assert "found-own-cgroup" in text
        assert "raised" not in text and "escaped" not in text
        # read-only for root; a user would be refused on a writable one too (root's files)
        assert text.count("Read-only file system") + text.count("Permission denied") >= 2
        name = "memory.max" if rt.tree.version == 2 else "memory.limit_in_bytes"
        assert int(rt.tree.read(rt._containers[cid].rel, name)) == MEMORY
    _run(tmp_path / "node", body)


def test_a_daemonized_process_does_not_outlive_its_pod(tmp_path):
    # "left a process behind that outlived the pod": a double fork into a session of its
    # own (setsid, nohup), one that tries to leave its cgroup first, and one that keeps
    # forking: none of them is left once the pod's sandbox is stopped and removed
    marker = str(900000 + secrets.randbelow(99999))
    script = f"""
        (setsid nohup sleep {marker} >/dev/null 2>&1 &) &
        setsid sh -c 'for f in /sys/fs/cgroup/*/cgroup.procs /sys/fs/cgroup/cgroup.procs; do
                          echo $$ > $f; done 2>/dev/null; exec sleep {marker}1' &
        setsid sh -c 'while :; do sleep {marker}2 & sleep 0.01; done' &
        echo spawned; exec sleep {marker}3
    """

    async def body(rt, sandbox):
        await _start(rt, sandbox, script, LinuxContainerSecurity())
        clock = WallClock()
        deadline = clock.now() + 20
        while len(_processes_with(f"sleep\0{marker}")) < 5:
            assert clock.now() < deadline, f"the processes did not start: {_processes_with(marker)}"
            await clock.sleep(0.05)
        await rt.stop_pod_sandbox(sandbox)
        await rt.remove_pod_sandbox(sandbox)
        assert _processes_with(f"sleep\0{marker}") == []
    _run(tmp_path / "node", body)


def test_a_user_runs_this_installations_kvert_image(tmp_path):
    # the image's files are readable by its user, even where the interpreter lives in
    # root's 0700 home; the rest of that home is not there
    import kvert

    async def body(rt, sandbox):
        cid = await rt.create_container(sandbox, ContainerConfig(
            name="c", image=f"{kvert.IMAGE_REPOSITORY}:latest", args=("version",),
            security=LinuxContainerSecurity(run_as_user=65534),
            resources=ContainerResources(linux=LinuxContainerResources(memory_limit_in_bytes=MEMORY))))
        await rt.start_container(cid)
        lines = await _output(rt, sandbox, cid)
        assert (await rt.container_status(cid)).exit_code == 0, lines
    _run(tmp_path / "node", body)
