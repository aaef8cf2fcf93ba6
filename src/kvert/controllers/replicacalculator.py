"""How many replicas a resource metric asks for: the HPA's replica calculator.

Upstream: ``pkg/controller/podautoscaler/replica_calculator.go`` and ``metrics/utilization.go``
(Kubernetes 1.35). Values are milli-units as upstream's (``MilliValue()``: millicores for cpu,
milli-bytes for memory), so ratios and the averages in the HPA's status come out the same.

* :func:`resource_metrics` -- ``PodMetrics`` objects (metrics.k8s.io) to one value per pod,
  the sum over its containers (or one named container); a pod that lacks the resource in a
  container is left out, as upstream's ``getPodMetrics``.
* :func:`group_pods` -- ready, unready (pending, or cpu samples taken while the pod was
  starting), missing (no metric) and ignored (deleted, failed) pods.
* :func:`pod_requests` -- the pods' requests from their **spec** (an in-place resize changes
  the spec, and upstream reads the spec, never ``status.containerStatuses[].resources``);
  pod-level ``spec.resources.requests`` when set and no container is named (KEP-2837).
* :func:`resource_replicas` (Utilization targets) and :func:`raw_resource_replicas`
  (AverageValue targets): ``GetResourceReplicas`` / ``GetRawResourceReplicas``, with the
  missing-pod and unready-pod rules (on a scale-down missing pods count as using their
  request, on a scale-up as using nothing; a scale-up counts unready pods as using nothing;
  no change when that would reverse the direction).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TypeGuard

from kvert.api.durations import SECOND, DurationError, parse_go_duration_ns
from kvert.api.meta import parse_time
from kvert.api.quantity import Quantity, QuantityError
from kvert.api.selectors import LabelSelector

# kube-controller-manager's --horizontal-pod-autoscaler-tolerance,
# --horizontal-pod-autoscaler-cpu-initialization-period and
# --horizontal-pod-autoscaler-initial-readiness-delay
DEFAULT_TOLERANCE = 0.1
CPU_INITIALIZATION_PERIOD = 300.0
INITIAL_READINESS_DELAY = 30.0


class MetricsError(Exception):
    """A replica count that cannot be computed; the message is upstream's."""


@dataclass(frozen=True)
class PodMetric:
    value: int                 # milli-units
    timestamp: float = 0.0
    window: float = 0.0


@dataclass(frozen=True)
class Tolerances:
    scale_down: float = DEFAULT_TOLERANCE
    scale_up: float = DEFAULT_TOLERANCE

    def within(self, ratio: float) -> bool:
        return 1.0 - self.scale_down <= ratio <= 1.0 + self.scale_up


@dataclass(frozen=True)
class Readiness:
    """The two delays that decide whether a cpu sample of a starting pod is trusted."""
    cpu_initialization_period: float = CPU_INITIALIZATION_PERIOD
    initial_readiness_delay: float = INITIAL_READINESS_DELAY


def _go_duration(text: object) -> float:
    """A Go duration as metrics-server writes a window (``15s``, ``1m0s``, ``15.002s``); 0 for
    a missing or unreadable one."""
    if isinstance(text, (int, float)):
        return float(text)
    s = str(text or "")
    if s[:1] in "+-":      # a window is never negative: unreadable
        return 0.0
    try:
        return parse_go_duration_ns(s) / SECOND
    except DurationError:
        return 0.0


# ---- metrics ------------------------------------------------------------------------------------

def resource_metrics(items: list[dict], resource: str, selector: LabelSelector,
                     container: str = "") -> tuple[dict[str, PodMetric], float]:
    """(value per pod name, timestamp of the first item) of ``resource`` in the PodMetrics
    selected by ``selector`` (``GetResourceMetric``)."""
    selected = [m for m in items if selector.matches((m.get("metadata") or {}).get("labels") or {})]
    if not selected:
        raise MetricsError("no metrics returned from resource metrics API")
    out: dict[str, PodMetric] = {}
    for m in selected:
        meta = m.get("metadata") or {}
        name = meta.get("name", "")
        stamp = parse_time(m["timestamp"]) if m.get("timestamp") else 0.0
        window = _go_duration(m.get("window"))
        containers = m.get("containers") or []
        if container:
            named = [c for c in containers if c.get("name") == container]
            if not named:
                raise MetricsError(f"failed to get container metrics: container {container} not "
                                   f"present in metrics for pod {meta.get('namespace', '')}/{name}")
            value = _milli((named[0].get("usage") or {}).get(resource))
            if value is not None:
                out[name] = PodMetric(value, stamp, window)
            continue
        values = [_milli((c.get("usage") or {}).get(resource)) for c in containers]
        if values and _all_set(values):
            out[name] = PodMetric(sum(values), stamp, window)
    first = selected[0]
    return out, (parse_time(first["timestamp"]) if first.get("timestamp") else 0.0)


# ---- pods ---------------------------------------------------------------------------------------

def _condition(pod: dict, kind: str) -> dict | None:
    for c in (pod.get("status") or {}).get("conditions") or []:
        if c.get("type") == kind:
            return c
    return None


def group_pods(pods: list[dict], metrics: dict[str, PodMetric], resource: str, now: float,
               readiness: Readiness = Readiness()) -> tuple[int, set[str], set[str], set[str]]:
    """(ready pod count, unready, missing, ignored pod names) -- ``groupPods``."""
    ready, unready, missing, ignored = 0, set(), set(), set()
    for pod in pods:
        name = pod["metadata"]["name"]
        phase = (pod.get("status") or {}).get("phase")
        if pod["metadata"].get("deletionTimestamp") or phase == "Failed":
            ignored.add(name)
            continue
        if phase == "Pending":
            unready.add(name)
            continue
        metric = metrics.get(name)
        if metric is None:
            missing.add(name)
            continue
        if resource == "cpu" and _cpu_sample_unready(pod, metric, now, readiness):
            unready.add(name)
            continue
        ready += 1
    return ready, unready, missing, ignored


def _cpu_sample_unready(pod: dict, metric: PodMetric, now: float, readiness: Readiness) -> bool:
    condition = _condition(pod, "Ready")
    started = (pod.get("status") or {}).get("startTime")
    if condition is None or not started:
        return True
    start = parse_time(started)
    transition = parse_time(condition["lastTransitionTime"]) if condition.get("lastTransitionTime") else 0.0
    if start + readiness.cpu_initialization_period > now:
        # starting: trust the sample only once the pod is ready and a whole window was
        # collected since it became so
        return condition.get("status") == "False" or metric.timestamp < transition + metric.window
    # past the initialization period: ignore a pod that is unready and has never been ready
    return condition.get("status") == "False" and start + readiness.initial_readiness_delay > transition


def _all_set(values: list[int | None]) -> TypeGuard[list[int]]:
    return None not in values


def _milli(value: object) -> int | None:
    if value is None:
        return None
    try:
        return Quantity.parse(value).milli_value()
    except QuantityError:
        return None


def _pod_level_requests(pod: dict) -> dict | None:
    requests = (((pod.get("spec") or {}).get("resources")) or {}).get("requests") or {}
    return requests if any(r in requests for r in ("cpu", "memory")) else None


def pod_requests(pods: list[dict], resource: str, container: str = "") -> dict[str, int]:
    """Each pod's request of ``resource`` in milli-units (``calculateRequests``)."""
    out: dict[str, int] = {}
    for pod in pods:
        name = pod["metadata"]["name"]
        spec = pod.get("spec") or {}
        pod_level = _pod_level_requests(pod) if not container else None
        if pod_level is not None and resource in pod_level:
            value = _milli(pod_level[resource])
            if value is None:
                raise MetricsError(f"missing pod-level request for {resource} in Pod {name}")
            out[name] = value
            continue
        candidates = list(spec.get("containers") or []) + [
            c for c in spec.get("initContainers") or [] if c.get("restartPolicy") == "Always"]
        total, found = 0, False
        for c in candidates:
            if container and c.get("name") != container:
                continue
            found = True
            value = (((c.get("resources") or {}).get("requests")) or {}).get(resource)
            milli = _milli(value)
            if milli is None:
                raise MetricsError(f"missing request for {resource} in container {c.get('name')} "
                                   f"of Pod {name}")
            total += milli
            if container:
                break
        if container and not found:
            raise MetricsError(f"container {container} not found in Pod {name}")
        out[name] = total
    return out


# ---- ratios -------------------------------------------------------------------------------------

def utilization_ratio(metrics: dict[str, PodMetric], requests: dict[str, int],
                      target: int) -> tuple[float, int, int]:
    """(usage ratio, utilization %, raw average) -- ``GetResourceUtilizationRatio``: the
    utilization is the integer percentage of the summed usage over the summed requests."""
    used = requested = entries = 0
    for name, metric in metrics.items():
        if name not in requests:
            continue
        used += metric.value
        requested += requests[name]
        entries += 1
    if requested == 0:
        raise MetricsError("no metrics returned matched known pods")
    utilization = used * 100 // requested
    return utilization / target, utilization, used // entries


def usage_ratio(metrics: dict[str, PodMetric], target: int) -> tuple[float, int]:
    """(usage ratio, average usage) -- ``GetMetricUsageRatio``."""
    average = sum(m.value for m in metrics.values()) // len(metrics)
    return average / target, average


# ---- replica counts -----------------------------------------------------------------------------

def _ceil(ratio: float, count: int) -> int:
    return int(math.ceil(ratio * count))


def resource_replicas(current: int, target_utilization: int, resource: str, pods: list[dict],
                      metrics: dict[str, PodMetric], now: float, *, container: str = "",
                      tolerances: Tolerances = Tolerances(),
                      readiness: Readiness = Readiness()) -> tuple[int, int, int]:
    """(replicas, utilization %, raw average usage) for a Utilization target
    (``GetResourceReplicas``); ``pods`` are those the target's selector selects."""
    if not pods:
        raise MetricsError("no pods returned by selector while calculating replica count")
    metrics = dict(metrics)
    ready, unready, missing, ignored = group_pods(pods, metrics, resource, now, readiness)
    for name in ignored | unready:
        metrics.pop(name, None)
    if not metrics:
        raise MetricsError("did not receive metrics for targeted pods (pods might be unready)")
    requests = pod_requests(pods, resource, container)
    ratio, utilization, raw = utilization_ratio(metrics, requests, target_utilization)

    scale_up_with_unready = bool(unready) and ratio > 1.0
    if not scale_up_with_unready and not missing:
        if tolerances.within(ratio):
            return current, utilization, raw
        return _ceil(ratio, ready), utilization, raw

    if missing:
        if ratio < 1.0:
            # a scale-down counts the pods without metrics as using their full request
            # (or the target, for targets above 100 %)
            fallback = max(100, target_utilization)
            for name in missing:
                metrics[name] = PodMetric(requests[name] * fallback // 100)
        elif ratio > 1.0:
            for name in missing:
                metrics[name] = PodMetric(0)
    if scale_up_with_unready:
        for name in unready:
            metrics[name] = PodMetric(0)

    new_ratio, _, _ = utilization_ratio(metrics, requests, target_utilization)
    return _settle(current, ratio, new_ratio, len(metrics), tolerances), utilization, raw


def raw_resource_replicas(current: int, target_usage: int, resource: str, pods: list[dict],
                          metrics: dict[str, PodMetric], now: float, *,
                          tolerances: Tolerances = Tolerances(),
                          readiness: Readiness = Readiness()) -> tuple[int, int]:
    """(replicas, average usage) for an AverageValue target, ``target_usage`` in milli-units
    (``GetRawResourceReplicas`` / ``calcPlainMetricReplicas``)."""
    if not pods:
        raise MetricsError("no pods returned by selector while calculating replica count")
    metrics = dict(metrics)
    ready, unready, missing, ignored = group_pods(pods, metrics, resource, now, readiness)
    for name in ignored | unready:
        metrics.pop(name, None)
    if not metrics:
        raise MetricsError("did not receive metrics for targeted pods (pods might be unready)")
    ratio, usage = usage_ratio(metrics, target_usage)

    scale_up_with_unready = bool(unready) and ratio > 1.0
    if not scale_up_with_unready and not missing:
        if tolerances.within(ratio):
            return current, usage
        return _ceil(ratio, ready), usage

    if missing:
        if ratio < 1.0:
            for name in missing:
                metrics[name] = PodMetric(target_usage)
        elif ratio > 1.0:
            for name in missing:
                metrics[name] = PodMetric(0)
    if scale_up_with_unready:
        for name in unready:
            metrics[name] = PodMetric(0)

    new_ratio, _ = usage_ratio(metrics, target_usage)
    return _settle(current, ratio, new_ratio, len(metrics), tolerances), usage


def _settle(current: int, ratio: float, new_ratio: float, counted: int, tolerances: Tolerances) -> int:
    """The count after the missing/unready adjustments: unchanged when the change is within
    tolerance or would reverse the direction the unadjusted ratio pointed."""
    if tolerances.within(new_ratio) or (ratio < 1.0 < new_ratio) or (ratio > 1.0 > new_ratio):
        return current
    replicas = _ceil(new_ratio, counted)
    if (new_ratio < 1.0 and replicas > current) or (new_ratio > 1.0 and replicas < current):
        return current
    return replicas
