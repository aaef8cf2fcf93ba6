"""Resource requests: verbs on collections, objects and subresources, onto the registry.

HTTP shapes follow kube-apiserver: 201 for a create, 202 for a delete that is still
pending (finalizers, grace period), Status objects for errors and for the bodyless
subresources (binding, eviction), Tables and PartialObjectMetadata on request.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from aiohttp import web

from kvert.api import kinds
from kvert.api.errors import BadRequest, MethodNotAllowed, NotFound
from kvert.api.kinds import ResourceType
from kvert.apiserver import negotiation, reviews
from kvert.apiserver.requestinfo import USER
from kvert.apiserver.openapi import unknown_fields
from kvert.apiserver.tables import to_table
from kvert.auth import escalation
from kvert.apiserver.requestinfo import RequestInfo
from kvert.registry import patch as patches
from kvert.api.meta import deep_copy
from kvert.registry.apply import manager_from_user_agent

if TYPE_CHECKING:
    from kvert.apiserver.server import ApiServer

_TRUE = ("true", "1")
WARNINGS = web.RequestKey("warnings", list)   # Warning headers to send with the response


def json_response(body: Any, status: int = 200, content_type: str = "application/json") -> web.Response:
    return web.Response(body=json.dumps(body, separators=(",", ":")).encode(), status=status,
                        headers={"Content-Type": content_type, "Cache-Control": "no-cache, private"})


def resource_type(info: RequestInfo) -> ResourceType:
    for rt in kinds.versions_of(info.key):
        if rt.version == info.version:
            break
    else:
        raise NotFound(info.key, info.name, "the server could not find the requested resource")
    if (info.namespace and not rt.namespaced) or (info.name and rt.namespaced and not info.namespace):
        raise NotFound(info.key, info.name, "the server could not find the requested resource")
    if info.subresource and info.subresource not in rt.subresources:
        raise NotFound(info.key, info.name, "the server could not find the requested resource")
    return rt


def dry_run_of(request: web.Request, body: dict | None = None) -> bool:
    values = request.query.getall("dryRun", [])
    if body and isinstance(body.get("dryRun"), list):
        values = [*values, *body["dryRun"]]
    for v in values:
        if v != "All":
            raise BadRequest(f'Invalid dry run value: unsupported dry run value "{v}": supported values: "All"')
    return bool(values)


async def handle(server: "ApiServer", request: web.Request, info: RequestInfo) -> web.StreamResponse:
    rt = resource_type(info)
    if rt.verbs == kinds.CREATE_ONLY:   # the review kinds: answered, never stored
        return await reviews.handle(server, request, rt, info)
    method = request.method
    if info.legacy_watch or (method == "GET" and not info.name
                             and request.query.get("watch", "").lower() in _TRUE):
        if method != "GET":
            raise MethodNotAllowed()
        return await server.watches.serve(request, rt, info)
    handler = _VERBS.get((method, bool(info.name), info.subresource or None))
    if handler is None:
        raise MethodNotAllowed()
    return await handler(server, request, rt, info)


# ---- reads -----------------------------------------------------------------------

async def _get(server, request, rt, info):
    obj = server.registry.get(info.key, info.name, info.namespace)
    return _render_object(server, request, rt, obj)


async def _list(server, request, rt, info):
    q = request.query
    try:
        limit = int(q.get("limit", "0") or 0)
    except ValueError:
        raise BadRequest(f"limit: Invalid value: {q.get('limit')!r}: must be an integer") from None
    listing = server.registry.list(info.key, namespace=info.namespace or None,
                                   label_selector=q.get("labelSelector", ""),
                                   field_selector=q.get("fieldSelector", ""), limit=max(limit, 0),
                                   continue_token=q.get("continue", ""),
                                   resource_version=q.get("resourceVersion", ""))
    listing["apiVersion"], listing["kind"] = rt.api_version, f"{rt.kind}List"
    accept = negotiation.parse_accept(request.headers.get("Accept"))
    if negotiation.wants(accept, "Table", "meta.k8s.io"):
        meta = listing["metadata"]
        return json_response(to_table(rt, listing["items"], now=server.clock.now(),
                                      include_object=q.get("includeObject", "Metadata"),
                                      resource_version=meta.get("resourceVersion", ""),
                                      continue_token=meta.get("continue", ""),
                                      remaining_item_count=meta.get("remainingItemCount")))
    if negotiation.wants(accept, "PartialObjectMetadataList", "meta.k8s.io"):
        return json_response({"kind": "PartialObjectMetadataList", "apiVersion": "meta.k8s.io/v1",
                              "metadata": listing["metadata"],
                              "items": [_partial(o) for o in listing["items"]]})
    return json_response(listing)


def _render_object(server, request, rt, obj, status: int = 200) -> web.Response:
    accept = negotiation.parse_accept(request.headers.get("Accept"))
    if negotiation.wants(accept, "Table", "meta.k8s.io"):
        return json_response(to_table(rt, [obj], now=server.clock.now(),
                                      include_object=request.query.get("includeObject", "Metadata"),
                                      resource_version=obj["metadata"].get("resourceVersion", "")),
                             status)
    if negotiation.wants(accept, "PartialObjectMetadata", "meta.k8s.io"):
        return json_response(_partial(obj), status)
    return json_response(obj, status)


def _partial(obj: dict) -> dict:
    return {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1",
            "metadata": obj.get("metadata", {})}


# ---- writes ----------------------------------------------------------------------

async def _body(request: web.Request) -> Any:
    raw = await request.read()
    if not raw:
        raise BadRequest("the request body is empty")
    return negotiation.decode_body(raw, request.headers.get("Content-Type"))


def _manager(request: web.Request) -> str:
    """The field manager of an ordinary write: ``fieldManager``, else the user agent's name."""
    return request.query.get("fieldManager") or manager_from_user_agent(
        request.headers.get("User-Agent", ""))


def _user(request: web.Request) -> str:
    user = request.get(USER)
    return user.name if user is not None else ""


async def _check_escalation(server, request: web.Request, info: RequestInfo, obj: Any = None,
                            dry_run=None) -> None:
    """RBAC writes may not grant more than the writer holds (``kvert.auth.escalation``).
    ``obj`` is the object to be stored, or ``dry_run()`` produces it (a patch, an apply)."""
    user = request.get(USER)
    if (server.authorizer is None or user is None or info.group != escalation.GROUP
            or info.subresource or info.resource not in escalation.WRITABLE):
        return
    if obj is None:
        obj = await dry_run()
    if not isinstance(obj, dict):
        return
    old = None
    if info.name:
        try:
            old = server.registry.get(info.key, info.name, info.namespace)
        except NotFound:
            pass
    if old is not None and escalation.only_gc_fields(obj, old):
        return
    escalation.check_write(server.authorizer, user, info.resource, info.namespace, info.name, obj)


_FIELD_VALIDATION = ("Strict", "Warn", "Ignore")


def _check_fields(request: web.Request, rt: ResourceType, obj: Any) -> None:
    """Server-side field validation (``fieldValidation``; kubectl sends Strict by default):
    Strict refuses unknown fields with 400, Warn (the server's default) answers with
    Warning headers, Ignore says nothing."""
    mode = request.query.get("fieldValidation", "Warn")
    if mode not in _FIELD_VALIDATION:
        raise BadRequest(f'fieldValidation: Unsupported value: "{mode}": supported values: '
                         '"Ignore", "Strict", "Warn"')
    if mode == "Ignore" or not isinstance(obj, dict):
        return
    body = {k: v for k, v in obj.items() if not k.startswith("$")}
    body.setdefault("apiVersion", rt.api_version)
    body.setdefault("kind", rt.kind)
    if (body["apiVersion"], body["kind"]) != (rt.api_version, rt.kind):
        return   # the registry refuses a body of another kind, with its own message
    unknown = [p for p in unknown_fields(kinds.all_types(), body) if "$" not in p]
    if not unknown:
        return
    problems = ", ".join(f'unknown field "{p}"' for p in unknown)
    if mode == "Strict":
        raise BadRequest(f'{rt.kind} in version "{rt.version}" cannot be handled as a {rt.kind}: '
                         f"strict decoding error: {problems}")
    request[WARNINGS] = [f'unknown field "{p}"' for p in unknown]


async def _create(server, request, rt, info):
    body = await _body(request)
    if not isinstance(body, dict):
        raise BadRequest("the request body must be a JSON object")
    _check_fields(request, rt, body)
    await _check_escalation(server, request, info, body)
    created = await server.registry.create(info.key, body, namespace=info.namespace or None,
                                           dry_run=dry_run_of(request), user=_user(request),
                                           field_manager=_manager(request))
    return json_response(created, 201)


async def _update(server, request, rt, info):
    body = await _body(request)
    if not isinstance(body, dict):
        raise BadRequest("the request body must be a JSON object")
    _check_identity(body, info)
    if info.subresource != "scale":
        _check_fields(request, rt, body)
    await _check_escalation(server, request, info, body)
    dry_run = dry_run_of(request)
    if info.subresource == "scale":
        return json_response(await server.registry.update_scale(
            info.key, info.name, body, namespace=info.namespace, dry_run=dry_run, user=_user(request)))
    updated = await server.registry.update(info.key, body, subresource=info.subresource,
                                           dry_run=dry_run, user=_user(request),
                                           field_manager=_manager(request))
    return json_response(updated)


def _check_identity(body: dict, info: RequestInfo) -> None:
    meta = body.setdefault("metadata", {})
    if not isinstance(meta, dict):
        raise BadRequest("metadata must be an object")
    if meta.get("name") and meta["name"] != info.name:
        raise BadRequest(f"the name of the object ({meta['name']}) does not match the name on the "
                         f"URL ({info.name})")
    meta["name"] = info.name
    if info.namespace:
        if meta.get("namespace") and meta["namespace"] != info.namespace:
            raise BadRequest("the namespace of the provided object does not match the namespace "
                             "sent on the request")
        meta["namespace"] = info.namespace


async def _patch(server, request, rt, info):
    content_type = (request.headers.get("Content-Type") or "").split(";")[0].strip().lower()
    if content_type not in (patches.MERGE, patches.JSON, patches.STRATEGIC, patches.APPLY):
        raise negotiation.UnsupportedMediaType(
            f"the body of the request was in an unknown format - accepted media types include: "
            f"{patches.JSON}, {patches.MERGE}, {patches.STRATEGIC}, {patches.APPLY}")
    body = await _body(request)
    if content_type != patches.JSON and info.subresource != "scale":
        _check_fields(request, rt, body)
    dry_run = dry_run_of(request)
    if content_type == patches.APPLY:
        manager = request.query.get("fieldManager", "")
        if not manager:
            raise BadRequest("PATCH, application/apply-patch+yaml requires fieldManager to be set")

        async def applied():
            return (await server.registry.apply(
                info.key, info.name, deep_copy(body), namespace=info.namespace, manager=manager,
                force=request.query.get("force", "").lower() in _TRUE, dry_run=True,
                user=_user(request)))[0]
        await _check_escalation(server, request, info, dry_run=applied)
        obj, created = await server.registry.apply(
            info.key, info.name, body, namespace=info.namespace, manager=manager,
            force=request.query.get("force", "").lower() in _TRUE, subresource=info.subresource,
            dry_run=dry_run, user=_user(request))
        return json_response(obj, 201 if created else 200)
    if info.subresource == "scale":
        current = server.registry.get_scale(info.key, info.name, info.namespace)
        scale = patches.apply_patch(current, body, content_type)
        return json_response(await server.registry.update_scale(
            info.key, info.name, scale, namespace=info.namespace, dry_run=dry_run, user=_user(request)))
    async def patched_copy():
        return await server.registry.patch(info.key, info.name, deep_copy(body), content_type,
                                           namespace=info.namespace, dry_run=True, user=_user(request))
    await _check_escalation(server, request, info, dry_run=patched_copy)
    patched = await server.registry.patch(info.key, info.name, body, content_type,
                                          namespace=info.namespace, subresource=info.subresource,
                                          dry_run=dry_run, user=_user(request),
                                          field_manager=_manager(request))
    return json_response(patched)


@dataclass
class _DeleteOptions:
    grace: int | None = None
    preconditions: dict | None = None
    propagation_policy: str | None = None
    orphan_dependents: bool | None = None

    def registry_args(self) -> dict[str, Any]:
        return {"grace_period_seconds": self.grace, "propagation_policy": self.propagation_policy,
                "orphan_dependents": self.orphan_dependents}


def _delete_options(request: web.Request, body: Any) -> _DeleteOptions:
    """DeleteOptions from the body or, when there is none, the query (kube-apiserver never
    merges the two)."""
    options = _DeleteOptions()
    if isinstance(body, dict):
        grace, policy, orphan = body.get("gracePeriodSeconds"), body.get("propagationPolicy"), \
            body.get("orphanDependents")
        options.preconditions = body.get("preconditions")
    else:
        query = request.query
        grace, policy, orphan = query.get("gracePeriodSeconds"), query.get("propagationPolicy"), \
            query.get("orphanDependents")
        if orphan is not None:
            if orphan.lower() not in ("true", "false", "1", "0"):
                raise BadRequest(f"orphanDependents: Invalid value: {orphan!r}: must be a boolean")
            orphan = orphan.lower() in _TRUE
    if grace is not None:
        try:
            grace = int(grace)
        except (TypeError, ValueError):
            raise BadRequest(f"gracePeriodSeconds: Invalid value: {grace!r}: must be an integer") from None
    options.grace = grace
    options.propagation_policy = policy
    options.orphan_dependents = orphan
    return options


async def _delete(server, request, rt, info):
    raw = await request.read()
    body = negotiation.decode_body(raw, request.headers.get("Content-Type")) if raw else None
    options = _delete_options(request, body)
    obj = await server.registry.delete(info.key, info.name, namespace=info.namespace,
                                       preconditions=options.preconditions,
                                       dry_run=dry_run_of(request, body if isinstance(body, dict) else None),
                                       user=_user(request), **options.registry_args())
    # As kube-apiserver: 200 with the object, 202 only when the client explicitly asked not
    # to orphan (orphanDependents=false) and the object is still there.
    pending = bool(obj.get("metadata", {}).get("deletionTimestamp"))
    return json_response(obj, 202 if pending and options.orphan_dependents is False else 200)


async def _delete_collection(server, request, rt, info):
    raw = await request.read()
    body = negotiation.decode_body(raw, request.headers.get("Content-Type")) if raw else None
    options = _delete_options(request, body)
    deleted = await server.registry.delete_collection(
        info.key, namespace=info.namespace, label_selector=request.query.get("labelSelector", ""),
        field_selector=request.query.get("fieldSelector", ""),
        dry_run=dry_run_of(request, body if isinstance(body, dict) else None), user=_user(request),
        **options.registry_args())
    return json_response({"apiVersion": rt.api_version, "kind": f"{rt.kind}List",
                          "metadata": {}, "items": deleted})


# ---- subresources ----------------------------------------------------------------

async def _get_scale(server, request, rt, info):
    return json_response(server.registry.get_scale(info.key, info.name, info.namespace))


async def _binding(server, request, rt, info):
    body = await _body(request)
    if not isinstance(body, dict):
        raise BadRequest("the request body must be a Binding object")
    status = await server.registry.bind(info.namespace, info.name, body,
                                        dry_run=dry_run_of(request))
    return json_response(status, status["code"])


async def _eviction(server, request, rt, info):
    body = await _body(request)
    if not isinstance(body, dict):
        raise BadRequest("the request body must be an Eviction object")
    # Seed 001 section 14: an allowed eviction answers 200 OK.
    status = await server.registry.evict(info.namespace, info.name, body)
    return json_response(status, status["code"])


async def _token(server, request, rt, info):
    warnings: list[str] = []
    created = await server.registry.create_token(info.namespace, info.name, await _body(request),
                                                 user=_user(request), warnings=warnings)
    if warnings:
        request[WARNINGS] = [*request.get(WARNINGS, ()), *warnings]
    return json_response(created, 201)


_VERBS = {
    ("GET", True, None): _get,
    ("GET", False, None): _list,
    ("POST", False, None): _create,
    ("PUT", True, None): _update,
    ("PATCH", True, None): _patch,
    ("DELETE", True, None): _delete,
    ("DELETE", False, None): _delete_collection,
    ("GET", True, "status"): _get,
    ("PUT", True, "status"): _update,
    ("PATCH", True, "status"): _patch,
    ("PUT", True, "finalize"): _update,
    ("GET", True, "resize"): _get,
    ("PUT", True, "resize"): _update,
    ("PATCH", True, "resize"): _patch,
    ("GET", True, "scale"): _get_scale,
    ("PUT", True, "scale"): _update,
    ("PATCH", True, "scale"): _patch,
    ("POST", True, "binding"): _binding,
    ("POST", True, "eviction"): _eviction,
    ("POST", True, "token"): _token,
}
