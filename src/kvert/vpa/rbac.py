"""The VPA components' RBAC for a real cluster: upstream VPA 1.8's ``deploy/vpa-rbac.yaml``
(the same ClusterRoles, rules, Roles and bindings, bound to the ServiceAccounts
``vpa-recommender``, ``vpa-updater`` and ``vpa-admission-controller`` in the namespace the
components run in), plus the ``system:kvert:*`` ClusterRoles granting what kvert's components
call beyond upstream's, each rule with its reason.

:func:`rbac_objects` returns them for the chosen components: a binding names only the chosen
components' accounts, and a role none of them is bound to is left out.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from kvert.auth.policy import RBAC_API_VERSION, VPA_RECOMMENDER_LEASE, VPA_UPDATER_LEASE
from kvert.auth.rules import GROUP as RBAC_GROUP
from kvert.auth.rules import PolicyRule, rule

RECOMMENDER = "recommender"
UPDATER = "updater"
ADMISSION_CONTROLLER = "admission-controller"
COMPONENTS = (RECOMMENDER, UPDATER, ADMISSION_CONTROLLER)

# the ServiceAccount (and Deployment) of each component, as upstream names them
ACCOUNTS = {RECOMMENDER: "vpa-recommender", UPDATER: "vpa-updater", ADMISSION_CONTROLLER: "vpa-admission-controller"}

_LEGACY, _EVENTS, _VPA, _POC = "", "events.k8s.io", "autoscaling.k8s.io", "poc.autoscaling.k8s.io"
_COORDINATION, _APPS = "coordination.k8s.io", "apps"
_READ = ("get", "list", "watch")
_CHECKPOINT_VERBS = ("get", "list", "watch", "create", "patch", "delete")

Role = tuple[str, list[PolicyRule], tuple[str, ...]]   # (name, rules, components bound)


def upstream_cluster_roles() -> list[Role]:
    """vpa-rbac.yaml's ClusterRoles with the components their bindings name, in its order."""
    return [
        ("system:metrics-reader", [rule("get", "list", groups=("metrics.k8s.io",), resources=("pods",))],
         (RECOMMENDER,)),
        ("system:vpa-actor", [
            rule(*_READ, groups=(_LEGACY,), resources=("pods", "nodes", "limitranges")),
            rule("create", "get", "list", "watch", "patch", "update", groups=(_LEGACY, _EVENTS),
                 resources=("events",)),
            rule(*_READ, groups=(_POC,), resources=("verticalpodautoscalers",)),
            rule(*_READ, groups=(_VPA,), resources=("verticalpodautoscalers",))],
         (RECOMMENDER, UPDATER)),
        ("system:vpa-status-actor", [
            rule("get", "patch", groups=(_VPA,), resources=("verticalpodautoscalers/status",))],
         (RECOMMENDER,)),
        ("system:vpa-checkpoint-actor", [
            rule(*_CHECKPOINT_VERBS, groups=(_POC,), resources=("verticalpodautoscalercheckpoints",)),
            rule(*_CHECKPOINT_VERBS, groups=(_VPA,), resources=("verticalpodautoscalercheckpoints",)),
            rule("get", "list", groups=(_LEGACY,), resources=("namespaces",))],
         (RECOMMENDER,)),
        ("system:evictioner", [
            rule("get", groups=(_APPS, "extensions"), resources=("replicasets",)),
            rule("create", groups=(_LEGACY,), resources=("pods/eviction",))],
         (UPDATER,)),
        ("system:vpa-updater-in-place", [
            # pods: the vpaInPlaceUpdated annotation the updater patches onto a pod
            rule("patch", groups=(_LEGACY,), resources=("pods/resize", "pods"))],
         (UPDATER,)),
        ("system:vpa-target-reader", [
            rule("get", "watch", groups=("*",), resources=("*/scale",)),
            rule(*_READ, groups=(_LEGACY,), resources=("replicationcontrollers",)),
            rule(*_READ, groups=(_APPS,), resources=("daemonsets", "deployments", "replicasets", "statefulsets")),
            rule(*_READ, groups=("batch",), resources=("jobs", "cronjobs"))],
         (RECOMMENDER, ADMISSION_CONTROLLER, UPDATER)),
        ("system:vpa-admission-controller", [
            rule(*_READ, groups=(_LEGACY,), resources=("pods", "configmaps", "nodes", "limitranges")),
            rule("create", "delete", "get", "list", "patch", groups=("admissionregistration.k8s.io",),
                 resources=("mutatingwebhookconfigurations",)),
            rule(*_READ, groups=(_POC,), resources=("verticalpodautoscalers",)),
            rule(*_READ, groups=(_VPA,), resources=("verticalpodautoscalers",)),
            # the status Lease the updater reads
            rule("create", "update", "get", "list", "watch", groups=(_COORDINATION,), resources=("leases",))],
         (ADMISSION_CONTROLLER,)),
        ("system:vpa-status-reader", [rule(*_READ, groups=(_COORDINATION,), resources=("leases",))],
         (UPDATER,)),
    ]


# upstream's binding names where they are not the role's
_BINDING_NAMES = {
    "system:vpa-updater-in-place": "system:vpa-updater-in-place-binding",
    "system:vpa-target-reader": "system:vpa-target-reader-binding",
    "system:evictioner": "system:vpa-evictioner-binding",
    "system:vpa-status-reader": "system:vpa-status-reader-binding",
}


def upstream_roles() -> list[Role]:
    """vpa-rbac.yaml's namespaced Roles (leader election locks, in the components' namespace)."""
    return [
        ("system:leader-locking-vpa-updater", [
            rule("create", groups=(_COORDINATION,), resources=("leases",)),
            rule("get", "watch", "update", groups=(_COORDINATION,), resources=("leases",),
                 names=(VPA_UPDATER_LEASE,))],
         (UPDATER,)),
        ("system:leader-locking-vpa-recommender", [
            rule("create", groups=(_COORDINATION,), resources=("leases",)),
            # vpa-recommender: the lease's name before vpa-recommender-lease (upstream #7461)
            rule("get", "watch", "update", groups=(_COORDINATION,), resources=("leases",),
                 names=("vpa-recommender", VPA_RECOMMENDER_LEASE))],
         (RECOMMENDER,)),
    ]


def kvert_cluster_roles() -> list[Role]:
    """What kvert's components call beyond upstream's roles, and why (as ``kvert up``'s
    ``system:kvert:*`` roles grant it to their users, :mod:`kvert.auth.policy`)."""
    return [
        ("system:kvert:vpa-recommender", [
            # checkpoints and the FetchingHistory condition are read-modify-write updates
            # where upstream's recommender patches
            rule("update", groups=(_VPA,), resources=("verticalpodautoscalercheckpoints",)),
            rule("update", groups=(_VPA,), resources=("verticalpodautoscalers/status",))],
         (RECOMMENDER,)),
        ("system:kvert:vpa-admission-controller", [
            # the requires-VPA hold (seed 002) reads a namespace's opt-in annotation
            rule(*_READ, groups=(_LEGACY,), resources=("namespaces",)),
            # the MultipleVPAs Warning event on VPAs that match the same pods
            rule("create", "patch", groups=(_LEGACY,), resources=("events",))],
         (ADMISSION_CONTROLLER,)),
    ]


def _subjects(components: Iterable[str], namespace: str) -> list[dict[str, str]]:
    return [{"kind": "ServiceAccount", "name": ACCOUNTS[c], "namespace": namespace} for c in components]


def _role_object(kind: str, name: str, rules: list[PolicyRule], namespace: str = "") -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name}
    if namespace:
        meta["namespace"] = namespace
    return {"apiVersion": RBAC_API_VERSION, "kind": kind, "metadata": meta, "rules": [r.to_dict() for r in rules]}


def _binding(kind: str, name: str, role_kind: str, role: str, subjects: list[dict[str, str]],
             namespace: str = "") -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name}
    if namespace:
        meta["namespace"] = namespace
    return {"apiVersion": RBAC_API_VERSION, "kind": kind, "metadata": meta,
            "roleRef": {"apiGroup": RBAC_GROUP, "kind": role_kind, "name": role}, "subjects": subjects}


def rbac_objects(namespace: str, components: Iterable[str] = COMPONENTS) -> list[dict[str, Any]]:
    """ClusterRoles, then Roles, then their bindings, for ``components`` in ``namespace``."""
    chosen = set(components)
    roles: list[dict[str, Any]] = []
    bindings: list[dict[str, Any]] = []
    for name, rules, bound in upstream_cluster_roles() + kvert_cluster_roles():
        who = [c for c in bound if c in chosen]
        if who:
            roles.append(_role_object("ClusterRole", name, rules))
            bindings.append(_binding("ClusterRoleBinding", _BINDING_NAMES.get(name, name), "ClusterRole", name,
                                     _subjects(who, namespace)))
    for name, rules, bound in upstream_roles():
        who = [c for c in bound if c in chosen]
        if who:
            roles.append(_role_object("Role", name, rules, namespace))
            bindings.append(_binding("RoleBinding", name, "Role", name, _subjects(who, namespace), namespace))
    return roles + bindings


__all__ = ["ACCOUNTS", "ADMISSION_CONTROLLER", "COMPONENTS", "RECOMMENDER", "UPDATER", "kvert_cluster_roles",
           "rbac_objects", "upstream_cluster_roles", "upstream_roles"]
