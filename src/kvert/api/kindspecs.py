"""Every built-in kind kvert serves, declared once.

A :class:`KindSpec` holds a kind's resource facts (group, version, kind, plural, scope,
subresources, short names, categories, verbs) and the names under which the data tables
describe it. The tables keep their data; their per-kind *index* is derived from
:data:`BUILTIN_KINDS` (or, where a test needs to keep its shape, checked against it by
``tests/api/test_kind_completeness.py`` and ``tests/apiserver/test_kind_completeness.py``):

============  =====================================================  ===========================
field         names                                                  in the table
============  =====================================================  ===========================
``patch``     the root type of its merge semantics                   ``api.patchmeta._TYPES``
``rules``     its create / update / status validation                ``api.validation._RULES``
``defaults``  its defaulting function                                ``api.defaults.DEFAULTERS``
``openapi``   its OpenAPI definition                                 ``apiserver.openapi.schemas``
``protobuf``  its protobuf message                                   ``apiserver.protobuf.schema``
``printer``   whether ``kubectl get`` columns exist for it           ``apiserver.printers``
============  =====================================================  ===========================

``openapi`` and ``protobuf`` follow from the API version's packages (:data:`PACKAGES`) and
the kind; the other names default to the kind's own name (:data:`OWN`) and are spelled out
where a kind shares or lacks an entry. ``None`` means the kind has no entry in that table:
no patch root is a kind Kubernetes serves from a CRD (custom-resource merge semantics), no
protobuf message a kind served as JSON only, no rules a kind that gets the metadata checks
only, no defaults a kind with nothing to default.

:mod:`kvert.api.kinds` serves ``BUILTIN`` (the :class:`ResourceType` of each spec, in this
order: discovery lists them so).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kvert.api.types import Obj

__all__ = ["ALL_VERBS", "BUILTIN_KINDS", "BY_GVK", "CREATE_ONLY", "OWN", "PACKAGES", "KindSpec",
           "ResourceType"]

ALL_VERBS = ("create", "delete", "deletecollection", "get", "list", "patch", "update", "watch")

# Review kinds (SubjectAccessReview, TokenReview, ...) are create-only and never stored:
# the API server answers them (kvert.apiserver.reviews).
CREATE_ONLY = ("create",)


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


@dataclass(frozen=True)
class KindSpec:
    """One built-in kind: what it serves, and the keys of the tables that describe it."""

    group: str
    version: str
    kind: str
    plural: str
    namespaced: bool
    subresources: frozenset[str]
    short_names: tuple[str, ...]
    categories: tuple[str, ...]
    verbs: tuple[str, ...]
    patch: str | None          # patchmeta root type; None: custom-resource merge semantics
    rules: str | None          # validation rules; None: the metadata checks only
    defaults: str | None       # defaulting function; None: nothing to default
    openapi: str               # OpenAPI definition name (io.k8s.api.core.v1.Pod)
    protobuf: str | None       # protobuf message (core.Pod); None: JSON only
    printer: bool              # a built-in table printer (else the default columns)
    resource: ResourceType = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "resource", ResourceType(
            self.group, self.version, self.kind, self.plural, self.namespaced,
            self.subresources, self.short_names, self.categories, self.verbs))

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def gvk(self) -> tuple[str, str]:
        """(apiVersion, kind): the key of the api-layer tables."""
        return (self.api_version, self.kind)

    @property
    def group_kind(self) -> tuple[str, str]:
        """(group, kind): the key of the printer table."""
        return (self.group, self.kind)


# apiVersion -> (OpenAPI definition prefix, protobuf package or None: served as JSON only)
PACKAGES: dict[str, tuple[str, str | None]] = {
    "v1": ("io.k8s.api.core.v1", "core"),
    "apps/v1": ("io.k8s.api.apps.v1", "apps"),
    "autoscaling/v2": ("io.k8s.api.autoscaling.v2", "autoscalingv2"),
    "batch/v1": ("io.k8s.api.batch.v1", "batch"),
    "policy/v1": ("io.k8s.api.policy.v1", "policy"),
    "scheduling.k8s.io/v1": ("io.k8s.api.scheduling.v1", "scheduling"),
    "scheduling.k8s.io/v1alpha1": ("io.k8s.api.scheduling.v1alpha1", "scheduling"),
    "resource.k8s.io/v1": ("io.k8s.api.resource.v1", "resource"),
    "node.k8s.io/v1": ("io.k8s.api.node.v1", "node"),
    "coordination.k8s.io/v1": ("io.k8s.api.coordination.v1", "coordination"),
    "discovery.k8s.io/v1": ("io.k8s.api.discovery.v1", "discovery"),
    "networking.k8s.io/v1": ("io.k8s.api.networking.v1", "networking"),
    "certificates.k8s.io/v1": ("io.k8s.api.certificates.v1", "certificates"),
    "storage.k8s.io/v1": ("io.k8s.api.storage.v1", "storage"),
    "events.k8s.io/v1": ("io.k8s.api.events.v1", "events"),
    "rbac.authorization.k8s.io/v1": ("io.k8s.api.rbac.v1", "rbac"),
    "authorization.k8s.io/v1": ("io.k8s.api.authorization.v1", "authorization"),
    "authentication.k8s.io/v1": ("io.k8s.api.authentication.v1", "authentication"),
    "apiextensions.k8s.io/v1": ("io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1",
                                "apiext"),
    "admissionregistration.k8s.io/v1": ("io.k8s.api.admissionregistration.v1", "admreg"),
    "flowcontrol.apiserver.k8s.io/v1": ("io.k8s.api.flowcontrol.v1", "flowcontrol"),
    "apiregistration.k8s.io/v1": ("io.k8s.kube-aggregator.pkg.apis.apiregistration.v1",
                                  "apireg"),
    # Served from a CustomResourceDefinition in Kubernetes: named the way the CRD OpenAPI
    # builder names them (reversed group), and never protobuf.
    "autoscaling.k8s.io/v1": ("io.k8s.autoscaling.v1", None),
}

OWN = "*"
"""A table key that is the kind's own name."""

NS, CLUSTER = True, False
ALL = ("all",)


def _k(api_version: str, kind: str, plural: str, namespaced: bool,
       subresources: tuple[str, ...] = (), short: tuple[str, ...] = (),
       categories: tuple[str, ...] = (), verbs: tuple[str, ...] = ALL_VERBS, *,
       patch: str | None = OWN, rules: str | None = OWN, defaults: str | None = None,
       protobuf: str | None = OWN, printer: bool = True) -> KindSpec:
    group, _, version = api_version.rpartition("/")
    openapi_prefix, proto_package = PACKAGES[api_version]
    if protobuf == OWN:
        protobuf = f"{proto_package}.{kind}" if proto_package else None
    return KindSpec(group, version, kind, plural, namespaced, frozenset(subresources), short,
                    categories, verbs,
                    patch=kind if patch == OWN else patch,
                    rules=kind if rules == OWN else rules,
                    defaults=kind if defaults == OWN else defaults,
                    openapi=f"{openapi_prefix}.{kind}", protobuf=protobuf, printer=printer)


def _review(api_version: str, kind: str, plural: str, namespaced: bool = CLUSTER) -> KindSpec:
    """A create-only review kind: answered by the API server, never stored, validated by
    its handler (no rules here), merge semantics of its metadata only."""
    return _k(api_version, kind, plural, namespaced, verbs=CREATE_ONLY, patch="Review", rules=None,
              printer=False)


# Discovery lists the kinds in this order.
BUILTIN_KINDS: tuple[KindSpec, ...] = (
    _k("v1", "Namespace", "namespaces", CLUSTER, ("status", "finalize"), ("ns",), defaults=OWN),
    _k("v1", "Node", "nodes", CLUSTER, ("status",), ("no",), defaults=OWN),
    _k("v1", "Pod", "pods", NS,
       ("status", "binding", "eviction", "resize", "ephemeralcontainers", "log", "exec", "attach",
        "portforward"),
       ("po",), ALL, defaults=OWN),
    _k("v1", "Event", "events", NS, (), ("ev",), patch="CoreEventObject", rules="CoreEvent"),
    _k("v1", "ConfigMap", "configmaps", NS, (), ("cm",)),
    _k("v1", "Service", "services", NS, ("status",), ("svc",), ALL, defaults=OWN),
    _k("v1", "Endpoints", "endpoints", NS, (), ("ep",)),
    _k("v1", "Secret", "secrets", NS, defaults=OWN),
    _k("v1", "ServiceAccount", "serviceaccounts", NS, ("token",), ("sa",)),
    _k("v1", "LimitRange", "limitranges", NS, (), ("limits",), defaults=OWN, printer=False),
    _k("v1", "ResourceQuota", "resourcequotas", NS, ("status",), ("quota",)),
    _k("v1", "ReplicationController", "replicationcontrollers", NS, ("status", "scale"), ("rc",),
       ALL, defaults=OWN),
    _k("v1", "PersistentVolumeClaim", "persistentvolumeclaims", NS, ("status",), ("pvc",),
       defaults=OWN),
    _k("v1", "PersistentVolume", "persistentvolumes", CLUSTER, ("status",), ("pv",),
       defaults=OWN),
    _k("v1", "PodTemplate", "podtemplates", NS, defaults=OWN),
    # read-only upstream (get, list): kvert lists none
    _k("v1", "ComponentStatus", "componentstatuses", CLUSTER, (), ("cs",), verbs=("get", "list")),
    _k("apps/v1", "Deployment", "deployments", NS, ("status", "scale"), ("deploy",), ALL,
       defaults=OWN),
    _k("apps/v1", "ReplicaSet", "replicasets", NS, ("status", "scale"), ("rs",), ALL,
       defaults=OWN),
    _k("apps/v1", "StatefulSet", "statefulsets", NS, ("status", "scale"), ("sts",), ALL,
       defaults=OWN),
    _k("apps/v1", "DaemonSet", "daemonsets", NS, ("status",), ("ds",), ALL, defaults=OWN),
    _k("apps/v1", "ControllerRevision", "controllerrevisions", NS),
    _k("autoscaling/v2", "HorizontalPodAutoscaler", "horizontalpodautoscalers", NS, ("status",),
       ("hpa",), ALL, defaults=OWN),
    _k("batch/v1", "Job", "jobs", NS, ("status",), (), ALL, defaults=OWN),
    _k("batch/v1", "CronJob", "cronjobs", NS, ("status",), ("cj",), ALL, defaults=OWN),
    _k("policy/v1", "PodDisruptionBudget", "poddisruptionbudgets", NS, ("status",), ("pdb",)),
    _k("scheduling.k8s.io/v1", "PriorityClass", "priorityclasses", CLUSTER, (), ("pc",),
       defaults=OWN),
    # Alpha in Kubernetes 1.35 (GenericWorkload gate, KEP-4671); served unconditionally here.
    _k("scheduling.k8s.io/v1alpha1", "Workload", "workloads", NS, printer=False),
    # Dynamic resource allocation, GA in 1.34.
    _k("resource.k8s.io/v1", "DeviceClass", "deviceclasses", CLUSTER),
    _k("resource.k8s.io/v1", "ResourceClaim", "resourceclaims", NS, ("status",), defaults=OWN),
    _k("resource.k8s.io/v1", "ResourceClaimTemplate", "resourceclaimtemplates", NS, defaults=OWN),
    _k("resource.k8s.io/v1", "ResourceSlice", "resourceslices", CLUSTER),
    _k("node.k8s.io/v1", "RuntimeClass", "runtimeclasses", CLUSTER),
    _k("coordination.k8s.io/v1", "Lease", "leases", NS),
    _k("discovery.k8s.io/v1", "EndpointSlice", "endpointslices", NS),
    _k("networking.k8s.io/v1", "Ingress", "ingresses", NS, ("status",), ("ing",)),
    _k("networking.k8s.io/v1", "IngressClass", "ingressclasses", CLUSTER),
    _k("networking.k8s.io/v1", "ServiceCIDR", "servicecidrs", CLUSTER, ("status",)),
    _k("networking.k8s.io/v1", "IPAddress", "ipaddresses", CLUSTER, (), ("ip",)),
    _k("networking.k8s.io/v1", "NetworkPolicy", "networkpolicies", NS, (), ("netpol",),
       defaults=OWN),
    _k("certificates.k8s.io/v1", "CertificateSigningRequest", "certificatesigningrequests",
       CLUSTER, ("status", "approval"), ("csr",), defaults=OWN),
    _k("storage.k8s.io/v1", "CSIStorageCapacity", "csistoragecapacities", NS),
    _k("storage.k8s.io/v1", "StorageClass", "storageclasses", CLUSTER, (), ("sc",), defaults=OWN),
    _k("storage.k8s.io/v1", "VolumeAttributesClass", "volumeattributesclasses", CLUSTER, (),
       ("vac",)),
    _k("storage.k8s.io/v1", "VolumeAttachment", "volumeattachments", CLUSTER, ("status",)),
    _k("storage.k8s.io/v1", "CSIDriver", "csidrivers", CLUSTER, defaults=OWN),
    _k("storage.k8s.io/v1", "CSINode", "csinodes", CLUSTER),
    _k("events.k8s.io/v1", "Event", "events", NS, (), ("ev",), patch="EventsEventObject",
       rules="EventsEvent"),
    _k("rbac.authorization.k8s.io/v1", "ClusterRole", "clusterroles", CLUSTER, printer=False),
    _k("rbac.authorization.k8s.io/v1", "ClusterRoleBinding", "clusterrolebindings", CLUSTER,
       patch="RoleBinding", defaults="RoleBinding"),
    _k("rbac.authorization.k8s.io/v1", "Role", "roles", NS, printer=False),
    _k("rbac.authorization.k8s.io/v1", "RoleBinding", "rolebindings", NS, defaults=OWN),
    _review("authorization.k8s.io/v1", "SelfSubjectAccessReview", "selfsubjectaccessreviews"),
    _review("authorization.k8s.io/v1", "SubjectAccessReview", "subjectaccessreviews"),
    _review("authorization.k8s.io/v1", "LocalSubjectAccessReview", "localsubjectaccessreviews",
            NS),
    _review("authorization.k8s.io/v1", "SelfSubjectRulesReview", "selfsubjectrulesreviews"),
    _review("authentication.k8s.io/v1", "TokenReview", "tokenreviews"),
    _review("authentication.k8s.io/v1", "SelfSubjectReview", "selfsubjectreviews"),
    _k("apiextensions.k8s.io/v1", "CustomResourceDefinition", "customresourcedefinitions",
       CLUSTER, ("status",), ("crd", "crds"), printer=False),
    _k("admissionregistration.k8s.io/v1", "MutatingWebhookConfiguration",
       "mutatingwebhookconfigurations", CLUSTER, patch="WebhookConfiguration"),
    _k("admissionregistration.k8s.io/v1", "ValidatingWebhookConfiguration",
       "validatingwebhookconfigurations", CLUSTER, patch="WebhookConfiguration"),
    # CEL admission policies: stored and validated, not enforced
    _k("admissionregistration.k8s.io/v1", "ValidatingAdmissionPolicy",
       "validatingadmissionpolicies", CLUSTER, ("status",), (), ("api-extensions",),
       defaults="AdmissionPolicy"),
    _k("admissionregistration.k8s.io/v1", "ValidatingAdmissionPolicyBinding",
       "validatingadmissionpolicybindings", CLUSTER, (), (), ("api-extensions",),
       defaults="AdmissionPolicyBinding"),
    _k("admissionregistration.k8s.io/v1", "MutatingAdmissionPolicy",
       "mutatingadmissionpolicies", CLUSTER, (), (), ("api-extensions",),
       defaults="AdmissionPolicy"),
    _k("admissionregistration.k8s.io/v1", "MutatingAdmissionPolicyBinding",
       "mutatingadmissionpolicybindings", CLUSTER, (), (), ("api-extensions",),
       defaults="AdmissionPolicyBinding"),
    _k("apiregistration.k8s.io/v1", "APIService", "apiservices", CLUSTER, ("status",), (),
       ("api-extensions",), defaults=OWN),
    # API Priority and Fairness' objects: stored, not applied (kvert's in-flight limits)
    _k("flowcontrol.apiserver.k8s.io/v1", "FlowSchema", "flowschemas", CLUSTER, ("status",),
       defaults=OWN),
    _k("flowcontrol.apiserver.k8s.io/v1", "PriorityLevelConfiguration",
       "prioritylevelconfigurations", CLUSTER, ("status",), defaults=OWN),
    # Served from a CRD in Kubernetes: custom-resource merge semantics, JSON only, the CRD's
    # printer columns (kvert.apiserver.tables.VPA_PRINTER_COLUMNS).
    _k("autoscaling.k8s.io/v1", "VerticalPodAutoscaler", "verticalpodautoscalers", NS,
       ("status",), ("vpa",), patch=None, defaults=OWN, printer=False),
    _k("autoscaling.k8s.io/v1", "VerticalPodAutoscalerCheckpoint",
       "verticalpodautoscalercheckpoints", NS, (), ("vpacheckpoint",), patch=None,
       printer=False),
)

BY_GVK: dict[tuple[str, str], KindSpec] = {spec.gvk: spec for spec in BUILTIN_KINDS}
