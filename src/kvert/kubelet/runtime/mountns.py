"""A cgroupfs container's volumes at their mountPaths: a private mount namespace of its own.

The runtime has no root filesystem to mount into, so the container sees the host's, with
its volumes bound over it in a mount namespace that only its processes share (the host's
mounts never change):

* the child, between fork and exec, unshares its mount namespace (``CLONE_NEWNS``), makes
  ``/`` recursively private (so nothing propagates back), bind-mounts each volume's
  directory at its ``mountPath`` and remounts it read-only where ``readOnly``;
* a mountPath that does not exist on the host is made without touching the host: its
  nearest existing ancestor is *shadowed* in the namespace, a tmpfs holding a bind mount of
  each entry the ancestor has (symlinks copied) plus the missing directories (or the file,
  for a file's subPath), bound over the ancestor. When that ancestor is ``/`` the shadow
  becomes the container's root (``chroot``). A mountPath inside another volume is made in
  that volume, as runc does;
* after the volumes, the runtime's *masked* directories (kvert's data directory: the store,
  the PKI, the admin kubeconfig, every pod's volumes and logs) are covered by an empty
  read-only tmpfs, so only the container's own volumes, bound before, are left of them;
  and the *read-only* trees (``/sys/fs/cgroup``: a container cannot raise its own limits or
  move itself out of its cgroup) are bound over themselves and remounted read-only, every
  mount below them too;
* ``kubectl exec`` joins the container's namespace and root (``setns``) before it runs.

:func:`plan` is computed in the runtime (it reads the host's paths), :func:`apply` runs in
the child; both need root (``CAP_SYS_ADMIN``).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from kvert.kubelet.runtime.base import Mount

CLONE_NEWNS = 0x00020000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 0x1, 0x2, 0x4, 0x8
MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 0x20, 0x1000, 0x4000, 0x40000
MNT_DETACH = 0x2

_libc: ctypes.CDLL | None = None


def _lib() -> ctypes.CDLL:
    # loaded in the runtime, before any fork: the child then only calls into it
    global _libc
    if _libc is None:
        _libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        _libc.mount.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong,
                                ctypes.c_void_p]
        _libc.umount2.argtypes = [ctypes.c_char_p, ctypes.c_int]
        _libc.unshare.argtypes = [ctypes.c_int]
        _libc.setns.argtypes = [ctypes.c_int, ctypes.c_int]
    return _libc


def _check(result: int, what: str) -> None:
    if result != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, f"{what}: {os.strerror(errno)}")


def _mount(source: str | None, target: str, fstype: str | None, flags: int, data: str | None = None) -> None:
    _check(_lib().mount(source.encode() if source else None, target.encode(),
                        fstype.encode() if fstype else None, flags, data.encode() if data else None),
           f"mount {source or fstype or ''} on {target}")


def _bind(source: str, target: str, readonly: bool = False) -> None:
    _mount(source, target, None, MS_BIND | MS_REC)
    if readonly:
        # a bind keeps the flags of what it binds; read-only is a remount of the bind alone
        flags = MS_BIND | MS_REMOUNT | MS_RDONLY | (_vfs_flags(target) & (MS_NOSUID | MS_NODEV | MS_NOEXEC))
        _mount(None, target, None, flags)


def _vfs_flags(path: str) -> int:
    st = os.statvfs(path)
    flags = 0
    for bit, flag in ((os.ST_NOSUID, MS_NOSUID), (os.ST_NODEV, MS_NODEV), (os.ST_NOEXEC, MS_NOEXEC)):
        if st.f_flag & bit:
            flags |= flag
    return flags


@dataclass
class Shadow:
    """``directory`` (an existing host directory) replaced by a copy of its entries plus
    ``missing`` (paths relative to it: (path, is a directory))."""
    directory: str
    staging: str
    missing: list[tuple[str, bool]] = field(default_factory=list)


@dataclass
class Plan:
    shadows: list[Shadow] = field(default_factory=list)
    binds: list[tuple[str, str, bool]] = field(default_factory=list)   # (host path, target, read-only)
    cwd: str = "/"
    masks: list[str] = field(default_factory=list)      # covered by an empty read-only tmpfs
    readonly: list[str] = field(default_factory=list)   # remounted read-only with every mount below
    # (directory, its entries, staging): a directory others may not search replaced by a
    # searchable tmpfs holding only those entries (the files an image needs, below /root)
    expose: list[tuple[str, list[str], str]] = field(default_factory=list)


def _normal(path: str) -> str:
    parts: list[str] = []
    for part in PurePosixPath("/" + path).parts[1:]:
        if part == "..":
            if parts:
                parts.pop()
        elif part != ".":
            parts.append(part)
    return "/" + "/".join(parts)


def _within(path: str, root: str) -> str | None:
    """``path`` relative to ``root`` if it is ``root`` or below it."""
    if path == root:
        return ""
    prefix = root.rstrip("/") + "/"
    return path[len(prefix):] if path.startswith(prefix) else None


def plan(mounts: Sequence[Mount], staging: Path, cwd: str = "/", *, masks: Sequence[str] = (),
         readonly: Sequence[str] = (), expose: Sequence[str] = ()) -> Plan:
    """What :func:`apply` does for ``mounts``, ``masks`` and ``readonly`` (directories): the
    host is only read, except that a mountPath inside another volume is made in that
    volume's directory. ``staging`` is a directory of the runtime's own (an empty mount
    point per shadow is made below it)."""
    masked = [os.path.realpath(m) for m in masks if os.path.isdir(m)]
    # a directory inside another masked one is gone already
    masked = [m for m in masked if not any(o != m and _within(m, o) is not None for o in masked)]
    result = Plan(cwd=cwd or "/", masks=sorted(set(masked)),
                  readonly=[os.path.realpath(r) for r in readonly if os.path.isdir(r)])
    entries: dict[str, list[str]] = {}
    for path in expose:
        parts = PurePosixPath(os.path.realpath(path)).parts
        for i in range(1, len(parts) - 1):
            ancestor = os.path.join(*parts[:i + 1]) if i else "/"
            if not os.stat(ancestor).st_mode & 0o001:      # others cannot search it
                names = entries.setdefault(ancestor, [])
                if parts[i + 1] not in names:
                    names.append(parts[i + 1])
                break
    for n, (directory, names) in enumerate(sorted(entries.items())):
        result.expose.append((directory, names, str(staging / f"expose{n}")))
        os.makedirs(staging / f"expose{n}", exist_ok=True)
    placed: list[tuple[str, str]] = []           # (container path, host path) of planned binds
    shadows: dict[str, Shadow] = {}
    for m in sorted(mounts, key=lambda m: len(PurePosixPath(_normal(m.container_path)).parts)):
        target = _normal(m.container_path)
        is_dir = os.path.isdir(m.host_path)
        inside = next(((host, rel) for path, host in reversed(placed)
                       if (rel := _within(target, path)) is not None and rel), None)
        if inside is not None:
            # made in the volume it falls in (the runtime's own directory), as runc does
            host, rel = inside
            _make(os.path.join(host, rel), is_dir)
        else:
            real = os.path.realpath(target)
            if not os.path.lexists(real):
                ancestor = real
                while not os.path.isdir(ancestor):
                    ancestor = os.path.dirname(ancestor)
                # a path made by another shadow of the same ancestor needs no more
                shadow = shadows.get(ancestor)
                if shadow is None:
                    shadow = shadows[ancestor] = Shadow(ancestor, str(staging / str(len(shadows))))
                shadow.missing.append((os.path.relpath(real, ancestor), is_dir))
            target = real
        placed.append((_normal(m.container_path), m.host_path))
        result.binds.append((m.host_path, target, m.readonly))
    result.shadows = sorted(shadows.values(), key=lambda s: len(PurePosixPath(s.directory).parts))
    for s in result.shadows:
        os.makedirs(s.staging, exist_ok=True)
    return result


def _make(path: str, is_dir: bool) -> None:
    if is_dir:
        os.makedirs(path, exist_ok=True)
    elif not os.path.lexists(path):
        os.makedirs(os.path.dirname(path), exist_ok=True)
        Path(path).touch()


def _shadow(s: Shadow) -> str:
    """Build the shadow of ``s.directory`` in its staging tmpfs; the directory to bind over
    it (or to take as the root)."""
    _mount("tmpfs", s.staging, "tmpfs", MS_NOSUID | MS_NODEV, "mode=755")
    original, copy = os.path.join(s.staging, "orig"), os.path.join(s.staging, "root")
    os.mkdir(original)
    os.mkdir(copy)
    _bind(s.directory, original)
    st = os.stat(s.directory)
    os.chmod(copy, st.st_mode & 0o7777)
    os.chown(copy, st.st_uid, st.st_gid)
    for entry in os.scandir(original):
        place = os.path.join(copy, entry.name)
        if entry.is_symlink():
            os.symlink(os.readlink(entry.path), place)
            continue
        if entry.is_dir(follow_symlinks=False):
            os.mkdir(place)
        else:
            Path(place).touch()
        _bind(entry.path, place)
    for rel, is_dir in s.missing:
        _make(os.path.join(copy, rel), is_dir)
    return copy


def apply(p: Plan) -> None:
    """In the container's child, before exec: its own mount namespace with the plan's binds."""
    _check(_lib().unshare(CLONE_NEWNS), "unshare(CLONE_NEWNS)")
    _mount(None, "/", None, MS_REC | MS_PRIVATE)
    for s in p.shadows:              # shallowest first: a shadow of / comes before the rest
        copy = _shadow(s)
        if s.directory == "/":
            # the root is taken at once, so the shadows below it are made in the new one
            os.chdir(copy)
            os.chroot(".")
        else:
            _bind(copy, s.directory)
    for host, target, readonly in p.binds:
        _bind(host, target, readonly)
    for directory, names, staging in p.expose:
        _mount("tmpfs", staging, "tmpfs", MS_NOSUID | MS_NODEV, "mode=755")
        for name in names:
            source, place = os.path.join(directory, name), os.path.join(staging, name)
            if os.path.isdir(source):
                os.mkdir(place)
            else:
                Path(place).touch()
            _bind(source, place)
        _bind(staging, directory)
    for path in p.readonly:
        _readonly_tree(path)
    for path in p.masks:
        # a volume bound inside a masked directory goes with it (hostPaths into kvert's data)
        _mount("tmpfs", path, "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, "size=4k,mode=755")
    os.chdir(p.cwd)


def _unescape(field: str) -> str:
    """A mountinfo path: space, tab, newline and backslash are octal escapes (``\\040``)."""
    return re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), field)


def _mount_points(below: str, mountinfo: str = "/proc/self/mountinfo") -> list[str]:
    """The mount points at ``below`` or under it, in this namespace."""
    with open(mountinfo) as f:
        points = [_unescape(line.split()[4]) for line in f if len(line.split()) > 4]
    return [m for m in points if _within(m, below) is not None]


def _readonly_tree(path: str) -> None:
    """``path`` and every mount below it read-only in this namespace (a remount of each
    mount point alone: the host's mounts keep their flags)."""
    _bind(path, path)
    for point in _mount_points(path):
        _mount(None, point, None, MS_BIND | MS_REMOUNT | MS_RDONLY | _vfs_flags(point))


def enter(pid: int, cwd: str = "/") -> None:
    """In an exec'd process's child: the mount namespace and root of the container's main
    process ``pid``."""
    root = os.open(f"/proc/{pid}/root", os.O_RDONLY | os.O_DIRECTORY)
    ns = os.open(f"/proc/{pid}/ns/mnt", os.O_RDONLY)
    try:
        _check(_lib().setns(ns, CLONE_NEWNS), "setns(CLONE_NEWNS)")
        os.fchdir(root)
        os.chroot(".")
    finally:
        os.close(ns)
        os.close(root)
    os.chdir(cwd or "/")


def load() -> None:
    """Load libc now (before a fork), so the child need not."""
    _lib()


__all__ = ["Plan", "Shadow", "apply", "enter", "load", "plan"]
