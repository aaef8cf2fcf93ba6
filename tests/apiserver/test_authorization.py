"""Authorization in the API server: the 403 of a refused request, the review kinds,
impersonation, and real kubectl (``auth can-i``, ``can-i --list``, ``whoami``, ``--as``)."""

from __future__ import annotations

import asyncio
import datetime
import json
import subprocess
import threading
from pathlib import Path

import pytest
from aiohttp import ClientSession, TCPConnector

from kvert.apiserver.admission import default_chain
from kvert.apiserver.certs import ensure_pki
from kvert.apiserver.kubeconfig import write_kubeconfig
from kvert.apiserver.server import ApiServer
from kvert.auth import default_authorizer
from kvert.auth.policy import ensure_bootstrap_policy
from kvert.auth.tokens import TokenAuthenticator
from kvert.auth.user import User
from kvert.clock import WallClock
from kvert.controllers.clusterroleaggregation import CLUSTER_ROLES, aggregated_rules
from kvert.store import open_store

from .kubectl_stub import kubectl_path

AUTH = "system:authenticated"
USERS = {
    "admin": User("kvert-admin", "kvert-admin", ("system:masters", AUTH)),
    "alice": User("alice", "alice-uid", (AUTH, "devs")),
    "viewer": User("viewer", "", (AUTH,)),
    "node": User("system:node:node-1", "", ("system:nodes", AUTH)),
    "scheduler": User("system:kube-scheduler", "", (AUTH,)),
    "updater": User("system:vpa-updater", "", (AUTH,)),
    "teamadmin": User("teamadmin", "", (AUTH,)),
}


class Cluster:
    """An ApiServer with Node,RBAC authorization and the bootstrap policy, in a thread."""

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
            tokens = TokenAuthenticator({f"token-{key}": user for key, user in USERS.items()})
            self.server = ApiServer(self.store, clock, authenticator=tokens,
                                    admission=default_chain(self.store, clock),
                                    authorizer=default_authorizer(self.store))
            await self.server.bootstrap()
            await ensure_bootstrap_policy(self.server.registry)
            registry = self.server.registry
            for name in ("view", "edit", "admin"):     # as the aggregation controller fills them
                roles = registry.list(CLUSTER_ROLES)["items"]
                current = registry.get(CLUSTER_ROLES, name)
                await registry.update(CLUSTER_ROLES, {**current, "rules": aggregated_rules(current, roles)})
            await registry.create("namespaces", {"apiVersion": "v1", "kind": "Namespace",
                                                 "metadata": {"name": "team"}})
            await registry.create("rbac.authorization.k8s.io/rolebindings", {
                "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
                "metadata": {"name": "teamadmin", "namespace": "team"},
                "roleRef": {"kind": "ClusterRole", "name": "admin"},
                "subjects": [{"kind": "User", "name": "teamadmin"}]})
            await registry.create("rbac.authorization.k8s.io/rolebindings", {
                "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
                "metadata": {"name": "viewer", "namespace": "default"},
                "roleRef": {"kind": "ClusterRole", "name": "view"},
                "subjects": [{"kind": "User", "name": "viewer"}]})
            self.url = await self.server.start("127.0.0.1", 0, self.pki.server_context())
            for key in USERS:
                write_kubeconfig(self.tmp / f"{key}.kubeconfig", self.url, self.pki.ca_pem(), f"token-{key}")
            ready.set()

        def run():
            asyncio.set_event_loop(self.loop)
            self.loop.run_until_complete(main())
            self.loop.run_forever()

        threading.Thread(target=run, daemon=True).start()
        assert ready.wait(30)
        return self

    def call(self, who: str, method: str, path: str, body=None, headers=None) -> tuple[int, str]:
        async def request():
            h = {"Authorization": f"Bearer token-{who}", "Content-Type": "application/json",
                 **(headers or {})}
            async with ClientSession(connector=TCPConnector(ssl=self.pki.client_context())) as s:
                data = None if body is None else json.dumps(body).encode()
                async with s.request(method, self.url + path, data=data, headers=h) as r:
                    return r.status, await r.text()
        return asyncio.run_coroutine_threadsafe(request(), self.loop).result(30)

    def json(self, who: str, method: str, path: str, body=None, headers=None) -> tuple[int, dict]:
        code, text = self.call(who, method, path, body, headers)
        return code, json.loads(text)

    def stop(self) -> None:
        asyncio.run_coroutine_threadsafe(self.server.stop(), self.loop).result(30)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.store.close()


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    c = Cluster(tmp_path_factory.mktemp("authz")).start()
    yield c
    c.stop()


# ---- the 403 (responsewriters.Forbidden, apierrors.NewForbidden) -----------------------------

def _status(message: str, details: str) -> str:
    # byte for byte as kube-apiserver writes it: json.Encoder's trailing newline included
    return ('{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":' +
            json.dumps(message) + ',"reason":"Forbidden","details":' + details + ',"code":403}\n')


def test_forbidden_named_object_in_a_namespace(cluster):
    code, text = cluster.call("alice", "DELETE", "/api/v1/namespaces/ns/pods/x")
    assert code == 403
    assert text == _status('pods "x" is forbidden: User "alice" cannot delete resource "pods" in API '
                           'group "" in the namespace "ns"', '{"name":"x","kind":"pods"}')


def test_forbidden_collection_and_subresource_and_group(cluster):
    code, text = cluster.call("alice", "GET", "/apis/apps/v1/deployments")
    assert (code, text) == (403, _status(
        'deployments.apps is forbidden: User "alice" cannot list resource "deployments" in API group '
        '"apps" at the cluster scope', '{"group":"apps","kind":"deployments"}'))
    code, text = cluster.call("alice", "PATCH", "/api/v1/namespaces/default/pods/p/status", {})
    assert json.loads(text)["message"] == ('pods "p" is forbidden: User "alice" cannot patch resource '
                                          '"pods/status" in API group "" in the namespace "default"')
    code, text = cluster.call("alice", "GET", "/api/v1/namespaces/default/pods?watch=true")
    assert "cannot watch resource" in json.loads(text)["message"]
    code, text = cluster.call("alice", "DELETE", "/api/v1/namespaces/default/configmaps")
    assert "cannot deletecollection resource" in json.loads(text)["message"]


def test_forbidden_non_resource_path(cluster):
    code, text = cluster.call("alice", "GET", "/metrics")
    assert (code, text) == (403, '{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",'
                                 '"message":"forbidden: User \\"alice\\" cannot get path \\"/metrics\\"",'
                                 '"reason":"Forbidden","code":403}\n')


def test_forbidden_carries_the_authorizers_reason(cluster):
    code, status = cluster.json("node", "DELETE", "/api/v1/namespaces/default/pods/elsewhere")
    # a pod that does not exist is the registry's 404; one bound elsewhere is refused
    assert code == 404
    code, status = cluster.json("admin", "POST", "/api/v1/namespaces/default/pods", {
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "elsewhere"},
        "spec": {"nodeName": "node-2", "containers": [{"name": "c", "image": "nginx"}]}})
    assert code == 201
    code, status = cluster.json("node", "GET", "/api/v1/namespaces/default/pods/elsewhere")
    assert (code, status["message"]) == (403, (
        'pods "elsewhere" is forbidden: User "system:node:node-1" cannot get resource "pods" in API '
        'group "" in the namespace "default": no relationship found between node \'node-1\' and this '
        'object'))
    # a delete the authorizer leaves to NodeRestriction, which refuses it (admitPod)
    code, status = cluster.json("node", "DELETE", "/api/v1/namespaces/default/pods/elsewhere")
    assert (code, status["message"]) == (403, (
        'pods "elsewhere" is forbidden: node "node-1" can only delete pods with spec.nodeName set '
        'to itself'))
    code, status = cluster.json("node", "DELETE", "/api/v1/namespaces/default")
    assert (code, status["message"]) == (403, (
        'namespaces "default" is forbidden: User "system:node:node-1" cannot delete resource '
        '"namespaces" in API group "" at the cluster scope'))


def test_health_and_version_need_no_authorization(cluster):
    for path in ("/healthz", "/livez", "/readyz", "/version"):
        assert cluster.call("alice", "GET", path)[0] == 200


# ---- the review kinds ---------------------------------------------------------------------

SSAR = "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews"


def _ssar(**attrs):
    return {"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview",
            "spec": {"resourceAttributes": attrs}}


def test_self_subject_access_review(cluster):
    code, review = cluster.json("viewer", "POST", SSAR, _ssar(namespace="default", verb="list", resource="pods"))
    assert code == 201
    assert review["status"] == {"allowed": True, "reason": 'RBAC: allowed by RoleBinding "viewer/default" of '
                                                           'ClusterRole "view" to User "viewer"'}
    assert review["spec"] == {"resourceAttributes": {"namespace": "default", "verb": "list", "resource": "pods"}}
    code, review = cluster.json("viewer", "POST", SSAR, _ssar(namespace="default", verb="create", resource="pods"))
    assert review["status"] == {"allowed": False}
    code, review = cluster.json("viewer", "POST", SSAR, {
        "apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview",
        "spec": {"nonResourceAttributes": {"path": "/apis", "verb": "get"}}})
    assert review["status"]["allowed"] is True


def test_access_review_validation(cluster):
    # ValidateSelfSubjectAccessReviewSpec
    code, status = cluster.json("alice", "POST", SSAR, {"apiVersion": "authorization.k8s.io/v1",
                                                         "kind": "SelfSubjectAccessReview", "spec": {}})
    assert code == 422 and status["details"]["causes"][0]["field"] == "spec.resourceAttributes"
    assert status["message"].startswith('SelfSubjectAccessReview.authorization.k8s.io "" is invalid: '
                                         'spec.resourceAttributes: Invalid value')


def test_subject_access_review_asks_about_another_user(cluster):
    body = {"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview",
            "spec": {"user": "system:vpa-updater", "groups": [AUTH],
                     "resourceAttributes": {"namespace": "default", "verb": "delete", "resource": "pods"}}}
    code, review = cluster.json("admin", "POST", "/apis/authorization.k8s.io/v1/subjectaccessreviews", body)
    assert (code, review["status"]) == (201, {"allowed": False})
    body["spec"]["resourceAttributes"].update(verb="create", subresource="eviction")
    code, review = cluster.json("admin", "POST", "/apis/authorization.k8s.io/v1/subjectaccessreviews", body)
    assert review["status"]["allowed"] is True
    # only who may create subjectaccessreviews may ask
    code, _ = cluster.json("alice", "POST", "/apis/authorization.k8s.io/v1/subjectaccessreviews", body)
    assert code == 403


def test_local_subject_access_review_is_bound_to_its_namespace(cluster):
    path = "/apis/authorization.k8s.io/v1/namespaces/default/localsubjectaccessreviews"
    body = {"apiVersion": "authorization.k8s.io/v1", "kind": "LocalSubjectAccessReview",
            "spec": {"user": "viewer", "resourceAttributes": {"namespace": "default", "verb": "get",
                                                             "resource": "pods"}}}
    code, review = cluster.json("admin", "POST", path, body)
    assert (code, review["status"]["allowed"], review["metadata"]["namespace"]) == (201, True, "default")
    # ValidateLocalSubjectAccessReview: the attributes' namespace must be the review's
    body["spec"]["resourceAttributes"]["namespace"] = "other"
    code, status = cluster.json("admin", "POST", path, body)
    assert code == 422 and status["details"]["causes"] == [{
        "reason": "FieldValueInvalid", "field": "spec.resourceAttributes.namespace",
        "message": 'Invalid value: "other": must match metadata.namespace'}]
    # EnsureObjectNamespaceMatchesRequestNamespace
    body["metadata"] = {"namespace": "other"}
    code, status = cluster.json("admin", "POST", path, body)
    assert (code, status["reason"]) == (400, "BadRequest")


def test_self_subject_rules_review(cluster):
    body = {"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectRulesReview",
            "spec": {"namespace": "default"}}
    code, review = cluster.json("viewer", "POST", "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews", body)
    assert code == 201 and review["status"]["incomplete"] is False
    assert {"verbs": ["get", "list", "watch"], "apiGroups": [""], "resources": ["namespaces"]} in \
        review["status"]["resourceRules"]
    # system:public-info-viewer, URLs in policy.go order
    assert {"verbs": ["get"], "nonResourceURLs": ["/livez", "/readyz", "/healthz", "/version", "/version/"]} \
        in review["status"]["nonResourceRules"]
    # the Node authorizer cannot list a node's rules
    code, review = cluster.json("node", "POST", "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews", body)
    assert review["status"]["incomplete"] is True
    assert review["status"]["evaluationError"] == "node authorizer does not support user rule resolution"
    code, status = cluster.json("viewer", "POST", "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews",
                                {**body, "spec": {}})
    assert (code, status["message"]) == (400, "no namespace on request")


def test_self_subject_review_and_token_review(cluster):
    code, review = cluster.json("alice", "POST", "/apis/authentication.k8s.io/v1/selfsubjectreviews",
                                {"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"})
    assert code == 201
    assert review["status"] == {"userInfo": {"username": "alice", "uid": "alice-uid",
                                             "groups": [AUTH, "devs"]}}
    assert review["metadata"]["creationTimestamp"]
    path = "/apis/authentication.k8s.io/v1/tokenreviews"
    body = {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview", "spec": {"token": "token-viewer"}}
    code, review = cluster.json("admin", "POST", path, body)
    assert review["status"] == {"authenticated": True, "user": {"username": "viewer", "groups": [AUTH]},
                                "audiences": ["https://kubernetes.default.svc.cluster.local"]}
    code, review = cluster.json("admin", "POST", path, {**body, "spec": {"token": "nope"}})
    assert review["status"] == {"user": {}}
    code, review = cluster.json("admin", "POST", path, {**body, "spec": {"token": "token-viewer",
                                                                         "audiences": ["elsewhere"]}})
    assert review["status"] == {"user": {}}
    code, status = cluster.json("admin", "POST", path, {**body, "spec": {}})
    assert (code, status["message"]) == (400, "token is required for TokenReview in authentication")


def test_reviews_are_only_created(cluster):
    code, status = cluster.json("admin", "GET", SSAR)
    assert (code, status["reason"]) == (405, "MethodNotAllowed")
    code, status = cluster.json("admin", "GET", SSAR + "/x")
    assert (code, status["reason"]) == (404, "NotFound")
    code, status = cluster.json("admin", "DELETE", SSAR)
    assert code == 405


# ---- escalation (pkg/registry/rbac/*/policybased) ---------------------------------------------

ROLES = "/apis/rbac.authorization.k8s.io/v1/namespaces/team/roles"
BINDINGS = "/apis/rbac.authorization.k8s.io/v1/namespaces/team/rolebindings"


def _role(name, *rules):
    return {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role", "metadata": {"name": name},
            "rules": list(rules)}


def test_a_role_may_grant_only_what_its_writer_holds(cluster):
    code, _ = cluster.json("teamadmin", "POST", ROLES, _role(
        "readers", {"verbs": ["get", "list"], "apiGroups": [""], "resources": ["pods"]}))
    assert code == 201
    code, status = cluster.json("teamadmin", "POST", ROLES, _role(
        "nodes", {"verbs": ["delete", "get"], "apiGroups": [""], "resources": ["nodes", "pods"]}))
    assert (code, status["reason"]) == (403, "Forbidden")
    assert status["message"] == (
        'roles.rbac.authorization.k8s.io "nodes" is forbidden: user "teamadmin" '
        '(groups=["system:authenticated"]) is attempting to grant RBAC permissions not currently held:\n'
        '{APIGroups:[""], Resources:["nodes"], Verbs:["delete" "get"]}')
    assert status["details"] == {"name": "nodes", "group": "rbac.authorization.k8s.io", "kind": "roles"}
    # ... also through a patch of an existing role
    code, status = cluster.json("teamadmin", "PATCH", ROLES + "/readers",
                                {"rules": [{"verbs": ["*"], "apiGroups": [""], "resources": ["secrets"]}]},
                                headers={"Content-Type": "application/merge-patch+json"})
    assert code == 403 and "is attempting to grant RBAC permissions not currently held" in status["message"]


def test_a_binding_may_grant_only_what_its_writer_holds(cluster):
    binding = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
               "metadata": {"name": "viewers"}, "roleRef": {"kind": "ClusterRole", "name": "view"},
               "subjects": [{"kind": "Group", "name": "devs"}]}
    assert cluster.json("teamadmin", "POST", BINDINGS, binding)[0] == 201
    code, status = cluster.json("teamadmin", "POST", BINDINGS, {
        **binding, "metadata": {"name": "root"}, "roleRef": {"kind": "ClusterRole", "name": "cluster-admin"}})
    assert code == 403 and status["message"].endswith(
        'not currently held:\n{APIGroups:["*"], Resources:["*"], Verbs:["*"]}\n'
        '{NonResourceURLs:["*"], Verbs:["*"]}')
    code, status = cluster.json("teamadmin", "POST", BINDINGS, {
        **binding, "metadata": {"name": "ghost"}, "roleRef": {"kind": "Role", "name": "missing"}})
    assert (code, status["message"]) == (403, 'rolebindings.rbac.authorization.k8s.io "ghost" is forbidden: '
                                               'role.rbac.authorization.k8s.io "missing" not found')
    # system:masters may grant anything
    assert cluster.json("admin", "POST", BINDINGS, {
        **binding, "metadata": {"name": "root"}, "roleRef": {"kind": "ClusterRole", "name": "cluster-admin"}}
    )[0] == 201


# ---- impersonation --------------------------------------------------------------------------

def test_impersonation_needs_the_impersonate_verb(cluster):
    code, status = cluster.json("alice", "GET", "/api/v1/namespaces/default/pods",
                                headers={"Impersonate-User": "viewer"})
    assert (code, status["message"]) == (403, 'users "viewer" is forbidden: User "alice" cannot impersonate '
                                              'resource "users" in API group "" at the cluster scope')
    code, review = cluster.json("admin", "POST", "/apis/authentication.k8s.io/v1/selfsubjectreviews",
                                {"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"},
                                headers={"Impersonate-User": "system:node:node-1",
                                         "Impersonate-Group": "system:nodes"})
    assert review["status"]["userInfo"] == {"username": "system:node:node-1",
                                            "groups": ["system:nodes", AUTH]}
    code, status = cluster.json("admin", "GET", "/api/v1/pods", headers={"Impersonate-Group": "x"})
    assert (code, status["message"]) == (400, "requested [Impersonate-Group=x] without impersonating a user")


# ---- real kubectl ---------------------------------------------------------------------------

KUBECTL = kubectl_path()
needs_kubectl = pytest.mark.skipif(KUBECTL is None, reason="kubectl not installed")


def kubectl(cluster, who: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([KUBECTL, "--kubeconfig", str(cluster.tmp / f"{who}.kubeconfig"), *args],
                          capture_output=True, text=True, timeout=60)


@needs_kubectl
def test_kubectl_auth_can_i(cluster):
    assert kubectl(cluster, "viewer", "auth", "can-i", "list", "pods").stdout.strip() == "yes"
    denied = kubectl(cluster, "viewer", "auth", "can-i", "create", "pods")
    assert (denied.returncode, denied.stdout.strip()) == (1, "no")
    assert kubectl(cluster, "admin", "auth", "can-i", "delete", "namespaces",
                   "--as=system:node:node-1", "--as-group=system:nodes").stdout.strip() == "no"
    assert kubectl(cluster, "admin", "auth", "can-i", "patch", "pods/resize",
                   "--as=system:vpa-updater").stdout.strip() == "yes"


@needs_kubectl
def test_kubectl_auth_can_i_list_shows_only_the_identitys_rules(cluster):
    out = kubectl(cluster, "updater", "auth", "can-i", "--list").stdout
    rows = {line.split()[0]: line.split()[-1] for line in out.splitlines()[1:] if not line.startswith(" ")}
    assert rows["pods/eviction"] == "[create]"
    assert rows["pods/resize"] == "[patch]"
    assert "deployments.apps" in rows and "nodes" in rows
    assert not any(r.startswith(("secrets", "namespaces", "clusterroles")) for r in rows)


@needs_kubectl
def test_kubectl_auth_whoami(cluster):
    out = kubectl(cluster, "alice", "auth", "whoami").stdout
    assert out.split("\n")[1].split() == ["Username", "alice"]
    assert "UID" in out and "alice-uid" in out


@needs_kubectl
def test_kubectl_sees_the_403(cluster):
    refused = kubectl(cluster, "node", "delete", "namespace", "default")
    assert refused.returncode == 1
    assert refused.stderr.strip() == (
        'Error from server (Forbidden): namespaces "default" is forbidden: User "system:node:node-1" cannot '
        'delete resource "namespaces" in API group "" at the cluster scope')
    assert kubectl(cluster, "viewer", "get", "pods").returncode == 0
    created = kubectl(cluster, "viewer", "run", "x", "--image=nginx")
    assert created.returncode == 1 and "cannot create resource \"pods\"" in created.stderr


@needs_kubectl
def test_kubectl_get_rbac_tables(cluster):
    out = kubectl(cluster, "admin", "get", "clusterroles").stdout.splitlines()
    assert out[0].split() == ["NAME", "CREATED", "AT"]
    out = kubectl(cluster, "admin", "get", "rolebindings", "-n", "default", "-o", "wide").stdout.splitlines()
    assert out[0].split() == ["NAME", "ROLE", "AGE", "USERS", "GROUPS", "SERVICEACCOUNTS"]
    assert out[1].split()[:2] == ["viewer", "ClusterRole/view"] and out[1].split()[-1] == "viewer"
