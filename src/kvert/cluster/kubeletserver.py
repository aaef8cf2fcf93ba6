"""A node agent's HTTPS endpoint, the kubelet's port 10250, for an agent run as its own
process (``kvert node-agent``): what the API server asks of a node it has no agent for.

Paths are the kubelet's: ``/exec`` and ``/attach/NS/POD/CONTAINER`` and
``/portForward/NS/POD`` (the streams of ``kvert.client.httpstream``),
``/containerLogs/NS/POD/CONTAINER`` (PodLogOptions as query), ``/metrics/cadvisor``,
``/metrics/resource`` (what metrics-server scrapes), ``/stats/summary``, ``/metrics`` and ``/healthz``. Requests are
authenticated and authorized as the kubelet does with ``--client-ca-file``,
``--authentication-token-webhook`` and ``--authorization-mode=Webhook``: a client certificate
the cluster CA signed (the TLS context's verify locations) names the user (common name) and
its groups (organizations); otherwise the bearer token is checked through a TokenReview; then a
SubjectAccessReview for the node's subresource the path maps to (``nodes/proxy`` for streams and
logs as upstream maps ``/containerLogs``, ``nodes/metrics``, ``nodes/stats``, ``nodes/log``), each
answer cached for ten seconds. The serving certificate starts as the agent's own self-signed
one and is replaced, without a restart, by the one the cluster issues through the CSR API
(``kvert.kubelet.servingcert``), which the API server verifies.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import ssl
from collections import OrderedDict
from typing import Any

from aiohttp import web

from kvert.api.errors import ApiError, BadRequest, NotFound
from kvert.apiserver.podlogs import log_options, stream_log
from kvert.auth.authenticator import certificate_user
from kvert.client.base import Client
from kvert.client.httpstream import portforward, remotecommand
from kvert.client.httpstream.remotecommand import stream_options
from kvert.clock import Clock
from kvert.cluster.metrics import kubelet_metrics_text
from kvert.kubelet.agent import NodeAgent
from kvert.kubelet.metrics import resource_metrics
from kvert.kubelet.servingcert import ServingCertificates
from kvert.kubelet.summary import agent_summary

log = logging.getLogger(__name__)

CACHE_SECONDS = 10.0
CACHE_ENTRIES = 1024       # at most this many answers kept: random tokens must not grow it without end
_METHOD_VERBS = {"GET": "get", "HEAD": "get", "POST": "create", "PUT": "update", "PATCH": "patch",
                 "DELETE": "delete"}


def subresource_of(path: str) -> str:
    """The kubelet's authorizer attributes for a path (``pkg/kubelet/server/auth.go``)."""
    if path.startswith("/stats"):
        return "stats"
    if path.startswith("/metrics"):
        return "metrics"
    if path.startswith("/logs"):
        return "log"
    return "proxy"


class DecisionCache:
    """The authentication and authorization answers of the last ``ttl`` seconds, at most
    ``size`` of them (the oldest dropped first), as the kubelet's webhook caches are bounded."""

    def __init__(self, ttl: float = CACHE_SECONDS, size: int = CACHE_ENTRIES) -> None:
        self.ttl = ttl
        self.size = size
        # key -> (when, answer); insertion order is age order, since ``now`` only grows
        self._entries: OrderedDict[tuple, tuple[float, tuple[bool, str | None]]] = OrderedDict()

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, key: tuple, now: float) -> tuple[bool, str | None] | None:
        entry = self._entries.get(key)
        if entry is None or now - entry[0] > self.ttl:
            return None
        return entry[1]

    def put(self, key: tuple, answer: tuple[bool, str | None], now: float) -> None:
        self._entries.pop(key, None)
        self._entries[key] = (now, answer)
        while self._entries:
            oldest = next(iter(self._entries.values()))
            if now - oldest[0] <= self.ttl and len(self._entries) <= self.size:
                break
            self._entries.popitem(last=False)


class KubeletServer:
    """Runs ``agent`` behind its HTTPS endpoint on ``host:port`` (0: any free port, which
    the agent then reports in its Node's ``daemonEndpoints``)."""

    def __init__(self, agent: NodeAgent, client: Client, clock: Clock, *, host: str, port: int,
                 ssl_context: ssl.SSLContext, serving: ServingCertificates | None = None):
        self.agent = agent
        self.client = client
        self.clock = clock
        self.host = host
        self.port = port
        self.ssl_context = ssl_context
        # requests and renews the serving certificate into ssl_context (None: keep it as given)
        self.serving = serving
        # (token, verb, subresource) -> (allowed, user name: None when unauthenticated)
        self._decisions = DecisionCache()
        self._runner: web.AppRunner | None = None

    def stop(self) -> None:
        self.agent.stop()

    async def run(self) -> None:
        app = web.Application(middlewares=[self._authorize])
        app.router.add_get("/healthz", self._healthz)
        for kind in ("exec", "attach"):
            app.router.add_route("*", f"/{kind}/{{namespace}}/{{pod}}/{{container}}", self._remotecommand)
        app.router.add_route("*", "/portForward/{namespace}/{pod}", self._port_forward)
        app.router.add_get("/containerLogs/{namespace}/{pod}/{container}", self._logs)
        app.router.add_get("/metrics/cadvisor", self._cadvisor)
        app.router.add_get("/metrics", self._metrics)
        app.router.add_get("/metrics/resource", self._resource_metrics)
        app.router.add_get("/stats/summary", self._stats_summary)
        self._runner = web.AppRunner(app, access_log=None, handle_signals=False)
        await self._runner.setup()
        site = web.TCPSite(self._runner, self.host, self.port, ssl_context=self.ssl_context)
        await site.start()
        self.port = self._runner.addresses[0][1]     # the one bound for port 0
        self.agent.kubelet_port = self.port
        log.info("node %s: kubelet endpoint at https://%s:%d", self.agent.name, self.host, self.port)
        certificates = asyncio.ensure_future(self.serving.run()) if self.serving is not None else None
        try:
            await self.agent.run()
        finally:
            if certificates is not None:
                certificates.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await certificates
            await self._runner.cleanup()

    # -- authentication and authorization ------------------------------------------------------

    @web.middleware
    async def _authorize(self, request: web.Request, handler: Any) -> web.StreamResponse:
        verb = _METHOD_VERBS.get(request.method, request.method.lower())
        subresource = subresource_of(request.path)
        # a verified client certificate first, as the kubelet's x509 authenticator
        transport = request.transport
        peer = certificate_user(transport.get_extra_info("peercert") if transport is not None else None)
        header = request.headers.get("Authorization", "")
        token = header[7:].strip() if header.lower().startswith("bearer ") else ""
        if peer is None and not token:
            return web.Response(status=401, text="Unauthorized")
        key: tuple = (("x509", peer.name, peer.groups) if peer is not None else token, verb, subresource)
        now = self.clock.now()
        cached = self._decisions.get(key, now)
        if cached is None:
            if peer is not None:
                cached = await self._access(peer.name, list(peer.groups), "", {}, verb, subresource)
            else:
                cached = await self._review(token, verb, subresource)
            self._decisions.put(key, cached, now)
        allowed, user = cached
        if user is None:
            return web.Response(status=401, text="Unauthorized")
        if not allowed:
            return web.Response(status=403, text=f"Forbidden (user={user}, verb={verb}, resource=nodes, "
                                                 f"subresource(s)=[{key[2]}])\n")
        try:
            return await handler(request)
        except ApiError as e:
            return web.json_response(e.to_status(), status=e.code)

    async def _review(self, token: str, verb: str, subresource: str) -> tuple[bool, str | None]:
        """(allowed, user name); the name is None when the token authenticates no one."""
        review = await self.client.create("authentication.k8s.io/tokenreviews", {
            "apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview", "spec": {"token": token}})
        status = review.get("status") or {}
        if not status.get("authenticated"):
            return False, None
        user = status.get("user") or {}
        return await self._access(user.get("username", ""), user.get("groups") or [], user.get("uid", ""),
                                  user.get("extra") or {}, verb, subresource)

    async def _access(self, name: str, groups: list[str], uid: str, extra: dict, verb: str,
                      subresource: str) -> tuple[bool, str | None]:
        """(allowed, name): may the user ``verb`` this node's ``subresource`` (a SubjectAccessReview)."""
        access = await self.client.create("authorization.k8s.io/subjectaccessreviews", {
            "apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview",
            "spec": {"user": name, "groups": groups, "uid": uid, "extra": extra,
                     "resourceAttributes": {"verb": verb, "resource": "nodes", "subresource": subresource,
                                            "name": self.agent.name}}})
        return bool((access.get("status") or {}).get("allowed")), name

    # -- handlers ------------------------------------------------------------------------------

    async def _healthz(self, request: web.Request) -> web.Response:
        return web.Response(text="ok")

    async def _remotecommand(self, request: web.Request) -> web.StreamResponse:
        m = request.match_info
        exec_ = request.path.startswith("/exec/")
        opts = stream_options(request.query, exec_=exec_)

        async def run(io: Any) -> dict:
            async def do_exec(command, io):
                return await self.agent.exec(m["namespace"], m["pod"], m["container"], command, io)

            async def do_attach(io):
                await self.agent.attach(m["namespace"], m["pod"], m["container"], io)
            return await remotecommand.run_exec(do_exec if exec_ else None, do_attach, opts, io)
        return await remotecommand.serve(request, opts, run)

    async def _port_forward(self, request: web.Request) -> web.StreamResponse:
        m = request.match_info

        async def dial(port: int):
            return await self.agent.port_forward(m["namespace"], m["pod"], port)
        return await portforward.serve(request, dial, m["pod"], "")

    async def _logs(self, request: web.Request) -> web.StreamResponse:
        m = request.match_info
        options = log_options(request.query, m["pod"])
        found = self.agent.container_log(m["namespace"], m["pod"], m["container"], previous=options.previous)
        if found is None:
            if options.previous:
                raise BadRequest(f'previous terminated container "{m["container"]}" in pod '
                                 f'"{m["pod"]}" not found')
            raise NotFound("pods/log", m["pod"], f'container "{m["container"]}" in pod "{m["pod"]}" '
                                                 "has no log on this node")
        return await stream_log(request, found, options, self.clock)

    async def _metrics(self, request: web.Request) -> web.Response:
        return web.Response(text=await kubelet_metrics_text(self.agent), content_type="text/plain",
                            charset="utf-8")

    async def _resource_metrics(self, request: web.Request) -> web.Response:
        return web.Response(text=resource_metrics(await self.agent.pod_statuses()),
                            content_type="text/plain", charset="utf-8")

    async def _stats_summary(self, request: web.Request) -> web.Response:
        """The Summary API (``/stats/summary``, PSI included: KEP-4205)."""
        return web.json_response(await agent_summary(self.agent, self.clock.now()))

    async def _cadvisor(self, request: web.Request) -> web.Response:
        return web.Response(text=await self.agent.metrics_text(),
                            content_type="text/plain", charset="utf-8")
