"""``autoscaling.kvert.io/v1`` RecommendationQuery over HTTP (the logic: :mod:`kvert.vpa.query`).

Served like Kubernetes' TokenReview: a namespaced, create-only type that is never stored.
``POST /apis/autoscaling.kvert.io/v1/namespaces/NS/recommendationqueries`` answers ``201``
with the query and its ``status`` (``kubectl create -f query.yaml -o yaml`` prints it); any
other verb or path under the resource is ``405 MethodNotAllowed`` (GET, LIST, WATCH, PUT,
PATCH, DELETE, a named object); a bad query is ``422 Invalid`` with field causes; a body of
another kind or a namespace other than the URL's is ``400``. ``dryRun=All`` answers the same
(nothing is ever written). ``fieldValidation=Strict`` (kubectl's default) refuses unknown
fields with 400, ``Warn`` (the default) answers with Warning headers.

Two servers use it:

* ``kvert up``'s API server: ``ApiServer.recommendation_query`` holds a
  :class:`~kvert.vpa.query.QueryService` over the in-process recommender; while it is set,
  :func:`route` sends the paths here (before the REST handlers) and discovery lists
  :data:`RECOMMENDATION_QUERY` (``stored=False``: not in ``kinds``' table, so the registry,
  store and OpenAPI never see it);
* ``kvert vpa recommender --listen``: :class:`QueryServer`, a small HTTPS server with the
  same handler, the group's discovery documents and ``/healthz``.
"""

from __future__ import annotations

import logging
import ssl
from collections.abc import Coroutine
from typing import Any, Protocol

from aiohttp import web

from kvert.api import kinds
from kvert.api import recommendation_query as q
from kvert.api.errors import ApiError, BadRequest, InternalError, MethodNotAllowed, RouteNotFound
from kvert.api.kinds import ResourceType
from kvert.apiserver import discovery, negotiation
from kvert.apiserver.context import RecommendationService
from kvert.apiserver.openapi import unknown_fields as schema_unknown
from kvert.apiserver.requestinfo import RequestInfo, parse
from kvert.apiserver.responses import WARNINGS, json_response

log = logging.getLogger(__name__)

RECOMMENDATION_QUERY = ResourceType(q.GROUP, q.VERSION, q.KIND, q.PLURAL, True, verbs=("create",),
                                    stored=False)
TYPES: tuple[ResourceType, ...] = (RECOMMENDATION_QUERY,)
COLLECTION_PATH = f"/apis/{q.GROUP}/{q.VERSION}/namespaces/{{namespace}}/{q.PLURAL}"

_FIELD_VALIDATION = ("Strict", "Warn", "Ignore")


class QueryServing(Protocol):
    """A server that may answer RecommendationQueries: the API server's context, or
    :class:`QueryServer`."""

    @property
    def recommendation_query(self) -> RecommendationService | None: ...


def served_types(server: QueryServing) -> list[ResourceType]:
    """What discovery adds for this server: the type while a query service is set."""
    return list(TYPES) if getattr(server, "recommendation_query", None) is not None else []


def route(server: QueryServing,
          request: web.Request) -> Coroutine[Any, Any, web.Response] | None:
    """The handler coroutine for a RecommendationQuery path (to await), or None."""
    service = getattr(server, "recommendation_query", None)
    if service is None or not request.path.startswith(f"/apis/{q.GROUP}/"):
        return None
    try:
        info = parse(request.path)
    except ApiError:
        return None
    if not info.is_resource:
        return None
    return serve(service, request, info)


async def serve(service: RecommendationService, request: web.Request,
                info: RequestInfo) -> web.Response:
    """One request on the resource's paths (``info``: its RequestInfo)."""
    if (info.group, info.version, info.resource) != (q.GROUP, q.VERSION, q.PLURAL) or info.subresource \
            or not info.namespace:
        raise RouteNotFound()
    if request.method != "POST" or info.name or info.legacy_watch:
        raise MethodNotAllowed()
    body = await negotiation.read_object(request, q.API_VERSION, q.KIND)
    meta = body.get("metadata")
    if isinstance(meta, dict) and meta.get("namespace") and meta["namespace"] != info.namespace:
        raise BadRequest("the namespace of the provided object does not match the namespace sent on "
                         "the request")
    _dry_run(request)
    warnings = _check_fields(request, body)
    try:
        answered = await service.answer(body, info.namespace)
    except ApiError:
        raise
    except Exception as e:  # noqa: BLE001 - a Status, never a dropped connection
        log.exception("RecommendationQuery failed")
        raise InternalError(f"Internal error occurred: {type(e).__name__}: {e}") from None
    if warnings:
        request[WARNINGS] = warnings
    return json_response(answered, 201)


def _dry_run(request: web.Request) -> None:
    for v in request.query.getall("dryRun", []):
        if v != "All":
            raise BadRequest(f'Invalid dry run value: unsupported dry run value "{v}": supported values: "All"')


def unknown_fields(body: dict[str, Any]) -> list[str]:
    """Paths of fields a RecommendationQuery does not declare (the pod checked against the
    Pod schema)."""
    out: list[str] = []
    for key in body:
        if key not in ("apiVersion", "kind", "metadata", "spec", "status"):
            out.append(key)
    if isinstance(body.get("metadata"), dict):
        probe = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": body["metadata"]}
        out += [p for p in schema_unknown(kinds.all_types(), probe) if p.startswith("metadata")]
    spec = body.get("spec")
    if isinstance(spec, dict):
        out += [f"spec.{k}" for k in spec if k != "pod"]
        pod = spec.get("pod")
        if isinstance(pod, dict):
            probe = {**pod, "apiVersion": "v1", "kind": "Pod"}
            out += [f"spec.pod.{p}" for p in schema_unknown(kinds.all_types(), probe)]
    status = body.get("status")
    if isinstance(status, dict):
        out += [f"status.{k}" for k in status if k not in ("recommendation", "error")]
    return [p for p in out if "$" not in p]


def _check_fields(request: web.Request, body: dict[str, Any]) -> list[str]:
    mode = request.query.get("fieldValidation", "Warn")
    if mode not in _FIELD_VALIDATION:
        raise BadRequest(f'fieldValidation: Unsupported value: "{mode}": supported values: '
                         '"Ignore", "Strict", "Warn"')
    if mode == "Ignore":
        return []
    unknown = unknown_fields(body)
    if unknown and mode == "Strict":
        problems = ", ".join(f'unknown field "{p}"' for p in unknown)
        raise BadRequest(f'{q.KIND} in version "{q.VERSION}" cannot be handled as a {q.KIND}: '
                         f"strict decoding error: {problems}")
    return [f'unknown field "{p}"' for p in unknown]


# -- a standalone server (kvert vpa recommender --listen) -------------------------------------------

class QueryServer:
    """The RecommendationQuery API on its own HTTPS port: ``POST`` on the collection path,
    discovery of ``autoscaling.kvert.io`` (``/apis``, ``/apis/autoscaling.kvert.io``,
    ``/apis/autoscaling.kvert.io/v1``) and ``/healthz``. No authentication: listen on loopback
    (the default) or behind something that authenticates. ``service`` is None while this
    process's recommender does not lead (the API is not served until one is set)."""

    def __init__(self, service: RecommendationService | None, *, host: str = "127.0.0.1", port: int = 0,
                 ssl_context: ssl.SSLContext | None = None) -> None:
        self.recommendation_query: RecommendationService | None = service
        self.host = host
        self.port = port
        self.ssl_context = ssl_context
        self._runner: web.AppRunner | None = None

    @property
    def url(self) -> str:
        scheme = "https" if self.ssl_context is not None else "http"
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{scheme}://{host}:{self.port}"

    def app(self) -> web.Application:
        app = web.Application(middlewares=[self._errors], client_max_size=negotiation.MAX_BODY_BYTES + 1)
        app.router.add_route("*", "/{tail:.*}", self._dispatch)
        return app

    async def start(self) -> str:
        self._runner = web.AppRunner(self.app(), access_log=None, handle_signals=False, shutdown_timeout=2.0)
        await self._runner.setup()
        site = web.TCPSite(self._runner, self.host, self.port, ssl_context=self.ssl_context,
                           reuse_address=True)
        await site.start()
        self.port = self._runner.addresses[0][1]
        return self.url

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    @web.middleware
    async def _errors(self, request: web.Request, handler: Any) -> web.StreamResponse:
        try:
            response = await handler(request)
            for warning in request.get(WARNINGS, ()):
                response.headers.add("Warning", '299 - "' + warning.replace('"', '\\"') + '"')
            return response
        except ApiError as e:
            return json_response(e.to_status(), e.code)

    async def _dispatch(self, request: web.Request) -> web.StreamResponse:
        path = request.path.rstrip("/") or "/"
        if path in ("/healthz", "/livez", "/readyz"):
            return web.Response(text="ok", content_type="text/plain")
        handler = route(self, request)
        if handler is not None:
            return await handler
        if request.method not in ("GET", "HEAD"):
            raise MethodNotAllowed()
        if path == "/apis":
            return json_response(discovery.api_group_list(TYPES))
        if path == f"/apis/{q.GROUP}":
            return json_response(discovery.api_group(TYPES, q.GROUP))
        if path == f"/apis/{q.GROUP}/{q.VERSION}":
            return json_response(discovery.api_resource_list(TYPES, q.GROUP, q.VERSION))
        raise RouteNotFound()


__all__ = ["COLLECTION_PATH", "QueryServer", "RECOMMENDATION_QUERY", "TYPES", "route", "serve",
           "served_types", "unknown_fields"]
