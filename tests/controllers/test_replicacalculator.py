"""The HPA replica calculator against upstream's cases.

Every case is one of ``pkg/controller/podautoscaler/replica_calculator_test.go``, built the
way its harness builds pods and metrics: pods ``test-pod-N`` with two containers each
requesting the case's request, PodMetrics with a one-minute window, tolerance 0.1, a cpu
initialization period of 2 minutes and an initial readiness delay of 10 seconds (the
harness' ``defaultTesting*`` constants); "hot" pods started 1 minute ago, "cool" ones 3.
"""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kvert.api.meta import format_time
from kvert.api.quantity import Quantity
from kvert.api.selectors import LabelSelector
from kvert.controllers.replicacalculator import (MetricsError, Readiness, Tolerances,
                                                 pod_requests, raw_resource_replicas,
                                                 resource_metrics, resource_replicas)

NOW = 1_700_000_000.0
ZERO = 0.0                       # Go's zero time: long before NOW
HOT, COOL = NOW - 60, NOW - 180
TESTING = Readiness(cpu_initialization_period=120.0, initial_readiness_delay=10.0)
SELECTOR = LabelSelector.from_set({"name": "test-pod"})


def levels(*per_container: int) -> list[list[int]]:
    """``makePodMetricLevels``: the same level in both containers of each pod."""
    return [[v, v] for v in per_container]


def build(current: int, requests: list[str], metric_levels: list[list[int]], *, readiness=None,
          start=None, phase=None, deleting=None, pod_names=None, resource="cpu"):
    count = max(current, len(phase or []))
    pods = []
    for i in range(count):
        containers = [{"name": "container1"}, {"name": "container2"}]
        if i < len(requests):
            for c in containers:
                c["resources"] = {"requests": {resource: requests[i]}}
        pod = {"metadata": {"name": f"test-pod-{i}", "namespace": "test-namespace",
                            "labels": {"name": "test-pod"}},
               "spec": {"containers": containers},
               "status": {"phase": (phase or [])[i] if phase else "Running",
                          "startTime": format_time(start[i] if start else ZERO),
                          "conditions": [{"type": "Ready",
                                          "status": (readiness or [])[i] if readiness and i < len(readiness) else "True",
                                          "lastTransitionTime": format_time(ZERO)}]}}
        if deleting and deleting[i]:
            pod["metadata"]["deletionTimestamp"] = format_time(NOW)
        pods.append(pod)
    items = []
    for i, values in enumerate(metric_levels):
        name = pod_names[i] if pod_names and i < len(pod_names) else f"test-pod-{i}"
        items.append({"metadata": {"name": name, "namespace": "test-namespace",
                                   "labels": {"name": "test-pod"}},
                      "timestamp": format_time(ZERO), "window": "1m0s",
                      "containers": [{"name": f"container{j + 1}",
                                      "usage": {resource: str(Quantity.from_milli(v))}}
                                     for j, v in enumerate(values)]})
    return pods, items


def calc(current, target, pods, items, container=""):
    metrics, _ = resource_metrics(items, "cpu", SELECTOR, container)
    return resource_replicas(current, target, "cpu", pods, metrics, NOW, container=container,
                             tolerances=Tolerances(), readiness=TESTING)


ONE = "1.0"


@pytest.mark.parametrize("name, current, requests, lv, target, expect, kwargs, container", [
    ("TestReplicaCalcScaleUp", 3, [ONE] * 3, levels(300, 500, 700), 30, (5, 50, 1000), {}, ""),
    ("TestReplicaCalcContainerScaleUp", 3, [ONE] * 3, [[1000, 300], [1000, 500], [1000, 700]], 30,
     (5, 50, 500), {}, "container2"),
    ("TestReplicaCalcScaleUpUnreadyLessScale", 3, [ONE] * 3, levels(300, 500, 700), 30, (4, 60, 1200),
     {"readiness": ["False", "True", "True"]}, ""),
    ("TestReplicaCalcScaleUpHotCpuLessScale", 3, [ONE] * 3, levels(300, 500, 700), 30, (4, 60, 1200),
     {"start": [HOT, COOL, COOL]}, ""),
    ("TestReplicaCalcScaleUpContainerHotCpuLessScale", 3, [ONE] * 3, [[0, 300], [0, 500], [0, 700]], 30,
     (4, 60, 600), {"start": [HOT, COOL, COOL]}, "container2"),
    ("TestReplicaCalcScaleUpUnreadyNoScale", 3, [ONE] * 3, levels(400, 500, 700), 30, (3, 40, 800),
     {"readiness": ["True", "False", "False"]}, ""),
    ("TestReplicaCalcScaleHotCpuNoScale", 3, [ONE] * 3, levels(400, 500, 700), 30, (3, 40, 800),
     {"readiness": ["True", "False", "False"], "start": [COOL, HOT, HOT]}, ""),
    ("TestReplicaCalcScaleUpIgnoresFailedPods", 2, [ONE] * 4, levels(500, 700), 30, (4, 60, 1200),
     {"readiness": ["True", "True", "False", "False"],
      "phase": ["Running", "Running", "Failed", "Failed"]}, ""),
    ("TestReplicaCalcScaleUpIgnoresDeletionPods", 2, [ONE] * 4, levels(500, 700), 30, (4, 60, 1200),
     {"readiness": ["True", "True", "False", "False"], "phase": ["Running"] * 4,
      "deleting": [False, False, True, True]}, ""),
    ("TestReplicaCalcScaleDown", 5, [ONE] * 5, levels(100, 300, 500, 250, 250), 50, (3, 28, 560), {}, ""),
    ("TestReplicaCalcContainerScaleDown", 5, [ONE] * 5,
     [[1000, 100], [1000, 300], [1000, 500], [1000, 250], [1000, 250]], 50, (3, 28, 280), {}, "container2"),
    ("TestReplicaCalcScaleDownExcludeUnreadyPods", 5, [ONE] * 5, levels(100, 300, 500, 250, 250), 50,
     (2, 30, 600), {"readiness": ["True", "True", "True", "False", "False"]}, ""),
    ("TestReplicaCalcScaleDownExcludeUnscheduledPods", 5, [ONE] * 5, levels(100), 50, (1, 10, 200),
     {"readiness": ["True", "False", "False", "False", "False"],
      "phase": ["Running", "Pending", "Pending", "Pending", "Pending"]}, ""),
    ("TestReplicaCalcScaleDownIgnoreHotCpuPods", 5, [ONE] * 5, levels(100, 300, 500, 250, 250), 50,
     (2, 30, 600), {"start": [COOL, COOL, COOL, HOT, HOT]}, ""),
    ("TestReplicaCalcScaleDownIgnoresFailedPods", 5, [ONE] * 7, levels(100, 300, 500, 250, 250), 50,
     (3, 28, 560), {"readiness": ["True"] * 5 + ["False"] * 2,
                    "phase": ["Running"] * 5 + ["Failed"] * 2}, ""),
    ("TestReplicaCalcScaleDownIgnoresDeletionPods", 5, [ONE] * 7, levels(100, 300, 500, 250, 250), 50,
     (3, 28, 560), {"readiness": ["True"] * 5 + ["False"] * 2, "phase": ["Running"] * 7,
                    "deleting": [False] * 5 + [True] * 2}, ""),
    ("TestReplicaCalcTolerance", 3, ["0.9", "1.0", "1.1"], levels(1010, 1030, 1020), 100, (3, 102, 2040),
     {}, ""),
    ("TestReplicaCalcSuperfluousMetrics", 4, [ONE] * 4, levels(4000, 9500, 3000, 7000, 3200, 2000), 100,
     (24, 587, 11750), {}, ""),
    ("TestReplicaCalcMissingMetrics", 4, [ONE] * 4, levels(400, 95), 100, (3, 24, 495), {}, ""),
    ("TestReplicaCalcMissingMetricsNoChangeEq", 2, [ONE] * 2, levels(1000), 100, (2, 100, 2000), {}, ""),
    ("TestReplicaCalcMissingMetricsNoChangeGt", 2, [ONE] * 2, levels(1900), 100, (2, 190, 3800), {}, ""),
    ("TestReplicaCalcMissingMetricsNoChangeLt", 2, [ONE] * 2, levels(600), 100, (2, 60, 1200), {}, ""),
    ("TestReplicaCalcMissingMetricsUnreadyChange", 3, [ONE] * 3, levels(100, 450), 50, (3, 45, 900),
     {"readiness": ["False", "True", "True"]}, ""),
])
def test_upstream_resource_cases(name, current, requests, lv, target, expect, kwargs, container):
    pods, items = build(current, requests, lv, **kwargs)
    assert calc(current, target, pods, items, container) == expect, name


def test_disjoint_metrics_match_no_pod():
    # TestReplicaCalcDisjointResourcesMetrics
    pods, items = build(1, [ONE], levels(100), pod_names=["an-older-pod-name"])
    with pytest.raises(MetricsError, match="no metrics returned matched known pods"):
        calc(1, 100, pods, items)


def test_empty_metrics():
    # TestReplicaCalcEmptyMetrics: "unable to get metrics for resource cpu: no metrics returned
    # from resource metrics API" (the controller adds the prefix)
    pods, items = build(4, [ONE] * 3, [])
    with pytest.raises(MetricsError, match="^no metrics returned from resource metrics API$"):
        calc(4, 100, pods, items)


def test_empty_cpu_request():
    # TestReplicaCalcEmptyCPURequest
    pods, items = build(1, [], levels(200))
    with pytest.raises(MetricsError, match="missing request for"):
        calc(1, 100, pods, items)


def test_missing_container_in_metrics():
    # getContainerMetrics: "container %s not present in metrics for pod %s/%s"
    pods, items = build(1, [ONE], levels(200))
    with pytest.raises(MetricsError, match="container sidecar not present in metrics for pod "
                                           "test-namespace/test-pod-0"):
        calc(1, 100, pods, items, "sidecar")


def test_average_value_target():
    # TestReplicaCalcScaleUpCM / ScaleDownCM / ToleranceCM through the plain-metric path, with
    # per-pod values as the sum of both containers
    for current, per_pod, target, expect in ((3, [10000, 5000, 15000], 15000, (4, 10000 * 2)),
                                             (5, [6000] * 5, 20000, (3, 12000)),
                                             (3, [10000, 10500, 10500], 20000, (3, 20666))):
        pods, items = build(current, [ONE] * current, [[v, v] for v in per_pod])
        metrics, _ = resource_metrics(items, "cpu", SELECTOR)
        assert raw_resource_replicas(current, target, "cpu", pods, metrics, NOW,
                                     readiness=TESTING) == expect


def test_requests_come_from_the_spec_not_the_resized_status():
    # calculateRequests reads pod.Spec: an in-place resize pending or applied is seen once the
    # spec says so, whatever status.containerStatuses[].resources reports
    pod = {"metadata": {"name": "p"},
           "spec": {"containers": [{"name": "a", "resources": {"requests": {"cpu": "500m"}}}]},
           "status": {"containerStatuses": [{"name": "a", "resources": {"requests": {"cpu": "250m"}}}]}}
    assert pod_requests([pod], "cpu") == {"p": 500}


def test_pod_level_requests_and_sidecars():
    # calculateRequests: pod-level requests when set and no container is named; restartable
    # init containers (sidecars) count
    pod = {"metadata": {"name": "p"},
           "spec": {"resources": {"requests": {"cpu": "2"}},
                    "initContainers": [{"name": "s", "restartPolicy": "Always",
                                        "resources": {"requests": {"cpu": "100m"}}}],
                    "containers": [{"name": "a", "resources": {"requests": {"cpu": "500m"}}}]}}
    assert pod_requests([pod], "cpu") == {"p": 2000}
    assert pod_requests([pod], "cpu", "a") == {"p": 500}
    del pod["spec"]["resources"]
    assert pod_requests([pod], "cpu") == {"p": 600}


# ---- properties -----------------------------------------------------------------------------


@settings(max_examples=200, deadline=None)
@given(usages=st.lists(st.integers(0, 5000), min_size=1, max_size=12), target=st.integers(1, 300))
def test_all_ready_pods_follow_the_formula(usages, target):
    """With every pod ready and measured: desired = ceil(current x utilization / target), or
    the current count within the 0.1 tolerance (the documented algorithm)."""
    current = len(usages)
    pods, items = build(current, [ONE] * current, [[u, 0] for u in usages])
    replicas, utilization, _ = calc(current, target, pods, items)
    assert utilization == sum(usages) * 100 // (2000 * current)
    ratio = utilization / target
    assert replicas == (current if abs(ratio - 1.0) <= 0.1 + 1e-12 else math.ceil(ratio * current))


@settings(max_examples=200, deadline=None)
@given(usages=st.lists(st.integers(0, 5000), min_size=2, max_size=10), target=st.integers(10, 200),
       data=st.data())
def test_missing_and_unready_pods_never_reverse_the_direction(usages, target, data):
    """GetResourceReplicas: whatever the missing metrics and unready pods, the count moves only
    the way the measured pods point (upstream's guards against a reversed direction)."""
    current = len(usages)
    measured = data.draw(st.lists(st.booleans(), min_size=current, max_size=current))
    readiness = data.draw(st.lists(st.sampled_from(["True", "False"]), min_size=current, max_size=current))
    if not any(m and r == "True" for m, r in zip(measured, readiness)):
        return
    pods, items = build(current, [ONE] * current, [[u, 0] for u in usages], readiness=readiness)
    items = [item for item, keep in zip(items, measured) if keep]
    replicas, utilization, _ = calc(current, target, pods, items)
    if utilization > target:
        assert replicas >= current
    elif utilization < target:
        assert replicas <= current
    else:
        assert replicas == current
