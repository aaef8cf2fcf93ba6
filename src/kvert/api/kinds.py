"""The resource types kvert serves: group, version, kind, plural, scope, subresources.

A resource is named by its *key*: the plural for the core group (``"pods"``) and
``"GROUP/PLURAL"`` otherwise (``"apps/deployments"``). Stores, clients and the API
server all address objects by key, so custom resources need nothing special.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kvert.api.types import Obj

ALL_VERBS = ("create", "delete", "deletecollection", "get", "list", "patch", "update", "watch")


@dataclass(frozen=True)
class ResourceType:
    group: str
    version: str
    kind: str
    plural: str
    namespaced: bool
    subresources: frozenset[str] = field(default_factory=frozenset)
    short_names: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    verbs: tuple[str, ...] = ALL_VERBS
    # A custom resource's openAPIV3Schema (validation, pruning, defaults); None for built-ins.
    schema: Obj | None = field(default=None, compare=False, hash=False)
    # Extra printer columns of a CRD version (additionalPrinterColumns), for Table output.
    printer_columns: tuple[Obj, ...] = field(default=(), compare=False, hash=False)
    # False for a type served by a handler outside the registry, never stored (an aggregated
    # API such as metrics.k8s.io, kvert.apiserver.metrics): such types are not registered
    # here; the server adds them to discovery only, which gives them no storageVersionHash.
    stored: bool = True

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


# Review kinds (SubjectAccessReview, TokenReview, ...) are create-only and never stored:
# the API server answers them (kvert.apiserver.reviews).
CREATE_ONLY = ("create",)


def _rt(group: str, version: str, kind: str, plural: str, namespaced: bool,
        subresources: tuple[str, ...] = (), short: tuple[str, ...] = (),
        categories: tuple[str, ...] = (), verbs: tuple[str, ...] = ALL_VERBS) -> ResourceType:
    return ResourceType(group, version, kind, plural, namespaced, frozenset(subresources), short,
                        categories, verbs)


BUILTIN: tuple[ResourceType, ...] = (
    _rt("", "v1", "Namespace", "namespaces", False, ("status", "finalize"), ("ns",)),
    _rt("", "v1", "Node", "nodes", False, ("status",), ("no",)),
    _rt("", "v1", "Pod", "pods", True,
        ("status", "binding", "eviction", "resize", "log", "exec", "attach", "portforward"),
        ("po",), ("all",)),
    _rt("", "v1", "Event", "events", True, (), ("ev",)),
    _rt("", "v1", "ConfigMap", "configmaps", True, (), ("cm",)),
    _rt("", "v1", "Service", "services", True, ("status",), ("svc",), ("all",)),
    _rt("", "v1", "Endpoints", "endpoints", True, (), ("ep",)),
    _rt("", "v1", "Secret", "secrets", True),
    _rt("", "v1", "ServiceAccount", "serviceaccounts", True, ("token",), ("sa",)),
    _rt("", "v1", "LimitRange", "limitranges", True, (), ("limits",)),
    _rt("", "v1", "ResourceQuota", "resourcequotas", True, ("status",), ("quota",)),
    _rt("", "v1", "ReplicationController", "replicationcontrollers", True, ("status", "scale"),
        ("rc",), ("all",)),
    _rt("", "v1", "PersistentVolumeClaim", "persistentvolumeclaims", True, ("status",), ("pvc",)),
    _rt("apps", "v1", "Deployment", "deployments", True, ("status", "scale"), ("deploy",), ("all",)),
    _rt("apps", "v1", "ReplicaSet", "replicasets", True, ("status", "scale"), ("rs",), ("all",)),
    _rt("apps", "v1", "StatefulSet", "statefulsets", True, ("status", "scale"), ("sts",), ("all",)),
    _rt("apps", "v1", "DaemonSet", "daemonsets", True, ("status",), ("ds",), ("all",)),
    _rt("apps", "v1", "ControllerRevision", "controllerrevisions", True),
    _rt("autoscaling", "v2", "HorizontalPodAutoscaler", "horizontalpodautoscalers", True,
        ("status",), ("hpa",), ("all",)),
    _rt("batch", "v1", "Job", "jobs", True, ("status",), (), ("all",)),
    _rt("batch", "v1", "CronJob", "cronjobs", True, ("status",), ("cj",), ("all",)),
    _rt("policy", "v1", "PodDisruptionBudget", "poddisruptionbudgets", True, ("status",),
        ("pdb",)),
    _rt("scheduling.k8s.io", "v1", "PriorityClass", "priorityclasses", False, (), ("pc",)),
    # Alpha in Kubernetes 1.35 (GenericWorkload gate, KEP-4671); served unconditionally here.
    _rt("scheduling.k8s.io", "v1alpha1", "Workload", "workloads", True),
    # Dynamic resource allocation, GA in 1.34.
    _rt("resource.k8s.io", "v1", "DeviceClass", "deviceclasses", False),
    _rt("resource.k8s.io", "v1", "ResourceClaim", "resourceclaims", True, ("status",)),
    _rt("resource.k8s.io", "v1", "ResourceClaimTemplate", "resourceclaimtemplates", True),
    _rt("resource.k8s.io", "v1", "ResourceSlice", "resourceslices", False),
    _rt("node.k8s.io", "v1", "RuntimeClass", "runtimeclasses", False),
    _rt("coordination.k8s.io", "v1", "Lease", "leases", True),
    _rt("discovery.k8s.io", "v1", "EndpointSlice", "endpointslices", True),
    _rt("networking.k8s.io", "v1", "Ingress", "ingresses", True, ("status",), ("ing",)),
    _rt("networking.k8s.io", "v1", "IngressClass", "ingressclasses", False),
    _rt("networking.k8s.io", "v1", "NetworkPolicy", "networkpolicies", True, (), ("netpol",)),
    _rt("certificates.k8s.io", "v1", "CertificateSigningRequest", "certificatesigningrequests",
        False, ("status", "approval"), ("csr",)),
    _rt("storage.k8s.io", "v1", "CSIStorageCapacity", "csistoragecapacities", True),
    _rt("events.k8s.io", "v1", "Event", "events", True, (), ("ev",)),
    _rt("rbac.authorization.k8s.io", "v1", "ClusterRole", "clusterroles", False),
    _rt("rbac.authorization.k8s.io", "v1", "ClusterRoleBinding", "clusterrolebindings", False),
    _rt("rbac.authorization.k8s.io", "v1", "Role", "roles", True),
    _rt("rbac.authorization.k8s.io", "v1", "RoleBinding", "rolebindings", True),
    _rt("authorization.k8s.io", "v1", "SelfSubjectAccessReview", "selfsubjectaccessreviews", False,
        verbs=CREATE_ONLY),
    _rt("authorization.k8s.io", "v1", "SubjectAccessReview", "subjectaccessreviews", False,
        verbs=CREATE_ONLY),
    _rt("authorization.k8s.io", "v1", "LocalSubjectAccessReview", "localsubjectaccessreviews", True,
        verbs=CREATE_ONLY),
    _rt("authorization.k8s.io", "v1", "SelfSubjectRulesReview", "selfsubjectrulesreviews", False,
        verbs=CREATE_ONLY),
    _rt("authentication.k8s.io", "v1", "TokenReview", "tokenreviews", False, verbs=CREATE_ONLY),
    _rt("authentication.k8s.io", "v1", "SelfSubjectReview", "selfsubjectreviews", False,
        verbs=CREATE_ONLY),
    _rt("apiextensions.k8s.io", "v1", "CustomResourceDefinition", "customresourcedefinitions",
        False, ("status",), ("crd", "crds")),
    _rt("admissionregistration.k8s.io", "v1", "MutatingWebhookConfiguration",
        "mutatingwebhookconfigurations", False),
    _rt("admissionregistration.k8s.io", "v1", "ValidatingWebhookConfiguration",
        "validatingwebhookconfigurations", False),
    _rt("autoscaling.k8s.io", "v1", "VerticalPodAutoscaler", "verticalpodautoscalers", True,
        ("status",), ("vpa",)),
    _rt("autoscaling.k8s.io", "v1", "VerticalPodAutoscalerCheckpoint",
        "verticalpodautoscalercheckpoints", True, (), ("vpacheckpoint",)),
)

_BY_KEY: dict[str, ResourceType] = {rt.key: rt for rt in BUILTIN}
_BY_GVK: dict[tuple[str, str], ResourceType] = {(rt.api_version, rt.kind): rt for rt in BUILTIN}


class _VersionIndex:
    """Every served version by resource key, with the table size it was built from."""

    def __init__(self) -> None:
        self.by_key: dict[str, list[ResourceType]] = {}
        self.size = -1  # never a table's size: built on first use

    def clear(self) -> None:
        self.by_key.clear()
        self.size = -1


_VERSIONS = _VersionIndex()


def register(rt: ResourceType) -> None:
    """Add or replace a type (a custom resource version) in the table every layer uses.

    The key names the storage, shared by every version of a resource: the last version
    registered under a key is the one ``by_key`` returns, so register the storage
    version last.
    """
    _BY_KEY[rt.key] = rt
    _BY_GVK[(rt.api_version, rt.kind)] = rt
    _VERSIONS.clear()


def unregister(key: str) -> None:
    """Stop serving a resource (its CRD was deleted): every version goes."""
    _BY_KEY.pop(key, None)
    for gvk in [gvk for gvk, rt in _BY_GVK.items() if rt.key == key]:
        del _BY_GVK[gvk]
    _VERSIONS.clear()


def by_gvk(api_version: str, kind: str) -> ResourceType:
    try:
        return _BY_GVK[(api_version, kind)]
    except KeyError:
        raise KeyError(f"unknown kind {kind!r} in {api_version!r}") from None


def versions_of(key: str) -> list[ResourceType]:
    """Every served version of a resource (asked on every request: kept by key, rebuilt
    when the table changes)."""
    if _VERSIONS.size != len(_BY_GVK):
        _VERSIONS.clear()
        for rt in _BY_GVK.values():
            _VERSIONS.by_key.setdefault(rt.key, []).append(rt)
        _VERSIONS.size = len(_BY_GVK)
    return list(_VERSIONS.by_key.get(key, ()))


def by_key(key: str) -> ResourceType:
    try:
        return _BY_KEY[key]
    except KeyError:
        raise KeyError(f"unknown resource {key!r}") from None


def for_object(obj: Obj) -> ResourceType:
    """The type of an object from its apiVersion and kind."""
    api_version, kind = obj.get("apiVersion", ""), obj.get("kind", "")
    try:
        return _BY_GVK[(api_version, kind)]
    except KeyError:
        raise KeyError(f"unknown kind {kind!r} in {api_version!r}") from None


def all_types() -> list[ResourceType]:
    return list(_BY_KEY.values())
