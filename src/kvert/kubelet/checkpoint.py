"""The node agent's checkpoint: what it allocated to each pod, and how far each resize got.

Seed 000 ("kubelet restart tolerance"): if the node agent restarts in the middle of a
resize, every pod is re-admitted at its *allocated* resources, restored from the
checkpoint, and pending resizes are handled only after all existing pods are back.
Kubernetes keeps the same state in ``allocated_pods_state`` (requests and limits per
container) and, since 1.33, the *actuated* resources (what was last passed to the
runtime successfully) next to it. kvert keeps both in one JSON file, plus what it
needs to find its running containers again when the runtime outlived the agent
(sandbox and container ids, restart counts) and the resize state (conditions, last
decision), so a restarted agent continues where the old one stopped.

Every change is written at once, atomically: a temporary file in the same directory,
flushed and fsynced, renamed over the old one, then the directory fsynced. A crash
leaves either the old or the new file, never a torn one. With ``directory=None`` the
state lives only in memory (tests, throwaway nodes).

All amounts are integers: cpu in millicores, memory and other resources in bytes/units.
"""

from __future__ import annotations

import json
import logging
import os
import tempfile
from pathlib import Path
from typing import Any

import orjson

log = logging.getLogger(__name__)


def _json_copy(value: Any) -> Any:
    """``value`` as its JSON text reads back (tuples become lists): what the file would keep."""
    try:
        return orjson.loads(orjson.dumps(value))
    except TypeError:           # what orjson does not write (integers beyond 64 bits)
        return json.loads(json.dumps(value))

FILENAME = "kvert_node_state.json"
VERSION = 1

# Requirements of one container: {"requests": {name: int}, "limits": {name: int}}.
Requirements = dict[str, dict[str, int]]


def _copy_req(req: Requirements | None) -> Requirements:
    req = req or {}
    return {"requests": dict(req.get("requests") or {}), "limits": dict(req.get("limits") or {})}


class Checkpoint:
    """Per pod uid: namespace/name, allocated and actuated resources per container, pod-level
    actuated cgroup values, runtime ids, restart counts and the resize state."""

    def __init__(self, directory: Path | str | None, filename: str = FILENAME):
        self.directory = Path(directory) if directory is not None else None
        self.path = self.directory / filename if self.directory is not None else None
        self.pods: dict[str, dict[str, Any]] = {}
        self.writes = 0
        self._load()

    # ---- persistence -----------------------------------------------------------

    def _load(self) -> None:
        if self.path is None or not self.path.exists():
            return
        try:
            data = json.loads(self.path.read_text())
        except (OSError, ValueError) as e:
            # A corrupt checkpoint cannot be trusted; Kubernetes starts empty then, too.
            log.error("node checkpoint %s unreadable (%s); starting without it", self.path, e)
            return
        if not isinstance(data, dict) or data.get("version") != VERSION:
            log.error("node checkpoint %s has an unknown version; starting without it", self.path)
            return
        pods = data.get("pods")
        if isinstance(pods, dict):
            self.pods = pods

    def save(self) -> None:
        """Write the whole state atomically (temp + fsync + rename + fsync of the directory)."""
        if self.path is None or self.directory is None:
            return
        self.directory.mkdir(parents=True, exist_ok=True)
        body = json.dumps({"version": VERSION, "pods": self.pods}, sort_keys=True,
                          separators=(",", ":"))
        fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=self.directory)
        try:
            with os.fdopen(fd, "w") as f:
                f.write(body)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, self.path)
        except BaseException:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise
        try:
            dir_fd = os.open(self.directory, os.O_RDONLY)
        except OSError:
            dir_fd = -1
        if dir_fd >= 0:
            try:
                os.fsync(dir_fd)
            except OSError:
                pass
            finally:
                os.close(dir_fd)
        self.writes += 1

    # ---- reading -----------------------------------------------------------------

    def has(self, uid: str) -> bool:
        return uid in self.pods

    def entry(self, uid: str) -> dict[str, Any] | None:
        return self.pods.get(uid)

    def allocated(self, uid: str) -> dict[str, Requirements] | None:
        entry = self.pods.get(uid)
        if entry is None:
            return None
        return {name: _copy_req(req) for name, req in (entry.get("allocated") or {}).items()}

    def actuated(self, uid: str) -> dict[str, Requirements]:
        entry = self.pods.get(uid) or {}
        return {name: _copy_req(req) for name, req in (entry.get("actuated") or {}).items()}

    def get(self, uid: str, key: str, default: Any = None) -> Any:
        return (self.pods.get(uid) or {}).get(key, default)

    def uids(self) -> list[str]:
        return list(self.pods)

    # ---- writing (each call persists) ------------------------------------------------

    def set_allocated(self, uid: str, namespace: str, name: str,
                      allocated: dict[str, Requirements]) -> None:
        entry = self.pods.setdefault(uid, {})
        entry["namespace"], entry["name"] = namespace, name
        entry["allocated"] = {c: _copy_req(r) for c, r in allocated.items()}
        self.save()

    def set_actuated(self, uid: str, container: str, requirements: Requirements | None) -> None:
        entry = self.pods.setdefault(uid, {})
        actuated = entry.setdefault("actuated", {})
        if requirements is None:
            actuated.pop(container, None)
        else:
            actuated[container] = _copy_req(requirements)
        self.save()

    def update(self, uid: str, **fields: Any) -> None:
        """Set (or, with None, remove) other per-pod fields: ``sandbox``, ``containers``,
        ``restarts``, ``pod_cgroup``, ``resize``, ``pod_ip``..."""
        entry = self.pods.setdefault(uid, {})
        changed = False
        for key, value in fields.items():
            if value is None:
                changed |= entry.pop(key, None) is not None
            elif entry.get(key) != value:
                entry[key] = _json_copy(value)
                changed = True
        if changed:
            self.save()

    def remove(self, uid: str) -> None:
        if self.pods.pop(uid, None) is not None:
            self.save()

    def remove_orphans(self, keep: set[str]) -> None:
        gone = [uid for uid in self.pods if uid not in keep]
        for uid in gone:
            del self.pods[uid]
        if gone:
            self.save()
