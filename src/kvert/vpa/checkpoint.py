"""Aggregate states <-> ``VerticalPodAutoscalerCheckpoint`` objects (``autoscaling.k8s.io/v1``).

The recommender writes one checkpoint per VPA and container so that a restarted recommender
starts from its history instead of from nothing (seed 002: "Recommender ... initialises its state
from history"). The object is upstream's (``checkpoint_writer.go``, ``SaveToCheckpoint``)::

    apiVersion: autoscaling.k8s.io/v1
    kind: VerticalPodAutoscalerCheckpoint
    metadata: {name: <vpa>-<container>, namespace: <ns>}
    spec: {vpaObjectName: <vpa>, containerName: <container>}
    status:
      version: v3
      lastUpdateTime: ...
      cpuHistogram:    {referenceTimestamp: ..., bucketWeights: {"12": 10000, ...}, totalWeight: 41.2}
      memoryHistogram: {referenceTimestamp: ..., bucketWeights: {...}, totalWeight: 3.7}
      firstSampleStart: ...
      lastSampleStart: ...
      totalSamplesCount: 2880

Like upstream, the memory peaks of windows still open at ``now`` are left out (the pods
re-report them after a restart; keeping them would count those windows twice).

Two encodings of the same fields, both loaded by either recommender:

* ``exact=False`` -- upstream's bytes (what the live recommender writes by default, so that
  upstream's recommender and kvert's take over each other's checkpoints): bucket weights scaled
  so that the heaviest is 10000 and rounded half up (``SaveToChekpoint``); times as
  ``metav1.Time`` marshals them, RFC 3339 in whole seconds, ``null`` when unset; and Go's
  ``omitempty``: no ``bucketWeights`` / ``totalWeight`` / ``totalSamplesCount`` when empty or 0
  (TestAggregateContainerStateSaveToCheckpoint, TestHistogramSaveToCheckpoint*).
* ``exact=True`` (kvert's, ``--checkpoint-exact``): a reload gives exactly the recommendation
  the aggregate gives without its open windows -- ``totalWeight`` and the times exact (times
  with microseconds when they have them), and the bucket integers keep the recommendation's
  percentiles in their buckets (``Histogram.to_checkpoint``'s ``keep_exact``: a finer scale, or
  a tie nudged, in the rare cases 10000 would move one).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kvert.vpa.aggregate import AggregateContainerState, AggregateStore
from kvert.vpa.histogram import CheckpointError
from kvert.vpa.recommendation import DEFAULT_CONFIG, RecommenderConfig
from kvert.vpa.samples import format_time_us, parse_time_us, seconds_to_us

API_VERSION = "autoscaling.k8s.io/v1"
KIND = "VerticalPodAutoscalerCheckpoint"
RESOURCE = "autoscaling.k8s.io/verticalpodautoscalercheckpoints"
SUPPORTED_CHECKPOINT_VERSION = "v3"   # model.SupportedCheckpointVersion

__all__ = ["CheckpointError", "checkpoint_name", "checkpoint_for", "checkpoint_status",
           "aggregate_from_checkpoint", "load_checkpoint", "restore_into"]


def checkpoint_name(vpa_name: str, container_name: str) -> str:
    return f"{vpa_name}-{container_name}"


def checkpoint_status(aggregate: AggregateContainerState, now: float,
                      config: RecommenderConfig | None = None, *, exact: bool = True) -> dict:
    """``SaveToCheckpoint``: the checkpoint's ``status`` (open memory windows left out), in
    kvert's exact encoding or upstream's (``exact=False``; see the module docstring).

    ``config`` names the percentiles kept exact (default: the aggregate's own config).
    """
    cfg = config or aggregate.config
    memory = aggregate.memory                           # a copy
    peaks, ends = aggregate.open_window_peaks(now)
    if peaks.size:
        memory.subtract(peaks, 1.0, ends)
    cpu_ps, mem_ps = cfg.percentiles() if exact else ((), ())
    status: dict[str, Any] = {
        "lastUpdateTime": _time(int(seconds_to_us(now)), exact),
        "version": SUPPORTED_CHECKPOINT_VERSION,
        "cpuHistogram": _histogram(aggregate.cpu.to_checkpoint(keep_exact=cpu_ps), exact),
        "memoryHistogram": _histogram(memory.to_checkpoint(keep_exact=mem_ps), exact),
        "firstSampleStart": _time(aggregate.first_sample_start_us, exact),
        "lastSampleStart": _time(aggregate.last_sample_start_us, exact),
        "totalSamplesCount": int(aggregate.total_samples_count),
    }
    if not exact and not status["totalSamplesCount"]:
        del status["totalSamplesCount"]                 # Go's omitempty
    return status


def _histogram(cp: dict, exact: bool) -> dict:
    if exact:
        return cp
    ref = cp.get("referenceTimestamp")
    out: dict[str, Any] = {"referenceTimestamp": None if ref is None else _whole_seconds(ref)}
    if cp.get("bucketWeights"):
        out["bucketWeights"] = cp["bucketWeights"]
    if cp.get("totalWeight"):
        out["totalWeight"] = cp["totalWeight"]
    return out


def _whole_seconds(text: str) -> str:
    return format_time_us(parse_time_us(text) // 1_000_000 * 1_000_000)


def checkpoint_for(aggregate: AggregateContainerState, namespace: str, vpa_name: str, container_name: str,
                   now: float, config: RecommenderConfig | None = None, *, exact: bool = True) -> dict:
    """The whole ``VerticalPodAutoscalerCheckpoint`` object for one VPA container: as
    upstream's ``checkpointWriter`` makes it, no labels, annotations or owner references."""
    return {
        "apiVersion": API_VERSION,
        "kind": KIND,
        "metadata": {"name": checkpoint_name(vpa_name, container_name), "namespace": namespace},
        "spec": {"vpaObjectName": vpa_name, "containerName": container_name},
        "status": checkpoint_status(aggregate, now, config, exact=exact),
    }


def load_checkpoint(aggregate: AggregateContainerState, status: Mapping[str, Any]) -> None:
    """``LoadFromCheckpoint``: add a checkpoint status's history to ``aggregate``.

    Raises CheckpointError for another version or malformed content (and leaves the aggregate
    unchanged)."""
    if not isinstance(status, Mapping):
        raise CheckpointError("checkpoint has no status")
    version = status.get("version")
    if version != SUPPORTED_CHECKPOINT_VERSION:
        raise CheckpointError(f"unsupported checkpoint version {version}")
    count = status.get("totalSamplesCount") or 0
    if isinstance(count, bool) or not isinstance(count, (int, float)) or count < 0 or count != int(count):
        raise CheckpointError(f"totalSamplesCount must be a non-negative integer, not {count!r}")
    first = _parse(status.get("firstSampleStart"), "firstSampleStart")
    last = _parse(status.get("lastSampleStart"), "lastSampleStart")
    cpu, memory = aggregate.cpu, aggregate.memory      # copies: the aggregate changes only below
    memory.load_checkpoint(status.get("memoryHistogram") or {})
    cpu.load_checkpoint(status.get("cpuHistogram") or {})
    aggregate.cpu, aggregate.memory = cpu, memory
    aggregate.total_samples_count = int(count)
    aggregate.first_sample_start_us = first
    aggregate.last_sample_start_us = last


def aggregate_from_checkpoint(checkpoint: Mapping[str, Any], config: RecommenderConfig | None = None,
                              now: float = 0.0) -> AggregateContainerState:
    """A new aggregate holding a checkpoint's history (the object or just its status)."""
    status = checkpoint.get("status") if "status" in checkpoint or "spec" in checkpoint else checkpoint
    aggregate = AggregateContainerState(config or DEFAULT_CONFIG, now)
    load_checkpoint(aggregate, status or {})
    return aggregate


def restore_into(store: AggregateStore, checkpoint: Mapping[str, Any], now: float = 0.0,
                 config: RecommenderConfig | None = None) -> tuple[str, str, str]:
    """Load a checkpoint object into the store's aggregate for its VPA and container
    (replacing it). Returns the key (namespace, vpa, container)."""
    meta = checkpoint.get("metadata") or {}
    spec = checkpoint.get("spec") or {}
    namespace = meta.get("namespace") or "default"
    vpa, container = spec.get("vpaObjectName"), spec.get("containerName")
    if not vpa or not container:
        raise CheckpointError("checkpoint spec needs vpaObjectName and containerName")
    store.set(namespace, vpa, container, aggregate_from_checkpoint(checkpoint, config or store.config, now))
    return namespace, vpa, container


def _time(us: int | None, exact: bool = True) -> str | None:
    """An RFC 3339 time; ``exact=False``: truncated to the second, as Go's ``metav1.Time``
    marshals."""
    if us is None:
        return None
    return format_time_us(us if exact else us // 1_000_000 * 1_000_000)


def _parse(value: Any, name: str) -> int | None:
    if value is None:
        return None
    try:
        return parse_time_us(value)
    except ValueError as e:
        raise CheckpointError(f"{name}: {e}") from None

