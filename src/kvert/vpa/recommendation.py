"""From aggregated usage to a VPA's ``status.recommendation`` (seed 002's recommendation model,
seed 003's estimators; ``logic/recommender.go``, ``routines/`` and ``utils/vpa/capping.go`` upstream).

For each container of a VPA with ``mode`` not ``Off`` that has an aggregate -- with samples or
not: upstream's cluster feeder makes one for every container of a pod its VPA matches, and an
empty one recommends the pod minimum (below) -- :

===========  =======================  ======================================================
bound        percentile (cpu, memory)  then
===========  =======================  ======================================================
lowerBound   p50, p50                  +15% margin, x(1 + 0.001/confidence)^-2, minimum
target       p90, p90                  +15% margin, minimum
upperBound   p95, p95                  +15% margin, x(1 + 1/confidence)^+1, minimum
===========  =======================  ======================================================

CPU percentiles are of the CPU usage samples (weighted by the container's CPU request, at least
0.1 core); memory percentiles are of the per-container daily peaks (one per 24h window, OOMs
included as bumped-up peaks) over the last 8 days; both decay with a 24h half-life. The
confidence is the history length in days (see ``estimators.get_confidence``). The minimum is
the pod's 25m CPU / 250Mi memory shared equally among the recommended containers. Then, as
upstream: amounts are rounded up to ``round-cpu-millicores`` / ``round-memory-bytes`` (1 by
default), ``uncappedTarget`` keeps the target, the optional integer-CPU post-processor rounds
CPU up to whole cores, and every bound is capped to the container policy's ``minAllowed`` /
``maxAllowed`` (a missing or zero bound does not cap; the global max allowed applies where the
policy has none). ``controlledResources`` limits which resources appear.

Configuration: ``RecommenderConfig`` holds every constant with upstream's default. A VPA can
override any of them with an annotation ``vpa.kvert.io/<name>``, where ``<name>`` is upstream's
recommender flag (``ANNOTATIONS`` lists them all):

====================================================  =============================  =========
annotation (``vpa.kvert.io/`` + ...)                  field                          default
====================================================  =============================  =========
recommendation-margin-fraction                        safety_margin_fraction         0.15
pod-recommendation-min-cpu-millicores                 pod_min_cpu_millicores         25
pod-recommendation-min-memory-mb                      pod_min_memory_mb              250
target-cpu-percentile                                 target_cpu_percentile          0.9
recommendation-lower-bound-cpu-percentile             lower_bound_cpu_percentile     0.5
recommendation-upper-bound-cpu-percentile             upper_bound_cpu_percentile     0.95
confidence-interval-cpu                               confidence_interval_cpu        24h
target-memory-percentile                              target_memory_percentile       0.9
recommendation-lower-bound-memory-percentile          lower_bound_memory_percentile  0.5
recommendation-upper-bound-memory-percentile          upper_bound_memory_percentile  0.95
confidence-interval-memory                            confidence_interval_memory     24h
round-cpu-millicores                                  round_cpu_millicores           1
round-memory-bytes                                    round_memory_bytes             1
cpu-integer-post-processor-enabled                    cpu_integer_post_processor...  false
container-recommendation-max-allowed-cpu              max_allowed_cpu                none
container-recommendation-max-allowed-memory           max_allowed_memory             none
memory-aggregation-interval                           memory_aggregation_interval    24h
memory-aggregation-interval-count                     memory_aggregation_interval... 8
memory-histogram-decay-half-life                      memory_histogram_decay_half... 24h
cpu-histogram-decay-half-life                         cpu_histogram_decay_half_life  24h
oom-bump-up-ratio                                     oom_bump_up_ratio              1.2
oom-min-bump-up-bytes                                 oom_min_bump_up_bytes          104857600
====================================================  =============================  =========

and kvert's names for upstream's compiled-in constants: ``upper-bound-confidence-multiplier``
(1), ``upper-bound-confidence-exponent`` (1), ``lower-bound-confidence-multiplier`` (0.001),
``lower-bound-confidence-exponent`` (-2), ``min-sample-weight`` (0.1), ``histogram-epsilon``
(0.0001), ``histogram-bucket-size-growth`` (0.05), ``cpu-histogram-first-bucket-size`` (0.01
cores), ``cpu-histogram-max-value`` (1000 cores), ``memory-histogram-first-bucket-size`` (1e7
bytes), ``memory-histogram-max-value`` (1e12 bytes). Durations take Go's form (``36h``,
``90m``, ``1h30m``) or seconds; booleans ``true``/``false``; max allowed values are quantities
(``2``, ``4Gi``). Aggregation and histogram settings take effect when a container's history
starts (they shape what is stored). A container policy's ``targetCPUPercentile``,
``targetMemoryPercentile``, ``oomBumpUpRatio``, ``oomMinBumpUp``,
``memoryAggregationIntervalCount`` and ``memoryAggregationIntervalSeconds`` override the VPA's
values for that container -- the last four, as upstream 1.6-1.7, only with the PerVPAConfig
feature gate (``per_vpa_config``; the live recommender's ``--feature-gates``). A bad annotation
is reported (``RecommenderConfig.for_vpa`` returns the problems) and ignored.

kvert's opt-in policies (docs/kubernetes-choices.md), annotations in the same scheme:
``capacity-aware`` (``true``/``false``), ``memory-pressure-upsize`` (``true``/``false``:
``kvert.vpa.pressure``, AEP-9926), ``model`` (``upstream`` or ``in-place``:
``IN_PLACE_MODEL``) and ``workload``:

* ``service`` (the default, upstream's model): CPU from the percentiles above;
* ``batch`` (seed 002's batch workloads care about throughput, not latency): the CPU target is
  the mean of the decaying CPU usage histogram (``Histogram.mean``) instead of its 90th
  percentile, margin and minimum applied as to a percentile; the CPU lower bound is at most and
  the upper bound at least that mean. Memory stays the percentile of peaks: a batch job still
  OOMs at its peak;
* ``auto``: ``batch`` for the containers of pods that run to completion -- restartPolicy
  ``OnFailure`` or ``Never`` (seed 002's suggestion), or a container whose last run ended with
  exit code 0 (a worker that a Deployment restarts after each job) -- ``service`` otherwise
  (``resolve_workload``; the live recommender sees the pods, an offline recommendation without
  pods reads ``auto`` as ``service``).

Rounding: like upstream, every intermediate float is truncated to whole millicores / bytes, and
quantities print as upstream 1.5+ prints them (``QuantityFromCPUAmount``: ``NewScaledQuantity(m,
-3)``; ``QuantityFromMemoryAmount``: ``NewQuantity(bytes, BinarySI)``): ``688m``, ``250Mi``,
``319572800``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from functools import lru_cache
from typing import Any

import numpy as np

from kvert.api.durations import SECOND, DurationError, parse_go_duration_ns
from kvert.api.quantity import BINARY_SI, DECIMAL_SI, Quantity, QuantityError
from kvert.vpa.estimators import (
    CPU,
    MEMORY,
    RESOURCES,
    AggregateLike,
    AggregateRows,
    ConfidenceMultiplier,
    CpuMeanEstimator,
    MarginEstimator,
    MinResourcesEstimator,
    PercentileEstimator,
    ResourceEstimator,
    Resources,
    RowParameters,
    Trace,
    estimate_rows,
    resource_amount,
    resource_amounts,
    scale_resource,
)
from kvert.vpa.histogram import ExponentialOptions
from kvert.vpa.model import RecommendationModel

ANNOTATION_PREFIX = "vpa.kvert.io/"
DEFAULT_CONTAINER_POLICY = "*"
DAY = 86400.0


def _opt(default: Any, name: str, kind: str, source: str) -> Any:
    return field(default=default, metadata={"annotation": ANNOTATION_PREFIX + name, "kind": kind,
                                            "source": source})


@dataclass(frozen=True)
class RecommenderConfig:
    """Every constant of the recommendation model, with upstream's defaults (``source`` in each
    field's metadata says where the value comes from). Durations are seconds."""

    # -- recommendation (recommender flags, config/config.go; logic/recommender.go) -------------
    safety_margin_fraction: float = _opt(0.15, "recommendation-margin-fraction", "float", "flag")
    pod_min_cpu_millicores: float = _opt(25.0, "pod-recommendation-min-cpu-millicores", "float", "flag")
    pod_min_memory_mb: float = _opt(250.0, "pod-recommendation-min-memory-mb", "float", "flag")
    target_cpu_percentile: float = _opt(0.9, "target-cpu-percentile", "percentile", "flag")
    lower_bound_cpu_percentile: float = _opt(0.5, "recommendation-lower-bound-cpu-percentile", "percentile", "flag")
    upper_bound_cpu_percentile: float = _opt(0.95, "recommendation-upper-bound-cpu-percentile", "percentile", "flag")
    confidence_interval_cpu: float = _opt(DAY, "confidence-interval-cpu", "duration", "flag")
    target_memory_percentile: float = _opt(0.9, "target-memory-percentile", "percentile", "flag")
    lower_bound_memory_percentile: float = _opt(0.5, "recommendation-lower-bound-memory-percentile", "percentile",
                                                "flag")
    upper_bound_memory_percentile: float = _opt(0.95, "recommendation-upper-bound-memory-percentile", "percentile",
                                                "flag")
    confidence_interval_memory: float = _opt(DAY, "confidence-interval-memory", "duration", "flag")
    upper_bound_confidence_multiplier: float = _opt(1.0, "upper-bound-confidence-multiplier", "float",
                                                    "logic/recommender.go")
    upper_bound_confidence_exponent: float = _opt(1.0, "upper-bound-confidence-exponent", "float",
                                                  "logic/recommender.go")
    lower_bound_confidence_multiplier: float = _opt(0.001, "lower-bound-confidence-multiplier", "float",
                                                    "logic/recommender.go")
    lower_bound_confidence_exponent: float = _opt(-2.0, "lower-bound-confidence-exponent", "float",
                                                  "logic/recommender.go")
    round_cpu_millicores: int = _opt(1, "round-cpu-millicores", "positive-int", "flag")
    round_memory_bytes: int = _opt(1, "round-memory-bytes", "positive-int", "flag")
    cpu_integer_post_processor_enabled: bool = _opt(False, "cpu-integer-post-processor-enabled", "bool", "flag")
    max_allowed_cpu: int | None = _opt(None, "container-recommendation-max-allowed-cpu", "cpu", "flag")
    max_allowed_memory: int | None = _opt(None, "container-recommendation-max-allowed-memory", "memory", "flag")
    # -- aggregation (flags; model/aggregations_config.go) --------------------------------------
    memory_aggregation_interval: float = _opt(DAY, "memory-aggregation-interval", "duration", "flag")
    memory_aggregation_interval_count: int = _opt(8, "memory-aggregation-interval-count", "positive-int", "flag")
    memory_histogram_decay_half_life: float = _opt(DAY, "memory-histogram-decay-half-life", "duration", "flag")
    cpu_histogram_decay_half_life: float = _opt(DAY, "cpu-histogram-decay-half-life", "duration", "flag")
    oom_bump_up_ratio: float = _opt(1.2, "oom-bump-up-ratio", "ratio", "flag")
    oom_min_bump_up_bytes: float = _opt(100.0 * 1024 * 1024, "oom-min-bump-up-bytes", "float", "flag")
    min_sample_weight: float = _opt(0.1, "min-sample-weight", "positive", "model/aggregations_config.go")
    histogram_epsilon: float = _opt(0.001 * 0.1, "histogram-epsilon", "positive", "model/aggregations_config.go")
    histogram_bucket_size_growth: float = _opt(0.05, "histogram-bucket-size-growth", "positive",
                                               "model/aggregations_config.go")
    cpu_histogram_first_bucket_size: float = _opt(0.01, "cpu-histogram-first-bucket-size", "positive",
                                                  "model/aggregations_config.go")
    cpu_histogram_max_value: float = _opt(1000.0, "cpu-histogram-max-value", "positive", "model/aggregations_config.go")
    memory_histogram_first_bucket_size: float = _opt(1e7, "memory-histogram-first-bucket-size", "positive",
                                                     "model/aggregations_config.go")
    memory_histogram_max_value: float = _opt(1e12, "memory-histogram-max-value", "positive",
                                             "model/aggregations_config.go")
    # -- kvert's opt-in policies (docs/kubernetes-choices.md) ----------------------------------
    # never recommend more than the largest node that could host the pod can allocate; the
    # updater does not evict a pod whose replacement would stay Pending
    capacity_aware: bool = _opt(False, "capacity-aware", "bool", "kvert")
    # AEP-9926: sustained memory PSI near the limit adds a pressure peak (kvert.vpa.pressure)
    memory_pressure_upsize: bool = _opt(False, "memory-pressure-upsize", "bool", "kvert")
    # "upstream", or "in-place": resizes no longer restart pods, so a shorter memory of usage,
    # a smaller margin and faster-closing bounds (IN_PLACE_MODEL); the updater resizes toward
    # the target without waiting for a pod to age
    model: str = _opt("upstream", "model", "model", "kvert")
    # CPU's own margin (None: recommendation-margin-fraction): CPU beyond its request is slowed,
    # not killed, and an in-place resize up follows within minutes
    cpu_safety_margin_fraction: float | None = _opt(None, "recommendation-margin-fraction-cpu", "float", "kvert")
    # "service" (upstream), "batch": CPU target from the mean usage, not a percentile (seed 002's
    # batch workloads); "auto": batch for pods that run to completion (resolve_workload)
    workload: str = _opt("service", "workload", "workload", "kvert")
    # upstream recommends for a container with no usage sample yet (the pod minimum, 25m / 250Mi
    # shared); false: not before its first sample -- kvert's in-place model, whose updater
    # resizes at once, would otherwise shrink a new workload to the minimum for a loop
    recommend_without_samples: bool = _opt(True, "recommend-without-samples", "bool", "kvert")
    # -- feature gates (process-wide, not per VPA: no annotation) ------------------------------
    # PerVPAConfig: a container policy's oomBumpUpRatio, oomMinBumpUp and
    # memoryAggregationInterval{Seconds,Count} count (upstream 1.5+, off by default there:
    # kvert.vpa.features). True here so a config made without the recommender (kvert vpa
    # recommend, the tests) reads them; the Recommender sets it from its gates.
    per_vpa_config: bool = field(default=True, metadata={"kind": "bool", "source": "gate"})

    # -- derived ------------------------------------------------------------------------------

    def cpu_histogram_options(self) -> ExponentialOptions:
        return _options(self.cpu_histogram_max_value, self.cpu_histogram_first_bucket_size,
                        1.0 + self.histogram_bucket_size_growth, self.histogram_epsilon)

    def memory_histogram_options(self) -> ExponentialOptions:
        return _options(self.memory_histogram_max_value, self.memory_histogram_first_bucket_size,
                        1.0 + self.histogram_bucket_size_growth, self.histogram_epsilon)

    @property
    def memory_aggregation_window(self) -> float:
        """How long memory peaks (and an idle aggregate) are kept: interval x count (8 days)."""
        return self.memory_aggregation_interval * self.memory_aggregation_interval_count

    def percentiles(self) -> tuple[tuple[float, ...], tuple[float, ...]]:
        """(cpu, memory) percentiles the recommendation reads: lower, target, upper."""
        return ((self.lower_bound_cpu_percentile, self.target_cpu_percentile, self.upper_bound_cpu_percentile),
                (self.lower_bound_memory_percentile, self.target_memory_percentile,
                 self.upper_bound_memory_percentile))

    # -- per VPA / per container --------------------------------------------------------------

    def with_annotations(self, annotations: Mapping[str, str] | None) -> tuple[RecommenderConfig, list[str]]:
        """This config with the ``vpa.kvert.io/*`` annotations applied, and the problems found
        (each names the annotation; a bad value is ignored)."""
        changes: dict[str, Any] = {}
        problems: list[str] = []
        for key, raw in (annotations or {}).items():
            if not key.startswith(ANNOTATION_PREFIX):
                continue
            name = ANNOTATIONS.get(key)
            if name is None:
                known = ", ".join(sorted(a[len(ANNOTATION_PREFIX):] for a in ANNOTATIONS))
                problems.append(f"{key}: unknown setting; known: {known}")
                continue
            try:
                changes[name] = _parse_value(_FIELDS[name].metadata["kind"], raw)
            except ValueError as e:
                problems.append(f"{key}: {e}")
        if changes.get("model") == "in-place":
            changes = {**IN_PLACE_MODEL, **changes}
        config = replace(self, **changes) if changes else self
        problem = _order_problem(config)
        if problem:
            problems.append(f"{ANNOTATION_PREFIX}*-percentile: {problem}; the percentile annotations are ignored")
            changes = {k: v for k, v in changes.items() if not k.endswith("_percentile")}
            config = replace(self, **changes)
        return config, problems

    def for_vpa(self, vpa: Mapping | None) -> tuple[RecommenderConfig, list[str]]:
        """The config a VPA object asks for through its annotations (and the problems)."""
        annotations = ((vpa or {}).get("metadata") or {}).get("annotations") or {}
        return self.with_annotations(annotations)

    def for_container(self, policy: Mapping | None) -> RecommenderConfig:
        """This config with a container policy's own overrides (today's VPA API fields; the
        ones behind upstream's PerVPAConfig gate only when ``per_vpa_config``)."""
        if not policy:
            return self
        changes: dict[str, Any] = {}
        for api_field, name, kind in _POLICY_OVERRIDES:
            if policy.get(api_field) is None:
                continue
            if api_field in PER_VPA_CONFIG_FIELDS and not self.per_vpa_config:
                continue      # upstream: "... is set but PerVPAConfig feature gate is disabled"
            try:
                value = _parse_value(kind, policy[api_field])
            except ValueError:
                continue  # validation rejects these on write; never fail a recommendation on one
            changes[name] = value
        if not changes:
            return self
        candidate = replace(self, **changes)
        if _order_problem(candidate):
            return self
        return candidate


@lru_cache(maxsize=64)
def _options(max_value: float, first: float, ratio: float, epsilon: float) -> ExponentialOptions:
    return ExponentialOptions(max_value, first, ratio, epsilon)


MODELS = ("upstream", "in-place")
WORKLOADS = ("service", "batch", "auto")
BATCH_RESTART_POLICIES = ("OnFailure", "Never")
# What the in-place model changes (a VPA's own annotations still win). Resizes no longer restart
# pods, so the model follows usage over the last hour or so instead of days, and trades margin
# for speed: CPU and memory decay with a 30-minute half-life (a request comes down within an
# hour of a load going away, and a CPU spike is followed while it lasts instead of an hour
# after it); memory is still the peak per 5 minutes (over 6 hours), with a 5% margin, since
# memory beyond its limit is an OOM kill; CPU has no margin: CPU beyond its request is only
# slowed, and the 90th percentile of the last half hour is raised within minutes of a rise.
# The bounds close within an hour of history. On examples/scenarios/quality.yaml this leaves
# under 20% of CPU and memory requests unused with no OOM kill where upstream's model has none
# (tests/sim/test_quality_suite.py).
IN_PLACE_MODEL: dict[str, Any] = {
    "cpu_histogram_decay_half_life": 1800.0,
    "memory_histogram_decay_half_life": 1800.0,
    "memory_aggregation_interval": 300.0,
    "memory_aggregation_interval_count": 72,
    "safety_margin_fraction": 0.05,
    "cpu_safety_margin_fraction": 0.0,
    "confidence_interval_cpu": 3600.0,
    "confidence_interval_memory": 3600.0,
    "recommend_without_samples": False,
}
_FIELDS = {f.name: f for f in fields(RecommenderConfig)}
ANNOTATIONS: dict[str, str] = {f.metadata["annotation"]: f.name for f in fields(RecommenderConfig)
                               if "annotation" in f.metadata}
DEFAULT_CONFIG = RecommenderConfig()

_POLICY_OVERRIDES = (
    ("targetCPUPercentile", "target_cpu_percentile", "percentile"),
    ("targetMemoryPercentile", "target_memory_percentile", "percentile"),
    ("oomBumpUpRatio", "oom_bump_up_ratio", "ratio"),
    ("oomMinBumpUp", "oom_min_bump_up_bytes", "memory"),
    ("memoryAggregationIntervalCount", "memory_aggregation_interval_count", "positive-int"),
    ("memoryAggregationIntervalSeconds", "memory_aggregation_interval", "duration"),
)
# the container policy fields upstream reads only with its PerVPAConfig gate
# (AggregateContainerState.UpdateFromPolicy); targetCPUPercentile / targetMemoryPercentile are kvert's
PER_VPA_CONFIG_FIELDS = frozenset({"oomBumpUpRatio", "oomMinBumpUp", "memoryAggregationIntervalSeconds",
                                   "memoryAggregationIntervalCount"})

def parse_duration(text: Any) -> float:
    """Seconds from a Go duration (``24h``, ``1h30m``, ``90s``) or a number of seconds; it must
    be positive, and it takes no sign (a recommender flag's spelling)."""
    if isinstance(text, (int, float)) and not isinstance(text, bool):
        value = float(text)
    else:
        s = str(text).strip()
        try:
            value = float(s)
        except ValueError:
            try:
                if s[:1] in "+-":
                    raise DurationError(s)
                value = parse_go_duration_ns(s) / SECOND
            except DurationError:
                raise ValueError(f"'{text}' is not a duration (e.g. 24h, 90m, 1h30m or seconds)") from None
    if not math.isfinite(value) or value <= 0:
        raise ValueError(f"'{text}' must be a positive duration")
    return value


def _parse_value(kind: str, raw: Any) -> Any:
    text = str(raw).strip()
    if kind == "bool":
        if text.lower() in ("true", "1", "yes"):
            return True
        if text.lower() in ("false", "0", "no"):
            return False
        raise ValueError(f"'{raw}' is not true or false")
    if kind == "duration":
        return parse_duration(raw)
    if kind in ("model", "workload"):
        choices = MODELS if kind == "model" else WORKLOADS
        if text not in choices:
            raise ValueError(f"'{raw}' is not one of {', '.join(choices)}")
        return text
    if kind in ("cpu", "memory"):
        try:
            q = Quantity.parse(raw)
        except QuantityError as e:
            raise ValueError(str(e)) from None
        if q.sign() < 0:
            raise ValueError(f"'{raw}' must not be negative")
        return q.milli_value() if kind == "cpu" else q.value()
    if kind in ("positive-int",):
        try:
            count = int(text)
        except ValueError:
            raise ValueError(f"'{raw}' is not a whole number") from None
        if count < 1:
            raise ValueError(f"'{raw}' must be at least 1")
        return count
    try:
        value = float(Quantity.parse(raw).amount) if kind in ("percentile", "ratio") else float(text)
    except (ValueError, QuantityError):
        raise ValueError(f"'{raw}' is not a number") from None
    if not math.isfinite(value):
        raise ValueError(f"'{raw}' is not a finite number")
    if kind == "percentile" and not 0 < value <= 1:
        raise ValueError(f"'{raw}' must be in (0, 1]")
    if kind == "ratio" and value < 1:
        raise ValueError(f"'{raw}' must be at least 1")
    if kind == "positive" and value <= 0:
        raise ValueError(f"'{raw}' must be positive")
    return value


def _order_problem(c: RecommenderConfig) -> str | None:
    for res, (lo, target, hi) in zip(RESOURCES, c.percentiles()):
        if not lo <= target <= hi:
            return (f"{res} percentiles must satisfy lower bound <= target <= upper bound "
                    f"(got {lo:g} <= {target:g} <= {hi:g})")
    return None


# -- estimators ----------------------------------------------------------------------------------

@dataclass(frozen=True)
class Estimators:
    """The three estimator chains of ``CreatePodResourceRecommender`` (without the minimum,
    which depends on how many containers share the pod minimum)."""

    target: ResourceEstimator
    lower_bound: ResourceEstimator
    upper_bound: ResourceEstimator


def create_estimators(config: RecommenderConfig = DEFAULT_CONFIG) -> Estimators:
    c = config
    target: ResourceEstimator = PercentileEstimator(c.target_cpu_percentile, c.target_memory_percentile)
    lower: ResourceEstimator = PercentileEstimator(c.lower_bound_cpu_percentile, c.lower_bound_memory_percentile)
    upper: ResourceEstimator = PercentileEstimator(c.upper_bound_cpu_percentile, c.upper_bound_memory_percentile)
    if c.workload == "batch":
        target = CpuMeanEstimator(target, "target")
        lower = CpuMeanEstimator(lower, "lower")
        upper = CpuMeanEstimator(upper, "upper")
    target = MarginEstimator(c.safety_margin_fraction, target, c.cpu_safety_margin_fraction)
    lower = MarginEstimator(c.safety_margin_fraction, lower, c.cpu_safety_margin_fraction)
    upper = MarginEstimator(c.safety_margin_fraction, upper, c.cpu_safety_margin_fraction)
    upper = ConfidenceMultiplier(c.upper_bound_confidence_multiplier, c.upper_bound_confidence_exponent, upper,
                                 c.confidence_interval_cpu, c.confidence_interval_memory)
    lower = ConfidenceMultiplier(c.lower_bound_confidence_multiplier, c.lower_bound_confidence_exponent, lower,
                                 c.confidence_interval_cpu, c.confidence_interval_memory)
    return Estimators(target, lower, upper)


def row_parameters(configs: list[RecommenderConfig], containers: np.ndarray) -> RowParameters:
    """``estimators.RowParameters`` for rows with these (per-container) configs, each row's VPA
    recommending ``containers`` containers (sharing the pod minimum)."""
    def column(get: Any) -> np.ndarray:
        return np.array([get(c) for c in configs], dtype=np.float64).reshape(len(configs))
    share = 1.0 / np.maximum(np.asarray(containers, dtype=np.float64), 1.0)
    base_cpu = column(lambda c: resource_amount(c.pod_min_cpu_millicores * 0.001 * 1000.0))
    base_memory = column(lambda c: resource_amount(c.pod_min_memory_mb * 1024 * 1024))
    return RowParameters(
        cpu_percentiles=np.array([(c.target_cpu_percentile, c.lower_bound_cpu_percentile,
                                   c.upper_bound_cpu_percentile) for c in configs]).reshape(-1, 3),
        memory_percentiles=np.array([(c.target_memory_percentile, c.lower_bound_memory_percentile,
                                      c.upper_bound_memory_percentile) for c in configs]).reshape(-1, 3),
        margin=column(lambda c: c.safety_margin_fraction),
        upper_multiplier=column(lambda c: c.upper_bound_confidence_multiplier),
        upper_exponent=column(lambda c: c.upper_bound_confidence_exponent),
        lower_multiplier=column(lambda c: c.lower_bound_confidence_multiplier),
        lower_exponent=column(lambda c: c.lower_bound_confidence_exponent),
        cpu_interval=column(lambda c: c.confidence_interval_cpu),
        memory_interval=column(lambda c: c.confidence_interval_memory),
        min_cpu=resource_amounts(base_cpu * share), min_memory=resource_amounts(base_memory * share),
        cpu_mean=np.array([c.workload == "batch" for c in configs], dtype=bool).reshape(len(configs)),
        cpu_margin=column(lambda c: c.safety_margin_fraction if c.cpu_safety_margin_fraction is None
                          else c.cpu_safety_margin_fraction))


class EstimatorChainModel(RecommendationModel):
    """The model of one container under ``config`` (upstream's or the in-place model, a service
    or a batch workload: ``workload: auto`` must be resolved first), in a VPA recommending
    ``containers`` containers: ``create_estimators``'s chains with the container's share of
    the pod minimum, one aggregate at a time or every row at once (``row_parameters``,
    ``estimators.estimate_rows``)."""

    def __init__(self, config: RecommenderConfig = DEFAULT_CONFIG, containers: int = 1) -> None:
        self.config = config
        self.containers = containers

    def estimate(self, state: AggregateLike, traces: dict[str, Trace] | None = None) -> dict[str, Resources]:
        chains = create_estimators(self.config)
        minimum = pod_minimum(self.config, self.containers)
        amounts: dict[str, Resources] = {}
        for bound, estimator in (("target", chains.target), ("lowerBound", chains.lower_bound),
                                 ("upperBound", chains.upper_bound)):
            trace: Trace | None = None
            if traces is not None:
                trace = traces.setdefault(bound, [])
            amounts[bound] = MinResourcesEstimator(minimum, estimator).estimate(state, trace)
        return amounts

    def row_parameters(self, rows: int) -> RowParameters:
        return row_parameters([self.config] * rows, np.full(rows, self.containers))

    def estimate_rows(self, bank: AggregateRows, rows: np.ndarray) -> np.ndarray:
        return estimate_rows(bank, rows, self.row_parameters(rows.size))


def runs_to_completion(pod: Mapping | None, container: str | None = None) -> bool:
    """Whether a pod looks like a batch workload's (``workload: auto``): its restartPolicy is
    ``OnFailure`` or ``Never`` (Job pods), or the container (any, when ``container`` is None) has
    a last run that ended with exit code 0 (a worker restarted after each job)."""
    if not pod:
        return False
    if (pod.get("spec") or {}).get("restartPolicy") in BATCH_RESTART_POLICIES:
        return True
    for cs in (pod.get("status") or {}).get("containerStatuses") or ():
        if container is not None and cs.get("name") != container:
            continue
        term = ((cs.get("lastState") or {}).get("terminated")) or {}
        if term.get("exitCode") == 0 and term.get("finishedAt"):
            return True
    return False


def resolve_workload(config: RecommenderConfig, batch: bool) -> RecommenderConfig:
    """``config`` with ``workload: auto`` decided: ``batch`` when ``batch`` (the recommender saw
    the container's pods run to completion, ``runs_to_completion``), else ``service``."""
    if config.workload != "auto":
        return config
    return replace(config, workload="batch" if batch else "service")


def pod_minimum(config: RecommenderConfig, containers: int) -> dict[str, int]:
    """The pod minimum (25m, 250Mi) split equally among ``containers`` (truncated, as upstream)."""
    fraction = 1.0 / containers
    return {CPU: scale_resource(resource_amount(config.pod_min_cpu_millicores * 0.001 * 1000.0), fraction),
            MEMORY: scale_resource(resource_amount(config.pod_min_memory_mb * 1024 * 1024), fraction)}


# -- policies ------------------------------------------------------------------------------------

def container_policy(vpa: Mapping | None, container_name: str) -> dict | None:
    """``GetContainerResourcePolicy``: the policy naming the container, else the ``*`` one."""
    policies = ((((vpa or {}).get("spec") or {}).get("resourcePolicy") or {}).get("containerPolicies")) or []
    default = None
    for policy in policies:
        if not isinstance(policy, Mapping):
            continue
        if policy.get("containerName") == container_name:
            return dict(policy)
        if policy.get("containerName") == DEFAULT_CONTAINER_POLICY:
            default = dict(policy)
    return default


def controlled_resources(policy: Mapping | None) -> tuple[str, ...]:
    """``controlledResources`` of a container policy (default cpu and memory)."""
    if policy and policy.get("controlledResources") is not None:
        return tuple(r for r in policy["controlledResources"] if r in RESOURCES)
    return RESOURCES


def scaling_disabled(policy: Mapping | None) -> bool:
    if not policy:
        return False
    return policy.get("mode") == "Off"


# -- the recommendation --------------------------------------------------------------------------

BOUNDS = ("target", "lowerBound", "upperBound", "uncappedTarget")   # the API's field order


@dataclass
class ContainerRecommendation:
    """One ``containerRecommendations`` entry: quantities per bound (``Quantity`` keeps the
    spelling a capping policy used, e.g. ``500Mi``), and how they were derived."""

    container_name: str
    target: dict[str, Quantity]
    lower_bound: dict[str, Quantity]
    upper_bound: dict[str, Quantity]
    uncapped_target: dict[str, Quantity]
    capping: list[str] = field(default_factory=list)        # e.g. "memory capped to maxAllowed"
    explanation: dict[str, list] = field(default_factory=dict)  # bound -> [(step, {res: amount})]

    def bound(self, name: str) -> dict[str, Quantity]:
        return {"target": self.target, "lowerBound": self.lower_bound, "upperBound": self.upper_bound,
                "uncappedTarget": self.uncapped_target}[name]

    def amounts(self, name: str = "target") -> dict[str, int]:
        """A bound as integers: cpu in millicores, memory in bytes (rounded up)."""
        return {r: (q.milli_value() if r == CPU else q.value()) for r, q in self.bound(name).items()}

    def to_status(self) -> dict:
        out: dict[str, Any] = {"containerName": self.container_name}
        for name in BOUNDS:
            out[name] = {r: str(q) for r, q in sorted(self.bound(name).items())}
        return out


def recommend_containers(aggregates: Mapping[str, Any], vpa: Mapping | None = None,
                         config: RecommenderConfig | None = None, *,
                         explain: bool = False) -> list[ContainerRecommendation]:
    """The recommendation for a VPA's containers, sorted by container name.

    ``aggregates`` maps container names to their aggregate states (``aggregate.AggregateStore
    .for_vpa``); ``vpa`` (a VerticalPodAutoscaler object, optional) gives annotations and the
    resource policy; ``config`` the recommender-wide defaults.
    """
    base, _ = (config or DEFAULT_CONFIG).for_vpa(vpa)
    chosen: dict[str, tuple[Any, dict | None]] = {}
    for name, state in aggregates.items():
        policy = container_policy(vpa, name)
        if scaling_disabled(policy) or (state.total_samples_count <= 0 and not base.recommend_without_samples):
            continue
        chosen[name] = (state, policy)
    if not chosen:
        return []
    annotations = ((vpa or {}).get("metadata") or {}).get("annotations") or {}
    results = []
    for name in sorted(chosen):
        state, policy = chosen[name]
        # a container policy overrides no pod minimum: every container's share is the same
        cfg = resolve_workload(base.for_container(policy), bool(getattr(state, "batch", False)))
        traces: dict[str, Trace] = {}
        amounts = EstimatorChainModel(cfg, len(chosen)).estimate(state, traces if explain else None)
        rec = finish_recommendation(name, amounts, cfg, policy, annotations)
        rec.explanation = {b: [(step, dict(v)) for step, v in t] for b, t in traces.items()}
        results.append(rec)
    return results


def finish_recommendation(name: str, amounts: Mapping[str, Mapping[str, int]], cfg: RecommenderConfig,
                          policy: Mapping | None, annotations: Mapping[str, str]) -> ContainerRecommendation:
    """From the estimated amounts of a container (``{"target"|"lowerBound"|"upperBound":
    {"cpu": millicores, "memory": bytes}}``) to its recommendation: rounding, controlled
    resources, the integer-CPU post-processor and the policy's caps."""
    controlled = controlled_resources(policy)
    quantities = {b: {r: _quantity(r, _round_up(cfg, r, int(a[r]))) for r in RESOURCES if r in controlled}
                  for b, a in amounts.items()}
    uncapped = dict(quantities["target"])
    if cfg.cpu_integer_post_processor_enabled and \
            annotations.get(f"vpa-post-processor.kubernetes.io/{name}_integerCPU") == "true":
        for b in ("target", "lowerBound", "upperBound"):
            if CPU in quantities[b]:
                quantities[b][CPU] = _round_up_to_cores(quantities[b][CPU])
    capping: list[str] = []
    for b in ("target", "lowerBound", "upperBound"):
        quantities[b], notes = apply_policy(quantities[b], policy, cfg)
        if b == "target":
            capping = notes
    return ContainerRecommendation(name, quantities["target"], quantities["lowerBound"], quantities["upperBound"],
                                   uncapped, capping)


def recommend(aggregates: Mapping[str, Any], vpa: Mapping | None = None,
              config: RecommenderConfig | None = None) -> dict:
    """``status.recommendation`` for a VPA, exactly as the VPA status holds it::

        {"containerRecommendations": [{"containerName": "hamster",
            "target": {"cpu": "587m", "memory": "250Mi"}, "lowerBound": {...},
            "upperBound": {...}, "uncappedTarget": {...}}]}

    (``{}`` when the VPA has no container to recommend for, as Go's ``omitempty`` prints an
    empty ``containerRecommendations``.)
    """
    containers = recommend_containers(aggregates, vpa, config)
    if not containers:
        return {}
    return {"containerRecommendations": [c.to_status() for c in containers]}


# A bound moving by at most this fraction of the written one is not worth a status write.
BOUND_CHANGE_FRACTION = 0.1


def status_changed_materially(old: Mapping, new: Mapping, fraction: float = BOUND_CHANGE_FRACTION) -> bool:
    """Whether ``new`` is worth writing over ``old`` (two VPA statuses): anything but the
    recommendation's bounds differs (targets, uncapped targets, containers, conditions), or a
    lowerBound/upperBound amount moved by more than ``fraction`` of the old one
    (docs/kubernetes-choices.md; upstream writes whenever anything differs)."""
    if {k: v for k, v in old.items() if k != "recommendation"} != \
            {k: v for k, v in new.items() if k != "recommendation"}:
        return True
    olds = {c.get("containerName"): c for c in (old.get("recommendation") or {}).get("containerRecommendations") or []}
    news = {c.get("containerName"): c for c in (new.get("recommendation") or {}).get("containerRecommendations") or []}
    if olds.keys() != news.keys() or bool(old.get("recommendation")) != bool(new.get("recommendation")):
        return True
    for name, n in news.items():
        o = olds[name]
        if {k: v for k, v in o.items() if k not in ("lowerBound", "upperBound")} != \
                {k: v for k, v in n.items() if k not in ("lowerBound", "upperBound")}:
            return True
        for bound in ("lowerBound", "upperBound"):
            ob, nb = o.get(bound) or {}, n.get(bound) or {}
            if ob.keys() != nb.keys():
                return True
            for r, value in nb.items():
                if ob[r] == value:
                    continue
                qo, qn = quantity_or_none(ob[r]), quantity_or_none(value)
                if qo is None or qn is None or abs(qn.nanos - qo.nanos) > fraction * abs(qo.nanos):
                    return True
    return False


def _quantity(resource: str, amount: int) -> Quantity:
    # QuantityFromCPUAmount: NewScaledQuantity(m, -3), DecimalSI; QuantityFromMemoryAmount: since
    # upstream 1.5, NewQuantity(bytes, BinarySI) (TestResourcesAsResourceList).
    return Quantity.from_milli(amount, DECIMAL_SI) if resource == CPU else Quantity.from_int(amount, BINARY_SI)


def _round_up(cfg: RecommenderConfig, resource: str, amount: int) -> int:
    """``RoundUpToScale`` with ``round-cpu-millicores`` / ``round-memory-bytes`` (0 stays 0)."""
    step = cfg.round_cpu_millicores if resource == CPU else cfg.round_memory_bytes
    if step <= 1 or amount == 0:
        return amount
    return -(-amount // step) * step


def _round_up_to_cores(q: Quantity) -> Quantity:
    cores = -(-q.nanos // 10**9)
    return Quantity(cores * 10**9, q.format)


def apply_policy(resources: Mapping[str, Quantity], policy: Mapping | None,
                 config: RecommenderConfig = DEFAULT_CONFIG) -> tuple[dict[str, Quantity], list[str]]:
    """``ApplyVPAPolicy`` for one bound: raise to ``minAllowed``, lower to ``maxAllowed`` (the
    global max allowed where the policy has none); zero or missing bounds do not cap. Returns
    the capped resources and notes like ``"cpu capped to maxAllowed"``."""
    min_allowed = resource_quantities((policy or {}).get("minAllowed"))
    max_allowed = resource_quantities((policy or {}).get("maxAllowed"))
    if config.max_allowed_cpu is not None and CPU not in max_allowed:
        max_allowed[CPU] = Quantity.from_milli(config.max_allowed_cpu)
    if config.max_allowed_memory is not None and MEMORY not in max_allowed:
        max_allowed[MEMORY] = Quantity.from_int(config.max_allowed_memory)
    out: dict[str, Quantity] = {}
    notes: list[str] = []
    for r, q in resources.items():
        lo = min_allowed.get(r)
        if lo is not None and not lo.is_zero() and q < lo:
            q = lo
            notes.append(f"{r} capped to minAllowed")
        hi = max_allowed.get(r)
        if hi is not None and not hi.is_zero() and q > hi:
            q = hi
            notes.append(f"{r} capped to maxAllowed")
        out[r] = q
    return out, notes


def quantity_or_none(value: Any) -> Quantity | None:
    """``value`` as a Quantity, or None when it is not one (objects read from the API may
    hold anything)."""
    try:
        return Quantity.parse(value)
    except (QuantityError, TypeError, ValueError):
        return None


def resource_quantities(rl: Any) -> dict[str, Quantity]:
    """A resource list's parseable entries as Quantities."""
    out: dict[str, Quantity] = {}
    for name, value in (rl or {}).items() if isinstance(rl, Mapping) else ():
        q = quantity_or_none(value)
        if q is not None:
            out[name] = q
    return out


def container_requests(container: Mapping) -> dict[str, Quantity]:
    """A container's requests, a limit standing in for a request it lacks (Kubernetes'
    defaulting)."""
    res = container.get("resources") or {}
    out = resource_quantities(res.get("limits"))
    out.update(resource_quantities(res.get("requests")))
    return out


def parse_recommendation(recommendation: Mapping | None) -> dict[str, ContainerRecommendation]:
    """Read a VPA's ``status.recommendation`` back (for the updater and admission): container
    name -> ContainerRecommendation (missing bounds are empty)."""
    out: dict[str, ContainerRecommendation] = {}
    for item in (recommendation or {}).get("containerRecommendations") or []:
        name = item.get("containerName")
        if not name:
            continue
        bounds = {b: resource_quantities(item.get(b)) for b in BOUNDS}
        out[name] = ContainerRecommendation(name, bounds["target"], bounds["lowerBound"], bounds["upperBound"],
                                            bounds["uncappedTarget"])
    return out


# -- LimitRange capping (admission / updater side) -----------------------------------------------

def cap_to_container_limit_range(resources: Mapping[str, Quantity], container: Mapping,
                                 limit_range_item: Mapping | None) -> tuple[dict[str, Quantity], list[str]]:
    """``applyContainerLimitRange``: keep a container's requests such that its limits -- which
    scale with the requests, keeping the container's limit/request ratio (its own limit, else
    the LimitRange's default) -- stay within the ``Container`` LimitRange item's ``max``, and
    requests and limits at or above its ``min``. Returns the capped resources and notes."""
    if not limit_range_item:
        return dict(resources), []
    requests = resource_quantities((container.get("resources") or {}).get("requests"))
    limits = resource_quantities((container.get("resources") or {}).get("limits"))
    default = resource_quantities(limit_range_item.get("default"))
    lr_min = resource_quantities(limit_range_item.get("min"))
    lr_max = resource_quantities(limit_range_item.get("max"))
    out: dict[str, Quantity] = {}
    notes: list[str] = []
    for r, q in resources.items():
        hi = boundary_request(r, requests, limits, lr_max, default) if limit_range_item.get("max") else None
        lo = boundary_request(r, requests, limits, lr_min, default) if limit_range_item.get("min") else None
        if r in lr_min and (lo is None or lr_min[r] > lo):
            lo = lr_min[r]   # the request itself must be at least min too
        if lo is not None and not lo.is_zero() and q < lo:
            q = lo
            notes.append(f"{r} capped to fit Min in container LimitRange")
        if hi is not None and not hi.is_zero() and q > hi:
            q = hi
            notes.append(f"{r} capped to fit Max in container LimitRange")
        out[r] = q
    return out, notes


def _original_limit(resource: str, limits: Mapping[str, Quantity],
                    default_limits: Mapping[str, Quantity]) -> Quantity | None:
    """``getOriginalLimit``: the container's limit, else the LimitRange default; 0 is no limit."""
    limit = limits.get(resource, default_limits.get(resource))
    return None if limit is None or limit.is_zero() else limit


def boundary_request(resource: str, requests: Mapping[str, Quantity], limits: Mapping[str, Quantity],
                     boundary_limits: Mapping[str, Quantity], default_limits: Mapping[str, Quantity]) -> Quantity:
    """``GetBoundaryRequest``: the request whose proportional limit is the boundary limit (zero:
    no boundary)."""
    limit = _original_limit(resource, limits, default_limits)
    if limit is None:
        return Quantity(0)
    boundary = boundary_limits.get(resource, Quantity(0))
    request = requests.get(resource)
    if request is None or request.is_zero():
        return boundary
    return _scale(resource, request, limit, boundary)


def _scale(resource: str, scaled: Quantity, base: Quantity, result: Quantity) -> Quantity:
    """``scaleQuantityProportionallyCPU/Mem``: floor(scaled * result / base), in millicores for
    cpu and whole units otherwise."""
    if resource == CPU:
        if base.is_zero():
            return scaled
        return Quantity.from_milli(scaled.milli_value() * result.milli_value() // base.milli_value(), scaled.format)
    return Quantity.from_int(scaled.value() * result.value() // base.value(), scaled.format)


def proportional_limits(limits: Mapping[str, Any] | None, requests: Mapping[str, Any] | None,
                        recommendation: Mapping[str, Quantity],
                        default_limits: Mapping[str, Any] | None = None) -> tuple[dict[str, Quantity], list[str]]:
    """``GetProportionalLimit``: new limits keeping each limit's ratio to its request when the
    request becomes the recommendation (for admission and in-place updates). Limits to leave
    unchanged are absent from the result."""
    lim, req = resource_quantities(limits), resource_quantities(requests)
    dflt = resource_quantities(default_limits)
    out: dict[str, Quantity] = {}
    notes: list[str] = []
    for r in (CPU, MEMORY):
        limit = _original_limit(r, lim, dflt)
        if limit is None:
            continue
        rec = recommendation.get(r)
        if rec is None or rec.is_zero():
            notes.append(f"{r}: limit NOT set since recommendedRequest is nil or 0")
            continue
        original = req.get(r)
        if original is None:
            out[r] = rec
        elif original.is_zero():
            if rec > limit:
                out[r] = rec
                notes.append(f"{r}: limit raised to recommendedRequest since originalRequest is 0")
            else:
                notes.append(f"{r}: limit left unchanged since originalRequest is 0")
        elif original.milli_value() == limit.milli_value():
            out[r] = rec
        else:
            out[r] = _scale(r, limit, original, rec)
    return out, notes
