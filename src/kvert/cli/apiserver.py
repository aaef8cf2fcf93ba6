"""``kvert apiserver``: the API server alone, for components run as their own processes."""

from __future__ import annotations

import argparse
import asyncio
import logging
from pathlib import Path

from kvert.cli.up import (
    add_server_flags,
    apply_server_gates,
    identity_from_args,
    serve_until_stopped,
    start_or_exit,
)


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "apiserver", help="run the API server alone (no scheduler, controllers, nodes or VPA)",
        description="Run kvert's API server (HTTPS, bearer tokens) over a durable store, with the\n"
                    "system namespaces, priority classes and the VPA CRDs, and write an admin\n"
                    "kubeconfig. Run the other components against it as their own processes:\n"
                    "kvert scheduler, kvert controller-manager, kvert node-agent, kvert vpa ....",
        epilog="example: kvert apiserver --data-dir /tmp/k --store etcd://127.0.0.1:2379 --port 6443 &\n"
               "         kvert controller-manager --kubeconfig /tmp/k/kubeconfig &\n"
               "         kvert scheduler --kubeconfig /tmp/k/kubeconfig &\n"
               "         kvert node-agent --name node-1 --data-dir /tmp/k",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    add_server_flags(p)
    p.add_argument("--metrics-resolution", type=float, default=15.0,
                   help="seconds between samples of in-process node agents' usage (none here: "
                        "metrics.k8s.io is empty unless node agents run in this process)")
    p.add_argument("--feature-gates", default="", metavar="GATES",
                   help="Name=true|false,... for the API server's validation and admission, "
                        "Kubernetes 1.36's defaults otherwise (see docs/kubernetes-choices.md)")
    p.add_argument("--log-level", default="info", choices=["debug", "info", "warning", "error"],
                   help="log verbosity (default: info)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    logging.basicConfig(level=args.log_level.upper(),
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    apply_server_gates(args.feature_gates, "kvert apiserver")
    return asyncio.run(_serve(args))


async def _serve(args: argparse.Namespace) -> int:
    from kvert.cluster.live import ApiServerProcess
    data_dir: Path = args.data_dir.expanduser()
    process = ApiServerProcess(data_dir=data_dir,
                               store_url=args.store or f"sqlite:{data_dir / 'kvert.db'}",
                               host=args.host, port=args.port,
                               kubeconfig=(args.kubeconfig or data_dir / "kubeconfig").expanduser(),
                               compaction_interval=args.compaction_interval,
                               max_requests_inflight=args.max_requests_inflight,
                               max_mutating_requests_inflight=args.max_mutating_requests_inflight,
                               request_timeout=args.request_timeout,
                               kubelet_client_certificate=args.kubelet_client_certificate,
                               kubelet_client_key=args.kubelet_client_key,
                               kubelet_certificate_authority=args.kubelet_certificate_authority,
                               metrics_resolution=args.metrics_resolution,
                               identity=identity_from_args(args))
    await start_or_exit(process)
    print(f"kvert API server listening at {process.url}", flush=True)
    return await serve_until_stopped(process)
