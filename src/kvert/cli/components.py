"""``kvert scheduler``, ``kvert controller-manager`` and ``kvert node-agent``: each component
of ``kvert up`` as its own process against any API server (``--kubeconfig``).

The scheduler and the controller manager take part in leader election by default, as
kube-scheduler and kube-controller-manager do, so several replicas run each loop once.
"""

from __future__ import annotations

import argparse
import datetime
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from kvert.cli.component import client_from_args as _client
from kvert.cli.component import default_kubeconfig, run_component, until_stopped_or_crashed
from kvert.cli.node_flags import add_node_flags, node_flags_from_args
from kvert.cli.up import add_leader_election_flags, leader_election

if TYPE_CHECKING:           # the commands load their components when run
    from kvert.client.base import Client
    from kvert.client.http import HttpClient
    from kvert.clock import Clock
    from kvert.cluster.supervisor import Component

EXAMPLES = {
    "scheduler": "example: kvert scheduler --kubeconfig ~/.kvert/kubeconfig --config sched.yaml",
    "controller-manager": "example: kvert controller-manager --kubeconfig ~/.kvert/kubeconfig "
                          "--controllers replicaset,deployment,garbagecollector",
    "node-agent": "example: kvert node-agent --data-dir ~/.kvert --name node-7 "
                  "--node-capacity cpu=8,memory=32Gi,pods=110",
}


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--kubeconfig", type=Path, default=None,
                   help="the API server and credentials (default: $KUBECONFIG, else ~/.kube/config)")
    p.add_argument("--context", default=None, help="the kubeconfig context (default: its current one)")
    p.add_argument("--log-level", default="info", choices=["debug", "info", "warning", "error"],
                   help="log verbosity (default: info)")


def register(sub: argparse._SubParsersAction) -> None:
    s = sub.add_parser("scheduler", help="run the scheduler against an API server",
                       description="kube-scheduler: binds pending pods to nodes (filters, scores, "
                                   "preemption), leader-elected by default.",
                       epilog=EXAMPLES["scheduler"])
    _common(s)
    s.add_argument("--config", type=Path, default=None, metavar="FILE",
                   help="a KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1)")
    add_leader_election_flags(s, default=True)
    s.set_defaults(func=lambda args: run_component(args, _scheduler))

    c = sub.add_parser("controller-manager", help="run the controllers against an API server",
                       description="kube-controller-manager: the ReplicaSet, ReplicationController, "
                                   "Deployment, StatefulSet, DaemonSet, Job, CronJob, disruption, "
                                   "garbage collector, namespace, pod GC, node lifecycle, taint "
                                   "eviction, endpoints and ResourceClaim controllers, leader-elected "
                                   "by default.",
                       epilog=EXAMPLES["controller-manager"])
    _common(c)
    c.add_argument("--controllers", default="*",
                   help="comma-separated controllers to run, '*' for all (default: *)")
    c.add_argument("--root-ca-file", type=Path, default=None, metavar="FILE",
                   help="the CA published to every namespace as ConfigMap kube-root-ca.crt "
                        "(default: the kubeconfig's certificate authority)")
    add_leader_election_flags(c, default=True)
    c.set_defaults(func=lambda args: run_component(args, _controller_manager))

    n = sub.add_parser("node-agent", help="run one node against an API server",
                       description="A node agent (kvert's kubelet) with the simulated runtime (or real "
                                   "processes in cgroups, --runtime cgroupfs): "
                                   "registers the Node, renews its Lease, runs the pods bound to it.\n"
                                   "A name another live agent runs (its Lease is fresh) is refused.",
                       epilog=EXAMPLES["node-agent"],
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    _common(n)
    n.add_argument("--name", required=True, help="the node's name")
    n.add_argument("--data-dir", type=Path, default=None,
                   help="the data directory of a kvert API server on this machine: the agent makes "
                        "its own identity there (system:node:NAME, written to "
                        "DATA_DIR/kubeconfigs/) and uses it instead of --kubeconfig, as a kubelet "
                        "bootstraps its credentials")
    n.add_argument("--checkpoint-dir", type=Path, default=None,
                   help="where the agent keeps its state (default: $KVERT_HOME/nodes/NAME)")
    n.add_argument("--address", default="127.0.0.1",
                   help="the address of the agent's kubelet endpoint, also the Node's InternalIP "
                        "(default: 127.0.0.1)")
    n.add_argument("--port", type=int, default=10250,
                   help="the port of the agent's kubelet endpoint (HTTPS: logs, exec, attach, "
                        "port-forward, cAdvisor metrics for the API server); 0 picks a free one "
                        "(default: 10250)")
    add_node_flags(n)
    n.set_defaults(func=lambda args: run_component(args, _node_agent))


async def _serve(name: str, make: Callable[[Client, Clock], Component], client: HttpClient,
                 args: argparse.Namespace, *,
                 lease: str | None = None) -> int:
    """Run one component under a supervisor until SIGINT/SIGTERM or a crash (exit 1)."""
    from kvert.clock import WallClock
    from kvert.cluster import assembly as build
    from kvert.cluster.supervisor import Supervisor
    clock = WallClock()
    supervisor = Supervisor()
    if lease is not None and args.leader_elect:
        supervisor.add(name, build.leader_elected(client, clock, lease, lambda: make(client, clock),
                                                  **leader_election(args)))
    else:
        supervisor.add(name, make(client, clock))
    supervisor.start()
    print(f"{name} running against {client.server}", flush=True)
    try:
        code = await until_stopped_or_crashed(supervisor)
    finally:
        await supervisor.stop()
        await client.close()
    print(f"{name} stopped", flush=True)
    return code


async def _scheduler(args: argparse.Namespace) -> int:
    from kvert.cluster import assembly as build
    config = None
    if args.config is not None:
        from kvert.scheduler.config import ConfigError, load_config
        try:
            config = load_config(args.config)
        except ConfigError as e:
            raise ValueError(f"--config: {e}") from None
    return await _serve("scheduler", lambda client, clock: build.scheduler(client, clock, config=config),
                        _client(args, "kube-scheduler"), args, lease="kube-scheduler")


async def _controller_manager(args: argparse.Namespace) -> int:
    from kvert.cluster import assembly as build
    from kvert.controllers.manager import ALL_CONTROLLERS
    wanted = tuple(ALL_CONTROLLERS) if args.controllers.strip() == "*" else tuple(
        c.strip() for c in args.controllers.split(",") if c.strip())
    unknown = [c for c in wanted if c not in ALL_CONTROLLERS]
    if unknown:
        raise ValueError(f"--controllers: unknown {', '.join(unknown)}; known: {', '.join(ALL_CONTROLLERS)}")
    ca_pem = args.root_ca_file.read_bytes() if args.root_ca_file else _kubeconfig_ca(args)
    settings = {"root-ca-cert-publisher": {"ca_pem": ca_pem}}
    return await _serve("controller-manager",
                        lambda client, clock: build.controller_manager(
                            client, clock, controllers=wanted, settings=settings, root_ca=bool(ca_pem)),
                        _client(args, "kube-controller-manager"), args, lease="kube-controller-manager")


def _kubeconfig_ca(args: argparse.Namespace) -> bytes:
    """The certificate authority of the kubeconfig's current (or named) context's cluster,
    as kube-controller-manager uses it when --root-ca-file is not set."""
    from kvert.client.http import kubeconfig_cluster
    return kubeconfig_cluster((args.kubeconfig or default_kubeconfig()).expanduser(), args.context)[1]


async def _node_agent(args: argparse.Namespace) -> int:
    from kvert.clock import WallClock
    from kvert.cluster import assembly as build
    flags = node_flags_from_args(args)
    config = build.node_config(args.name, flags, args.kubelet_config)
    home = Path(os.environ.get("KVERT_HOME", Path.home() / ".kvert"))
    checkpoint = (args.checkpoint_dir or home / "nodes" / args.name).expanduser()
    if args.data_dir is not None:
        args.kubeconfig = _node_kubeconfig(args.data_dir.expanduser(), args.name)
        args.context = None
    client = _client(args, "kubelet")
    if not checkpoint.is_dir() and await build.node_in_use(client, WallClock(), args.name):
        await client.close()
        raise ValueError(f"node {args.name} is run by another agent (its Lease in kube-node-lease "
                         "is fresh); choose another --name")
    import ssl

    from kvert.apiserver.certs import ensure_pki
    from kvert.client.http import kubeconfig_cluster
    from kvert.cluster.kubeletserver import KubeletServer
    from kvert.kubelet.servingcert import ServingCertificates
    pki = ensure_pki(checkpoint / "pki", datetime.datetime.fromtimestamp(WallClock().now(), datetime.UTC),
                     names=(args.address, args.name, "localhost"))
    # the kubelet's --client-ca-file: the cluster CA of its kubeconfig signs the API server's
    # client certificate; the self-signed serving certificate is replaced by one from the CSR API
    ctx = pki.server_context()
    ca = kubeconfig_cluster((args.kubeconfig or default_kubeconfig()).expanduser(), args.context)[1]
    if ca:
        ctx.verify_mode = ssl.CERT_OPTIONAL
        ctx.load_verify_locations(cadata=ca.decode())

    def make(client: Client, clock: Clock) -> KubeletServer:
        agent = build.node(args.runtime, client, clock, config, name=args.name, checkpoint_dir=checkpoint,
                           host_ip=args.address)
        serving = ServingCertificates(client, clock, node_name=args.name, names=(args.address, args.name),
                                      directory=checkpoint / "pki", ssl_context=ctx)
        return KubeletServer(agent, client, clock, host=args.address, port=args.port, ssl_context=ctx,
                             serving=serving)
    return await _serve(f"node-agent/{args.name}", make, client, args)


def _node_kubeconfig(data_dir: Path, name: str) -> Path:
    """A kubeconfig for ``system:node:NAME`` from the API server's data directory: its
    token added to ``tokens.csv`` (the server reads new identities from it), the server's
    address and CA from the admin kubeconfig."""
    from kvert.apiserver.kubeconfig import write_kubeconfig
    from kvert.auth.tokens import TokenAuthenticator, node_identity
    from kvert.client.http import kubeconfig_cluster
    admin = data_dir / "kubeconfig"
    if not admin.is_file():
        raise ValueError(f"{data_dir} is not a kvert API server's data directory (no kubeconfig)")
    server, ca = kubeconfig_cluster(admin)
    user, groups = node_identity(name)
    token = TokenAuthenticator.load_or_create(data_dir / "tokens.csv").ensure(user, groups)
    path = data_dir / "kubeconfigs" / f"{user.replace(':', '-')}.kubeconfig"
    write_kubeconfig(path, server, ca, token, user=user)
    return path

