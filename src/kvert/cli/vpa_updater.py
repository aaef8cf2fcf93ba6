"""``kvert vpa updater``: the VPA updater against any Kubernetes API server (kvert's, or a
real cluster with the VPA CRDs), with upstream VPA 1.8's flags: ``--updater-interval``,
``--min-replicas``, ``--eviction-tolerance``, ``--eviction-rate-limit``,
``--eviction-rate-burst``, ``--address`` (``:8943``: ``/metrics`` and ``/health-check``),
``--use-admission-controller-status`` (default true) with
``--admission-controller-status-lease-{name,namespace,timeout}``,
``--in-place-skip-disruption-budget``, ``--pod-update-threshold``,
``--in-recommendation-bounds-eviction-lifetime-threshold``, ``--evict-after-oom-threshold``,
``--feature-gates``, ``--vpa-object-namespace``, ``--ignored-vpa-object-namespaces``,
``--kube-api-qps``, ``--kube-api-burst`` and the ``--leader-elect*`` flags; kvert's own
``--in-place-timeout`` and ``--deferred-timeout``. It reads ``--kubeconfig`` (default
``$KUBECONFIG``, else ``~/.kube/config``; in a pod, the in-cluster configuration) and runs
until SIGINT/SIGTERM.
"""

from __future__ import annotations

import argparse
import asyncio
import os

from kvert.auth.policy import VPA_UPDATER_LEASE
from kvert.cli.component import client_from_args as _client
from kvert.cli.component import go_bool, run_component, stop_on_signals
from kvert.cli.vpa_common import common_flags as _common
from kvert.cli.vpa_common import duration_arg as _duration
from kvert.cli.vpa_common import elected as _elected
from kvert.cli.vpa_common import fraction_arg as _fraction
from kvert.cli.vpa_common import leader_election_flags as _leader_election_flags
from kvert.cli.vpa_common import nonnegative_int_arg as _nonnegative_int
from kvert.cli.vpa_common import run_until as _run_until
from kvert.cli.vpa_common import show_default as _show_default

UPDATER_EXAMPLE = """\
examples:
  kvert vpa updater --kubeconfig ~/.kvert/kubeconfig --updater-interval 30s
  kvert vpa updater --eviction-tolerance 0.25 --min-replicas 1
  kvert vpa updater --feature-gates InPlace=true,CPUStartupBoost=true --in-place-skip-disruption-budget
  # without kvert's (or upstream's) admission controller running
  kvert vpa updater --use-admission-controller-status=false

durations take Go's form (1m0s, 90s, 12h) or a number of seconds; booleans Go's
(--use-admission-controller-status=false).
"""


def _bool_flag(p: argparse.ArgumentParser, name: str, default: bool, help: str) -> None:
    p.add_argument(name, type=go_bool, nargs="?", const=True, default=default, metavar="BOOL",
                   help=f"{help} (default: {'true' if default else 'false'})")


def register(vpa_subparsers: argparse._SubParsersAction) -> None:
    """Add ``updater`` under ``kvert vpa``."""
    from kvert.vpa.admission_status import STATUS_NAME, STATUS_NAMESPACE
    from kvert.vpa.features import gates_help
    from kvert.vpa.serving import UPDATER_ADDRESS
    from kvert.vpa.throttle import DEFAULT_BURST, DEFAULT_QPS

    u = vpa_subparsers.add_parser(
        "updater", help="run the VPA updater against any API server",
        description="Run the VPA updater against any Kubernetes API server: pods whose requests are\n"
                    "outside their VPA's bounds are resized in place (pods/resize) or evicted\n"
                    "(pods/eviction, PodDisruptionBudgets apply), per the VPA's updateMode; CPU\n"
                    "startup boosts are taken back once they expire. Flags are upstream VPA 1.8's.\n"
                    "Runs until Ctrl-C.",
        epilog=UPDATER_EXAMPLE, formatter_class=argparse.RawDescriptionHelpFormatter)
    _common(u)
    u.add_argument("--updater-interval", "--interval", dest="interval", type=_duration, default=60.0,
                   metavar="DURATION", help="how often the updater runs (default: 1m)")
    u.add_argument("--eviction-tolerance", type=_fraction, default=0.5, metavar="FRACTION",
                   help="fraction of a workload's replicas that may be disrupted at once (default: 0.5)")
    u.add_argument("--eviction-rate-limit", type=float, default=-1.0, metavar="N",
                   help="pods that may be evicted per second; 0 or -1 disables the limit (default: -1)")
    u.add_argument("--eviction-rate-burst", type=int, default=1, metavar="N",
                   help="burst of pods that may be evicted (default: 1)")
    u.add_argument("--min-replicas", type=_nonnegative_int, default=2, metavar="N",
                   help="least live replicas for an update; a VPA's updatePolicy.minReplicas "
                        "overrides it (default: 2)")
    u.add_argument("--in-recommendation-bounds-eviction-lifetime-threshold", type=_duration, default=12 * 3600.0,
                   metavar="DURATION", help="pods that lived this long are updated even within the bounds "
                                            "when off target by --pod-update-threshold (default: 12h)")
    u.add_argument("--evict-after-oom-threshold", type=_duration, default=600.0, metavar="DURATION",
                   help="update a pod that was OOM-killed within this time of starting (default: 10m)")
    u.add_argument("--pod-update-threshold", type=float, default=0.1, metavar="X",
                   help="ignore updates whose priority (relative change) is lower (default: 0.1)")
    _bool_flag(u, "--in-place-skip-disruption-budget", False,
               "resize in place without the disruption budget when no container's resizePolicy "
               "is RestartContainer")
    u.add_argument("--in-place-timeout", type=_duration, default=3600.0, metavar="DURATION",
                   help="evict when an in-place resize is in progress longer (default: 1h; kvert)")
    u.add_argument("--deferred-timeout", type=_duration, default=300.0, metavar="DURATION",
                   help="evict when an in-place resize stays Deferred longer (default: 5m; kvert)")
    u.add_argument("--address", default=UPDATER_ADDRESS,
                   help=f"the address to expose Prometheus metrics and /health-check on (default {UPDATER_ADDRESS})")
    _bool_flag(u, "--use-admission-controller-status", True,
               "evict and resize only while the admission controller's status Lease is fresh")
    u.add_argument("--admission-controller-status-lease-name", default=STATUS_NAME, metavar="NAME",
                   help=f"the admission controller's status Lease; must match its --status-lease-name "
                        f"(default {STATUS_NAME})")
    u.add_argument("--admission-controller-status-lease-namespace", default="", metavar="NS",
                   help=f"the status Lease's namespace (default: $NAMESPACE, else {STATUS_NAMESPACE})")
    u.add_argument("--admission-controller-status-lease-timeout", type=_duration, default=60.0,
                   metavar="DURATION", help="a status Lease not renewed for longer is stale (default: 1m)")
    u.add_argument("--feature-gates", default="", metavar="GATES", help=f"Gate=true|false,... ({gates_help()})")
    u.add_argument("--vpa-object-namespace", default="", metavar="NS",
                   help="only the VPAs of this namespace (default: all namespaces)")
    u.add_argument("--ignored-vpa-object-namespaces", default="", metavar="NS,...",
                   help="comma-separated namespaces whose VPAs are left alone")
    u.add_argument("--kube-api-qps", type=float, default=DEFAULT_QPS, metavar="QPS",
                   help=f"requests a second to the API server (default {DEFAULT_QPS:g})")
    u.add_argument("--kube-api-burst", type=float, default=float(DEFAULT_BURST), metavar="N",
                   help=f"burst of requests to the API server (default {DEFAULT_BURST})")
    _leader_election_flags(u, VPA_UPDATER_LEASE)
    u.set_defaults(func=run_updater)


# -- updater ----------------------------------------------------------------------------------------

def status_lease_namespace(args: argparse.Namespace) -> str:
    """Upstream's order: the flag, else ``$NAMESPACE``, else kube-system."""
    from kvert.vpa.admission_status import STATUS_NAMESPACE
    return args.admission_controller_status_lease_namespace or os.environ.get("NAMESPACE") or STATUS_NAMESPACE


def updater_options(args: argparse.Namespace) -> dict:
    """The Updater's options from the command's flags (ValueError for a bad combination)."""
    from kvert.vpa.features import VpaGates
    if args.vpa_object_namespace and args.ignored_vpa_object_namespaces:
        raise ValueError("--vpa-object-namespace and --ignored-vpa-object-namespaces are mutually "
                         "exclusive and can't be set together.")
    if args.admission_controller_status_lease_timeout <= 0:
        raise ValueError("--admission-controller-status-lease-timeout must be positive.")
    return dict(
        interval=args.interval, eviction_tolerance=args.eviction_tolerance, min_replicas=args.min_replicas,
        in_place_timeout=args.in_place_timeout, deferred_timeout=args.deferred_timeout,
        pod_lifetime_threshold=args.in_recommendation_bounds_eviction_lifetime_threshold,
        evict_after_oom_threshold=args.evict_after_oom_threshold, min_change_priority=args.pod_update_threshold,
        gates=VpaGates.parse(args.feature_gates),
        in_place_skip_disruption_budget=args.in_place_skip_disruption_budget,
        eviction_rate_limit=args.eviction_rate_limit, eviction_rate_burst=args.eviction_rate_burst,
        use_admission_controller_status=args.use_admission_controller_status,
        admission_controller_status_lease_name=args.admission_controller_status_lease_name,
        admission_controller_status_lease_namespace=status_lease_namespace(args),
        admission_controller_status_lease_timeout=args.admission_controller_status_lease_timeout,
        vpa_object_namespace=args.vpa_object_namespace,
        ignored_vpa_object_namespaces=tuple(n.strip() for n in args.ignored_vpa_object_namespaces.split(",")
                                            if n.strip()))


async def serve_updater(args: argparse.Namespace, ready: asyncio.Event | None = None,
                        stop: asyncio.Event | None = None) -> int:
    from kvert.clock import WallClock
    from kvert.cluster import assembly as build
    from kvert.vpa.instruments import HealthCheck, UpdaterMetrics
    from kvert.vpa.serving import MetricsServer
    from kvert.vpa.throttle import ThrottledClient

    options = updater_options(args)
    clock = WallClock()
    raw = _client(args, "vpa-updater")
    client = ThrottledClient(raw, clock, args.kube_api_qps, int(args.kube_api_burst))
    informers = build.vpa_informers(client, clock)
    metrics = UpdaterMetrics()
    # upstream: unhealthy once five intervals pass without a finished loop
    health = HealthCheck(clock, args.interval * 5)
    status_server = MetricsServer(metrics, health, args.address)
    updater = _elected(args, client, clock, lambda: build.updater(
        client, clock, informers=informers, metrics=metrics, health=health, **options))
    stop = stop or asyncio.Event()
    stop_on_signals(stop)
    try:
        await status_server.start()
        print(f"vpa updater running against {raw.server} every {_show_default('duration', args.interval)} "
              f"(metrics on {args.address})", flush=True)
        if ready is not None:
            ready.set()
        await _run_until(updater, stop)
    finally:
        informers.stop()
        await status_server.stop()
        await raw.close()
    print("vpa updater stopped", flush=True)
    return 0


def run_updater(args: argparse.Namespace) -> int:
    return run_component(args, serve_updater)


__all__ = ["register", "run_updater", "serve_updater", "status_lease_namespace", "updater_options"]
