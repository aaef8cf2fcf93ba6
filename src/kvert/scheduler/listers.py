"""What plugins read of the cluster besides nodes and pods: PDBs, Services, workloads, ...

``handle.listers.list(resource, namespace=None)`` answers synchronously, as client-go
listers do, from one of two sources:

* :class:`InformerListers`: the live scheduler's shared informers (one per resource, started
  with the scheduler, read from their caches; a resource the API server does not serve reads
  as empty);
* :class:`StaticListers`: fixed objects, for ``kvert schedule`` over a cluster snapshot and
  for tests.

The resources the in-tree plugins read are :data:`SCHEDULER_RESOURCES`.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from typing import Any, Protocol

from kvert.api.errors import ApiError
from kvert.client.cache import InformerFactory
from kvert.client.informer import Informer

log = logging.getLogger(__name__)

# PDBs (preemption), Services / ReplicaSets / StatefulSets / ReplicationControllers (system
# default topology spreading), Namespaces are watched by the scheduler itself (the cache),
# PriorityClasses are resolved by admission into spec.priority.
SCHEDULER_RESOURCES = ("poddisruptionbudgets", "services", "replicasets", "statefulsets",
                       "replicationcontrollers", "resourceclaims", "resourceslices",
                       "deviceclasses", "workloads")
# the plural names plugins use -> the client's resource keys (group/plural)
RESOURCE_KEYS = {"poddisruptionbudgets": "policy/poddisruptionbudgets",
                 "replicasets": "apps/replicasets", "statefulsets": "apps/statefulsets",
                 "services": "services", "replicationcontrollers": "replicationcontrollers",
                 "resourceclaims": "resource.k8s.io/resourceclaims",
                 "resourceslices": "resource.k8s.io/resourceslices",
                 "deviceclasses": "resource.k8s.io/deviceclasses",
                 "workloads": "scheduling.k8s.io/workloads"}


_NS_INDEX = "namespace"


def _ns(obj: dict) -> str:
    return (obj.get("metadata") or {}).get("namespace") or ""


class StaticListers:
    """Listers over fixed objects: ``{resource: [objects]}``."""

    def __init__(self, objects: Mapping[str, Iterable[dict[str, Any]]] | None = None):
        self._objects = {r: list(objs) for r, objs in (objects or {}).items()}

    def list(self, resource: str, namespace: str | None = None) -> list[dict]:
        items = self._objects.get(resource, [])
        if namespace is None:
            return list(items)
        return [o for o in items if _ns(o) == namespace]

    def get(self, resource: str, name: str, namespace: str = "") -> dict | None:
        return next((o for o in self._objects.get(resource, ())
                     if _ns(o) == namespace and (o.get("metadata") or {}).get("name") == name),
                    None)

    def add(self, resource: str, obj: dict) -> None:
        self._objects.setdefault(resource, []).append(obj)


class InformerListers:
    """Listers over informers of a shared :class:`InformerFactory`."""

    def __init__(self, factory: InformerFactory, resources: Iterable[str] = SCHEDULER_RESOURCES):
        self.factory = factory
        self.resources = tuple(resources)
        self._informers: dict[str, Informer] = {}

    async def start(self) -> None:
        """Start an informer for every served resource and wait until they have listed."""
        for resource in self.resources:
            key = RESOURCE_KEYS.get(resource, resource)
            if not await self._served(key):
                continue
            informer = self.factory.informer(key)
            if not informer.has_index(_NS_INDEX):
                informer.add_index(_NS_INDEX, lambda o: [_ns(o)])
            self._informers[resource] = informer
        self.factory.start()
        await self.factory.wait_synced(self._informers.values())

    async def _served(self, resource: str) -> bool:
        """Whether the API server serves ``resource`` (retrying while it cannot be reached)."""
        delay = 0.5
        while True:
            try:
                await self.factory.client.list(resource, limit=1)
                return True
            except KeyError:     # the in-process client: a kind kvert does not serve
                log.info("scheduler: %s not served; reading it as empty", resource)
                return False
            except ApiError as e:
                if e.code == 404:
                    log.info("scheduler: %s not served; reading it as empty", resource)
                    return False
                log.warning("scheduler: cannot list %s (%s); retrying", resource, e)
            except OSError as e:
                log.warning("scheduler: cannot list %s (%s); retrying", resource, e)
            await self.factory.clock.sleep(delay)
            delay = min(delay * 2, 10.0)

    def informer(self, resource: str) -> Informer | None:
        return self._informers.get(resource)

    def list(self, resource: str, namespace: str | None = None) -> list[dict]:
        informer = self._informers.get(resource)
        if informer is None:
            return []
        if namespace is None:
            return informer.list()
        return informer.by_index(_NS_INDEX, namespace)

    def get(self, resource: str, name: str, namespace: str = "") -> dict | None:
        informer = self._informers.get(resource)
        return None if informer is None else informer.get(name, namespace)


class Listers(Protocol):
    """What plugins read through ``handle.listers`` (StaticListers, InformerListers)."""

    def list(self, resource: str, namespace: str | None = None) -> list[dict[str, Any]]:
        """The objects of ``resource`` (one namespace's, or every namespace's for None)."""

    def get(self, resource: str, name: str, namespace: str = "") -> dict[str, Any] | None:
        """One object, or None."""

__all__ = ["InformerListers", "Listers", "SCHEDULER_RESOURCES", "StaticListers"]
