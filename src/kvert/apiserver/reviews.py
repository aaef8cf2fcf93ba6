"""The review kinds: questions the API server answers and never stores.

``authorization.k8s.io/v1``: SelfSubjectAccessReview (may I?), SubjectAccessReview (may
this user?), LocalSubjectAccessReview (the same in one namespace), SelfSubjectRulesReview
(what may I do in this namespace? — ``kubectl auth can-i --list``); ``authentication.k8s.io/v1``:
TokenReview (whom does this token authenticate?) and SelfSubjectReview (who am I? —
``kubectl auth whoami``). Each is only created (``POST`` on the collection, 405 for any
other method, 404 below it), as kube-apiserver's ``pkg/registry/authorization`` and
``pkg/registry/authentication`` serve them; the answer is the submitted object with its
status filled in (a SelfSubjectReview and a SelfSubjectRulesReview are built anew).

Without an authorizer (the server allows everything) every access review is allowed and a
rules review lists one rule allowing everything, as kube-apiserver's AlwaysAllow mode does.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from aiohttp import web

from kvert.api.errors import BadRequest, Cause, Invalid, MethodNotAllowed, RouteNotFound
from kvert.api.kinds import ResourceType
from kvert.api.meta import format_time
from kvert.apiserver import negotiation
from kvert.apiserver.context import ServerContext
from kvert.apiserver.requestinfo import USER, RequestInfo
from kvert.apiserver.responses import json_response
from kvert.auth.attributes import Attributes, Decision
from kvert.auth.authorizer import Rules
from kvert.auth.rules import rule
from kvert.auth.user import User


async def handle(ctx: ServerContext, request: web.Request, rt: ResourceType,
                 info: RequestInfo) -> web.StreamResponse:
    if info.name or info.subresource:
        raise RouteNotFound()
    if request.method != "POST" or info.legacy_watch:
        raise MethodNotAllowed()
    body = await negotiation.read_object(request, rt.api_version, rt.kind)
    body = {"kind": rt.kind, "apiVersion": rt.api_version,
            **{k: v for k, v in body.items() if k not in ("kind", "apiVersion")}}
    if not isinstance(body.get("metadata", {}), dict):
        raise BadRequest("metadata must be an object")
    if rt.namespaced:
        _ensure_namespace(body, info.namespace)
    user = request.get(USER)
    answer = _ANSWERS[rt.kind](ctx, body, user, info.namespace)
    return json_response(answer, 201)


def _ensure_namespace(body: dict, namespace: str) -> None:
    """``rest.EnsureObjectNamespaceMatchesRequestNamespace``."""
    meta = body.setdefault("metadata", {})
    if meta.get("namespace") and meta["namespace"] != namespace:
        raise BadRequest("the namespace of the provided object does not match the namespace sent "
                         "on the request")
    meta["namespace"] = namespace


def _require_user(user: User | None) -> User:
    if user is None:
        raise BadRequest("no user present on request")
    return user


# ---- validation (pkg/apis/authorization/validation) ------------------------------------------

def _dict_field(obj: Any, key: str) -> dict | None:
    value = obj.get(key) if isinstance(obj, dict) else None
    return value if isinstance(value, dict) else None


def _spec_causes(spec: dict, *, self_review: bool) -> list[Cause]:
    resource = _dict_field(spec, "resourceAttributes")
    non_resource = _dict_field(spec, "nonResourceAttributes")
    causes = []
    if resource is not None and non_resource is not None:
        causes.append(Cause("spec.nonResourceAttributes", f"Invalid value: {_show(non_resource)}: "
                            "cannot be specified in combination with resourceAttributes"))
    if resource is None and non_resource is None:
        causes.append(Cause("spec.resourceAttributes", "Invalid value: \"null\": exactly one of "
                            "nonResourceAttributes or resourceAttributes must be specified"))
    if not self_review and not spec.get("user") and not spec.get("groups"):
        causes.append(Cause("spec.user", 'Invalid value: "": at least one of user or group must be '
                                         "specified"))
    return causes


def _metadata_causes(body: dict, *, local: bool) -> list[Cause]:
    meta = {k: v for k, v in (body.get("metadata") or {}).items() if k != "managedFields" and v}
    if local:
        meta.pop("namespace", None)
    if not meta:
        return []
    detail = "must be empty except for namespace" if local else "must be empty"
    return [Cause("metadata", f"Invalid value: {_show(body.get('metadata'))}: {detail}")]


def _show(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), sort_keys=True)


def _invalid(kind: str, group: str, causes: list[Cause]) -> Invalid:
    return Invalid(kind, "", causes, group)


# ---- attributes of a review --------------------------------------------------------------------

def _attributes(user: User, spec: dict) -> Attributes:
    """``ResourceAttributesFrom``/``NonResourceAttributesFrom``: an empty version is "*"."""
    resource = _dict_field(spec, "resourceAttributes")
    if resource is not None:
        def text(key: str) -> str:
            value = resource.get(key)
            return value if isinstance(value, str) else ""
        field_selector = _dict_field(resource, "fieldSelector") or {}
        return Attributes(user, text("verb"), namespace=text("namespace"), api_group=text("group"),
                          api_version=text("version") or "*", resource=text("resource"),
                          subresource=text("subresource"), name=text("name"),
                          field_selector=str(field_selector.get("rawSelector") or ""))
    non_resource = _dict_field(spec, "nonResourceAttributes") or {}
    return Attributes(user, str(non_resource.get("verb") or ""), resource_request=False,
                      path=str(non_resource.get("path") or ""))


def _decide(ctx: ServerContext, attrs: Attributes) -> dict[str, Any]:
    if ctx.authorizer is None:
        return {"allowed": True}
    decision, reason = ctx.authorizer.authorize(attrs)
    status: dict[str, Any] = {"allowed": decision is Decision.ALLOW}
    if decision is Decision.DENY:
        status["denied"] = True
    if reason:
        status["reason"] = reason
    return status


def _spec_user(spec: dict) -> User:
    """``AuthorizationAttributesFrom``: exactly the user, groups, uid and extra asked about."""
    extra = spec["extra"] if isinstance(spec.get("extra"), dict) else {}
    groups = spec["groups"] if isinstance(spec.get("groups"), list) else []
    return User(str(spec.get("user") or ""), str(spec.get("uid") or ""),
                tuple(str(g) for g in groups),
                tuple(sorted((str(k), tuple(str(v) for v in values)) for k, values in extra.items()
                             if isinstance(values, list))))


# ---- the answers -------------------------------------------------------------------------------

def _self_subject_access_review(ctx: ServerContext, body: dict[str, Any], user: User | None,
                 namespace: str) -> dict[str, Any]:
    spec = _dict_field(body, "spec") or {}
    causes = _spec_causes(spec, self_review=True) + _metadata_causes(body, local=False)
    if causes:
        raise _invalid("SelfSubjectAccessReview", "authorization.k8s.io", causes)
    body["status"] = _decide(ctx, _attributes(_require_user(user), spec))
    return body


def _subject_access_review(ctx: ServerContext, body: dict[str, Any], user: User | None,
                 namespace: str) -> dict[str, Any]:
    spec = _dict_field(body, "spec") or {}
    causes = _spec_causes(spec, self_review=False) + _metadata_causes(body, local=False)
    if causes:
        raise _invalid("SubjectAccessReview", "authorization.k8s.io", causes)
    body["status"] = _decide(ctx, _attributes(_spec_user(spec), spec))
    return body


def _local_subject_access_review(ctx: ServerContext, body: dict[str, Any], user: User | None,
                 namespace: str) -> dict[str, Any]:
    spec = _dict_field(body, "spec") or {}
    causes = _spec_causes(spec, self_review=False) + _metadata_causes(body, local=True)
    resource = _dict_field(spec, "resourceAttributes")
    if resource is not None and (resource.get("namespace") or "") != namespace:
        causes.append(Cause("spec.resourceAttributes.namespace",
                            f"Invalid value: {json.dumps(resource.get('namespace') or '')}: "
                            "must match metadata.namespace"))
    if _dict_field(spec, "nonResourceAttributes") is not None:
        causes.append(Cause("spec.nonResourceAttributes",
                            f"Invalid value: {_show(spec['nonResourceAttributes'])}: disallowed on "
                            "this kind of request"))
    if causes:
        raise _invalid("LocalSubjectAccessReview", "authorization.k8s.io", causes)
    body["status"] = _decide(ctx, _attributes(_spec_user(spec), spec))
    return body


def _self_subject_rules_review(ctx: ServerContext, body: dict[str, Any], user: User | None,
                 namespace: str) -> dict[str, Any]:
    user = _require_user(user)
    spec = _dict_field(body, "spec") or {}
    target = spec.get("namespace") if isinstance(spec.get("namespace"), str) else ""
    if not target:
        raise BadRequest("no namespace on request")
    resolve = getattr(ctx.authorizer, "rules_for", None)
    if ctx.authorizer is None:
        rules = Rules([rule("*", groups=("*",), resources=("*",))], [rule("*", urls=("*",))])
    elif resolve is None:
        rules = Rules(incomplete=True)
    else:
        rules = resolve(user, target)
    status: dict[str, Any] = {
        "resourceRules": [{k: v for k, v in r.to_dict().items() if k != "nonResourceURLs"}
                          for r in rules.resource_rules],
        "nonResourceRules": [{"verbs": list(r.verbs), "nonResourceURLs": list(r.non_resource_urls)}
                             for r in rules.non_resource_rules],
        "incomplete": rules.incomplete,
    }
    if rules.errors:
        status["evaluationError"] = rules.evaluation_error
    return {"kind": "SelfSubjectRulesReview", "apiVersion": "authorization.k8s.io/v1",
            "metadata": {}, "spec": {}, "status": status}


def _user_info(user: User) -> dict:
    info: dict[str, Any] = {"username": user.name}
    if user.uid:
        info["uid"] = user.uid
    if user.groups:
        info["groups"] = list(user.groups)
    if user.extra:
        info["extra"] = user.extra_dict()
    return info


def _self_subject_review(ctx: ServerContext, body: dict[str, Any], user: User | None,
                 namespace: str) -> dict[str, Any]:
    user = _require_user(user)
    return {"kind": "SelfSubjectReview", "apiVersion": "authentication.k8s.io/v1",
            "metadata": {"creationTimestamp": format_time(ctx.clock.now())},
            "status": {"userInfo": _user_info(user)}}


def _token_review(ctx: ServerContext, body: dict[str, Any], user: User | None,
                 namespace: str) -> dict[str, Any]:
    spec = _dict_field(body, "spec") or {}
    token = spec.get("token") if isinstance(spec.get("token"), str) else ""
    if not token:
        raise BadRequest("token is required for TokenReview in authentication")
    status: dict[str, Any] = {}
    if ctx.authenticator is None:
        body["status"] = status
        return body
    wanted = [a for a in spec.get("audiences") or () if isinstance(a, str)]
    # a static or component token is valid for the API server's own audiences only
    audiences = [a for a in (wanted or ctx.api_audiences) if a in ctx.api_audiences]
    found = ctx.authenticator.authenticate("Bearer " + token) if audiences else None
    if found is not None:
        status["authenticated"] = True
        status["user"] = _user_info(found)
        status["audiences"] = audiences
    else:
        status["user"] = {}
    body["status"] = status
    return body


# each review kind's answer: (context, the submitted body, the requester, the URL's namespace)
_ANSWERS: dict[str, Callable[[ServerContext, dict[str, Any], User | None, str], dict[str, Any]]] = {
    "SelfSubjectAccessReview": _self_subject_access_review,
    "SubjectAccessReview": _subject_access_review,
    "LocalSubjectAccessReview": _local_subject_access_review,
    "SelfSubjectRulesReview": _self_subject_rules_review,
    "SelfSubjectReview": _self_subject_review,
    "TokenReview": _token_review,
}
