"""``kvert up``: a live, Kubernetes-compatible cluster on this machine."""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import sys
from pathlib import Path

from kvert.api.features import parse_feature_gates, set_server_gates
from kvert.cli.component import go_bool, nonnegative_int_arg
from kvert.cli.history_flags import add_history_flags, history_from_args
from kvert.cli.node_flags import add_node_flags, node_flags_from_args
from kvert.vpa.features import FeatureGateError, VpaGates, gates_help

DEFAULT_DATA_DIR = Path(os.environ.get("KVERT_HOME", Path.home() / ".kvert"))


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "up", help="start a local Kubernetes-compatible cluster",
        description="Start kvert's API server (HTTPS, bearer tokens) over a durable store and\n"
                    "write a kubeconfig for kubectl and client libraries. Stops cleanly on Ctrl-C;\n"
                    "a restart on the same data directory keeps every object.",
        epilog="example: kvert up --port 6443 && kubectl --kubeconfig ~/.kvert/kubeconfig get ns\n"
               "         kvert up --nodes 2 --vpa-history-prometheus http://127.0.0.1:9090 "
               "--vpa-history-length 2d\n"
               "         kvert up --vpa-history-file usage.csv   # timestamp,pod,container,cpu,memory,"
               "event[,namespace]\n"
               "         sudo kvert up --runtime cgroupfs   # containers are processes in cgroups\n"
               "         kvert up --store etcd://127.0.0.1:2379 --pki-dir /srv/kvert-pki   # on each of "
               "several hosts: one cluster",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    add_server_flags(p)
    nodes = p.add_argument_group("nodes", "node agents (simulated containers, or real processes with "
                                 "--runtime cgroupfs); the kubelet-style flags apply to every node")
    nodes.add_argument("--nodes", type=int, default=1, help="how many nodes to run (default: 1)")
    add_node_flags(nodes)
    p.add_argument("--scheduler-config", type=Path, default=None, metavar="FILE",
                   help="a KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1) for the "
                        "scheduler, as kube-scheduler's --config (default: its default profile)")
    vpa = p.add_argument_group("vpa", "the Vertical Pod Autoscaler (recommender, updater, admission webhook)")
    vpa.add_argument("--vpa-recommender-interval", type=float, default=60.0,
                     help="seconds between recommender passes (default: 60, the VPA's)")
    vpa.add_argument("--vpa-updater-interval", type=float, default=60.0,
                     help="seconds between updater passes (default: 60, the VPA's)")
    vpa.add_argument("--no-vpa", dest="vpa", action="store_false",
                     help="run no VPA component (e.g. to run 'kvert vpa recommender' against the "
                          "cluster instead); the VPA CRDs are still installed")
    vpa.add_argument("--vpa-feature-gates", default="", metavar="GATES",
                     help="the VPA components' --feature-gates, upstream's (default: all off): " + gates_help())
    add_history_flags(vpa, prefix="vpa-")
    add_leader_election_flags(p, default=True)
    p.add_argument("--log-level", default="info", choices=["debug", "info", "warning", "error"],
                   help="log verbosity (default: info)")
    p.set_defaults(func=run)


def add_server_flags(parser: argparse.ArgumentParser) -> None:
    """The API server's flags, shared by ``kvert up`` and ``kvert apiserver``."""
    parser.add_argument("--data-dir", type=Path, default=DEFAULT_DATA_DIR,
                   help="where the store, certificates, tokens and kubeconfig live "
                        "(default: $KVERT_HOME, else ~/.kvert)")
    parser.add_argument("--store", default="",
                   help="'sqlite:PATH', 'memory' or 'etcd://HOST:PORT' "
                        "(default: sqlite:DATA_DIR/kvert.db)")
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (default: 127.0.0.1, loopback only)")
    parser.add_argument("--port", type=int, default=6443, help="HTTPS port, 0 picks a free one (default: 6443)")
    parser.add_argument("--kubeconfig", type=Path, default=None,
                   help="where to write the kubeconfig (default: DATA_DIR/kubeconfig)")
    parser.add_argument("--compaction-interval", type=float, default=300.0,
                   help="seconds between compactions of the store's history (kube-apiserver's "
                        "--etcd-compaction-interval); watches from older versions get 410 Expired (default: 300)")
    add_identity_flags(parser)
    parser.add_argument("--max-requests-inflight", type=nonnegative_int_arg, default=400, metavar="N",
                        help="read-only requests served at once; more get 429 (watches and other long-running "
                             "requests are not counted, system:masters is always served; 0: no limit; default: 400)")
    parser.add_argument("--max-mutating-requests-inflight", type=nonnegative_int_arg, default=200, metavar="N",
                        help="mutating requests served at once; more get 429 (0: no limit; default: 200)")
    parser.add_argument("--request-timeout", type=_non_negative_seconds, default=60.0, metavar="DURATION",
                        help="how long a request that is not long-running (watches, exec, logs are) may "
                             "take to send its body, a Go duration (0: no limit; default: 1m0s)")
    kubelet = parser.add_argument_group("node agents", "how the API server reaches node agents' kubelet "
                                        "endpoints (logs, exec, attach, port-forward, node proxy)")
    kubelet.add_argument("--kubelet-client-certificate", type=Path, default=None, metavar="FILE",
                         help="the client certificate presented to node agents (default: one for "
                              "kube-apiserver-kubelet-client from the cluster CA, "
                              "DATA_DIR/pki/apiserver-kubelet-client.crt)")
    kubelet.add_argument("--kubelet-client-key", type=Path, default=None, metavar="FILE",
                         help="its private key (default: DATA_DIR/pki/apiserver-kubelet-client.key)")
    kubelet.add_argument("--kubelet-certificate-authority", type=Path, default=None, metavar="FILE",
                         help="the CA node agents' serving certificates must chain to, for the address "
                              "dialled, e.g. DATA_DIR/pki/ca.crt (default: not verified, as kube-apiserver)")


def add_identity_flags(parser: argparse.ArgumentParser) -> None:
    """Where the cluster's CA and ServiceAccount keys come from: API servers that share them
    accept each other's tokens and certificates (kube-apiserver's flags, and --pki-dir)."""
    group = parser.add_argument_group(
        "cluster identity", "API servers of one cluster (e.g. on one etcd) share a PKI directory, or "
        "are given the same files: then tokens, client certificates and kubeconfigs of one work on all")
    group.add_argument("--pki-dir", type=Path, default=None, metavar="DIR",
                       help="the CA (ca.crt, ca.key), serving certificate (apiserver.crt, .key) and "
                            "ServiceAccount keys (sa.key signs, sa.pub verifies), made by the first "
                            "server that starts, loaded by the others (default: DATA_DIR/pki)")
    group.add_argument("--service-account-signing-key-file", type=Path, default=None, metavar="FILE",
                       help="the private key (RSA or ECDSA, PEM) that signs ServiceAccount tokens "
                            "(default: PKI_DIR/sa.key)")
    group.add_argument("--service-account-key-file", type=Path, action="append", default=[], metavar="FILE",
                       help="PEM public or private keys that verify ServiceAccount tokens; repeatable, "
                            "several keys per file (default: PKI_DIR/sa.pub; the signing key always verifies)")
    group.add_argument("--service-account-issuer", action="append", default=[], metavar="URL",
                       help="the tokens' issuer; repeatable: the first signs, all are accepted "
                            "(default: https://kubernetes.default.svc.cluster.local)")
    group.add_argument("--service-account-max-token-expiration", type=_max_token_expiration, default=0.0,
                       metavar="DURATION",
                       help="the longest validity of a token TokenRequest issues; a request for longer is "
                            "shortened to it, with a warning (a Go duration from 1h to 2^32s; default: "
                            "0, no limit)")
    group.add_argument("--client-ca-file", type=Path, default=None, metavar="FILE",
                       help="the CA bundle client certificates must chain to (default: PKI_DIR/ca.crt)")
    group.add_argument("--tls-cert-file", type=Path, default=None, metavar="FILE",
                       help="the serving certificate, with --tls-private-key-file (default: "
                            "PKI_DIR/apiserver.crt; kubeconfigs still name PKI_DIR/ca.crt as its CA)")
    group.add_argument("--tls-private-key-file", type=Path, default=None, metavar="FILE",
                       help="the serving certificate's key (default: PKI_DIR/apiserver.key)")


def identity_from_args(args: argparse.Namespace):
    """The IdentityOptions of the cluster identity flags."""
    from kvert.apiserver.identity import IdentityOptions
    return IdentityOptions(pki_dir=args.pki_dir,
                           service_account_signing_key_file=args.service_account_signing_key_file,
                           service_account_key_files=tuple(args.service_account_key_file),
                           service_account_issuers=tuple(args.service_account_issuer),
                           service_account_max_token_expiration=args.service_account_max_token_expiration,
                           client_ca_file=args.client_ca_file, tls_cert_file=args.tls_cert_file,
                           tls_private_key_file=args.tls_private_key_file)


def add_leader_election_flags(parser: argparse.ArgumentParser, *, default: bool) -> None:
    """kube-scheduler's and kube-controller-manager's ``--leader-elect*`` flags."""
    group = parser.add_argument_group("leader election", "replicas share a Lease in kube-system; "
                                      "only its holder works")
    # upstream's components take Go's --leader-elect=true|false; --no-leader-elect is kvert's too
    group.add_argument("--leader-elect", type=go_bool, nargs="?", const=True, default=default, metavar="BOOL",
                       help=f"take part in leader election (default: {str(default).lower()})")
    group.add_argument("--no-leader-elect", dest="leader_elect", action="store_false",
                       help="do not take part in leader election")
    group.add_argument("--leader-elect-lease-duration", type=_seconds, default=15.0, metavar="DURATION",
                       help="how long a standby waits after the last renewal before it takes the "
                            "lease (default: 15s)")
    group.add_argument("--leader-elect-renew-deadline", type=_seconds, default=10.0, metavar="DURATION",
                       help="how long the leader keeps trying to renew before it stops leading "
                            "(default: 10s)")
    group.add_argument("--leader-elect-retry-period", type=_seconds, default=2.0, metavar="DURATION",
                       help="how often candidates try to acquire or renew (default: 2s)")


def leader_election(args: argparse.Namespace) -> dict:
    return {"lease_duration": args.leader_elect_lease_duration,
            "renew_deadline": args.leader_elect_renew_deadline,
            "retry_period": args.leader_elect_retry_period}


def _max_token_expiration(text: str) -> float:
    """kube-apiserver's bounds on ``--service-account-max-token-expiration`` (0: unset)."""
    value = _seconds(text)
    if value != 0 and not 3600 <= value <= 2**32:
        raise argparse.ArgumentTypeError("the service-account-max-token-expiration must be between 1 hour "
                                         "and 2^32 seconds")
    return value


def _non_negative_seconds(text: str) -> float:
    """kube-apiserver's ``--request-timeout can not be negative value``."""
    value = _seconds(text)
    if value < 0:
        raise argparse.ArgumentTypeError("can not be negative value")
    return value


def _seconds(text: str) -> float:
    from kvert.kubelet.config import ConfigError, parse_duration
    try:
        return parse_duration(text)
    except (ConfigError, ValueError) as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def run(args: argparse.Namespace) -> int:
    logging.basicConfig(level=args.log_level.upper(), format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    apply_server_gates(args.feature_gates, "kvert up")
    return asyncio.run(_up(args))


def apply_server_gates(text: str, command: str) -> None:
    """--feature-gates for the API server of this process (kube-apiserver's are process-wide
    too); exits 2 naming a bad gate."""
    try:
        set_server_gates(parse_feature_gates(text))
    except FeatureGateError as e:
        print(f"{command}: --feature-gates: {e}", file=sys.stderr)
        raise SystemExit(2) from None


def _vpa_history(args: argparse.Namespace):
    """The recommender's history provider from the --vpa-history-* flags (None without one).
    Raises SystemExit(2) with a message for a bad flag."""
    try:
        return history_from_args(args, prefix="vpa-")
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        raise SystemExit(2) from None


def _scheduler_config(args: argparse.Namespace):
    """The parsed --scheduler-config (None without one); exits 2 naming a bad field."""
    if args.scheduler_config is None:
        return None
    from kvert.scheduler.config import ConfigError, load_config
    try:
        return load_config(args.scheduler_config)
    except ConfigError as e:
        print(f"error: --scheduler-config: {e}", file=sys.stderr)
        raise SystemExit(2) from None


def _vpa_gates(args: argparse.Namespace) -> VpaGates:
    try:
        return VpaGates.parse(args.vpa_feature_gates)
    except FeatureGateError as e:
        print(f"kvert up: --vpa-feature-gates: {e}", file=sys.stderr)
        raise SystemExit(2) from None


async def _up(args: argparse.Namespace) -> int:
    from kvert.cluster.live import Cluster

    data_dir: Path = args.data_dir.expanduser()
    node_flags = node_flags_from_args(args)
    cluster = Cluster(data_dir=data_dir, store_url=args.store or f"sqlite:{data_dir / 'kvert.db'}",
                      host=args.host, port=args.port,
                      kubeconfig=(args.kubeconfig or data_dir / "kubeconfig").expanduser(),
                      compaction_interval=args.compaction_interval, nodes=args.nodes,
                      max_requests_inflight=args.max_requests_inflight,
                      max_mutating_requests_inflight=args.max_mutating_requests_inflight,
                      request_timeout=args.request_timeout,
                      kubelet_client_certificate=args.kubelet_client_certificate,
                      kubelet_client_key=args.kubelet_client_key,
                      kubelet_certificate_authority=args.kubelet_certificate_authority,
                      node_flags=node_flags,
                      kubelet_config=args.kubelet_config,
                      vpa_intervals=(args.vpa_recommender_interval, args.vpa_updater_interval),
                      vpa=getattr(args, "vpa", True),
                      vpa_history=_vpa_history(args),
                      metrics_resolution=args.metrics_resolution,
                      scheduler_config=_scheduler_config(args),
                      leader_elect=args.leader_elect, leader_election=leader_election(args),
                      runtime=args.runtime, vpa_gates=_vpa_gates(args),
                      identity=identity_from_args(args))
    await start_or_exit(cluster)
    print(f"kvert API server listening at {cluster.url}", flush=True)
    if cluster.node_names:
        print(f"nodes: {', '.join(cluster.node_names)}", flush=True)
    return await serve_until_stopped(cluster)


async def start_or_exit(process) -> None:
    """Start the API server (process); flags or files that make no cluster identity exit 2
    with the reason, as kube-apiserver refuses bad key files at start."""
    from kvert.apiserver.identity import IdentityError
    try:
        await process.start()
    except IdentityError as e:
        print(f"error: {e}", file=sys.stderr)
        raise SystemExit(2) from None


async def serve_until_stopped(process) -> int:
    """Print the kubeconfig, run until SIGINT/SIGTERM or a component crash (exit 1, naming
    it), then stop everything."""
    from kvert.cli.component import until_stopped_or_crashed
    print(f"kubeconfig written to {process.kubeconfig}", flush=True)
    print(f"  export KUBECONFIG={process.kubeconfig}", flush=True)
    print("press Ctrl-C to stop", flush=True)
    code = await until_stopped_or_crashed(process.supervisor)
    print("stopping...", flush=True)
    await process.stop()
    print("stopped", flush=True)
    return code
