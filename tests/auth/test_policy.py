"""The bootstrap policy: what each kvert identity may do, and the reconciliation of defaults."""

import asyncio

import pytest

from kvert.auth import Attributes, Decision, default_authorizer
from kvert.auth.policy import (AUTOUPDATE_ANNOTATION, BOOTSTRAP_LABELS, bootstrap_objects,
                               ensure_bootstrap_policy)
from kvert.auth.user import User
from kvert.clock import WallClock
from kvert.controllers.clusterroleaggregation import CLUSTER_ROLES, aggregated_rules
from kvert.registry import Registry
from kvert.store import open_store

AUTH = ("system:authenticated",)


def _setup():
    store = open_store("memory", clock=WallClock())
    registry = Registry(store, WallClock(), None)

    async def main():
        await ensure_bootstrap_policy(registry)
        # what the aggregation controller does for admin, edit and view
        roles = registry.list(CLUSTER_ROLES)["items"]
        for name in ("view", "edit", "admin"):
            current = registry.get(CLUSTER_ROLES, name)
            current["rules"] = aggregated_rules(current, roles)
            await registry.update(CLUSTER_ROLES, current)
            roles = registry.list(CLUSTER_ROLES)["items"]
        await registry.create("rbac.authorization.k8s.io/rolebindings", {
            "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
            "metadata": {"name": "viewer", "namespace": "default"},
            "roleRef": {"kind": "ClusterRole", "name": "view"},
            "subjects": [{"kind": "User", "name": "viewer"}]})

    asyncio.run(main())
    return store, registry


@pytest.fixture(scope="module")
def cluster():
    store, registry = _setup()
    authorizer = default_authorizer(store)
    yield store, registry, authorizer
    authorizer.stop()
    store.close()


def can(authorizer, user, verb, resource, group="", namespace="default", subresource="", name=""):
    attrs = Attributes(user, verb, namespace=namespace, api_group=group, resource=resource,
                       subresource=subresource, name=name)
    return authorizer.authorize(attrs)[0] is Decision.ALLOW


def test_defaults_carry_the_bootstrap_label_and_autoupdate_annotation():
    # addDefaultMetadata in bootstrappolicy/policy.go
    for _, obj in bootstrap_objects():
        meta = obj["metadata"]
        assert meta["labels"].items() >= BOOTSTRAP_LABELS.items()
        assert meta["annotations"] == {AUTOUPDATE_ANNOTATION: "true"}


def test_a_user_bound_to_view_can_read_pods_and_not_create_them(cluster):
    _, _, authorizer = cluster
    viewer = User("viewer", groups=AUTH)
    assert can(authorizer, viewer, "list", "pods")
    assert can(authorizer, viewer, "get", "deployments", "apps")
    assert not can(authorizer, viewer, "create", "pods")
    assert not can(authorizer, viewer, "get", "secrets")          # view excludes secrets
    assert not can(authorizer, viewer, "list", "pods", namespace="kube-system")


def test_the_masters_group_may_do_anything(cluster):
    _, _, authorizer = cluster
    admin = User("kvert-admin", groups=("system:masters",) + AUTH)
    assert can(authorizer, admin, "delete", "namespaces", namespace="", name="default")
    assert can(authorizer, admin, "escalate", "clusterroles", "rbac.authorization.k8s.io", namespace="")


def test_a_node_cannot_delete_a_namespace(cluster):
    _, _, authorizer = cluster
    node = User("system:node:node-1", groups=("system:nodes",) + AUTH)
    assert not can(authorizer, node, "delete", "namespaces", namespace="", name="default")
    assert can(authorizer, node, "get", "nodes", namespace="", name="node-1")


@pytest.mark.parametrize("user,verb,resource,group,subresource,allowed", [
    # the VPA updater: resize and evict, never delete
    ("system:vpa-updater", "patch", "pods", "", "resize", True),
    ("system:vpa-updater", "create", "pods", "", "eviction", True),
    ("system:vpa-updater", "delete", "pods", "", "", False),
    ("system:vpa-updater", "update", "verticalpodautoscalers", "autoscaling.k8s.io", "status", False),
    # the VPA recommender: status and checkpoints, pods read-only
    ("system:vpa-recommender", "patch", "verticalpodautoscalers", "autoscaling.k8s.io", "status", True),
    ("system:vpa-recommender", "create", "verticalpodautoscalercheckpoints", "autoscaling.k8s.io", "", True),
    ("system:vpa-recommender", "list", "pods", "metrics.k8s.io", "", True),
    ("system:vpa-recommender", "patch", "pods", "", "resize", False),
    ("system:vpa-recommender", "delete", "pods", "", "", False),
    # the VPA admission controller registers its webhook
    ("system:vpa-admission-controller", "create", "mutatingwebhookconfigurations",
     "admissionregistration.k8s.io", "", True),
    ("system:vpa-admission-controller", "create", "pods", "", "", False),
    # ... records the MultipleVPAs event, and no longer needs update on webhook configurations
    ("system:vpa-admission-controller", "create", "events", "", "", True),
    ("system:vpa-admission-controller", "update", "mutatingwebhookconfigurations",
     "admissionregistration.k8s.io", "", False),
    # the scheduler binds, preempts and writes its explanation; nothing else
    ("system:kube-scheduler", "create", "pods", "", "binding", True),
    ("system:kube-scheduler", "delete", "pods", "", "", True),
    ("system:kube-scheduler", "patch", "pods", "", "", True),
    ("system:kube-scheduler", "create", "pods", "", "", False),
    ("system:kube-scheduler", "delete", "namespaces", "", "", False),
    # the controller manager's controllers
    ("system:kube-controller-manager", "create", "pods", "", "", True),
    ("system:kube-controller-manager", "update", "replicasets", "apps", "status", True),
    ("system:kube-controller-manager", "update", "namespaces", "", "finalize", True),
    ("system:kube-controller-manager", "escalate", "clusterroles", "rbac.authorization.k8s.io", "", True),
    # bound to every controller role: daemon-set-controller keeps upstream's legacy pods/binding
    ("system:kube-controller-manager", "create", "pods", "", "binding", True),
    ("system:kube-controller-manager", "create", "nodes", "", "", False),
    ("system:kube-controller-manager", "create", "pods", "", "eviction", False),
])
def test_each_component_identity_has_what_it_needs(cluster, user, verb, resource, group, subresource,
                                                   allowed):
    _, _, authorizer = cluster
    assert can(authorizer, User(user, groups=AUTH), verb, resource, group,
               subresource=subresource) is allowed


def test_every_authenticated_user_may_discover_and_review_itself(cluster):
    _, _, authorizer = cluster
    nobody = User("nobody", groups=AUTH)
    assert authorizer.authorize(Attributes(nobody, "get", resource_request=False, path="/apis/apps"))[0] \
        is Decision.ALLOW
    assert can(authorizer, nobody, "create", "selfsubjectaccessreviews", "authorization.k8s.io", namespace="")
    assert can(authorizer, nobody, "create", "selfsubjectreviews", "authentication.k8s.io", namespace="")
    assert not authorizer.authorize(Attributes(nobody, "get", resource_request=False, path="/metrics"))[0] \
        is Decision.ALLOW


def test_reconciliation_restores_autoupdated_defaults_only():
    store, registry = _setup()

    async def main():
        view = registry.get(CLUSTER_ROLES, "system:aggregate-to-view")
        view["rules"] = view["rules"][:1]
        await registry.update(CLUSTER_ROLES, view)
        basic = registry.get(CLUSTER_ROLES, "system:basic-user")
        basic["metadata"]["annotations"][AUTOUPDATE_ANNOTATION] = "false"
        basic["rules"] = []
        await registry.update(CLUSTER_ROLES, basic)
        binding = registry.get("rbac.authorization.k8s.io/clusterrolebindings", "system:discovery")
        binding["subjects"].append({"kind": "Group", "name": "extra", "apiGroup": "rbac.authorization.k8s.io"})
        await registry.update("rbac.authorization.k8s.io/clusterrolebindings", binding)
        await ensure_bootstrap_policy(registry)
        restored = registry.get(CLUSTER_ROLES, "system:aggregate-to-view")["rules"]
        assert restored == [r for _, o in bootstrap_objects() if o["metadata"]["name"] ==
                            "system:aggregate-to-view" for r in o["rules"]]
        assert registry.get(CLUSTER_ROLES, "system:basic-user")["rules"] == []
        subjects = registry.get("rbac.authorization.k8s.io/clusterrolebindings", "system:discovery")["subjects"]
        assert {s["name"] for s in subjects} == {"system:authenticated", "extra"}   # added ones stay

    asyncio.run(main())
    store.close()
