"""The Vertical Pod Autoscaler's recommendation model (seeds 002 and 003).

* ``histogram``      exponential and decaying histograms on numpy arrays, checkpoint form;
                     ``HistogramBank``: many histograms as the rows of one array
* ``aggregate``      ``AggregateContainerState`` per (VPA, container name), a row of an
                     ``AggregateBank``; ``AggregateStore``
* ``estimators``     percentile / margin / confidence / minimum estimators (decorators), and
                     ``estimate_rows``: the same for every row of a bank at once
* ``recommendation`` ``RecommenderConfig`` (every constant, per-VPA annotation overrides),
                     ``recommend(aggregates, vpa) -> status.recommendation``, policy capping
* ``checkpoint``     aggregates <-> ``VerticalPodAutoscalerCheckpoint`` objects
* ``samples``        the samples CSV format (offline history) and exact RFC 3339 times

The live recommender, updater and admission controller build on these; ``kvert vpa recommend``
runs the same model offline over a CSV file.
"""

from kvert.vpa.aggregate import AggregateContainerState, AggregateStore
from kvert.vpa.checkpoint import aggregate_from_checkpoint, checkpoint_for, restore_into
from kvert.vpa.histogram import CheckpointError, DecayingHistogram, ExponentialOptions, Histogram
from kvert.vpa.recommendation import (
                                      ANNOTATIONS,
                                      DEFAULT_CONFIG,
                                      ContainerRecommendation,
                                      RecommenderConfig,
                                      apply_policy,
                                      cap_to_container_limit_range,
                                      container_policy,
                                      parse_recommendation,
                                      recommend,
                                      recommend_containers,
)
from kvert.vpa.samples import SampleError, Samples, parse_samples, read_samples

__all__ = [
    "ANNOTATIONS", "AggregateContainerState", "AggregateStore", "CheckpointError", "ContainerRecommendation",
    "DEFAULT_CONFIG", "DecayingHistogram", "ExponentialOptions", "Histogram", "RecommenderConfig",
    "SampleError", "Samples", "aggregate_from_checkpoint", "apply_policy", "cap_to_container_limit_range",
    "checkpoint_for", "container_policy", "parse_recommendation", "parse_samples", "read_samples",
    "recommend", "recommend_containers", "restore_into",
]
