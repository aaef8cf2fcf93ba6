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

from kvert.api.durations import parse_go_duration
from kvert.cli.component import client_from_args as _client
from kvert.cli.component import default_kubeconfig, run_component, until_stopped_or_crashed
from kvert.cli.node_flags import add_node_flags, node_flags_from_args
from kvert.cli.up import add_leader_election_flags, leader_election
from kvert.controllers.manager import ALL_CONTROLLERS

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
    s.add_argument("--feature-gates", default="", metavar="GATES",
                   help="kube-scheduler's feature gates, e.g. "
                        "InPlacePodVerticalScalingSchedulerPreemption=true (default: 1.36's)")
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
                   help="controllers to run, comma-separated: '*' enables those on by default, "
                        "'foo' enables foo, '-foo' disables it (kubelet-serving-approver is off by "
                        "default; default: *)")
    c.add_argument("--cluster-signing-cert-file", type=Path, default=None, metavar="FILE",
                   help="the CA certificate (PEM) csrsigning issues CSRs' certificates with; csrsigning "
                        "runs only with it and --cluster-signing-key-file")
    c.add_argument("--cluster-signing-key-file", type=Path, default=None, metavar="FILE",
                   help="the CA's private key (PEM) for --cluster-signing-cert-file")
    c.add_argument("--cluster-signing-duration", type=_duration, default=365 * 24 * 3600.0,
                   metavar="DURATION",
                   help="the longest validity of a certificate csrsigning issues (a CSR's "
                        "expirationSeconds may ask for less), a Go duration (default: 8760h0m0s)")
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
    from kvert.api.features import FeatureGateError, parse_feature_gates
    from kvert.cluster import assembly as build
    try:
        gates = parse_feature_gates(args.feature_gates)
    except FeatureGateError as e:
        raise ValueError(f"--feature-gates: {e}") from None
    config = None
    if args.config is not None:
        from kvert.scheduler.config import ConfigError, load_config
        try:
            config = load_config(args.config)
        except ConfigError as e:
            raise ValueError(f"--config: {e}") from None
    return await _serve("scheduler", lambda client, clock: build.scheduler(client, clock, config=config,
                                                                           gates=gates),
                        _client(args, "kube-scheduler"), args, lease="kube-scheduler")


# kvert's controllers upstream does not run unless named
DISABLED_BY_DEFAULT = frozenset({"kubelet-serving-approver"})
KNOWN_CONTROLLERS = ALL_CONTROLLERS + ("root-ca-cert-publisher", "csrsigning", "kubelet-serving-approver")


def enabled_controllers(flag: str, known: tuple[str, ...] = KNOWN_CONTROLLERS) -> tuple[str, ...]:
    """The controllers ``--controllers`` enables, in ``known``'s order, as kube-controller-manager
    reads it (``IsControllerEnabled``): a name enables, ``-name`` disables, the first mention
    wins, and ``*`` enables every controller not named that is on by default. Raises
    ValueError naming an unknown controller."""
    items = [item.strip() for item in flag.split(",") if item.strip()]
    for item in items:
        name = item.removeprefix("-")
        if name != "*" and name not in known:
            raise ValueError(f'--controllers: "{name}" is not in the list of known controllers '
                             f"({', '.join(known)})")

    def enabled(name: str) -> bool:
        for item in items:
            if item == name:
                return True
            if item == "-" + name:
                return False
        return "*" in items and name not in DISABLED_BY_DEFAULT
    return tuple(name for name in known if enabled(name))


def signing_settings(args: argparse.Namespace) -> dict | None:
    """csrsigning's keyword arguments from the --cluster-signing-* flags, or None without them."""
    cert, key = args.cluster_signing_cert_file, args.cluster_signing_key_file
    if cert is None and key is None:
        return None
    if cert is None or key is None:
        raise ValueError("--cluster-signing-cert-file and --cluster-signing-key-file go together")
    if args.cluster_signing_duration <= 0:
        raise ValueError("--cluster-signing-duration must be positive")
    try:
        return {"ca_cert": cert.read_bytes(), "ca_key": key.read_bytes(),
                "duration_seconds": int(args.cluster_signing_duration)}
    except OSError as e:
        raise ValueError(f"--cluster-signing-{'cert' if e.filename == str(cert) else 'key'}-file: "
                         f"{e.strerror}: {e.filename}") from None


async def _controller_manager(args: argparse.Namespace) -> int:
    from kvert.cluster import assembly as build
    wanted = list(enabled_controllers(args.controllers))
    signing = signing_settings(args)
    settings: dict[str, dict] = {}
    if "csrsigning" in wanted:
        if signing is None:
            print("skipping CSR signer controller because no csr cert/key was specified", flush=True)
            wanted.remove("csrsigning")
        else:
            settings["csrsigning"] = signing
    root_ca = "root-ca-cert-publisher" in wanted
    if root_ca:
        wanted.remove("root-ca-cert-publisher")
        ca_pem = args.root_ca_file.read_bytes() if args.root_ca_file else _kubeconfig_ca(args)
        settings["root-ca-cert-publisher"] = {"ca_pem": ca_pem}
        root_ca = bool(ca_pem)
    return await _serve("controller-manager",
                        lambda client, clock: build.controller_manager(
                            client, clock, controllers=tuple(wanted), settings=settings, root_ca=root_ca),
                        _client(args, "kube-controller-manager"), args, lease="kube-controller-manager")


def _duration(text: str) -> float:
    try:
        return parse_go_duration(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


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

