"""The user, groups and no_new_privs a cgroupfs container's processes run with.

The runtime runs as root; a container's child gives that up between fork and exec, after
it has joined its cgroups and made its mount namespace (both need root), in runc's order:
``setgroups``, ``setgid``, ``setuid`` (each of them for the real, effective and saved ids,
so nothing can switch back), then ``prctl(PR_SET_NO_NEW_PRIVS)``, which keeps for good:
no later ``execve`` grants privileges (setuid bits, file capabilities).

A ``runAsUser`` without ``runAsGroup`` takes the user's primary group from the image's
``/etc/passwd``, or group 0 when the user has no entry there (containerd's ``WithUserID``);
the image here is the host, so it is the host's ``/etc/passwd``.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
from dataclasses import dataclass
from pathlib import Path

from kvert.kubelet.runtime.base import LinuxContainerSecurity

PR_SET_NO_NEW_PRIVS = 38
PASSWD = Path("/etc/passwd")

_libc: ctypes.CDLL | None = None


def _lib() -> ctypes.CDLL:
    # loaded in the runtime, before any fork: the child only calls into it
    global _libc
    if _libc is None:
        _libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        _libc.prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]
    return _libc


@dataclass(frozen=True)
class Credentials:
    uid: int | None = None              # None: the runtime's own (root)
    gid: int | None = None
    groups: tuple[int, ...] | None = None   # None: kept (only when neither uid nor gid changes)
    no_new_privs: bool = False


def primary_group(uid: int, passwd: Path = PASSWD) -> int:
    """The group of ``uid``'s entry in ``passwd``; 0 without one."""
    try:
        lines = passwd.read_text().splitlines()
    except OSError:
        return 0
    for line in lines:
        fields = line.split(":")
        if len(fields) >= 4 and fields[2] == str(uid) and fields[3].isdigit():
            return int(fields[3])
    return 0


def resolve(security: LinuxContainerSecurity, passwd: Path = PASSWD) -> Credentials:
    """What the child takes, computed in the runtime (it reads ``passwd``)."""
    uid, gid = security.run_as_user, security.run_as_group
    if uid is not None and gid is None:
        gid = primary_group(uid, passwd)
    changes = uid is not None or gid is not None or bool(security.supplemental_groups)
    groups = tuple(dict.fromkeys(security.supplemental_groups)) if changes else None
    if security.no_new_privs:
        _lib()
    return Credentials(uid=uid, gid=gid, groups=groups, no_new_privs=security.no_new_privs)


def apply(creds: Credentials) -> None:
    """In the container's child, last before exec (raises OSError)."""
    if creds.groups is not None:
        # root's own supplementary groups are not the container's
        os.setgroups(list(creds.groups))
    if creds.gid is not None:
        os.setresgid(creds.gid, creds.gid, creds.gid)
    if creds.uid is not None:
        os.setresuid(creds.uid, creds.uid, creds.uid)
    if creds.no_new_privs and _lib().prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, f"prctl(PR_SET_NO_NEW_PRIVS): {os.strerror(errno)}")


__all__ = ["Credentials", "apply", "primary_group", "resolve"]
