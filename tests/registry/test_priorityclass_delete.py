"""The system PriorityClasses cannot be deleted.

upstream: pkg/registry/scheduling/priorityclass/storage/storage_test.go TestDeleteSystemPriorityClass
(an error for ``system-node-critical``); the text is storage.go's REST.Delete:
``apierrors.NewForbidden(scheduling.Resource("priorityclasses"), name, "this is a system
priority class and cannot be deleted")``, which a real kube-apiserver 1.36.2 answers with 403.
"""

import pytest

from kvert.api.errors import Forbidden, NotFound

PCS = "scheduling.k8s.io/priorityclasses"


def _pc(name, value):
    return {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
            "metadata": {"name": name}, "value": value}


@pytest.mark.parametrize("name,value", [("system-node-critical", 2_000_001_000),
                                        ("system-cluster-critical", 2_000_000_000)])
def test_a_system_priority_class_is_not_deleted(env, name, value):
    env.run(env.client.create(PCS, _pc(name, value)))
    with pytest.raises(Forbidden) as info:
        env.run(env.client.delete(PCS, name))
    assert info.value.code == 403 and info.value.reason == "Forbidden"
    assert info.value.message == (f'priorityclasses.scheduling.k8s.io "{name}" is forbidden: '
                                  "this is a system priority class and cannot be deleted")
    assert info.value.details == {"name": name, "group": "scheduling.k8s.io", "kind": "priorityclasses"}
    assert env.run(env.client.get(PCS, name))["value"] == value


def test_the_refusal_comes_before_the_class_is_read(env):
    """REST.Delete refuses by name before Store.Delete looks the object up."""
    with pytest.raises(Forbidden):
        env.run(env.client.delete(PCS, "system-node-critical"))


def test_another_class_is_deleted(env):
    """upstream: TestDelete (a valid class deletes)."""
    env.run(env.client.create(PCS, _pc("high", 1000)))
    env.run(env.client.delete(PCS, "high"))
    with pytest.raises(NotFound):
        env.run(env.client.get(PCS, "high"))
