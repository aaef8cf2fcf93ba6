"""Node and API server metrics, served the way a real cluster serves them.

Three things a monitoring stack reads from a Kubernetes cluster, all behind the API
server's bearer-token authentication like every other path:

* the **node proxy** paths Prometheus' ``kubernetes_sd_configs`` examples scrape through
  the API server, ``/api/v1/nodes/{node}/proxy/metrics/cadvisor`` (the node's cAdvisor
  metrics: ``container_cpu_usage_seconds_total``, ``container_memory_working_set_bytes``,
  ``container_oom_events_total``, throttling ...) and ``/api/v1/nodes/{node}/proxy/metrics``
  (a few of the kubelet's own: ``kubelet_node_name``, ``kubelet_running_pods``,
  ``kubelet_running_containers``), plus ``.../proxy/healthz``. They are answered by the
  in-process node agent of that node (text exposition format 0.0.4); a node with no local
  agent is a 404 Status. Only GET/HEAD.
* ``/metrics`` of the API server itself, kept small: ``apiserver_request_total`` (by
  ``verb``, ``group``, ``version``, ``resource``, ``subresource``, ``scope``, ``component``,
  ``code``, as kube-apiserver labels it; verbs are LIST/GET/WATCH/POST/PUT/PATCH/APPLY/DELETE)
  and ``apiserver_storage_objects{resource}`` (``pods``, ``deployments.apps``, ...).
* the ``metrics.k8s.io/v1beta1`` API of metrics-server: ``NodeMetrics`` (``nodes``, cluster
  scoped) and ``PodMetrics`` (``pods``, namespaced), verbs get and list only (other verbs
  and watches are 405), with ``labelSelector`` / ``fieldSelector`` and Table output for
  ``kubectl get``. ``kubectl top nodes|pods`` reads it. Not-found errors read as
  metrics-server's (``podmetrics.metrics.k8s.io "ns/name" not found``).

The metrics API is served only when the ApiServer has a ``metrics_provider`` (as the group
exists only where metrics-server is installed). Its types are ``ResourceType`` objects with
``stored=False`` (``METRICS_TYPES``): the server adds them to what discovery lists, but they
are never put in ``kinds``' table, so the registry, the store, OpenAPI and CRDs never see
them; requests under ``/apis/metrics.k8s.io/`` are routed here before the REST handlers.

Like metrics-server, the provider answers from samples taken every ``resolution`` seconds by
a background sampler (``LocalNodeMetrics.run()``), never on request: a rate needs two
samples, so a container reports once it has been seen twice, ``window`` apart. A node whose
containers have no rates yet (or that runs none) reports zero usage once it has been
sampled twice (a simulated node uses nothing but its containers).
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Coroutine
from typing import Any

from aiohttp import web

from kvert.api import kinds
from kvert.api.errors import NO_ROUTE, BadRequest, MethodNotAllowed, NotFound, RouteNotFound
from kvert.api.fields import parse_field_selector
from kvert.api.kinds import ResourceType
from kvert.api.prometheus import CONTENT_TYPE, exposition
from kvert.api.quantity import Quantity
from kvert.api.selectors import SelectorError, parse_label_selector
from kvert.apiserver import kubeletclient, negotiation
from kvert.apiserver.context import ServerContext
from kvert.apiserver.nodeprovider import NodeMetricsProvider
from kvert.apiserver.requestinfo import RequestInfo, parse
from kvert.apiserver.responses import json_response
from kvert.apiserver.tables import to_table
from kvert.store.base import Store

log = logging.getLogger(__name__)

GROUP = "metrics.k8s.io"
VERSION = "v1beta1"
DEFAULT_RESOLUTION = 15.0                   # metrics-server's --metric-resolution

NODE_METRICS = ResourceType(GROUP, VERSION, "NodeMetrics", "nodes", False, verbs=("get", "list"),
                            stored=False)
POD_METRICS = ResourceType(GROUP, VERSION, "PodMetrics", "pods", True, verbs=("get", "list"),
                           stored=False)
METRICS_TYPES: tuple[ResourceType, ...] = (NODE_METRICS, POD_METRICS)


def _text(body: str, request: web.Request) -> web.Response:
    return web.Response(body=b"" if request.method == "HEAD" else body.encode(),
                        headers={"Content-Type": CONTENT_TYPE, "Cache-Control": "no-cache, private"})


# ==== API server metrics =========================================================================

class RequestMetrics:
    """``apiserver_request_total``: a counter per (verb, group, version, resource,
    subresource, scope, code), fed by ``middleware`` (outermost, so it sees the final code)."""

    def __init__(self) -> None:
        self.counts: Counter[tuple[str, ...]] = Counter()

    @web.middleware
    async def middleware(self, request: web.Request, handler: Any) -> web.StreamResponse:
        try:
            response = await handler(request)
        except web.HTTPException as e:
            self.record(request, e.status)
            raise
        self.record(request, response.status)
        return response

    MAX_SERIES = 10000     # bound the label sets (paths of unknown resources are arbitrary)

    def record(self, request: web.Request, code: int) -> None:
        try:
            key = (*_classify(request), str(code))
            if key in self.counts or len(self.counts) < self.MAX_SERIES:
                self.counts[key] += 1
        except Exception:  # noqa: BLE001 - counting never fails a request
            log.debug("could not classify %s %s", request.method, request.path, exc_info=True)

    def samples(self) -> list[tuple[dict[str, str], float]]:
        names = ("verb", "group", "version", "resource", "subresource", "scope", "code")
        return [({**dict(zip(names, key)), "component": "apiserver"}, n)
                for key, n in sorted(self.counts.items())]


def _classify(request: web.Request) -> tuple[str, str, str, str, str, str]:
    method = request.method.upper()
    node = _node_proxy(request.path)
    if node is not None:
        return "CONNECT", "", "v1", "nodes", "proxy", "resource"
    try:
        info = parse(request.path)
    except Exception:  # noqa: BLE001 - an unparsable path: a non-resource request
        info = None
    if info is None or not info.is_resource:
        return method, "", "", "", "", ""
    watch = info.legacy_watch or request.query.get("watch", "").lower() in ("true", "1")
    verb = method
    if method == "GET":
        verb = "WATCH" if watch and not info.name else ("GET" if info.name else "LIST")
    elif method == "PATCH" and (request.headers.get("Content-Type") or "").startswith(
            "application/apply-patch"):
        verb = "APPLY"
    scope = "resource" if info.name else ("namespace" if info.namespace else "cluster")
    return verb, info.group, info.version, info.resource, info.subresource, scope


def _storage_samples(store: Store) -> list[tuple[dict[str, str], float]]:
    out: list[tuple[dict[str, str], float]] = []
    for rt in sorted(kinds.all_types(), key=lambda rt: (rt.group, rt.plural)):
        try:
            listing = store.list(rt.key, limit=1)
        except Exception:  # noqa: BLE001 - a resource the store cannot count is left out
            continue
        count = len(listing.items) + (listing.remaining_item_count or 0)
        out.append(({"resource": f"{rt.plural}.{rt.group}" if rt.group else rt.plural}, count))
    return out


def apiserver_metrics(ctx: ServerContext) -> str:
    families = [("apiserver_request_total", "counter",
                 "Counter of apiserver requests broken out for each verb, dry run value, group, "
                 "version, resource, scope, component, and HTTP response code.",
                 ctx.request_metrics.samples()),
                ("apiserver_storage_objects", "gauge",
                 "Number of stored objects at the time of last check split by kind.",
                 _storage_samples(ctx.store)),
                ("apiserver_terminated_watchers_total", "counter",
                 "Counter of watchers closed due to unresponsiveness broken by resource type.",
                 ctx.watches.terminated_samples())]
    return exposition([f for f in families if f[3]])


# ==== routing ====================================================================================

def _node_proxy(path: str) -> tuple[str, str] | None:
    """(node, path on the node) of ``/api/v1/nodes/{node}/proxy[/{path}]``, else None.
    The node may be written ``name:port`` or ``scheme:name:port``, as the proxy allows."""
    parts = path.split("/")
    if len(parts) < 6 or parts[:4] != ["", "api", "v1", "nodes"] or parts[5] != "proxy":
        return None
    name = parts[4]
    pieces = name.split(":")
    if len(pieces) > 1 and pieces[0] in ("http", "https"):
        pieces = pieces[1:]
    return pieces[0], "/".join(parts[6:])


def route(ctx: ServerContext,
          request: web.Request) -> Coroutine[Any, Any, web.StreamResponse] | None:
    """The handler coroutine for a metrics path (to await), or None for any other path."""
    path = request.path
    proxied = _node_proxy(path)
    if proxied is not None:
        return _serve_node_proxy(ctx, request, *proxied)
    if path.rstrip("/") == "/metrics":
        return _serve_apiserver_metrics(ctx, request)
    if ctx.metrics_provider is not None and path.startswith(f"/apis/{GROUP}/"):
        info = parse(path)
        if info.is_resource:
            return serve_metrics_api(ctx, request, info)
    return None


def _read_only(request: web.Request) -> None:
    if request.method not in ("GET", "HEAD"):
        raise MethodNotAllowed()


async def _serve_apiserver_metrics(ctx: ServerContext, request: web.Request) -> web.Response:
    _read_only(request)
    return _text(apiserver_metrics(ctx), request)


async def _serve_node_proxy(ctx: ServerContext, request: web.Request, node: str,
                            subpath: str) -> web.Response:
    _read_only(request)
    provider = ctx.metrics_provider
    subpath = subpath.rstrip("/")
    if provider is None or node not in provider.nodes():
        target = kubeletclient.remote_node(ctx, node)      # NotFound when none can answer
        if subpath not in ("metrics/cadvisor", "metrics", "healthz", "stats/summary"):
            raise NotFound("nodes", node, NO_ROUTE)
        if subpath == "stats/summary":
            return web.Response(text=await target.get_text(subpath), content_type="application/json")
        return _text(await target.get_text(subpath), request)
    if subpath == "metrics/cadvisor":
        text = await provider.cadvisor(node)
    elif subpath == "metrics":
        text = await provider.kubelet_metrics(node)
    elif subpath == "healthz":
        return web.Response(text="ok", content_type="text/plain")
    elif subpath == "stats/summary":
        summary = await provider.stats_summary(node)
        if summary is None:
            raise NotFound("nodes", node)
        return web.json_response(summary)
    else:
        raise NotFound("nodes", node, NO_ROUTE)
    if text is None:
        raise NotFound("nodes", node)
    return _text(text, request)


# ==== metrics.k8s.io ==============================================================================

async def serve_metrics_api(ctx: ServerContext, request: web.Request, info: RequestInfo) -> web.Response:
    provider = ctx.metrics_provider
    if provider is None:   # the group exists only where node metrics are served
        raise RouteNotFound()
    rt = next((t for t in METRICS_TYPES if t.plural == info.resource), None)
    if rt is None or info.version != VERSION or info.subresource or info.legacy_watch \
            or (info.namespace and not rt.namespaced):
        raise RouteNotFound()
    _read_only(request)
    if not info.name and request.query.get("watch", "").lower() in ("true", "1"):
        raise MethodNotAllowed()
    items = provider.pod_metrics(info.namespace or None) if rt is POD_METRICS else provider.node_metrics()
    accept = negotiation.parse_accept(request.headers.get("Accept"))
    table = negotiation.wants(accept, "Table", "meta.k8s.io") is not None
    include = request.query.get("includeObject", "") or "Metadata"
    if info.name:
        found = next((o for o in items if o["metadata"]["name"] == info.name), None)
        if found is None:
            shown = f"{info.namespace}/{info.name}" if rt.namespaced else info.name
            raise NotFound(f"{GROUP}/{rt.singular}", shown)
        return json_response(metrics_table(rt, [found], include) if table else found)
    try:
        labels = parse_label_selector(request.query.get("labelSelector", ""))
        fields = parse_field_selector(request.query.get("fieldSelector", ""))
    except (SelectorError, ValueError) as e:
        raise BadRequest(str(e)) from None
    items = [o for o in items if labels.matches(o["metadata"].get("labels") or {}) and fields.matches(o)]
    if table:
        return json_response(metrics_table(rt, items, include))
    return json_response({"kind": f"{rt.kind}List", "apiVersion": f"{GROUP}/{VERSION}",
                               "metadata": {}, "items": items})


def _usage(obj: dict[str, Any]) -> dict[str, str]:
    if "usage" in obj:
        return dict(obj["usage"])
    total: dict[str, Quantity] = {}
    for c in obj.get("containers") or []:
        for resource, value in (c.get("usage") or {}).items():
            q = Quantity.parse(value)
            total[resource] = total[resource] + q if resource in total else q
    return {k: str(v) for k, v in total.items()}


def metrics_table(rt: ResourceType, objects: list[dict[str, Any]],
                  include_object: str = "Metadata") -> dict[str, Any]:
    """The Table metrics-server answers ``kubectl get nodes.metrics.k8s.io`` with: Name, each
    resource of the usage (a pod's summed over its containers) and Window."""
    if include_object not in ("None", "Metadata", "Object"):
        to_table(rt, [], now=0.0, include_object=include_object)    # raises its 406
    resources = sorted(_usage(objects[0])) if objects else ["cpu", "memory"]
    columns = [{"name": "Name", "type": "string", "format": "name", "description": "Name of the resource",
                "priority": 0}]
    columns += [{"name": r, "type": "string", "format": "quantity", "description": "", "priority": 0}
                for r in resources]
    columns.append({"name": "Window", "type": "string", "format": "duration", "description": "", "priority": 0})
    rows = []
    for obj in objects:
        usage = _usage(obj)
        row: dict[str, Any] = {"cells": [obj["metadata"]["name"], *(usage.get(r, "0") for r in resources),
                                         obj.get("window", "")]}
        if include_object == "Object":
            row["object"] = obj
        elif include_object == "Metadata":
            row["object"] = {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1",
                             "metadata": obj["metadata"]}
        rows.append(row)
    return {"kind": "Table", "apiVersion": "meta.k8s.io/v1", "metadata": {}, "columnDefinitions": columns,
            "rows": rows}


__all__ = ["CONTENT_TYPE", "DEFAULT_RESOLUTION", "GROUP", "METRICS_TYPES", "NODE_METRICS",
           "NodeMetricsProvider", "POD_METRICS", "RequestMetrics", "VERSION", "apiserver_metrics",
           "metrics_table", "route", "serve_metrics_api"]
