"""``kvert up``: a live, Kubernetes-compatible cluster on this machine."""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import signal
import sys
from pathlib import Path

from kvert.cli.history_flags import add_history_flags, history_from_args

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
               "event[,namespace]",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--data-dir", type=Path, default=DEFAULT_DATA_DIR,
                   help="where the store, certificates, tokens and kubeconfig live "
                        "(default: $KVERT_HOME, else ~/.kvert)")
    p.add_argument("--store", default="",
                   help="'sqlite:PATH', 'memory' or 'etcd://HOST:PORT' "
                        "(default: sqlite:DATA_DIR/kvert.db)")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default: 127.0.0.1, loopback only)")
    p.add_argument("--port", type=int, default=6443, help="HTTPS port, 0 picks a free one (default: 6443)")
    p.add_argument("--kubeconfig", type=Path, default=None,
                   help="where to write the kubeconfig (default: DATA_DIR/kubeconfig)")
    p.add_argument("--compaction-interval", type=float, default=300.0,
                   help="seconds between compactions of the store's history (kube-apiserver's "
                        "--etcd-compaction-interval); watches from older versions get 410 Expired (default: 300)")
    nodes = p.add_argument_group("nodes", "simulated nodes (node agents with the sim runtime); the "
                                 "kubelet-style flags apply to every node")
    nodes.add_argument("--nodes", type=int, default=1, help="how many nodes to run (default: 1)")
    nodes.add_argument("--node-capacity", default="cpu=4,memory=16Gi,pods=110",
                       help="each node's capacity (default: cpu=4,memory=16Gi,pods=110)")
    nodes.add_argument("--kube-reserved", default="",
                       help="reserved for Kubernetes daemons, e.g. cpu=500m,memory=1Gi (default: none)")
    nodes.add_argument("--system-reserved", default="",
                       help="reserved for the OS, e.g. cpu=500m,memory=1Gi (default: none)")
    nodes.add_argument("--eviction-hard", default=None,
                       help="e.g. memory.available<100Mi (default: the kubelet's defaults)")
    nodes.add_argument("--eviction-soft", default="",
                       help="soft eviction thresholds, e.g. memory.available<1.5Gi (default: none)")
    nodes.add_argument("--eviction-soft-grace-period", default="",
                       help="how long each soft threshold must hold, e.g. memory.available=1m30s")
    nodes.add_argument("--eviction-minimum-reclaim", default="",
                       help="what an eviction must win back beyond a threshold, e.g. memory.available=500Mi")
    nodes.add_argument("--eviction-max-pod-grace-period", type=int, default=0,
                       help="the longest termination grace period a soft eviction gives a pod, in seconds")
    nodes.add_argument("--eviction-pressure-transition-period", default="5m0s",
                       help="how long a pressure condition stays after its threshold is last met (default: 5m0s)")
    nodes.add_argument("--feature-gates", default="",
                       help="e.g. InPlacePodVerticalScalingExclusiveCPUs=true (see docs/kubernetes-choices.md)")
    nodes.add_argument("--enforce-node-allocatable", default="pods",
                       help="pods[,kube-reserved][,system-reserved] (default: pods)")
    nodes.add_argument("--cpu-manager-policy", default="none", choices=["none", "static"],
                       help="the kubelet's CPU manager policy (default: none)")
    nodes.add_argument("--kubelet-config", type=Path, default=None,
                       help="a KubeletConfiguration file (kubelet.config.k8s.io/v1beta1) instead of "
                            "the flags above (--node-capacity still applies)")
    nodes.add_argument("--metrics-resolution", type=float, default=15.0,
                       help="seconds between samples of the nodes' usage for the metrics.k8s.io API "
                            "(kubectl top; metrics-server's --metric-resolution)")
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
    add_history_flags(vpa, prefix="vpa-")
    p.add_argument("--log-level", default="info", choices=["debug", "info", "warning", "error"],
                   help="log verbosity (default: info)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    logging.basicConfig(level=args.log_level.upper(), format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    return asyncio.run(_up(args))


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


def _check_node_flags(flags: dict, kubelet_config: Path | None) -> None:
    """Refuse a bad node configuration before anything starts (exit 2, naming the flag)."""
    from kvert.kubelet.config import ConfigError, NodeConfig, load_kubelet_configuration
    try:
        if kubelet_config is not None:
            load_kubelet_configuration(kubelet_config, capacity=flags.get("capacity"))
        else:
            NodeConfig.from_flags(**flags)
    except ConfigError as e:
        print(f"error: {e}", file=sys.stderr)
        raise SystemExit(2) from None


async def _up(args: argparse.Namespace) -> int:
    from kvert.apiserver.cluster import Cluster

    data_dir: Path = args.data_dir.expanduser()
    node_flags = {"capacity": args.node_capacity,
                  "kube_reserved": args.kube_reserved,
                  "system_reserved": args.system_reserved,
                  "eviction_hard": args.eviction_hard,
                  "eviction_soft": args.eviction_soft,
                  "eviction_soft_grace_period": args.eviction_soft_grace_period,
                  "eviction_minimum_reclaim": args.eviction_minimum_reclaim,
                  "eviction_max_pod_grace_period": args.eviction_max_pod_grace_period,
                  "eviction_pressure_transition_period": args.eviction_pressure_transition_period,
                  "feature_gates": args.feature_gates,
                  "enforce_node_allocatable": args.enforce_node_allocatable,
                  "cpu_manager_policy": args.cpu_manager_policy}
    _check_node_flags(node_flags, args.kubelet_config)
    cluster = Cluster(data_dir=data_dir, store_url=args.store or f"sqlite:{data_dir / 'kvert.db'}",
                      host=args.host, port=args.port,
                      kubeconfig=(args.kubeconfig or data_dir / "kubeconfig").expanduser(),
                      compaction_interval=args.compaction_interval, nodes=args.nodes,
                      node_flags=node_flags,
                      kubelet_config=args.kubelet_config,
                      vpa_intervals=(args.vpa_recommender_interval, args.vpa_updater_interval),
                      vpa=getattr(args, "vpa", True),
                      vpa_history=_vpa_history(args),
                      metrics_resolution=args.metrics_resolution,
                      scheduler_config=_scheduler_config(args))
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    await cluster.start()
    print(f"kvert API server listening at {cluster.url}", flush=True)
    print(f"kubeconfig written to {cluster.kubeconfig}", flush=True)
    print(f"  export KUBECONFIG={cluster.kubeconfig}", flush=True)
    print("press Ctrl-C to stop", flush=True)
    await stop.wait()
    print("stopping...", flush=True)
    await cluster.stop()
    print("stopped", flush=True)
    return 0
