"""A running cluster as ``kvert up`` assembles it, and the API server alone as
``kvert apiserver`` runs it.

The API server (store, PKI, tokens, HTTPS) comes first; then, under one supervisor, the
controller manager and scheduler (each leader-elected with a Lease in kube-system, so
several ``kvert up`` on one etcd run each controller once), the node agents (named so
they do not collide with another process's live nodes) and the VPA (recommender and
updater leader-elected, and the admission webhook).

A webhook named by ``clientConfig.service`` is called at one of the Service's ready
endpoints (``EndpointServiceResolver``); node agents over the cgroupfs runtime, which has no
service network, give containers the API server's own address as the ``kubernetes``
Service's (``KUBERNETES_SERVICE_HOST``/``PORT``).
"""

from __future__ import annotations

import datetime
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from kvert.api.features import parse_feature_gates
from kvert.apiserver.admission.webhook import EndpointServiceResolver, WebhookClient
from kvert.apiserver.certs import (
    KUBELET_CLIENT_CERT,
    KUBELET_CLIENT_GROUPS,
    Pki,
    ensure_client_cert,
    kubelet_client_context,
)
from kvert.apiserver.deadline import DEFAULT_REQUEST_TIMEOUT
from kvert.apiserver.identity import IdentityOptions, load_identity
from kvert.apiserver.inflight import (
    DEFAULT_MAX_MUTATING_REQUESTS_INFLIGHT,
    DEFAULT_MAX_REQUESTS_INFLIGHT,
    InflightLimit,
)
from kvert.apiserver.kubeconfig import write_kubeconfig
from kvert.apiserver.kubernetesservice import advertised_ip
from kvert.apiserver.metrics import METRICS_TYPES
from kvert.apiserver.server import ApiServer
from kvert.auth import default_authorizer
from kvert.auth.authenticator import Authenticator
from kvert.auth.policy import VPA_RECOMMENDER_LEASE, VPA_UPDATER_LEASE
from kvert.auth.serviceaccount import ServiceAccountAuthenticator
from kvert.auth.tokens import ADMIN, COMPONENTS, TokenAuthenticator, node_identity
from kvert.auth.user import KUBELET_CLIENT, MASTERS
from kvert.client import InProcessClient
from kvert.client.base import Client
from kvert.clock import Clock, WallClock
from kvert.cluster import assembly as build
from kvert.cluster.metrics import LocalNodeMetrics
from kvert.cluster.supervisor import Component, Supervisor
from kvert.controllers.manager import ALL_CONTROLLERS
from kvert.kubelet.agent import NodeAgent
from kvert.kubelet.runtime.fleet import Fleet
from kvert.registry.tokenrequest import TokenRequests
from kvert.store import open_store
from kvert.store.base import BaseStore
from kvert.vpa.features import VpaGates
from kvert.vpa.metrics_source import LocalMetricsSource
from kvert.vpa.query import QueryService
from kvert.vpa.webhook import VpaWebhookServer, register_webhook, webhook_configuration

QUOTA_RESYNC_SECONDS = 60.0


class ApiServerProcess:
    """The API server with what it needs: the data directory (0700), PKI, tokens (static
    and service-account), store, bootstrap objects, CRDs, history compaction and quota
    resync; a kubeconfig per component identity in ``DATA_DIR/kubeconfigs/``."""

    def __init__(self, *, data_dir: Path, store_url: str, host: str = "127.0.0.1", port: int = 6443,
                 kubeconfig: Path | None = None, clock: Clock | None = None,
                 compaction_interval: float = 300.0, metrics_resolution: float = 15.0,
                 max_requests_inflight: int = DEFAULT_MAX_REQUESTS_INFLIGHT,
                 max_mutating_requests_inflight: int = DEFAULT_MAX_MUTATING_REQUESTS_INFLIGHT,
                 request_timeout: float = DEFAULT_REQUEST_TIMEOUT,
                 identity: IdentityOptions | None = None,
                 kubelet_client_certificate: Path | None = None, kubelet_client_key: Path | None = None,
                 kubelet_certificate_authority: Path | None = None):
        self.data_dir = data_dir
        # how the server dials node agents (None: the PKI's kubelet-client certificate and CA)
        self.kubelet_client_certificate = kubelet_client_certificate
        self.kubelet_client_key = kubelet_client_key
        self.kubelet_certificate_authority = kubelet_certificate_authority
        # the CA and ServiceAccount keys: DATA_DIR/pki, or a PKI directory shared with other servers
        self.identity = identity or IdentityOptions()
        self.inflight = InflightLimit(max_requests_inflight, max_mutating_requests_inflight)
        # --request-timeout: how long a request body may take (kvert.apiserver.deadline)
        self.request_timeout = request_timeout
        self.store_url = store_url
        self.host = host
        self.port = port
        self.kubeconfig = kubeconfig or data_dir / "kubeconfig"
        self.clock = clock or WallClock()
        self.compaction_interval = compaction_interval
        self.metrics = LocalNodeMetrics(self.clock, metrics_resolution)
        self.supervisor = Supervisor()
        self.url = ""
        self.server: ApiServer | None = None
        self.store: BaseStore | None = None
        self.pki: Pki | None = None
        self.tokens: TokenAuthenticator | None = None
        self.control_plane: build.ControlPlane | None = None

    async def start(self) -> None:
        from kvert.apiserver.admission import default_chain
        build.private_dir(self.data_dir)
        now = datetime.datetime.fromtimestamp(self.clock.now(), tz=datetime.UTC)
        identity = load_identity(self.identity, self.data_dir, now)
        self.pki, signer = identity.pki, identity.service_account_tokens
        self.tokens = TokenAuthenticator.load_or_create(self.data_dir / "tokens.csv", self.clock)
        self.store = open_store(self.store_url, clock=self.clock)
        authenticator = Authenticator(self.tokens, self.clock,
                                      ServiceAccountAuthenticator(signer, self.store, self.clock))
        authorizer = default_authorizer(self.store)
        self.server = ApiServer(self.store, self.clock, authenticator=authenticator,
                                authorizer=authorizer,
                                admission=default_chain(
                                    self.store, self.clock, service_accounts=True,
                                    webhook_client=WebhookClient(EndpointServiceResolver(self.store))),
                                token_requests=TokenRequests(signer, max_expiration_seconds=int(
                                    self.identity.service_account_max_token_expiration)),
                                metrics_provider=self.metrics)
        self.server.inflight = self.inflight
        self.server.request_timeout = self.request_timeout
        self.server.kubelet_tls = self._kubelet_tls(now)
        self.metrics.server = self.server      # it samples node agents run elsewhere too
        self.control_plane = build.ControlPlane(self.server.registry, self.clock, authorizer)
        self.supervisor.start()
        await self.control_plane.bootstrap(self.supervisor)
        # kube-apiserver's aggregator: APIServices registered for what this server serves
        self.supervisor.add("apiservices", build.controller_manager(
            self.client(build.APISERVER, (MASTERS,)), self.clock, controllers=("apiservices",),
            settings={"apiservices": {"local_group_versions": [(t.group, t.version) for t in METRICS_TYPES]}}))
        # A store of our own starts its history at start, as kube-apiserver's watch cache
        # does; a shared etcd's history is everyone's: compacted only on the interval.
        for name, component in self.server.background_components(
                compaction_interval=self.compaction_interval, compact_at_start=not self.store.shared,
                quota_resync_interval=QUOTA_RESYNC_SECONDS).items():
            self.supervisor.add(name, component)
        self.url = await self.server.start(self.host, self.port,
                                           self.pki.server_context(client_certificates=True))
        await self._publish_kubernetes_service()
        write_kubeconfig(self.kubeconfig, self.url, self.pki.ca_pem(), self.tokens.token_for(ADMIN),
                         client_certificate=ensure_client_cert(self.pki, "admin", ADMIN, (MASTERS,), now))
        for user in COMPONENTS:
            self.write_component_kubeconfig(user)
        self.supervisor.add("node-metrics", self.metrics)

    def _kubelet_tls(self, now: datetime.datetime):
        """kube-apiserver's --kubelet-client-certificate/-key and --kubelet-certificate-authority,
        by default a certificate for kube-apiserver-kubelet-client from the cluster CA (as
        kubeadm makes apiserver-kubelet-client.crt); node agents' serving certificates are
        verified only given the CA, as upstream."""
        assert self.pki is not None
        cert, key = self.kubelet_client_certificate, self.kubelet_client_key
        if cert is None or key is None:
            ensure_client_cert(self.pki, KUBELET_CLIENT_CERT, KUBELET_CLIENT, KUBELET_CLIENT_GROUPS, now)
            cert = self.pki.ca_cert.parent / f"{KUBELET_CLIENT_CERT}.crt"
            key = self.pki.ca_cert.parent / f"{KUBELET_CLIENT_CERT}.key"
        return kubelet_client_context(cert, key, self.kubelet_certificate_authority)

    def address(self) -> tuple[str, int]:
        """Where this server is reached on this machine: the address its Endpoints name."""
        parts = urlsplit(self.url)
        return advertised_ip(parts.hostname or ""), parts.port or self.port

    async def _publish_kubernetes_service(self) -> None:
        """``default/kubernetes`` to this server's port, with Endpoints and an EndpointSlice
        naming its address."""
        from kvert.apiserver.kubernetesservice import ensure_kubernetes_endpoints, ensure_kubernetes_service
        from kvert.registry.serviceip import first_ip
        assert self.server is not None
        ip, port = self.address()
        registry = self.server.registry
        await ensure_kubernetes_service(registry, first_ip(str(registry.services.network)), port)
        await ensure_kubernetes_endpoints(registry, ip, port)

    def write_component_kubeconfig(self, user: str, groups: tuple[str, ...] = ()) -> Path:
        """``DATA_DIR/kubeconfigs/USER.kubeconfig`` with the user's own token (made if new),
        e.g. for ``kvert scheduler --kubeconfig`` or ``kubectl auth can-i --list``."""
        assert self.pki is not None and self.tokens is not None, "start() first"
        path = self.data_dir / "kubeconfigs" / f"{user.replace(':', '-')}.kubeconfig"
        write_kubeconfig(path, self.url, self.pki.ca_pem(), self.tokens.ensure(user, groups), user=user)
        return path

    def client(self, user: str, groups: tuple[str, ...] = ()) -> InProcessClient:
        assert self.control_plane is not None
        return self.control_plane.client(user, groups)

    async def stop(self) -> None:
        await self.supervisor.stop()
        if self.server is not None:
            await self.server.stop()
        if self.store is not None:
            self.store.close()


class Cluster(ApiServerProcess):
    """``kvert up``: the API server and every component in one process."""

    def __init__(self, *, nodes: int = 0, node_flags: dict | None = None,
                 kubelet_config: Path | None = None,
                 vpa_intervals: tuple[float, float] = (60.0, 60.0), vpa: bool = True,
                 vpa_history: Any = None, scheduler_config: Any = None, leader_elect: bool = True,
                 leader_election: dict | None = None, runtime: str = "sim", vpa_gates: VpaGates | None = None,
                 **server: Any):
        super().__init__(**server)
        self.nodes = nodes
        self.runtime = runtime               # the nodes' container runtime: sim | cgroupfs
        self._fleet: Fleet | None = None
        self.node_flags = node_flags or {}
        self.kubelet_config = kubelet_config
        self.vpa_intervals = vpa_intervals   # (recommender, updater) seconds
        self.vpa = vpa                       # False: no recommender, updater, webhook (--no-vpa)
        self.vpa_history = vpa_history       # the recommender's history provider (kvert.vpa.history)
        self.vpa_gates = vpa_gates or VpaGates()   # upstream's defaults: InPlace, CPUStartupBoost off
        self.scheduler_config = scheduler_config   # a KubeSchedulerConfiguration (None: default)
        self.leader_elect = leader_elect
        self.leader_election = leader_election or {}   # lease_duration, renew_deadline, retry_period
        self.node_names: list[str] = []
        self.agents: list[Component] = []
        self.vpa_webhook: VpaWebhookServer | None = None

    async def start(self) -> None:
        await super().start()
        assert self.pki is not None
        assert self.control_plane is not None
        settings = {"root-ca-cert-publisher": {"ca_pem": self.pki.ca_pem()},
                    # the HPA reads what the API server serves under metrics.k8s.io
                    "horizontalpodautoscaling": {"metrics": self.metrics},
                    # CSRs signed with the cluster CA; reviews answered by this server's authorizer
                    "csrsigning": {"ca_cert": self.pki.ca_pem(), "ca_key": self.pki.ca_key.read_bytes()},
                    "csrapproving": {"authorizer": self.control_plane.authorizer}}
        controllers = ALL_CONTROLLERS + ("csrsigning", "kubelet-serving-approver")
        self._add_leader_elected("controller-manager", "kube-controller-manager",
                                 build.CONTROLLER_MANAGER,
                                 lambda client: build.controller_manager(
                                     client, self.clock, settings=settings, root_ca=True,
                                     controllers=controllers))
        self._add_leader_elected("scheduler", "kube-scheduler", build.SCHEDULER,
                                 lambda client: build.scheduler(client, self.clock,
                                                                config=self.scheduler_config,
                                                                gates=self._gates()))
        self.node_names = await build.choose_node_names(self.client(build.APISERVER, (MASTERS,)), self.clock,
                                                        self.nodes, self.data_dir)
        for name in self.node_names:
            self.write_component_kubeconfig(*node_identity(name))
            self.agents.append(self.supervisor.add(f"node-agent/{name}", self._node_agent(name)))
        if self.vpa:
            self._add_vpa()
            await self._start_vpa_admission()

    def _gates(self) -> dict[str, bool]:
        """``kvert up --feature-gates``: one set for the API server, the scheduler and nodes."""
        return parse_feature_gates(self.node_flags.get("feature_gates") or "")

    def _add_leader_elected(self, component: str, lease: str, user: str,
                            make: Callable[[Client], Component]) -> Component:
        client = self.client(user)
        if not self.leader_elect:
            return self.supervisor.add(component, make(client))
        return self.supervisor.add(component, build.leader_elected(
            client, self.clock, lease, lambda: make(client), **self.leader_election))

    def _node_agent(self, name: str) -> NodeAgent:
        """A node: the kubelet-style flags (or a KubeletConfiguration file) shape it."""
        config = build.node_config(name, self.node_flags, self.kubelet_config)
        options: dict[str, Any] = {}
        if self.runtime == "sim":             # this process's simulated nodes share one fleet
            if self._fleet is None:
                self._fleet = build.fleet(self.clock)
            options["fleet"] = self._fleet
        else:       # processes on the host's network: no cluster IP reaches the API server
            options["kubernetes_address"] = self.address()
        agent = build.node(self.runtime, self.client(*node_identity(name)), self.clock, config, name=name,
                           checkpoint_dir=self.data_dir / "nodes" / name, **options)
        self.metrics.register(agent)     # its metrics: node proxy paths, metrics.k8s.io
        return agent

    def _add_vpa(self) -> None:
        """The VPA recommender (fed by the nodes' metrics) and updater, each reading VPAs,
        pods and targets through informer caches of its own process."""
        def make_recommender(client: Client) -> Component:
            informers = build.vpa_informers(client, self.clock)
            recommender = build.recommender(client, self.clock, LocalMetricsSource(self.metrics),
                                            interval=self.vpa_intervals[0], history=self.vpa_history,
                                            informers=informers, gates=self.vpa_gates)
            # the API server answers RecommendationQuery from the leading recommender
            assert self.server is not None
            self.server.recommendation_query = QueryService(recommender)
            return build.Owning(recommender, informers)

        def make_updater(client: Client) -> Component:
            informers = build.vpa_informers(client, self.clock)
            return build.Owning(build.updater(client, self.clock, interval=self.vpa_intervals[1],
                                              informers=informers, gates=self.vpa_gates), informers)

        self._add_leader_elected("vpa-recommender", VPA_RECOMMENDER_LEASE, build.VPA_RECOMMENDER,
                                 make_recommender)
        self._add_leader_elected("vpa-updater", VPA_UPDATER_LEASE, build.VPA_UPDATER, make_updater)

    async def _start_vpa_admission(self) -> None:
        """The VPA admission controller as on a real cluster: an HTTPS webhook the API server
        calls, registered through a MutatingWebhookConfiguration."""
        client = self.client(build.VPA_ADMISSION)
        assert self.pki is not None
        self.vpa_webhook = build.vpa_webhook(client, self.clock, ssl_context=self.pki.server_context(),
                                             gates=self.vpa_gates)
        await self.vpa_webhook.run()
        await register_webhook(client, webhook_configuration(self.vpa_webhook.url, self.pki.ca_pem()))

    async def stop(self) -> None:
        await self.supervisor.stop()
        if self.vpa_webhook is not None:
            await self.vpa_webhook.stop()
        await super().stop()
