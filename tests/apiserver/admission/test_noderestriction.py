"""NodeRestriction (kvert.apiserver.admission.noderestriction), through the registry's write
path as a node's in-process client makes its writes.

Case names and expected messages are those of Test_nodePlugin_Admit in upstream's
plugin/pkg/admission/noderestriction/admission_test.go (the messages: admission.go's
``admission.NewForbidden`` errors); kvert-only cases say so.
"""

from __future__ import annotations

import base64

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec

from kvert.api.errors import Forbidden, NotFound
from kvert.auth.serviceaccount import ServiceAccountTokens
from kvert.client import InProcessClient
from kvert.registry import Registry
from kvert.registry.tokenrequest import TokenRequests

from .conftest import Env

MYNODE = "system:node:mynode"
LEASES = "coordination.k8s.io/leases"
SLICES = "resource.k8s.io/resourceslices"
CSRS = "certificates.k8s.io/certificatesigningrequests"


class NodeEnv(Env):
    """The default chain, an admin and the node ``mynode``; pods ``mypod`` (bound to mynode),
    ``otherpod`` (othernode) and ``unboundpod`` in ``ns``; Nodes mynode and othernode."""

    def __init__(self, signer: ServiceAccountTokens):
        super().__init__()
        self.registry = Registry(self.store, self.clock, self.admission, seed=7,
                                 token_requests=TokenRequests(signer))
        self.client = InProcessClient(self.registry)
        self.node = InProcessClient(self.registry, MYNODE)
        self.namespace("ns")
        self.create("serviceaccounts", {"apiVersion": "v1", "kind": "ServiceAccount",
                                        "metadata": {"name": "mysa", "namespace": "ns"}})
        for name, labels in (("mynode", {}), ("othernode", {})):
            self.create("nodes", node(name, labels))
        for name, bound in (("mypod", "mynode"), ("otherpod", "othernode"), ("unboundpod", "")):
            self.create("pods", pod(name, bound))

    def as_node(self, coro):
        return self.run(coro)

    def refused(self, coro) -> str:
        with pytest.raises(Forbidden) as e:
            self.run(coro)
        assert e.value.code == 403
        return str(e.value)


def node(name, labels=None, **spec):
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels or {}},
            "spec": spec}


def pod(name, node_name="", *, volumes=None, labels=None, annotations=None, **spec):
    meta = {"name": name, "namespace": "ns", "labels": labels or {"app": name}}
    if annotations:
        meta["annotations"] = annotations
    body = {"nodeName": node_name, "serviceAccountName": "mysa",
            "containers": [{"name": "c", "image": "busybox"}],
            "volumes": volumes if volumes is not None else [
                {"name": "token", "projected": {"sources": [
                    {"serviceAccountToken": {"path": "token", "expirationSeconds": 3607}}]}}],
            **spec}
    if not node_name:
        body.pop("nodeName")
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": body}


@pytest.fixture(scope="module")
def signer(tmp_path_factory):
    return ServiceAccountTokens.load_or_create(tmp_path_factory.mktemp("pki") / "sa.key")


@pytest.fixture
def env(signer):
    e = NodeEnv(signer)
    yield e
    e.store.close()


def _patch(env, resource, name, body, namespace="", subresource=""):
    return env.node.patch(resource, name, body, namespace=namespace, subresource=subresource)


# ---- nodes ------------------------------------------------------------------------------------

# setAllowedCreateLabels / setForbiddenCreateLabels in admission_test.go
ALLOWED_LABELS = {"kubernetes.io/hostname": "mynode", "kubernetes.io/os": "linux",
                  "topology.kubernetes.io/zone": "a", "node.kubernetes.io/instance-type": "big",
                  "kubelet.kubernetes.io/foo": "x", "foo.node.kubernetes.io/foo": "x",
                  "example.com/foo": "x"}
FORBIDDEN_LABELS = {"node-restriction.kubernetes.io/foo": "x",
                    "foo.node-restriction.kubernetes.io/foo": "x",
                    "other.kubernetes.io/foo": "x", "other.k8s.io/foo": "x"}
FORBIDDEN_LIST = ("foo.node-restriction.kubernetes.io/foo, node-restriction.kubernetes.io/foo, "
                  "other.k8s.io/foo, other.kubernetes.io/foo")


def test_forbid_create_of_other_node(env):
    msg = env.refused(env.node.create("nodes", node("newnode")))
    assert msg == 'nodes "newnode" is forbidden: node "mynode" is not allowed to modify node "newnode"'


def test_forbid_update_and_delete_of_other_node(env):
    assert env.refused(_patch(env, "nodes", "othernode", {"metadata": {"labels": {"a": "b"}}})) == (
        'nodes "othernode" is forbidden: node "mynode" is not allowed to modify node "othernode"')
    assert "is not allowed to modify node" in env.refused(
        _patch(env, "nodes", "othernode", {"status": {"capacity": {"cpu": "64"}}},
               subresource="status"))
    assert "is not allowed to modify node" in env.refused(env.node.delete("nodes", "othernode"))


def test_allow_create_of_my_node_with_labels_and_taints(env):
    env.run(env.client.delete("nodes", "mynode"))
    created = env.as_node(env.node.create("nodes", node(
        "mynode", ALLOWED_LABELS, taints=[{"key": "k", "effect": "NoSchedule"}])))
    assert created["metadata"]["labels"] == ALLOWED_LABELS


def test_forbid_create_of_my_node_with_forbidden_labels(env):
    env.run(env.client.delete("nodes", "mynode"))
    msg = env.refused(env.node.create("nodes", node("mynode", {**ALLOWED_LABELS, **FORBIDDEN_LABELS})))
    assert msg == ('nodes "mynode" is forbidden: node "mynode" is not allowed to set the following '
                   f"labels: {FORBIDDEN_LIST}")


def test_forbid_create_of_my_node_with_non_nil_config_source(env):
    env.run(env.client.delete("nodes", "mynode"))
    source = {"configMap": {"name": "cm", "namespace": "kube-system", "kubeletConfigKey": "kubelet"}}
    assert env.refused(env.node.create("nodes", node("mynode", configSource=source))).endswith(
        'node "mynode" is not allowed to create pods with a non-nil configSource')


def test_allow_update_of_my_node_allowed_labels(env):
    env.as_node(_patch(env, "nodes", "mynode", {"metadata": {"labels": ALLOWED_LABELS}}))
    changed = {k: "b" for k in ALLOWED_LABELS}
    assert env.as_node(_patch(env, "nodes", "mynode", {"metadata": {"labels": changed}})
                       )["metadata"]["labels"] == changed


@pytest.mark.parametrize("case,before,after", [
    ("forbid update of my node: add labels", {}, FORBIDDEN_LABELS),
    ("forbid update of my node: remove labels", FORBIDDEN_LABELS, {k: None for k in FORBIDDEN_LABELS}),
    ("forbid update of my node: change labels", FORBIDDEN_LABELS, {k: "new" for k in FORBIDDEN_LABELS}),
])
def test_forbid_update_of_my_node_labels(env, case, before, after):
    if before:
        env.run(env.client.patch("nodes", "mynode", {"metadata": {"labels": before}}))
    msg = env.refused(_patch(env, "nodes", "mynode", {"metadata": {"labels": after}}))
    assert msg == f'nodes "mynode" is forbidden: is not allowed to modify labels: {FORBIDDEN_LIST}'


def test_allow_update_of_my_node_while_forbidden_labels_exist_unmodified(env):
    # "allow update of my node: add allowed labels while forbidden labels exist unmodified"
    env.run(env.client.patch("nodes", "mynode", {"metadata": {"labels": FORBIDDEN_LABELS}}))
    env.as_node(_patch(env, "nodes", "mynode", {"metadata": {"labels": ALLOWED_LABELS}}))


@pytest.mark.parametrize("case,before,after", [
    ("forbid update of my node: add taints", None, [{"key": "a", "effect": "NoSchedule"}]),
    ("forbid update of my node: remove taints", [{"key": "a", "effect": "NoSchedule"}], []),
    ("forbid update of my node: change taints", [{"key": "a", "effect": "NoSchedule"}],
     [{"key": "b", "effect": "NoSchedule"}]),
])
def test_forbid_update_of_my_node_taints(env, case, before, after):
    if before:
        env.run(env.client.patch("nodes", "mynode", {"spec": {"taints": before}}))
    msg = env.refused(_patch(env, "nodes", "mynode", {"spec": {"taints": after}}))
    assert msg == 'nodes "mynode" is forbidden: node "mynode" is not allowed to modify taints'


def test_allow_update_of_my_node_no_change_to_taints(env):
    taints = [{"key": "a", "effect": "NoSchedule"}]
    env.run(env.client.patch("nodes", "mynode", {"spec": {"taints": taints}}))
    env.as_node(_patch(env, "nodes", "mynode", {"spec": {"taints": taints},
                                                "metadata": {"annotations": {"x": "y"}}}))


def test_my_node_status_update_keeps_taints(env):
    # "allow update of my node status": the status subresource leaves the spec as stored
    env.run(env.client.patch("nodes", "mynode", {"spec": {"taints": [{"key": "a", "effect": "NoSchedule"}]}}))
    current = env.get("nodes", "mynode")
    body = {**current, "spec": {}, "status": {"capacity": {"cpu": "4"}}}
    updated = env.as_node(env.node.update_status("nodes", body))
    assert updated["spec"]["taints"] == [{"key": "a", "effect": "NoSchedule"}]


def test_forbid_update_of_my_node_owner_references(env):
    # 1.35's admitNode: a node may not change its Node's ownerReferences
    owner = {"apiVersion": "v1", "kind": "ConfigMap", "name": "x", "uid": "u1"}
    msg = env.refused(_patch(env, "nodes", "mynode", {"metadata": {"ownerReferences": [owner]}}))
    assert msg == 'nodes "mynode" is forbidden: node "mynode" is not allowed to modify ownerReferences'


def test_forbid_update_of_my_node_config_source(env):
    # "forbid update of my node: nil configSource to new non-nil configSource"
    source = {"configMap": {"name": "cm", "namespace": "kube-system", "kubeletConfigKey": "kubelet"}}
    assert env.refused(_patch(env, "nodes", "mynode", {"spec": {"configSource": source}})).endswith(
        'node "mynode" is not allowed to update configSource to a new non-nil configSource')


# ---- pods -------------------------------------------------------------------------------------

def test_forbid_creating_a_pod_that_is_not_a_mirror_pod(env):
    # "forbid create of pod referencing service account" family: kvert has no static pods,
    # so a node's pod create is always refused for the first reason upstream gives
    msg = env.refused(env.node.create("pods", pod("new", "mynode")))
    assert msg == ('pods "new" is forbidden: pod does not have "kubernetes.io/config.mirror" '
                   'annotation, node "mynode" can only create mirror pods')


def test_forbid_creating_a_mirror_pod_bound_to_another(env):
    mirror = pod("mirror", "othernode", annotations={"kubernetes.io/config.mirror": "x"})
    assert env.refused(env.node.create("pods", mirror)) == (
        'pods "mirror" is forbidden: node "mynode" can only create pods with spec.nodeName set to '
        "itself")


def test_forbid_creating_a_mirror_pod_without_owner_reference(env):
    mirror = pod("mirror", "mynode", annotations={"kubernetes.io/config.mirror": "x"})
    assert env.refused(env.node.create("pods", mirror)).endswith(
        'node "mynode" can only create pods with an owner reference set to itself')


def test_forbid_create_of_mirror_pod_referencing_service_account(env):
    uid = env.get("nodes", "mynode")["metadata"]["uid"]
    mirror = pod("mirror", "mynode", annotations={"kubernetes.io/config.mirror": "x"}, volumes=[])
    mirror["metadata"]["ownerReferences"] = [{"apiVersion": "v1", "kind": "Node", "name": "mynode",
                                              "uid": uid, "controller": True}]
    assert env.refused(env.node.create("pods", mirror)).endswith(
        'node "mynode" can not create pods that reference a service account')


def test_delete_only_pods_bound_to_self(env):
    # "allow delete of pod bound to self" / "forbid delete of pod bound to another"
    assert env.refused(env.node.delete("pods", "otherpod", namespace="ns")) == (
        'pods "otherpod" is forbidden: node "mynode" can only delete pods with spec.nodeName set to '
        "itself")
    assert "spec.nodeName set to itself" in env.refused(
        env.node.delete("pods", "unboundpod", namespace="ns"))
    env.as_node(env.node.delete("pods", "mypod", namespace="ns"))


def test_update_status_only_of_pods_bound_to_self(env):
    other = env.get("pods", "otherpod", "ns")
    assert env.refused(env.node.update_status("pods", {**other, "status": {"phase": "Failed"}})) == (
        'pods "otherpod" is forbidden: node "mynode" can only update pod status for pods with '
        "spec.nodeName set to itself")
    mine = env.get("pods", "mypod", "ns")
    status = {**mine.get("status", {}), "phase": "Running"}
    assert env.as_node(env.node.update_status("pods", {**mine, "status": status})
                       )["status"]["phase"] == "Running"


def test_forbid_relabelling_pods(env):
    # upstream refuses every pod update by a node ("forbid update of pod bound to self");
    # kvert lets it change its explanation annotation only (kvert-only case)
    assert env.refused(_patch(env, "pods", "mypod", {"metadata": {"labels": {"app": "db"}}},
                              namespace="ns")) == (
        'pods "mypod" is forbidden: unexpected operation "UPDATE", node "mynode" can only create '
        "and delete mirror pods")
    assert "unexpected operation" in env.refused(_patch(
        env, "pods", "otherpod", {"metadata": {"annotations": {"explain.kvert.io/node": "{}"}}},
        namespace="ns"))
    patched = env.as_node(_patch(env, "pods", "mypod",
                                 {"metadata": {"annotations": {"explain.kvert.io/node": "{}"}}},
                                 namespace="ns"))
    assert patched["metadata"]["annotations"]["explain.kvert.io/node"] == "{}"
    assert patched["metadata"]["labels"] == {"app": "mypod"}


def test_forbid_evicting_pods_bound_elsewhere(env):
    # "forbid create of eviction for pod bound to another" / "... unbound"
    assert env.refused(env.node.evict("ns", "otherpod")) == (
        'pods "otherpod" is forbidden: node mynode can only evict pods with spec.nodeName set to '
        "itself")
    assert "spec.nodeName set to itself" in env.refused(env.node.evict("ns", "unboundpod"))
    with pytest.raises(NotFound):
        env.run(env.node.evict("ns", "nopod"))
    env.as_node(env.node.evict("ns", "mypod"))


# ---- tokens -----------------------------------------------------------------------------------

def _token(env, bound=None, audiences=None, seconds=3600, account="mysa"):
    spec = {"expirationSeconds": seconds}
    if bound is not None:
        spec["boundObjectRef"] = bound
    if audiences is not None:
        spec["audiences"] = audiences
    return env.node.create_subresource("serviceaccounts", account, "token",
                                       {"apiVersion": "authentication.k8s.io/v1",
                                        "kind": "TokenRequest", "spec": spec}, namespace="ns")


def _ref(env, name, uid=None):
    if uid is None:
        uid = env.get("pods", name, "ns")["metadata"]["uid"]
    return {"apiVersion": "v1", "kind": "Pod", "name": name, "uid": uid}


def test_forbid_create_of_unbound_token(env):
    assert env.refused(_token(env, seconds=10 * 365 * 86400)) == (
        'serviceaccounts "mysa" is forbidden: node requested token not bound to a pod')
    secret = {"apiVersion": "v1", "kind": "Secret", "name": "s", "uid": "u"}
    assert env.refused(_token(env, secret)).endswith("node requested token not bound to a pod")


def test_forbid_create_of_token_bound_to_pod_without_uid(env):
    assert env.refused(_token(env, _ref(env, "mypod", uid=""))).endswith(
        "node requested token with a pod binding without a uid")


def test_forbid_create_of_token_bound_to_nonexistent_pod(env):
    with pytest.raises(NotFound):
        env.run(_token(env, _ref(env, "nopod", uid="someuid")))


def test_forbid_create_of_token_bound_to_pod_scheduled_on_another_node(env):
    msg = env.refused(_token(env, _ref(env, "otherpod"), seconds=10 * 365 * 86400))
    assert msg == ('serviceaccounts "mysa" is forbidden: node requested token bound to a pod '
                   "scheduled on a different node")


def test_forbid_token_bound_to_a_recreated_pod(env):
    assert env.refused(_token(env, _ref(env, "mypod", uid="stale"))).endswith(
        "the UID in the bound object reference (stale) does not match the UID in record. The object "
        "might have been deleted and then recreated")


def test_allow_create_of_token_bound_to_pod_scheduled_this_node(env):
    answer = env.as_node(_token(env, _ref(env, "mypod")))
    assert answer["status"]["token"]


def test_token_audiences_are_those_of_the_pods_volumes(env):
    # "forbid create of token with multiple audiences in token request ..." and
    # "forbid create of token when audience not in pod spec ..."
    assert env.refused(_token(env, _ref(env, "mypod"), audiences=["a", "b"])).endswith(
        "node may only request 0 or 1 audiences")
    assert env.refused(_token(env, _ref(env, "mypod"), audiences=["vault"])).endswith(
        'audience "vault" not found in pod spec volume, system:node:mynode is not authorized to '
        "request tokens for this audience")


# ---- leases, slices, CSRs -------------------------------------------------------------------------

def _lease(name, namespace="kube-node-lease"):
    return {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
            "metadata": {"name": name, "namespace": namespace},
            "spec": {"holderIdentity": name, "leaseDurationSeconds": 40}}


def test_node_leases(env):
    # "allow create of my node lease" / "forbid create of other node lease" /
    # "forbid create of lease in namespace other than kube-node-lease"
    env.as_node(env.node.create(LEASES, _lease("mynode")))
    assert env.refused(env.node.create(LEASES, _lease("othernode"))).endswith(
        "can only access node lease with the same name as the requesting node")
    assert env.refused(env.node.create(LEASES, _lease("mynode", "ns"))).endswith(
        'can only access leases in the "kube-node-lease" system namespace')
    env.run(env.client.create(LEASES, _lease("othernode")))
    assert env.refused(env.node.delete(LEASES, "othernode", namespace="kube-node-lease")).endswith(
        "can only access node lease with the same name as the requesting node")


def _slice(name, node_name):
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": name},
            "spec": {"nodeName": node_name, "driver": "d.example.com",
                     "pool": {"name": "p", "generation": 1, "resourceSliceCount": 1}}}


def test_resource_slices(env):
    # TestAdmitResourceSlice: "create other" / "delete other"
    env.as_node(env.node.create(SLICES, _slice("mine", "mynode")))
    assert env.refused(env.node.create(SLICES, _slice("theirs", "othernode"))) == (
        'resourceslices.resource.k8s.io "theirs" is forbidden: can only create ResourceSlice with '
        "the same NodeName as the requesting node")
    env.run(env.client.create(SLICES, _slice("theirs", "othernode")))
    assert env.refused(env.node.delete(SLICES, "theirs")).endswith(
        "can only delete ResourceSlice with the same NodeName as the requesting node")


def _csr(common_name, signer="kubernetes.io/kubelet-serving"):
    key = ec.generate_private_key(ec.SECP256R1())
    builder = x509.CertificateSigningRequestBuilder().subject_name(x509.Name([
        x509.NameAttribute(x509.NameOID.ORGANIZATION_NAME, "system:nodes"),
        x509.NameAttribute(x509.NameOID.COMMON_NAME, common_name)]))
    if signer == "kubernetes.io/kubelet-serving":
        builder = builder.add_extension(x509.SubjectAlternativeName([x509.DNSName("mynode")]),
                                        critical=False)
    pem = builder.sign(key, hashes.SHA256()).public_bytes(serialization.Encoding.PEM)
    usages = (["digital signature", "server auth"] if signer == "kubernetes.io/kubelet-serving"
              else ["digital signature", "client auth"])
    return {"apiVersion": "certificates.k8s.io/v1", "kind": "CertificateSigningRequest",
            "metadata": {"name": f"csr-{common_name.replace(':', '-')}"},
            "spec": {"request": base64.b64encode(pem).decode(), "signerName": signer,
                     "usages": usages}}


@pytest.mark.parametrize("signer_name", ["kubernetes.io/kubelet-serving",
                                         "kubernetes.io/kube-apiserver-client-kubelet"])
def test_node_csrs_name_the_node_itself(env, signer_name):
    # TestAdmitCSR: "deny node CSR with a CN of another node"
    assert env.refused(env.node.create(CSRS, _csr("system:node:othernode", signer_name))).endswith(
        "can only create a node CSR with CN=system:node:mynode")


def test_unknown_node_is_refused(env):
    # Admit: "could not determine node from user"
    anonymous_node = InProcessClient(env.registry, "system:node:")
    assert env.refused(anonymous_node.create(LEASES, _lease("x"))).endswith(
        'could not determine node from user "system:node:"')


def test_allow_creating_a_mirror_pod_bound_to_self(env):
    uid = env.get("nodes", "mynode")["metadata"]["uid"]
    mirror = pod("mirror", "mynode", annotations={"kubernetes.io/config.mirror": "x"}, volumes=[])
    mirror["spec"].pop("serviceAccountName")
    mirror["metadata"]["ownerReferences"] = [{"apiVersion": "v1", "kind": "Node", "name": "mynode",
                                              "uid": uid, "controller": True}]
    assert env.as_node(env.node.create("pods", mirror))["spec"]["nodeName"] == "mynode"
    # "forbid creating a mirror pod with a mismatched node uid"
    mirror["metadata"]["name"] = "mirror2"
    mirror["metadata"]["ownerReferences"][0]["uid"] = "other"
    assert env.refused(env.node.create("pods", mirror)).endswith(
        f"node mynode UID mismatch: expected other got {uid}")
