"""``kvert vpa updater``: the VPA updater against any Kubernetes API server (kvert's, or a
real cluster with the VPA CRDs), with upstream's flags: ``--updater-interval``,
``--eviction-tolerance``, ``--min-replicas``,
``--in-recommendation-bounds-eviction-lifetime-threshold``, ``--evict-after-oom-threshold`` and
``--pod-update-threshold``. It reads ``--kubeconfig`` (default ``$KUBECONFIG``, else
``~/.kube/config``) and runs until SIGINT/SIGTERM.
"""

from __future__ import annotations

import argparse
import asyncio

from kvert.auth.policy import VPA_UPDATER_LEASE
from kvert.cli.component import client_from_args as _client
from kvert.cli.component import run_component, stop_on_signals
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

durations take Go's form (1m0s, 90s, 12h) or a number of seconds.
"""


def register(vpa_subparsers: argparse._SubParsersAction) -> None:
    """Add ``updater`` under ``kvert vpa``."""
    u = vpa_subparsers.add_parser(
        "updater", help="run the VPA updater against any API server",
        description="Run the VPA updater against any Kubernetes API server: pods whose requests are\n"
                    "outside their VPA's bounds are resized in place (pods/resize) or evicted\n"
                    "(pods/eviction, PodDisruptionBudgets apply), per the VPA's updateMode.\n"
                    "Runs until Ctrl-C.",
        epilog=UPDATER_EXAMPLE, formatter_class=argparse.RawDescriptionHelpFormatter)
    _common(u)
    u.add_argument("--updater-interval", "--interval", dest="interval", type=_duration, default=60.0,
                   metavar="DURATION", help="how often the updater runs (default: 1m)")
    u.add_argument("--eviction-tolerance", type=_fraction, default=0.5, metavar="FRACTION",
                   help="fraction of a workload's replicas that may be disrupted at once (default: 0.5)")
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
    u.add_argument("--in-place-timeout", type=_duration, default=3600.0, metavar="DURATION",
                   help="evict when an in-place resize is in progress longer (default: 1h)")
    u.add_argument("--deferred-timeout", type=_duration, default=300.0, metavar="DURATION",
                   help="evict when an in-place resize stays Deferred longer (default: 5m)")
    _leader_election_flags(u, VPA_UPDATER_LEASE)
    u.set_defaults(func=run_updater)


# -- updater ----------------------------------------------------------------------------------------

async def serve_updater(args: argparse.Namespace, ready: asyncio.Event | None = None,
                        stop: asyncio.Event | None = None) -> int:
    from kvert.clock import WallClock
    from kvert.cluster import assembly as build

    clock = WallClock()
    client = _client(args, "vpa-updater")
    informers = build.vpa_informers(client, clock)
    updater = _elected(args, client, clock, lambda: build.updater(
        client, clock, informers=informers, interval=args.interval,
        eviction_tolerance=args.eviction_tolerance, min_replicas=args.min_replicas,
        in_place_timeout=args.in_place_timeout, deferred_timeout=args.deferred_timeout,
        pod_lifetime_threshold=args.in_recommendation_bounds_eviction_lifetime_threshold,
        evict_after_oom_threshold=args.evict_after_oom_threshold,
        min_change_priority=args.pod_update_threshold))
    stop = stop or asyncio.Event()
    stop_on_signals(stop)
    try:
        print(f"vpa updater running against {client.server} every {_show_default('duration', args.interval)}",
              flush=True)
        if ready is not None:
            ready.set()
        await _run_until(updater, stop)
    finally:
        informers.stop()
        await client.close()
    print("vpa updater stopped", flush=True)
    return 0


def run_updater(args: argparse.Namespace) -> int:
    return run_component(args, serve_updater)


__all__ = ["register", "run_updater", "serve_updater"]
