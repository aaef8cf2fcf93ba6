"""A running cluster as ``kvert up`` assembles it: store, PKI, tokens, API server, kubeconfig.

Later components (scheduler, node agents, controllers, VPA) join here with their own
tokens and clients.
"""

from __future__ import annotations

import datetime
from pathlib import Path

from kvert.auth.tokens import ADMIN, TokenAuthenticator
from kvert.apiserver.certs import ensure_pki
from kvert.apiserver.kubeconfig import write_kubeconfig
from kvert.apiserver.server import ApiServer
from kvert.client import InProcessClient
from kvert.clock import Clock, WallClock
from kvert.store import open_store


QUOTA_RESYNC_SECONDS = 60.0


class Cluster:
    def __init__(self, *, data_dir: Path, store_url: str, host: str = "127.0.0.1", port: int = 6443,
                 kubeconfig: Path | None = None, clock: Clock | None = None,
                 compaction_interval: float = 300.0, nodes: int = 0,
                 node_flags: dict | None = None, kubelet_config: Path | None = None,
                 metrics_resolution: float = 15.0,
                 vpa_intervals: tuple[float, float] = (60.0, 60.0), vpa: bool = True,
                 vpa_history=None, scheduler_config=None):
        self.data_dir = data_dir
        self.store_url = store_url
        self.host = host
        self.port = port
        self.kubeconfig = kubeconfig or data_dir / "kubeconfig"
        self.clock = clock or WallClock()
        self.compaction_interval = compaction_interval
        self.nodes = nodes
        self.node_flags = node_flags or {}
        self.kubelet_config = kubelet_config
        self.metrics_resolution = metrics_resolution
        self.vpa_intervals = vpa_intervals   # (recommender, updater) seconds
        self.vpa = vpa                       # False: no recommender, updater, webhook (--no-vpa)
        self.vpa_history = vpa_history       # the recommender's history provider (kvert.vpa.history)
        self.scheduler_config = scheduler_config   # a KubeSchedulerConfiguration (None: default)
        self.metrics = None          # the node agents' metrics, served by the API server
        self.url = ""
        self.server: ApiServer | None = None
        self.store = None
        self.components: list = []   # each with run() and stop(), started after the API
        self.vpa_webhook = None
        self.vpa_informers = None    # the informer caches the VPA recommender and updater share

    async def start(self) -> None:
        from kvert.apiserver.admission import default_chain
        from kvert.apiserver.crds import CRDController, vpa_crds
        from kvert.apiserver.metrics import LocalNodeMetrics

        self.data_dir.mkdir(parents=True, exist_ok=True)
        now = datetime.datetime.fromtimestamp(self.clock.now(), tz=datetime.timezone.utc)
        pki = ensure_pki(self.data_dir / "pki", now)
        tokens = TokenAuthenticator.load_or_create(self.data_dir / "tokens.csv")
        self.store = open_store(self.store_url, clock=self.clock)
        self.metrics = LocalNodeMetrics(self.clock, self.metrics_resolution)
        self.server = ApiServer(self.store, self.clock, authenticator=tokens,
                                admission=default_chain(self.store, self.clock),
                                metrics_provider=self.metrics)
        await self.server.bootstrap()
        self.server.run_background(self.server.compact_history(self.compaction_interval))
        self.server.run_background(self.server.resync_quotas(QUOTA_RESYNC_SECONDS))
        crds = CRDController(InProcessClient(self.server.registry, user="system:apiserver"), self.clock)
        self.server.run_background(crds.run())
        vpa = vpa_crds()
        await crds.install(vpa)
        for crd in vpa:
            await crds.wait_established(crd["metadata"]["name"])
        self.url = await self.server.start(self.host, self.port, pki.server_context())
        write_kubeconfig(self.kubeconfig, self.url, pki.ca_pem(), tokens.token_for(ADMIN))
        self.components = self._components()
        for component in self.components:
            self.server.run_background(component.run())
        if self.vpa:
            await self._start_vpa_admission(pki)
        self.server.run_background(self.metrics.run())

    async def _start_vpa_admission(self, pki) -> None:
        """The VPA admission controller as on a real cluster: an HTTPS webhook the API server
        calls, registered through a MutatingWebhookConfiguration."""
        from kvert.vpa.webhook import VpaWebhookServer, register_webhook, webhook_configuration
        client = self._client("system:vpa-admission-controller")
        self.vpa_webhook = VpaWebhookServer(client, self.clock, ssl_context=pki.server_context(),
                                            informers=True)
        await self.vpa_webhook.run()
        await register_webhook(client, webhook_configuration(self.vpa_webhook.url, pki.ca_pem()))

    def _client(self, user: str) -> InProcessClient:
        return InProcessClient(self.server.registry, user=user)

    def _components(self) -> list:
        from kvert.controllers import ControllerManager
        from kvert.scheduler import Scheduler
        components: list = [
            ControllerManager(self._client("system:kube-controller-manager"), self.clock),
            Scheduler(self._client("system:kube-scheduler"), self.clock, self.scheduler_config),
        ]
        components += [self._node_agent(f"node-{i}") for i in range(1, self.nodes + 1)]
        components += self._vpa() if self.vpa else []
        return components

    def _vpa(self) -> list:
        """The VPA recommender (fed by the nodes' metrics) and updater, reading VPAs, pods and
        targets through one set of informer caches."""
        from kvert.client.cache import InformerFactory
        from kvert.vpa.metrics_source import LocalMetricsSource
        from kvert.vpa.query import QueryService
        from kvert.vpa.recommender import Recommender
        from kvert.vpa.updater import Updater
        self.vpa_informers = InformerFactory(self._client("system:vpa"), self.clock)
        recommender = Recommender(self._client("system:vpa-recommender"), self.clock,
                                  LocalMetricsSource(self.metrics), interval=self.vpa_intervals[0],
                                  history=self.vpa_history, informers=self.vpa_informers)
        # the API server answers RecommendationQuery from this recommender's aggregates
        self.server.recommendation_query = QueryService(recommender)
        return [
            recommender,
            Updater(self._client("system:vpa-updater"), self.clock, interval=self.vpa_intervals[1],
                    informers=self.vpa_informers),
        ]

    def _node_agent(self, name: str):
        """A simulated node: the kubelet-style flags (or a KubeletConfiguration file) shape it."""
        from kvert.kubelet.agent import NodeAgent
        from kvert.kubelet.config import NodeConfig, load_kubelet_configuration
        from kvert.kubelet.runtime.sim import SimRuntime
        flags = dict(self.node_flags)
        if self.kubelet_config is not None:
            config = load_kubelet_configuration(self.kubelet_config, capacity=flags.get("capacity"),
                                                node_name=name)
        else:
            config = NodeConfig.from_flags(node_name=name, **flags)
        runtime = SimRuntime(self.clock, cpu_capacity=config.capacity.get("cpu"),
                             memory_capacity=config.capacity.get("memory"),
                             disk_capacity=config.capacity.get("ephemeral-storage"), name=name)
        agent = NodeAgent(self._client("system:node-agent"), self.clock, config, runtime, name=name,
                          checkpoint_dir=self.data_dir / "nodes" / name)
        self.metrics.register(agent)     # its metrics: node proxy paths, metrics.k8s.io
        return agent

    async def stop(self) -> None:
        for component in self.components:
            component.stop()
        if self.vpa_informers is not None:
            self.vpa_informers.stop()
        if self.vpa_webhook is not None:
            await self.vpa_webhook.stop()
        if self.server is not None:
            await self.server.stop()
        if self.store is not None:
            self.store.close()
