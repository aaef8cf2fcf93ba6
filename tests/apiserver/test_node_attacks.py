"""Issue 27's node attacks, made over HTTPS with a node's credentials against an API server
with Node,RBAC authorization and the default admission chain: "a node can taint and relabel
itself with restricted labels, create other Nodes, relabel its pods, and mint 10-year
tokens, including one bound to another node's pod". Each now gets NodeRestriction's 403
(plugin/pkg/admission/noderestriction/admission.go; the same cases in Test_nodePlugin_Admit
and in test/integration/auth/node_test.go's TestNodeAuthorizer)."""

from __future__ import annotations

import asyncio
import datetime
import json
import threading
from pathlib import Path

import pytest
from aiohttp import ClientSession, TCPConnector

from kvert.apiserver.admission import default_chain
from kvert.apiserver.certs import ensure_pki
from kvert.apiserver.server import ApiServer
from kvert.auth import default_authorizer
from kvert.auth.policy import ensure_bootstrap_policy
from kvert.auth.serviceaccount import ServiceAccountTokens
from kvert.auth.tokens import TokenAuthenticator
from kvert.auth.user import User
from kvert.clock import WallClock
from kvert.registry.tokenrequest import TokenRequests
from kvert.store import open_store

AUTH = "system:authenticated"
USERS = {
    "admin": User("kvert-admin", "kvert-admin", ("system:masters", AUTH)),
    "node": User("system:node:node-1", "", ("system:nodes", AUTH)),
}
TEN_YEARS = 10 * 365 * 24 * 3600
MERGE = {"Content-Type": "application/merge-patch+json"}


def _node(name: str) -> dict:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name}, "spec": {}}


def _pod(name: str, node: str) -> dict:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "labels": {"app": name}},
            "spec": {"nodeName": node, "serviceAccountName": "default",
                     "containers": [{"name": "c", "image": "busybox"}],
                     "volumes": [{"name": "token", "projected": {"sources": [
                         {"serviceAccountToken": {"path": "token"}}]}}]}}


class Cluster:
    """An ApiServer serving TokenRequests, with Nodes node-1 and node-2 and a pod on each."""

    def __init__(self, tmp: Path):
        self.tmp = tmp
        self.loop = asyncio.new_event_loop()
        self.url = ""

    def start(self) -> "Cluster":
        ready = threading.Event()

        async def main():
            clock = WallClock()
            self.store = open_store("memory", clock=clock)
            self.pki = ensure_pki(self.tmp / "pki", datetime.datetime.now(datetime.timezone.utc))
            signer = ServiceAccountTokens.load_or_create(self.tmp / "sa.key")
            tokens = TokenAuthenticator({f"token-{key}": user for key, user in USERS.items()})
            self.server = ApiServer(self.store, clock, authenticator=tokens,
                                    admission=default_chain(self.store, clock),
                                    authorizer=default_authorizer(self.store),
                                    token_requests=TokenRequests(signer))
            await self.server.bootstrap()
            await ensure_bootstrap_policy(self.server.registry)
            registry = self.server.registry
            await registry.create("serviceaccounts", {"apiVersion": "v1", "kind": "ServiceAccount",
                                                      "metadata": {"name": "default",
                                                                   "namespace": "default"}})
            for name in ("node-1", "node-2"):
                await registry.create("nodes", _node(name))
            await registry.create("pods", _pod("mine", "node-1"), namespace="default")
            await registry.create("pods", _pod("theirs", "node-2"), namespace="default")
            self.url = await self.server.start("127.0.0.1", 0, self.pki.server_context())
            ready.set()

        def run():
            asyncio.set_event_loop(self.loop)
            self.loop.run_until_complete(main())
            self.loop.run_forever()

        threading.Thread(target=run, daemon=True).start()
        assert ready.wait(30)
        return self

    def json(self, who: str, method: str, path: str, body=None, headers=None) -> tuple[int, dict]:
        async def request():
            h = {"Authorization": f"Bearer token-{who}", "Content-Type": "application/json",
                 **(headers or {})}
            async with ClientSession(connector=TCPConnector(ssl=self.pki.client_context())) as s:
                data = None if body is None else json.dumps(body).encode()
                async with s.request(method, self.url + path, data=data, headers=h) as r:
                    return r.status, json.loads(await r.text())
        return asyncio.run_coroutine_threadsafe(request(), self.loop).result(30)

    def stop(self) -> None:
        asyncio.run_coroutine_threadsafe(self.server.stop(), self.loop).result(30)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.store.close()


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    c = Cluster(tmp_path_factory.mktemp("nodeattacks")).start()
    yield c
    c.stop()


def _refused(answer: tuple[int, dict], message: str) -> None:
    code, status = answer
    assert (code, status.get("reason"), status.get("message")) == (403, "Forbidden", message)


def test_a_node_cannot_taint_or_untaint_itself(cluster):
    _refused(cluster.json("node", "PATCH", "/api/v1/nodes/node-1",
                          {"spec": {"taints": [{"key": "evil", "effect": "NoSchedule"}]}}, MERGE),
             'nodes "node-1" is forbidden: node "node-1" is not allowed to modify taints')
    code, node = cluster.json("admin", "GET", "/api/v1/nodes/node-1")
    assert code == 200 and not node["spec"].get("taints")


def test_a_node_cannot_give_itself_restricted_labels(cluster):
    labels = {"node-restriction.kubernetes.io/pci": "true",
              "node-role.kubernetes.io/control-plane": ""}
    _refused(cluster.json("node", "PATCH", "/api/v1/nodes/node-1", {"metadata": {"labels": labels}},
                          MERGE),
             'nodes "node-1" is forbidden: is not allowed to modify labels: '
             "node-restriction.kubernetes.io/pci, node-role.kubernetes.io/control-plane")
    # its own kubelet labels stay its to set
    code, node = cluster.json("node", "PATCH", "/api/v1/nodes/node-1",
                              {"metadata": {"labels": {"topology.kubernetes.io/zone": "a"}}}, MERGE)
    assert code == 200 and node["metadata"]["labels"]["topology.kubernetes.io/zone"] == "a"


def test_a_node_cannot_create_or_modify_other_nodes(cluster):
    _refused(cluster.json("node", "POST", "/api/v1/nodes", _node("node-3")),
             'nodes "node-3" is forbidden: node "node-1" is not allowed to modify node "node-3"')
    _refused(cluster.json("node", "PATCH", "/api/v1/nodes/node-2",
                          {"metadata": {"labels": {"x": "y"}}}, MERGE),
             'nodes "node-2" is forbidden: node "node-1" is not allowed to modify node "node-2"')
    _refused(cluster.json("node", "PATCH", "/api/v1/nodes/node-2/status",
                          {"status": {"addresses": [{"type": "InternalIP", "address": "10.9.9.9"}]}},
                          MERGE),
             'nodes "node-2" is forbidden: node "node-1" is not allowed to modify node "node-2"')
    assert cluster.json("admin", "GET", "/api/v1/nodes/node-3")[0] == 404


def test_a_node_cannot_relabel_its_pods_or_touch_other_nodes_pods(cluster):
    _refused(cluster.json("node", "PATCH", "/api/v1/namespaces/default/pods/mine",
                          {"metadata": {"labels": {"app": "payments"}}}, MERGE),
             'pods "mine" is forbidden: unexpected operation "UPDATE", node "node-1" can only create '
             "and delete mirror pods")
    code, pod = cluster.json("admin", "GET", "/api/v1/namespaces/default/pods/mine")
    assert pod["metadata"]["labels"] == {"app": "mine"}
    code, theirs = cluster.json("admin", "GET", "/api/v1/namespaces/default/pods/theirs")
    _refused(cluster.json("node", "PUT", "/api/v1/namespaces/default/pods/theirs/status",
                          {**theirs, "status": {**theirs.get("status", {}), "phase": "Failed"}}),
             'pods "theirs" is forbidden: node "node-1" can only update pod status for pods with '
             "spec.nodeName set to itself")
    _refused(cluster.json("node", "POST", "/api/v1/namespaces/default/pods/theirs/eviction",
                          {"apiVersion": "policy/v1", "kind": "Eviction",
                           "metadata": {"name": "theirs", "namespace": "default"}}),
             'pods "theirs" is forbidden: node node-1 can only evict pods with spec.nodeName set to '
             "itself")
    _refused(cluster.json("node", "DELETE", "/api/v1/namespaces/default/pods/theirs"),
             'pods "theirs" is forbidden: node "node-1" can only delete pods with spec.nodeName set '
             "to itself")
    assert cluster.json("admin", "GET", "/api/v1/namespaces/default/pods/theirs")[0] == 200


def _token_request(bound: dict | None) -> dict:
    spec: dict = {"expirationSeconds": TEN_YEARS}
    if bound is not None:
        spec["boundObjectRef"] = bound
    return {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": spec}


def test_a_node_cannot_mint_unbound_or_foreign_tokens(cluster):
    path = "/api/v1/namespaces/default/serviceaccounts/default/token"
    _refused(cluster.json("node", "POST", path, _token_request(None)),
             'serviceaccounts "default" is forbidden: node requested token not bound to a pod')
    _, theirs = cluster.json("admin", "GET", "/api/v1/namespaces/default/pods/theirs")
    ref = {"apiVersion": "v1", "kind": "Pod", "name": "theirs", "uid": theirs["metadata"]["uid"]}
    _refused(cluster.json("node", "POST", path, _token_request(ref)),
             'serviceaccounts "default" is forbidden: node requested token bound to a pod scheduled '
             "on a different node")
    # a token bound to its own pod is what the node agent needs, and is issued
    _, mine = cluster.json("admin", "GET", "/api/v1/namespaces/default/pods/mine")
    ref = {"apiVersion": "v1", "kind": "Pod", "name": "mine", "uid": mine["metadata"]["uid"]}
    request = _token_request(ref)
    request["spec"]["expirationSeconds"] = 3607
    code, answer = cluster.json("node", "POST", path, request)
    assert code == 201 and answer["status"]["token"]


def test_a_node_cannot_take_another_nodes_lease(cluster):
    lease = {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
             "metadata": {"name": "node-2", "namespace": "kube-node-lease"},
             "spec": {"holderIdentity": "node-2", "leaseDurationSeconds": 40}}
    _refused(cluster.json("node", "POST",
                          "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases", lease),
             'leases.coordination.k8s.io "node-2" is forbidden: can only access node lease with '
             "the same name as the requesting node")
