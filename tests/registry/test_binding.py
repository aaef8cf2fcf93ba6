"""pods/binding refusals, with upstream's texts (pkg/registry/core/pod/storage/storage.go,
BindingREST.setPodNodeAndMetadata)."""

import pytest

from kvert.api.errors import Conflict

from .conftest import pod


def test_a_pod_with_scheduling_gates_cannot_be_bound(env):
    """upstream: TestEtcdCreateWithSchedulingGates / 'pod with non-nil schedulingGates':
    ``Operation cannot be fulfilled on pods/binding "foo": pod foo has non-empty
    .spec.schedulingGates``."""
    env.run(env.client.create("pods", pod("foo", schedulingGates=[{"name": "foo"}, {"name": "bar"}]),
                              namespace="default"))
    with pytest.raises(Conflict) as info:
        env.run(env.client.bind("default", "foo", "node-1"))
    assert info.value.code == 409 and info.value.reason == "Conflict"
    assert info.value.message == ('Operation cannot be fulfilled on pods/binding "foo": '
                                  "pod foo has non-empty .spec.schedulingGates")
    assert info.value.details == {"name": "foo", "kind": "pods/binding"}
    assert not env.run(env.client.get("pods", "foo", "default"))["spec"].get("nodeName")


def test_without_scheduling_gates_the_pod_binds(env):
    """upstream: TestEtcdCreateWithSchedulingGates / 'pod with nil schedulingGates'."""
    env.run(env.client.create("pods", pod("foo"), namespace="default"))
    assert env.run(env.client.bind("default", "foo", "node-1"))["status"] == "Success"


def test_rebinding_names_the_binding_subresource(env):
    """upstream: BindingREST.assignPod wraps the error as
    ``errors.NewConflict(api.Resource("pods/binding"), podID, err)``, and setPodNodeAndMetadata's
    text is ``pod %v is already assigned to node %q``."""
    env.run(env.client.create("pods", pod("foo"), namespace="default"))
    env.run(env.client.bind("default", "foo", "node-1"))
    with pytest.raises(Conflict) as info:
        env.run(env.client.bind("default", "foo", "node-2"))
    assert info.value.message == ('Operation cannot be fulfilled on pods/binding "foo": '
                                  'pod foo is already assigned to node "node-1"')
