"""What each component identity of `kvert up` may do, asked the way a user asks: kubectl with
the identity's kubeconfig (DATA_DIR/kubeconfigs/) and `auth can-i`, `auth can-i --list`,
`auth whoami`, and real requests that must get upstream's 403.

Expected rights come from upstream's bootstrap policy (plugin/pkg/auth/authorizer/rbac/
bootstrappolicy/policy.go: system:kube-scheduler, the system:controller:* roles; the Node
authorizer's NodeRules) and the autoscaler's deploy/vpa-rbac.yaml (the updater: vpa-actor,
evictioner, vpa-target-reader, vpa-status-reader; in-place updates patch pods/resize).
"""

from __future__ import annotations

import json

import pytest

from .conftest import Kubectl


@pytest.fixture(scope="module")
def as_identity(cluster, kubectl_binary, tmp_path_factory):
    def make(user: str) -> Kubectl:
        path = cluster.data_dir / "kubeconfigs" / f"{user.replace(':', '-')}.kubeconfig"
        assert path.is_file(), f"kvert up wrote no kubeconfig for {user}"
        return Kubectl(kubectl_binary, path, tmp_path_factory.mktemp("home"))
    return make


def _can(k: Kubectl, *args: str) -> bool:
    result = k("auth", "can-i", *args, check=False)
    answer = result.stdout.strip().split(" ", 1)[0]      # "no - <the authorizer's reason>"
    assert answer in ("yes", "no"), result.stdout + result.stderr
    return answer == "yes"


def _list(k: Kubectl, namespace: str = "default") -> dict[str, set[str]]:
    """`auth can-i --list` as resource -> verbs (resource names folded in)."""
    out = k("auth", "can-i", "--list", "-n", namespace).stdout.splitlines()
    rows: dict[str, set[str]] = {}
    for line in out[1:]:
        if not line.startswith(" ") and "[" in line:
            resource = line.split()[0]
            verbs = line[line.rindex("[") + 1:line.rindex("]")].split()
            rows.setdefault(resource, set()).update(verbs)
    return rows


def test_whoami_names_each_identity(as_identity):
    for user, groups in (("system:kube-scheduler", []), ("system:vpa-updater", []),
                         ("system:node:node-1", ["system:nodes"])):
        out = as_identity(user)("auth", "whoami", "-o", "json").stdout
        info = json.loads(out)["status"]["userInfo"]
        assert info["username"] == user
        assert set(groups + ["system:authenticated"]) <= set(info["groups"])


def test_the_vpa_updater_resizes_and_evicts_but_cannot_delete_pods(as_identity):
    k = as_identity("system:vpa-updater")
    assert _can(k, "patch", "pods", "--subresource=resize")
    assert _can(k, "create", "pods", "--subresource=eviction")
    assert not _can(k, "delete", "pods")
    assert not _can(k, "create", "pods")
    assert not _can(k, "delete", "namespaces")
    rows = _list(k)
    assert rows["pods/resize"] == {"patch"} and rows["pods/eviction"] == {"create"}
    assert "delete" not in rows.get("pods", set()) and "*" not in rows
    assert rows["verticalpodautoscalers.autoscaling.k8s.io"] == {"get", "list", "watch"}


def test_the_scheduler_binds_and_the_controller_manager_cannot_create_deployments(as_identity):
    scheduler = as_identity("system:kube-scheduler")
    assert _can(scheduler, "create", "pods", "--subresource=binding")
    assert not _can(scheduler, "create", "pods")
    assert "bindings" in _list(scheduler) or "pods/binding" in _list(scheduler)
    manager = as_identity("system:kube-controller-manager")
    assert _can(manager, "create", "pods")                 # the ReplicaSet controller
    assert _can(manager, "delete", "pods")
    assert not _can(manager, "create", "deployments.apps")    # no controller makes them
    assert not _can(manager, "create", "clusterrolebindings")


def test_a_node_touches_only_its_own_node_and_cannot_delete_namespaces(as_identity, kubectl, tmp_path):
    node = as_identity("system:node:node-1")
    assert _can(node, "get", "nodes/node-1")
    assert _can(node, "patch", "nodes/node-1", "--subresource=status")
    # as upstream, the Node authorizer allows it (node_authorizer.go authorizeNode) and
    # NodeRestriction refuses the write itself
    assert _can(node, "patch", "nodes/node-2", "--subresource=status")
    other = tmp_path / "node-3.json"
    other.write_text(json.dumps({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "node-3"}}))
    refused = node("create", "-f", str(other), check=False)
    assert refused.returncode != 0
    assert 'nodes "node-3" is forbidden: node "node-1" is not allowed to modify node "node-3"' in refused.stderr
    kubectl("create", "namespace", "keep-me")
    refused = node("delete", "namespace", "keep-me", check=False)
    assert refused.returncode != 0
    # responsewriters.Forbidden's message, at the cluster scope
    assert ('namespaces "keep-me" is forbidden: User "system:node:node-1" cannot delete resource '
            '"namespaces" in API group "" at the cluster scope') in refused.stderr
    assert kubectl.json("get", "namespace", "keep-me")["status"]["phase"] == "Active"
    listing = node("auth", "can-i", "--list", check=False)
    assert "node authorizer does not support user rule resolution" in listing.stderr


def test_a_service_account_bound_to_view_lists_pods_and_cannot_create_them(kubectl, cluster, kubectl_binary,
                                                                           tmp_path):
    kubectl("create", "serviceaccount", "viewer")
    kubectl("create", "rolebinding", "viewer", "--clusterrole=view", "--serviceaccount=default:viewer")
    token = kubectl("create", "token", "viewer").stdout.strip()
    # the token alone: with the admin kubeconfig, kubectl --token would still present the
    # admin's client certificate, which authenticates first
    import yaml
    config = yaml.safe_load(cluster.kubeconfig.read_text())
    config["users"][0]["user"] = {"token": token}
    (tmp_path / "viewer.kubeconfig").write_text(yaml.safe_dump(config))
    viewer = Kubectl(kubectl_binary, tmp_path / "viewer.kubeconfig", tmp_path)
    assert viewer("get", "pods").returncode == 0
    created = viewer("run", "nope", "--image=nginx", check=False)
    assert created.returncode != 0
    assert ('pods is forbidden: User "system:serviceaccount:default:viewer" cannot create resource '
            '"pods" in API group "" in the namespace "default"') in created.stderr
    assert kubectl("get", "pod", "nope", check=False).returncode != 0
    assert kubectl("auth", "can-i", "list", "pods", "--as=system:serviceaccount:default:viewer").stdout.strip() == "yes"


def test_the_data_directory_and_its_secrets_are_private(cluster):
    """Only the owner may read what authenticates to the cluster (the issue found 0755 and a
    world-readable store)."""
    import stat
    mode = lambda p: stat.S_IMODE(p.stat().st_mode)  # noqa: E731
    assert mode(cluster.data_dir) == 0o700
    for name in ("tokens.csv", "kubeconfig", "kvert.db", "pki/sa.key"):
        assert mode(cluster.data_dir / name) == 0o600, name
    for path in (cluster.data_dir / "kubeconfigs").iterdir():
        assert mode(path) == 0o600, path


def test_the_admin_kubeconfig_authenticates_by_certificate_as_kubeadm_admin(cluster, kubectl_binary,
                                                                             tmp_path):
    # kubeadm's admin.conf: a client certificate with CommonName kubernetes-admin in the
    # organization system:masters; kube-apiserver's x509 authenticator makes that the user.
    import yaml
    config = yaml.safe_load(cluster.kubeconfig.read_text())
    del config["users"][0]["user"]["token"]
    path = tmp_path / "certificate-only.kubeconfig"
    path.write_text(yaml.safe_dump(config))
    who = Kubectl(kubectl_binary, path, tmp_path)("auth", "whoami", "-o", "json")
    info = json.loads(who.stdout)["status"]["userInfo"]
    assert info["username"] == "kubernetes-admin"
    assert info["groups"] == ["system:masters", "system:authenticated"]
