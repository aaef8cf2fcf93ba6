"""The VPA components' Prometheus metrics, with upstream VPA 1.8's names, labels, help
texts and buckets (``vertical-pod-autoscaler/pkg/utils/metrics``), and their health check.

Each component instance has its own registry (``kvert up`` runs all three in one process,
and a test may run several): ``RecommenderMetrics()``, ``UpdaterMetrics()`` and
``AdmissionMetrics()``; :mod:`kvert.vpa.serving` serves one on ``/metrics`` with its
:class:`HealthCheck` on ``/health-check``.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from contextlib import contextmanager

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, disable_created_metrics, generate_latest

from kvert.clock import Clock

# client_golang writes no ``_created`` series; neither do kvert's components
disable_created_metrics()

MAX_VPA_SIZE_LOG = 20
_EXECUTION_BUCKETS = (0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0,
                      70.0, 80.0, 90.0, 100.0, 120.0, 150.0, 240.0, 300.0)
_REQUEST_BUCKETS = (0.01, 0.02, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 2.0, 5.0, 10.0, 20.0,
                    30.0, 60.0, 120.0, 300.0)
_RECOMMENDATION_LATENCY_BUCKETS = (1.0, 2.0, 5.0, 7.5, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 90.0, 120.0, 150.0,
                                   180.0, 240.0, 300.0, 600.0, 900.0, 1800.0)


def vpa_size_log2(pods: int) -> str:
    """Upstream's ``vpa_size_log2`` label: floor(log2(pods)), 0 for none, at most 20."""
    if pods <= 0:
        return "0"
    return str(min(int(math.log2(pods)), MAX_VPA_SIZE_LOG))


class HealthCheck:
    """Upstream's ``metrics.HealthCheck``: healthy until monitoring starts, then only while
    the last activity is within ``timeout`` seconds."""

    def __init__(self, clock: Clock, timeout: float) -> None:
        self.clock = clock
        self.timeout = float(timeout)
        self.monitoring = False
        self.last_activity = clock.now()

    def start_monitoring(self) -> None:
        self.monitoring = True
        self.last_activity = self.clock.now()

    def update_last_activity(self) -> None:
        self.last_activity = self.clock.now()

    def check(self) -> tuple[bool, float]:
        """(healthy, seconds since the last activity)."""
        ago = self.clock.now() - self.last_activity
        return not (self.monitoring and ago > self.timeout), ago


class _Metrics:
    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=True)

    def exposition(self) -> bytes:
        return generate_latest(self.registry)

    def _execution(self, namespace: str, help_text: str) -> Histogram:
        return Histogram("execution_latency_seconds", help_text, ["step"], namespace=namespace,
                         buckets=_EXECUTION_BUCKETS, registry=self.registry)


class ExecutionTimer:
    """Upstream's ``metrics.ExecutionTimer``: ``observe_step(name)`` records the time since the
    previous step, ``observe_total()`` since the start."""

    def __init__(self, histogram: Histogram, clock: Clock) -> None:
        self.histogram = histogram
        self.clock = clock
        self.start = self.last = clock.now()

    def observe_step(self, step: str) -> None:
        now = self.clock.now()
        self.histogram.labels(step).observe(now - self.last)
        self.last = now

    def observe_total(self) -> None:
        self.histogram.labels("total").observe(self.clock.now() - self.start)


class RecommenderMetrics(_Metrics):
    def __init__(self) -> None:
        super().__init__()
        ns, r = "vpa_recommender", self.registry
        self.vpa_objects = Gauge("vpa_objects_count", "Number of VPA objects present in the cluster.",
                                 ["update_mode", "has_recommendation", "api", "matches_pods", "unsupported_config"],
                                 namespace=ns, registry=r)
        self.recommendation_latency = Histogram(
            "recommendation_latency_seconds",
            "Time elapsed from creating a valid VPA configuration to the first recommendation.",
            namespace=ns, buckets=_RECOMMENDATION_LATENCY_BUCKETS, registry=r)
        self.execution_latency = self._execution(ns, "Time spent in various parts of VPA Recommender main loop.")
        self.aggregate_container_states = Gauge(
            "aggregate_container_states_count", "Number of aggregate container states being tracked by the recommender",
            namespace=ns, registry=r)
        self.metric_server_responses = Counter(
            "metric_server_responses", "Count of responses to queries to metrics server",
            ["is_error", "client_name"], namespace=ns, registry=r)
        self.prometheus_requests = Counter(
            "prometheus_client_api_requests_count", "Number of requests to a Prometheus API",
            ["code", "method"], namespace=ns, registry=r)
        self.prometheus_request_duration = Histogram(
            "prometheus_client_api_requests_duration_seconds", "Duration of requests to a Prometheus API",
            ["code", "method"], namespace=ns, buckets=_REQUEST_BUCKETS, registry=r)


class UpdaterMetrics(_Metrics):
    def __init__(self) -> None:
        super().__init__()
        ns, r = "vpa_updater", self.registry
        self.controlled_pods = Gauge("controlled_pods_total", "Number of Pods controlled by VPA updater.",
                                     ["vpa_size_log2", "update_mode"], namespace=ns, registry=r)
        self.evictable_pods = Gauge("evictable_pods_total", "Number of Pods matching eviction criteria.",
                                    ["vpa_size_log2", "update_mode"], namespace=ns, registry=r)
        # prometheus_client appends _total to a counter's name; upstream's names end in it already
        self.evicted_pods = Counter("evicted_pods", "Number of Pods evicted by Updater to apply a new recommendation.",
                                    ["vpa_size_log2", "update_mode", "vpa_name", "vpa_namespace"],
                                    namespace=ns, registry=r)
        self.vpas_with_evictable_pods = Gauge(
            "vpas_with_evictable_pods_total", "Number of VPA objects with at least one Pod matching eviction criteria.",
            ["vpa_size_log2", "update_mode"], namespace=ns, registry=r)
        self.vpas_with_evicted_pods = Gauge(
            "vpas_with_evicted_pods_total", "Number of VPA objects with at least one evicted Pod.",
            ["vpa_size_log2", "update_mode"], namespace=ns, registry=r)
        self.failed_eviction_attempts = Counter(
            "failed_eviction_attempts", "Number of failed attempts to update Pods by eviction",
            ["vpa_size_log2", "update_mode", "reason", "vpa_name", "vpa_namespace"], namespace=ns, registry=r)
        self.in_place_updatable_pods = Gauge(
            "in_place_updatable_pods_total", "Number of Pods matching in place update criteria.",
            ["vpa_size_log2"], namespace=ns, registry=r)
        self.in_place_updated_pods = Counter(
            "in_place_updated_pods", "Number of Pods updated in-place by Updater to apply a new recommendation.",
            ["vpa_size_log2", "vpa_name", "vpa_namespace"], namespace=ns, registry=r)
        self.vpas_with_in_place_updatable_pods = Gauge(
            "vpas_with_in_place_updatable_pods_total",
            "Number of VPA objects with at least one Pod matching in place update criteria.",
            ["vpa_size_log2"], namespace=ns, registry=r)
        self.vpas_with_in_place_updated_pods = Gauge(
            "vpas_with_in_place_updated_pods_total", "Number of VPA objects with at least one in-place updated Pod.",
            ["vpa_size_log2"], namespace=ns, registry=r)
        self.failed_in_place_update_attempts = Counter(
            "failed_in_place_update_attempts", "Number of failed attempts to update Pods in-place.",
            ["vpa_size_log2", "reason", "vpa_name", "vpa_namespace"], namespace=ns, registry=r)
        self.in_place_infeasible_skips = Counter(
            "in_place_infeasible_skip_pods",
            "Number of pods that were skipped for in-place update due to cached infeasibility",
            ["vpa_size_log2", "vpa_name", "vpa_namespace"], namespace=ns, registry=r)
        self.execution_latency = self._execution(ns, "Time spent in various parts of VPA Updater main loop.")


class AdmissionMetrics(_Metrics):
    def __init__(self) -> None:
        super().__init__()
        ns, r = "vpa_admission_controller", self.registry
        self.admission_pods = Counter("admission_pods", "Number of Pods processed by VPA Admission Controller.",
                                      ["applied"], namespace=ns, registry=r)
        self.admission_latency = Histogram(
            "admission_latency_seconds", "Time spent in VPA Admission Controller.", ["status", "resource"],
            namespace=ns, buckets=_REQUEST_BUCKETS, registry=r)
        self.execution_latency = self._execution(ns, "Time spent in various parts of VPA admission controller")

    @contextmanager
    def admission(self, clock: Clock, resource: str) -> Iterator[list[str]]:
        """Time one review; the caller sets ``status[0]`` to applied, skipped or error
        (upstream's ``AdmissionStatus``)."""
        start = clock.now()
        status = ["error"]
        try:
            yield status
        finally:
            self.admission_latency.labels(status[0], resource).observe(clock.now() - start)


__all__ = ["AdmissionMetrics", "ExecutionTimer", "HealthCheck", "RecommenderMetrics", "UpdaterMetrics",
           "vpa_size_log2"]
