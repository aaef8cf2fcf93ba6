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
import ssl
from collections.abc import Coroutine, Sequence
from typing import Any

from aiohttp import web
from aiohttp.typedefs import Handler

from kvert.api import kinds, version
from kvert.api.errors import ApiError, InternalError, MethodNotAllowed, RouteNotFound, Unauthorized
from kvert.api.kinds import ResourceType
from kvert.apiserver import discovery, metrics, negotiation, openapi, recommendation_query, rest
from kvert.apiserver.admission import bootstrap
from kvert.apiserver.authorization import forbidden, request_attributes
from kvert.apiserver.background import CoroutineComponent, HistoryCompaction, QuotaResync
from kvert.apiserver.context import RecommendationService, RequestAuthenticator, ServerContext
from kvert.apiserver.deadline import DEFAULT_REQUEST_TIMEOUT, RequestDeadline
from kvert.apiserver.impersonation import impersonated
from kvert.apiserver.inflight import InflightLimit
from kvert.apiserver.metrics import NodeMetricsProvider, RequestMetrics
from kvert.apiserver.negotiation import MediaType
from kvert.apiserver.requestinfo import USER, parse
from kvert.apiserver.responses import WARNINGS, json_response, warning_header
from kvert.apiserver.watch import WatchHub
from kvert.auth.attributes import Decision
from kvert.auth.authenticator import certificate_user
from kvert.auth.authorizer import Authorizer
from kvert.auth.tokens import bearer_token
from kvert.auth.user import User
from kvert.clock import Clock
from kvert.clock.component import Component
from kvert.registry import AdmissionChain, Registry
from kvert.registry.tokenrequest import TokenRequests
from kvert.store.base import Store

log = logging.getLogger(__name__)

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
    # --request-timeout: the body of a request that is not long-running must arrive within
    # it (kvert.apiserver.deadline); 0: no limit
    request_timeout = DEFAULT_REQUEST_TIMEOUT

    def __init__(self, store: Store, clock: Clock, *, authenticator: RequestAuthenticator | None,
                 admission: AdmissionChain | None = None, seed: int | None = None,
                 metrics_provider: NodeMetricsProvider | None = None,
                 token_requests: TokenRequests | None = None,
                 authorizer: Authorizer | None = None) -> None:
        self.store = store
        self.clock = clock
        self.registry = Registry(store, clock, admission, seed=seed, token_requests=token_requests)
        self.watches = WatchHub(self.registry, clock)
        # apiserver_request_total of /metrics (kvert.apiserver.metrics)
        self.request_metrics = RequestMetrics()
        # what the request handlers get of this server; the settings below live there
        self.context = ServerContext(store=store, clock=clock, registry=self.registry,
                                     watches=self.watches, request_metrics=self.request_metrics,
                                     authenticator=authenticator, authorizer=authorizer,
                                     metrics_provider=metrics_provider)
        # --max-requests-inflight / --max-mutating-requests-inflight (kvert.apiserver.inflight)
        self.inflight = InflightLimit()
        self.address = ""
        self._runner: web.AppRunner | None = None
        self._background: list[tuple[Component, asyncio.Task[None]]] = []
        # connections whose first request has not arrived: their header deadline
        self._awaiting_headers: dict[Any, asyncio.TimerHandle] = {}

    # ---- settings (kept in the handlers' context) ----------------------------------

    @property
    def authenticator(self) -> RequestAuthenticator | None:
        return self.context.authenticator

    @authenticator.setter
    def authenticator(self, value: RequestAuthenticator | None) -> None:
        self.context.authenticator = value

    @property
    def authorizer(self) -> Authorizer | None:
        """kvert.auth's ``authorize(attrs) -> (Decision, reason)``, or None: everything allowed."""
        return self.context.authorizer

    @authorizer.setter
    def authorizer(self, value: Authorizer | None) -> None:
        self.context.authorizer = value

    @property
    def metrics_provider(self) -> NodeMetricsProvider | None:
        return self.context.metrics_provider

    @metrics_provider.setter
    def metrics_provider(self, value: NodeMetricsProvider | None) -> None:
        self.context.metrics_provider = value

    @property
    def kubelet_tls(self) -> ssl.SSLContext | None:
        """How this server dials node agents' kubelet endpoints (kubeletclient)."""
        return self.context.kubelet_tls

    @kubelet_tls.setter
    def kubelet_tls(self, value: ssl.SSLContext | None) -> None:
        self.context.kubelet_tls = value

    @property
    def api_audiences(self) -> tuple[str, ...]:
        """The audiences a TokenReview without its own checks tokens against (--api-audiences)."""
        return self.context.api_audiences

    @api_audiences.setter
    def api_audiences(self, value: tuple[str, ...]) -> None:
        self.context.api_audiences = value

    @property
    def recommendation_query(self) -> RecommendationService | None:
        """autoscaling.kvert.io RecommendationQuery: a kvert.vpa.query.QueryService, or None
        (then the group is not served; kvert.apiserver.recommendation_query)."""
        return self.context.recommendation_query

    @recommendation_query.setter
    def recommendation_query(self, value: RecommendationService | None) -> None:
        self.context.recommendation_query = value

    # ---- lifecycle -------------------------------------------------------------

    def make_app(self) -> web.Application:
        app = web.Application(middlewares=[self._headers_arrived,
                                           RequestDeadline(self.request_timeout).middleware,
                                           self.request_metrics.middleware,
                                           self._errors, self._authenticate, self.inflight.middleware],
                              client_max_size=negotiation.MAX_BODY_BYTES + 1)
        app.router.add_route("*", "/{tail:.*}", self._dispatch, expect_handler=_expect)
        return app

    async def start(self, host: str = "127.0.0.1", port: int = 6443,
                    ssl_context: ssl.SSLContext | None = None) -> str:
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

    # ---- background work -------------------------------------------------------

    def history_compaction(self, interval: float, *, at_start: bool = True) -> HistoryCompaction:
        """The component forgetting this server's history (``background.HistoryCompaction``)."""
        return HistoryCompaction(self.store, self.clock, interval, at_start=at_start)

    def quota_resync(self, interval: float) -> QuotaResync:
        """The component recomputing ResourceQuota usage (``background.QuotaResync``)."""
        return QuotaResync(self.store, self.clock, interval)

    def background_components(self, *, compaction_interval: float, compact_at_start: bool = True,
                              quota_resync_interval: float) -> dict[str, Component]:
        """This server's periodic work by name, for a supervisor to run (``Supervisor.add``)."""
        return {"apiserver-compaction": self.history_compaction(compaction_interval,
                                                                at_start=compact_at_start),
                "apiserver-quota-resync": self.quota_resync(quota_resync_interval)}

    def run_background(self, work: Component | Coroutine[Any, Any, Any]) -> asyncio.Task[None]:
        """Run a component (or a coroutine) until ``stop()``; a crash is logged when it
        happens. A supervisor, which reports crashes to its owner, should be preferred."""
        component = work if not isinstance(work, Coroutine) else CoroutineComponent(work)
        task = asyncio.ensure_future(component.run())
        task.add_done_callback(_log_crash)
        self._background.append((component, task))
        return task

    async def compact_history(self, interval: float, *, at_start: bool = True) -> None:
        """``history_compaction(...)`` run until cancelled."""
        await self.history_compaction(interval, at_start=at_start).run()

    async def stop(self) -> None:
        self.watches.stop_all()
        for component, task in self._background:
            component.stop()
            task.cancel()
        # stopping the server never fails for its background work: crashes were logged
        await asyncio.gather(*(task for _, task in self._background), return_exceptions=True)
        self._background.clear()
        stop_authorizer = getattr(self.authorizer, "stop", None)
        if stop_authorizer is not None:
            stop_authorizer()
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def bootstrap(self) -> None:
        """Objects every cluster has: the system namespaces and priority classes."""
        await bootstrap(self.registry)

    # ---- middleware ------------------------------------------------------------

    @web.middleware
    async def _headers_arrived(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        deadline = self._awaiting_headers.pop(request.protocol, None)
        if deadline is not None:
            deadline.cancel()
        return await handler(request)

    @web.middleware
    async def _errors(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        try:
            response = await handler(request)
            if not response.prepared:    # a streamed response sent its own (responses.stream_json)
                for warning in request.get(WARNINGS, ()):
                    response.headers.add("Warning", warning_header(warning))
            return response
        except ApiError as e:
            return json_response(e.to_status(), e.code)
        except web.HTTPRedirection:
            raise
        except web.HTTPException as e:
            # aiohttp's own refusals (e.g. a body over the size limit) as Status objects too
            err = ApiError(e.reason or "request refused", e.status, _reason_for(e.status))
            return json_response(err.to_status(), e.status)
        except asyncio.CancelledError:
            raise
        except Exception as e:  # noqa: BLE001 - the last line of defence: answer, never hang
            log.exception("internal error serving %s %s", request.method, request.path)
            err = InternalError(f"Internal error occurred: {type(e).__name__}: {e}")
            return json_response(err.to_status(), 500)

    @web.middleware
    async def _authenticate(self, request: web.Request, handler: Handler) -> web.StreamResponse:
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

    def _authorize(self, request: web.Request, user: User) -> None:
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
        served_by_metrics = metrics.route(self.context, request)   # node proxy, /metrics, metrics.k8s.io
        if served_by_metrics is not None:
            return await served_by_metrics
        query = recommendation_query.route(self.context, request)   # autoscaling.kvert.io, never stored
        if query is not None:
            return await query
        info = parse(request.path)
        if info.is_resource:
            return await rest.handle(self.context, request, info)
        if request.method not in ("GET", "HEAD"):
            raise MethodNotAllowed()
        return self._non_resource(request)

    def _non_resource(self, request: web.Request) -> web.StreamResponse:
        path = request.path.rstrip("/") or "/"
        if path in ("/healthz", "/livez", "/readyz"):
            return web.Response(text="ok", content_type="text/plain")
        if path == "/version":
            return json_response(self.version_info())
        types = kinds.all_types()
        # discovery also lists the unstored metrics.k8s.io types when node metrics are served
        served = types + list(metrics.METRICS_TYPES) if self.metrics_provider is not None else types
        served = served + recommendation_query.served_types(self.context)
        accept = negotiation.parse_accept(request.headers.get("Accept"))
        if path in ("/api", "/apis"):
            # an unserved version is not negotiated: legacy discovery answers, as upstream
            media = negotiation.wants(accept, "APIGroupDiscoveryList", "apidiscovery.k8s.io",
                                      ("v2", "v2beta1"))
            if media is not None:
                version = media.param("v") or "v2"
                return json_response(
                    discovery.aggregated_discovery(served, legacy=path == "/api", version=version),
                    content_type=_DISCOVERY_CONTENT.format(v=version))
            if path == "/api":
                return json_response(discovery.api_versions(request.host))
            return json_response(discovery.api_group_list(served))
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
        return json_response(document)

    def version_info(self) -> dict[str, str]:
        return {"major": str(version.MAJOR), "minor": str(version.MINOR),
                "gitVersion": version.SERVER_GIT_VERSION,
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
                 header_timeout: float, awaiting: dict[Any, asyncio.TimerHandle]):
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


def _openapi_v2(types: Sequence[ResourceType], accept: list[MediaType]) -> web.Response:
    # kubectl asks for protobuf only; Go's parser refuses the "@" form as a Content-Type.
    if any(m.type == openapi.V2_PROTOBUF_ACCEPT for m in accept) and not any(
            m.type in ("application/json", "*/*") for m in accept):
        return web.Response(body=openapi.openapi_v2_protobuf(types),
                            headers={"Content-Type": openapi.V2_PROTOBUF_MEDIA_TYPE})
    return web.Response(body=openapi.openapi_v2_json(types),
                        headers={"Content-Type": "application/json"})


def _openapi_v3(types: Sequence[ResourceType], path: str, wanted_hash: str) -> web.Response:
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


def _reason_for(code: int) -> str:
    return {400: "BadRequest", 404: "NotFound", 405: "MethodNotAllowed",
            413: "RequestEntityTooLarge", 415: "UnsupportedMediaType"}.get(code, "InternalError")


def _log_crash(task: asyncio.Task[None]) -> None:
    """A background component that ended with an exception, logged as it happens."""
    if not task.cancelled() and task.exception() is not None:
        log.error("background work of the API server crashed", exc_info=task.exception())
