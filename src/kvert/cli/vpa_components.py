"""``kvert vpa recommender``: the VPA recommender against any Kubernetes API server (kvert's, or a
real cluster with metrics-server and the VPA CRDs), with upstream VPA 1.8's flags
(``pkg/recommender/config/config.go``, ``common/flags.go``). The updater's command is
:mod:`kvert.cli.vpa_updater`.

It reads ``--kubeconfig`` (default ``$KUBECONFIG``, else ``~/.kube/config``, as kubectl; in a
pod, the in-cluster configuration), paces its requests by ``--kube-api-qps`` / ``--kube-api-burst``
and runs until SIGINT/SIGTERM. Every ``--recommender-interval`` it reads VPAs and pods (through
its own informer caches), samples usage from ``/apis/metrics.k8s.io/v1beta1/pods``
(:class:`~kvert.vpa.metrics_source.HttpMetricsSource`; a namespace's with
``--vpa-object-namespace``), writes ``status.recommendation``, conditions and
``observedGeneration``, and writes the VerticalPodAutoscalerCheckpoints (each loop, within
``--checkpoints-timeout``; kvert's ``--checkpoint-write-interval`` spaces them), deleting
orphaned ones every ``--checkpoints-gc-interval``. ``/metrics`` (upstream's recommender metrics)
and ``/health-check`` (unhealthy after five intervals without a loop) are served on
``--address`` (``:8942``). Every constant of the model is a flag with upstream's name
(``--target-cpu-percentile``, ``--recommendation-margin-fraction``, ...; generated from
:class:`~kvert.vpa.recommendation.RecommenderConfig`, whose ``vpa.kvert.io/*`` annotations
still override them per VPA); ``--feature-gates`` (PerVPAConfig), ``--memory-saver``,
``--recommender-name``, ``--ignored-vpa-object-namespaces``, ``--storage`` and upstream's
Prometheus flags (:mod:`kvert.cli.history_flags`) too; ``--update-worker-count``,
``--min-checkpoints``, ``--profiling`` and ``--stderrthreshold`` are accepted (the help says
what each does here), ``--v`` sets the log level.

With ``--listen HOST:PORT`` it also serves seed 002's Recommender API, ``autoscaling.kvert.io/v1``
RecommendationQuery, over HTTPS (``POST /apis/autoscaling.kvert.io/v1/namespaces/NS/recommendationqueries``),
with ``--tls-cert-file``/``--tls-private-key-file`` or a CA and certificate it makes in
``--cert-dir``. With ``--history-prometheus URL`` (upstream's ``--prometheus-address``) or
``--history-file FILE.csv`` (and ``--history-length``/``--history-resolution``) it loads, at start,
the usage history of VPAs that have no checkpoints (:mod:`kvert.vpa.history`), as ``kvert up``'s
``--vpa-history-*`` flags do; ``--storage=prometheus`` loads every VPA's and keeps no checkpoints,
``--storage=checkpoint`` reads none.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import logging
import os
import ssl
from dataclasses import fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kvert.auth.policy import VPA_RECOMMENDER_LEASE
from kvert.cli.component import client_from_args as _client
from kvert.cli.component import default_kubeconfig, go_bool, run_component, stop_on_signals
from kvert.cli.history_flags import (
    add_history_flags,
    add_prometheus_history_flags,
    history_from_args,
    storage_from_args,
)
from kvert.cli.vpa_common import common_flags as _common
from kvert.cli.vpa_common import duration_arg as _duration
from kvert.cli.vpa_common import elected as _elected
from kvert.cli.vpa_common import leader_election_flags as _leader_election_flags
from kvert.cli.vpa_common import positive_int_arg as _positive_int
from kvert.cli.vpa_common import run_until as _run_until
from kvert.cli.vpa_common import show_default as _show_default

if TYPE_CHECKING:           # the commands load their components when run
    from kvert.clock import Clock

log = logging.getLogger(__name__)

RECOMMENDER_EXAMPLE = """\
examples:
  # against kvert's own cluster, with the built-in VPA turned off
  kvert up --no-vpa &
  kvert vpa recommender --kubeconfig ~/.kvert/kubeconfig --recommender-interval 10s

  # against any cluster (metrics-server and the VPA CRDs installed), with a wider safety margin,
  # and the RecommendationQuery API on https://127.0.0.1:8950 (metrics stay on :8942)
  kvert vpa recommender --recommendation-margin-fraction 0.25 --listen 127.0.0.1:8950
  curl --cacert ~/.kvert/vpa-recommender/ca.crt -H 'Content-Type: application/json' \\
    -d @query.json https://127.0.0.1:8950/apis/autoscaling.kvert.io/v1/namespaces/default/recommendationqueries
  curl http://127.0.0.1:8942/metrics

  # upstream's flags as upstream's deployment passes them
  kvert vpa recommender --storage=prometheus --prometheus-address=http://prometheus.monitoring.svc \\
    --container-pod-name-label=pod --container-name-label=container --memory-saver \\
    --feature-gates=PerVPAConfig=true --v=4

  # start from two days of usage history in Prometheus (VPAs without checkpoints), or from a trace file
  kvert vpa recommender --history-prometheus http://127.0.0.1:9090 --history-length 2d --history-resolution 5m
  kvert vpa recommender --history-file usage.csv   # timestamp,pod,container,cpu,memory,event[,namespace]

durations take Go's form (1m0s, 90s, 24h) or a number of seconds, the --history-* ones also
Prometheus' (8d, 1w); quantities Kubernetes' (2, 4Gi).
"""

# upstream's descriptions of the recommender flags (docs/flags.md), by flag name
_FLAG_HELP = {
    "recommendation-margin-fraction": "fraction of usage added as the safety margin to the recommended request",
    "pod-recommendation-min-cpu-millicores": "minimum CPU recommendation for a pod, in millicores",
    "pod-recommendation-min-memory-mb": "minimum memory recommendation for a pod, in MiB",
    "target-cpu-percentile": "CPU usage percentile the CPU target is based on",
    "recommendation-lower-bound-cpu-percentile": "CPU usage percentile of the CPU lower bound",
    "recommendation-upper-bound-cpu-percentile": "CPU usage percentile of the CPU upper bound",
    "confidence-interval-cpu": "history length for a full confidence of the CPU bounds",
    "target-memory-percentile": "memory peak percentile the memory target is based on",
    "recommendation-lower-bound-memory-percentile": "memory peak percentile of the memory lower bound",
    "recommendation-upper-bound-memory-percentile": "memory peak percentile of the memory upper bound",
    "confidence-interval-memory": "history length for a full confidence of the memory bounds",
    "round-cpu-millicores": "round CPU recommendations up to a multiple of this many millicores",
    "round-memory-bytes": "round memory recommendations up to a multiple of this many bytes",
    "cpu-integer-post-processor-enabled": "round CPU up to whole cores for containers a VPA opts in "
                                          "(vpa-post-processor.kubernetes.io/NAME_integerCPU=true)",
    "container-recommendation-max-allowed-cpu": "most CPU recommended for a container (a VPA's "
                                                "maxAllowed takes precedence)",
    "container-recommendation-max-allowed-memory": "most memory recommended for a container (a VPA's "
                                                   "maxAllowed takes precedence)",
    "memory-aggregation-interval": "length of one memory peak interval",
    "memory-aggregation-interval-count": "how many memory peak intervals make up the history",
    "memory-histogram-decay-half-life": "time for a memory sample to lose half its weight",
    "cpu-histogram-decay-half-life": "time for a CPU sample to lose half its weight",
    "oom-bump-up-ratio": "memory bump-up ratio after an OOM kill",
    "oom-min-bump-up-bytes": "least memory bump-up after an OOM kill, in bytes",
}
_METAVAR = {"duration": "DURATION", "percentile": "P", "positive-int": "N", "bool": "BOOL",
            "cpu": "QUANTITY", "memory": "QUANTITY", "float": "X", "ratio": "X", "positive": "X"}


def _default_cert_dir() -> Path:
    home = Path(os.environ.get("KVERT_HOME", Path.home() / ".kvert"))
    return home / "vpa-recommender"


def config_flags() -> list[tuple[str, str, str, Any]]:
    """(flag name, RecommenderConfig field, kind, default) of every recommender flag."""
    from kvert.vpa.recommendation import ANNOTATION_PREFIX, RecommenderConfig
    out = []
    for f in fields(RecommenderConfig):
        if f.metadata.get("source") == "flag":
            out.append((f.metadata["annotation"][len(ANNOTATION_PREFIX):], f.name, f.metadata["kind"], f.default))
    return out


def _flag(p: argparse._ActionsContainer, *names: str, **kw: Any) -> None:
    """``add_argument`` of a flag the shared flags (``vpa_common``) may already define."""
    taken = getattr(p, "_option_string_actions", {})
    names = tuple(n for n in names if n not in taken)
    if names:
        p.add_argument(*names, **kw)


class _Verbosity(argparse.Action):
    """klog's ``--v=N`` as the log level: 5 and up debug, 2 to 4 info (upstream's default is 4),
    0 and 1 warnings only."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:
        try:
            level = int(str(values))
        except ValueError:
            raise argparse.ArgumentError(self, f"invalid int value: {values!r}") from None
        namespace.v = level
        namespace.log_level = "debug" if level >= 5 else "info" if level >= 2 else "warning"


def _upstream_common_flags(p: argparse.ArgumentParser) -> None:
    """common/flags.go's flags and klog's, as upstream's recommender takes them."""
    from kvert.vpa.features import gates_help
    from kvert.vpa.throttle import DEFAULT_BURST, DEFAULT_QPS
    g = p.add_argument_group("upstream's common flags")
    _flag(g, "--kube-api-qps", type=float, default=DEFAULT_QPS, metavar="QPS",
          help=f"requests a second to the API server (default {DEFAULT_QPS:g})")
    _flag(g, "--kube-api-burst", type=float, default=float(DEFAULT_BURST), metavar="N",
          help=f"burst of requests to the API server (default {DEFAULT_BURST})")
    _flag(g, "--vpa-object-namespace", default="", metavar="NS",
          help="only the VPAs (and pods, checkpoints) of this namespace (default: all namespaces)")
    _flag(g, "--ignored-vpa-object-namespaces", default="", metavar="NS,...",
          help="comma-separated namespaces whose VPAs and checkpoints are left alone")
    _flag(g, "--feature-gates", default="", metavar="GATES",
          help=f"Gate=true|false,...: the recommender reads PerVPAConfig ({gates_help()})")
    _flag(g, "--profiling", type=go_bool, nargs="?", const=True, default=False, metavar="BOOL",
          help="accepted for upstream's /debug/pprof endpoint, which a Python process does not serve")
    _flag(g, "--v", action=_Verbosity, default=4, metavar="N",
          help="klog's verbosity as the log level: 5+ debug, 2-4 info, 0-1 warnings (default: 4)")
    _flag(g, "--stderrthreshold", default="INFO", metavar="SEVERITY",
          help="accepted: every log line goes to stderr (default: INFO)")


def register(vpa_subparsers: argparse._SubParsersAction) -> None:
    """Add ``recommender`` under ``kvert vpa``."""
    from kvert.vpa.serving import RECOMMENDER_ADDRESS
    r = vpa_subparsers.add_parser(
        "recommender", help="run the VPA recommender against any API server",
        description="Run the VPA recommender against any Kubernetes API server: sample pod usage from\n"
                    "metrics.k8s.io, write each VPA's status.recommendation and conditions, keep\n"
                    "history in VerticalPodAutoscalerCheckpoints (upstream VPA 1.8's, in its format).\n"
                    "Flags are upstream's; with --listen, it also answers RecommendationQuery\n"
                    "(autoscaling.kvert.io/v1) over HTTPS. Runs until Ctrl-C.",
        epilog=RECOMMENDER_EXAMPLE, formatter_class=argparse.RawDescriptionHelpFormatter)
    _common(r)
    r.add_argument("--recommender-interval", "--interval", dest="interval", type=_duration, default=60.0,
                   metavar="DURATION", help="how often metrics are fetched and recommendations written "
                                            "(default: 1m)")
    r.add_argument("--checkpoints-gc-interval", type=_duration, default=600.0, metavar="DURATION",
                   help="how often orphaned checkpoints are deleted (default: 10m)")
    r.add_argument("--checkpoints-timeout", type=_duration, default=60.0, metavar="DURATION",
                   help="checkpoints are written until this long after the loop's start, once "
                        "--update-worker-count VPAs have theirs (default: 1m)")
    r.add_argument("--update-worker-count", type=_positive_int, default=10, metavar="N",
                   help="upstream's concurrent status and checkpoint writers; kvert writes one at a time, "
                        "and this many VPAs' checkpoints before the timeout applies (default: 10)")
    r.add_argument("--min-checkpoints", type=_positive_int, default=10, metavar="N",
                   help="deprecated and without effect, as upstream's (default: 10)")
    r.add_argument("--checkpoint-write-interval", type=_duration, default=0.0, metavar="DURATION",
                   help="kvert: write the checkpoints at most this often (default: every loop, as upstream)")
    r.add_argument("--checkpoint-exact", type=go_bool, nargs="?", const=True, default=False, metavar="BOOL",
                   help="kvert: checkpoints that give back exactly the recommendation (finer bucket weights "
                        "when 10000 would move a percentile, times with fractions); default: upstream's "
                        "bytes, heaviest bucket 10000, whole seconds")
    r.add_argument("--memory-saver", type=go_bool, nargs="?", const=True, default=False, metavar="BOOL",
                   help="only keep the pods some VPA matches (default: false)")
    r.add_argument("--address", default=RECOMMENDER_ADDRESS, metavar="HOST:PORT",
                   help=f"where /metrics and /health-check are served (default: {RECOMMENDER_ADDRESS})")
    r.add_argument("--recommender-name", default="default",
                   help="serve the VPAs whose spec.recommenders name this recommender; the default one "
                        "also serves those naming none (default: default)")
    model = r.add_argument_group("recommendation model", "upstream's recommender flags; a VPA's "
                                 "vpa.kvert.io/FLAG annotations override them for that VPA")
    for flag, name, kind, default in config_flags():
        boolean = {"nargs": "?", "const": "true"} if kind == "bool" else {}   # --flag alone: true
        model.add_argument(f"--{flag}", dest=f"cfg_{name}", default=None, metavar=_METAVAR.get(kind, "X"),
                           **boolean,
                           help=f"{_FLAG_HELP.get(flag, name.replace('_', ' '))} "
                                f"(default: {_show_default(kind, default)})")
    query = r.add_argument_group("RecommendationQuery API", "seed 002's Recommender API over HTTPS")
    query.add_argument("--listen", metavar="HOST:PORT", default=None,
                       help="serve RecommendationQuery on this address (port 0: any free port); "
                            "not served without it")
    query.add_argument("--tls-cert-file", type=Path, default=None, help="serving certificate (PEM)")
    query.add_argument("--tls-private-key-file", "--tls-private-key", dest="tls_private_key_file", type=Path,
                       default=None, help="its private key (PEM)")
    query.add_argument("--cert-dir", type=Path, default=None,
                       help="without --tls-cert-file: where a CA (ca.crt) and a certificate signed by "
                            "it are made or reused (default: $KVERT_HOME/vpa-recommender, else "
                            "~/.kvert/vpa-recommender)")
    history = r.add_argument_group("usage history", "where the recommender finds the history of VPAs "
                                   "that have no checkpoints yet, at start (default: nowhere)")
    add_history_flags(history)
    add_prometheus_history_flags(history)
    _upstream_common_flags(r)
    _leader_election_flags(r, VPA_RECOMMENDER_LEASE)
    r.set_defaults(func=run_recommender)


# -- recommender ------------------------------------------------------------------------------------

def recommender_config(args: argparse.Namespace):
    """The RecommenderConfig the flags ask for (raises ValueError naming the bad flag)."""
    from kvert.vpa.recommendation import ANNOTATION_PREFIX, DEFAULT_CONFIG
    given = {f"{ANNOTATION_PREFIX}{flag}": getattr(args, f"cfg_{name}")
             for flag, name, _, _ in config_flags() if getattr(args, f"cfg_{name}", None) is not None}
    config, problems = DEFAULT_CONFIG.with_annotations(given)
    if problems:
        raise ValueError("; ".join("--" + p[len(ANNOTATION_PREFIX):] for p in problems))
    return config


def parse_listen(text: str) -> tuple[str, int]:
    host, sep, port = text.rpartition(":")
    if not sep:
        raise ValueError(f"--listen {text!r}: expected HOST:PORT")
    host = host.strip("[]") or "0.0.0.0"
    try:
        number = int(port)
    except ValueError:
        raise ValueError(f"--listen {text!r}: the port is not a number") from None
    if not 0 <= number <= 65535:
        raise ValueError(f"--listen {text!r}: the port must be 0..65535")
    return host, number


def _ssl_context(args: argparse.Namespace, host: str, clock: Clock) -> tuple[ssl.SSLContext, Path | None]:
    if args.tls_cert_file or args.tls_private_key_file:
        if not (args.tls_cert_file and args.tls_private_key_file):
            raise ValueError("--tls-cert-file and --tls-private-key-file go together")
        ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        try:
            ctx.load_cert_chain(str(args.tls_cert_file), str(args.tls_private_key_file))
        except ssl.SSLError as e:
            raise ValueError(f"cannot load {args.tls_cert_file} / {args.tls_private_key_file}: {e}") from None
        return ctx, None
    from kvert.apiserver.certs import ensure_pki
    now = datetime.datetime.fromtimestamp(clock.now(), datetime.UTC)
    names = tuple(dict.fromkeys(n for n in (host, "localhost", "127.0.0.1", "::1") if n not in ("0.0.0.0", "::")))
    pki = ensure_pki((args.cert_dir or _default_cert_dir()).expanduser(), now, names)
    return pki.server_context(), pki.ca_cert


def recommender_options(args: argparse.Namespace) -> dict[str, Any]:
    """The Recommender's options from the command's flags (ValueError naming a bad one)."""
    from kvert.vpa.features import FeatureGateError, VpaGates
    if args.vpa_object_namespace and args.ignored_vpa_object_namespaces:
        raise ValueError("--vpa-object-namespace and --ignored-vpa-object-namespaces are mutually "
                         "exclusive and can't be set together.")
    try:
        gates = VpaGates.parse(args.feature_gates)
    except FeatureGateError as e:
        raise ValueError(f"--feature-gates: {e}") from None
    use_checkpoints, _ = storage_from_args(args)
    return dict(
        interval=args.interval, name=args.recommender_name, gates=gates,
        checkpoint_interval=args.checkpoint_write_interval, checkpoint_gc_interval=args.checkpoints_gc_interval,
        checkpoints_timeout=args.checkpoints_timeout, update_worker_count=args.update_worker_count,
        exact_checkpoints=args.checkpoint_exact, use_checkpoints=use_checkpoints, memory_saver=args.memory_saver,
        namespace=args.vpa_object_namespace or None,
        ignored_namespaces=tuple(n.strip() for n in args.ignored_vpa_object_namespaces.split(",") if n.strip()))


async def serve_recommender(args: argparse.Namespace, ready: asyncio.Event | None = None,
                            stop: asyncio.Event | None = None) -> int:
    from kvert.apiserver.recommendation_query import QueryServer
    from kvert.clock import WallClock
    from kvert.cluster import assembly as build
    from kvert.vpa.instruments import HealthCheck, RecommenderMetrics
    from kvert.vpa.metrics_source import METRICS_PODS_PATH, HttpMetricsSource
    from kvert.vpa.query import QueryService
    from kvert.vpa.recommender import Recommender
    from kvert.vpa.serving import MetricsServer
    from kvert.vpa.throttle import ThrottledClient

    config = recommender_config(args)
    options = recommender_options(args)
    listen = parse_listen(args.listen) if args.listen else None
    clock = WallClock()
    instruments = RecommenderMetrics()
    history = history_from_args(args, instruments=instruments, clock=clock)
    if args.min_checkpoints != 10:
        log.warning("DEPRECATION WARNING: The 'min-checkpoints' flag is deprecated and has no effect. "
                    "It will be removed in a future release.")
    if args.storage == "checkpoint" and (args.history_prometheus or args.history_file):
        log.warning("--storage=checkpoint: the history source given is not read")
    # upstream: unhealthy once five intervals pass without a finished loop
    health = HealthCheck(clock, args.interval * 5)
    status_server = MetricsServer(instruments, health, args.address)
    raw = _client(args, "vpa-recommender")
    client = ThrottledClient(raw, clock, args.kube_api_qps, int(args.kube_api_burst))
    informers = build.vpa_informers(client, clock)
    ns = options["namespace"]
    metrics_path = f"/apis/metrics.k8s.io/v1beta1/namespaces/{ns}/pods" if ns else METRICS_PODS_PATH
    server = None

    def make() -> Recommender:
        recommender = build.recommender(client, clock, HttpMetricsSource(raw, metrics_path), config=config,
                                        history=history, informers=informers, instruments=instruments,
                                        health=health, **options)
        if server is not None:     # the API answers from the recommender that leads
            server.recommendation_query = QueryService(recommender)
        return recommender
    runner = _elected(args, client, clock, make)
    recommender = runner if isinstance(runner, Recommender) else None
    stop = stop or asyncio.Event()
    stop_on_signals(stop)
    try:
        if listen is not None:
            ctx, ca = _ssl_context(args, listen[0], clock)
            server = QueryServer(QueryService(recommender) if recommender is not None else None,
                                 host=listen[0], port=listen[1], ssl_context=ctx)
            url = await server.start()
            print(f"RecommendationQuery API serving {url}/apis/autoscaling.kvert.io/v1"
                  + (f" (CA: {ca})" if ca else ""), flush=True)
        await status_server.start()
        print(f"vpa recommender running against {raw.server} every {_show_default('duration', args.interval)}"
              + (f", history from {history.source}" if history is not None else "")
              + f" (metrics on {status_server.host}:{status_server.port})", flush=True)
        if ready is not None:
            ready.set()
        await _run_until(runner, stop)
    finally:
        informers.stop()
        if server is not None:
            await server.stop()
        await status_server.stop()
        await raw.close()
    print("vpa recommender stopped", flush=True)
    return 0


def run_recommender(args: argparse.Namespace) -> int:
    return run_component(args, serve_recommender)


__all__ = ["config_flags", "default_kubeconfig", "parse_listen", "recommender_config", "recommender_options",
           "register", "run_recommender", "serve_recommender"]
