"""The Node authorizer (kvert.auth.node); NodeRestriction's limits are tested in
tests/apiserver/admission/test_noderestriction.py."""

import pytest

from kvert.auth import Attributes, Decision
from kvert.auth.node import NodeAuthorizer, node_identity
from kvert.auth.user import User
from kvert.clock import WallClock
from kvert.store import open_store

NODE0 = User("system:node:node0", groups=("system:nodes", "system:authenticated"))


def _pod(name, node, **spec):
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "ns0"},
            "spec": {"nodeName": node, "containers": [{"name": "c", "image": "x"}], **spec}}


@pytest.fixture(scope="module")
def authorizer():
    store = open_store("memory", clock=WallClock())
    store.create("pods", _pod("pod0-node0", "node0", serviceAccountName="svcacct0-node0",
                             volumes=[{"name": "s", "secret": {"secretName": "secret0-node0"}},
                                      {"name": "c", "configMap": {"name": "configmap0-node0"}},
                                      {"name": "p", "persistentVolumeClaim": {"claimName": "pvc0-node0"}}],
                             resourceClaims=[{"name": "c", "resourceClaimName": "claim0-node0"}]))
    store.create("pods", _pod("pod0-node1", "node1", volumes=[
        {"name": "s", "secret": {"secretName": "secret0-node1"}}]))
    store.create("resource.k8s.io/resourceslices", {
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "slice0-node0"},
        "spec": {"nodeName": "node0", "driver": "d", "pool": {"name": "p", "resourceSliceCount": 1,
                                                              "generation": 1}}})
    yield NodeAuthorizer(store)
    store.close()


def a(verb, resource, name="", namespace="", subresource="", group="", field_selector="", user=NODE0):
    return Attributes(user, verb, namespace=namespace, api_group=group, resource=resource,
                      subresource=subresource, name=name, field_selector=field_selector)


def na(verb, path):
    return Attributes(NODE0, verb, resource_request=False, path=path)


# TestAuthorizer in plugin/pkg/auth/authorizer/node/node_authorizer_test.go (names as there)
CASES = [
    ("allowed configmap", a("get", "configmaps", "configmap0-node0", "ns0"), Decision.ALLOW),
    ("allowed secret via pod", a("get", "secrets", "secret0-node0", "ns0"), Decision.ALLOW),
    ("list allowed secret via pod", a("list", "secrets", "secret0-node0", "ns0"), Decision.ALLOW),
    ("watch allowed secret via pod", a("watch", "secrets", "secret0-node0", "ns0"), Decision.ALLOW),
    ("disallowed list many secrets", a("list", "secrets", "", "ns0"), Decision.NO_OPINION),
    ("disallowed secret via pod of another node", a("get", "secrets", "secret0-node1", "ns0"),
     Decision.NO_OPINION),
    ("disallowed update secret", a("update", "secrets", "secret0-node0", "ns0"), Decision.NO_OPINION),
    ("allowed pvc", a("get", "persistentvolumeclaims", "pvc0-node0", "ns0"), Decision.ALLOW),
    ("allowed resource claim", a("get", "resourceclaims", "claim0-node0", "ns0", group="resource.k8s.io"),
     Decision.ALLOW),
    ("disallowed resource claim, other name",
     a("get", "resourceclaims", "claim1-node0", "ns0", group="resource.k8s.io"), Decision.NO_OPINION),
    ("allowed svcacct token create", a("create", "serviceaccounts", "svcacct0-node0", "ns0", "token"),
     Decision.ALLOW),
    ("disallowed svcacct token create - serviceaccount not attached to node",
     a("create", "serviceaccounts", "default", "ns0", "token"), Decision.NO_OPINION),
    ("disallowed svcacct token create - no subresource",
     a("create", "serviceaccounts", "svcacct0-node0", "ns0"), Decision.NO_OPINION),
    ("allowed node lease - get", a("get", "leases", "node0", "kube-node-lease", group="coordination.k8s.io"),
     Decision.ALLOW),
    ("allowed node lease - create", a("create", "leases", "", "kube-node-lease", group="coordination.k8s.io"),
     Decision.ALLOW),
    ("disallowed get another node lease",
     a("get", "leases", "node1", "kube-node-lease", group="coordination.k8s.io"), Decision.NO_OPINION),
    ("disallowed node lease - list",
     a("list", "leases", "", "kube-node-lease", group="coordination.k8s.io"), Decision.NO_OPINION),
    ("disallowed lease in namespace other than kube-node-lease - get",
     a("get", "leases", "node0", "foo", group="coordination.k8s.io"), Decision.NO_OPINION),
    ("allowed get own node", a("get", "nodes", "node0"), Decision.ALLOW),
    ("disallowed get another node", a("get", "nodes", "node1"), Decision.NO_OPINION),
    ("disallowed list all nodes", a("list", "nodes"), Decision.NO_OPINION),
    ("allowed watch own node by field selector", a("watch", "nodes", "node0",
                                                   field_selector="metadata.name=node0"), Decision.ALLOW),
    ("allowed update own node status", a("update", "nodes", "node0", subresource="status"), Decision.ALLOW),
    # writes the authorizer cannot judge without the body: allowed here, held to the node's
    # own objects by NodeRestriction (authorizeNode / authorizePod in node_authorizer.go)
    ("allowed update another node status, left to admission",
     a("patch", "nodes", "node1", subresource="status"), Decision.ALLOW),
    ("allowed create a node, left to admission", a("create", "nodes"), Decision.ALLOW),
    ("allowed get related pod", a("get", "pods", "pod0-node0", "ns0"), Decision.ALLOW),
    ("disallowed get unrelated pod", a("get", "pods", "pod0-node1", "ns0"), Decision.NO_OPINION),
    ("allowed list pods with field selector", a("list", "pods", field_selector="spec.nodeName=node0"),
     Decision.ALLOW),
    ("disallowed list pods of another node", a("list", "pods", field_selector="spec.nodeName=node1"),
     Decision.NO_OPINION),
    ("disallowed list pods without field selector", a("list", "pods"), Decision.NO_OPINION),
    ("allowed update status of a bound pod", a("update", "pods", "pod0-node0", "ns0", "status"), Decision.ALLOW),
    ("allowed update status of a pod bound elsewhere, left to admission",
     a("patch", "pods", "pod0-node1", "ns0", "status"), Decision.ALLOW),
    ("allowed evict a bound pod", a("create", "pods", "pod0-node0", "ns0", "eviction"), Decision.ALLOW),
    ("allowed evict a pod bound elsewhere, left to admission",
     a("create", "pods", "pod0-node1", "ns0", "eviction"), Decision.ALLOW),
    ("allowed delete a bound pod", a("delete", "pods", "pod0-node0", "ns0"), Decision.ALLOW),
    ("allowed delete a pod bound elsewhere, left to admission", a("delete", "pods", "pod0-node1", "ns0"),
     Decision.ALLOW),
    ("allowed create a pod, left to admission", a("create", "pods", "", "ns0"), Decision.ALLOW),
    ("disallowed update a pod", a("update", "pods", "pod0-node0", "ns0"), Decision.NO_OPINION),
    ("disallowed pod subresource", a("update", "pods", "pod0-node0", "ns0", "resize"), Decision.NO_OPINION),
    ("allowed get own resource slice", a("get", "resourceslices", "slice0-node0", group="resource.k8s.io"),
     Decision.ALLOW),
    ("allowed list resource slices of the node",
     a("list", "resourceslices", group="resource.k8s.io", field_selector="spec.nodeName=node0"), Decision.ALLOW),
    ("disallowed list all resource slices", a("list", "resourceslices", group="resource.k8s.io"),
     Decision.NO_OPINION),
    ("static rules: create events", a("create", "events", "", "ns0"), Decision.ALLOW),
    ("static rules: list runtime classes", a("list", "runtimeclasses", group="node.k8s.io"), Decision.ALLOW),
    ("static rules: get services", a("get", "services", "s", "ns0"), Decision.ALLOW),
    ("static rules: no namespaces", a("delete", "namespaces", "default"), Decision.NO_OPINION),
    ("static rules: no non-resource URLs", na("get", "/api"), Decision.NO_OPINION),
]


@pytest.mark.parametrize("name,attrs,expected", CASES, ids=[c[0] for c in CASES])
def test_node_authorizer(authorizer, name, attrs, expected):
    assert authorizer.authorize(attrs)[0] is expected


def test_reasons_say_why():
    # the reasons of node_authorizer.go and NodeRestriction's messages
    store = open_store("memory", clock=WallClock())
    store.create("pods", _pod("p", "node1"))
    authorizer = NodeAuthorizer(store)
    assert authorizer.authorize(a("get", "pods", "p", "ns0")) == (
        Decision.NO_OPINION, "no relationship found between node 'node0' and this object")
    assert authorizer.authorize(a("get", "secrets", "s", "ns0")) == (
        Decision.NO_OPINION, "no relationship found between node 'node0' and this object")
    assert authorizer.authorize(a("list", "nodes")) == (
        Decision.NO_OPINION, "node 'node0' cannot read all nodes, only its own Node object")
    unknown = User("system:anonymous-node", groups=("system:nodes",))
    assert authorizer.authorize(a("get", "nodes", "x", user=unknown)) == (
        Decision.NO_OPINION, 'unknown node for user "system:anonymous-node"')
    store.close()


def test_node_identity_needs_the_group_and_the_name():
    # nodeidentifier.NodeIdentity
    assert node_identity(NODE0) == ("node0", True)
    assert node_identity(User("system:node:node0")) == ("", False)
    assert node_identity(User("kubelet", groups=("system:nodes",))) == ("", True)


def test_a_node_cannot_list_its_rules():
    # NodeAuthorizer.RulesFor
    rules = NodeAuthorizer(None).rules_for(NODE0, "default")
    assert rules.incomplete and rules.evaluation_error == "node authorizer does not support user rule resolution"
    assert not NodeAuthorizer(None).rules_for(User("alice"), "default").incomplete
