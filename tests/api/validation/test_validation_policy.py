"""PodDisruptionBudget, PriorityClass, RuntimeClass and Node."""

import pytest

from kvert.api.validation import validate, validate_status_update, validate_update
from .validation_helpers import (DUPLICATE, FORBIDDEN, INVALID, NOT_SUPPORTED, REQUIRED, assert_cause,
                                assert_valid, edit)

ZK_PDB = {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
          "metadata": {"name": "zk-pdb", "namespace": "default"},
          "spec": {"minAvailable": 2, "selector": {"matchLabels": {"app": "zookeeper"}}}}

HIGH_PRIORITY = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
                 "metadata": {"name": "high-priority"}, "value": 1000000, "globalDefault": False,
                 "description": "This priority class should be used for XYZ service pods only."}

RUNTIME_CLASS = {"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass",
                 "metadata": {"name": "kata-fc"}, "handler": "kata-fc",
                 "overhead": {"podFixed": {"memory": "120Mi", "cpu": "250m"}},
                 "scheduling": {"nodeSelector": {"runtime": "kata"},
                                "tolerations": [{"key": "kata", "operator": "Exists",
                                                 "effect": "NoSchedule"}]}}

NODE = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "node-1",
                                                         "labels": {"kubernetes.io/hostname": "node-1"}},
        "spec": {"podCIDR": "10.244.1.0/24", "podCIDRs": ["10.244.1.0/24", "fd00:1::/64"],
                 "taints": [{"key": "dedicated", "value": "vpa", "effect": "NoSchedule"},
                            {"key": "dedicated", "value": "vpa", "effect": "NoExecute"}]},
        "status": {"capacity": {"cpu": "8", "memory": "32Gi", "pods": "110",
                                "example.com/gpu": "2"},
                   "allocatable": {"cpu": "7910m", "memory": "28.9Gi", "pods": "110"}}}

VALID = {
    "zk-pdb minAvailable": ZK_PDB,
    "pdb maxUnavailable percent": edit(ZK_PDB, lambda p: p.update(spec={
        "maxUnavailable": "50%", "selector": {"matchLabels": {"app": "zookeeper"}},
        "unhealthyPodEvictionPolicy": "AlwaysAllow"})),
    "pdb with neither (as Kubernetes)": edit(ZK_PDB, lambda p: p["spec"].pop("minAvailable")),
    "high-priority": HIGH_PRIORITY,
    "never preempt": edit(HIGH_PRIORITY, lambda p: p.update(preemptionPolicy="Never")),
    "system-node-critical": {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
                             "metadata": {"name": "system-node-critical"}, "value": 2000001000},
    "runtime class": RUNTIME_CLASS,
    "node (seed 004 allocatable)": NODE,
}


@pytest.mark.parametrize("obj", VALID.values(), ids=VALID.keys())
def test_valid(obj):
    assert_valid(validate(obj))


CASES = [
    (ZK_PDB, "pdb both set", lambda p: p["spec"].update(maxUnavailable=1), "spec", INVALID,
     "minAvailable and maxUnavailable cannot be both set"),
    (ZK_PDB, "pdb negative", lambda p: p["spec"].update(minAvailable=-1), "spec.minAvailable",
     INVALID, "must be greater than or equal to 0"),
    (ZK_PDB, "pdb bad percent", lambda p: p["spec"].update(minAvailable="half"),
     "spec.minAvailable", INVALID, "a valid percent string"),
    (ZK_PDB, "pdb over 100%", lambda p: p["spec"].update(minAvailable="101%"), "spec.minAvailable",
     INVALID, "must not be greater than 100%"),
    (ZK_PDB, "pdb bad selector", lambda p: p["spec"].update(selector={"matchLabels": {"a": "-"}}),
     "spec.selector.matchLabels", INVALID, None),
    (ZK_PDB, "pdb eviction policy", lambda p: p["spec"].update(unhealthyPodEvictionPolicy="Never"),
     "spec.unhealthyPodEvictionPolicy", NOT_SUPPORTED, '"AlwaysAllow", "IfHealthyBudget"'),
    (HIGH_PRIORITY, "priority too high", lambda p: p.update(value=1000000001), "value", FORBIDDEN,
     "maximum allowed value of a user defined priority is 1000000000"),
    (HIGH_PRIORITY, "system- prefix reserved", lambda p: p["metadata"].update(name="system-mine"),
     "metadata.name", FORBIDDEN, "system-mine is not a known system priority class"),
    (HIGH_PRIORITY, "preemptionPolicy", lambda p: p.update(preemptionPolicy="Always"),
     "preemptionPolicy", NOT_SUPPORTED, None),
    (HIGH_PRIORITY, "globalDefault type", lambda p: p.update(globalDefault="yes"), "globalDefault",
     "FieldValueTypeInvalid", None),
    (HIGH_PRIORITY, "namespaced priority class", lambda p: p["metadata"].update(namespace="x"),
     "metadata.namespace", FORBIDDEN, None),
    (RUNTIME_CLASS, "handler missing", lambda r: r.pop("handler"), "handler", REQUIRED, None),
    (RUNTIME_CLASS, "handler not a label", lambda r: r.update(handler="kata.fc"), "handler",
     INVALID, "must not contain dots"),
    (RUNTIME_CLASS, "negative overhead", lambda r: r["overhead"]["podFixed"].update(cpu="-1"),
     "overhead.podFixed[cpu]", INVALID, "must be greater than or equal to 0"),
    (RUNTIME_CLASS, "bad scheduling toleration", lambda r: r["scheduling"]["tolerations"][0].update(
        effect="Sometimes"), "scheduling.tolerations[0].effect", NOT_SUPPORTED, None),
    (NODE, "bad capacity", lambda n: n["status"]["capacity"].update(memory="lots"),
     "status.capacity.memory", INVALID, "quantities must match"),
    (NODE, "fractional extended capacity", lambda n: n["status"]["capacity"].update(
        {"example.com/gpu": "1.5"}), "status.capacity.example.com/gpu", INVALID, "must be an integer"),
    (NODE, "negative allocatable", lambda n: n["status"]["allocatable"].update(cpu="-1"),
     "status.allocatable.cpu", INVALID, "must be greater than or equal to 0"),
    # Taint paths under metadata: upstream ValidateNode/ValidateNodeUpdate (validation.go) root
    # validateNodeTaints at field.NewPath("metadata"); a real apiserver answers e.g.
    # 'metadata.taints[1]: Duplicate value: ...: taints must be unique by key and effect pair'.
    (NODE, "taint without effect", lambda n: n["spec"]["taints"][0].pop("effect"),
     "metadata.taints[0].effect", REQUIRED, None),
    (NODE, "taint effect unknown", lambda n: n["spec"]["taints"][0].update(effect="NoRun"),
     "metadata.taints[0].effect", NOT_SUPPORTED, None),
    (NODE, "taint key invalid", lambda n: n["spec"]["taints"][0].update(key="a b"),
     "metadata.taints[0].key", INVALID, None),
    (NODE, "duplicate taint", lambda n: n["spec"]["taints"].append(
        {"key": "dedicated", "value": "other", "effect": "NoSchedule"}), "metadata.taints[2]", DUPLICATE,
     "taints must be unique by key and effect pair"),
    (NODE, "bad pod CIDR", lambda n: n["spec"].update(podCIDR="10.0.0.0", podCIDRs=["10.0.0.0"]),
     "spec.podCIDRs[0]", INVALID, "must be a valid CIDR value"),
    (NODE, "two IPv4 CIDRs", lambda n: n["spec"].update(podCIDR="10.0.0.0/24",
                                                        podCIDRs=["10.0.0.0/24", "10.1.0.0/24"]),
     "spec.podCIDRs", INVALID, "may specify no more than one CIDR for each IP family"),
]


@pytest.mark.parametrize("base, name, change, field, reason, contains", CASES,
                         ids=[c[1] for c in CASES])
def test_invalid(base, name, change, field, reason, contains):
    assert_cause(validate(edit(base, change)), field, reason, contains)


def test_priority_class_value_and_policy_are_immutable():
    new = edit(HIGH_PRIORITY, lambda p: p.update(value=5, preemptionPolicy="Never"))
    causes = validate_update(new, HIGH_PRIORITY)
    assert_cause(causes, "value", FORBIDDEN, "may not be changed in an update.")
    assert_cause(causes, "preemptionPolicy", INVALID, "field is immutable")
    assert_valid(validate_update(edit(HIGH_PRIORITY, lambda p: p.update(description="x")),
                                 HIGH_PRIORITY))


def test_runtime_class_handler_is_immutable():
    new = edit(RUNTIME_CLASS, lambda r: r.update(handler="runc"))
    assert_cause(validate_update(new, RUNTIME_CLASS), "handler", INVALID, "field is immutable")


def test_node_pod_cidr_and_provider_id_are_set_once():
    old = edit(NODE, lambda n: n["spec"].update(providerID="sim://node-1"))
    new = edit(old, lambda n: n["spec"].update(podCIDR="10.244.2.0/24",
                                                podCIDRs=["10.244.2.0/24", "fd00:1::/64"],
                                                providerID="sim://other"))
    causes = validate_update(new, old)
    assert_cause(causes, "spec.podCIDRs", FORBIDDEN, 'may not change podCIDR except from "" to valid')
    assert_cause(causes, "spec.providerID", FORBIDDEN)
    unset = edit(NODE, lambda n: (n["spec"].pop("podCIDR"), n["spec"].pop("podCIDRs")))
    assert_valid(validate_update(NODE, unset))
    taint = edit(NODE, lambda n: n["spec"]["taints"].append(
        {"key": "node.kubernetes.io/unreachable", "effect": "NoExecute",
         "timeAdded": "2024-05-01T10:00:00Z"}))
    assert_valid(validate_update(taint, NODE))


def test_pdb_status():
    status = {"disruptionsAllowed": -1, "currentHealthy": 2, "desiredHealthy": 2, "expectedPods": 3,
              "conditions": [{"type": "DisruptionAllowed", "status": "Maybe", "reason": "Sufficient",
                              "lastTransitionTime": "2024-01-01T00:00:00Z"}]}
    causes = validate_status_update(edit(ZK_PDB, lambda p: p.update(status=status)), ZK_PDB)
    assert_cause(causes, "status.disruptionsAllowed", INVALID)
    assert_cause(causes, "status.conditions[0].status", NOT_SUPPORTED)


def test_node_status_quantities():
    new = edit(NODE, lambda n: n["status"]["allocatable"].update(cpu="x"))
    assert_cause(validate_status_update(new, NODE), "status.allocatable.cpu", INVALID)
