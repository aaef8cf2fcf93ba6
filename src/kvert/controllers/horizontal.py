"""The HorizontalPodAutoscaler controller (``horizontal-pod-autoscaler``).

Upstream: ``pkg/controller/podautoscaler/horizontal.go`` (Kubernetes 1.35). Every HPA is
reconciled every ``sync_period`` (15 s) seconds, also after an error:

* the target's ``scale`` subresource (Deployments, ReplicaSets, StatefulSets, any kind that
  serves one) gives the current replicas and the pod selector; condition ``AbleToScale``
  (``SucceededGetScale`` / ``FailedGetScale``);
* a target at zero replicas is left alone (``ScalingActive`` False ``ScalingDisabled``); above
  ``maxReplicas`` or below ``minReplicas`` (default 1) it is brought back into range;
* otherwise each metric proposes a count and the largest wins. ``Resource`` and
  ``ContainerResource`` metrics (``Utilization`` against the pods' requests, or
  ``AverageValue``) come from metrics.k8s.io through :mod:`kvert.controllers.replicacalculator`
  (tolerance 0.1, or ``behavior.scaleUp/scaleDown.tolerance``; cpu samples of starting pods
  ignored); ``Pods``, ``Object`` and ``External`` metrics need a custom/external metrics API,
  which kvert does not serve, and fail as upstream does without one. Invalid metrics give
  ``ScalingActive`` False with upstream's reasons; ``AmbiguousSelector`` when another HPA's
  pods overlap;
* the proposal is normalized (:mod:`kvert.controllers.scalingrules`): stabilization windows
  and scaling policies, with the ``AbleToScale`` and ``ScalingLimited`` reasons upstream sets;
* a change is written through the scale subresource, with the Event ``SuccessfulRescale``
  ``New size: N; reason: ...`` (or ``FailedRescale``) and ``status.lastScaleTime``;
  ``status`` holds ``currentReplicas``, ``desiredReplicas``, ``currentMetrics`` and the
  conditions, written only when it changed.

**VPA on the same resource** (seed 002; :mod:`kvert.controllers.vpaconflict`): the controller
reports an HPA that scales on a resource its workload's VPA also controls with the kvert
condition ``VerticalPodAutoscalerConflict`` True (reason ``SameResource``) and a Warning Event;
it still scales. The combination that works: the HPA on cpu and the VPA with
``controlledResources: [memory]``, or the HPA on a metric the VPA does not control.

Metrics: ``metrics`` is anything with ``pod_metrics(namespace)`` returning PodMetrics
(sync or async; ``kvert.cluster.metrics.LocalNodeMetrics`` in ``kvert up``); without it the
controller asks the API server (``GET /apis/metrics.k8s.io/v1beta1/namespaces/NS/pods``)
through a client that can (``HttpClient.get_path``).
"""

from __future__ import annotations

import inspect
import logging
from dataclasses import dataclass
from typing import Any

from kvert.api import conditions, kinds
from kvert.api.errors import ApiError, NotFound
from kvert.api.meta import deep_copy, format_time
from kvert.api.quantity import Quantity, QuantityError
from kvert.api.selectors import LabelSelector, SelectorError
from kvert.client.base import Client
from kvert.client.events import EventRecorder
from kvert.client.metrics import PodMetricsProvider
from kvert.clock import Clock
from kvert.controllers.base import (
    NAMESPACE_INDEX,
    Controller,
    InformerFactory,
    index_namespace,
    object_key,
    safe_handler,
    split_key,
)
from kvert.controllers.replicacalculator import (
    CPU_INITIALIZATION_PERIOD,
    DEFAULT_TOLERANCE,
    INITIAL_READINESS_DELAY,
    MetricsError,
    Readiness,
    Tolerances,
    raw_resource_replicas,
    resource_metrics,
    resource_replicas,
)
from kvert.controllers.scalingrules import ScalingHistory
from kvert.controllers.vpaconflict import CONFLICT as VPA_CONFLICT
from kvert.controllers.vpaconflict import CONFLICT_REASON as VPA_CONFLICT_REASON
from kvert.controllers.vpaconflict import VPAS, conflicts, scaled_resources

log = logging.getLogger(__name__)

HPAS = "autoscaling/horizontalpodautoscalers"
COMPONENT = "horizontal-pod-autoscaler"
METRICS_PATH = "/apis/metrics.k8s.io/v1beta1/namespaces/{namespace}/pods"

SYNC_PERIOD = 15.0                       # --horizontal-pod-autoscaler-sync-period
DOWNSCALE_STABILIZATION = 300.0          # --horizontal-pod-autoscaler-downscale-stabilization

ABLE_TO_SCALE, SCALING_ACTIVE, SCALING_LIMITED = "AbleToScale", "ScalingActive", "ScalingLimited"
# what the custom metrics client answers where no adapter serves custom.metrics.k8s.io
NO_CUSTOM_METRICS_API = "no custom metrics API (custom.metrics.k8s.io) registered"


class ReconcileError(Exception):
    """A reconcile that failed after recording why (status, Event); retried next period."""


@dataclass
class _Proposal:
    replicas: int
    metric: str
    status: dict


class _MetricFailure(Exception):
    def __init__(self, message: str, condition: dict):
        super().__init__(message)
        self.condition = condition


def _quantity_tolerance(rules: Any, default: float) -> float:
    value = (rules or {}).get("tolerance") if isinstance(rules, dict) else None
    if value is None:
        return default
    try:
        return float(Quantity.parse(value).amount)
    except QuantityError:
        return default


def _milli(value: Any) -> int | None:
    try:
        return Quantity.parse(value).milli_value()
    except (QuantityError, TypeError):
        return None


def _go_label_selector(selector: Any) -> str:
    """A metric's ``*metav1.LabelSelector`` as Go's ``%+v`` prints it (its generated
    ``String()``) in upstream's message."""
    if not isinstance(selector, dict):
        return "nil"
    labels = "".join(f"{k}: {v}," for k, v in sorted((selector.get("matchLabels") or {}).items()))
    expressions = "".join(
        f"LabelSelectorRequirement{{Key:{e.get('key', '')},Operator:{e.get('operator', '')},"
        f"Values:[{' '.join(e.get('values') or [])}],}},"
        for e in selector.get("matchExpressions") or [] if isinstance(e, dict))
    return (f"&LabelSelector{{MatchLabels:map[string]string{{{labels}}},"
            f"MatchExpressions:[]LabelSelectorRequirement{{{expressions}}},}}")


class HorizontalController(Controller):
    name = COMPONENT

    def __init__(self, client: Client, clock: Clock, *, informers: InformerFactory | None = None,
                 workers: int = 1, metrics: PodMetricsProvider | None = None,
                 sync_period: float = SYNC_PERIOD,
                 tolerance: float = DEFAULT_TOLERANCE,
                 downscale_stabilization: float = DOWNSCALE_STABILIZATION,
                 cpu_initialization_period: float = CPU_INITIALIZATION_PERIOD,
                 initial_readiness_delay: float = INITIAL_READINESS_DELAY):
        super().__init__(client, clock, informers=informers, workers=workers)
        self.metrics = metrics
        self.sync_period = sync_period
        self.tolerance = tolerance
        self.downscale_stabilization = downscale_stabilization
        self.readiness = Readiness(cpu_initialization_period, initial_readiness_delay)
        self.recorder = EventRecorder(client, clock, COMPONENT)
        self.hpa_informer = self.use(HPAS)
        self.pod_informer = self.use("pods")
        self.pod_informer.add_index(NAMESPACE_INDEX, index_namespace)
        later = safe_handler(lambda hpa: self.enqueue_after(object_key(hpa), self.sync_period))
        self.hpa_informer.add_handlers(later, safe_handler(lambda old, cur: later(cur)),
                                       safe_handler(self._deleted))
        self.history = ScalingHistory(downscale_stabilization)
        self._selectors: dict[str, LabelSelector] = {}             # key -> its target's selector

    def _deleted(self, hpa: dict) -> None:
        key = object_key(hpa)
        self.history.forget(key)
        self._selectors.pop(key, None)

    async def sync(self, key: str) -> None:
        namespace, name = split_key(key)
        hpa = self.hpa_informer.get(name, namespace)
        if hpa is None:
            self._deleted({"metadata": {"namespace": namespace, "name": name}})
            return
        try:
            await self.reconcile(deep_copy(hpa), key)
        except ReconcileError as e:
            log.info("%s: %s", self.name, e)
        finally:
            # every HPA again after the sync period, whatever happened (upstream's fixed-interval
            # rate limiter)
            self.enqueue_after(key, self.sync_period)

    # ---- reconcile ------------------------------------------------------------------------

    async def reconcile(self, hpa: dict, key: str) -> None:
        """``reconcileAutoscaler``."""
        original = deep_copy(hpa.get("status") or {})
        spec = hpa.get("spec") or {}
        ref = spec.get("scaleTargetRef") or {}
        namespace = hpa["metadata"].get("namespace", "")
        reference = f"{ref.get('kind')}/{namespace}/{ref.get('name')}"
        try:
            resource = self._scale_resource(ref)
            scale = await self.client.get_scale(resource, ref.get("name", ""), namespace)
        except (ApiError, LookupError) as e:
            message = str(e.args[0]) if isinstance(e, LookupError) else str(e)
            await self._event(hpa, "Warning", "FailedGetScale", message)
            self._set_condition(hpa, ABLE_TO_SCALE, "False", "FailedGetScale",
                                f"the HPA controller was unable to get the target's current scale: {message}")
            await self._update_status(hpa, original)
            raise ReconcileError(f"failed to query scale subresource for {reference}: {message}") from None
        self._set_condition(hpa, ABLE_TO_SCALE, "True", "SucceededGetScale",
                            "the HPA controller was able to get the target's current scale")
        current = int((scale.get("spec") or {}).get("replicas") or 0)
        now = self.clock.now()
        self.history.record_initial(key, current, now)
        min_replicas = spec.get("minReplicas")
        min_replicas = 1 if min_replicas is None else int(min_replicas)
        max_replicas = int(spec.get("maxReplicas") or 0)

        statuses: list[dict] | None = None
        desired, reason, rescale = 0, "", True
        partial_error: str | None = None
        if current == 0 and min_replicas != 0:
            rescale = False
            self._set_condition(hpa, SCALING_ACTIVE, "False", "ScalingDisabled",
                                "scaling is disabled since the replica count of the target is zero")
        elif current > max_replicas:
            reason, desired = "Current number of replicas above Spec.MaxReplicas", max_replicas
        elif current < min_replicas:
            reason, desired = "Current number of replicas below Spec.MinReplicas", min_replicas
        else:
            proposed, metric, statuses, error = await self._replicas_for_metrics(hpa, scale, key, now)
            if proposed == -1:
                await self._check_vpa_conflict(hpa, namespace)
                self._set_status(hpa, current, (hpa.get("status") or {}).get("desiredReplicas", 0),
                                 statuses, False)
                await self._update_status(hpa, original)
                await self._event(hpa, "Warning", "FailedComputeMetricsReplicas", error or "")
                raise ReconcileError(f"failed to compute desired number of replicas based on listed "
                                     f"metrics for {reference}: {error}")
            partial_error = error
            rescale_metric = ""
            if proposed > desired:
                desired, rescale_metric = proposed, metric
            if desired > current:
                reason = f"{rescale_metric} above target"
            if desired < current:
                reason = "All metrics below target"
            if spec.get("behavior") is None:
                normalized = self.history.normalize(key, current, desired, min_replicas, max_replicas, now)
            else:
                normalized = self.history.normalize_with_behavior(key, spec["behavior"], current, desired,
                                                                  min_replicas, max_replicas, now)
            self._set_condition(hpa, ABLE_TO_SCALE, "True", *normalized.able)
            self._set_condition(hpa, SCALING_LIMITED, "True" if normalized.limited else "False",
                                *normalized.limit)
            desired = normalized.replicas
            rescale = desired != current
        await self._check_vpa_conflict(hpa, namespace)

        if rescale:
            scale["spec"]["replicas"] = desired
            try:
                await self.client.update_scale(resource, scale)
            except ApiError as e:
                await self._event(hpa, "Warning", "FailedRescale",
                                  f"New size: {desired}; reason: {reason}; error: {e}")
                self._set_condition(hpa, ABLE_TO_SCALE, "False", "FailedUpdateScale",
                                    f"the HPA controller was unable to update the target scale: {e}")
                self._set_status(hpa, current, (hpa.get("status") or {}).get("desiredReplicas", 0),
                                 statuses, False)
                await self._update_status(hpa, original)
                raise ReconcileError(f"failed to rescale {reference}: {e}") from None
            self._set_condition(hpa, ABLE_TO_SCALE, "True", "SucceededRescale",
                                f"the HPA controller was able to update the target scale to {desired}")
            await self._event(hpa, "Normal", "SuccessfulRescale", f"New size: {desired}; reason: {reason}")
            self.history.store_scale_event(spec.get("behavior"), key, current, desired, now)
            log.info("%s: rescaled %s from %d to %d: %s", self.name, reference, current, desired, reason)
        else:
            desired = current
        self._set_status(hpa, current, desired, statuses, rescale)
        await self._update_status(hpa, original)
        if partial_error:
            raise ReconcileError(partial_error)

    def _scale_resource(self, ref: dict) -> str:
        api_version, kind = ref.get("apiVersion", ""), ref.get("kind", "")
        try:
            rt = kinds.by_gvk(api_version, kind)
        except KeyError:
            group = api_version.rpartition("/")[0] if "/" in api_version else ""
            raise LookupError(f'no matches for kind "{kind}" in group "{group}"') from None
        if "scale" not in rt.subresources:
            raise LookupError("the server could not find the requested resource")
        return rt.key

    # ---- metrics --------------------------------------------------------------------------

    async def _replicas_for_metrics(self, hpa: dict, scale: dict, key: str, now: float
                                    ) -> tuple[int, str, list[dict] | None, str | None]:
        """``computeReplicasForMetrics``: (replicas or -1, metric name, statuses, error)."""
        try:
            selector, pods = await self._validated_selector(hpa, scale, key)
        except _MetricFailure as e:
            return -1, "", None, str(e)
        spec_replicas = int((scale.get("spec") or {}).get("replicas") or 0)
        metric_specs = (hpa.get("spec") or {}).get("metrics") or []
        statuses: list[dict] = [{"type": ""} for _ in metric_specs]
        replicas, metric, first_error, first_condition, invalid = 0, "", None, None, 0
        for i, metric_spec in enumerate(metric_specs):
            try:
                proposal = await self._replicas_for_metric(hpa, metric_spec, spec_replicas, selector,
                                                           pods, now)
            except _MetricFailure as e:
                if invalid == 0:
                    first_error, first_condition = str(e), e.condition
                invalid += 1
                continue
            statuses[i] = proposal.status
            if replicas == 0 or proposal.replicas > replicas:
                replicas, metric = proposal.replicas, proposal.metric
        error = None
        if first_error is not None:
            error = f"invalid metrics ({invalid} invalid out of {len(metric_specs)}), first error is: {first_error}"
        if invalid >= len(metric_specs) or (invalid > 0 and replicas < spec_replicas):
            if first_condition is not None:
                self._set_condition(hpa, **first_condition)
            return -1, "", statuses, error
        self._set_condition(hpa, SCALING_ACTIVE, "True", "ValidMetricFound",
                            f"the HPA was able to successfully calculate a replica count from {metric}")
        return replicas, metric, statuses, error

    async def _validated_selector(self, hpa: dict, scale: dict, key: str) -> tuple[LabelSelector, list[dict]]:
        """``validateAndParseSelector``: the target's selector and the pods it selects."""
        text = (scale.get("status") or {}).get("selector") or ""
        if not text:
            await self._event(hpa, "Warning", "SelectorRequired", "selector is required")
            self._set_condition(hpa, SCALING_ACTIVE, "False", "InvalidSelector",
                                "the HPA target's scale is missing a selector")
            raise _MetricFailure("selector is required", {})
        try:
            selector = LabelSelector.parse(text)
        except SelectorError as e:
            message = f"couldn't convert selector into a corresponding internal selector object: {e}"
            await self._event(hpa, "Warning", "InvalidSelector", message)
            self._set_condition(hpa, SCALING_ACTIVE, "False", "InvalidSelector", message)
            raise _MetricFailure(message, {}) from None
        self._selectors[key] = selector
        namespace = hpa["metadata"].get("namespace", "")
        pods = [p for p in self.pod_informer.by_index(NAMESPACE_INDEX, namespace)
                if selector.matches((p.get("metadata") or {}).get("labels") or {})]
        selecting = sorted(other for other, sel in self._selectors.items()
                           if split_key(other)[0] == namespace
                           and any(sel.matches(p["metadata"].get("labels") or {}) for p in pods))
        if len(selecting) > 1:
            message = f"pods by selector {text} are controlled by multiple HPAs: [{' '.join(selecting)}]"
            await self._event(hpa, "Warning", "AmbiguousSelector", message)
            self._set_condition(hpa, SCALING_ACTIVE, "False", "AmbiguousSelector", message)
            raise _MetricFailure(message, {})
        return selector, pods

    async def _replicas_for_metric(self, hpa: dict, spec: dict, spec_replicas: int,
                                   selector: LabelSelector, pods: list[dict], now: float) -> _Proposal:
        """``computeReplicasForMetric`` for one metric spec."""
        kind = spec.get("type")
        if kind in ("Resource", "ContainerResource"):
            source = spec.get("resource" if kind == "Resource" else "containerResource") or {}
            resource, container = source.get("name", ""), source.get("container", "")
            reason = "FailedGetResourceMetric" if kind == "Resource" else "FailedGetContainerResourceMetric"
            try:
                replicas, current, name = await self._resource_replicas(
                    hpa, source.get("target") or {}, resource, container, kind, spec_replicas,
                    selector, pods, now)
            except MetricsError as e:
                condition = await self._unable_condition(hpa, reason, str(e))
                what = (f"failed to get {resource} resource metric value" if kind == "Resource"
                        else f"failed to get {container} container metric value")
                raise _MetricFailure(f"{what}: {e}", condition) from None
            status_source = {"name": resource, "current": current}
            if kind == "ContainerResource":
                status_source = {"name": resource, "container": container, "current": current}
            key = "resource" if kind == "Resource" else "containerResource"
            return _Proposal(replicas, name, {"type": kind, key: status_source})
        # Pods, Object and External metrics come from custom.metrics.k8s.io and
        # external.metrics.k8s.io, which kvert does not serve: upstream's errors without them.
        namespace = hpa["metadata"].get("namespace", "")
        if kind in ("Pods", "Object"):
            source = spec.get(kind.lower()) or {}
            metric = (source.get("metric") or {}).get("name", "")
            unserved = "unable to fetch metrics from custom metrics API: " + NO_CUSTOM_METRICS_API
            if kind == "Pods":
                message = f"unable to get metric {metric}: {unserved}"
                condition = await self._unable_condition(hpa, "FailedGetPodsMetric", message)
                raise _MetricFailure(f"failed to get pods metric value: {message}", condition)
            described = source.get("describedObject") or {}
            message = (f"unable to get metric {metric}: {described.get('kind')} on {namespace} "
                       f"{described.get('name')}/{unserved}")
            condition = await self._unable_condition(hpa, "FailedGetObjectMetric", message)
            if (source.get("target") or {}).get("averageValue") is not None:
                message = f"failed to get {metric} object metric: {message}"
            raise _MetricFailure(f"failed to get object metric value: {message}", condition)
        if kind == "External":
            source = spec.get("external") or {}
            metric = (source.get("metric") or {}).get("name", "")
            selector_text = _go_label_selector((source.get("metric") or {}).get("selector"))
            message = (f"unable to get external metric {namespace}/{metric}/{selector_text}: unable to "
                       f"fetch metrics from external metrics API: the server could not find the "
                       f"requested resource (get {metric}.external.metrics.k8s.io)")
            condition = await self._unable_condition(hpa, "FailedGetExternalMetric", message)
            inner = (f"failed to get {metric} external metric: {message}"
                     if (source.get("target") or {}).get("averageValue") is not None
                     else f"failed to get external metric {metric}: {message}")
            raise _MetricFailure(f"failed to get {metric} external metric value: {inner}", condition)
        message = f'unknown metric source type "{kind}"'
        condition = await self._unable_condition(hpa, "InvalidMetricSourceType", message)
        raise _MetricFailure(message, condition)

    async def _resource_replicas(self, hpa: dict, target: dict, resource: str, container: str,
                                 kind: str, spec_replicas: int, selector: LabelSelector,
                                 pods: list[dict], now: float) -> tuple[int, dict, str]:
        """``computeStatusForResourceMetricGeneric``: (replicas, current value status, metric name)."""
        tolerances = self._tolerances(hpa)
        namespace = hpa["metadata"].get("namespace", "")
        if target.get("averageValue") is not None:
            average = _milli(target["averageValue"]) or 0
            try:
                metrics = await self._resource_metrics(namespace, selector, resource, container)
                replicas, usage = raw_resource_replicas(spec_replicas, average, resource, pods, metrics,
                                                        now, tolerances=tolerances, readiness=self.readiness)
            except MetricsError as e:
                raise MetricsError(f"failed to get {resource} usage: {e}") from None
            return replicas, {"averageValue": str(Quantity.from_milli(usage))}, f"{resource} resource"
        utilization_target = target.get("averageUtilization")
        if utilization_target is None:
            raise MetricsError("invalid resource metric source: neither an average utilization target "
                               "nor an average value (usage) target was set")
        try:
            metrics = await self._resource_metrics(namespace, selector, resource, container)
            replicas, utilization, raw = resource_replicas(
                spec_replicas, int(utilization_target), resource, pods, metrics, now,
                container=container, tolerances=tolerances, readiness=self.readiness)
        except MetricsError as e:
            raise MetricsError(f"failed to get {resource} utilization: {e}") from None
        name = (f"{resource} resource utilization (percentage of request)" if kind == "Resource"
                else f"{resource} container resource utilization (percentage of request)")
        return replicas, {"averageUtilization": utilization,
                          "averageValue": str(Quantity.from_milli(raw))}, name

    async def _resource_metrics(self, namespace: str, selector: LabelSelector, resource: str,
                                container: str) -> dict:
        """The metrics client's ``GetResourceMetric`` as the calculator reports its failure."""
        try:
            metrics, _ = resource_metrics(await self._pod_metrics(namespace, selector), resource,
                                          selector, container)
        except MetricsError as e:
            raise MetricsError(f"unable to get metrics for resource {resource}: {e}") from None
        return metrics

    async def _pod_metrics(self, namespace: str, selector: LabelSelector) -> list[dict]:
        if self.metrics is not None:
            items = self.metrics.pod_metrics(namespace)
            if inspect.isawaitable(items):
                items = await items
            return list(items or [])
        get_path = getattr(self.client, "get_path", None)
        if get_path is None:
            raise MetricsError("unable to fetch metrics from resource metrics API: the server could "
                               "not find the requested resource (get pods.metrics.k8s.io)")
        try:
            body = await get_path(METRICS_PATH.format(namespace=namespace),
                                  {"labelSelector": str(selector)} if not selector.empty else None)
        except ApiError as e:
            raise MetricsError(f"unable to fetch metrics from resource metrics API: {e}") from None
        return list((body or {}).get("items") or [])

    def _tolerances(self, hpa: dict) -> Tolerances:
        """``tolerancesForHpa``: the behavior's tolerances (HPAConfigurableTolerance, beta and on
        in 1.35), else the controller's."""
        behavior = (hpa.get("spec") or {}).get("behavior") or {}
        return Tolerances(_quantity_tolerance(behavior.get("scaleDown"), self.tolerance),
                          _quantity_tolerance(behavior.get("scaleUp"), self.tolerance))

    async def _unable_condition(self, hpa: dict, reason: str, message: str) -> dict:
        """``getUnableComputeReplicaCountCondition``: a Warning Event and the condition to set."""
        await self._event(hpa, "Warning", reason, message)
        return {"kind": SCALING_ACTIVE, "status": "False", "reason": reason,
                "message": f"the HPA was unable to compute the replica count: {message}"}

    # ---- VPA on the same resource -------------------------------------------------------------

    async def _check_vpa_conflict(self, hpa: dict, namespace: str) -> None:
        """Set or clear the ``VerticalPodAutoscalerConflict`` condition (an Event when it appears
        or changes)."""
        message = None
        if scaled_resources(hpa):
            try:
                vpas = (await self.client.list(VPAS, namespace=namespace)).get("items") or []
            except (ApiError, KeyError):   # the VPA CRD is not installed
                vpas = []
            message = conflicts(hpa, vpas)
        status = hpa.setdefault("status", {})
        current = status.get("conditions") or []
        if message is None:
            kept = [c for c in current if c.get("type") != VPA_CONFLICT]
            if len(kept) != len(current):
                status["conditions"] = kept
            return
        if not any(c.get("type") == VPA_CONFLICT and c.get("message") == message for c in current):
            await self._event(hpa, "Warning", VPA_CONFLICT_REASON, message)
        self._set_condition(hpa, VPA_CONFLICT, "True", VPA_CONFLICT_REASON, message)

    # ---- status ---------------------------------------------------------------------------

    def _set_condition(self, hpa: dict, kind: str, status: str, reason: str, message: str) -> None:
        """``setCondition``: replaced in place; the transition time changes only with the status."""
        # this field order is the HPA's own (the status is compared as JSON)
        condition = {"type": kind, "lastTransitionTime": format_time(self.clock.now()), "status": status,
                     "reason": reason, "message": message}
        conditions.set_condition(hpa.setdefault("status", {}), condition,
                                 same=("status", "reason", "message"))

    def _set_status(self, hpa: dict, current: int, desired: int, statuses: list[dict] | None,
                    rescale: bool) -> None:
        """``setStatus``: the status made afresh, keeping only the last scale time and the
        conditions."""
        old = hpa.get("status") or {}
        status: dict[str, Any] = {"desiredReplicas": desired, "currentMetrics": statuses or None}
        if current:
            status["currentReplicas"] = current
        if rescale:
            status["lastScaleTime"] = format_time(self.clock.now())
        elif old.get("lastScaleTime"):
            status["lastScaleTime"] = old["lastScaleTime"]
        if old.get("conditions"):
            status["conditions"] = old["conditions"]
        hpa["status"] = status

    async def _update_status(self, hpa: dict, original: dict) -> None:
        """``updateStatusIfNeeded``."""
        if hpa.get("status") == original:
            return
        try:
            await self.client.update_status(HPAS, hpa)
        except NotFound:
            return
        except ApiError as e:
            await self._event(hpa, "Warning", "FailedUpdateStatus", str(e))
            log.info("%s: updating the status of %s failed: %s", self.name, object_key(hpa), e)

    async def _event(self, hpa: dict, type_: str, reason: str, message: str) -> None:
        obj = dict(hpa)
        obj.setdefault("apiVersion", "autoscaling/v2")
        obj.setdefault("kind", "HorizontalPodAutoscaler")
        await self.recorder.record(obj, type_, reason, message)

