"""A pod's resources, worked out once per pod version.

The scheduler, the kubelet and the VPA each ask for the same pod's container requests,
effective requests and QoS class many times between two writes of that pod; each answer
parses every quantity again. :func:`pod_resources` computes them once, with the functions of
:mod:`kvert.api.pods`, into an immutable :class:`PodResources`, and keeps it by the pod's
``(uid, resourceVersion)``: a stored object never changes without a new resourceVersion, so
the key names one content. Pods without both (not stored yet) are computed afresh every time,
and so must be a pod its holder changed in place: call :func:`compute_pod_resources` for it.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from kvert.api.pods import (
    PodLike,
    container_limits,
    container_requests,
    is_restartable_init_container,
    pod_limits,
    pod_requests,
    qos_class,
)
from kvert.api.resources import ResourceList
from kvert.api.types import Container, ObjectMeta, PodSpec

CACHE_SIZE = 16384
"""Pod versions kept: a large cluster's pods, with room for the versions in flight."""

APP = "container"
INIT = "initContainer"
SIDECAR = "sidecar"

FrozenResourceList = Mapping[str, int]
"""A read-only :data:`kvert.api.resources.ResourceList`: views are shared between callers."""


def _frozen(rl: ResourceList) -> FrozenResourceList:
    return MappingProxyType(rl)


@dataclass(frozen=True, slots=True)
class ContainerResources:
    """One container's requests (defaulted from its limits, as the API server does) and limits,
    in integers: cpu in millicores, everything else in base units."""

    name: str
    kind: str  # APP, INIT or SIDECAR
    requests: FrozenResourceList
    limits: FrozenResourceList


@dataclass(frozen=True, slots=True)
class PodResources:
    """What a pod version asks for: per container, and as the pod's effective totals."""

    uid: str
    resource_version: str
    containers: tuple[ContainerResources, ...]
    init_containers: tuple[ContainerResources, ...]  # in spec order, sidecars among them
    requests: FrozenResourceList  # pod_requests: app + sidecars vs the init phases, + overhead
    limits: FrozenResourceList    # pod_limits: absent means unlimited
    qos_class: str

    @property
    def sidecars(self) -> tuple[ContainerResources, ...]:
        return tuple(c for c in self.init_containers if c.kind == SIDECAR)

    def container(self, name: str) -> ContainerResources | None:
        """The app, init or sidecar container called ``name``."""
        for c in self.containers + self.init_containers:
            if c.name == name:
                return c
        return None


def _container(c: Container, kind: str, path: str) -> ContainerResources:
    return ContainerResources(name=c.get("name", ""), kind=kind,
                              requests=_frozen(container_requests(c, path=path)),
                              limits=_frozen(container_limits(c, path=path)))


def compute_pod_resources(pod: PodLike) -> PodResources:
    """The view of ``pod`` as it is now, without the cache. Raises QuantityError (naming the
    field) for a quantity that does not parse, as :mod:`kvert.api.pods` does."""
    meta: ObjectMeta = pod.get("metadata") or {}
    spec: PodSpec = pod.get("spec") or {}
    containers = tuple(_container(c, APP, f"spec.containers[{i}]")
                       for i, c in enumerate(spec.get("containers") or []))
    init_containers = tuple(
        _container(c, SIDECAR if is_restartable_init_container(c) else INIT, f"spec.initContainers[{i}]")
        for i, c in enumerate(spec.get("initContainers") or []))
    return PodResources(uid=meta.get("uid") or "", resource_version=meta.get("resourceVersion") or "",
                        containers=containers, init_containers=init_containers,
                        requests=_frozen(pod_requests(pod)), limits=_frozen(pod_limits(pod)),
                        qos_class=qos_class(pod))


class _LRU:
    """A bounded map from pod version to view; shared by the threads of one process."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._items: OrderedDict[tuple[str, str], PodResources] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: tuple[str, str]) -> PodResources | None:
        with self._lock:
            hit = self._items.get(key)
            if hit is not None:
                self._items.move_to_end(key)
            return hit

    def put(self, key: tuple[str, str], value: PodResources) -> None:
        with self._lock:
            self._items[key] = value
            self._items.move_to_end(key)
            while len(self._items) > self.size:
                self._items.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._items.clear()

    def __len__(self) -> int:
        return len(self._items)


_CACHE = _LRU(CACHE_SIZE)


def pod_resources(pod: PodLike) -> PodResources:
    """The view of ``pod``, from the cache when this version has been seen."""
    meta: ObjectMeta = pod.get("metadata") or {}
    uid, version = meta.get("uid"), meta.get("resourceVersion")
    if not uid or not version:
        return compute_pod_resources(pod)
    key = (uid, version)
    hit = _CACHE.get(key)
    if hit is None:
        hit = compute_pod_resources(pod)  # outside the lock: parsing is the slow part
        _CACHE.put(key, hit)
    return hit


def clear_cache() -> None:
    _CACHE.clear()


def cached_count() -> int:
    return len(_CACHE)
