"""Resource requests: verbs on collections, objects and subresources, onto the registry.

HTTP shapes follow kube-apiserver: 201 for a create, 202 for a delete that is still
pending (finalizers, grace period), Status objects for errors and for the bodyless
subresources (binding, eviction), Tables and PartialObjectMetadata on request. Query
options are converted and validated by ``options``, bodies read within the size limit and
decoded into their kind's type by ``negotiation`` and ``decoding`` before the registry
sees them.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import web

from kvert.api import kinds
from kvert.api.errors import BadRequest, MethodNotAllowed, NotFound, RouteNotFound
from kvert.api.kinds import ResourceType
from kvert.api.meta import deep_copy
from kvert.apiserver import decoding, negotiation, options, podlogs, portforward, remotecommand, reviews
from kvert.apiserver.context import ServerContext
from kvert.apiserver.requestinfo import USER, RequestInfo
from kvert.apiserver.responses import WARNINGS, encode_json, json_response, stream_json
from kvert.apiserver.tables import to_table
from kvert.auth import escalation
from kvert.auth.rbac import GROUP as RBAC_GROUP
from kvert.registry import patch as patches
from kvert.registry.admission import collecting_warnings
from kvert.registry.apply import manager_from_user_agent

# Every request for v1 Endpoints but a watch (whose headers are sent before the handler
# returns) carries it, as kube-apiserver 1.33+ (KEP-4974).
ENDPOINTS_DEPRECATED = "v1 Endpoints is deprecated in v1.33+; use discovery.k8s.io/v1 EndpointSlice"

# One resource verb: (context, request, its type, its path) -> the response.
Handler = Callable[[ServerContext, web.Request, ResourceType, RequestInfo],
                   Awaitable[web.StreamResponse]]


def resource_type(info: RequestInfo) -> ResourceType:
    for rt in kinds.versions_of(info.key):
        if rt.version == info.version:
            break
    else:
        raise RouteNotFound()
    if (info.namespace and not rt.namespaced) or (info.name and rt.namespaced and not info.namespace):
        raise RouteNotFound()
    if info.subresource and info.subresource not in rt.subresources:
        raise RouteNotFound()
    return rt


async def handle(ctx: ServerContext, request: web.Request, info: RequestInfo) -> web.StreamResponse:
    rt = resource_type(info)
    if rt.verbs == kinds.CREATE_ONLY:   # the review kinds: answered, never stored
        return await reviews.handle(ctx, request, rt, info)
    method = request.method
    if info.legacy_watch or (method == "GET" and not info.name
                             and options.wants_watch(request.query)):
        if method != "GET":
            raise MethodNotAllowed()
        return await ctx.watches.serve(request, rt, info)
    if rt.group == "" and rt.kind == "Endpoints":
        request[WARNINGS] = [*request.get(WARNINGS, ()), ENDPOINTS_DEPRECATED]
    handler = _VERBS.get((method, bool(info.name), info.subresource or None))
    if handler is None:
        raise MethodNotAllowed()
    with collecting_warnings() as admission_warnings:
        response = await handler(ctx, request, rt, info)
    if admission_warnings:
        request[WARNINGS] = [*request.get(WARNINGS, ()), *admission_warnings]
    return response


# ---- reads -----------------------------------------------------------------------

async def _get(ctx: ServerContext, request: web.Request, rt: ResourceType,
             info: RequestInfo) -> web.StreamResponse:
    obj = ctx.registry.get(info.key, info.name, info.namespace)
    return _render_object(ctx, request, rt, obj)


async def _list(ctx: ServerContext, request: web.Request, rt: ResourceType,
             info: RequestInfo) -> web.StreamResponse:
    q = request.query
    opts = options.list_options(q, rt)
    listing = ctx.registry.list(info.key, namespace=info.namespace or None,
                                   label_selector=opts.label_selector,
                                   field_selector=opts.field_selector, limit=max(opts.limit, 0),
                                   continue_token=opts.continue_token,
                                   resource_version=opts.resource_version)
    listing["apiVersion"], listing["kind"] = rt.api_version, f"{rt.kind}List"
    accept = negotiation.parse_accept(request.headers.get("Accept"))
    # sent from here, chunk by chunk, within the in-flight limit (responses.stream_json)
    if negotiation.wants(accept, "Table", "meta.k8s.io"):
        meta = listing["metadata"]
        return await stream_json(request, to_table(
            rt, listing.pop("items"), now=ctx.clock.now(),
            include_object=q.get("includeObject", "Metadata"),
            resource_version=meta.get("resourceVersion", ""), continue_token=meta.get("continue", ""),
            remaining_item_count=meta.get("remainingItemCount")), items_key="rows")
    if negotiation.wants(accept, "PartialObjectMetadataList", "meta.k8s.io"):
        return await stream_json(request, {"kind": "PartialObjectMetadataList",
                                           "apiVersion": "meta.k8s.io/v1", "metadata": listing["metadata"],
                                           "items": [_partial(o) for o in listing.pop("items")]})
    return await stream_json(request, listing)


def _render_object(ctx: ServerContext, request: web.Request, rt: ResourceType,
                   obj: dict[str, Any], status: int = 200) -> web.Response:
    accept = negotiation.parse_accept(request.headers.get("Accept"))
    if negotiation.wants(accept, "Table", "meta.k8s.io"):
        return json_response(to_table(rt, [obj], now=ctx.clock.now(),
                                      include_object=request.query.get("includeObject", "Metadata"),
                                      resource_version=obj["metadata"].get("resourceVersion", "")),
                             status)
    if negotiation.wants(accept, "PartialObjectMetadata", "meta.k8s.io"):
        return json_response(_partial(obj), status)
    return json_response(obj, status)


def _partial(obj: dict[str, Any]) -> dict[str, Any]:
    return {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1",
            "metadata": obj.get("metadata", {})}


# ---- writes ----------------------------------------------------------------------

async def _body(request: web.Request, rt: ResourceType, into: str = "") -> negotiation.Document:
    raw = await negotiation.read_body(request)
    if not raw:
        raise BadRequest("the request body is empty")
    return negotiation.decode_document(raw, request.headers.get("Content-Type"), into=into or rt.kind)


def _manager(request: web.Request, opts: options.WriteOptions) -> str:
    """The field manager of an ordinary write: ``fieldManager``, else the user agent's name."""
    return opts.field_manager or manager_from_user_agent(request.headers.get("User-Agent", ""))


def _user(request: web.Request) -> str:
    user = request.get(USER)
    return user.name if user is not None else ""


async def _check_escalation(ctx: ServerContext, request: web.Request, info: RequestInfo,
                            obj: Any = None,
                            dry_run: Callable[[], Awaitable[Any]] | None = None) -> None:
    """RBAC writes may not grant more than the writer holds (``kvert.auth.escalation``).
    ``obj`` is the object to be stored, or ``dry_run()`` produces it (a patch, an apply)."""
    user = request.get(USER)
    if (ctx.authorizer is None or user is None or info.group != RBAC_GROUP
            or info.subresource or info.resource not in escalation.WRITABLE):
        return
    if obj is None and dry_run is not None:
        obj = await dry_run()
    if not isinstance(obj, dict):
        return
    old = None
    if info.name:
        try:
            old = ctx.registry.get(info.key, info.name, info.namespace)
        except NotFound:
            pass
    if old is not None and escalation.only_gc_fields(obj, old):
        return
    escalation.check_write(ctx.authorizer, user, info.resource, info.namespace, info.name, obj)


def _decode(request: web.Request, rt: ResourceType, document: negotiation.Document,
            opts: options.WriteOptions, subresource: str = "") -> Any:
    """The body as the kind's type, or the ``subresource``'s body type (server-side
    ``fieldValidation``; kubectl sends Strict by default): unknown fields dropped, refused
    (Strict) or also warned about (Warn)."""
    if subresource:
        body, warnings = decoding.decode_subresource(subresource, document.value,
                                                     document.duplicates, opts.field_validation)
    else:
        body, warnings = decoding.decode_request(rt, document.value, document.duplicates,
                                                 opts.field_validation)
    if warnings:
        request[WARNINGS] = [*request.get(WARNINGS, ()), *warnings]
    return body


async def _create(ctx: ServerContext, request: web.Request, rt: ResourceType,
             info: RequestInfo) -> web.StreamResponse:
    opts = options.write_options(request.query, options.CREATE)
    document = await _body(request, rt)
    if not isinstance(document.value, dict):
        raise BadRequest("the request body must be a JSON object")
    body = _decode(request, rt, document, opts)
    await _check_escalation(ctx, request, info, body)
    created = await ctx.registry.create(info.key, body, namespace=info.namespace or None,
                                           dry_run=opts.dry_run, user=_user(request),
                                           field_manager=_manager(request, opts),
                                           requester=request.get(USER))
    return json_response(created, 201)


async def _update(ctx: ServerContext, request: web.Request, rt: ResourceType,
             info: RequestInfo) -> web.StreamResponse:
    opts = options.write_options(request.query, options.UPDATE)
    document = await _body(request, rt)
    body = document.value
    if not isinstance(body, dict):
        raise BadRequest("the request body must be a JSON object")
    body = _decode(request, rt, document, opts, "scale" if info.subresource == "scale" else "")
    _check_identity(body, info)
    await _check_escalation(ctx, request, info, body)
    if info.subresource == "scale":
        return json_response(await ctx.registry.update_scale(
            info.key, info.name, body, namespace=info.namespace, dry_run=opts.dry_run,
            user=_user(request)))
    updated = await ctx.registry.update(info.key, body, subresource=info.subresource,
                                           dry_run=opts.dry_run, user=_user(request),
                                           field_manager=_manager(request, opts))
    return json_response(updated)


def _check_identity(body: dict[str, Any], info: RequestInfo) -> None:
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


async def _patch(ctx: ServerContext, request: web.Request, rt: ResourceType,
             info: RequestInfo) -> web.StreamResponse:
    content_type = (request.headers.get("Content-Type") or "").split(";")[0].strip().lower()
    if content_type not in (patches.MERGE, patches.JSON, patches.STRATEGIC, patches.APPLY):
        raise negotiation.UnsupportedMediaType(
            f"the body of the request was in an unknown format - accepted media types include: "
            f"{patches.JSON}, {patches.MERGE}, {patches.STRATEGIC}, {patches.APPLY}")
    opts = options.write_options(request.query, options.PATCH,
                                 apply=content_type == patches.APPLY)
    document = await _body(request, rt)
    body = document.value
    if content_type == patches.APPLY:
        if info.subresource != "scale":
            body = _decode(request, rt, document, opts)

        async def applied():
            return (await ctx.registry.apply(
                info.key, info.name, deep_copy(body), namespace=info.namespace,
                manager=opts.field_manager, force=opts.force, dry_run=True, user=_user(request)))[0]
        await _check_escalation(ctx, request, info, dry_run=applied)
        obj, created = await ctx.registry.apply(
            info.key, info.name, body, namespace=info.namespace, manager=opts.field_manager,
            force=opts.force, subresource=info.subresource, dry_run=opts.dry_run,
            user=_user(request))
        return json_response(obj, 201 if created else 200)
    if content_type != patches.JSON and info.subresource != "scale":
        warnings = decoding.patch_problems(rt, body, document.duplicates, opts.field_validation)
        if warnings:
            request[WARNINGS] = [*request.get(WARNINGS, ()), *warnings]
    if info.subresource == "scale":
        current = ctx.registry.get_scale(info.key, info.name, info.namespace)
        scale = decoding.patched_decoder(rt, "scale")(
            patches.apply_patch(current, body, content_type))
        return json_response(await ctx.registry.update_scale(
            info.key, info.name, scale, namespace=info.namespace, dry_run=opts.dry_run,
            user=_user(request)))

    async def patched_copy():
        return await ctx.registry.patch(info.key, info.name, deep_copy(body), content_type,
                                           namespace=info.namespace, dry_run=True, user=_user(request),
                                           decode=decoding.patched_decoder(rt))
    await _check_escalation(ctx, request, info, dry_run=patched_copy)
    patched = await ctx.registry.patch(info.key, info.name, body, content_type,
                                          namespace=info.namespace, subresource=info.subresource,
                                          dry_run=opts.dry_run, user=_user(request),
                                          field_manager=_manager(request, opts),
                                          decode=decoding.patched_decoder(rt))
    return json_response(patched)


async def _delete_options(request: web.Request) -> options.DeleteOptions:
    raw = await negotiation.read_body(request)
    body = None
    if raw:
        body = negotiation.decode_body(raw, request.headers.get("Content-Type"))
        if not isinstance(body, dict):
            raise BadRequest("decoded object cannot be converted to DeleteOptions")
        body = decoding.decode_delete_options(body)
    return options.delete_options(request.query, body)


def _delete_args(opts: options.DeleteOptions) -> dict[str, Any]:
    return {"grace_period_seconds": opts.grace_period_seconds, "dry_run": opts.dry_run,
            "propagation_policy": opts.propagation_policy,
            "orphan_dependents": opts.orphan_dependents}


async def _delete(ctx: ServerContext, request: web.Request, rt: ResourceType,
             info: RequestInfo) -> web.StreamResponse:
    opts = await _delete_options(request)
    obj = await ctx.registry.delete(info.key, info.name, namespace=info.namespace,
                                       preconditions=opts.preconditions, user=_user(request),
                                       **_delete_args(opts))
    # As kube-apiserver: 200 with the object, 202 only when the client explicitly asked not
    # to orphan (orphanDependents=false) and the object is still there.
    pending = bool(obj.get("metadata", {}).get("deletionTimestamp"))
    return json_response(obj, 202 if pending and opts.orphan_dependents is False else 200)


async def _delete_collection(ctx: ServerContext, request: web.Request, rt: ResourceType,
             info: RequestInfo) -> web.StreamResponse:
    listed = options.list_options(request.query, rt)
    opts = await _delete_options(request)
    deleted = await ctx.registry.delete_collection(
        info.key, namespace=info.namespace, label_selector=listed.label_selector,
        field_selector=listed.field_selector, user=_user(request), **_delete_args(opts))
    return json_response({"apiVersion": rt.api_version, "kind": f"{rt.kind}List",
                          "metadata": {}, "items": deleted})


# ---- subresources ----------------------------------------------------------------

async def _get_scale(ctx: ServerContext, request: web.Request, rt: ResourceType,
             info: RequestInfo) -> web.StreamResponse:
    return json_response(ctx.registry.get_scale(info.key, info.name, info.namespace))


async def _binding(ctx: ServerContext, request: web.Request, rt: ResourceType,
             info: RequestInfo) -> web.StreamResponse:
    opts = options.write_options(request.query, options.CREATE)
    body = _decode(request, rt, await _body(request, rt), opts, "binding")
    if not isinstance(body, dict):
        raise BadRequest("the request body must be a Binding object")
    status = await ctx.registry.bind(info.namespace, info.name, body, dry_run=opts.dry_run)
    return json_response(status, status["code"])


async def _eviction(ctx: ServerContext, request: web.Request, rt: ResourceType,
             info: RequestInfo) -> web.StreamResponse:
    opts = options.write_options(request.query, options.CREATE)
    body = _decode(request, rt, await _body(request, rt), opts, "eviction")
    if not isinstance(body, dict):
        raise BadRequest("the request body must be an Eviction object")
    # An allowed eviction answers 201 Created, as upstream's create handler (seed 001 said 200).
    status = await ctx.registry.evict(info.namespace, info.name, body, user=_user(request))
    return json_response(status, status["code"])


async def _token(ctx: ServerContext, request: web.Request, rt: ResourceType,
             info: RequestInfo) -> web.StreamResponse:
    warnings: list[str] = []
    body = (await _body(request, rt, into="TokenRequest")).value
    created = await ctx.registry.create_token(info.namespace, info.name, body,
                                                 user=_user(request), warnings=warnings)
    if warnings:
        request[WARNINGS] = [*request.get(WARNINGS, ()), *warnings]
    return json_response(created, 201)


async def _log(ctx: ServerContext, request: web.Request, rt: ResourceType,
             info: RequestInfo) -> web.StreamResponse:
    return await podlogs.serve(ctx, request, info)


async def _stream(ctx: ServerContext, request: web.Request, rt: ResourceType,
             info: RequestInfo) -> web.StreamResponse:
    if info.subresource == "portforward":
        return await portforward.serve(ctx, request, info)
    return await remotecommand.serve(ctx, request, info)


_VERBS: dict[tuple[str, bool, str | None], Handler] = {
    ("GET", True, "log"): _log,
    **{(method, True, sub): _stream for method in ("GET", "POST")
       for sub in ("exec", "attach", "portforward")},
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
    ("GET", True, "approval"): _get,
    ("PUT", True, "approval"): _update,
    ("PATCH", True, "approval"): _patch,
    ("GET", True, "resize"): _get,
    ("PUT", True, "resize"): _update,
    ("PATCH", True, "resize"): _patch,
    ("GET", True, "ephemeralcontainers"): _get,
    ("PUT", True, "ephemeralcontainers"): _update,
    ("PATCH", True, "ephemeralcontainers"): _patch,
    ("GET", True, "scale"): _get_scale,
    ("PUT", True, "scale"): _update,
    ("PATCH", True, "scale"): _patch,
    ("POST", True, "binding"): _binding,
    ("POST", True, "eviction"): _eviction,
    ("POST", True, "token"): _token,
}


# encode_json, json_response and WARNINGS live in ``responses``; still importable from here
__all__ = ["ENDPOINTS_DEPRECATED", "WARNINGS", "Handler", "encode_json", "handle", "json_response",
           "resource_type"]
