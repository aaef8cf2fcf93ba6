import pytest

from kvert.api.errors import Forbidden, NotFound

from .conftest import pod


def test_system_namespaces_exist_after_bootstrap(env):
    for name in ("default", "kube-system", "kube-public", "kube-node-lease"):
        assert env.get("namespaces", name)["status"]["phase"] == "Active"


def test_create_in_missing_namespace_is_404(env):
    with pytest.raises(NotFound) as e:
        env.create("pods", pod(namespace="ghost"))
    assert e.value.code == 404
    assert str(e.value) == 'namespaces "ghost" not found'
    assert env.store.list("pods").items == []


def test_create_in_existing_namespace_is_allowed(env):
    env.namespace("team-a")
    created = env.create("pods", pod(namespace="team-a"))
    assert created["metadata"]["namespace"] == "team-a"


def _terminate(env, name):
    ns = env.get("namespaces", name)
    ns["status"]["phase"] = "Terminating"
    env.store.update("namespaces", ns)


def test_create_in_terminating_namespace_is_forbidden(env):
    env.namespace("dying")
    env.create("pods", pod("before", namespace="dying"))
    _terminate(env, "dying")
    with pytest.raises(Forbidden) as e:
        env.create("pods", pod("after", namespace="dying"))
    err = e.value
    assert err.code == 403
    assert str(err) == ('pods "after" is forbidden: unable to create new content in namespace dying '
                        "because it is being terminated")
    status = err.to_status()
    assert status["details"]["causes"] == [{"reason": "NamespaceTerminating",
                                            "message": "namespace dying is being terminated",
                                            "field": "metadata.namespace"}]
    # updates and deletes of what is already there still work
    before = env.get("pods", "before", "dying")
    before["metadata"]["labels"]["extra"] = "yes"
    env.run(env.client.update("pods", before))
    env.run(env.client.delete("pods", "before", namespace="dying"))


def test_immortal_namespaces_cannot_be_deleted(env):
    for name in ("default", "kube-system", "kube-public"):
        with pytest.raises(Forbidden) as e:
            env.run(env.client.delete("namespaces", name))
        assert str(e.value) == f'namespaces "{name}" is forbidden: this namespace may not be deleted'
        assert env.get("namespaces", name)
    env.namespace("scratch")
    env.run(env.client.delete("namespaces", "scratch"))


def test_cluster_scoped_objects_are_not_checked(env):
    env.create("scheduling.k8s.io/priorityclasses",
               {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
                "metadata": {"name": "anything"}, "value": 5})
