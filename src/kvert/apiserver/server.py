"""The API server: the Kubernetes REST API over HTTPS, from a store, through the registry.

One aiohttp application. Every request is authenticated (a client certificate the cluster
CA signed, or a bearer token), may impersonate another user
(``kvert.apiserver.impersonation``), is authorized (when the server has an
authorizer: ``kvert.apiserver.authorization``), routed to discovery / OpenAPI / health, or
to a resource handler, and every failure leaves as a Kubernetes ``Status``: an unexpected
exception is a 500 Status, never a dropped connection.

Authorization is on when ``ApiServer(..., authorizer=...)`` is given an authorizer, e.g.
``kvert.auth.default_authorizer(store)`` (kube-apiserver's ``--authorization-mode=Node,RBAC``
with ``system:masters`` always allowed); with ``authorizer=None`` every authenticated
request is allowed, as before RBAC existed. The health and version paths are answered to
anyone, as kube-apiserver's ``system:public-info-viewer`` role lets unauthenticated users.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import platform
from typing import Any

from aiohttp import web

import kvert
from kvert.api import kinds
from kvert.api.errors import ApiError, InternalError, MethodNotAllowed, RouteNotFound, Unauthorized
from kvert.apiserver import discovery, metrics, negotiation, openapi, recommendation_query, rest
from kvert.apiserver.authorization import forbidden, request_attributes
from kvert.apiserver.impersonation import impersonated
from kvert.apiserver.admission import bootstrap, recalculate_quota_usage
from kvert.apiserver.requestinfo import USER
from kvert.auth.attributes import Decision
from kvert.auth.authenticator import certificate_user
from kvert.auth.tokens import TokenAuthenticator, bearer_token
from kvert.apiserver.metrics import NodeMetricsProvider, RequestMetrics
from kvert.apiserver.requestinfo import parse
from kvert.apiserver.watch import WatchHub
from kvert.clock import Clock
from kvert.registry import AdmissionChain, Registry
from kvert.registry.tokenrequest import TokenRequests

log = logging.getLogger(__name__)

KUBERNETES_VERSION = ("1", "35")
# the longest request line or header line read (Go's limit is 1 MiB for all headers)
MAX_HEADER_LINE = 64 * 1024
STREAMING_SUBRESOURCES = frozenset({"exec", "attach", "portforward"})
_PUBLIC_PATHS = frozenset({"/healthz", "/livez", "/readyz", "/version"})
_DISCOVERY_CONTENT = "application/json;g=apidiscovery.k8s.io;v={v};as=APIGroupDiscoveryList"


class ApiServer:
    # kube-apiserver's http.Server (secure_serving.go): the TLS handshake and a request's
    # headers must arrive within ReadHeaderTimeout, a connection idle between requests is
    # closed after IdleTimeout. Settable per instance before start().
    header_timeout = 32.0
    idle_timeout = 90.0

    def __init__(self, store: Any, clock: Clock, *, authenticator: TokenAuthenticator | None,
                 admission: AdmissionChain | None = None, seed: int | None = None,
                 metrics_provider: NodeMetricsProvider | None = None,
                 token_requests: TokenRequests | None = None, authorizer: Any = None):
        self.store = store
        self.clock = clock
        self.authenticator = authenticator
        # kvert.auth's authorize(attrs) -> (Decision, reason), or None: everything allowed
        self.authorizer = authorizer
        # how this server authenticates to node agents' kubelet endpoints (kubeletclient)
        self.kubelet_client_token: str | None = None
        # the audiences a TokenReview without its own checks tokens against (--api-audiences)
        self.api_audiences: tuple[str, ...] = ("https://kubernetes.default.svc.cluster.local",)
        self.registry = Registry(store, clock, admission, seed=seed, token_requests=token_requests)
        self.watches = WatchHub(self)
        self.address = ""
        # node proxy metrics, /metrics and metrics.k8s.io (kvert.apiserver.metrics)
        self.metrics_provider = metrics_provider
        self.request_metrics = RequestMetrics()
        # autoscaling.kvert.io RecommendationQuery: a kvert.vpa.query.QueryService, or None
        # (then the group is not served; kvert.apiserver.recommendation_query)
        self.recommendation_query: Any = None
        self._runner: web.AppRunner | None = None
        self._tasks: list[asyncio.Task] = []
        # connections whose first request has not arrived: their header deadline
        self._awaiting_headers: dict[Any, asyncio.TimerHandle] = {}

    # ---- lifecycle -------------------------------------------------------------

    def make_app(self) -> web.Application:
        app = web.Application(middlewares=[self._headers_arrived, self.request_metrics.middleware,
                                           self._errors, self._authenticate],
                              client_max_size=negotiation.MAX_BODY_BYTES + 1)
        app.router.add_route("*", "/{tail:.*}", self._dispatch, expect_handler=_expect)
        return app

    async def start(self, host: str = "127.0.0.1", port: int = 6443, ssl_context=None) -> str:
        """Listen; returns the base URL (with the real port when ``port`` is 0)."""
        self._runner = web.AppRunner(
            self.make_app(), access_log=None, handle_signals=False, shutdown_timeout=2.0,
            keepalive_timeout=self.idle_timeout, max_line_size=MAX_HEADER_LINE,
            max_field_size=MAX_HEADER_LINE,
            # request bodies are taken as sent (kube-apiserver does not inflate them): no
            # gzip bomb gets past the body limit
            auto_decompress=False)
        await self._runner.setup()
        site = _DeadlineSite(self._runner, host, port, ssl_context, self.header_timeout,
                             self._awaiting_headers)
        await site.start()
        bound_host, bound_port = self._runner.addresses[0][:2]
        scheme = "https" if ssl_context is not None else "http"
        shown = f"[{bound_host}]" if ":" in bound_host else bound_host
        self.address = f"{scheme}://{shown}:{bound_port}"
        return self.address

    def run_background(self, coro) -> asyncio.Task:
        task = asyncio.ensure_future(coro)
        self._tasks.append(task)
        return task

    async def stop(self) -> None:
        self.watches.stop_all()
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            try:
                await task
            except (asyncio.CancelledError, Exception):
                pass
        self._tasks.clear()
        stop_authorizer = getattr(self.authorizer, "stop", None)
        if stop_authorizer is not None:
            stop_authorizer()
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def compact_history(self, interval: float, *, at_start: bool = True) -> None:
        """Forget history as kube-apiserver does: at start (its watch cache begins empty, so a
        watch from an older version is answered 410 Expired; not on a store other servers
        share), then every ``interval`` seconds up to the revision seen one interval earlier
        (its etcd compaction)."""
        mark = self.store.current_revision()
        if at_start:
            self.store.compact(mark)
        while True:
            await self.clock.sleep(interval)
            self.store.compact(mark)
            mark = self.store.current_revision()

    async def resync_quotas(self, interval: float) -> None:
        """The ResourceQuota controller's periodic sync: usage released by pods that shrank
        or went away is recomputed from the live pods."""
        while True:
            await self.clock.sleep(interval)
            try:
                recalculate_quota_usage(self.store, clock=self.clock)
            except ApiError as e:
                log.warning("quota resync failed: %s", e)

    async def bootstrap(self) -> None:
        """Objects every cluster has: the system namespaces and priority classes."""
        await bootstrap(self.registry)

    # ---- middleware ------------------------------------------------------------

    @web.middleware
    async def _headers_arrived(self, request: web.Request, handler) -> web.StreamResponse:
        deadline = self._awaiting_headers.pop(request.protocol, None)
        if deadline is not None:
            deadline.cancel()
        return await handler(request)

    @web.middleware
    async def _errors(self, request: web.Request, handler) -> web.StreamResponse:
        try:
            response = await handler(request)
            for warning in request.get(rest.WARNINGS, ()):
                response.headers.add("Warning", f'299 - "{_quote(warning)}"')
            return response
        except ApiError as e:
            return rest.json_response(e.to_status(), e.code)
        except web.HTTPRedirection:
            raise
        except web.HTTPException as e:
            # aiohttp's own refusals (e.g. a body over the size limit) as Status objects too
            err = ApiError(e.reason or "request refused", e.status, _reason_for(e.status))
            return rest.json_response(err.to_status(), e.status)
        except asyncio.CancelledError:
            raise
        except Exception as e:  # noqa: BLE001 - the last line of defence: answer, never hang
            log.exception("internal error serving %s %s", request.method, request.path)
            err = InternalError(f"Internal error occurred: {type(e).__name__}: {e}")
            return rest.json_response(err.to_status(), 500)

    @web.middleware
    async def _authenticate(self, request: web.Request, handler) -> web.StreamResponse:
        if self.authenticator is not None:
            credentials = request.headers.get("Authorization")
            public = request.path.rstrip("/") in _PUBLIC_PATHS
            transport = request.transport
            user = certificate_user(transport.get_extra_info("peercert") if transport else None)
            # A credential that fails is a 401 even on a public path: kube-apiserver's bearer
            # token authenticator errs on an unknown token, and that error stops its chain
            # before the anonymous authenticator (union.NewFailOnError).
            if user is None and (not public or bearer_token(credentials) is not None):
                user = self.authenticator.authenticate(credentials)
                if user is None:
                    raise Unauthorized()
            if user is not None:
                request[USER] = user
                if not public:
                    self._authorize(request, user)
        return await handler(request)

    def _authorize(self, request: web.Request, user: Any) -> None:
        """Impersonation, then the authorizer's decision (403 unless allowed)."""
        acting = impersonated(request, user, self.authorizer)
        if acting is not None:
            request[USER] = user = acting
        if self.authorizer is not None:
            attrs = request_attributes(request, user)
            decision, reason = self.authorizer.authorize(attrs)
            if decision is not Decision.ALLOW:
                raise forbidden(attrs, reason)
            if attrs.verb == "get" and attrs.subresource in STREAMING_SUBRESOURCES:
                # AuthorizePodWebsocketUpgradeCreatePermission (on in 1.35): a WebSocket GET
                # to exec, attach or portforward also needs "create", as the SPDY POST does
                attrs = dataclasses.replace(attrs, verb="create")
                decision, reason = self.authorizer.authorize(attrs)
                if decision is not Decision.ALLOW:
                    raise forbidden(attrs, reason)

    # ---- routing ---------------------------------------------------------------

    async def _dispatch(self, request: web.Request) -> web.StreamResponse:
        served_by_metrics = metrics.route(self, request)   # node proxy, /metrics, metrics.k8s.io
        if served_by_metrics is not None:
            return await served_by_metrics
        query = recommendation_query.route(self, request)   # autoscaling.kvert.io, never stored
        if query is not None:
            return await query
        info = parse(request.path)
        if info.is_resource:
            return await rest.handle(self, request, info)
        if request.method not in ("GET", "HEAD"):
            raise MethodNotAllowed()
        return self._non_resource(request)

    def _non_resource(self, request: web.Request) -> web.StreamResponse:
        path = request.path.rstrip("/") or "/"
        if path in ("/healthz", "/livez", "/readyz"):
            return web.Response(text="ok", content_type="text/plain")
        if path == "/version":
            return rest.json_response(self.version_info())
        types = kinds.all_types()
        # discovery also lists the unstored metrics.k8s.io types when node metrics are served
        served = types + list(metrics.METRICS_TYPES) if self.metrics_provider is not None else types
        served = served + recommendation_query.served_types(self)
        accept = negotiation.parse_accept(request.headers.get("Accept"))
        if path in ("/api", "/apis"):
            # an unserved version is not negotiated: legacy discovery answers, as upstream
            media = negotiation.wants(accept, "APIGroupDiscoveryList", "apidiscovery.k8s.io",
                                      ("v2", "v2beta1"))
            if media is not None:
                version = media.param("v") or "v2"
                return rest.json_response(
                    discovery.aggregated_discovery(served, legacy=path == "/api", version=version),
                    content_type=_DISCOVERY_CONTENT.format(v=version))
            if path == "/api":
                return rest.json_response(discovery.api_versions(request.host))
            return rest.json_response(discovery.api_group_list(served))
        parts = path.strip("/").split("/")
        document = None
        if parts[0] == "api" and len(parts) == 2:
            document = discovery.api_resource_list(served, "", parts[1])
        elif parts[0] == "apis" and len(parts) == 2:
            document = discovery.api_group(served, parts[1])
        elif parts[0] == "apis" and len(parts) == 3:
            document = discovery.api_resource_list(served, parts[1], parts[2])
        elif path == "/openapi/v2":
            return _openapi_v2(types, accept)
        elif path == "/openapi/v3":
            document = openapi.openapi_v3_index(types)
        elif parts[:2] == ["openapi", "v3"] and len(parts) > 2:
            return _openapi_v3(types, "/".join(parts[2:]), request.query.get("hash", ""))
        if document is None:
            raise RouteNotFound()
        return rest.json_response(document)

    def version_info(self) -> dict:
        major, minor = KUBERNETES_VERSION
        return {"major": major, "minor": minor,
                "gitVersion": f"v{major}.{minor}.0+kvert-{kvert.__version__}",
                "gitCommit": "", "gitTreeState": "clean", "buildDate": "1970-01-01T00:00:00Z",
                "goVersion": f"python{platform.python_version()}", "compiler": "cpython",
                "platform": f"{platform.system().lower()}/{platform.machine()}"}


async def _expect(request: web.Request) -> web.StreamResponse | None:
    """``Expect``: 100-continue is honoured, anything else is Go's bodiless 417 (aiohttp's
    own handler fails on a value that is not ASCII)."""
    if request.headers.get("Expect", "").lower() == "100-continue":
        if request.version >= (1, 1):
            await request.writer.write(b"HTTP/1.1 100 Continue\r\n\r\n")
            request.writer.output_size = 0
        return None
    return web.Response(status=417, headers={"Connection": "close"})


class _DeadlineSite(web.BaseSite):
    """A TCP site whose connections must complete the TLS handshake and send their first
    request's headers within ``header_timeout`` seconds, or are closed (later requests are
    bounded by the idle timeout, which aiohttp applies to partial requests too)."""

    def __init__(self, runner: web.AppRunner, host: str, port: int, ssl_context: Any,
                 header_timeout: float, awaiting: dict):
        super().__init__(runner, ssl_context=ssl_context)
        self._host, self._port = host, port
        self._header_timeout = header_timeout
        self._awaiting = awaiting

    @property
    def name(self) -> str:
        return f"{'https' if self._ssl_context else 'http'}://{self._host}:{self._port}"

    async def start(self) -> None:
        await super().start()
        loop = asyncio.get_running_loop()
        self._server = await loop.create_server(
            self._connection, self._host, self._port, ssl=self._ssl_context,
            backlog=self._backlog, reuse_address=True,
            ssl_handshake_timeout=self._header_timeout if self._ssl_context else None)

    def _connection(self) -> Any:
        server = self._runner.server
        assert server is not None
        protocol = server()
        self._awaiting[protocol] = asyncio.get_running_loop().call_later(
            self._header_timeout, self._expire, protocol)
        return protocol

    def _expire(self, protocol: Any) -> None:
        if self._awaiting.pop(protocol, None) is not None:
            protocol.force_close()


def _openapi_v2(types, accept) -> web.Response:
    # kubectl asks for protobuf only; Go's parser refuses the "@" form as a Content-Type.
    if any(m.type == openapi.V2_PROTOBUF_ACCEPT for m in accept) and not any(
            m.type in ("application/json", "*/*") for m in accept):
        return web.Response(body=openapi.openapi_v2_protobuf(types),
                            headers={"Content-Type": openapi.V2_PROTOBUF_MEDIA_TYPE})
    return web.Response(body=openapi.openapi_v2_json(types),
                        headers={"Content-Type": "application/json"})


def _openapi_v3(types, path: str, wanted_hash: str) -> web.Response:
    found = openapi.openapi_v3_json(types, path)
    if found is None:
        raise RouteNotFound()
    body, digest = found
    if wanted_hash and wanted_hash != digest:
        # As kube-apiserver: a stale hash is redirected to the document's current one.
        raise web.HTTPMovedPermanently(f"/openapi/v3/{path}?hash={digest}")
    cache = "public, immutable" if wanted_hash else "no-cache, private"
    return web.Response(body=body, headers={"Content-Type": "application/json", "ETag": f'"{digest}"',
                                            "Cache-Control": cache})


def _quote(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"')


def _reason_for(code: int) -> str:
    return {400: "BadRequest", 404: "NotFound", 405: "MethodNotAllowed",
            413: "RequestEntityTooLarge", 415: "UnsupportedMediaType"}.get(code, "InternalError")
