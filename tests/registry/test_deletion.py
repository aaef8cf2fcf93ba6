"""DeleteOptions on the write path: propagation policies and their finalizers, grace periods,
namespaces (kube-apiserver's generic store and namespace storage)."""

import pytest

from kvert.api.errors import Forbidden, Invalid, NotFound
from kvert.apiserver.admission import bootstrap, default_chain
from kvert.registry import Registry
from kvert.registry.deletion import gc_finalizers

from .conftest import pod


def _cm(name, finalizers=None):
    meta = {"name": name, "namespace": "default"}
    if finalizers:
        meta["finalizers"] = list(finalizers)
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta}


def _finalizers(obj):
    return obj["metadata"].get("finalizers")


# TestStoreDeletionPropagation (apiserver generic registry store_test.go), the default
# strategy's column (no DefaultGarbageCollectionPolicy: background): existing finalizers,
# policy -> the finalizers the object is kept with, or None when it is deleted at once.
@pytest.mark.parametrize("existing, policy, expected", [
    ([], "Foreground", ["foregroundDeletion"]),
    ([], "Background", None),
    ([], "Orphan", ["orphan"]),
    ([], None, None),
    (["orphan"], "Foreground", ["foregroundDeletion"]),
    (["orphan"], "Background", None),
    (["orphan"], "Orphan", ["orphan"]),
    (["orphan"], None, ["orphan"]),
    (["foregroundDeletion"], "Foreground", ["foregroundDeletion"]),
    (["foregroundDeletion"], "Background", None),
    (["foregroundDeletion"], "Orphan", ["orphan"]),
    (["foregroundDeletion"], None, ["foregroundDeletion"]),
])
def test_store_deletion_propagation(env, existing, policy, expected):
    env.run(env.client.create("configmaps", _cm("c", existing)))
    env.run(env.client.delete("configmaps", "c", namespace="default", propagation_policy=policy))
    if expected is None:
        with pytest.raises(NotFound):
            env.run(env.client.get("configmaps", "c", "default"))
        return
    kept = env.run(env.client.get("configmaps", "c", "default"))
    assert _finalizers(kept) == expected
    assert kept["metadata"]["deletionTimestamp"] and kept["metadata"]["deletionGracePeriodSeconds"] == 0
    assert kept["metadata"]["generation"] == 2


# TestStoreDeleteWithOrphanDependents: the set of finalizers keeps its order when it does
# not change; orphan is appended when it is new.
@pytest.mark.parametrize("existing, orphan, expected", [
    (["foo.com/x", "orphan", "bar.com/y"], True, None),
    (["foo.com/x", "bar.com/y"], True, ["foo.com/x", "bar.com/y", "orphan"]),
    ([], True, ["orphan"]),
    (["orphan"], True, None),
    (["foo.com/x", "orphan", "bar.com/y"], False, ["foo.com/x", "bar.com/y"]),
    (["orphan"], False, []),
    (["foo.com/x", "orphan", "bar.com/y"], None, None),
])
def test_store_delete_with_orphan_dependents(existing, orphan, expected):
    assert gc_finalizers(_cm("c", existing), None, orphan) == expected


def test_foreground_and_orphan_keep_the_object_marked_with_their_finalizer(env):
    for name, policy, finalizer in (("f", "Foreground", "foregroundDeletion"), ("o", "Orphan", "orphan")):
        env.run(env.client.create("configmaps", _cm(name)))
        deleted = env.run(env.client.delete("configmaps", name, namespace="default",
                                            propagation_policy=policy))
        assert _finalizers(deleted) == [finalizer]
        assert deleted["metadata"]["deletionTimestamp"]
        assert deleted["metadata"]["deletionGracePeriodSeconds"] == 0
        stored = env.run(env.client.get("configmaps", name, "default"))
        assert _finalizers(stored) == [finalizer]


def test_background_deletes_at_once(env):
    env.run(env.client.create("configmaps", _cm("b")))
    env.run(env.client.delete("configmaps", "b", namespace="default", propagation_policy="Background"))
    with pytest.raises(NotFound):
        env.run(env.client.get("configmaps", "b", "default"))


def test_removing_the_last_finalizer_removes_the_object(env):
    env.run(env.client.create("configmaps", _cm("f")))
    env.run(env.client.delete("configmaps", "f", namespace="default", propagation_policy="Foreground"))
    obj = env.run(env.client.get("configmaps", "f", "default"))
    obj["metadata"]["finalizers"] = []
    env.run(env.client.update("configmaps", obj))
    with pytest.raises(NotFound):
        env.run(env.client.get("configmaps", "f", "default"))


def test_a_second_delete_may_change_the_collectors_finalizers_of_a_non_graceful_object(env):
    env.run(env.client.create("configmaps", _cm("f", ["example.com/keep"])))
    first = env.run(env.client.delete("configmaps", "f", namespace="default", propagation_policy="Orphan"))
    assert _finalizers(first) == ["example.com/keep", "orphan"]
    second = env.run(env.client.delete("configmaps", "f", namespace="default", propagation_policy="Foreground"))
    assert _finalizers(second) == ["example.com/keep", "foregroundDeletion"]
    assert second["metadata"]["deletionTimestamp"] == first["metadata"]["deletionTimestamp"]
    env.run(env.client.delete("configmaps", "f", namespace="default", propagation_policy="Background"))
    assert _finalizers(env.run(env.client.get("configmaps", "f", "default"))) == ["example.com/keep"]


def test_a_pending_graceful_deletion_keeps_its_finalizers(env):
    body = pod("p", nodeName="node-1")
    body["metadata"]["finalizers"] = ["example.com/keep"]
    env.run(env.client.create("pods", body, namespace="default"))
    first = env.run(env.client.delete("pods", "p", namespace="default", propagation_policy="Orphan"))
    assert _finalizers(first) == ["example.com/keep", "orphan"]
    assert first["metadata"]["deletionGracePeriodSeconds"] == 30
    second = env.run(env.client.delete("pods", "p", namespace="default", propagation_policy="Foreground"))
    assert second == first


@pytest.mark.parametrize("policy, orphan, message", [
    ("Bogus", None, 'propagationPolicy: Unsupported value: "Bogus": supported values: "Foreground", '
                    '"Background", "Orphan", "nil"'),
    ("Orphan", True, 'propagationPolicy: Invalid value: "Orphan": orphanDependents and '
                     'deletionPropagation cannot be both set'),
])
def test_bad_delete_options_are_refused_and_change_nothing(env, policy, orphan, message):
    env.run(env.client.create("configmaps", _cm("c")))
    before = env.store.current_revision()
    with pytest.raises(Invalid) as info:
        env.run(env.registry.delete("configmaps", "c", namespace="default", propagation_policy=policy,
                                    orphan_dependents=orphan))
    assert info.value.code == 422
    assert str(info.value) == f'DeleteOptions.meta.k8s.io "" is invalid: {message}'
    assert env.store.current_revision() == before


def test_only_pods_are_deleted_gracefully(env):
    env.run(env.client.create("configmaps", _cm("c")))
    env.run(env.client.delete("configmaps", "c", namespace="default", grace_period_seconds=30))
    with pytest.raises(NotFound):
        env.run(env.client.get("configmaps", "c", "default"))
    env.run(env.client.create("pods", pod("p", nodeName="node-1"), namespace="default"))
    deleted = env.run(env.client.delete("pods", "p", namespace="default", grace_period_seconds=30))
    assert deleted["metadata"]["deletionGracePeriodSeconds"] == 30


@pytest.fixture
def cluster(env):
    env.registry = Registry(env.store, env.clock, default_chain(env.store, env.clock), seed=7)
    env.client.registry = env.registry
    env.run(bootstrap(env.registry))
    return env


def test_a_deleted_namespace_terminates_until_it_is_finalized(cluster):
    env = cluster
    ns = env.run(env.client.create("namespaces", {"apiVersion": "v1", "kind": "Namespace",
                                                  "metadata": {"name": "x"}}))
    assert ns["spec"]["finalizers"] == ["kubernetes"] and ns["status"]["phase"] == "Active"
    marked = env.run(env.client.delete("namespaces", "x"))
    assert marked["status"]["phase"] == "Terminating" and marked["metadata"]["deletionTimestamp"]
    with pytest.raises(Forbidden, match="because it is being terminated"):
        env.run(env.client.create("configmaps", {**_cm("c"), "metadata": {"name": "c", "namespace": "x"}}))
    # an ordinary update neither changes spec.finalizers nor removes the namespace
    ns = env.run(env.client.get("namespaces", "x"))
    ns["spec"]["finalizers"] = []
    ns["metadata"]["labels"] = {"a": "b"}
    updated = env.run(env.client.update("namespaces", ns))
    assert updated["spec"]["finalizers"] == ["kubernetes"]
    # a second delete keeps it while the finalizer is there
    env.run(env.client.delete("namespaces", "x"))
    assert env.run(env.client.get("namespaces", "x"))["status"]["phase"] == "Terminating"
    ns = env.run(env.client.get("namespaces", "x"))
    ns["spec"]["finalizers"] = []
    env.run(env.client.update("namespaces", ns, subresource="finalize"))
    with pytest.raises(NotFound):
        env.run(env.client.get("namespaces", "x"))


def test_a_namespace_without_finalizers_goes_at_once(cluster):
    env = cluster
    env.run(env.client.create("namespaces", {"apiVersion": "v1", "kind": "Namespace",
                                             "metadata": {"name": "y"}, "spec": {"finalizers": []}}))
    env.run(env.client.delete("namespaces", "y"))
    with pytest.raises(NotFound):
        env.run(env.client.get("namespaces", "y"))


def _rc(name):
    return {"apiVersion": "v1", "kind": "ReplicationController", "metadata": {"name": name, "namespace": "default"},
            "spec": {"replicas": 0, "template": {"metadata": {"labels": {"app": name}},
                                                 "spec": {"containers": [{"name": "c", "image": "i"}]}}}}


def test_a_replication_controller_orphans_its_pods_unless_told_otherwise(env):
    # rcStrategy.DefaultGarbageCollectionPolicy: OrphanDependents for core/v1 (backward
    # compatibility); an explicit policy or orphanDependents wins (TestStoreDeletionPropagation)
    env.run(env.client.create("replicationcontrollers", _rc("keep")))
    deleted = env.run(env.client.delete("replicationcontrollers", "keep", namespace="default"))
    assert _finalizers(deleted) == ["orphan"]
    env.run(env.client.create("replicationcontrollers", _rc("cascade")))
    env.run(env.client.delete("replicationcontrollers", "cascade", namespace="default",
                              propagation_policy="Background"))
    with pytest.raises(NotFound):
        env.run(env.client.get("replicationcontrollers", "cascade", "default"))
    env.run(env.client.create("configmaps", _cm("plain")))
    env.run(env.client.delete("configmaps", "plain", namespace="default"))
    with pytest.raises(NotFound):
        env.run(env.client.get("configmaps", "plain", "default"))
