"""User impersonation (``k8s.io/apiserver/pkg/endpoints/filters/impersonation.go``).

``Impersonate-User``, ``Impersonate-Group`` (repeatable), ``Impersonate-Uid`` and
``Impersonate-Extra-KEY`` make the request act as another user, if the requester may
``impersonate`` each of them: ``users`` (or the ``serviceaccounts`` object of a
``system:serviceaccount:NS:NAME`` user), ``groups``, ``authentication.k8s.io`` ``uids``
and ``userextras/KEY``. The impersonated user is in ``system:authenticated`` as any
authenticated user is. ``kubectl --as``/``--as-group`` send these headers.
"""

from __future__ import annotations

from urllib.parse import unquote

from aiohttp import web

from kvert.api.errors import BadRequest
from kvert.apiserver.authorization import forbidden
from kvert.auth.attributes import Attributes, Decision
from kvert.auth.authorizer import Authorizer
from kvert.auth.user import ANONYMOUS, AUTHENTICATED, SERVICE_ACCOUNT_PREFIX, SERVICE_ACCOUNTS, UNAUTHENTICATED, User

USER_HEADER = "Impersonate-User"
GROUP_HEADER = "Impersonate-Group"
UID_HEADER = "Impersonate-Uid"
EXTRA_PREFIX = "Impersonate-Extra-"


def impersonated(request: web.Request, requester: User, authorizer: Authorizer | None) -> User | None:
    """The user to act as, None without impersonation headers; refusals raise."""
    headers = request.headers
    name = headers.get(USER_HEADER)
    groups = headers.getall(GROUP_HEADER, [])
    uid = headers.get(UID_HEADER)
    extra: dict[str, list[str]] = {}
    for header, value in headers.items():
        if header.lower().startswith(EXTRA_PREFIX.lower()):
            key = unquote(header[len(EXTRA_PREFIX):]).lower()
            extra.setdefault(key, []).append(value)
    if name is None:
        if groups or uid is not None or extra:
            asked = [f"{GROUP_HEADER}={g}" for g in groups] + ([f"{UID_HEADER}={uid}"] if uid else []) \
                + [f"{EXTRA_PREFIX}{k}={v}" for k, vs in extra.items() for v in vs]
            raise BadRequest(f"requested [{' '.join(asked)}] without impersonating a user")
        return None
    checks = [_user_attributes(requester, name)]
    checks += [Attributes(requester, "impersonate", resource="groups", name=g) for g in groups]
    if uid is not None:
        checks.append(Attributes(requester, "impersonate", api_group="authentication.k8s.io",
                                 resource="uids", name=uid))
    checks += [Attributes(requester, "impersonate", api_group="authentication.k8s.io",
                          resource="userextras", subresource=key, name=value)
               for key, values in extra.items() for value in values]
    if authorizer is not None:
        for attrs in checks:
            decision, reason = authorizer.authorize(attrs)
            if decision is not Decision.ALLOW:
                raise forbidden(attrs, reason)
    all_groups = list(groups)
    if name.startswith(SERVICE_ACCOUNT_PREFIX) and not groups:
        # a service account's groups are a fixed mapping
        namespace = name[len(SERVICE_ACCOUNT_PREFIX):].partition(":")[0]
        all_groups = [SERVICE_ACCOUNTS, f"{SERVICE_ACCOUNTS}:{namespace}"]
    if name != ANONYMOUS and not {AUTHENTICATED, UNAUTHENTICATED} & set(all_groups):
        all_groups.append(AUTHENTICATED)
    return User(name, uid or "", tuple(all_groups),
                tuple(sorted((k, tuple(v)) for k, v in extra.items())))


def _user_attributes(requester: User, name: str) -> Attributes:
    if name.startswith(SERVICE_ACCOUNT_PREFIX):
        namespace, _, sa = name[len(SERVICE_ACCOUNT_PREFIX):].partition(":")
        if namespace and sa:
            return Attributes(requester, "impersonate", namespace=namespace,
                              resource="serviceaccounts", name=sa)
    return Attributes(requester, "impersonate", resource="users", name=name)
