"""The volumes of the pods a node runs, filled as files before a pod's sandbox starts:
projected volumes (service-account tokens bound to the pod, ConfigMap and Secret keys,
downward API fields), ``secret``, ``configMap``, ``downwardAPI``, ``emptyDir`` and
``hostPath`` volumes.

Each volume of a pod has a directory ``<node dir>/pods/<uid>/volumes/<plugin>/<volume>/``
(``kubernetes.io~projected``, ``~secret``, ``~configmap``, ``~downward-api``,
``~empty-dir``; a ``hostPath`` is its own path), which :meth:`ProjectedVolumes.host_path`
names and a runtime of real processes binds at each volumeMount:

* ``projected`` (files mode 0600): a ``serviceAccountToken`` is a TokenRequest for the pod's
  ServiceAccount, bound to the pod (``boundObjectRef`` Pod name and uid), for ``audience``
  (empty: the API server's) and ``expirationSeconds`` (default 3600). Like the kubelet's
  token manager, a token is requested again once 80% of its lifetime has passed (or a
  day, whichever is first); failing that, the old one stays until it expires;
* ``configMap`` / ``secret`` (in a projected volume or on their own): the listed ``items``
  (every key when none are listed); a missing object or key fails the mount unless
  ``optional``. On their own, files take the item's ``mode``, else ``defaultMode`` (0644),
  as ``MakePayload`` (pkg/volume/secret, pkg/volume/configmap) gives them;
* ``downwardAPI``: ``metadata.name``, ``namespace``, ``uid``, ``labels``, ``annotations``
  (and ``labels['k']``, ``annotations['k']``) field references, and (in a ``downwardAPI``
  volume) a ``resourceFieldRef`` of a named container;
* ``emptyDir``: an empty directory, mode 0777 (``medium: Memory`` is a directory too);
* ``hostPath``: the path itself (``DirectoryOrCreate`` / ``FileOrCreate`` make it; the other
  types are checked as the kubelet does).

Ownership follows the pod, as ``SetVolumeOwnership`` does: with a user every container runs
as (``runAsUser``, ``FsUserFrom``) the files of projected volumes are that user's, with
``fsGroup`` every file of the pod's writable and read-only volumes (not hostPaths) is the
group's and group-readable (group-writable in emptyDirs), directories setgid.

A source that cannot be fetched fails the mount (the caller retries: ``FailedMount``); the
pod's files go when the pod ends or goes. Without a directory the files are only kept in
memory (``files``). The simulated runtime ignores them.
"""

from __future__ import annotations

import asyncio
import base64
import logging
import os
import shutil
import stat
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from kvert.api.errors import ApiError, NotFound
from kvert.api.meta import parse_time
from kvert.client.base import Client
from kvert.clock import wait_event
from kvert.clock.base import Clock
from kvert.kubelet.envvars import EnvError, metadata_value, resource_value

log = logging.getLogger(__name__)

PLUGIN_DIR = "kubernetes.io~projected"
PLUGINS = {"projected": PLUGIN_DIR, "secret": "kubernetes.io~secret", "configMap": "kubernetes.io~configmap",
           "downwardAPI": "kubernetes.io~downward-api", "emptyDir": "kubernetes.io~empty-dir"}
DEFAULT_TOKEN_SECONDS = 3600
DEFAULT_MODE = 0o644            # secret / configMap / downwardAPI / projected defaultMode
PROJECTED_FILE_MODE = 0o600     # kvert: every file of a projected volume (see docs/kubernetes-choices.md)
EMPTY_DIR_MODE = 0o777
REFRESH_FRACTION = 0.8          # refresh once 80% of the lifetime has passed
MAX_TOKEN_AGE = 24 * 3600.0     # the token manager's maxTTL
RETRY_SECONDS = 10.0
_RO_MASK, _RW_MASK, _EXEC_MASK = 0o440, 0o660, 0o110     # volume.SetVolumeOwnership


class MountError(Exception):
    """A volume could not be set up (the message is the kubelet's event text)."""


@dataclass
class _Token:
    uid: str
    volume: str
    path: str
    token: str
    issued: float
    expires: float


def _pod_meta(pod: dict) -> dict:
    return pod.get("metadata") or {}


def _mode(value: Any, default: int) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else default


def fs_user(pod: Mapping[str, Any]) -> int | None:
    """``FsUserFrom``: the user every (init) container runs as, if they all name the same one."""
    spec = pod.get("spec") or {}
    pod_user = (spec.get("securityContext") or {}).get("runAsUser")
    user: int | None = None
    for c in [*(spec.get("initContainers") or []), *(spec.get("containers") or [])]:
        if not isinstance(c, dict):
            continue
        own = (c.get("securityContext") or {}).get("runAsUser")
        effective = own if own is not None else pod_user
        if not isinstance(effective, int) or (user is not None and user != effective):
            return None
        user = effective
    return user


def fs_group(pod: Mapping[str, Any]) -> int | None:
    group = ((pod.get("spec") or {}).get("securityContext") or {}).get("fsGroup")
    return group if isinstance(group, int) and not isinstance(group, bool) else None


def _volume_kind(volume: Mapping[str, Any]) -> str:
    for kind in (*PLUGINS, "hostPath"):
        if isinstance(volume.get(kind), dict):
            return kind
    return ""


class ProjectedVolumes:
    """The volumes of a node's pods (named for the projected volumes it began with)."""

    def __init__(self, client: Client, clock: Clock, directory: Path | str | None,
                 allocatable: Mapping[str, int] | None = None) -> None:
        self.client = client
        self.clock = clock
        self.directory = Path(directory) if directory is not None else None
        self.allocatable = dict(allocatable or {})     # unset limits, for resourceFieldRef
        self.files: dict[tuple[str, str], dict[str, bytes]] = {}   # (uid, volume) -> files
        self._pods: dict[str, dict] = {}                           # uid -> pod, while mounted
        self._tokens: dict[tuple[str, str, str], _Token] = {}      # (uid, volume, path)
        self._retry_at: dict[str, float] = {}                      # uid -> failed refresh
        self._wake = asyncio.Event()

    # ---- mounting -------------------------------------------------------------------

    def mounted(self, uid: str) -> bool:
        return uid in self._pods

    async def mount(self, pod: dict) -> None:
        """Set up every volume of ``pod``; raises :class:`MountError`."""
        uid = _pod_meta(pod).get("uid", "")
        for volume in (pod.get("spec") or {}).get("volumes") or []:
            if not isinstance(volume, dict):
                continue
            name, kind = volume.get("name", ""), _volume_kind(volume)
            try:
                if kind == "projected":
                    await self._fill(pod, name, volume["projected"])
                elif kind in ("secret", "configMap"):
                    await self._fill_keys(pod, name, kind, volume[kind])
                elif kind == "downwardAPI":
                    self._fill_downward(pod, name, volume["downwardAPI"])
                elif kind == "emptyDir":
                    self._empty_dir(pod, name)
                elif kind == "hostPath":
                    _check_host_path(volume["hostPath"])
            except (MountError, OSError) as e:
                raise MountError(f'MountVolume.SetUp failed for volume "{name}" : {e}') from None
        self._pods[uid] = pod
        self._wake.set()

    async def _fill(self, pod: dict, volume: str, projected: dict) -> None:
        files: dict[str, bytes] = {}
        for source in projected.get("sources") or []:
            if not isinstance(source, dict):
                continue
            try:
                if isinstance(source.get("serviceAccountToken"), dict):
                    token = await self._request_token(pod, volume, source["serviceAccountToken"])
                    files[token.path] = token.token.encode()
                elif isinstance(source.get("configMap"), dict):
                    files.update(await self._keys(pod, "configmaps", source["configMap"]))
                elif isinstance(source.get("secret"), dict):
                    files.update(await self._keys(pod, "secrets", source["secret"]))
                elif isinstance(source.get("downwardAPI"), dict):
                    files.update(_downward(pod, source["downwardAPI"]))
            except (ApiError, MountError) as e:
                raise MountError(str(e)) from None
        self._write(pod, "projected", volume, {path: (data, PROJECTED_FILE_MODE) for path, data in files.items()},
                    read_only=True, owned=True)

    async def _request_token(self, pod: dict, volume: str, source: dict) -> _Token:
        meta = _pod_meta(pod)
        audience = source.get("audience") or ""
        seconds = source.get("expirationSeconds") or DEFAULT_TOKEN_SECONDS
        request = {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
                   "spec": {"audiences": [audience] if audience else [],
                            "expirationSeconds": seconds,
                            "boundObjectRef": {"apiVersion": "v1", "kind": "Pod",
                                               "name": meta.get("name", ""),
                                               "uid": meta.get("uid", "")}}}
        account = (pod.get("spec") or {}).get("serviceAccountName") or "default"
        answer = await self.client.create_subresource("serviceaccounts", account, "token", request,
                                                      namespace=meta.get("namespace", ""))
        status, spec = answer.get("status") or {}, answer.get("spec") or {}
        expires = parse_time(status["expirationTimestamp"])
        token = _Token(meta.get("uid", ""), volume, source.get("path", "token"), status["token"],
                       expires - int(spec.get("expirationSeconds") or seconds), expires)
        self._tokens[(token.uid, volume, token.path)] = token
        return token

    async def _object(self, pod: dict, resource: str, name: str) -> dict:
        return await self.client.get(resource, name, _pod_meta(pod).get("namespace", ""))

    async def _keys(self, pod: dict, resource: str, source: dict) -> dict[str, bytes]:
        optional = source.get("optional") is True
        try:
            obj = await self._object(pod, resource, source.get("name", ""))
        except NotFound:
            if optional:
                return {}
            raise
        return {path: data for path, (data, _) in _payload(resource, obj, source, optional, 0).items()}

    async def _fill_keys(self, pod: dict, volume: str, kind: str, source: dict) -> None:
        """A ``secret`` or ``configMap`` volume (``MakePayload``)."""
        resource, name_field = ("secrets", "secretName") if kind == "secret" else ("configmaps", "name")
        name = str(source.get(name_field) or "")
        optional = source.get("optional") is True
        try:
            obj = await self._object(pod, resource, name)
        except NotFound:
            if not optional:
                # the kubelet's secret and configmap managers word it so
                raise MountError(f'{"secret" if kind == "secret" else "configmap"} "{name}" not found') from None
            obj = {}
        except ApiError as e:
            raise MountError(str(e)) from None
        payload = _payload(resource, obj, source, optional, _mode(source.get("defaultMode"), DEFAULT_MODE))
        self._write(pod, kind, volume, payload, read_only=True)

    def _fill_downward(self, pod: dict, volume: str, source: dict) -> None:
        default = _mode(source.get("defaultMode"), DEFAULT_MODE)
        files: dict[str, tuple[bytes, int]] = {}
        for item in source.get("items") or []:
            if not isinstance(item, dict):
                continue
            mode = _mode(item.get("mode"), default)
            try:
                if isinstance(item.get("fieldRef"), dict):
                    value = metadata_value(pod, str(item["fieldRef"].get("fieldPath") or ""))
                elif isinstance(item.get("resourceFieldRef"), dict):
                    value = resource_value(item["resourceFieldRef"], pod, {}, self.allocatable)
                else:
                    continue
            except EnvError as e:
                raise MountError(str(e)) from None
            files[str(item.get("path") or "")] = (value.encode(), mode)
        self._write(pod, "downwardAPI", volume, files, read_only=True)

    def _empty_dir(self, pod: dict, volume: str) -> None:
        uid = _pod_meta(pod).get("uid", "")
        self.files.setdefault((uid, volume), {})
        target = self.volume_dir(uid, volume, "emptyDir")
        if target is None:
            return
        fresh = not target.exists()
        target.mkdir(parents=True, exist_ok=True)
        if fresh:       # a restarted node finds it as its containers left it
            os.chmod(target, EMPTY_DIR_MODE)
            _set_ownership(target, fs_group(pod), read_only=False)

    # ---- files ----------------------------------------------------------------------

    def volume_dir(self, uid: str, volume: str, kind: str = "projected") -> Path | None:
        if self.directory is None:
            return None
        return self.directory / "pods" / uid / "volumes" / PLUGINS[kind] / volume

    def host_path(self, pod: Mapping[str, Any], volume: str) -> str | None:
        """Where the volume ``volume`` of ``pod`` is on this machine (None: not a kind the
        node fills, or no directory)."""
        for v in (pod.get("spec") or {}).get("volumes") or []:
            if isinstance(v, dict) and v.get("name") == volume:
                kind = _volume_kind(v)
                if kind == "hostPath":
                    return str(v["hostPath"].get("path") or "") or None
                if kind in PLUGINS:
                    path = self.volume_dir(str((pod.get("metadata") or {}).get("uid", "")), volume, kind)
                    return str(path) if path is not None else None
        return None

    def _write(self, pod: dict, kind: str, volume: str, files: dict[str, tuple[bytes, int]], *,
               read_only: bool, owned: bool = False) -> None:
        uid = _pod_meta(pod).get("uid", "")
        self.files[(uid, volume)] = {path: data for path, (data, _) in files.items()}
        target = self.volume_dir(uid, volume, kind)
        if target is None:
            return
        target.mkdir(parents=True, exist_ok=True)
        user, group = fs_user(pod) if owned else None, fs_group(pod)
        for rel, (content, mode) in files.items():
            path = PurePosixPath(rel)
            if path.is_absolute() or ".." in path.parts:
                log.warning("volume %s: refusing path %r outside the volume", volume, rel)
                continue
            dest = target.joinpath(*path.parts)
            dest.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=dest.parent, prefix=".tmp-")
            try:
                os.fchmod(fd, mode)
                if user is not None or group is not None:
                    os.fchown(fd, -1 if user is None else user, -1 if group is None else group)
                with os.fdopen(fd, "wb") as f:
                    f.write(content)
                os.replace(tmp, dest)    # readers see the old file or the new, never half
            except BaseException:
                Path(tmp).unlink(missing_ok=True)
                raise
        _set_ownership(target, group, read_only=read_only)

    def remove(self, uid: str) -> None:
        """Forget a pod that is gone and delete its files."""
        self._pods.pop(uid, None)
        self._retry_at.pop(uid, None)
        for key in [k for k in self._tokens if k[0] == uid]:
            del self._tokens[key]
        for file_key in [k for k in self.files if k[0] == uid]:
            del self.files[file_key]
        if self.directory is not None:
            shutil.rmtree(self.directory / "pods" / uid, ignore_errors=True)

    # ---- refreshing tokens ------------------------------------------------------------

    @staticmethod
    def refresh_time(token: _Token) -> float:
        lifetime = token.expires - token.issued
        return min(token.issued + REFRESH_FRACTION * lifetime, token.issued + MAX_TOKEN_AGE)

    def next_refresh(self) -> float | None:
        times = [max(self.refresh_time(t), self._retry_at.get(t.uid, 0.0))
                 for t in self._tokens.values()]
        return min(times) if times else None

    async def refresh_due(self) -> None:
        """Request again every token past its refresh time, rewriting its volume."""
        now = self.clock.now()
        due = {(t.uid, t.volume) for t in self._tokens.values()
               if now >= self.refresh_time(t) and now >= self._retry_at.get(t.uid, 0.0)}
        for uid, volume in sorted(due):
            pod = self._pods.get(uid)
            spec = next((v.get("projected") for v in (pod or {}).get("spec", {}).get("volumes") or []
                         if isinstance(v, dict) and v.get("name") == volume), None)
            if pod is None or not isinstance(spec, dict):
                continue
            try:
                await self._fill(pod, volume, spec)
                self._retry_at.pop(uid, None)
            except MountError as e:
                log.warning('pod %s/%s: MountVolume.SetUp failed for volume "%s" : %s',
                            _pod_meta(pod).get("namespace"), _pod_meta(pod).get("name"), volume, e)
                self._retry_at[uid] = now + RETRY_SECONDS

    async def run(self) -> None:
        while True:
            due = self.next_refresh()
            timeout = None if due is None else max(0.0, due - self.clock.now())
            self._wake.clear()
            await wait_event(self._wake, timeout)
            await self.refresh_due()


def _values(resource: str, obj: Mapping[str, Any]) -> dict[str, bytes]:
    if resource == "secrets":
        return {k: base64.b64decode(v or "") for k, v in (obj.get("data") or {}).items()}
    values = {k: (v or "").encode() for k, v in (obj.get("data") or {}).items()}
    values.update({k: base64.b64decode(v or "") for k, v in (obj.get("binaryData") or {}).items()})
    return values


def _payload(resource: str, obj: Mapping[str, Any], source: Mapping[str, Any], optional: bool,
             default_mode: int) -> dict[str, tuple[bytes, int]]:
    """``MakePayload``: every key at ``default_mode`` without ``items``, else the listed keys
    at their paths and modes; a missing key fails unless ``optional``."""
    values = _values(resource, obj)
    items = source.get("items")
    if not items:
        return {k: (v, default_mode) for k, v in values.items()}
    out: dict[str, tuple[bytes, int]] = {}
    for item in items:
        key = item.get("key", "")
        if key not in values:
            if optional:
                continue
            raise MountError(f"configmap references non-existent config key: {key}"
                             if resource == "configmaps" else
                             f"references non-existent secret key: {key}")
        out[item.get("path") or key] = (values[key], _mode(item.get("mode"), default_mode))
    return out


def _set_ownership(root: Path, group: int | None, *, read_only: bool) -> None:
    """``SetVolumeOwnership``: the volume's files the pod's ``fsGroup``'s, group-readable
    (read-only volumes) or group-writable, directories setgid."""
    if group is None:
        return
    paths = [root, *root.rglob("*")]
    for path in paths:
        if path.is_symlink():
            continue
        os.chown(path, -1, group)
        mode = stat.S_IMODE(path.stat().st_mode) | (_RO_MASK if read_only else _RW_MASK)
        if path.is_dir():
            mode |= stat.S_ISGID | _EXEC_MASK
        os.chmod(path, mode)


_HOST_PATH_CHECKS = {"Directory": (os.path.isdir, "is not a directory"),
                     "File": (os.path.isfile, "is not a file"),
                     "Socket": (lambda p: stat.S_ISSOCK(os.stat(p).st_mode), "is not a socket"),
                     "CharDevice": (lambda p: stat.S_ISCHR(os.stat(p).st_mode), "is not a character device"),
                     "BlockDevice": (lambda p: stat.S_ISBLK(os.stat(p).st_mode), "is not a block device")}


def _check_host_path(source: Mapping[str, Any]) -> None:
    """The hostPath ``type`` checks (pkg/volume/hostpath): the ``...OrCreate`` types make what
    is missing, the others must find it."""
    path, kind = str(source.get("path") or ""), str(source.get("type") or "")
    if kind == "DirectoryOrCreate":
        if not os.path.exists(path):
            os.makedirs(path, 0o755, exist_ok=True)
        kind = "Directory"
    elif kind == "FileOrCreate":
        if not os.path.exists(path):
            os.makedirs(os.path.dirname(path) or "/", 0o755, exist_ok=True)
            Path(path).touch(0o644)
        kind = "File"
    check = _HOST_PATH_CHECKS.get(kind)
    if check is None:
        return
    test, message = check
    if not os.path.exists(path) or not test(path):
        raise MountError(f"hostPath type check failed: {path} {message}")


def _downward(pod: dict, source: dict) -> dict[str, bytes]:
    """A projected volume's downward API items (metadata fields only)."""
    out: dict[str, bytes] = {}
    for item in source.get("items") or []:
        field = ((item or {}).get("fieldRef") or {}).get("fieldPath", "")
        try:
            value = metadata_value(pod, field)
        except EnvError:
            log.debug("downward API field %r is not projected by this node", field)
            continue
        out[item.get("path", "")] = value.encode()
    return out


__all__ = ["DEFAULT_MODE", "MountError", "PLUGINS", "PLUGIN_DIR", "ProjectedVolumes", "REFRESH_FRACTION",
           "fs_group", "fs_user"]
