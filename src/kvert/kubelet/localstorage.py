"""How much of the node's disk a pod's emptyDir volumes hold, for the eviction manager's
local storage limits (``kvert.kubelet.eviction.local_storage_eviction``).

The kubelet measures a volume as ``du`` does (the blocks its files take, hard links once),
without following symbolic links or crossing into other filesystems (a volume bound from
elsewhere is not the pod's). A volume the node has not made yet (the simulated runtime
makes none) has no usage.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Protocol

from kvert.kubelet.eviction import disk_backed_empty_dirs


class VolumeDirs(Protocol):
    """Where the node keeps a pod's volumes (``kvert.kubelet.tokens.ProjectedVolumes``)."""

    def volume_dir(self, uid: str, volume: str, kind: str = "projected") -> Path | None: ...


def directory_usage(path: Path) -> int:
    """Bytes the files under ``path`` take on disk (``du -s -x -B1``); 0 if it is missing."""
    try:
        top = os.lstat(path)
    except FileNotFoundError:
        return 0
    total, seen = 0, set()
    stack = [str(path)]
    while stack:
        directory = stack.pop()
        try:
            entries = list(os.scandir(directory))
        except OSError:
            continue      # removed meanwhile, or unreadable: what can be read counts
        for entry in entries:
            try:
                st = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            if st.st_dev != top.st_dev or (st.st_ino, st.st_dev) in seen:
                continue
            seen.add((st.st_ino, st.st_dev))
            total += st.st_blocks * 512
            if stat.S_ISDIR(st.st_mode):
                stack.append(entry.path)
    return total


def empty_dir_usage(pod: Mapping[str, Any], volumes: VolumeDirs) -> dict[str, int]:
    """Bytes in each of the pod's disk-backed emptyDir volumes, by volume name."""
    uid = str((pod.get("metadata") or {}).get("uid", ""))
    out: dict[str, int] = {}
    for name, _ in disk_backed_empty_dirs(pod):
        directory = volumes.volume_dir(uid, name, "emptyDir")
        if directory is not None and directory.exists():
            out[name] = directory_usage(directory)
    return out


__all__ = ["VolumeDirs", "directory_usage", "empty_dir_usage"]
