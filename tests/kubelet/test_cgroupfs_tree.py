"""The cgroup filesystem layer of the cgroupfs runtime, on fake v1 and v2 trees (tmp_path).

File names and formats are the kernel's (Documentation/admin-guide/cgroup-v1/*.rst,
cgroup-v2.rst); the values are kvert.kubelet.cgroups', checked in test_cgroups.py.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from kvert.kubelet.cgroups import cgroup_files
from kvert.kubelet.runtime import cgroupfs_tree
from kvert.kubelet.runtime.base import LinuxContainerResources
from kvert.kubelet.runtime.cgroupfs_tree import CgroupError, NodeCgroups, detect, own_cgroups

V1_FILES = {
    "cpu": {"cpu.shares": "1024", "cpu.cfs_period_us": "100000", "cpu.cfs_quota_us": "-1",
            "cpu.stat": "nr_periods 0\nnr_throttled 0\nthrottled_time 0\n"},
    "cpuacct": {"cpuacct.usage": "0"},
    "cpuset": {"cpuset.cpus": "0-3", "cpuset.mems": "0"},
    "memory": {"memory.limit_in_bytes": "9223372036854771712", "memory.usage_in_bytes": "0",
               "memory.stat": "", "memory.oom_control": "oom_kill_disable 0\nunder_oom 0\noom_kill 0\n"},
    "pids": {"pids.current": "0", "pids.max": "max"},
}
V2_FILES = {"cgroup.controllers": "cpuset cpu io memory hugetlb pids rdma misc",
            "cgroup.subtree_control": "", "cpu.weight": "100", "cpu.max": "max 100000",
            "memory.max": "max", "memory.current": "0", "memory.stat": "", "memory.events": "",
            "memory.oom.group": "0", "cpu.stat": "usage_usec 0\n", "pids.max": "max"}


def populate(path: Path, files: dict[str, str]) -> None:
    """What the kernel puts in a new cgroup directory."""
    os.makedirs(path, exist_ok=True)
    (path / "cgroup.procs").write_text("")
    for name, content in files.items():
        (path / name).write_text(content)


@pytest.fixture
def kernel(monkeypatch):
    """mkdir under a fake tree gets the files the kernel gives a new cgroup: v1 the
    controller's (a new cpuset's cpus and mems empty), v2 those of the controllers enabled in
    the parent's cgroup.subtree_control."""
    real_mkdir = Path.mkdir

    def mkdir(self, *args, **kwargs):
        real_mkdir(self, *args, **kwargs)
        parent = self.parent
        if (parent / "cgroup.subtree_control").is_file():
            enabled = [c.lstrip("+") for c in (parent / "cgroup.subtree_control").read_text().split()]
            files = {k: v for k, v in V2_FILES.items() if k.split(".")[0] in enabled + ["cgroup"]}
            populate(self, {**files, "cgroup.controllers": " ".join(enabled)})
        elif (parent / "cgroup.procs").is_file():
            controller = next(c for c in V1_FILES if c in self.parts)
            files = dict(V1_FILES[controller])
            if controller == "cpuset":
                files = {"cpuset.cpus": "", "cpuset.mems": ""}
            populate(self, files)
    monkeypatch.setattr(Path, "mkdir", mkdir)
    return mkdir


def v1_root(tmp_path: Path) -> Path:
    root = tmp_path / "cgroup"
    for controller, files in V1_FILES.items():
        populate(root / controller, files)
    return root


def v2_root(tmp_path: Path) -> Path:
    root = tmp_path / "cgroup"
    populate(root, V2_FILES)
    return root


def test_detect_versions(tmp_path):
    assert detect(v2_root(tmp_path / "a")) == (2, {"": tmp_path / "a" / "cgroup"})
    version, mounts = detect(v1_root(tmp_path / "b"))
    assert version == 1 and sorted(mounts) == ["cpu", "cpuacct", "cpuset", "memory", "pids"]
    assert detect(tmp_path / "nothing") is None


def test_own_cgroups_reads_every_controller(tmp_path):
    proc = tmp_path / "cgroup"
    proc.write_text("9:name=systemd:/\n4:memory:/process_api/abc\n2:cpu,cpuacct:/x\n0::/user.slice\n")
    assert own_cgroups(proc) == {"name=systemd": "/", "memory": "/process_api/abc", "cpu": "/x",
                                 "cpuacct": "/x", "": "/user.slice"}


def test_v1_node_hierarchy_per_controller(tmp_path, kernel):
    root = v1_root(tmp_path)
    tree = NodeCgroups.open("n1", root)
    assert tree.version == 1
    assert tree.bases["memory"] == root / "memory" / "kvert-n1"
    tree.create("kubepods/burstable/podu1/c1")
    for controller in V1_FILES:
        assert (root / controller / "kvert-n1/kubepods/burstable/podu1/c1").is_dir()
    # a new v1 cpuset is empty, and a process cannot join it: the parent's values are copied
    assert (root / "cpuset/kvert-n1/kubepods/burstable/podu1/c1/cpuset.cpus").read_text() == "0-3"
    assert (root / "cpuset/kvert-n1/kubepods/burstable/podu1/c1/cpuset.mems").read_text() == "0"
    assert tree.procs_files("kubepods/burstable/podu1/c1") == [
        root / c / "kvert-n1/kubepods/burstable/podu1/c1/cgroup.procs" for c in V1_FILES]


def test_v1_files_go_to_their_controller(tmp_path, kernel):
    root = v1_root(tmp_path)
    tree = NodeCgroups.open("n1", root)
    tree.create("pod")
    res = LinuxContainerResources(cpu_quota=50_000, cpu_shares=512, memory_limit_in_bytes=256 * 2**20)
    tree.write("pod", cgroup_files(res, 1))
    assert (root / "cpu/kvert-n1/pod/cpu.shares").read_text() == "512"
    assert (root / "cpu/kvert-n1/pod/cpu.cfs_quota_us").read_text() == "50000"
    assert (root / "memory/kvert-n1/pod/memory.limit_in_bytes").read_text() == str(256 * 2**20)


def test_nests_under_own_cgroup_when_the_root_is_not_writable(tmp_path, kernel, monkeypatch):
    root = v1_root(tmp_path)
    populate(root / "memory/process_api/abc", V1_FILES["memory"])
    proc = tmp_path / "self-cgroup"
    proc.write_text("4:memory:/process_api/abc\n1:cpu:/\n")
    real_mkdir = kernel

    def mkdir(self, *args, **kwargs):
        if self == root / "memory" / "kvert-n1":
            raise PermissionError(errno.EACCES, "Permission denied")
        return real_mkdir(self, *args, **kwargs)
    monkeypatch.setattr(Path, "mkdir", mkdir)
    tree = NodeCgroups.open("n1", root, proc)
    assert tree.bases["memory"] == root / "memory/process_api/abc/kvert-n1"
    assert tree.bases["cpu"] == root / "cpu/kvert-n1"


def test_v2_enables_controllers_down_the_tree(tmp_path, kernel):
    root = v2_root(tmp_path)
    tree = NodeCgroups.open("n1", root)
    assert tree.version == 2 and tree.bases == {"": root / "kvert-n1"}
    # cgroup-v2.rst: a cgroup's children get only the controllers in its subtree_control
    assert (root / "cgroup.subtree_control").read_text() == "+cpu +cpuset +memory +pids"
    tree.create("kubepods")
    assert (root / "kvert-n1/cgroup.subtree_control").read_text() == "+cpu +cpuset +memory +pids"
    assert (root / "kvert-n1/kubepods/cpu.max").is_file()
    assert tree.procs_files("kubepods") == [root / "kvert-n1/kubepods/cgroup.procs"]


def test_v2_container_values(tmp_path, kernel):
    root = v2_root(tmp_path)
    tree = NodeCgroups.open("n1", root)
    tree.create("kubepods/burstable/podu/c")
    res = LinuxContainerResources(cpu_quota=20_000, cpu_shares=102, memory_limit_in_bytes=2**27)
    tree.write("kubepods/burstable/podu/c", cgroup_files(res, 2))
    d = root / "kvert-n1/kubepods/burstable/podu/c"
    assert (d / "cpu.max").read_text() == "20000 100000"
    assert (d / "memory.max").read_text() == str(2**27)
    # the OCI runtime's conversion of 102 shares (TestConvertCPUSharesToCgroupV2Value values
    # are checked in test_cgroups.py)
    assert (d / "cpu.weight").read_text() == str(cgroup_files(res, 2)["cpu.weight"])


def test_a_refused_write_restores_what_was_written(tmp_path, kernel, monkeypatch):
    root = v1_root(tmp_path)
    tree = NodeCgroups.open("n1", root)
    tree.create("c")
    (root / "memory/kvert-n1/c/memory.limit_in_bytes").write_text(str(2**28))
    real_write = cgroupfs_tree.write_value

    def write(path, value):
        if path.name == "memory.limit_in_bytes" and value == str(2**20):
            raise OSError(errno.EBUSY, "Device or resource busy")     # below the pages in use
        real_write(path, value)
    monkeypatch.setattr(cgroupfs_tree, "write_value", write)
    res = LinuxContainerResources(cpu_quota=90_000, cpu_shares=900, memory_limit_in_bytes=2**20)
    with pytest.raises(CgroupError) as err:
        tree.write("c", cgroup_files(res, 1))
    assert "memory.limit_in_bytes" in str(err.value) and err.value.errno == errno.EBUSY
    assert (root / "cpu/kvert-n1/c/cpu.cfs_quota_us").read_text() == "-1"
    assert (root / "cpu/kvert-n1/c/cpu.shares").read_text() == "1024"
    assert (root / "memory/kvert-n1/c/memory.limit_in_bytes").read_text() == str(2**28)


def test_v1_stats_as_cadvisor_reads_them(tmp_path, kernel):
    root = v1_root(tmp_path)
    tree = NodeCgroups.open("n1", root)
    populate(root / "cpu/kvert-n1/c", {"cpu.stat": "nr_periods 40\nnr_throttled 31\nthrottled_time 2500000000\n"})
    populate(root / "cpuacct/kvert-n1/c", {"cpuacct.usage": "1234567890"})
    populate(root / "memory/kvert-n1/c", {
        "memory.usage_in_bytes": "104857600",
        "memory.stat": "cache 20971520\nrss 83886080\ntotal_inactive_file 10485760\n",
        "memory.oom_control": "oom_kill_disable 0\nunder_oom 0\noom_kill 2\n"})
    populate(root / "pids/kvert-n1/c", {"pids.current": "3"})
    stats = tree.stats("c")
    assert stats.cpu_ns == 1234567890 and stats.periods == 40 and stats.throttled_periods == 31
    assert stats.throttled_ns == 2_500_000_000
    # cAdvisor: working set = usage - total_inactive_file
    assert stats.working_set == 104857600 - 10485760
    assert stats.oom_kills == 2 and stats.processes == 3


def test_v2_stats_as_cadvisor_reads_them(tmp_path, kernel):
    root = v2_root(tmp_path)
    tree = NodeCgroups.open("n1", root)
    populate(root / "kvert-n1/c", {
        "cpu.stat": "usage_usec 5000\nuser_usec 4000\nsystem_usec 1000\nnr_periods 12\nnr_throttled 5\n"
                    "throttled_usec 700\n",
        "memory.current": "50000000", "memory.stat": "anon 40000000\nfile 10000000\ninactive_file 4000000\n",
        "memory.events": "low 0\nhigh 0\nmax 9\noom 1\noom_kill 1\noom_group_kill 0\n",
        "pids.current": "2"})
    stats = tree.stats("c")
    assert (stats.cpu_ns, stats.periods, stats.throttled_periods, stats.throttled_ns) == (5_000_000, 12, 5, 700_000)
    assert stats.working_set == 50000000 - 4000000
    assert stats.oom_kills == 1 and stats.processes == 2


def test_remove_takes_children_first(tmp_path):
    root = v2_root(tmp_path)
    tree = NodeCgroups.open("n1", root)
    (root / "kvert-n1/kubepods/pod/c").mkdir(parents=True)
    assert tree.remove("kubepods/pod") is True
    assert not (root / "kvert-n1/kubepods/pod").exists()
    assert (root / "kvert-n1/kubepods").is_dir()


def test_no_cgroup_filesystem(tmp_path):
    with pytest.raises(CgroupError, match="no cgroup filesystem"):
        NodeCgroups.open("n1", tmp_path)
