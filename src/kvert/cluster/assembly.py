"""How kvert's components are built: the one place ``kvert up``, the component commands
and ``kvert simulate`` make a control plane, a scheduler, a controller manager, a node
agent or the VPA, so the live cluster and the simulation run the same parts the same way.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

from kvert.api.errors import NotFound
from kvert.api.meta import parse_time
from kvert.auth.tokens import node_identity
from kvert.auth.user import (APISERVER, AUTHENTICATED, KUBE_CONTROLLER_MANAGER, KUBE_SCHEDULER, MASTERS,
                             User)
from kvert.auth.user import VPA_ADMISSION, VPA_RECOMMENDER, VPA_UPDATER  # noqa: F401 - build.VPA_*
from kvert.client import InProcessClient
from kvert.clock import Clock
from kvert.registry import Registry

# The identities kvert's components use (kvert.auth.user)
SCHEDULER, CONTROLLER_MANAGER = KUBE_SCHEDULER, KUBE_CONTROLLER_MANAGER


def node_user(name: str) -> str:
    return node_identity(name)[0]


class ControlPlane:
    """The registry (the write path every front end shares) over a store, with the objects
    every cluster has and the CRD controller serving the VPA's CRDs. With an ``authorizer``
    its in-process clients are held to the same rules as requests over HTTP."""

    def __init__(self, registry: Registry, clock: Clock, authorizer: Any = None):
        self.registry = registry
        self.clock = clock
        self.authorizer = authorizer
        self.crds: Any = None

    @classmethod
    def in_process(cls, store: Any, clock: Clock, *, seed: int | None = None) -> "ControlPlane":
        from kvert.apiserver.admission import default_chain
        return cls(Registry(store, clock, default_chain(store, clock), seed=seed), clock)

    def client(self, user: str = "", groups: tuple[str, ...] = ()) -> InProcessClient:
        if self.authorizer is None:
            return InProcessClient(self.registry, user=user)
        from kvert.auth import request_check
        return InProcessClient(self.registry, user=User(user, groups=(*groups, AUTHENTICATED)),
                               authorize=request_check(self.authorizer))

    async def bootstrap(self, supervisor: Any, *, vpa_crds: bool = True) -> None:
        """System namespaces and priority classes, the ``default/kubernetes`` Service (and
        the RBAC defaults where requests are authorized); the CRD controller (supervised), and the VPA CRDs installed and
        established."""
        from kvert.apiserver.admission import bootstrap
        from kvert.apiserver.crds import CRDController, vpa_crds as vpa_definitions
        from kvert.apiserver.kubernetesservice import ensure_kubernetes_service
        from kvert.registry.serviceip import first_ip
        await bootstrap(self.registry)
        # the serving address is known once listening (kvert up reconciles it then)
        await ensure_kubernetes_service(self.registry, first_ip(str(self.registry.services.network)),
                                        reconcile=False)
        if self.authorizer is not None:
            from kvert.auth.policy import ensure_bootstrap_policy
            await ensure_bootstrap_policy(self.registry)
        # kube-apiserver's own loopback client is a member of system:masters
        self.crds = supervisor.add("crd-controller",
                                   CRDController(self.client(APISERVER, (MASTERS,)), self.clock))
        if vpa_crds:
            definitions = vpa_definitions()
            await self.crds.install(definitions)
            for crd in definitions:
                await self.crds.wait_established(crd["metadata"]["name"])


# ---- components ------------------------------------------------------------------------------

def controller_manager(client: Any, clock: Clock, *, settings: dict | None = None,
                       controllers: tuple[str, ...] | None = None, root_ca: bool = False) -> Any:
    """The controller manager; ``root_ca``: also publish the cluster's CA (the
    ``root-ca-cert-publisher``, which needs ``settings[...]["ca_pem"]``)."""
    from kvert.controllers import ControllerManager
    from kvert.controllers.manager import ALL_CONTROLLERS
    wanted = tuple(controllers or ALL_CONTROLLERS) + (("root-ca-cert-publisher",) if root_ca else ())
    return ControllerManager(client, clock, settings=settings, controllers=wanted)


def scheduler(client: Any, clock: Clock, *, config: Any = None, seed: int | None = None) -> Any:
    from kvert.scheduler import Scheduler
    return Scheduler(client, clock, config, seed=seed)


def node_config(name: str, flags: dict, kubelet_config: Path | None = None) -> Any:
    """A node's configuration from kubelet-style flags or a KubeletConfiguration file
    (``--node-capacity`` applies to both); raises ``kvert.kubelet.config.ConfigError``."""
    from kvert.kubelet.config import NodeConfig, load_kubelet_configuration
    if kubelet_config is not None:
        return load_kubelet_configuration(kubelet_config, capacity=flags.get("capacity"),
                                          node_name=name)
    return NodeConfig.from_flags(node_name=name, **flags)


def sim_node(client: Any, clock: Clock, config: Any, *, name: str, tick: float | None = None,
             system_memory: int = 0, fleet: Any = None, **agent_options: Any) -> Any:
    """A node agent over the simulated runtime, sized by the node's capacity; its containers
    join ``fleet`` (a ``kvert.kubelet.runtime.fleet.Fleet``, shared by the nodes of one
    process) when given."""
    from kvert.kubelet.agent import NodeAgent
    from kvert.kubelet.runtime.sim import SimRuntime
    runtime_options: dict[str, Any] = {"tick": tick} if tick is not None else {}
    if fleet is not None:
        runtime_options = {"fleet": fleet, "tick": fleet.tick}
    runtime = SimRuntime(clock, cpu_capacity=config.capacity.get("cpu"),
                         memory_capacity=config.capacity.get("memory"),
                         disk_capacity=config.capacity.get("ephemeral-storage"), name=name,
                         system_memory=system_memory, **runtime_options)
    return NodeAgent(client, clock, config, runtime, name=name, **agent_options)


def cgroupfs_node(client: Any, clock: Clock, config: Any, *, name: str, checkpoint_dir: Path,
                  **agent_options: Any) -> Any:
    """A node agent over real processes in this machine's cgroups (the ``kvert-NAME``
    hierarchy); container logs under ``checkpoint_dir``. Raises
    ``kvert.kubelet.runtime.cgroupfs_tree.CgroupError`` without a usable cgroup filesystem."""
    from kvert.kubelet.agent import NodeAgent
    from kvert.kubelet.runtime.cgroupfs import CgroupfsRuntime
    runtime = CgroupfsRuntime.open(clock, name, checkpoint_dir, cgroup_driver=config.cgroup_driver)
    config.cgroup_version = runtime.tree.version
    return NodeAgent(client, clock, config, runtime, name=name, checkpoint_dir=checkpoint_dir, **agent_options)


def node(runtime: str, client: Any, clock: Clock, config: Any, *, name: str, checkpoint_dir: Path,
         **agent_options: Any) -> Any:
    """A node agent over the runtime named ``sim`` or ``cgroupfs``."""
    make = cgroupfs_node if runtime == "cgroupfs" else sim_node
    return make(client, clock, config, name=name, checkpoint_dir=checkpoint_dir, **agent_options)


def vpa_informers(client: Any, clock: Clock) -> Any:
    """The informer caches the VPA recommender and updater of one process share."""
    from kvert.client.cache import InformerFactory
    return InformerFactory(client, clock)


def recommender(client: Any, clock: Clock, metrics: Any, **options: Any) -> Any:
    from kvert.vpa.recommender import Recommender
    return Recommender(client, clock, metrics, **options)


def updater(client: Any, clock: Clock, **options: Any) -> Any:
    from kvert.vpa.updater import Updater
    return Updater(client, clock, **options)


class Owning:
    """A component that also stops what it alone uses (e.g. its informer caches)."""

    def __init__(self, component: Any, *owned: Any):
        self.component = component
        self.owned = owned

    async def run(self) -> None:
        await self.component.run()

    def stop(self) -> None:
        self.component.stop()
        for thing in self.owned:
            thing.stop()


def leader_elected(client: Any, clock: Clock, lease: str, make: Any, **election: Any) -> Any:
    """``make()``'s component, run only while this process holds the ``lease`` in kube-system."""
    from kvert.client.leaderelection import LeaderElected, LeaderElector
    return LeaderElected(make, LeaderElector(client, clock, lease, **election))


# ---- node names ------------------------------------------------------------------------------

async def node_in_use(client: Any, clock: Clock, name: str) -> bool:
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


async def choose_node_names(client: Any, clock: Clock, count: int, data_dir: Path) -> list[str]:
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


async def wait_ready(agents: list[Any]) -> None:
    await asyncio.gather(*(agent.ready.wait() for agent in agents))
