"""The bootstrap RBAC policy: the roles and bindings every cluster starts with.

Upstream's ``plugin/pkg/auth/authorizer/rbac/bootstrappolicy`` (Kubernetes 1.35) for what
kvert serves and runs: the user-facing roles (``cluster-admin``, ``admin``, ``edit`` and
``view``, the last three aggregated from ``system:aggregate-to-*`` roles through the
``rbac.authorization.k8s.io/aggregate-to-*`` labels), discovery and self-review roles,
``system:monitoring``, the scheduler's and controller manager's roles, ``system:node``
(the Node authorizer's static rules), and the ``system:controller:*`` roles of the
controllers kvert runs. Roles kvert has no use for (kube-proxy, kube-dns, volume binding,
certificate signing, leader-election locks) are left out.

The VPA's roles are the autoscaler's ``vertical-pod-autoscaler/deploy/vpa-rbac.yaml``.

Subjects are kvert's identities (``kvert.auth.tokens.COMPONENTS``): where upstream binds a
controller role to its service account ``kube-system/<controller>``, kvert's binding names
that service account *and* the user ``system:kube-controller-manager``, since kvert runs
every controller under that one identity; the VPA roles are bound to the users
``system:vpa-recommender``, ``system:vpa-updater`` and ``system:vpa-admission-controller``
instead of the service accounts upstream's manifest creates. Where a kvert component
makes a call upstream's roles do not grant, a ``system:kvert:*`` role grants exactly that,
each rule with the reason. Every default carries the label
``kubernetes.io/bootstrapping: rbac-defaults`` and the annotation
``rbac.authorization.kubernetes.io/autoupdate: "true"``: :func:`ensure_bootstrap_policy`
creates missing defaults and restores the rules and subjects of those whose annotation
still says ``"true"``, as kube-apiserver's storage post-start hook reconciles them.
"""

from __future__ import annotations

import logging
from typing import Any, Protocol

from kvert.api.errors import AlreadyExists, ApiError, NotFound
from kvert.api.types import Obj
from kvert.auth.rules import GROUP as RBAC_GROUP
from kvert.auth.rules import PolicyRule, rule
from kvert.auth.user import (
    APISERVER,
    AUTHENTICATED,
    KUBE_CONTROLLER_MANAGER,
    KUBE_SCHEDULER,
    KUBELET_CLIENT,
    MASTERS,
    NODES,
    SERVICE_ACCOUNTS,
    UNAUTHENTICATED,
    VPA_ADMISSION,
    VPA_RECOMMENDER,
    VPA_UPDATER,
)

log = logging.getLogger(__name__)

RBAC_API_VERSION = f"{RBAC_GROUP}/v1"
AUTOUPDATE_ANNOTATION = "rbac.authorization.kubernetes.io/autoupdate"
BOOTSTRAP_LABELS = {"kubernetes.io/bootstrapping": "rbac-defaults"}
AGGREGATE_TO_ADMIN = "rbac.authorization.k8s.io/aggregate-to-admin"
AGGREGATE_TO_EDIT = "rbac.authorization.k8s.io/aggregate-to-edit"
AGGREGATE_TO_VIEW = "rbac.authorization.k8s.io/aggregate-to-view"

NODES_GROUP = NODES
MONITORING_GROUP = "system:monitoring"
SERVICE_ACCOUNTS_GROUP = SERVICE_ACCOUNTS
CONTROLLER_ROLE_PREFIX = "system:controller:"
# the VPA's leader-election Lease names (--leader-elect-resource-name defaults)
VPA_RECOMMENDER_LEASE = "vpa-recommender-lease"
VPA_UPDATER_LEASE = "vpa-updater"

READ = ("get", "list", "watch")
WRITE = ("create", "update", "patch", "delete", "deletecollection")
READ_WRITE = READ + WRITE

LEGACY, APPS, AUTHN, AUTHZ, AUTOSCALING, BATCH = ("", "apps", "authentication.k8s.io",
                                                  "authorization.k8s.io", "autoscaling", "batch")
CERTIFICATES, COORDINATION, DISCOVERY, EVENTS = ("certificates.k8s.io", "coordination.k8s.io",
                                                 "discovery.k8s.io", "events.k8s.io")
EXTENSIONS, NETWORKING, POLICY, RESOURCE = "extensions", "networking.k8s.io", "policy", "resource.k8s.io"
SCHEDULING, STORAGE, NODE, VPA = "scheduling.k8s.io", "storage.k8s.io", "node.k8s.io", "autoscaling.k8s.io"


def events_rule() -> PolicyRule:
    return rule("create", "update", "patch", groups=(LEGACY, EVENTS), resources=("events",))


def node_rules() -> list[PolicyRule]:
    """``bootstrappolicy.NodeRules()``: what any node may do (the Node authorizer narrows
    pods, nodes, secrets, ... to the node's own)."""
    return [
        rule("create", groups=(AUTHN,), resources=("tokenreviews",)),
        rule("create", groups=(AUTHZ,), resources=("subjectaccessreviews", "localsubjectaccessreviews")),
        rule(*READ, groups=(LEGACY,), resources=("services",)),
        rule("create", "get", "list", "watch", groups=(LEGACY,), resources=("nodes",)),
        rule("update", "patch", groups=(LEGACY,), resources=("nodes/status",)),
        rule("update", "patch", groups=(LEGACY,), resources=("nodes",)),
        rule("create", "update", "patch", groups=(LEGACY,), resources=("events",)),
        rule(*READ, groups=(LEGACY,), resources=("pods",)),
        rule("create", "delete", groups=(LEGACY,), resources=("pods",)),
        rule("update", "patch", groups=(LEGACY,), resources=("pods/status",)),
        rule("create", groups=(LEGACY,), resources=("pods/eviction",)),
        rule("get", "list", "watch", groups=(LEGACY,), resources=("secrets", "configmaps")),
        rule("get", groups=(LEGACY,), resources=("persistentvolumeclaims", "persistentvolumes")),
        rule("get", groups=(LEGACY,), resources=("endpoints",)),
        rule("create", "get", "list", "watch", groups=(CERTIFICATES,),
             resources=("certificatesigningrequests",)),
        rule("get", "create", "update", "patch", "delete", groups=(COORDINATION,), resources=("leases",)),
        rule("get", groups=(STORAGE,), resources=("volumeattachments",)),
        rule("create", groups=(LEGACY,), resources=("serviceaccounts/token",)),
        rule("get", "update", "patch", groups=(LEGACY,), resources=("persistentvolumeclaims/status",)),
        rule("get", "watch", "list", groups=(STORAGE,), resources=("csidrivers",)),
        rule("get", "create", "update", "patch", "delete", groups=(STORAGE,), resources=("csinodes",)),
        rule(*READ, groups=(NODE,), resources=("runtimeclasses",)),
        rule("get", groups=(RESOURCE,), resources=("resourceclaims",)),
        rule("deletecollection", groups=(RESOURCE,), resources=("resourceslices",)),
    ]


# ---- object builders ----------------------------------------------------------------------

def _meta(name: str, labels: dict[str, str] | None = None) -> dict[str, Any]:
    return {"name": name, "labels": {**(labels or {}), **BOOTSTRAP_LABELS},
            "annotations": {AUTOUPDATE_ANNOTATION: "true"}}


def cluster_role(name: str, rules: list[PolicyRule], *, labels: dict[str, str] | None = None,
                 aggregate_from: str = "") -> dict[str, Any]:
    role: dict[str, Any] = {"apiVersion": RBAC_API_VERSION, "kind": "ClusterRole",
                            "metadata": _meta(name, labels)}
    if aggregate_from:
        role["aggregationRule"] = {"clusterRoleSelectors": [{"matchLabels": {aggregate_from: "true"}}]}
    # an aggregated role's rules are the aggregation controller's to fill (null until then)
    role["rules"] = None if aggregate_from else [r.to_dict() for r in rules]
    return role


def user(name: str) -> dict[str, str]:
    return {"kind": "User", "apiGroup": RBAC_GROUP, "name": name}


def group(name: str) -> dict[str, str]:
    return {"kind": "Group", "apiGroup": RBAC_GROUP, "name": name}


def service_account(namespace: str, name: str) -> dict[str, str]:
    return {"kind": "ServiceAccount", "name": name, "namespace": namespace}


def cluster_role_binding(name: str, *subjects: dict[str, str], role: str = "") -> dict[str, Any]:
    binding: dict[str, Any] = {"apiVersion": RBAC_API_VERSION, "kind": "ClusterRoleBinding",
                               "metadata": _meta(name),
                               "roleRef": {"apiGroup": RBAC_GROUP, "kind": "ClusterRole",
                                           "name": role or name}}
    if subjects:
        binding["subjects"] = list(subjects)
    return binding


# ---- upstream cluster roles ---------------------------------------------------------------

def _aggregate_to_edit() -> list[PolicyRule]:
    return [
        rule(*READ, groups=(LEGACY,), resources=("pods/attach", "pods/proxy", "pods/exec",
                                                 "pods/portforward", "secrets", "services/proxy")),
        rule("impersonate", groups=(LEGACY,), resources=("serviceaccounts",)),
        rule(*WRITE, groups=(LEGACY,), resources=("pods", "pods/attach", "pods/proxy", "pods/exec",
                                                  "pods/portforward")),
        rule("create", groups=(LEGACY,), resources=("pods/eviction",)),
        rule(*WRITE, groups=(LEGACY,), resources=(
            "replicationcontrollers", "replicationcontrollers/scale", "serviceaccounts", "services",
            "services/proxy", "persistentvolumeclaims", "configmaps", "secrets", "events")),
        rule("create", groups=(LEGACY,), resources=("serviceaccounts/token",)),
        rule(*WRITE, groups=(APPS,), resources=(
            "statefulsets", "statefulsets/scale", "daemonsets", "deployments", "deployments/scale",
            "deployments/rollback", "replicasets", "replicasets/scale")),
        rule(*WRITE, groups=(AUTOSCALING,), resources=("horizontalpodautoscalers",)),
        rule(*WRITE, groups=(BATCH,), resources=("jobs", "cronjobs")),
        rule(*WRITE, groups=(EXTENSIONS,), resources=(
            "daemonsets", "deployments", "deployments/scale", "deployments/rollback", "ingresses",
            "replicasets", "replicasets/scale", "replicationcontrollers/scale", "networkpolicies")),
        rule(*WRITE, groups=(POLICY,), resources=("poddisruptionbudgets",)),
        rule(*WRITE, groups=(NETWORKING,), resources=("networkpolicies", "ingresses")),
        rule(*READ_WRITE, groups=(COORDINATION,), resources=("leases",)),
    ]


def _aggregate_to_view() -> list[PolicyRule]:
    return [
        rule(*READ, groups=(LEGACY,), resources=(
            "pods", "replicationcontrollers", "replicationcontrollers/scale", "serviceaccounts",
            "services", "services/status", "endpoints", "persistentvolumeclaims",
            "persistentvolumeclaims/status", "configmaps")),
        rule(*READ, groups=(LEGACY,), resources=(
            "limitranges", "resourcequotas", "bindings", "events", "pods/status",
            "resourcequotas/status", "namespaces/status", "replicationcontrollers/status",
            "pods/log")),
        # read access to namespaces at the namespace scope means you can read *this* namespace
        rule(*READ, groups=(LEGACY,), resources=("namespaces",)),
        rule(*READ, groups=(DISCOVERY,), resources=("endpointslices",)),
        rule(*READ, groups=(APPS,), resources=(
            "controllerrevisions", "statefulsets", "statefulsets/status", "statefulsets/scale",
            "daemonsets", "daemonsets/status", "deployments", "deployments/status",
            "deployments/scale", "replicasets", "replicasets/status", "replicasets/scale")),
        rule(*READ, groups=(AUTOSCALING,), resources=("horizontalpodautoscalers",
                                                      "horizontalpodautoscalers/status")),
        rule(*READ, groups=(BATCH,), resources=("jobs", "cronjobs", "cronjobs/status", "jobs/status")),
        rule(*READ, groups=(EXTENSIONS,), resources=(
            "daemonsets", "daemonsets/status", "deployments", "deployments/scale",
            "deployments/status", "ingresses", "ingresses/status", "replicasets",
            "replicasets/scale", "replicasets/status", "replicationcontrollers/scale",
            "networkpolicies")),
        rule(*READ, groups=(POLICY,), resources=("poddisruptionbudgets", "poddisruptionbudgets/status")),
        rule(*READ, groups=(NETWORKING,), resources=("ingresses", "ingresses/status", "networkpolicies")),
    ]


def _kube_scheduler() -> list[PolicyRule]:
    return [
        events_rule(),
        # leader election
        rule("create", groups=(COORDINATION,), resources=("leases",)),
        rule("get", "update", "list", "watch", groups=(COORDINATION,), resources=("leases",),
             names=("kube-scheduler",)),
        rule(*READ_WRITE, groups=(COORDINATION,), resources=("leasecandidates",)),
        rule(*READ, groups=(LEGACY,), resources=("nodes",)),
        rule("get", "list", "watch", "delete", groups=(LEGACY,), resources=("pods",)),
        rule("create", groups=(LEGACY,), resources=("bindings", "pods/binding")),
        rule("patch", "update", groups=(LEGACY,), resources=("pods/status",)),
        rule(*READ, groups=(LEGACY,), resources=("replicationcontrollers", "services")),
        rule(*READ, groups=(APPS, EXTENSIONS), resources=("replicasets",)),
        rule(*READ, groups=(APPS,), resources=("statefulsets",)),
        rule(*READ, groups=(POLICY,), resources=("poddisruptionbudgets",)),
        rule(*READ, groups=(LEGACY,), resources=("persistentvolumeclaims", "persistentvolumes")),
        # the scheduler delegates authentication and authorization of its own endpoints
        rule("create", groups=(AUTHN,), resources=("tokenreviews",)),
        rule("create", groups=(AUTHZ,), resources=("subjectaccessreviews",)),
        rule(*READ, groups=(STORAGE,), resources=("csinodes",)),
        rule(*READ, groups=(STORAGE,), resources=("volumeattachments",)),
        rule(*READ, groups=(LEGACY,), resources=("namespaces",)),
        rule(*READ, groups=(STORAGE,), resources=("csidrivers",)),
        rule(*READ, groups=(STORAGE,), resources=("csistoragecapacities",)),
        # dynamic resource allocation
        rule(*READ, groups=(RESOURCE,), resources=("deviceclasses",)),
        rule("get", "list", "watch", "update", "patch", groups=(RESOURCE,), resources=("resourceclaims",)),
        rule("get", "list", "watch", "update", "patch", groups=(RESOURCE,),
             resources=("resourceclaims/status",)),
        rule("get", "list", "watch", "update", "patch", groups=(LEGACY,), resources=("pods/finalizers",)),
        rule(*READ, groups=(RESOURCE,), resources=("resourceslices",)),
        # workload-aware scheduling (the GenericWorkload gate; kvert serves Workloads always)
        rule(*READ, groups=(SCHEDULING,), resources=("workloads",)),
    ]


def _kube_controller_manager() -> list[PolicyRule]:
    return [
        events_rule(),
        # leader election
        rule("create", groups=(COORDINATION,), resources=("leases",)),
        rule("get", "update", groups=(COORDINATION,), resources=("leases",),
             names=("kube-controller-manager",)),
        # fetches the service account tokens of the controllers' own identities
        rule("create", groups=(LEGACY,), resources=("secrets", "serviceaccounts")),
        rule("delete", groups=(LEGACY,), resources=("secrets",)),
        rule("get", groups=(LEGACY,), resources=("namespaces", "configmaps", "secrets", "serviceaccounts")),
        rule("update", groups=(LEGACY,), resources=("secrets", "serviceaccounts")),
        # delegated authentication and authorization of its own endpoints
        rule("create", groups=(AUTHN,), resources=("tokenreviews",)),
        rule("create", groups=(AUTHZ,), resources=("subjectaccessreviews",)),
        # the shared informers
        rule("list", "watch", groups=("*",), resources=("*",)),
        rule("create", groups=(LEGACY,), resources=("serviceaccounts/token",)),
    ]


def cluster_roles() -> list[dict[str, Any]]:
    """``bootstrappolicy.ClusterRoles()`` for what kvert serves and runs."""
    return [
        cluster_role("cluster-admin", [rule("*", groups=("*",), resources=("*",)),
                                       rule("*", urls=("*",))]),
        cluster_role("system:discovery", [rule("get", urls=(
            "/livez", "/readyz", "/healthz", "/version", "/version/", "/openapi", "/openapi/*",
            "/api", "/api/*", "/apis", "/apis/*"))]),
        cluster_role("system:monitoring", [rule("get", urls=(
            "/metrics", "/metrics/slis", "/livez", "/readyz", "/healthz", "/livez/*", "/readyz/*",
            "/healthz/*"))]),
        cluster_role("system:basic-user", [
            rule("create", groups=(AUTHZ,), resources=("selfsubjectaccessreviews",
                                                      "selfsubjectrulesreviews")),
            rule("create", groups=(AUTHN,), resources=("selfsubjectreviews",))]),
        cluster_role("system:public-info-viewer", [rule("get", urls=(
            "/livez", "/readyz", "/healthz", "/version", "/version/"))]),
        cluster_role("admin", [], aggregate_from=AGGREGATE_TO_ADMIN),
        cluster_role("edit", [], labels={AGGREGATE_TO_ADMIN: "true"}, aggregate_from=AGGREGATE_TO_EDIT),
        cluster_role("view", [], labels={AGGREGATE_TO_EDIT: "true"}, aggregate_from=AGGREGATE_TO_VIEW),
        cluster_role("system:aggregate-to-admin", [
            rule("create", groups=(AUTHZ,), resources=("localsubjectaccessreviews",)),
            rule(*READ_WRITE, groups=(RBAC_GROUP,), resources=("roles", "rolebindings"))],
            labels={AGGREGATE_TO_ADMIN: "true"}),
        cluster_role("system:aggregate-to-edit", _aggregate_to_edit(), labels={AGGREGATE_TO_EDIT: "true"}),
        cluster_role("system:aggregate-to-view", _aggregate_to_view(), labels={AGGREGATE_TO_VIEW: "true"}),
        cluster_role("system:auth-delegator", [
            rule("create", groups=(AUTHN,), resources=("tokenreviews",)),
            rule("create", groups=(AUTHZ,), resources=("subjectaccessreviews",))]),
        cluster_role("system:kubelet-api-admin", [
            rule(*READ, groups=(LEGACY,), resources=("nodes",)),
            rule("proxy", groups=(LEGACY,), resources=("nodes",)),
            rule("*", groups=(LEGACY,), resources=("nodes/proxy", "nodes/metrics", "nodes/stats",
                                                   "nodes/log"))]),
        cluster_role("system:node", node_rules()),
        # what the CSR approver asks of a kubelet client certificate's requester
        cluster_role("system:certificates.k8s.io:certificatesigningrequests:nodeclient", [
            rule("create", groups=(CERTIFICATES,), resources=("certificatesigningrequests/nodeclient",))]),
        cluster_role("system:certificates.k8s.io:certificatesigningrequests:selfnodeclient", [
            rule("create", groups=(CERTIFICATES,), resources=("certificatesigningrequests/selfnodeclient",))]),
        cluster_role("system:kube-scheduler", _kube_scheduler()),
        cluster_role("system:kube-controller-manager", _kube_controller_manager()),
        cluster_role("system:service-account-issuer-discovery", [rule("get", urls=(
            "/.well-known/openid-configuration", "/.well-known/openid-configuration/",
            "/openid/v1/jwks", "/openid/v1/jwks/"))]),
    ]


def cluster_role_bindings() -> list[dict[str, Any]]:
    """``bootstrappolicy.ClusterRoleBindings()`` for the roles above."""
    return [
        cluster_role_binding("cluster-admin", group(MASTERS)),
        cluster_role_binding("system:monitoring", group(MONITORING_GROUP)),
        cluster_role_binding("system:discovery", group(AUTHENTICATED)),
        cluster_role_binding("system:basic-user", group(AUTHENTICATED)),
        cluster_role_binding("system:public-info-viewer", group(AUTHENTICATED), group(UNAUTHENTICATED)),
        cluster_role_binding("system:kube-controller-manager", user(KUBE_CONTROLLER_MANAGER)),
        cluster_role_binding("system:kube-scheduler", user(KUBE_SCHEDULER)),
        # deprecated since the Node authorizer: kept without subjects, as upstream
        cluster_role_binding("system:node"),
        cluster_role_binding("system:service-account-issuer-discovery", group(SERVICE_ACCOUNTS_GROUP)),
        # the API server's calls to node agents' kubelet endpoints (kubeadm binds its
        # apiserver-kubelet-client certificate more broadly; this role is made for it)
        cluster_role_binding("kvert:kube-apiserver-kubelet-client", user(KUBELET_CLIENT),
                             role="system:kubelet-api-admin"),
        # kubeadm's kubeadm:node-autoapprove-certificate-rotation: nodes renew their own
        # client certificates without an administrator
        cluster_role_binding("kvert:node-autoapprove-certificate-rotation", group(NODES_GROUP),
                             role="system:certificates.k8s.io:certificatesigningrequests:selfnodeclient"),
    ]


# ---- controller roles (controller_policy.go) ----------------------------------------------

# kvert's controller names (kvert.controllers.manager.ALL_CONTROLLERS) -> upstream's
# service account; taint eviction runs as node-controller upstream too.
CONTROLLER_IDENTITIES = {
    "replicaset": "replicaset-controller",
    "deployment": "deployment-controller",
    "disruption": "disruption-controller",
    "garbagecollector": "generic-garbage-collector",
    "resourceclaim": "resource-claim-controller",
    "namespace": "namespace-controller",
    "podgc": "pod-garbage-collector",
    "nodelifecycle": "node-controller",
    "tainteviction": "node-controller",
    "nodeipam": "node-controller",
    "clusterrole-aggregation": "clusterrole-aggregation-controller",
    "job": "job-controller",
    "cronjob": "cronjob-controller",
    "ttl-after-finished": "ttl-after-finished-controller",
    "statefulset": "statefulset-controller",
    "daemonset": "daemon-set-controller",
    "replicationcontroller": "replication-controller",
    "horizontalpodautoscaling": "horizontal-pod-autoscaler",
    "csrapproving": "certificate-controller",
    "csrsigning": "certificate-controller",
    "persistentvolume-binder": "persistent-volume-binder",
}


def _controller_rules() -> dict[str, list[PolicyRule]]:
    return {
        "certificate-controller": [
            rule("get", "list", "watch", "delete", groups=(CERTIFICATES,), resources=("certificatesigningrequests",)),
            rule("update", groups=(CERTIFICATES,),
                 resources=("certificatesigningrequests/status", "certificatesigningrequests/approval")),
            rule("approve", groups=(CERTIFICATES,), resources=("signers",),
                 names=("kubernetes.io/kube-apiserver-client-kubelet",)),
            rule("sign", groups=(CERTIFICATES,), resources=("signers",),
                 names=("kubernetes.io/legacy-unknown", "kubernetes.io/kube-apiserver-client",
                        "kubernetes.io/kube-apiserver-client-kubelet", "kubernetes.io/kubelet-serving")),
            rule("create", groups=(AUTHZ,), resources=("subjectaccessreviews",)),
            events_rule()],
        "clusterrole-aggregation-controller": [
            # full permissions on clusterroles, to mutate them in any way
            rule("escalate", "get", "list", "watch", "update", "patch", groups=(RBAC_GROUP,),
                 resources=("clusterroles",))],
        "cronjob-controller": [
            rule("get", "list", "watch", "update", groups=(BATCH,), resources=("cronjobs",)),
            rule("get", "list", "watch", "create", "update", "delete", "patch", groups=(BATCH,),
                 resources=("jobs",)),
            rule("update", groups=(BATCH,), resources=("cronjobs/status",)),
            rule("update", groups=(BATCH,), resources=("cronjobs/finalizers",)),
            rule("list", "delete", groups=(LEGACY,), resources=("pods",)),
            events_rule()],
        "daemon-set-controller": [
            rule("get", "list", "watch", groups=(EXTENSIONS, APPS), resources=("daemonsets",)),
            rule("update", groups=(EXTENSIONS, APPS), resources=("daemonsets/status",)),
            rule("update", groups=(EXTENSIONS, APPS), resources=("daemonsets/finalizers",)),
            rule("list", "watch", groups=(LEGACY,), resources=("nodes",)),
            rule("list", "watch", "create", "delete", "patch", groups=(LEGACY,), resources=("pods",)),
            rule("create", groups=(LEGACY,), resources=("pods/binding",)),
            rule("get", "list", "watch", "create", "delete", "update", "patch", groups=(APPS,),
                 resources=("controllerrevisions",)),
            events_rule()],
        "deployment-controller": [
            rule("get", "list", "watch", "update", groups=(EXTENSIONS, APPS), resources=("deployments",)),
            rule("update", groups=(EXTENSIONS, APPS), resources=("deployments/status",)),
            rule("update", groups=(EXTENSIONS, APPS), resources=("deployments/finalizers",)),
            rule("get", "list", "watch", "create", "update", "patch", "delete", groups=(APPS, EXTENSIONS),
                 resources=("replicasets",)),
            rule("get", "list", "watch", "update", groups=(LEGACY,), resources=("pods",)),
            events_rule()],
        "disruption-controller": [
            rule(*READ, groups=(EXTENSIONS, APPS), resources=("deployments",)),
            rule(*READ, groups=(APPS, EXTENSIONS), resources=("replicasets",)),
            rule(*READ, groups=(LEGACY,), resources=("replicationcontrollers",)),
            rule(*READ, groups=(POLICY,), resources=("poddisruptionbudgets",)),
            rule(*READ, groups=(APPS,), resources=("statefulsets",)),
            rule("update", groups=(POLICY,), resources=("poddisruptionbudgets/status",)),
            rule("patch", "update", groups=(LEGACY,), resources=("pods/status",)),
            rule("get", groups=("*",), resources=("*/scale",)),
            events_rule()],
        "endpoint-controller": [
            rule("get", "list", "watch", groups=(LEGACY,), resources=("services", "pods")),
            rule("get", "list", "create", "update", "delete", groups=(LEGACY,),
                 resources=("endpoints",)),
            rule("create", groups=(LEGACY,), resources=("endpoints/restricted",)),
            events_rule()],
        "endpointslice-controller": [
            rule("get", "list", "watch", groups=(LEGACY,), resources=("services", "pods", "nodes")),
            # an EndpointSlice's ownerReference to its Service sets blockOwnerDeletion
            rule("update", groups=(LEGACY,), resources=("services/finalizers",)),
            rule("get", "list", "create", "update", "delete", groups=(DISCOVERY,),
                 resources=("endpointslices",)),
            events_rule()],
        "generic-garbage-collector": [
            # list/watches, selective gets, and updates against any resource
            rule("get", "list", "watch", "patch", "update", "delete", groups=("*",), resources=("*",)),
            events_rule()],
        "horizontal-pod-autoscaler": [
            rule("get", "list", "watch", groups=(AUTOSCALING,), resources=("horizontalpodautoscalers",)),
            rule("update", groups=(AUTOSCALING,), resources=("horizontalpodautoscalers/status",)),
            rule("get", "update", groups=("*",), resources=("*/scale",)),
            rule("list", groups=(LEGACY,), resources=("pods",)),
            # allow listing resource, custom, and external metrics
            rule("list", groups=("metrics.k8s.io",), resources=("pods",)),
            rule("get", "list", groups=("custom.metrics.k8s.io",), resources=("*",)),
            rule("get", "list", groups=("external.metrics.k8s.io",), resources=("*",)),
            events_rule()],
        "job-controller": [
            rule("get", "list", "watch", "update", "patch", groups=(BATCH,), resources=("jobs",)),
            rule("update", "patch", groups=(BATCH,), resources=("jobs/status",)),
            rule("update", groups=(BATCH,), resources=("jobs/finalizers",)),
            rule("list", "watch", "create", "delete", "patch", groups=(LEGACY,), resources=("pods",)),
            events_rule()],
        "namespace-controller": [
            rule("get", "list", "watch", "delete", groups=(LEGACY,), resources=("namespaces",)),
            rule("update", groups=(LEGACY,), resources=("namespaces/finalize", "namespaces/status")),
            rule("get", "list", "delete", "deletecollection", groups=("*",), resources=("*",))],
        "node-controller": [
            rule("get", "list", "update", "delete", "patch", groups=(LEGACY,), resources=("nodes",)),
            rule("patch", "update", groups=(LEGACY,), resources=("nodes/status",)),
            # used for pod deletion
            rule("patch", "update", groups=(LEGACY,), resources=("pods/status",)),
            rule("list", "get", "delete", groups=(LEGACY,), resources=("pods",)),
            events_rule()],
        "pod-garbage-collector": [
            rule("list", "watch", "delete", groups=(LEGACY,), resources=("pods",)),
            rule("get", "list", groups=(LEGACY,), resources=("nodes",)),
            rule("patch", groups=(LEGACY,), resources=("pods/status",))],
        "replication-controller": [
            # 1.0 controllers needed get, update
            rule("get", "list", "watch", "update", groups=(LEGACY,), resources=("replicationcontrollers",)),
            rule("update", groups=(LEGACY,), resources=("replicationcontrollers/status",)),
            rule("update", groups=(LEGACY,), resources=("replicationcontrollers/finalizers",)),
            rule("list", "watch", "patch", "create", "delete", groups=(LEGACY,), resources=("pods",)),
            events_rule()],
        "statefulset-controller": [
            rule("list", "watch", groups=(LEGACY,), resources=("pods",)),
            rule("get", "list", "watch", groups=(APPS,), resources=("statefulsets",)),
            rule("update", groups=(APPS,), resources=("statefulsets/status",)),
            rule("update", groups=(APPS,), resources=("statefulsets/finalizers",)),
            rule("get", "create", "delete", "update", "patch", groups=(LEGACY,), resources=("pods",)),
            rule("get", "create", "delete", "update", "patch", "list", "watch", groups=(APPS,),
                 resources=("controllerrevisions",)),
            rule("get", "create", groups=(LEGACY,), resources=("persistentvolumeclaims",)),
            events_rule(),
            # StatefulSetAutoDeletePVC (GA in 1.32): owner references on claims, claim deletion
            rule("update", "delete", groups=(LEGACY,), resources=("persistentvolumeclaims",))],
        "replicaset-controller": [
            rule("get", "list", "watch", "update", groups=(APPS, EXTENSIONS), resources=("replicasets",)),
            rule("update", groups=(APPS, EXTENSIONS), resources=("replicasets/status",)),
            rule("update", groups=(APPS, EXTENSIONS), resources=("replicasets/finalizers",)),
            rule("list", "watch", "patch", "create", "delete", groups=(LEGACY,), resources=("pods",)),
            events_rule()],
        "root-ca-cert-publisher": [
            rule("create", "update", groups=(LEGACY,), resources=("configmaps",)),
            events_rule()],
        # the binder's rules but the in-tree plugins' (glusterfs endpoints and services,
        # openstack nodes, recycler pods): kvert has no volume plugins
        "persistent-volume-binder": [
            rule("get", "list", "watch", "update", "create", "delete", groups=(LEGACY,),
                 resources=("persistentvolumes",)),
            rule("update", groups=(LEGACY,), resources=("persistentvolumes/status",)),
            rule("get", "list", "watch", "update", groups=(LEGACY,),
                 resources=("persistentvolumeclaims",)),
            rule("update", groups=(LEGACY,), resources=("persistentvolumeclaims/status",)),
            rule("list", "watch", "get", groups=(LEGACY,), resources=("pods", "nodes")),
            rule("get", "list", "watch", groups=(STORAGE,), resources=("storageclasses",)),
            events_rule()],
        "ttl-after-finished-controller": [
            rule("get", "list", "watch", "delete", groups=(BATCH,), resources=("jobs",)),
            events_rule()],
        "service-account-controller": [
            rule("create", groups=(LEGACY,), resources=("serviceaccounts",)),
            events_rule()],
        "resource-claim-controller": [
            rule(*READ, groups=(LEGACY,), resources=("pods",)),
            rule("update", groups=(LEGACY,), resources=("pods/finalizers",)),
            rule("get", "list", "watch", "create", "delete", groups=(RESOURCE,), resources=("resourceclaims",)),
            rule("update", "patch", groups=(RESOURCE,), resources=("resourceclaims", "resourceclaims/status")),
            rule("update", "patch", groups=(LEGACY,), resources=("pods/status",)),
            events_rule()],
    }


def controller_roles() -> list[dict[str, Any]]:
    return [cluster_role(CONTROLLER_ROLE_PREFIX + name, rules)
            for name, rules in sorted(_controller_rules().items())]


def controller_role_bindings() -> list[dict[str, Any]]:
    return [cluster_role_binding(CONTROLLER_ROLE_PREFIX + name,
                                 service_account("kube-system", name), user(KUBE_CONTROLLER_MANAGER))
            for name in sorted(_controller_rules())]


# ---- the VPA (autoscaler's vpa-rbac.yaml) -------------------------------------------------

def _vpa_roles() -> list[tuple[str, list[PolicyRule], tuple[str, ...]]]:
    """(role, rules, kvert users bound) as the autoscaler's manifest binds its accounts."""
    return [
        ("system:metrics-reader", [rule("get", "list", groups=("metrics.k8s.io",), resources=("pods",))],
         (VPA_RECOMMENDER,)),
        ("system:vpa-actor", [
            rule(*READ, groups=(LEGACY,), resources=("pods", "nodes", "limitranges")),
            rule("create", "get", "list", "watch", "patch", "update", groups=(LEGACY, EVENTS),
                 resources=("events",)),
            rule(*READ, groups=("poc.autoscaling.k8s.io",), resources=("verticalpodautoscalers",)),
            rule(*READ, groups=(VPA,), resources=("verticalpodautoscalers",))],
         (VPA_RECOMMENDER, VPA_UPDATER)),
        ("system:vpa-status-actor", [
            rule("get", "patch", groups=(VPA,), resources=("verticalpodautoscalers/status",))],
         (VPA_RECOMMENDER,)),
        ("system:vpa-checkpoint-actor", [
            rule("get", "list", "watch", "create", "patch", "delete", groups=("poc.autoscaling.k8s.io",),
                 resources=("verticalpodautoscalercheckpoints",)),
            rule("get", "list", "watch", "create", "patch", "delete", groups=(VPA,),
                 resources=("verticalpodautoscalercheckpoints",))],
         (VPA_RECOMMENDER,)),
        ("system:evictioner", [
            rule("get", groups=(APPS, EXTENSIONS), resources=("replicasets",)),
            rule("create", groups=(LEGACY,), resources=("pods/eviction",))],
         (VPA_UPDATER,)),
        ("system:vpa-updater-in-place", [
            # pods: the vpaInPlaceUpdated annotation upstream's updater patches onto a pod
            rule("patch", groups=(LEGACY,), resources=("pods/resize", "pods"))],
         (VPA_UPDATER,)),
        ("system:vpa-target-reader", [
            rule("get", "watch", groups=("*",), resources=("*/scale",)),
            rule(*READ, groups=(LEGACY,), resources=("replicationcontrollers",)),
            rule(*READ, groups=(APPS,), resources=("daemonsets", "deployments", "replicasets", "statefulsets")),
            rule(*READ, groups=(BATCH,), resources=("jobs", "cronjobs"))],
         (VPA_RECOMMENDER, VPA_ADMISSION, VPA_UPDATER)),
        ("system:vpa-admission-controller", [
            rule(*READ, groups=(LEGACY,), resources=("pods", "configmaps", "nodes", "limitranges")),
            rule("create", "delete", "get", "list", "patch", groups=("admissionregistration.k8s.io",),
                 resources=("mutatingwebhookconfigurations",)),
            rule(*READ, groups=("poc.autoscaling.k8s.io",), resources=("verticalpodautoscalers",)),
            rule(*READ, groups=(VPA,), resources=("verticalpodautoscalers",)),
            rule("create", "update", "get", "list", "watch", groups=(COORDINATION,), resources=("leases",))],
         (VPA_ADMISSION,)),
        ("system:vpa-status-reader", [rule(*READ, groups=(COORDINATION,), resources=("leases",))],
         (VPA_UPDATER,)),
        # --leader-elect: upstream grants these as Roles in kube-system
        ("system:leader-locking-vpa-recommender", [
            rule("create", groups=(COORDINATION,), resources=("leases",)),
            rule("get", "watch", "update", groups=(COORDINATION,), resources=("leases",),
                 names=(VPA_RECOMMENDER_LEASE,))],
         (VPA_RECOMMENDER,)),
        ("system:leader-locking-vpa-updater", [
            rule("create", groups=(COORDINATION,), resources=("leases",)),
            rule("get", "watch", "update", groups=(COORDINATION,), resources=("leases",),
                 names=(VPA_UPDATER_LEASE,))],
         (VPA_UPDATER,)),
    ]


# ---- kvert's additions --------------------------------------------------------------------

def _kvert_roles() -> list[tuple[str, list[PolicyRule], tuple[str, ...]]]:
    """What kvert's components call beyond their upstream roles, and why."""
    return [
        ("system:kvert:kube-scheduler", [
            # the scheduler writes its decision explanation as a pod annotation (kubectl
            # explain reads it); upstream's scheduler writes no pod metadata
            rule("patch", groups=(LEGACY,), resources=("pods",))],
         (KUBE_SCHEDULER,)),
        ("system:kvert:vpa-recommender", [
            # checkpoints and the FetchingHistory condition are read-modify-write updates
            # (upstream's recommender patches both)
            rule("update", groups=(VPA,), resources=("verticalpodautoscalercheckpoints",)),
            rule("update", groups=(VPA,), resources=("verticalpodautoscalers/status",))],
         (VPA_RECOMMENDER,)),
        ("system:kvert:vpa-admission-controller", [
            # the requires-VPA hold reads a namespace's opt-in annotation
            rule(*READ, groups=(LEGACY,), resources=("namespaces",)),
            # the MultipleVPAs Warning event on VPAs that match the same pods (as
            # kvert.vpa.rbac grants it in a cluster; registration is delete + create, as upstream)
            rule("create", "patch", groups=(LEGACY,), resources=("events",))],
         (VPA_ADMISSION,)),
    ]


def _bound_roles() -> list[tuple[str, list[PolicyRule], tuple[str, ...]]]:
    return _vpa_roles() + _kvert_roles()


def bootstrap_objects() -> list[tuple[str, dict[str, Any]]]:
    """Every default as (resource key, object): roles first, then their bindings."""
    roles = cluster_roles() + controller_roles() + [
        cluster_role(name, rules) for name, rules, _ in _bound_roles()]
    bindings = cluster_role_bindings() + controller_role_bindings() + [
        cluster_role_binding(name, *(user(u) for u in users)) for name, _, users in _bound_roles()]
    return ([(f"{RBAC_GROUP}/clusterroles", r) for r in roles]
            + [(f"{RBAC_GROUP}/clusterrolebindings", b) for b in bindings])


class PolicyWriter(Protocol):
    """What writing the default policy takes of the registry (a layer above this one): its
    reads and its writes as a named user, through admission and validation."""

    def get(self, resource: str, name: str, namespace: str = "") -> Obj: ...

    async def create(self, resource: str, obj: Obj, *, user: str = "") -> Obj: ...

    async def update(self, resource: str, obj: Obj, *, user: str = "") -> Obj: ...


async def ensure_bootstrap_policy(registry: PolicyWriter) -> None:
    """Create the missing defaults; put back the rules (subjects, aggregation rule) of
    defaults still annotated ``autoupdate: "true"``, keeping labels and annotations added
    since (``reconciliation`` in ``pkg/registry/rbac/reconciliation``, without its
    tightening of removed permissions beyond the defaults' own)."""
    for resource, wanted in bootstrap_objects():
        name = wanted["metadata"]["name"]
        try:
            await registry.create(resource, wanted, user=KUBE_APISERVER)
            continue
        except AlreadyExists:
            pass
        except ApiError as e:
            log.warning("bootstrap %s %s not created: %s", resource, name, e)
            continue
        try:
            current = registry.get(resource, name, "")
        except NotFound:
            continue
        meta = current.get("metadata") or {}
        if (meta.get("annotations") or {}).get(AUTOUPDATE_ANNOTATION) != "true":
            continue
        updated = _reconciled(current, wanted)
        if updated is not None:
            try:
                await registry.update(resource, updated, user=KUBE_APISERVER)
            except ApiError as e:
                log.warning("bootstrap %s %s not reconciled: %s", resource, name, e)


KUBE_APISERVER = APISERVER


def _reconciled(current: Obj, wanted: Obj) -> Obj | None:
    """``current`` with ``wanted``'s rules/subjects and labels/annotations merged in, or
    None when nothing changes. An aggregated role's rules are the controller's: only its
    aggregation rule is reconciled."""
    out = dict(current)
    meta = dict(current.get("metadata") or {})
    wanted_meta = wanted["metadata"]
    meta["labels"] = {**(meta.get("labels") or {}), **wanted_meta["labels"]}
    meta["annotations"] = {**(meta.get("annotations") or {}), **wanted_meta["annotations"]}
    out["metadata"] = meta
    if wanted["kind"] == "ClusterRole":
        if "aggregationRule" in wanted:
            out["aggregationRule"] = wanted["aggregationRule"]
        else:
            rules = list(current.get("rules") or [])
            out["rules"] = rules + [r for r in wanted["rules"] if r not in rules]
    else:
        subjects = list(current.get("subjects") or [])
        out["subjects"] = subjects + [s for s in wanted.get("subjects", []) if s not in subjects]
        if not out["subjects"]:
            out.pop("subjects")
    return None if out == current else out
