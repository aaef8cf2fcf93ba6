"""How kvert's components are built: the one place ``kvert up``, the component commands
and ``kvert simulate`` make a control plane, a scheduler, a controller manager, a node
agent or the VPA, so the live cluster and the simulation run the same parts the same way.
"""

from __future__ import annotations

import asyncio
import os
import ssl
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Protocol

from kvert.api.errors import NotFound
from kvert.api.meta import parse_time
from kvert.api.quantity import Quantity
from kvert.apiserver.admission import bootstrap as bootstrap_objects
from kvert.apiserver.admission import default_chain
from kvert.apiserver.crds import CRDController
from kvert.apiserver.crds import vpa_crds as vpa_definitions
from kvert.apiserver.kubernetesservice import ensure_kubernetes_service
from kvert.auth import request_check
from kvert.auth.authorizer import Authorizer
from kvert.auth.policy import ensure_bootstrap_policy
from kvert.auth.tokens import node_identity
from kvert.auth.user import (  # noqa: F401 - build.VPA_*
    APISERVER,
    AUTHENTICATED,
    KUBE_CONTROLLER_MANAGER,
    KUBE_SCHEDULER,
    MASTERS,
    VPA_ADMISSION,
    VPA_RECOMMENDER,
    VPA_UPDATER,
    User,
)
from kvert.client import InProcessClient
from kvert.client.base import Client
from kvert.client.cache import InformerFactory
from kvert.client.leaderelection import LEASE_DURATION, RENEW_DEADLINE, RETRY_PERIOD, LeaderElected, LeaderElector
from kvert.client.leaderelection import NAMESPACE as LEASE_NAMESPACE
from kvert.clock import Clock
from kvert.cluster.supervisor import Component, Supervisor
from kvert.controllers import ControllerManager
from kvert.controllers.manager import ALL_CONTROLLERS
from kvert.kubelet.agent import NodeAgent
from kvert.kubelet.config import NodeConfig, load_kubelet_configuration
from kvert.kubelet.runtime.cgroupfs import CgroupfsRuntime
from kvert.kubelet.runtime.fleet import Fleet
from kvert.kubelet.runtime.logrotation import LogRotatePolicy
from kvert.kubelet.runtime.sim import SimRuntime
from kvert.registry import Registry
from kvert.registry.serviceip import first_ip
from kvert.scheduler import Scheduler
from kvert.scheduler.config import SchedulerConfig
from kvert.store.base import Store
from kvert.vpa import recommender as vpa_recommender
from kvert.vpa.admission import VpaAdmissionPlugin, VpaMatcher
from kvert.vpa.features import VpaGates
from kvert.vpa.history import HistoryProvider
from kvert.vpa.instruments import AdmissionMetrics, HealthCheck, RecommenderMetrics
from kvert.vpa.metrics_source import MetricsSource
from kvert.vpa.pressure import PressureObserver
from kvert.vpa.recommendation import RecommenderConfig
from kvert.vpa.recommender import Recommender
from kvert.vpa.updater import Updater
from kvert.vpa.webhook import VpaWebhookServer

# The identities kvert's components use (kvert.auth.user)
SCHEDULER, CONTROLLER_MANAGER = KUBE_SCHEDULER, KUBE_CONTROLLER_MANAGER

# The Updater's tunables a scenario's policy may set (its constructor's keyword options).
UPDATER_OPTIONS = ("interval", "eviction_tolerance", "min_replicas", "in_place_timeout",
                   "deferred_timeout", "pod_lifetime_threshold", "evict_after_oom_threshold",
                   "min_change_priority", "gates", "in_place_skip_disruption_budget", "eviction_rate_limit",
                   "eviction_rate_burst", "use_admission_controller_status",
                   "admission_controller_status_lease_name", "admission_controller_status_lease_namespace",
                   "admission_controller_status_lease_timeout", "vpa_object_namespace",
                   "ignored_vpa_object_namespaces", "metrics", "health")


def node_user(name: str) -> str:
    return node_identity(name)[0]


class ControlPlane:
    """The registry (the write path every front end shares) over a store, with the objects
    every cluster has and the CRD controller serving the VPA's CRDs. With an ``authorizer``
    its in-process clients are held to the same rules as requests over HTTP."""

    def __init__(self, registry: Registry, clock: Clock, authorizer: Authorizer | None = None):
        self.registry = registry
        self.clock = clock
        self.authorizer = authorizer
        self.crds: CRDController | None = None

    @classmethod
    def in_process(cls, store: Store, clock: Clock, *, seed: int | None = None) -> ControlPlane:
        return cls(Registry(store, clock, default_chain(store, clock), seed=seed), clock)

    def client(self, user: str = "", groups: tuple[str, ...] = ()) -> InProcessClient:
        if self.authorizer is None:
            return InProcessClient(self.registry, user=user)
        return InProcessClient(self.registry, user=User(user, groups=(*groups, AUTHENTICATED)),
                               authorize=request_check(self.authorizer))

    async def bootstrap(self, supervisor: Supervisor, *, vpa_crds: bool = True) -> None:
        """System namespaces and priority classes, the ``default/kubernetes`` Service (and
        the RBAC defaults where requests are authorized); the CRD controller (supervised),
        and the VPA CRDs installed and established."""
        await bootstrap_objects(self.registry)
        # the serving address is known once listening (kvert up reconciles it then)
        await ensure_kubernetes_service(self.registry, first_ip(str(self.registry.services.network)),
                                        reconcile=False)
        if self.authorizer is not None:
            await ensure_bootstrap_policy(self.registry)
        # kube-apiserver's own loopback client is a member of system:masters
        crds = CRDController(self.client(APISERVER, (MASTERS,)), self.clock)
        self.crds = crds
        supervisor.add("crd-controller", crds)
        if vpa_crds:
            definitions = vpa_definitions()
            await crds.install(definitions)
            for crd in definitions:
                await crds.wait_established(crd["metadata"]["name"])


# ---- components ------------------------------------------------------------------------------

def controller_manager(client: Client, clock: Clock, *, settings: dict[str, Any] | None = None,
                       controllers: tuple[str, ...] | None = None, root_ca: bool = False
                       ) -> ControllerManager:
    """The controller manager; ``root_ca``: also publish the cluster's CA (the
    ``root-ca-cert-publisher``, which needs ``settings[...]["ca_pem"]``)."""
    wanted = tuple(controllers or ALL_CONTROLLERS) + (("root-ca-cert-publisher",) if root_ca else ())
    return ControllerManager(client, clock, settings=settings, controllers=wanted)


def scheduler(client: Client, clock: Clock, *, config: SchedulerConfig | None = None,
              seed: int | None = None, gates: Mapping[str, bool] | None = None) -> Scheduler:
    """The scheduler; ``gates``: its --feature-gates (kvert.api.features.GATES)."""
    return Scheduler(client, clock, config, seed=seed, gates=gates)


def node_config(name: str, flags: dict[str, Any], kubelet_config: Path | None = None) -> NodeConfig:
    """A node's configuration from kubelet-style flags or a KubeletConfiguration file
    (``--node-capacity`` applies to both); raises ``kvert.kubelet.config.ConfigError``."""
    if kubelet_config is not None:
        return load_kubelet_configuration(kubelet_config, capacity=flags.get("capacity"),
                                          node_name=name)
    return NodeConfig.from_flags(node_name=name, **flags)


def fleet(clock: Clock, tick: float | None = None) -> Fleet:
    """The arrays every simulated node of one process keeps its containers in."""
    return Fleet(clock) if tick is None else Fleet(clock, tick)


def sim_node(client: Client, clock: Clock, config: NodeConfig, *, name: str, tick: float | None = None,
             system_memory: int = 0, fleet: Fleet | None = None, **agent_options: Any) -> NodeAgent:
    """A node agent over the simulated runtime, sized by the node's capacity; its containers
    join ``fleet`` (shared by the nodes of one process) when given."""
    runtime_options: dict[str, Any] = {"tick": tick} if tick is not None else {}
    if fleet is not None:
        runtime_options = {"fleet": fleet, "tick": fleet.tick}
    runtime = SimRuntime(clock, cpu_capacity=config.capacity.get("cpu"),
                         memory_capacity=config.capacity.get("memory"),
                         disk_capacity=config.capacity.get("ephemeral-storage"), name=name,
                         system_memory=system_memory, **runtime_options)
    runtime.log_policy = LogRotatePolicy(config.container_log_max_size, config.container_log_max_files)
    return NodeAgent(client, clock, config, runtime, name=name, **agent_options)


def cgroupfs_node(client: Client, clock: Clock, config: NodeConfig, *, name: str, checkpoint_dir: Path,
                  **agent_options: Any) -> NodeAgent:
    """A node agent over real processes in this machine's cgroups (the ``kvert-NAME``
    hierarchy); container logs under ``checkpoint_dir``. Raises
    ``kvert.kubelet.runtime.cgroupfs_tree.CgroupError`` without a usable cgroup filesystem."""
    runtime = CgroupfsRuntime.open(clock, name, checkpoint_dir, cgroup_driver=config.cgroup_driver)
    runtime.log_policy = LogRotatePolicy(config.container_log_max_size, config.container_log_max_files)
    config.cgroup_version = runtime.tree.version
    return NodeAgent(client, clock, config, runtime, name=name, checkpoint_dir=checkpoint_dir, **agent_options)


def node(runtime: str, client: Client, clock: Clock, config: NodeConfig, *, name: str, checkpoint_dir: Path,
         **agent_options: Any) -> NodeAgent:
    """A node agent over the runtime named ``sim`` or ``cgroupfs``."""
    if runtime == "cgroupfs":
        return cgroupfs_node(client, clock, config, name=name, checkpoint_dir=checkpoint_dir, **agent_options)
    return sim_node(client, clock, config, name=name, checkpoint_dir=checkpoint_dir, **agent_options)


def vpa_informers(client: Client, clock: Clock) -> InformerFactory:
    """The informer caches the VPA recommender and updater of one process share."""
    return InformerFactory(client, clock)


def recommender(client: Client, clock: Clock, metrics: MetricsSource, *, informers: InformerFactory | None,
                interval: float = 60.0, config: RecommenderConfig | None = None,
                checkpoint_interval: float = 600.0, name: str = "default",
                history: HistoryProvider | None = None, gates: VpaGates | None = None,
                checkpoint_gc_interval: float | None = None, checkpoints_timeout: float = 60.0,
                update_worker_count: int = 10, exact_checkpoints: bool = False, use_checkpoints: bool = True,
                memory_saver: bool = False, namespace: str | None = None, ignored_namespaces: tuple[str, ...] = (),
                instruments: RecommenderMetrics | None = None, health: HealthCheck | None = None,
                pressure: PressureObserver | None = None) -> Recommender:
    """The VPA recommender (``kvert vpa recommender``'s flags; upstream's defaults but
    ``checkpoint_interval``, which the command sets to every loop)."""
    # looked up when called, so a test may stand in its own recommender class
    return vpa_recommender.Recommender(client, clock, metrics, interval=interval, config=config,
                                       checkpoint_interval=checkpoint_interval, name=name,
                                       history=history, informers=informers, gates=gates,
                                       checkpoint_gc_interval=checkpoint_gc_interval,
                                       checkpoints_timeout=checkpoints_timeout,
                                       update_worker_count=update_worker_count, exact_checkpoints=exact_checkpoints,
                                       use_checkpoints=use_checkpoints, memory_saver=memory_saver, namespace=namespace,
                                       ignored_namespaces=ignored_namespaces, instruments=instruments, health=health,
                                       pressure=pressure)


def updater(client: Client, clock: Clock, *, informers: InformerFactory | None, **options: Any) -> Updater:
    """The VPA updater; ``options`` are among ``UPDATER_OPTIONS`` (``gates``: a ``VpaGates``;
    upstream's defaults, InPlace, CPUStartupBoost and PerVPAConfig off, when not given)."""
    unknown = sorted(set(options) - set(UPDATER_OPTIONS))
    if unknown:
        raise TypeError(f"unknown updater options: {', '.join(unknown)}")
    return Updater(client, clock, informers=informers, **options)


def vpa_admission_plugin(client: Client, clock: Clock, informers: InformerFactory, *,
                         gates: VpaGates | None = None, max_allowed_cpu_boost: Quantity | None = None,
                         metrics: AdmissionMetrics | None = None) -> VpaAdmissionPlugin:
    """The VPA admission controller as an in-process admission plugin (the simulator's
    registry calls it as kube-apiserver calls the webhook): new pods get their recommendation
    (and, with the CPUStartupBoost gate, their startup boost); VPAs are validated against
    ``gates`` as upstream's admission controller validates them."""
    return VpaAdmissionPlugin(VpaMatcher(client, clock, informers=informers), clock, gates=gates,
                              max_allowed_cpu_boost=max_allowed_cpu_boost, metrics=metrics)


def vpa_webhook(client: Client, clock: Clock, *, ssl_context: ssl.SSLContext, host: str = "127.0.0.1",
                port: int = 0, gates: VpaGates | None = None, max_allowed_cpu_boost: Quantity | None = None,
                metrics: AdmissionMetrics | None = None, health: HealthCheck | None = None) -> VpaWebhookServer:
    """The VPA admission controller as an HTTPS webhook, reading through its own informers."""
    return VpaWebhookServer(client, clock, host=host, port=port, ssl_context=ssl_context, informers=True,
                            gates=gates, max_allowed_cpu_boost=max_allowed_cpu_boost, metrics=metrics,
                            health=health)


class Stoppable(Protocol):
    def stop(self) -> None: ...


class Owning:
    """A component that also stops what it alone uses (e.g. its informer caches)."""

    def __init__(self, component: Component, *owned: Stoppable):
        self.component = component
        self.owned = owned

    async def run(self) -> None:
        await self.component.run()

    def stop(self) -> None:
        self.component.stop()
        for thing in self.owned:
            thing.stop()


def leader_elected(client: Client, clock: Clock, lease: str, make: Callable[[], Component], *,
                   namespace: str = LEASE_NAMESPACE, lease_duration: float = LEASE_DURATION,
                   renew_deadline: float = RENEW_DEADLINE, retry_period: float = RETRY_PERIOD) -> LeaderElected:
    """``make()``'s component, run only while this process holds the ``lease`` in kube-system."""
    return LeaderElected(make, LeaderElector(client, clock, lease, namespace=namespace,
                                             lease_duration=lease_duration,
                                             renew_deadline=renew_deadline, retry_period=retry_period))


# ---- node names ------------------------------------------------------------------------------

async def node_in_use(client: Client, clock: Clock, name: str) -> bool:
    """Whether another agent runs node ``name``: its Lease in kube-node-lease was renewed
    within its duration."""
    try:
        lease = await client.get("coordination.k8s.io/leases", name, "kube-node-lease")
    except NotFound:
        return False
    spec = lease.get("spec") or {}
    renewed = spec.get("renewTime")
    if not renewed:
        return False
    return parse_time(renewed) + float(spec.get("leaseDurationSeconds") or 40) > clock.now()


async def choose_node_names(client: Client, clock: Clock, count: int, data_dir: Path) -> list[str]:
    """``count`` names ``node-1``, ``node-2``, ...: a node this data directory ran before
    (it has its checkpoint) is ours again; one another live agent runs is skipped, so a
    second ``kvert up`` on a shared store joins with its own nodes."""
    names: list[str] = []
    i = 0
    while len(names) < count:
        i += 1
        name = f"node-{i}"
        if (data_dir / "nodes" / name).is_dir() or not await node_in_use(client, clock, name):
            names.append(name)
    return names


def private_dir(path: Path) -> Path:
    """A directory only its owner can read (the store, keys and tokens live there)."""
    path.mkdir(parents=True, exist_ok=True)
    os.chmod(path, 0o700)
    return path


async def wait_ready(agents: list[NodeAgent]) -> None:
    await asyncio.gather(*(agent.ready.wait() for agent in agents))
