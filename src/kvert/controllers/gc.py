"""The garbage collector: delete objects whose owners are gone (background propagation).

An object with ``metadata.ownerReferences`` is a dependent. When every owner it names is
absent -- not found, or found with another uid (a namesake made later) -- the collector
deletes it, with a uid precondition and the default grace period (so a pod on a node
terminates gracefully). When some owners remain and others are gone, it only removes the
dangling references. Deleting a Deployment thus deletes its ReplicaSets, and deleting
those deletes their pods.

It watches a set of resources (pods, ReplicaSets, Deployments, PodDisruptionBudgets,
ConfigMaps, Services by default) and indexes them by owner uid: the deletion of any
watched object enqueues its dependents, and a dependent is checked when it appears or its
owner references change (which also covers a dependent created just after its owner was
deleted, and a collector restarted after its owners went). An owner is looked up in the
informer cache first and, when not found there, with a live GET, so a cache that lags
behind never gets an object deleted whose owner exists.

Not implemented: foreground deletion and orphaning (``propagationPolicy: Foreground /
Orphan``, the ``foregroundDeletion`` / ``orphan`` finalizers); dependents of kinds that are
not watched are only collected when they are checked for another reason.
"""

from __future__ import annotations

import logging
from collections import deque
from typing import Any

from kvert.api import kinds
from kvert.api.errors import NotFound
from kvert.clock import Clock
from kvert.controllers.base import (OWNER_INDEX, Controller, InformerFactory, index_owner_uids,
                                    safe_handler)
from kvert.controllers.util import is_deleting, uid_of

log = logging.getLogger(__name__)

DEFAULT_RESOURCES = ("pods", "apps/replicasets", "apps/deployments", "policy/poddisruptionbudgets",
                     "configmaps", "services")

PRESENT, ABSENT, UNKNOWN = "present", "absent", "unknown"

Key = tuple[str, str, str]  # (resource, namespace, name)


class GarbageCollector(Controller):
    name = "garbage-collector"

    def __init__(self, client: Any, clock: Clock, *, informers: InformerFactory | None = None,
                 workers: int = 1, resources: tuple[str, ...] | list[str] | None = None):
        super().__init__(client, clock, informers=informers, workers=workers)
        self.resources: list[str] = []
        for resource in resources or DEFAULT_RESOURCES:
            try:
                kinds.by_key(resource)
            except KeyError:
                log.info("%s: %s is not served; not watching it", self.name, resource)
                continue
            self.resources.append(resource)
        self._informers = {}
        for resource in self.resources:
            informer = self.use(resource)
            informer.add_index(OWNER_INDEX, index_owner_uids)
            informer.add_handlers(safe_handler(lambda obj, r=resource: self._added(r, obj)),
                                  safe_handler(lambda old, cur, r=resource: self._updated(r, old, cur)),
                                  safe_handler(self._deleted))
            self._informers[resource] = informer
        # the latest objects this collector deleted, for explanations and tests
        self.deleted: deque[Key] = deque(maxlen=1000)

    # ---- handlers -------------------------------------------------------------------------

    def _key(self, resource: str, obj: dict) -> Key:
        meta = obj.get("metadata") or {}
        return resource, meta.get("namespace", "") or "", meta.get("name", "")

    def _added(self, resource: str, obj: dict) -> None:
        if (obj.get("metadata") or {}).get("ownerReferences"):
            self.enqueue(self._key(resource, obj))

    def _updated(self, resource: str, old: dict, cur: dict) -> None:
        old_refs = (old.get("metadata") or {}).get("ownerReferences")
        cur_refs = (cur.get("metadata") or {}).get("ownerReferences")
        if cur_refs and cur_refs != old_refs:
            self.enqueue(self._key(resource, cur))

    def _deleted(self, owner: dict) -> None:
        uid = uid_of(owner)
        if not uid:
            return
        for resource, informer in self._informers.items():
            for dependent in informer.by_index(OWNER_INDEX, uid):
                self.enqueue(self._key(resource, dependent))

    # ---- sync ------------------------------------------------------------------------------

    async def sync(self, key: Key) -> None:
        resource, namespace, name = key
        informer = self._informers.get(resource)
        if informer is None:
            return
        obj = informer.get(name, namespace)
        if obj is None or is_deleting(obj):
            return
        refs = [r for r in (obj.get("metadata") or {}).get("ownerReferences") or [] if isinstance(r, dict)]
        if not refs:
            return
        states = [await self._owner_state(ref, namespace) for ref in refs]
        if PRESENT not in states and UNKNOWN not in states:
            await self._delete(key, obj)
            return
        if ABSENT in states:
            remaining = [ref for ref, state in zip(refs, states) if state != ABSENT]
            patch = {"metadata": {"ownerReferences": remaining,
                                  "resourceVersion": obj["metadata"].get("resourceVersion")}}
            try:
                await self.client.patch(resource, name, patch, "merge", namespace=namespace)
            except NotFound:
                return
            log.info("%s: removed dangling owner references of %s %s/%s", self.name, resource,
                     namespace, name)

    async def _owner_state(self, ref: dict, namespace: str) -> str:
        try:
            rt = kinds.by_gvk(ref.get("apiVersion", ""), ref.get("kind", ""))
        except KeyError:
            return UNKNOWN  # a kind we cannot look up: never delete on a guess
        if not rt.namespaced:
            owner_namespace = ""
        elif namespace:
            owner_namespace = namespace
        else:
            return UNKNOWN  # a cluster-scoped dependent cannot have a namespaced owner
        name = ref.get("name", "")
        informer = self._informers.get(rt.key)
        if informer is not None:
            cached = informer.get(name, owner_namespace)
            if cached is not None and uid_of(cached) == ref.get("uid"):
                return PRESENT
        try:
            live = await self.client.get(rt.key, name, owner_namespace)
        except NotFound:
            return ABSENT
        return PRESENT if uid_of(live) == ref.get("uid") else ABSENT

    async def _delete(self, key: Key, obj: dict) -> None:
        resource, namespace, name = key
        try:
            await self.client.delete(resource, name, namespace=namespace,
                                     preconditions={"uid": uid_of(obj)})
        except NotFound:
            return
        self.deleted.append(key)
        log.info("%s: deleted %s %s/%s: its owners are gone", self.name, resource, namespace, name)
