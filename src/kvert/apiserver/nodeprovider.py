"""The contract between the API server and the node agents of its own process.

Its own module, below every handler, because the node proxy, logs, exec, attach and
port-forward handlers and the server's context all name it, and none of them may import
another handler to do so.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable


@runtime_checkable
class NodeMetricsProvider(Protocol):
    """Where the API server gets node metrics from: the node agents of this process."""

    def register(self, agent: Any) -> None: ...

    def unregister(self, node: str) -> None: ...

    def nodes(self) -> list[str]: ...

    async def cadvisor(self, node: str) -> str | None:
        """The node's cAdvisor exposition, or None when it has no local agent."""

    async def kubelet_metrics(self, node: str) -> str | None:
        """The node's kubelet ``/metrics``, or None when it has no local agent."""

    async def stats_summary(self, node: str) -> dict[str, Any] | None:
        """The node's ``/stats/summary``, or None when it has no local agent."""

    def container_log(self, node: str, namespace: str, pod: str, container: str, *,
                      previous: bool = False) -> Any:
        """The log (``lines(now)``, ``finished_at``) of a pod's container from the node's
        agent, or None when it has no local agent or no such container instance."""

    async def exec(self, node: str, namespace: str, pod: str, container: str,
                   command: Sequence[str], io: Any) -> int:
        """Run ``command`` in the container with ``io`` (a runtime ``StreamIO``); its exit code."""

    async def attach(self, node: str, namespace: str, pod: str, container: str, io: Any) -> None:
        """Connect ``io`` to the container's main process."""

    async def port_forward(self, node: str, namespace: str, pod: str, port: int) -> tuple[Any, Any]:
        """A (reader, writer) connection to ``port`` in the pod."""

    def node_metrics(self) -> list[dict[str, Any]]:
        """The latest NodeMetrics of every node that has them."""

    def pod_metrics(self, namespace: str | None = None) -> list[dict[str, Any]]:
        """The latest PodMetrics (of one namespace, or all), sorted by namespace and name."""
