"""The kernel's PSI through kvert.kubelet.psi.read_pressure: a CPU-bound process under a tight
CFS quota (cgroup v2 ``cpu.max``; on a hybrid machine, v1 ``cpu.cfs_quota_us`` with the
process also in a cgroup of the unified hierarchy, where the kernel accounts PSI) shows cpu
pressure rising in its cgroup's ``cpu.pressure``, ``some`` and ``full`` (a throttled cgroup
has no task on a cpu: kernel/sched/psi.c test_state, PSI_CPU_FULL)."""

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from kvert.kubelet.psi import read_pressure

ROOT = Path("/sys/fs/cgroup")


def _places() -> tuple[Path, Path | None] | None:
    """(the v2 directory to make the cgroup in, the v1 cpu directory or None for pure v2)."""
    if os.geteuid() != 0:
        return None
    if (ROOT / "cgroup.controllers").is_file():
        if "cpu" in (ROOT / "cgroup.controllers").read_text().split():
            return ROOT, None
        return None
    unified, cpu = ROOT / "unified", ROOT / "cpu"
    if (unified / "cgroup.procs").is_file() and (cpu / "cpu.cfs_quota_us").is_file():
        return unified, cpu
    return None


PLACES = _places()
pytestmark = pytest.mark.skipif(PLACES is None, reason="needs root and a cgroup v2 hierarchy (pure, or the unified "
                                                       "one of a hybrid machine with the v1 cpu controller)")


def test_throttled_busy_loop_raises_cpu_pressure():
    assert PLACES is not None
    v2_root, v1_cpu = PLACES
    name = f"kvert-psi-test-{os.getpid()}"
    v2 = v2_root / name
    v1 = v1_cpu / name if v1_cpu is not None else None
    v2.mkdir()
    if v1 is not None:
        v1.mkdir()
    proc = None
    try:
        if v1 is None:
            (v2_root / "cgroup.subtree_control").write_text("+cpu")
            (v2 / "cpu.max").write_text("5000 100000")           # 5% of a cpu
        else:
            (v1 / "cpu.cfs_period_us").write_text("100000")
            (v1 / "cpu.cfs_quota_us").write_text("5000")
        before = read_pressure(v2)
        assert before is not None and before.cpu is not None
        proc = subprocess.Popen([sys.executable, "-c", "while True: pass"])
        (v2 / "cgroup.procs").write_text(str(proc.pid))
        if v1 is not None:
            (v1 / "cgroup.procs").write_text(str(proc.pid))
        time.sleep(4.5)                                           # two PSI periods at least
        after = read_pressure(v2)
        assert after is not None and after.cpu is not None
        stalled_us = after.cpu.some.total - before.cpu.some.total
        assert stalled_us > 1_000_000                                # much of 4.5 s throttled
        assert after.cpu.some.avg10 > 5.0
        assert after.cpu.full.total > 1_000_000                      # one thread, throttled: full too
    finally:
        if proc is not None:
            proc.kill()
            proc.wait()
        for d in (v2, v1):
            if d is not None:
                for _ in range(50):
                    try:
                        d.rmdir()
                        break
                    except OSError:
                        time.sleep(0.1)
