"""The authorization step: what a request asks (``authorizer.Attributes``) and the 403.

Attributes are derived as ``k8s.io/apiserver``'s ``RequestInfoFactory`` and
``GetAuthorizerAttributes`` derive them. Resource paths: the verb is the HTTP method's
(``POST`` create, ``GET``/``HEAD`` get, ``PUT`` update, ``PATCH`` patch, ``DELETE``
delete), a ``GET`` of a collection is ``list`` (``watch`` with ``watch=true`` or under the
deprecated ``/watch/`` prefix), a ``DELETE`` of a collection is ``deletecollection``, and
a list or watch selecting one name with ``fieldSelector=metadata.name=X`` names ``X``.
Every other path (discovery, OpenAPI, ``/metrics``) is a non-resource request whose verb
is the lower-cased method. The node proxy paths are the ``proxy`` subresource of a node,
``metrics.k8s.io`` and ``autoscaling.kvert.io`` requests are resource requests like any.

A refusal is ``kvert.auth.authorizer.forbidden``'s Status (upstream's
``responsewriters.Forbidden``).
"""

from __future__ import annotations

from aiohttp import web

from kvert.apiserver.requestinfo import resolve
from kvert.auth.attributes import Attributes
from kvert.auth.authorizer import forbidden, selected_name
from kvert.auth.user import User

_METHOD_VERBS = {"POST": "create", "GET": "get", "HEAD": "get", "PUT": "update", "PATCH": "patch",
                 "DELETE": "delete"}


def request_attributes(request: web.Request, user: User) -> Attributes:
    info = resolve(request.path)
    method = request.method.upper()
    if not info.is_resource:
        return Attributes(user, method.lower(), resource_request=False, path=request.path)
    verb = _METHOD_VERBS.get(method, method.lower())
    name = info.name
    query = request.query
    field_selector = query.get("fieldSelector", "")
    if info.legacy_watch:
        verb = "watch"
    elif verb == "get" and not name:
        # what the REST handlers take for a watch (kvert.apiserver.rest)
        verb = "watch" if query.get("watch", "").lower() in ("true", "1") else "list"
        name = selected_name(field_selector)
    if verb == "delete" and not name:
        verb = "deletecollection"
    return Attributes(user, verb, namespace=info.namespace, api_group=info.group,
                      api_version=info.version, resource=info.resource,
                      subresource=info.subresource, name=name, path=request.path,
                      field_selector=field_selector)


__all__ = ["forbidden", "request_attributes"]
