import pytest

from kvert.api.errors import Forbidden, Invalid

from .conftest import pod

PCS = "scheduling.k8s.io/priorityclasses"


def priority_class(name, value, *, global_default=False, policy=None, description=""):
    pc = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": name},
          "value": value, "globalDefault": global_default}
    if policy:
        pc["preemptionPolicy"] = policy
    if description:
        pc["description"] = description
    return pc


def test_builtin_priority_classes_exist(env):
    assert env.get(PCS, "system-cluster-critical")["value"] == 2000000000
    assert env.get(PCS, "system-node-critical")["value"] == 2000001000


def test_pod_gets_priority_from_its_class(env):
    # "Pod Priority and Preemption": the high-priority example class
    env.create(PCS, priority_class("high-priority", 1000000, description=(
        "This priority class should be used for XYZ service pods only.")))
    created = env.create("pods", pod("nginx", priorityClassName="high-priority"))
    assert created["spec"]["priority"] == 1000000
    assert created["spec"]["preemptionPolicy"] == "PreemptLowerPriority"


def test_non_preempting_class(env):
    env.create(PCS, priority_class("high-priority-nonpreempting", 1000000, policy="Never"))
    created = env.create("pods", pod(priorityClassName="high-priority-nonpreempting"))
    assert (created["spec"]["priority"], created["spec"]["preemptionPolicy"]) == (1000000, "Never")


def test_system_class(env):
    created = env.create("pods", pod(priorityClassName="system-node-critical"))
    assert created["spec"]["priority"] == 2000001000


def test_unknown_class_is_forbidden(env):
    with pytest.raises(Forbidden) as e:
        env.create("pods", pod("nginx", priorityClassName="nope"))
    assert str(e.value) == 'pods "nginx" is forbidden: no PriorityClass with name nope was found'
    assert env.store.list("pods").items == []


def test_pod_may_not_set_a_different_priority(env):
    env.create(PCS, priority_class("high-priority", 1000000))
    with pytest.raises(Forbidden) as e:
        env.create("pods", pod("nginx", priorityClassName="high-priority", priority=5))
    assert str(e.value) == (
        'pods "nginx" is forbidden: the integer value of priority (5) must not be provided in pod '
        "spec; priority admission controller computed 1000000 from the given PriorityClass name")
    # the same value is accepted
    env.create("pods", pod("same", priorityClassName="high-priority", priority=1000000))
    with pytest.raises(Forbidden, match="the string value of PreemptionPolicy"):
        env.create("pods", pod("p", priorityClassName="high-priority", preemptionPolicy="Never"))


def test_no_class_means_zero_or_the_global_default(env):
    created = env.create("pods", pod("a"))
    assert created["spec"]["priority"] == 0
    assert "priorityClassName" not in created["spec"]
    env.create(PCS, priority_class("everyday", 1000, global_default=True, policy="Never"))
    created = env.create("pods", pod("b"))
    assert created["spec"]["priorityClassName"] == "everyday"
    assert created["spec"]["priority"] == 1000
    assert created["spec"]["preemptionPolicy"] == "Never"


def test_only_one_global_default(env):
    env.create(PCS, priority_class("first", 10, global_default=True))
    with pytest.raises(Forbidden) as e:
        env.create(PCS, priority_class("second", 20, global_default=True))
    assert str(e.value) == ('priorityclasses.scheduling.k8s.io "second" is forbidden: PriorityClass '
                            "first is already marked as default. Only one default can exist")
    # updating the default itself is fine, marking another one is not
    first = env.get(PCS, "first")
    first["description"] = "still the default"
    env.run(env.client.update(PCS, first))
    env.create(PCS, priority_class("third", 30))
    third = env.get(PCS, "third")
    third["globalDefault"] = True
    with pytest.raises(Forbidden, match="PriorityClass first is already marked as default"):
        env.run(env.client.update(PCS, third))


def test_reserved_names_are_validation_errors(env):
    with pytest.raises(Invalid):
        env.create(PCS, priority_class("system-mine", 5))


def test_update_restores_dropped_priority(env):
    env.create(PCS, priority_class("high-priority", 1000000))
    created = env.create("pods", pod(priorityClassName="high-priority"))
    del created["spec"]["priority"]
    del created["spec"]["preemptionPolicy"]
    created["metadata"]["labels"]["v"] = "2"
    updated = env.run(env.client.update("pods", created))
    assert updated["spec"]["priority"] == 1000000
    assert updated["spec"]["preemptionPolicy"] == "PreemptLowerPriority"
