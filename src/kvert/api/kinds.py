"""The resource types kvert serves: group, version, kind, plural, scope, subresources.

A resource is named by its *key*: the plural for the core group (``"pods"``) and
``"GROUP/PLURAL"`` otherwise (``"apps/deployments"``). Stores, clients and the API
server all address objects by key, so custom resources need nothing special.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class ResourceType:
    group: str
    version: str
    kind: str
    plural: str
    namespaced: bool
    subresources: frozenset[str] = field(default_factory=frozenset)
    short_names: tuple[str, ...] = ()

    @property
    def key(self) -> str:
        return f"{self.group}/{self.plural}" if self.group else self.plural

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def singular(self) -> str:
        return self.kind.lower()

    @property
    def has_status(self) -> bool:
        return "status" in self.subresources


def _rt(group: str, version: str, kind: str, plural: str, namespaced: bool,
        subresources: tuple[str, ...] = (), short: tuple[str, ...] = ()) -> ResourceType:
    return ResourceType(group, version, kind, plural, namespaced, frozenset(subresources), short)


BUILTIN: tuple[ResourceType, ...] = (
    _rt("", "v1", "Namespace", "namespaces", False, ("status",), ("ns",)),
    _rt("", "v1", "Node", "nodes", False, ("status",), ("no",)),
    _rt("", "v1", "Pod", "pods", True,
        ("status", "binding", "eviction", "resize", "log"), ("po",)),
    _rt("", "v1", "Event", "events", True, (), ("ev",)),
    _rt("", "v1", "ConfigMap", "configmaps", True, (), ("cm",)),
    _rt("", "v1", "Service", "services", True, ("status",), ("svc",)),
    _rt("", "v1", "LimitRange", "limitranges", True, (), ("limits",)),
    _rt("", "v1", "ResourceQuota", "resourcequotas", True, ("status",), ("quota",)),
    _rt("apps", "v1", "Deployment", "deployments", True, ("status", "scale"), ("deploy",)),
    _rt("apps", "v1", "ReplicaSet", "replicasets", True, ("status", "scale"), ("rs",)),
    _rt("policy", "v1", "PodDisruptionBudget", "poddisruptionbudgets", True, ("status",),
        ("pdb",)),
    _rt("scheduling.k8s.io", "v1", "PriorityClass", "priorityclasses", False, (), ("pc",)),
    _rt("node.k8s.io", "v1", "RuntimeClass", "runtimeclasses", False),
    _rt("coordination.k8s.io", "v1", "Lease", "leases", True),
    _rt("events.k8s.io", "v1", "Event", "events", True, (), ("ev",)),
    _rt("autoscaling.k8s.io", "v1", "VerticalPodAutoscaler", "verticalpodautoscalers", True,
        ("status",), ("vpa",)),
    _rt("autoscaling.k8s.io", "v1", "VerticalPodAutoscalerCheckpoint",
        "verticalpodautoscalercheckpoints", True, (), ("vpacheckpoint",)),
)

_BY_KEY: dict[str, ResourceType] = {rt.key: rt for rt in BUILTIN}
_BY_GVK: dict[tuple[str, str], ResourceType] = {(rt.api_version, rt.kind): rt for rt in BUILTIN}


def register(rt: ResourceType) -> None:
    """Add a type (a custom resource) to the table every layer looks kinds up in."""
    _BY_KEY[rt.key] = rt
    _BY_GVK[(rt.api_version, rt.kind)] = rt


def by_key(key: str) -> ResourceType:
    try:
        return _BY_KEY[key]
    except KeyError:
        raise KeyError(f"unknown resource {key!r}") from None


def for_object(obj: dict) -> ResourceType:
    """The type of an object from its apiVersion and kind."""
    api_version, kind = obj.get("apiVersion", ""), obj.get("kind", "")
    try:
        return _BY_GVK[(api_version, kind)]
    except KeyError:
        raise KeyError(f"unknown kind {kind!r} in {api_version!r}") from None


def all_types() -> list[ResourceType]:
    return list(_BY_KEY.values())
