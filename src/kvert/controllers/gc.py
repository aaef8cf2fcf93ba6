"""The garbage collector: dependents of deleted owners, in the three propagation modes.

An object with ``metadata.ownerReferences`` is a dependent; what happens to it follows its
owners (kube-controller-manager's ``attemptToDeleteItem``, with the owners classified as
there):

* *solid* owners exist and are not waiting for their dependents: the dependent stays;
  references to owners that are gone (*dangling*: not found, or found with another uid) or
  that wait for their dependents are removed from it;
* no solid owner, but one *waiting* (being deleted with the ``foregroundDeletion``
  finalizer) and the dependent has dependents of its own: it is deleted in the foreground
  too, so the deletion walks down the tree and the owner waits for all of it;
* otherwise (every owner gone, or waiting and the dependent has no dependents): it is
  deleted with the propagation its own finalizers ask for (background by default), with a
  uid precondition and the default grace period (a pod on a node terminates gracefully).

Owners being deleted with a finalizer of the collector's:

* ``orphan`` (``propagationPolicy: Orphan``, ``kubectl delete --cascade=orphan``): every
  dependent loses its references to the owner, then the finalizer is removed, which
  removes the owner; the dependents live on;
* ``foregroundDeletion`` (``propagationPolicy: Foreground``, ``--cascade=foreground``):
  every dependent is deleted as above; the finalizer is removed once no dependent with
  ``blockOwnerDeletion: true`` is left, so the owner disappears after its children.

It watches a set of resources and indexes them by owner uid: the deletion or change of any
watched object enqueues what it may concern (its dependents, its owners waiting for it), and
a dependent is checked when it appears or its owner references change (which also covers a
dependent created just after its owner was deleted, and a collector restarted after its owners
went). An owner is looked up in the informer cache first and, when not found there, with a
live GET, so a cache that lags behind never gets an object deleted whose owner exists.
Dependents of kinds that are not watched are only collected when they are checked for
another reason.
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Set
from typing import Any

from kvert.api import kinds
from kvert.api.errors import Conflict, NotFound
from kvert.client.base import Client
from kvert.clock import Clock
from kvert.controllers.base import OWNER_INDEX, Controller, InformerFactory, index_owner_uids, safe_handler
from kvert.controllers.util import is_deleting, uid_of
from kvert.registry.deletion import BACKGROUND, FOREGROUND, FOREGROUND_FINALIZER, ORPHAN, ORPHAN_FINALIZER

log = logging.getLogger(__name__)

DEFAULT_RESOURCES = ("pods", "apps/replicasets", "apps/deployments", "apps/statefulsets",
                     "apps/daemonsets", "apps/controllerrevisions", "replicationcontrollers",
                     "persistentvolumeclaims", "batch/jobs", "batch/cronjobs",
                     "policy/poddisruptionbudgets", "configmaps", "services", "nodes",
                     "coordination.k8s.io/leases", "discovery.k8s.io/endpointslices")

SOLID, DANGLING, WAITING, UNKNOWN = "solid", "dangling", "waiting", "unknown"

Key = tuple[str, str, str]  # (resource, namespace, name)


def has_finalizer(obj: dict, finalizer: str) -> bool:
    return finalizer in ((obj.get("metadata") or {}).get("finalizers") or [])


def waiting_for_dependents(obj: dict) -> bool:
    """Being deleted in the foreground: it waits until its blocking dependents are gone."""
    return is_deleting(obj) and has_finalizer(obj, FOREGROUND_FINALIZER)


def orphaning(obj: dict) -> bool:
    return is_deleting(obj) and has_finalizer(obj, ORPHAN_FINALIZER)


def _refs(obj: dict) -> list[dict]:
    return [r for r in (obj.get("metadata") or {}).get("ownerReferences") or [] if isinstance(r, dict)]


class GarbageCollector(Controller):
    name = "garbage-collector"

    def __init__(self, client: Client, clock: Clock, *, informers: InformerFactory | None = None,
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
                                  safe_handler(lambda obj, r=resource: self._deleted(r, obj)))
            self._informers[resource] = informer
        # the latest objects this collector deleted, for explanations and tests
        self.deleted: deque[Key] = deque(maxlen=1000)

    # ---- handlers -------------------------------------------------------------------------

    def _key(self, resource: str, obj: dict) -> Key:
        meta = obj.get("metadata") or {}
        return resource, meta.get("namespace", "") or "", meta.get("name", "")

    def _added(self, resource: str, obj: dict) -> None:
        if _refs(obj) or orphaning(obj) or waiting_for_dependents(obj):
            self.enqueue(self._key(resource, obj))

    def _updated(self, resource: str, old: dict, cur: dict) -> None:
        cur_refs = _refs(cur)
        if (cur_refs and cur_refs != _refs(old)) or \
                (orphaning(cur) and not orphaning(old)) or \
                (waiting_for_dependents(cur) and not waiting_for_dependents(old)):
            self.enqueue(self._key(resource, cur))
        if waiting_for_dependents(cur) and not waiting_for_dependents(old):
            self._enqueue_dependents(uid_of(cur))
        if is_deleting(cur) and not is_deleting(old):
            self._enqueue_waiting_owners(cur)

    def _deleted(self, resource: str, obj: dict) -> None:
        self._enqueue_dependents(uid_of(obj))
        self._enqueue_waiting_owners(obj)

    def _enqueue_dependents(self, uid: str) -> None:
        if not uid:
            return
        for resource, informer in self._informers.items():
            for dependent in informer.by_index(OWNER_INDEX, uid):
                self.enqueue(self._key(resource, dependent))

    def _enqueue_waiting_owners(self, obj: dict) -> None:
        """A dependent went (or started going): its foreground owners may be done waiting."""
        namespace = (obj.get("metadata") or {}).get("namespace", "") or ""
        for ref in _refs(obj):
            rt = self._owner_type(ref)
            if rt is None or rt.key not in self._informers:
                continue
            self.enqueue((rt.key, namespace if rt.namespaced else "", ref.get("name", "")))

    # ---- looking things up ----------------------------------------------------------------

    def _owner_type(self, ref: dict) -> Any:
        try:
            return kinds.by_gvk(ref.get("apiVersion", ""), ref.get("kind", ""))
        except KeyError:
            return None

    def dependents(self, uid: str) -> list[tuple[str, dict]]:
        """Every watched object naming ``uid`` as an owner, with its resource."""
        out: list[tuple[str, dict]] = []
        for resource, informer in self._informers.items():
            out.extend((resource, obj) for obj in informer.by_index(OWNER_INDEX, uid))
        return out

    async def _owner(self, ref: dict, namespace: str) -> tuple[str, dict | None]:
        """The owner a reference names and its class for the dependent."""
        rt = self._owner_type(ref)
        if rt is None:
            return UNKNOWN, None   # a kind we cannot look up: never delete on a guess
        if not rt.namespaced:
            owner_namespace = ""
        elif namespace:
            owner_namespace = namespace
        else:
            return UNKNOWN, None   # a cluster-scoped dependent cannot have a namespaced owner
        name = ref.get("name", "")
        owner = None
        informer = self._informers.get(rt.key)
        if informer is not None:
            cached = informer.get(name, owner_namespace)
            if cached is not None and uid_of(cached) == ref.get("uid"):
                owner = cached
        if owner is None:
            try:
                owner = await self.client.get(rt.key, name, owner_namespace)
            except NotFound:
                return DANGLING, None
            if uid_of(owner) != ref.get("uid"):
                return DANGLING, None
        return (WAITING if waiting_for_dependents(owner) else SOLID), owner

    # ---- sync ------------------------------------------------------------------------------

    async def sync(self, key: Key) -> None:
        resource, namespace, name = key
        informer = self._informers.get(resource)
        if informer is None:
            return
        obj = informer.get(name, namespace)
        if obj is None:
            return
        if orphaning(obj):
            await self._orphan_dependents(key, obj)
            return
        if waiting_for_dependents(obj):
            await self._delete_dependents(key, obj)
        if not is_deleting(obj) and _refs(obj):
            await self._check_dependent(key, obj)

    async def _check_dependent(self, key: Key, obj: dict) -> None:
        resource, namespace, name = key
        refs = _refs(obj)
        classes = [await self._owner(ref, namespace) for ref in refs]
        states = [state for state, _ in classes]
        if UNKNOWN in states:
            # keep what cannot be judged; still drop what surely dangles
            states = [SOLID if s == UNKNOWN else s for s in states]
        if SOLID in states:
            drop = {ref.get("uid") for ref, s in zip(refs, states) if s in (DANGLING, WAITING)}
            if drop:
                await self._remove_references(resource, obj, drop)
                log.info("%s: removed references to gone or going owners of %s %s/%s", self.name,
                         resource, namespace, name)
            return
        if WAITING in states and self.dependents(uid_of(obj)):
            await self._delete(key, obj, FOREGROUND)
            return
        if has_finalizer(obj, ORPHAN_FINALIZER):
            policy = ORPHAN
        elif has_finalizer(obj, FOREGROUND_FINALIZER):
            policy = FOREGROUND
        else:
            policy = BACKGROUND
        await self._delete(key, obj, policy)

    async def _orphan_dependents(self, key: Key, owner: dict) -> None:
        uid = uid_of(owner)
        for resource, dependent in self.dependents(uid):
            await self._remove_references(resource, dependent, {uid})
        await self._remove_finalizer(key, ORPHAN_FINALIZER)
        log.info("%s: orphaned the dependents of %s %s/%s", self.name, *key)

    async def _delete_dependents(self, key: Key, owner: dict) -> None:
        uid = uid_of(owner)
        blocking = False
        for resource, dependent in self.dependents(uid):
            if any(r.get("uid") == uid and r.get("blockOwnerDeletion") is True for r in _refs(dependent)):
                blocking = True
            if not is_deleting(dependent):
                self.enqueue(self._key(resource, dependent))
        if not blocking:
            await self._remove_finalizer(key, FOREGROUND_FINALIZER)
            log.info("%s: the dependents of %s %s/%s are gone", self.name, *key)

    # ---- writes ----------------------------------------------------------------------------

    async def _remove_references(self, resource: str, obj: dict, uids: Set[str | None]) -> None:
        meta = obj.get("metadata") or {}
        remaining = [ref for ref in _refs(obj) if ref.get("uid") not in uids]
        patch = {"metadata": {"ownerReferences": remaining or None,
                              "resourceVersion": meta.get("resourceVersion")}}
        try:
            await self.client.patch(resource, meta.get("name", ""), patch, "merge",
                                    namespace=meta.get("namespace", "") or "")
        except NotFound:
            pass
        except Conflict:
            self.enqueue(self._key(resource, obj))    # changed meanwhile: judge it again

    async def _remove_finalizer(self, key: Key, finalizer: str) -> None:
        resource, namespace, name = key
        for _ in range(5):
            try:
                obj = await self.client.get(resource, name, namespace)
            except NotFound:
                return
            finalizers = (obj.get("metadata") or {}).get("finalizers") or []
            if finalizer not in finalizers:
                return
            obj["metadata"]["finalizers"] = [f for f in finalizers if f != finalizer]
            try:
                await self.client.update(resource, obj)
                return
            except NotFound:
                return
            except Conflict:
                continue
        raise Conflict(resource, name, "the object kept changing while its finalizer was removed")

    async def _delete(self, key: Key, obj: dict, policy: str) -> None:
        resource, namespace, name = key
        try:
            await self.client.delete(resource, name, namespace=namespace,
                                     preconditions={"uid": uid_of(obj)}, propagation_policy=policy)
        except NotFound:
            return
        except Conflict:
            return      # another object by that name: it is not ours to delete
        self.deleted.append(key)
        log.info("%s: deleted %s %s/%s (%s): its owners are gone or going", self.name, resource,
                 namespace, name, policy)
