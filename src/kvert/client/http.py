"""The HTTP client: the Client protocol against any Kubernetes API server (kvert's or real).

It is configured from a kubeconfig (:meth:`HttpClient.from_kubeconfig`) or, inside a pod, as
client-go's ``rest.InClusterConfig`` (:meth:`HttpClient.in_cluster`): the API server at
``https://$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT``, trusted through the service
account's ``ca.crt``, authenticated with its ``token``, which is read again whenever the
kubelet replaces it (bound tokens rotate; client-go re-reads the file too).

Errors come back as the same ApiError classes the in-process client raises (rebuilt from
the server's Status), and a watch raises ``Expired`` when the server sends an ERROR event
with a 410 Status, so components and informers behave the same over either client.
"""

from __future__ import annotations

import asyncio
import base64
import json
import logging
import os
import ssl
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import aiohttp
import yaml

from kvert.api.errors import ApiError, InternalError
from kvert.api.kinds import by_key
from kvert.api.types import Obj
from kvert.client.base import Patch, binding_body, eviction_body
from kvert.registry.patch import content_type_of
from kvert.store.base import WatchEvent

log = logging.getLogger(__name__)

_USER_AGENT = "kvert/0.1 (python)"

SERVICE_ACCOUNT_DIR = Path("/var/run/secrets/kubernetes.io/serviceaccount")
# client-go's rest.ErrNotInCluster
NOT_IN_CLUSTER = ("unable to load in-cluster configuration, KUBERNETES_SERVICE_HOST and "
                  "KUBERNETES_SERVICE_PORT must be defined")


class InClusterError(ValueError):
    """The in-cluster configuration cannot be made; the message names what is missing."""


def in_cluster_environment(environ: Mapping[str, str] | None = None) -> bool:
    """Whether the kubelet's service environment variables are there (as client-go checks
    before it reads the service account's files)."""
    env = os.environ if environ is None else environ
    return bool(env.get("KUBERNETES_SERVICE_HOST")) and bool(env.get("KUBERNETES_SERVICE_PORT"))


class TokenFile:
    """A service account's token file, read again when it changes.

    The kubelet rotates a projected token by swapping the file (an atomic symlink rename);
    a changed inode, size or modification time means a new token. A file that cannot be
    read for a moment (mid-swap) keeps the last token.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._seen: tuple[int, int, int] | None = None
        self._token = ""
        self.token()            # an unreadable file at start is the caller's error

    def token(self) -> str:
        try:
            st = self.path.stat()
            seen = (st.st_ino, st.st_size, st.st_mtime_ns)
            if seen != self._seen:
                self._token = self.path.read_text(encoding="utf-8").strip()
                self._seen = seen
        except OSError:
            if self._seen is None:
                raise
            log.warning("service account token %s unreadable; keeping the last one", self.path)
        return self._token

    def header(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token()}"}


def _kubeconfig_context(path: Path | str, context: str | None) -> tuple[Obj, Obj, Obj]:
    """(context, cluster, user) entries of a kubeconfig's current (or given) context."""
    config = yaml.safe_load(Path(path).read_text())
    name = context or config.get("current-context")
    ctx: Obj = next(c["context"] for c in config.get("contexts", []) if c["name"] == name)
    cluster: Obj = next(c["cluster"] for c in config.get("clusters", []) if c["name"] == ctx["cluster"])
    user: Obj = next((u["user"] for u in config.get("users", []) if u["name"] == ctx.get("user")), {})
    return ctx, cluster, user


def kubeconfig_cluster(path: Path | str, context: str | None = None) -> tuple[str, bytes]:
    """(server URL, CA certificate PEM or b"") of a kubeconfig's current (or given) context;
    a CA file is read relative to the kubeconfig, as kubectl reads it."""
    _, cluster, _ = _kubeconfig_context(path, context)
    if cluster.get("certificate-authority-data"):
        ca = base64.b64decode(cluster["certificate-authority-data"])
    elif cluster.get("certificate-authority"):
        ca = (Path(path).parent / cluster["certificate-authority"]).read_bytes()
    else:
        ca = b""
    return cluster["server"], ca


def load_kubeconfig(path: Path | str, context: str | None = None
                    ) -> tuple[str, dict[str, str], ssl.SSLContext | None]:
    """(server URL, auth headers, TLS context) of a kubeconfig's current (or given) context."""
    _, cluster, user = _kubeconfig_context(path, context)
    headers = {"Authorization": f"Bearer {user['token']}"} if user.get("token") else {}
    tls: ssl.SSLContext | None = None
    if cluster["server"].startswith("https"):
        if cluster.get("insecure-skip-tls-verify"):
            tls = ssl.create_default_context()
            tls.check_hostname = False
            tls.verify_mode = ssl.CERT_NONE
        elif cluster.get("certificate-authority-data"):
            tls = ssl.create_default_context(
                cadata=base64.b64decode(cluster["certificate-authority-data"]).decode())
        elif cluster.get("certificate-authority"):
            tls = ssl.create_default_context(cafile=cluster["certificate-authority"])
        else:
            tls = ssl.create_default_context()
        if user.get("client-certificate-data") and user.get("client-key-data"):
            with tempfile.TemporaryDirectory() as tmp:
                cert, key = Path(tmp) / "c.pem", Path(tmp) / "k.pem"
                cert.write_bytes(base64.b64decode(user["client-certificate-data"]))
                key.write_bytes(base64.b64decode(user["client-key-data"]))
                tls.load_cert_chain(str(cert), str(key))
    return cluster["server"].rstrip("/"), headers, tls


def resource_path(resource: str, namespace: str | None = None, name: str = "",
                  subresource: str = "") -> str:
    rt = by_key(resource)
    prefix = f"/apis/{rt.group}/{rt.version}" if rt.group else f"/api/{rt.version}"
    path = prefix
    if rt.namespaced and namespace:
        path += f"/namespaces/{namespace}"
    path += f"/{rt.plural}"
    if name:
        path += f"/{name}"
    if subresource:
        path += f"/{subresource}"
    return path


class HttpWatch:
    """A watch stream over HTTP, consumed like the store's watches."""

    def __init__(self, response: aiohttp.ClientResponse) -> None:
        self._response = response
        self.stopped = False

    async def next(self, timeout: float | None = None) -> WatchEvent | None:
        if self.stopped:
            return None
        try:
            line = await asyncio.wait_for(self._response.content.readline(), timeout)
        except TimeoutError:
            return None
        except (aiohttp.ClientError, ConnectionError):
            self.stop()
            return None
        if not line:
            self.stop()
            return None
        event = json.loads(line)
        if event.get("type") == "ERROR":
            self.stop()
            raise ApiError.from_status(event.get("object") or {})
        return WatchEvent(event["type"], event["object"])

    def __aiter__(self) -> HttpWatch:
        return self

    async def __anext__(self) -> WatchEvent:
        event = await self.next()
        if event is None:
            raise StopAsyncIteration
        return event

    def stop(self) -> None:
        if not self.stopped:
            self.stopped = True
            self._response.release()


class HttpClient:
    def __init__(self, server: str, headers: dict[str, str] | None = None,
                 ssl_context: ssl.SSLContext | None = None, field_manager: str = "kvert", *,
                 token_file: TokenFile | None = None, namespace: str = "") -> None:
        self.server = server.rstrip("/")
        self.headers = {"User-Agent": _USER_AGENT, **(headers or {})}
        self.ssl_context = ssl_context
        self.field_manager = field_manager
        self.token_file = token_file     # each request's bearer token, when it rotates
        self.namespace = namespace       # the service account's namespace, in a cluster
        self._session: aiohttp.ClientSession | None = None

    @classmethod
    def from_kubeconfig(cls, path: Path | str, context: str | None = None,
                        **kwargs: Any) -> HttpClient:
        server, headers, tls = load_kubeconfig(path, context)
        return cls(server, headers, tls, **kwargs)

    @classmethod
    def in_cluster(cls, *, directory: Path = SERVICE_ACCOUNT_DIR, environ: Mapping[str, str] | None = None,
                   **kwargs: Any) -> HttpClient:
        """client-go's ``rest.InClusterConfig``. ``directory`` and ``environ`` stand in for the
        pod's service account mount and environment in tests. Raises InClusterError."""
        env = os.environ if environ is None else environ
        if not in_cluster_environment(env):
            raise InClusterError(NOT_IN_CLUSTER)
        host, port = env["KUBERNETES_SERVICE_HOST"], env["KUBERNETES_SERVICE_PORT"]
        token_path = directory / "token"
        try:
            token = TokenFile(token_path)
        except OSError as e:
            raise InClusterError(f"in-cluster configuration: cannot read the service account token "
                                 f"{token_path}: {e.strerror or e}") from None
        ca = directory / "ca.crt"
        try:
            tls = ssl.create_default_context(cafile=str(ca))
        except (OSError, ssl.SSLError) as e:
            # as client-go: without the CA the system's roots are the trust
            log.error("Expected to load root CA config from %s, but got err: %s", ca, e)
            tls = ssl.create_default_context()
        try:
            namespace = (directory / "namespace").read_text(encoding="utf-8").strip()
        except OSError:
            namespace = ""
        hostport = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
        return cls(f"https://{hostport}", None, tls, token_file=token, namespace=namespace, **kwargs)

    def _auth(self) -> dict[str, str]:
        return self.token_file.header() if self.token_file is not None else {}

    @property
    def session(self) -> aiohttp.ClientSession:
        if self._session is None or self._session.closed:
            connector = aiohttp.TCPConnector(ssl=self.ssl_context if self.ssl_context else False,
                                             limit=64)
            self._session = aiohttp.ClientSession(connector=connector, headers=self.headers)
        return self._session

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()

    async def _call(self, method: str, path: str, query: dict[str, str] | None = None,
                    body: object = None, content_type: str = "application/json") -> Obj:
        url = self.server + path + (f"?{urlencode(query)}" if query else "")
        data = None if body is None else json.dumps(body).encode()
        headers = {"Content-Type": content_type, "Accept": "application/json", **self._auth()}
        async with self.session.request(method, url, data=data, headers=headers) as response:
            text = await response.text()
            payload: Obj
            try:
                payload = json.loads(text) if text else {}
            except ValueError:
                payload = {}
            if response.status >= 400:
                if payload.get("kind") == "Status":
                    raise ApiError.from_status(payload)
                raise InternalError(f"{method} {path}: HTTP {response.status}: {text[:200]}")
            return payload

    @staticmethod
    def _write_query(dry_run: bool, field_manager: str = "") -> dict[str, str]:
        query = {"dryRun": "All"} if dry_run else {}
        if field_manager:
            query["fieldManager"] = field_manager
        return query

    # ---- the Client protocol ---------------------------------------------------

    async def get(self, resource: str, name: str, namespace: str = "") -> Obj:
        return await self._call("GET", resource_path(resource, namespace, name))

    async def list(self, resource: str, *, namespace: str | None = None, label_selector: str = "",
                   field_selector: str = "", limit: int = 0, continue_token: str = "",
                   resource_version: str = "") -> Obj:
        query = {k: v for k, v in {"labelSelector": label_selector, "fieldSelector": field_selector,
                                   "limit": str(limit) if limit else "", "continue": continue_token,
                                   "resourceVersion": resource_version}.items() if v}
        return await self._call("GET", resource_path(resource, namespace), query)

    async def create(self, resource: str, obj: Obj, *, namespace: str | None = None,
                     dry_run: bool = False) -> Obj:
        namespace = namespace or (obj.get("metadata") or {}).get("namespace") or "default"
        return await self._call("POST", resource_path(resource, namespace),
                                self._write_query(dry_run, self.field_manager), obj)

    async def update(self, resource: str, obj: Obj, *, subresource: str = "",
                     dry_run: bool = False) -> Obj:
        meta = obj.get("metadata") or {}
        return await self._call("PUT", resource_path(resource, meta.get("namespace"), meta["name"],
                                                     subresource),
                                self._write_query(dry_run, self.field_manager), obj)

    async def patch(self, resource: str, name: str, patch: Patch, patch_type: str = "merge", *,
                    namespace: str = "", subresource: str = "", dry_run: bool = False) -> Obj:
        return await self._call("PATCH", resource_path(resource, namespace, name, subresource),
                                self._write_query(dry_run, self.field_manager), patch,
                                content_type_of(patch_type))

    async def delete(self, resource: str, name: str, *, namespace: str = "",
                     grace_period_seconds: int | None = None, preconditions: Obj | None = None,
                     dry_run: bool = False, propagation_policy: str | None = None) -> Obj:
        options: dict[str, Any] = {"apiVersion": "v1", "kind": "DeleteOptions"}
        if grace_period_seconds is not None:
            options["gracePeriodSeconds"] = grace_period_seconds
        if preconditions:
            options["preconditions"] = preconditions
        if propagation_policy:
            options["propagationPolicy"] = propagation_policy
        return await self._call("DELETE", resource_path(resource, namespace, name),
                                self._write_query(dry_run), options)

    async def watch(self, resource: str, *, namespace: str | None = None, label_selector: str = "",
                    field_selector: str = "", resource_version: str = "",
                    send_initial_events: bool = False, allow_bookmarks: bool = False) -> HttpWatch:
        query = {"watch": "true"}
        for key, value in (("labelSelector", label_selector), ("fieldSelector", field_selector),
                           ("resourceVersion", resource_version)):
            if value:
                query[key] = value
        if allow_bookmarks:
            query["allowWatchBookmarks"] = "true"
        if send_initial_events:
            query["sendInitialEvents"] = "true"
            query["resourceVersionMatch"] = "NotOlderThan"
        url = self.server + resource_path(resource, namespace) + f"?{urlencode(query)}"
        response = await self.session.get(url, headers=self._auth(), timeout=aiohttp.ClientTimeout(total=None))
        if response.status >= 400:
            text = await response.text()
            response.release()
            payload = json.loads(text) if text.startswith("{") else {}
            if payload.get("kind") == "Status":
                raise ApiError.from_status(payload)
            raise InternalError(f"watch {resource}: HTTP {response.status}")
        return HttpWatch(response)

    async def update_status(self, resource: str, obj: Obj) -> Obj:
        return await self.update(resource, obj, subresource="status")

    async def bind(self, namespace: str, pod_name: str, node_name: str,
                   annotations: dict[str, str] | None = None) -> Obj:
        return await self._call("POST", resource_path("pods", namespace, pod_name, "binding"),
                                None, binding_body(namespace, pod_name, node_name, annotations))

    async def evict(self, namespace: str, pod_name: str, *,
                    grace_period_seconds: int | None = None) -> Obj:
        return await self._call("POST", resource_path("pods", namespace, pod_name, "eviction"),
                                None, eviction_body(namespace, pod_name, grace_period_seconds))

    async def resize(self, namespace: str, pod_name: str, patch: Patch,
                     patch_type: str = "strategic") -> Obj:
        return await self.patch("pods", pod_name, patch, patch_type, namespace=namespace,
                                subresource="resize")

    async def get_scale(self, resource: str, name: str, namespace: str = "") -> Obj:
        return await self._call("GET", resource_path(resource, namespace, name, "scale"))

    async def update_scale(self, resource: str, scale: Obj) -> Obj:
        return await self.update(resource, scale, subresource="scale")

    async def get_path(self, path: str, query: dict[str, str] | None = None) -> Obj:
        """GET an API path the resource methods do not name (``/apis/metrics.k8s.io/...``)."""
        return await self._call("GET", path, query)

    async def create_subresource(self, resource: str, name: str, subresource: str, body: Obj, *,
                                 namespace: str = "") -> Obj:
        return await self._call("POST", resource_path(resource, namespace, name, subresource),
                                None, body)
