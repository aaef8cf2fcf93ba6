"""What components read pod usage through when it is served in the same process.

The HPA controller and the VPA recommender both take metrics.k8s.io ``PodMetrics`` from
an in-process provider (``kvert.cluster.metrics.LocalNodeMetrics`` in ``kvert up``, the
simulated fleet's ``FleetPodMetrics``) instead of over HTTP; the two components are
siblings, so the contract they share lives here.
"""

from __future__ import annotations

from collections.abc import Awaitable, Iterable
from typing import Any, Protocol


class PodMetricsProvider(Protocol):
    """In-process PodMetrics, answered at once or awaited; ``namespace`` None means every
    namespace."""

    def pod_metrics(self, namespace: str | None = None
                    ) -> Iterable[dict[str, Any]] | Awaitable[Iterable[dict[str, Any]]]: ...
