"""The projected volumes of the pods a node runs: service-account tokens bound to the pod,
ConfigMap and Secret keys, and downward API fields, written as files.

Before a pod's sandbox starts, each of its ``projected`` volumes is filled under
``<node dir>/pods/<uid>/volumes/kubernetes.io~projected/<volume>/`` (files mode 0600):

* ``serviceAccountToken``: a TokenRequest for the pod's ServiceAccount, bound to the pod
  (``boundObjectRef`` Pod name and uid), for ``audience`` (empty: the API server's) and
  ``expirationSeconds`` (default 3600). Like the kubelet's token manager, a token is
  requested again once 80% of its lifetime has passed (or a day, whichever is first);
  failing that, the old one stays until it expires;
* ``configMap`` / ``secret``: the listed ``items`` (every key when none are listed); a
  missing object or key fails the mount unless ``optional``;
* ``downwardAPI``: ``metadata.name``, ``namespace``, ``uid``, ``labels``, ``annotations``
  (and ``labels['k']``, ``annotations['k']``) field references.

A source that cannot be fetched fails the mount (the caller retries); the pod's files
go when the pod ends or goes. Without a directory the files are only kept in memory (``files``).
The simulated runtime ignores the files; a runtime that runs real processes mounts the
directory at each volumeMount.
"""

from __future__ import annotations

import asyncio
import base64
import logging
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from kvert.api.errors import ApiError, NotFound
from kvert.api.meta import parse_time
from kvert.client.base import Client
from kvert.clock import wait_event
from kvert.clock.base import Clock

log = logging.getLogger(__name__)

PLUGIN_DIR = "kubernetes.io~projected"
DEFAULT_TOKEN_SECONDS = 3600
REFRESH_FRACTION = 0.8          # refresh once 80% of the lifetime has passed
MAX_TOKEN_AGE = 24 * 3600.0     # the token manager's maxTTL
RETRY_SECONDS = 10.0


class MountError(Exception):
    """A projected volume could not be filled (the message is the kubelet's event text)."""


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


def _quote_map(values: dict) -> str:
    """The downward API's ``key="value"`` lines, sorted by key."""
    return "\n".join(f'{k}="{values[k]}"' for k in sorted(values))


class ProjectedVolumes:
    def __init__(self, client: Client, clock: Clock, directory: Path | str | None) -> None:
        self.client = client
        self.clock = clock
        self.directory = Path(directory) if directory is not None else None
        self.files: dict[tuple[str, str], dict[str, bytes]] = {}   # (uid, volume) -> files
        self._pods: dict[str, dict] = {}                           # uid -> pod, while mounted
        self._tokens: dict[tuple[str, str, str], _Token] = {}      # (uid, volume, path)
        self._retry_at: dict[str, float] = {}                      # uid -> failed refresh
        self._wake = asyncio.Event()

    # ---- mounting -------------------------------------------------------------------

    def mounted(self, uid: str) -> bool:
        return uid in self._pods

    async def mount(self, pod: dict) -> None:
        """Fill every projected volume of ``pod``; raises :class:`MountError`."""
        uid = _pod_meta(pod).get("uid", "")
        for volume in (pod.get("spec") or {}).get("volumes") or []:
            projected = volume.get("projected") if isinstance(volume, dict) else None
            if isinstance(projected, dict):
                await self._fill(pod, volume.get("name", ""), projected)
        self._pods[uid] = pod
        self._wake.set()

    async def _fill(self, pod: dict, volume: str, projected: dict) -> None:
        uid = _pod_meta(pod).get("uid", "")
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
                raise MountError(f'MountVolume.SetUp failed for volume "{volume}" : {e}') from None
        self._write(uid, volume, files)

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

    async def _keys(self, pod: dict, resource: str, source: dict) -> dict[str, bytes]:
        namespace = _pod_meta(pod).get("namespace", "")
        optional = source.get("optional") is True
        try:
            obj = await self.client.get(resource, source.get("name", ""), namespace)
        except NotFound:
            if optional:
                return {}
            raise
        if resource == "secrets":
            values = {k: base64.b64decode(v or "") for k, v in (obj.get("data") or {}).items()}
        else:
            values = {k: (v or "").encode() for k, v in (obj.get("data") or {}).items()}
            values.update({k: base64.b64decode(v or "")
                           for k, v in (obj.get("binaryData") or {}).items()})
        items = source.get("items")
        if not items:
            return values
        out: dict[str, bytes] = {}
        kind = "configmap" if resource == "configmaps" else "secret"
        for item in items:
            key = item.get("key", "")
            if key not in values:
                if optional:
                    continue
                raise MountError(f"{kind} references non-existent config key: {key}"
                                 if kind == "configmap" else
                                 f"references non-existent secret key: {key}")
            out[item.get("path") or key] = values[key]
        return out

    # ---- files ----------------------------------------------------------------------

    def volume_dir(self, uid: str, volume: str) -> Path | None:
        if self.directory is None:
            return None
        return self.directory / "pods" / uid / "volumes" / PLUGIN_DIR / volume

    def _write(self, uid: str, volume: str, files: dict[str, bytes]) -> None:
        self.files[(uid, volume)] = files
        target = self.volume_dir(uid, volume)
        if target is None:
            return
        target.mkdir(parents=True, exist_ok=True)
        for rel, content in files.items():
            path = PurePosixPath(rel)
            if path.is_absolute() or ".." in path.parts:
                log.warning("volume %s: refusing path %r outside the volume", volume, rel)
                continue
            dest = target.joinpath(*path.parts)
            dest.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=dest.parent, prefix=".tmp-")
            try:
                os.fchmod(fd, 0o600)
                with os.fdopen(fd, "wb") as f:
                    f.write(content)
                os.replace(tmp, dest)    # readers see the old file or the new, never half
            except BaseException:
                Path(tmp).unlink(missing_ok=True)
                raise

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
                log.warning("pod %s/%s: %s", _pod_meta(pod).get("namespace"),
                            _pod_meta(pod).get("name"), e)
                self._retry_at[uid] = now + RETRY_SECONDS

    async def run(self) -> None:
        while True:
            due = self.next_refresh()
            timeout = None if due is None else max(0.0, due - self.clock.now())
            self._wake.clear()
            await wait_event(self._wake, timeout)
            await self.refresh_due()


_DOWNWARD_FIELDS = {"metadata.name": "name", "metadata.namespace": "namespace", "metadata.uid": "uid"}


def _downward(pod: dict, source: dict) -> dict[str, bytes]:
    meta = _pod_meta(pod)
    out: dict[str, bytes] = {}
    for item in source.get("items") or []:
        field = ((item or {}).get("fieldRef") or {}).get("fieldPath", "")
        if field in _DOWNWARD_FIELDS:
            value = str(meta.get(_DOWNWARD_FIELDS[field], ""))
        elif field in ("metadata.labels", "metadata.annotations"):
            value = _quote_map(meta.get(field.split(".")[1]) or {})
        elif field.startswith(("metadata.labels['", "metadata.annotations['")) and field.endswith("']"):
            which, _, key = field[len("metadata."):-2].partition("['")
            value = str((meta.get(which) or {}).get(key, ""))
        else:
            log.debug("downward API field %r is not projected by this node", field)
            continue
        out[item.get("path", "")] = value.encode()
    return out
