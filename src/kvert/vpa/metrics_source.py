"""Where the live recommender gets container usage.

Every source answers ``await source.usage_table()`` with a ``UsageTable``: one row per
(namespace, pod, container) with the sample time (seconds), CPU (cores) and memory working set
(bytes) as numpy columns, NaN where unknown. ``generation`` names the key list: two tables of
one source with the same generation share the very same ``keys`` list, so a consumer maps
rows to its own slots once per generation instead of once per row per loop.

The sources below read metrics.k8s.io ``PodMetrics`` objects (``await source.pod_metrics()``)
and convert them with ``usage_table_from_pod_metrics``::

    {"metadata": {"namespace": "default", "name": "hamster-7d9f-abcde"},
     "timestamp": "2024-01-01T00:01:00Z", "window": "15s",
     "containers": [{"name": "hamster", "usage": {"cpu": "512345678n", "memory": "262144Ki"}}]}

* ``LocalMetricsSource(provider)``      the in-process ``kvert.cluster.metrics.LocalNodeMetrics``
  (what ``kvert up`` serves under ``/apis/metrics.k8s.io``);
* ``HttpMetricsSource(client)``         ``GET /apis/metrics.k8s.io/v1beta1/pods`` of any API
  server through ``kvert.client.http.HttpClient``;
* ``NodeAgentsMetricsSource(agents)``   straight from in-process ``NodeAgent`` objects (for
  simulations without a metrics provider); each call is one scrape of every agent (an agent
  reports rates from its second scrape on).
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from kvert.api.meta import parse_time
from kvert.api.quantity import Quantity, QuantityError
from kvert.client.metrics import PodMetricsProvider

log = logging.getLogger(__name__)

METRICS_PODS_PATH = "/apis/metrics.k8s.io/v1beta1/pods"


UsageKey = tuple[str, str, str]     # (namespace, pod, container)


@dataclass
class UsageTable:
    """Container usage, one row per ``keys`` entry (see the module docstring)."""

    keys: list[UsageKey]
    generation: int
    time: np.ndarray     # seconds (float64)
    cpu: np.ndarray      # cores, NaN when unknown
    memory: np.ndarray   # working-set bytes, NaN when unknown

    def __len__(self) -> int:
        return len(self.keys)


class MetricsSource(Protocol):
    async def usage_table(self) -> UsageTable: ...


def usage_table_from_pod_metrics(items: Sequence[dict], previous: UsageTable | None = None,
                                 now: float | None = None) -> UsageTable:
    """PodMetrics objects as a UsageTable. ``previous`` (this source's last table) lends its
    keys list and generation when the rows name the same containers in the same order; a
    PodMetrics without a readable ``timestamp`` is dated ``now`` (NaN when not given)."""
    keys: list[UsageKey] = []
    times: list[float] = []
    cpu: list[float] = []
    memory: list[float] = []
    stamps: dict[Any, float] = {}
    fallback = np.nan if now is None else float(now)
    for pm in items:
        meta = pm.get("metadata") or {}
        ns, pod = meta.get("namespace") or "default", meta.get("name", "")
        stamp = pm.get("timestamp")
        t = stamps.get(stamp)
        if t is None:
            try:
                t = parse_time(stamp)
            except (TypeError, ValueError, AttributeError):
                t = fallback
            stamps[stamp] = t
        for c in pm.get("containers") or []:
            usage = c.get("usage") or {}
            keys.append((ns, pod, c.get("name", "")))
            times.append(t)
            q = _quantity(usage.get("cpu"))
            cpu.append(np.nan if q is None else q.nanos / 1e9)
            q = _quantity(usage.get("memory"))
            memory.append(np.nan if q is None else float(q.value()))
    if previous is not None and previous.keys == keys:
        keys, generation = previous.keys, previous.generation
    else:
        generation = 0 if previous is None else previous.generation + 1
    return UsageTable(keys, generation, np.array(times, dtype=np.float64), np.array(cpu, dtype=np.float64),
                      np.array(memory, dtype=np.float64))


def _quantity(value: Any) -> Quantity | None:
    try:
        return Quantity.parse(value)
    except (QuantityError, TypeError, ValueError):
        return None


class _PodMetricsTable:
    """``usage_table()`` for a source that has ``pod_metrics()``."""

    _last: UsageTable | None = None

    async def pod_metrics(self) -> list[dict]:
        raise NotImplementedError

    async def usage_table(self) -> UsageTable:
        self._last = usage_table_from_pod_metrics(await self.pod_metrics(), self._last)
        return self._last


class LocalMetricsSource(_PodMetricsTable):
    """Wraps a ``LocalNodeMetrics`` (or anything with ``pod_metrics(namespace=None)``, sync or async)."""

    def __init__(self, provider: PodMetricsProvider, namespace: str | None = None) -> None:
        self.provider = provider
        self.namespace = namespace

    async def pod_metrics(self) -> list[dict]:
        result = self.provider.pod_metrics(self.namespace)
        if inspect.isawaitable(result):
            result = await result
        return list(result or [])


class PathReader(Protocol):
    """A client that GETs any API path (``kvert.client.http.HttpClient``): the metrics API is
    not a resource of the ``Client`` protocol."""

    async def get_path(self, path: str) -> dict[str, Any]: ...


class HttpMetricsSource(_PodMetricsTable):
    """PodMetrics of every namespace from the API server's metrics.k8s.io API."""

    def __init__(self, client: PathReader, path: str = METRICS_PODS_PATH) -> None:
        self.client = client
        self.path = path

    async def pod_metrics(self) -> list[dict]:
        body = await self.client.get_path(self.path)
        return list((body or {}).get("items") or [])


class NodeAgentsMetricsSource(_PodMetricsTable):
    """PodMetrics scraped from in-process node agents (``await agent.pod_metrics()`` each); an
    agent that fails is skipped (logged) so one broken node does not stop the recommender."""

    def __init__(self, agents: Iterable[Any]) -> None:
        self.agents = agents

    async def pod_metrics(self) -> list[dict]:
        out: list[dict] = []
        for agent in list(self.agents):
            try:
                out.extend(await agent.pod_metrics())
            except asyncio.CancelledError:
                raise
            except Exception:  # noqa: BLE001
                log.warning("scraping pod metrics of %s failed", getattr(agent, "name", agent), exc_info=True)
        return out


__all__ = ["METRICS_PODS_PATH", "HttpMetricsSource", "LocalMetricsSource", "MetricsSource",
           "NodeAgentsMetricsSource", "UsageKey", "UsageTable", "usage_table_from_pod_metrics"]
