"""The recommender's usage-history flags, shared by ``kvert up`` (``--vpa-history-*``) and
``kvert vpa recommender`` (``--history-*``): ``--PREFIXhistory-prometheus URL`` or
``--PREFIXhistory-file FILE.csv``, ``--PREFIXhistory-length`` and
``--PREFIXhistory-resolution``; the provider is built by :func:`kvert.vpa.history.history_provider`.

``kvert vpa recommender`` also takes upstream VPA's Prometheus flags
(:func:`add_prometheus_history_flags`): ``--storage``, ``--prometheus-address`` (the same as
``--history-prometheus``), the metric and label names (``--history-cpu-metric``,
``--history-memory-metric``, ``--container-*-label``, ``--metric-for-pod-labels``,
``--pod-label-prefix``, ``--pod-namespace-label``, ``--pod-name-label``), the job
(``--prometheus-cadvisor-job-name``), ``--prometheus-query-timeout``, ``--prometheus-insecure``
and the credentials (``--prometheus-bearer-token(-file)``, ``--username``/``--password`` or
``$PROMETHEUS_USERNAME``/``$PROMETHEUS_PASSWORD``).
"""

from __future__ import annotations

import argparse
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kvert.clock import Clock
    from kvert.vpa.history import HistoryProvider
    from kvert.vpa.instruments import RecommenderMetrics

# upstream's --prometheus-address default, what --storage=prometheus reads without an address
UPSTREAM_PROMETHEUS_ADDRESS = "http://prometheus.monitoring.svc"
STORAGES = ("prometheus", "checkpoint")
_METRIC_NAME = re.compile(r"^[a-zA-Z_:][a-zA-Z0-9_:]*$")
_LABEL_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def add_history_flags(group: argparse._ActionsContainer, prefix: str = "") -> None:
    """Add the history flags to ``group`` (``prefix``: ``"vpa-"`` for ``kvert up``)."""
    source = group.add_mutually_exclusive_group()
    names = [f"--{prefix}history-prometheus"] + (["--prometheus-address"] if not prefix else [])
    source.add_argument(*names, dest=f"{prefix.replace('-', '_')}history_prometheus", metavar="URL", default=None,
                        help="at start, the recommender loads the usage history of VPAs without "
                             "checkpoints from this Prometheus server (range queries of the cAdvisor "
                             "metrics the nodes export; with --storage=prometheus, of every VPA)"
                             + ("; --prometheus-address is upstream's name" if not prefix else ""))
    source.add_argument(f"--{prefix}history-file", metavar="FILE.csv", type=Path, default=None,
                        help="at start, the recommender loads the usage history of VPAs without "
                             "checkpoints from this trace file (the 'kvert vpa recommend --samples' "
                             "format, with an optional namespace column)")
    group.add_argument(f"--{prefix}history-length", metavar="DURATION", default="8d",
                       help="how much history to load, a Prometheus duration (default: 8d, upstream's "
                            "--history-length)")
    group.add_argument(f"--{prefix}history-resolution", metavar="DURATION", default="1h",
                       help=f"with --{prefix}history-prometheus: the step between samples and the CPU "
                            "rate window (default: 1h, upstream's --history-resolution)")


def add_prometheus_history_flags(group: argparse._ActionsContainer) -> None:
    """Upstream recommender's Prometheus flags (``kvert vpa recommender`` only; the module
    docstring). Label names default to today's cAdvisor's, as ``kvert scenario import``'s."""
    from kvert.vpa.history import SeriesNames
    n = SeriesNames()
    group.add_argument("--storage", default="", choices=("",) + STORAGES, metavar="prometheus|checkpoint",
                       help="upstream's storage mode: 'checkpoint' keeps history in "
                            "VerticalPodAutoscalerCheckpoints only; 'prometheus' reads every VPA's history "
                            f"from --prometheus-address (default {UPSTREAM_PROMETHEUS_ADDRESS}) at start and "
                            "neither reads nor writes checkpoints (default: checkpoints, and the history of "
                            "VPAs without one from --history-prometheus or --history-file when given)")
    group.add_argument("--history-cpu-metric", default=n.cpu_metric, metavar="NAME",
                       help=f"the cumulative CPU usage metric (default: {n.cpu_metric})")
    group.add_argument("--history-memory-metric", default=n.memory_metric, metavar="NAME",
                       help=f"the memory usage metric (default: {n.memory_metric})")
    group.add_argument("--prometheus-cadvisor-job-name", default="", metavar="JOB",
                       help="read the cAdvisor series of this scrape job only (default: any job; "
                            "upstream's default is kubernetes-cadvisor)")
    group.add_argument("--container-namespace-label", default=n.namespace_label, metavar="LABEL",
                       help=f"cAdvisor's label of the namespace (default: {n.namespace_label})")
    group.add_argument("--container-pod-name-label", default=n.pod_label, metavar="LABEL",
                       help=f"cAdvisor's label of the pod name (default: {n.pod_label}; upstream's is "
                            "pod_name, cAdvisor's before Kubernetes 1.16)")
    group.add_argument("--container-name-label", default=n.container_label, metavar="LABEL",
                       help=f"cAdvisor's label of the container name (default: {n.container_label}; "
                            "upstream's is name)")
    group.add_argument("--metric-for-pod-labels", default='up{job="kubernetes-pods"}', metavar="QUERY",
                       help="the series whose labels carry each pod's labels, which give a gone pod's "
                            "history to the VPA selecting them (e.g. kube_pod_labels[8d]; default: "
                            "up{job=\"kubernetes-pods\"}, upstream's; '' reads none)")
    group.add_argument("--pod-label-prefix", default=n.pod_label_prefix, metavar="PREFIX",
                       help=f"the prefix of the pod labels in that series (default: {n.pod_label_prefix})")
    group.add_argument("--pod-namespace-label", default=n.pod_labels_namespace_label, metavar="LABEL",
                       help=f"that series' label of the namespace (default: {n.pod_labels_namespace_label})")
    group.add_argument("--pod-name-label", default=n.pod_labels_name_label, metavar="LABEL",
                       help=f"that series' label of the pod name (default: {n.pod_labels_name_label})")
    group.add_argument("--prometheus-query-timeout", default="5m", metavar="DURATION",
                       help="how long to wait for each query's answer (default: 5m)")
    group.add_argument("--prometheus-insecure", action="store_true", default=False,
                       help="skip verifying Prometheus' TLS certificate (https)")
    group.add_argument("--prometheus-bearer-token", default=None, metavar="TOKEN",
                       help="the bearer token of Prometheus' bearer token auth")
    group.add_argument("--prometheus-bearer-token-file", default=None, metavar="FILE",
                       help="a file holding the bearer token of Prometheus' bearer token auth")
    group.add_argument("--username", default=None,
                       help="the username of Prometheus' basic auth (or $PROMETHEUS_USERNAME)")
    group.add_argument("--password", default=None,
                       help="the password of Prometheus' basic auth (or $PROMETHEUS_PASSWORD)")


def storage_from_args(args: argparse.Namespace) -> tuple[bool, bool]:
    """(use checkpoints, load history) as ``--storage`` and the history flags ask:
    ``prometheus``: history, no checkpoints; ``checkpoint``: checkpoints only, as upstream
    (a history source given is not read); none: checkpoints, and history when a source is
    given. ValueError for ``--storage=prometheus`` with a trace file."""
    storage = getattr(args, "storage", "") or ""
    if storage == "prometheus":
        if getattr(args, "history_file", None) is not None:
            raise ValueError("--storage=prometheus reads Prometheus (--prometheus-address), not --history-file")
        return False, True
    return True, storage != "checkpoint"


def _prometheus_options(args: argparse.Namespace, instruments: RecommenderMetrics | None,
                        clock: Clock | None) -> dict[str, Any]:
    """PrometheusHistory's keyword arguments from upstream's flags, as upstream's
    ``newPrometheusHistoryProviderConfig`` maps them (ValueError naming a flag)."""
    from kvert.vpa.history import RecommenderRequests, SeriesNames, parse_duration
    names = SeriesNames(cpu_metric=args.history_cpu_metric, memory_metric=args.history_memory_metric,
                        namespace_label=args.container_namespace_label, pod_label=args.container_pod_name_label,
                        container_label=args.container_name_label,
                        pod_labels_metric=args.metric_for_pod_labels or None, pod_label_prefix=args.pod_label_prefix,
                        pod_labels_namespace_label=args.pod_namespace_label, pod_labels_name_label=args.pod_name_label)
    for flag, value in (("--history-cpu-metric", names.cpu_metric), ("--history-memory-metric", names.memory_metric)):
        if not _METRIC_NAME.match(value):
            raise ValueError(f"{flag}: {value!r} is not a Prometheus metric name")
    for flag in ("--container-namespace-label", "--container-pod-name-label", "--container-name-label",
                 "--pod-namespace-label", "--pod-name-label"):
        value = getattr(args, flag[2:].replace("-", "_"))
        if not _LABEL_NAME.match(value):
            raise ValueError(f"{flag}: {value!r} is not a Prometheus label name")
    try:
        timeout = parse_duration(args.prometheus_query_timeout)
    except ValueError as e:
        raise ValueError(f"--prometheus-query-timeout: {e}") from None
    options: dict[str, Any] = {"job": args.prometheus_cadvisor_job_name, "timeout": timeout,
                               "headers": _credentials(args), "ssl": False if args.prometheus_insecure else None,
                               "names": names}
    if getattr(args, "vpa_object_namespace", ""):
        options["namespace"] = args.vpa_object_namespace
    if instruments is not None and clock is not None:
        options.update(observer=RecommenderRequests(instruments), clock=clock)
    return options


def _credentials(args: argparse.Namespace) -> dict[str, str]:
    """The Authorization header as upstream's: a bearer token (read from
    --prometheus-bearer-token-file, trimmed) wins over basic auth; basic auth needs a username
    and a password, from the flags, else $PROMETHEUS_USERNAME / $PROMETHEUS_PASSWORD; the three
    flags together are refused (ValidateRecommenderConfig)."""
    import base64
    token, token_file = args.prometheus_bearer_token or "", args.prometheus_bearer_token_file or ""
    username, password = args.username or "", args.password or ""
    if token and token_file and username:
        raise ValueError("--bearer-token, --bearer-token-file and --username are mutually exclusive and can't be "
                         "set together.")
    if token_file:
        try:
            token = Path(token_file).read_text(encoding="utf-8").strip()
        except (OSError, UnicodeDecodeError) as e:
            raise ValueError(f"--prometheus-bearer-token-file: {token_file}: cannot read: "
                             f"{getattr(e, 'strerror', None) or e}") from None
    if token:
        return {"Authorization": f"Bearer {token}"}
    if not (username and password):
        username = os.environ.get("PROMETHEUS_USERNAME", "")
        password = os.environ.get("PROMETHEUS_PASSWORD", "")
    if username and password:
        return {"Authorization": "Basic " + base64.b64encode(f"{username}:{password}".encode()).decode()}
    return {}


def history_from_args(args: argparse.Namespace, prefix: str = "", *, instruments: RecommenderMetrics | None = None,
                      clock: Clock | None = None) -> HistoryProvider | None:
    """The history provider the flags ask for (None without a source). Raises ValueError
    whose message names the flags. With upstream's Prometheus flags (``kvert vpa recommender``)
    their names, credentials and timeout go to the Prometheus reader, which counts its requests
    on ``instruments``."""
    from kvert.vpa.history import history_provider
    dest = prefix.replace("-", "_")
    url = getattr(args, f"{dest}history_prometheus", None)
    path = getattr(args, f"{dest}history_file", None)
    upstream = not prefix and hasattr(args, "storage")      # kvert vpa recommender's upstream flags
    if upstream:
        _, wanted = storage_from_args(args)
        if not wanted:
            return None
        if args.storage == "prometheus" and not url:
            url = UPSTREAM_PROMETHEUS_ADDRESS
    try:
        options = _prometheus_options(args, instruments, clock) if upstream and url else None
        return history_provider(url, path, history_length=getattr(args, f"{dest}history_length", "8d"),
                                resolution=getattr(args, f"{dest}history_resolution", "1h"),
                                prometheus_options=options)
    except ValueError as e:               # HistoryError, a bad duration or another flag
        flag = f"--{prefix}history-prometheus" if url else (f"--{prefix}history-file" if path else "")
        flags = f"--{prefix}history-length/--{prefix}history-resolution"
        where = f"{flag} (with {flags})" if flag else flags
        message = str(e)
        raise ValueError(message if message.startswith("--") else f"{where}: {message}") from None


__all__ = ["STORAGES", "UPSTREAM_PROMETHEUS_ADDRESS", "add_history_flags", "add_prometheus_history_flags",
           "history_from_args", "storage_from_args"]
