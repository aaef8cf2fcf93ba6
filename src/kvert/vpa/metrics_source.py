"""Where the live recommender gets container usage: metrics.k8s.io ``PodMetrics`` objects.

Every source answers ``await source.pod_metrics()`` with a list of PodMetrics dicts::

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
from typing import Any, Iterable, Protocol

log = logging.getLogger(__name__)

METRICS_PODS_PATH = "/apis/metrics.k8s.io/v1beta1/pods"


class MetricsSource(Protocol):
    async def pod_metrics(self) -> list[dict]: ...


class LocalMetricsSource:
    """Wraps a ``LocalNodeMetrics`` (or anything with ``pod_metrics(namespace=None)``, sync or async)."""

    def __init__(self, provider: Any, namespace: str | None = None) -> None:
        self.provider = provider
        self.namespace = namespace

    async def pod_metrics(self) -> list[dict]:
        result = self.provider.pod_metrics(self.namespace)
        if inspect.isawaitable(result):
            result = await result
        return list(result or [])


class HttpMetricsSource:
    """PodMetrics of every namespace from the API server's metrics.k8s.io API."""

    def __init__(self, client: Any, path: str = METRICS_PODS_PATH) -> None:
        self.client = client
        self.path = path

    async def pod_metrics(self) -> list[dict]:
        get_path = getattr(self.client, "get_path", None)
        if get_path is not None:
            body = await get_path(self.path)
        else:   # kvert.client.http.HttpClient
            body = await self.client._call("GET", self.path)
        return list((body or {}).get("items") or [])


class NodeAgentsMetricsSource:
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
           "NodeAgentsMetricsSource"]
