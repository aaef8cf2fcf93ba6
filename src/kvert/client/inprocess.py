"""The in-process client: the Client protocol straight over a Registry, no HTTP.

Simulation and the components inside ``kvert up`` use it. Every write takes the
registry's full path (defaulting, admission, validation), so a component behaves the
same here as against a remote API server.

``user`` names who writes (a name, or a ``kvert.auth.User``). ``authorize``, when given,
holds the client to the API server's rules: it is called before every request as
``authorize(user, verb, resource, namespace, name, subresource, field_selector)`` and
raises the 403 the server would answer (``kvert.auth.request_check(authorizer)`` makes
one). Without it, everything is allowed.
"""

from __future__ import annotations

from kvert.api.errors import RouteNotFound
from kvert.api.meta import deep_copy
from kvert.api.types import Obj
from kvert.auth.authorizer import RequestCheck
from kvert.auth.user import User
from kvert.client.base import Patch, binding_body, eviction_body
from kvert.registry import Registry
from kvert.store.base import Watch


class InProcessClient:
    def __init__(self, registry: Registry, user: User | str = "",
                 authorize: RequestCheck | None = None) -> None:
        self.registry = registry
        self.identity = user
        # what the registry records
        self.user: str = user.name if isinstance(user, User) else user
        self._authorize = authorize

    def _check(self, verb: str, resource: str, namespace: str | None = "", name: str = "",
               subresource: str = "", field_selector: str = "") -> None:
        if self._authorize is not None:
            self._authorize(self.identity, verb, resource, namespace or "", name, subresource,
                            field_selector)

    async def get(self, resource: str, name: str, namespace: str = "") -> Obj:
        self._check("get", resource, namespace, name)
        return self.registry.get(resource, name, namespace)

    async def list(self, resource: str, *, namespace: str | None = None, label_selector: str = "",
                   field_selector: str = "", limit: int = 0, continue_token: str = "",
                   resource_version: str = "") -> Obj:
        self._check("list", resource, namespace, field_selector=field_selector)
        return self.registry.list(resource, namespace=namespace, label_selector=label_selector,
                                  field_selector=field_selector, limit=limit,
                                  continue_token=continue_token, resource_version=resource_version)

    async def create(self, resource: str, obj: Obj, *, namespace: str | None = None,
                     dry_run: bool = False) -> Obj:
        meta = obj.get("metadata") if isinstance(obj, dict) else None
        self._check("create", resource,
                    namespace or (meta.get("namespace", "") if isinstance(meta, dict) else ""))
        # the whole identity, as a request's: a CSR records its requester's groups
        return await self.registry.create(resource, obj, namespace=namespace, dry_run=dry_run,
                                          user=self.user,
                                          requester=self.identity if isinstance(self.identity, User) else None)

    async def update(self, resource: str, obj: Obj, *, subresource: str = "",
                     dry_run: bool = False) -> Obj:
        meta = (obj.get("metadata") if isinstance(obj, dict) else None) or {}
        self._check("update", resource, meta.get("namespace", ""), meta.get("name", ""),
                    subresource)
        return await self.registry.update(resource, obj, subresource=subresource, dry_run=dry_run,
                                          user=self.user)

    async def patch(self, resource: str, name: str, patch: Patch, patch_type: str = "merge", *,
                    namespace: str = "", subresource: str = "", dry_run: bool = False) -> Obj:
        self._check("patch", resource, namespace, name, subresource)
        return await self.registry.patch(resource, name, deep_copy(patch), patch_type,
                                         namespace=namespace, subresource=subresource,
                                         dry_run=dry_run, user=self.user)

    async def delete(self, resource: str, name: str, *, namespace: str = "",
                     grace_period_seconds: int | None = None, preconditions: Obj | None = None,
                     dry_run: bool = False, propagation_policy: str | None = None) -> Obj:
        self._check("delete", resource, namespace, name)
        return await self.registry.delete(resource, name, namespace=namespace,
                                          grace_period_seconds=grace_period_seconds,
                                          preconditions=preconditions, dry_run=dry_run,
                                          user=self.user, propagation_policy=propagation_policy)

    async def watch(self, resource: str, *, namespace: str | None = None, label_selector: str = "",
                    field_selector: str = "", resource_version: str = "",
                    send_initial_events: bool = False, allow_bookmarks: bool = False) -> Watch:
        self._check("watch", resource, namespace, field_selector=field_selector)
        return self.registry.watch(resource, namespace=namespace, label_selector=label_selector,
                                   field_selector=field_selector, resource_version=resource_version,
                                   send_initial_events=send_initial_events,
                                   allow_bookmarks=allow_bookmarks)

    async def update_status(self, resource: str, obj: Obj) -> Obj:
        return await self.update(resource, obj, subresource="status")

    async def bind(self, namespace: str, pod_name: str, node_name: str,
                   annotations: dict[str, str] | None = None) -> Obj:
        self._check("create", "pods", namespace, pod_name, "binding")
        return await self.registry.bind(namespace, pod_name,
                                        binding_body(namespace, pod_name, node_name, annotations))

    async def evict(self, namespace: str, pod_name: str, *,
                    grace_period_seconds: int | None = None) -> Obj:
        self._check("create", "pods", namespace, pod_name, "eviction")
        return await self.registry.evict(namespace, pod_name,
                                         eviction_body(namespace, pod_name, grace_period_seconds),
                                         user=self.user)

    async def resize(self, namespace: str, pod_name: str, patch: Patch,
                     patch_type: str = "strategic") -> Obj:
        return await self.patch("pods", pod_name, patch, patch_type, namespace=namespace,
                                subresource="resize")

    async def get_scale(self, resource: str, name: str, namespace: str = "") -> Obj:
        self._check("get", resource, namespace, name, "scale")
        return self.registry.get_scale(resource, name, namespace)

    async def update_scale(self, resource: str, scale: Obj) -> Obj:
        meta = scale.get("metadata") or {}
        self._check("update", resource, meta.get("namespace", ""), meta.get("name", ""), "scale")
        return await self.registry.update_scale(resource, meta.get("name", ""), deep_copy(scale),
                                                namespace=meta.get("namespace", ""), user=self.user)

    async def create_subresource(self, resource: str, name: str, subresource: str, body: Obj, *,
                                 namespace: str = "") -> Obj:
        if (resource, subresource) == ("serviceaccounts", "token"):
            return await self.registry.create_token(namespace, name, deep_copy(body), user=self.user)
        if (resource, subresource) == ("pods", "binding"):
            return await self.registry.bind(namespace, name, deep_copy(body))
        if (resource, subresource) == ("pods", "eviction"):
            return await self.registry.evict(namespace, name, deep_copy(body), user=self.user)
        raise RouteNotFound()
