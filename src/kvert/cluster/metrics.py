"""Node metrics for an API server whose node agents run in the same process.

``LocalNodeMetrics`` is the ``NodeMetricsProvider`` (:mod:`kvert.apiserver.metrics`) of
``kvert up``: it samples the in-process node agents every ``resolution`` seconds, as
metrics-server scrapes kubelets, and answers the node proxy paths from them.
"""

from __future__ import annotations

import asyncio
import logging
from collections import Counter
from collections.abc import Sequence
from typing import Any

from kvert.api.errors import ApiError
from kvert.api.prometheus import exposition
from kvert.apiserver.metrics import DEFAULT_RESOLUTION
from kvert.apiserver.server import ApiServer
from kvert.clock import Clock
from kvert.clock.periodic import run_every
from kvert.kubelet.agent import NodeAgent
from kvert.kubelet.metrics import UsageTracker, node_metrics, node_summary, parse_resource_metrics
from kvert.kubelet.runtime.base import StreamIO
from kvert.kubelet.summary import agent_summary

log = logging.getLogger(__name__)


class LocalNodeMetrics:
    """A NodeMetricsProvider over in-process ``NodeAgent`` objects, sampled every
    ``resolution`` seconds (on the clock) by ``run()``; ``sample()`` takes one round."""

    def __init__(self, clock: Clock, resolution: float = DEFAULT_RESOLUTION):
        if resolution <= 0:
            raise ValueError("the metrics resolution must be positive")
        self.clock = clock
        # the API server whose registry lists the nodes run elsewhere, sampled through their
        # kubelet endpoints as metrics-server samples kubelets (set by the one who has it)
        self.server: ApiServer | None = None
        self._remote_trackers: dict[str, UsageTracker] = {}
        self.resolution = float(resolution)
        self._stopping = asyncio.Event()
        self._agents: dict[str, NodeAgent] = {}
        self._node: dict[str, dict] = {}
        self._pods: dict[str, list[dict]] = {}
        self._sampled: dict[str, list[float]] = {}   # node -> the times of its last two samples

    # -- agents ---------------------------------------------------------------------------------

    def register(self, agent: NodeAgent) -> None:
        self._agents[agent.name] = agent

    def unregister(self, node: str) -> None:
        self._agents.pop(node, None)
        self._node.pop(node, None)
        self._pods.pop(node, None)
        self._sampled.pop(node, None)

    def nodes(self) -> list[str]:
        return sorted(self._agents)

    # -- sampling -------------------------------------------------------------------------------

    async def run(self) -> None:
        """Sample every ``resolution`` seconds until ``stop()`` (a supervised component)."""
        self._stopping.clear()
        await run_every(self.clock, self.resolution, self.sample, self._stopping, log=log,
                        failure="node metrics sampling failed")

    def stop(self) -> None:
        self._stopping.set()

    async def sample(self) -> None:
        await self._sample_remote()
        for name, agent in list(self._agents.items()):
            try:
                pods = await agent.pod_metrics()
                node = agent.node_metrics()
            except asyncio.CancelledError:
                raise
            except Exception:  # noqa: BLE001 - one node failing must not stop the others
                log.warning("sampling the metrics of node %s failed", name, exc_info=True)
                continue
            if self._agents.get(name) is not agent:
                continue                             # unregistered meanwhile
            now = self.clock.now()
            times = self._sampled.setdefault(name, [])
            times[:] = [*times[-1:], now]
            if node is None and len(times) == 2 and now > times[0]:
                node = node_metrics(name, 0, 0, timestamp=now, window=now - times[0])
            if node is not None and not node["metadata"].get("labels"):
                labels = _node_labels(agent)
                if labels:
                    node["metadata"]["labels"] = labels
            if node is None:
                self._node.pop(name, None)
            else:
                self._node[name] = node
            self._pods[name] = list(pods)

    async def _sample_remote(self) -> None:
        """metrics-server's scrape of ``/metrics/resource`` for nodes without an agent here."""
        if self.server is None:
            return
        from kvert.apiserver import kubeletclient
        names = [n["metadata"]["name"] for n in self.server.registry.list("nodes")["items"]]
        remote = [n for n in names if n not in self._agents]
        for name in set(self._remote_trackers) - set(remote):
            del self._remote_trackers[name]
            self._node.pop(name, None)
            self._pods.pop(name, None)
        for name in remote:
            try:
                target = kubeletclient.node_target(self.server, name)
                if not isinstance(target, kubeletclient.RemoteNode):
                    continue            # an agent in this process after all: nothing to scrape
                text = await target.get_text("metrics/resource")
            except asyncio.CancelledError:
                raise
            except Exception as e:  # noqa: BLE001 - an unreachable node must not stop the others
                log.debug("scraping node %s: %s", name, e)
                continue
            pods = []
            for (namespace, pod_name), statuses in parse_resource_metrics(text).items():
                try:
                    pod = self.server.registry.get("pods", pod_name, namespace)
                except ApiError:
                    continue
                pods.append((pod, statuses))
            tracker = self._remote_trackers.setdefault(name, UsageTracker())
            node, pod_objs = node_summary(name, pods, tracker, self.clock.now())
            if node is not None:
                self._node[name] = node
            self._pods[name] = pod_objs

    # -- reading --------------------------------------------------------------------------------

    async def cadvisor(self, node: str) -> str | None:
        agent = self._agents.get(node)
        return None if agent is None else await agent.metrics_text()

    async def stats_summary(self, node: str) -> dict[str, Any] | None:
        """The node's Summary API (``/stats/summary``, with PSI), or None without a local agent."""
        agent = self._agents.get(node)
        return None if agent is None else await agent_summary(agent, self.clock.now())

    async def kubelet_metrics(self, node: str) -> str | None:
        agent = self._agents.get(node)
        return None if agent is None else await kubelet_metrics_text(agent)

    def container_log(self, node: str, namespace: str, pod: str, container: str, *,
                      previous: bool = False) -> Any:
        """A container's log from the node's in-process agent (None: no agent, no log)."""
        agent = self._agents.get(node)
        if agent is None:
            return None
        return agent.container_log(namespace, pod, container, previous=previous)

    def _agent(self, node: str) -> NodeAgent:
        agent = self._agents.get(node)
        if agent is None:
            raise LookupError(f'node "{node}" has no node agent in this process')
        return agent

    async def exec(self, node: str, namespace: str, pod: str, container: str,
                   command: Sequence[str], io: StreamIO) -> int:
        return await self._agent(node).exec(namespace, pod, container, command, io)

    async def attach(self, node: str, namespace: str, pod: str, container: str, io: StreamIO) -> None:
        await self._agent(node).attach(namespace, pod, container, io)

    async def port_forward(self, node: str, namespace: str, pod: str, port: int) -> tuple[Any, Any]:
        return await self._agent(node).port_forward(namespace, pod, port)

    def node_metrics(self) -> list[dict]:
        return [self._node[n] for n in sorted(self._node)]

    def pod_metrics(self, namespace: str | None = None) -> list[dict]:
        items = [p for pods in self._pods.values() for p in pods
                 if not namespace or p["metadata"].get("namespace") == namespace]
        return sorted(items, key=lambda p: (p["metadata"].get("namespace", ""), p["metadata"]["name"]))


async def kubelet_metrics_text(agent: NodeAgent) -> str:
    """A node agent's kubelet ``/metrics``: its name, running pods and containers by state."""
    states: Counter[str] = Counter()
    running: set[str] = set()
    for st in await agent.runtime.list_containers():
        states[st.state] += 1
        if st.state == "running":
            running.add(st.id)
    pods = sum(1 for ps in agent.pods.values()
               if any(rec.id in running for rec in ps.containers.values()))
    return exposition([
        ("kubelet_node_name", "gauge", "The node's name. The count is always 1.",
         [({"node": agent.name}, 1)]),
        ("kubelet_running_pods", "gauge", "Number of pods that have a running pod sandbox",
         [({}, pods)]),
        ("kubelet_running_containers", "gauge", "Number of containers currently running",
         [({"container_state": s}, states.get(s, 0)) for s in ("created", "exited", "running")]),
    ]) + agent.resize_metrics.text(ps.resize for ps in agent.pods.values() if ps.active)


def _node_labels(agent: NodeAgent) -> dict[str, str]:
    node = getattr(agent, "node", None) or {}
    labels = (node.get("metadata") or {}).get("labels")
    if labels:
        return dict(labels)
    get = getattr(agent, "labels", None)
    return dict(get()) if callable(get) else {}
