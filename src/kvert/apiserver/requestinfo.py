"""What a request addresses, from its path: Kubernetes' RequestInfo.

``/api/v1/namespaces/ns/pods/name/status`` -> group "", version "v1", namespace "ns",
resource "pods", name "name", subresource "status". Paths that are not resource paths
(discovery, OpenAPI, health) have ``is_resource`` False.
"""

from __future__ import annotations

from dataclasses import dataclass

from aiohttp import web

from kvert.api.errors import RouteNotFound
from kvert.auth.user import User

USER = web.RequestKey("user", User)   # where the server keeps a request's authenticated user


_NAMESPACE_SUBRESOURCES = frozenset({"status", "finalize"})


@dataclass
class RequestInfo:
    is_resource: bool
    path: str
    group: str = ""
    version: str = ""
    namespace: str = ""
    resource: str = ""
    name: str = ""
    subresource: str = ""
    legacy_watch: bool = False   # the deprecated /watch/ path prefix
    beyond: str = ""             # parts past the subresource (a proxied path)

    @property
    def key(self) -> str:
        """The resource key the store and registry use."""
        return f"{self.group}/{self.resource}" if self.group else self.resource


def parse(path: str) -> RequestInfo:
    """The RequestInfo of a path the REST handlers serve; RouteNotFound for a resource path
    that names nothing (no resource, or parts past the subresource)."""
    info = resolve(path)
    if info.is_resource and (not info.resource or info.beyond):
        raise RouteNotFound()
    return info


def resolve(path: str) -> RequestInfo:
    """``RequestInfoFactory.NewRequestInfo``'s reading of a path, which never fails: parts
    past the subresource (a node proxy's path) are kept in ``beyond``."""
    parts = [p for p in path.split("/") if p]
    if not parts or parts[0] not in ("api", "apis"):
        return RequestInfo(False, path)
    if parts[0] == "api":
        if len(parts) < 3:
            return RequestInfo(False, path)
        group, version, rest = "", parts[1], parts[2:]
    else:
        if len(parts) < 4:
            return RequestInfo(False, path)
        group, version, rest = parts[1], parts[2], parts[3:]
    info = RequestInfo(True, path, group, version)
    if rest and rest[0] == "watch":
        info.legacy_watch = True
        rest = rest[1:]
    if len(rest) >= 2 and rest[0] == "namespaces":
        info.namespace = rest[1]
        # /namespaces/NS/RESOURCE[...] addresses namespaced objects; "/namespaces/NS" and
        # "/namespaces/NS/status|finalize" address the Namespace object itself.
        if len(rest) > 2 and rest[2] not in _NAMESPACE_SUBRESOURCES:
            rest = rest[2:]
        else:
            info.namespace = ""
    if rest:
        info.resource = rest[0]
    if len(rest) > 1:
        info.name = rest[1]
    if len(rest) > 2:
        info.subresource = rest[2]
    info.beyond = "/".join(rest[3:])
    return info
