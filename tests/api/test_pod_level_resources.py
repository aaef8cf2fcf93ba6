"""Pod-level ``spec.resources`` (KEP-2837, PodLevelResources on in 1.36): defaulting and validation.

Expected values: pkg/apis/core/v1/defaults.go (defaultHugePagePodLimits, defaultPodRequests and
their doc comments), TestPodLevelResourcesDefaults (pkg/api/testing, defaulting then
ValidatePodSpec: expectErr per case), and the messages of validatePodResources /
validatePodResourceConsistency as a real API server answers them (e.g. ``spec.resources.requests[cpu]:
Invalid value: "1": must be greater than or equal to aggregate container requests of 1500m``).
"""

import pytest

from kvert.api.defaults import defaulted
from kvert.api.validation import validate


def _pod(pod_resources=None, *containers, init=()):
    spec = {"containers": [{"name": f"container-{i}", "image": "img", "imagePullPolicy": "Never",
                            "terminationMessagePolicy": "File", "resources": r}
                           for i, r in enumerate(containers)]}
    if init:
        spec["initContainers"] = [{"name": f"init-{i}", "image": "img", "resources": r, **extra}
                                  for i, (r, extra) in enumerate(init)]
    if pod_resources is not None:
        spec["resources"] = pod_resources
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "test-pod", "namespace": "test-ns"},
            "spec": spec}


CPU_MEM = {"cpu": "1", "memory": "100Mi"}

# TestPodLevelResourcesDefaults: (name, pod-level resources, container resources, expectErr)
DEFAULTS_CASES = [
    ("no pod-level resources, container hugepages-2Mi:R", None,
     {"limits": CPU_MEM, "requests": {**CPU_MEM, "hugepages-2Mi": "2Mi"}}, True),
    ("no pod-level resources, container hugepages-2Mi:L", None,
     {"limits": {**CPU_MEM, "hugepages-2Mi": "2Mi"}, "requests": CPU_MEM}, False),
    ("no pod-level resources, container hugepages-2Mi:R/L", None,
     {"limits": {**CPU_MEM, "hugepages-2Mi": "2Mi"}, "requests": {**CPU_MEM, "hugepages-2Mi": "2Mi"}}, False),
    ("pod-level resources hugepages-2Mi:R, container hugepages-2Mi:none",
     {"limits": CPU_MEM, "requests": {**CPU_MEM, "hugepages-2Mi": "10Mi"}},
     {"limits": CPU_MEM, "requests": CPU_MEM}, True),
    ("pod-level resources hugepages-2Mi:L, container hugepages-2Mi:L",
     {"limits": {**CPU_MEM, "hugepages-2Mi": "10Mi"}, "requests": CPU_MEM},
     {"limits": {**CPU_MEM, "hugepages-2Mi": "2Mi"}, "requests": CPU_MEM}, False),
    ("pod-level resources hugepages-2Mi:R/L, container hugepages-2Mi:R/L",
     {"limits": {**CPU_MEM, "hugepages-2Mi": "10Mi"}, "requests": {**CPU_MEM, "hugepages-2Mi": "10Mi"}},
     {"limits": {**CPU_MEM, "hugepages-2Mi": "2Mi"}, "requests": {**CPU_MEM, "hugepages-2Mi": "2Mi"}}, False),
    ("pod-level resources hugepages-2Mi:R, container hugepages-2Mi:L",
     {"limits": CPU_MEM, "requests": {**CPU_MEM, "hugepages-2Mi": "10Mi"}},
     {"limits": {**CPU_MEM, "hugepages-2Mi": "2Mi"}, "requests": CPU_MEM}, True),
]


@pytest.mark.parametrize("name, pod_resources, container, expect_err", DEFAULTS_CASES,
                         ids=[c[0] for c in DEFAULTS_CASES])
def test_pod_level_resources_defaults(name, pod_resources, container, expect_err):
    assert bool(validate(defaulted(_pod(pod_resources, container)))) == expect_err


def test_requests_default_to_the_containers_aggregate_else_to_the_pod_limits():
    """defaultPodRequests, scenarios 1 and 2: cpu is requested by a container, memory is not."""
    pod = defaulted(_pod({"limits": {"cpu": "2", "memory": "1Gi"}},
                         {"requests": {"cpu": "500m"}}, {"requests": {"cpu": "1"}}))
    assert pod["spec"]["resources"]["requests"] == {"cpu": "1500m", "memory": "1Gi"}


def test_without_pod_level_limits_nothing_is_defaulted():
    pod = defaulted(_pod({"requests": {"cpu": "1"}}, {"limits": {"cpu": "500m"}}))
    assert pod["spec"]["resources"] == {"requests": {"cpu": "1"}}


def test_hugepages_limit_defaults_to_the_containers_aggregate():
    """defaultHugePagePodLimits: containers limit hugepages, the pod level sets cpu/memory only."""
    pod = defaulted(_pod({"limits": CPU_MEM},
                         {"limits": {**CPU_MEM, "hugepages-2Mi": "2Mi"}},
                         {"limits": {"hugepages-2Mi": "4Mi"}}))
    assert pod["spec"]["resources"]["limits"]["hugepages-2Mi"] == "6Mi"
    assert pod["spec"]["resources"]["requests"]["hugepages-2Mi"] == "6Mi"


def _causes(pod):
    return [(c.field, c.message) for c in validate(defaulted(pod))]


def test_pod_requests_below_the_containers_aggregate():
    pod = _pod({"requests": {"cpu": "1", "memory": "576Mi"}},
               {"requests": {"cpu": "1", "memory": "2Gi"}}, {"requests": {"cpu": "500m", "memory": "4Gi"}})
    assert _causes(pod) == [
        ("spec.resources.requests[cpu]",
         'Invalid value: "1": must be greater than or equal to aggregate container requests of 1500m'),
        ("spec.resources.requests[memory]",
         'Invalid value: "576Mi": must be greater than or equal to aggregate container requests of 6Gi')]


def test_the_aggregate_counts_init_containers_as_kep_753():
    """An init container alone (2 cpu) needs more than the app container (1): the aggregate is 2."""
    pod = _pod({"requests": {"cpu": "1500m"}}, {"requests": {"cpu": "1"}},
               init=[({"requests": {"cpu": "2"}}, {})])
    assert _causes(pod) == [
        ("spec.resources.requests[cpu]",
         'Invalid value: "1500m": must be greater than or equal to aggregate container requests of 2')]


def test_a_container_limit_above_the_pod_limit():
    pod = _pod({"limits": {"cpu": "1"}}, {"requests": {"cpu": "100m"}, "limits": {"cpu": "2"}})
    assert ("spec.resources.containers[0][cpu].limits",
            'Invalid value: "2": must be less than or equal to pod limits of 1') in _causes(pod)


def test_pod_requests_above_pod_limits():
    """validateResourceRequirements on the pod level: the path is the requests list."""
    pod = _pod({"requests": {"cpu": "2"}, "limits": {"cpu": "1"}}, {})
    assert ("spec.resources.requests", 'Invalid value: "2": must be less than or equal to cpu limit of 1') \
        in _causes(pod)


def test_only_cpu_memory_and_hugepages_are_pod_level_resources():
    """validatePodResourceName: a standard name that is not supported, then a non-standard one."""
    assert _causes(_pod({"requests": {"ephemeral-storage": "1Gi", "cpu": "1"}}, {})) == [
        ("spec.resources.requests[ephemeral-storage]",
         'Unsupported value: "ephemeral-storage": supported values: "cpu", "hugepages-", "memory"')]
    assert _causes(_pod({"requests": {"foo": "1", "cpu": "1"}}, {})) == [
        ("spec.resources.requests[foo]",
         'Invalid value: "foo": must be a standard resource type or fully qualified')]


def test_not_on_windows():
    pod = _pod({"requests": {"cpu": "1"}}, {})
    pod["spec"]["os"] = {"name": "windows"}
    assert ("spec.resources", "Forbidden: may not be set for a windows pod") in _causes(pod)
