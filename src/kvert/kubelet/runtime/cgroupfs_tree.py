"""One node's cgroups on the machine's cgroup filesystem, v1 or v2.

A node owns ``kvert-<node>`` under each controller's root (v1: ``cpu``, ``cpuacct``,
``cpuset``, ``memory``, ``pids`` and ``freezer``, each its own hierarchy or co-mounted; v2: the unified
``/sys/fs/cgroup``, recognized by its ``cgroup.controllers``). Where a root is not
writable (a container, a delegated subtree) the node nests under this process's own
cgroup, read from ``/proc/self/cgroup``. Paths below the node's base are relative,
``kubepods/burstable/pod<uid>/<container-id>``.

Writes are all-or-nothing: ``write`` reads each file's value first and, when a write is
refused (cgroup v1 answers a memory limit below the pages in use with EBUSY; a v1 child's
CFS quota above its parent's is EINVAL), restores what it already changed and raises
``CgroupError``. A file that does not exist (a controller this machine lacks) is skipped.

Killing a cgroup kills everything below it, at once where the kernel can: v2's
``cgroup.kill`` (Linux 5.14) kills every process of the subtree so that none forks away
meanwhile; without it the subtree is frozen (v2 ``cgroup.freeze``, the v1 freezer) while
each process is signalled, then thawed, as runc's ``signalAllProcesses`` does.
"""

from __future__ import annotations

import errno
import os
import signal
from dataclasses import dataclass
from pathlib import Path

from kvert.clock.base import wait_for_kernel

ROOT = Path("/sys/fs/cgroup")
V1_CONTROLLERS = ("cpu", "cpuacct", "cpuset", "memory", "pids", "freezer")
V2_CONTROLLERS = ("cpu", "cpuset", "memory", "pids")
UNIFIED = ""                     # the one controller key of a v2 tree
FREEZE_TIMEOUT = 1.0             # seconds a freeze may take before the kill goes on unfrozen


class CgroupError(OSError):
    """A cgroup could not be made, written or removed (the message names the file)."""


@dataclass
class CgroupStats:
    cpu_ns: int = 0              # cumulative cpu time, nanoseconds
    periods: int = 0             # CFS periods with runnable tasks
    throttled_periods: int = 0
    throttled_ns: int = 0
    memory_usage: int = 0
    working_set: int = 0         # usage - inactive file pages, as cAdvisor computes it
    oom_kills: int = 0
    processes: int = 0


def detect(root: Path = ROOT) -> tuple[int, dict[str, Path]] | None:
    """(version, controller -> mount directory), or None without a usable cgroup filesystem."""
    if (root / "cgroup.controllers").is_file():
        return 2, {UNIFIED: root}
    mounts = {c: root / c for c in V1_CONTROLLERS if (root / c / "cgroup.procs").is_file()}
    if "cpu" in mounts and "memory" in mounts:
        return 1, mounts
    return None


def own_cgroups(proc_self_cgroup: Path = Path("/proc/self/cgroup")) -> dict[str, str]:
    """This process's cgroup per controller (``""`` for the v2 unified hierarchy)."""
    out: dict[str, str] = {}
    for line in proc_self_cgroup.read_text().splitlines():
        _, controllers, path = line.split(":", 2)
        for c in controllers.split(",") if controllers else [UNIFIED]:
            out[c] = path
    return out


def _read(path: Path) -> str:
    return path.read_text().strip()


def write_value(path: str | Path, value: str) -> None:
    """Write a cgroup (or /proc) file in one write(2): the kernel parses each write whole."""
    fd = os.open(path, os.O_WRONLY | os.O_TRUNC)
    try:
        os.write(fd, value.encode())
    finally:
        os.close(fd)


def _keyed(text: str) -> dict[str, int]:
    """``key value`` lines (cpu.stat, memory.stat, memory.events, memory.oom_control)."""
    out = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[1].lstrip("-").isdigit():
            out[parts[0]] = int(parts[1])
    return out


class NodeCgroups:
    """The cgroups of one node: ``bases`` maps each controller to the node's directory."""

    def __init__(self, version: int, bases: dict[str, Path]):
        self.version = version
        self.bases = bases

    @classmethod
    def open(cls, node: str, root: Path = ROOT,
             proc_self_cgroup: Path = Path("/proc/self/cgroup")) -> NodeCgroups:
        """Make (or reuse) ``kvert-<node>`` under every controller; raises CgroupError
        without a cgroup filesystem or where neither place is writable."""
        found = detect(root)
        if found is None:
            raise CgroupError(errno.ENOENT, f"no cgroup filesystem at {root}")
        version, mounts = found
        tree = cls(version, {})
        own: dict[str, str] | None = None
        for controller, mount in mounts.items():
            try:
                tree.bases[controller] = tree._make_base(mount, node, controller)
            except OSError:
                if own is None:
                    own = own_cgroups(proc_self_cgroup)
                parent = mount / own.get(controller, "/").lstrip("/")
                try:
                    tree.bases[controller] = tree._make_base(parent, node, controller)
                except OSError as e:
                    raise CgroupError(e.errno, f"cannot make kvert-{node} under {parent}: {e.strerror}") from None
        return tree

    def _make_base(self, parent: Path, node: str, controller: str) -> Path:
        base = parent / f"kvert-{node}"
        if self.version == 2:
            self._enable_controllers(parent)
        base.mkdir(exist_ok=True)
        if controller == "cpuset":
            self._inherit_cpuset(base)
        return base

    # -- paths -----------------------------------------------------------------------------------

    def dirs(self, rel: str) -> list[Path]:
        """The directories of ``rel`` (one per distinct hierarchy)."""
        seen: dict[Path, Path] = {}
        for base in self.bases.values():
            path = base / rel if rel else base
            seen.setdefault(path.resolve() if path.exists() else path, path)
        return list(seen.values())

    def file(self, rel: str, name: str) -> Path:
        controller = UNIFIED if self.version == 2 else name.split(".", 1)[0]
        base = self.bases.get(controller)
        if base is None:
            return Path("/nonexistent") / name
        return base / rel / name if rel else base / name

    def procs_files(self, rel: str) -> list[Path]:
        """Where a process writes its pid to join ``rel`` in every hierarchy."""
        return [d / "cgroup.procs" for d in self.dirs(rel)]

    # -- making and removing -----------------------------------------------------------------------

    def create(self, rel: str) -> None:
        """Make ``rel`` and its parents in every hierarchy (controllers enabled on the way, v2;
        cpuset values copied from the parent, v1, where a new cpuset would be empty)."""
        for base in self.bases.values():
            path = base
            for part in Path(rel).parts:
                parent, path = path, path / part
                if path.is_dir():
                    continue
                if self.version == 2:
                    self._enable_controllers(parent)
                try:
                    path.mkdir()
                except FileExistsError:
                    pass
                except OSError as e:
                    raise CgroupError(e.errno, f"cannot make cgroup {path}: {e.strerror}") from None
                if self.version == 1 and base == self.bases.get("cpuset"):
                    self._inherit_cpuset(path)

    def _enable_controllers(self, parent: Path) -> None:
        """v2: let ``parent``'s children use every controller ``parent`` has."""
        try:
            available = _read(parent / "cgroup.controllers").split()
            enabled = _read(parent / "cgroup.subtree_control").split()
        except OSError:
            return
        wanted = [c for c in V2_CONTROLLERS if c in available and c not in enabled]
        if wanted:
            try:
                write_value(parent / "cgroup.subtree_control", " ".join(f"+{c}" for c in wanted))
            except OSError as e:
                raise CgroupError(e.errno, f"cannot enable {' '.join(wanted)} in "
                                           f"{parent / 'cgroup.subtree_control'}: {e.strerror}") from None

    @staticmethod
    def _inherit_cpuset(path: Path | None) -> None:
        if path is None:
            return
        for name in ("cpuset.cpus", "cpuset.mems"):
            try:
                if not _read(path / name):
                    write_value(path / name, _read(path.parent / name))
            except OSError as e:
                raise CgroupError(e.errno, f"cannot set {path / name}: {e.strerror}") from None

    def pids(self, rel: str) -> list[int]:
        out: set[int] = set()
        for procs in self.procs_files(rel):
            try:
                out.update(int(x) for x in procs.read_text().split())
            except OSError:
                pass
        return sorted(out)

    def _subtree_pids(self, rel: str) -> set[int]:
        pids: set[int] = set()
        for d in self.dirs(rel):
            for procs in d.rglob("cgroup.procs") if d.is_dir() else []:
                try:
                    pids.update(int(x) for x in procs.read_text().split())
                except OSError:
                    pass
        return pids

    def kill(self, rel: str, sig: int = signal.SIGKILL) -> list[int]:
        """Signal every process in ``rel`` and below; the pids signalled (SIGKILL: with
        ``cgroup.kill`` or frozen, see the module docstring)."""
        pids = self._subtree_pids(rel)
        if not pids:
            return []
        if sig == signal.SIGKILL and self._cgroup_kill(rel):
            return sorted(pids)
        frozen = sig == signal.SIGKILL and self._freeze(rel, True)
        try:
            if frozen:
                pids = self._subtree_pids(rel)     # none can fork now
            for pid in pids:
                try:
                    os.kill(pid, sig)
                except ProcessLookupError:
                    pass
        finally:
            if frozen:
                self._freeze(rel, False)
        return sorted(pids)

    def _cgroup_kill(self, rel: str) -> bool:
        """v2's ``cgroup.kill``: whether this kernel has it (and took the write)."""
        if self.version != 2:
            return False
        path = self.file(rel, "cgroup.kill")
        try:
            write_value(path, "1")
        except OSError:
            return False
        return True

    def _freeze(self, rel: str, frozen: bool) -> bool:
        """Freeze (or thaw) ``rel`` and below, waiting a moment for the kernel to finish;
        whether the request was taken (a freeze to be undone)."""
        if self.version == 2:
            control, value, state, done = "cgroup.freeze", "1" if frozen else "0", "cgroup.events", \
                "frozen 1" if frozen else "frozen 0"
        else:
            control = state = "freezer.state"
            value = done = "FROZEN" if frozen else "THAWED"
        try:
            write_value(self.file(rel, control), value)
        except OSError:
            return False
        def settled() -> bool:
            try:
                return done in self.read(rel, state).splitlines()
            except OSError:
                return True

        wait_for_kernel(settled, FREEZE_TIMEOUT)
        return True

    def remove(self, rel: str) -> bool:
        """Remove ``rel`` and everything below it; False while processes remain in it."""
        done = True
        for d in self.dirs(rel):
            if not d.is_dir():
                continue
            for sub in sorted((p for p in d.rglob("*") if p.is_dir()), key=lambda p: -len(p.parts)) + [d]:
                try:
                    sub.rmdir()
                except FileNotFoundError:
                    pass
                except OSError as e:
                    if e.errno not in (errno.EBUSY, errno.ENOTEMPTY, errno.EPERM):
                        raise CgroupError(e.errno, f"cannot remove {sub}: {e.strerror}") from None
                    done = False
        return done

    # -- values ------------------------------------------------------------------------------------

    def read(self, rel: str, name: str) -> str:
        return _read(self.file(rel, name))

    def write(self, rel: str, values: dict[str, str]) -> None:
        """Write ``values`` (file -> content) all or nothing (see the module docstring)."""
        written: list[tuple[Path, str]] = []
        for name, value in values.items():
            path = self.file(rel, name)
            try:
                old = _read(path)
            except FileNotFoundError:
                continue
            except OSError as e:
                raise CgroupError(e.errno, f"cannot read {path}: {e.strerror}") from None
            if old == value:
                continue
            try:
                write_value(path, value)
            except OSError as e:
                for done, previous in reversed(written):
                    try:
                        write_value(done, previous)
                    except OSError:
                        pass
                raise CgroupError(e.errno, f"writing {value} to {path}: {e.strerror}") from None
            written.append((path, old))

    def stats(self, rel: str) -> CgroupStats:
        """Usage counters of ``rel`` (zeros for files that are missing)."""
        def text(name: str) -> str:
            try:
                return self.read(rel, name)
            except OSError:
                return ""

        def number(name: str) -> int:
            value = text(name)
            return int(value) if value.isdigit() else 0

        cpu = _keyed(text("cpu.stat"))
        if self.version == 1:
            usage = number("memory.usage_in_bytes")
            inactive = _keyed(text("memory.stat")).get("total_inactive_file", 0)
            return CgroupStats(cpu_ns=number("cpuacct.usage"), periods=cpu.get("nr_periods", 0),
                               throttled_periods=cpu.get("nr_throttled", 0),
                               throttled_ns=cpu.get("throttled_time", 0), memory_usage=usage,
                               working_set=max(0, usage - inactive),
                               oom_kills=_keyed(text("memory.oom_control")).get("oom_kill", 0),
                               processes=number("pids.current"))
        usage = number("memory.current")
        inactive = _keyed(text("memory.stat")).get("inactive_file", 0)
        return CgroupStats(cpu_ns=cpu.get("usage_usec", 0) * 1000, periods=cpu.get("nr_periods", 0),
                           throttled_periods=cpu.get("nr_throttled", 0),
                           throttled_ns=cpu.get("throttled_usec", 0) * 1000, memory_usage=usage,
                           working_set=max(0, usage - inactive),
                           oom_kills=_keyed(text("memory.events")).get("oom_kill", 0),
                           processes=number("pids.current"))


__all__ = ["CgroupError", "CgroupStats", "NodeCgroups", "ROOT", "detect", "own_cgroups", "write_value"]
