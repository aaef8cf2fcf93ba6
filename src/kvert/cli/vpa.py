"""``kvert vpa recommend``: the VPA recommendation for recorded usage, offline.

The usage comes from a samples file (``--samples``) or from a Prometheus server's range
queries of the cAdvisor metrics (``--prometheus``, ``kvert.vpa.history.PrometheusHistory``;
``--pod-prefix`` or ``--vpa``'s targetRef with the pod-name rule of ``kvert.vpa.history``
picks the pods, within ``--namespace``). The samples are treated as the history of one VPA: one
recommendation per container name, computed by the same model the live recommender runs
(``kvert.vpa``). ``--vpa`` gives the VerticalPodAutoscaler whose resource policy (minAllowed /
maxAllowed, controlledResources, mode Off) and ``vpa.kvert.io/*`` annotations apply.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import yaml

from kvert.cli import vpa_admission, vpa_components, vpa_manifests, vpa_tune, vpa_updater
from kvert.vpa.aggregate import AggregateContainerState
from kvert.vpa.estimators import get_confidence
from kvert.vpa.recommendation import DEFAULT_CONFIG, ContainerRecommendation, container_policy, recommend_containers
from kvert.vpa.samples import COLUMNS, SampleError, Samples, read_samples

EXAMPLE = """\
example: kvert vpa recommend --samples examples/hamster-samples.csv -o json
         kvert vpa recommend --samples examples/hamster-samples.csv --vpa examples/hamster.yaml
         kvert vpa recommend --prometheus http://127.0.0.1:9090 --vpa examples/hamster.yaml
         kvert vpa recommend --prometheus http://127.0.0.1:9090 --namespace default \\
             --pod-prefix hamster- --history-length 2d --history-resolution 5m -o json

samples file (CSV, one sample per line; cpu in cores, memory in bytes; event empty or 'oom',
where memory then holds the container's memory request):

  timestamp,pod,container,cpu,memory,event
  2024-05-01T00:00:00Z,hamster-1,hamster,0.512,52428800,
  1714521660,hamster-1,hamster,0.498,,
  2024-05-01T00:02:00Z,hamster-1,hamster,,62914560,oom

An optional 'namespace' column may be added (kvert up --vpa-history-file uses it; here every
sample counts for one VPA). --prometheus reads the same samples from a Prometheus server.
"""


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "vpa", help="Vertical Pod Autoscaler tools: offline recommendations, the admission controller",
        description="Vertical Pod Autoscaler tools. 'recommend' computes a VPA recommendation\n"
                    "from recorded usage (a samples file or Prometheus) with the model the live\n"
                    "recommender runs; 'recommender', 'updater' and 'admission-controller' run the\n"
                    "VPA's components against any API server (kvert up runs them itself);\n"
                    "'manifests' prints what installs them in a cluster (kvert vpa manifests |\n"
                    "kubectl apply -f -).",
        epilog=EXAMPLE, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.set_defaults(func=lambda args: _help(p))
    vsub = p.add_subparsers(dest="vpa_command", metavar="COMMAND")
    r = vsub.add_parser(
        "recommend", help="recommend container resources from a samples file or Prometheus",
        description="Compute status.recommendation (target, lower and upper bounds, uncapped target\n"
                    "per container) from usage samples, all treated as one VPA: CPU percentiles\n"
                    "50/90/95 of the usage, memory percentiles of the daily peaks (OOMs bumped up),\n"
                    "+15% margin, bounds widened while the history is short, at least 25m CPU /\n"
                    "250Mi memory per pod, capped by the VPA's resource policy.",
        epilog=EXAMPLE, formatter_class=argparse.RawDescriptionHelpFormatter)
    r.add_argument("--samples", type=Path, metavar="FILE.csv",
                   help="usage samples: " + ",".join(COLUMNS) + " (format below)")
    r.add_argument("--vpa", type=Path, metavar="VPA.yaml",
                   help="a VerticalPodAutoscaler (the first in the file) whose resource policy and "
                        "vpa.kvert.io/* annotations apply")
    r.add_argument("-o", "--output", choices=["json", "table"], default="table",
                   help="json: status.recommendation exactly as the VPA status holds it; "
                        "table: one line per container and resource (default)")
    r.add_argument("--explain", action="store_true",
                   help="with -o table, also print how each bound was derived")
    r.add_argument("--prometheus", metavar="URL",
                   help="read the history from this Prometheus server instead of a file: range "
                        "queries of container_cpu_usage_seconds_total (rate), "
                        "container_memory_working_set_bytes and container_oom_events_total as "
                        "kvert's node agents export them; needs --pod-prefix or --vpa")
    r.add_argument("--namespace", metavar="NS", default=None,
                   help="with --prometheus: the pods' namespace (default: the --vpa's, else 'default')")
    r.add_argument("--pod-prefix", metavar="NAME", default=None,
                   help="with --prometheus: the pods whose names start with NAME (default: the pods "
                        "--vpa's targetRef names: Deployment D -> D-<hash>-<suffix>, StatefulSet S -> "
                        "S-<ordinal>, others R -> R-<suffix>)")
    r.add_argument("--history-length", metavar="DURATION", default="8d",
                   help="with --prometheus: how far back to query, a Prometheus duration "
                        "(default: 8d, upstream's --history-length)")
    r.add_argument("--history-resolution", metavar="DURATION", default="1h",
                   help="with --prometheus: the step between samples and the CPU rate window "
                        "(default: 1h, upstream's --history-resolution)")
    r.add_argument("--prometheus-job", metavar="JOB", default="",
                   help="with --prometheus: only series of this scrape job (default: any job)")
    r.set_defaults(func=run_recommend)
    vpa_admission.register_subcommand(vsub)
    vpa_components.register(vsub)   # recommender, updater: against any API server
    vpa_updater.register(vsub)
    vpa_manifests.register(vsub)   # manifests: the YAML that installs the VPA in a cluster
    vpa_tune.register_subcommand(vsub)   # tune: recommender settings searched by simulation


def _help(parser: argparse.ArgumentParser) -> int:
    parser.print_help()
    return 0


def _fail(message: str, code: int = 1) -> int:
    print(f"error: {message}", file=sys.stderr)
    return code


def load_vpa(path: Path) -> dict:
    """The first VerticalPodAutoscaler in a YAML file, validated. Raises ValueError."""
    from kvert.api.validation.vpa import validate_vpa
    try:
        docs = [d for d in yaml.safe_load_all(path.read_text(encoding="utf-8")) if d]
    except OSError as e:
        raise ValueError(f"cannot read {path}: {e.strerror or e}") from None
    except yaml.YAMLError as e:
        raise ValueError(f"{path}: not YAML: {e}") from None
    for doc in docs:
        if isinstance(doc, dict) and doc.get("kind") == "VerticalPodAutoscaler":
            checked = json.loads(json.dumps(doc))
            checked.setdefault("metadata", {}).setdefault("namespace", "default")
            causes = validate_vpa(checked)
            if causes:
                raise ValueError(f"{path}: invalid VerticalPodAutoscaler: " +
                                 "; ".join(f"{c.field}: {c.message}" for c in causes))
            return doc
    raise ValueError(f"{path}: no VerticalPodAutoscaler in the file")


def aggregates_from_samples(samples: Samples, vpa: dict | None = None,
                            config=DEFAULT_CONFIG) -> dict[str, AggregateContainerState]:
    """One aggregate per container name, fed every sample in file order."""
    base, _ = config.for_vpa(vpa)
    out: dict[str, AggregateContainerState] = {}
    for name in sorted(set(samples.containers.tolist())):
        rows = samples.select(samples.containers == name)
        agg = AggregateContainerState(base.for_container(container_policy(vpa, name)))
        agg.add_samples(rows.pods.tolist(), rows.timestamps, cpu=rows.cpu, memory=rows.memory, oom=rows.oom)
        out[name] = agg
    return out


def run_recommend(args: argparse.Namespace) -> int:
    if args.prometheus and args.samples is not None:
        return _fail("give --samples FILE.csv or --prometheus URL, not both", 2)
    if args.samples is None and not args.prometheus:
        return _fail("--samples FILE.csv (or --prometheus URL) is required (see 'kvert vpa recommend --help')", 2)
    if args.prometheus and args.pod_prefix is None and args.vpa is None:
        return _fail("--prometheus needs --pod-prefix NAME or --vpa VPA.yaml to pick the pods", 2)
    vpa = None
    if args.vpa is not None:
        try:
            vpa = load_vpa(args.vpa)
        except ValueError as e:
            return _fail(str(e))
    if args.prometheus:
        from kvert.vpa.history import HistoryError
        try:
            samples = _prometheus_samples(args, vpa)
        except HistoryError as e:
            return _fail(str(e))
        except ValueError as e:
            return _fail(str(e), 2)
    else:
        try:
            samples = read_samples(args.samples)
        except SampleError as e:
            return _fail(str(e))
        except OSError as e:
            return _fail(f"cannot read {args.samples}: {e.strerror or e}")
        except UnicodeDecodeError:
            return _fail(f"{args.samples}: not a UTF-8 text file")
    config, problems = DEFAULT_CONFIG.for_vpa(vpa)
    for problem in problems:
        print(f"warning: {problem} (ignored)", file=sys.stderr)
    aggregates = aggregates_from_samples(samples, vpa)
    containers = recommend_containers(aggregates, vpa, explain=args.explain)
    if not containers:
        print("warning: no container has CPU samples (or every container's mode is Off): "
              "no recommendation", file=sys.stderr)
    if args.output == "json":
        rec = {"containerRecommendations": [c.to_status() for c in containers]} if containers else {}
        print(json.dumps(rec, indent=2))
        return 0
    print(_table(containers, aggregates, config, args.explain))
    return 0


def _prometheus_samples(args: argparse.Namespace, vpa: dict | None) -> Samples:
    """The selected pods' samples from Prometheus, as one table (``kvert.vpa.history``).
    Raises HistoryError (Prometheus) or ValueError (a bad option)."""
    import asyncio

    from kvert.clock import WallClock
    from kvert.vpa.history import PrometheusHistory, concat_samples, name_pattern, parse_duration, regex_escape

    namespace = args.namespace or ((vpa or {}).get("metadata") or {}).get("namespace") or "default"
    if args.pod_prefix is not None:
        prefix = args.pod_prefix
        pattern, what = regex_escape(prefix) + ".*", f"pods named {prefix}*"

        def picks(pod: str) -> bool:
            return pod.startswith(prefix)
    else:
        assert vpa is not None      # run_recommend: --prometheus needs --pod-prefix or --vpa
        ref = (vpa.get("spec") or {}).get("targetRef") or {}
        kind, name = str(ref.get("kind") or ""), str(ref.get("name") or "")
        pattern, what = name_pattern(kind, name), f"the pods of {kind} {name}"
        import re

        def picks(pod: str) -> bool:
            return re.fullmatch(pattern, pod) is not None
    for option in ("history_length", "history_resolution"):
        try:
            parse_duration(getattr(args, option))
        except ValueError as e:
            raise ValueError(f"--{option.replace('_', '-')}: {e}") from None
    provider = PrometheusHistory(args.prometheus, history_length=args.history_length,
                                 resolution=args.history_resolution, job=args.prometheus_job,
                                 namespace=namespace, pod_regex=pattern)
    history = asyncio.run(provider.fetch(WallClock().now()))
    parts = [s for (ns, pod, _), s in sorted(history.items()) if ns == namespace and picks(pod)]
    if not parts:
        print(f"warning: {provider.source} has no usage of {what} in namespace {namespace} "
              f"in the last {args.history_length}", file=sys.stderr)
    return concat_samples(parts)


def _table(containers: list[ContainerRecommendation], aggregates: dict[str, AggregateContainerState],
           config, explain: bool) -> str:
    rows = [("CONTAINER", "RESOURCE", "LOWER BOUND", "TARGET", "UPPER BOUND", "UNCAPPED TARGET")]
    for c in containers:
        for r in sorted(c.target):
            rows.append((c.container_name, r, str(c.lower_bound.get(r, "")), str(c.target.get(r, "")),
                         str(c.upper_bound.get(r, "")), str(c.uncapped_target.get(r, ""))))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(v.ljust(w) for v, w in zip(row, widths)).rstrip() for row in rows]
    lines.append("")
    for name, agg in sorted(aggregates.items()):
        span = ((agg.last_sample_start_us or 0) - (agg.first_sample_start_us or 0)) / 1e6
        lines.append(f"{name}: {agg.total_samples_count} CPU samples from {len(agg.pods)} pod(s) over "
                     f"{_duration(span)}; confidence {get_confidence(agg, config.confidence_interval_cpu):.3g} "
                     f"(days of history at one sample a minute)")
    for c in containers:
        if c.capping:
            lines.append(f"{c.container_name}: " + ", ".join(c.capping))
        if explain:
            for bound in ("lowerBound", "target", "upperBound"):
                lines.append(f"{c.container_name} {bound}:")
                for step, values in c.explanation.get(bound, []):
                    shown = ", ".join(f"{r} {_amount(r, v)}" for r, v in sorted(values.items()))
                    lines.append(f"  {step:<58} {shown}")
    return "\n".join(lines).rstrip()


def _amount(resource: str, amount: int) -> str:
    from kvert.api.quantity import to_quantity
    return to_quantity(resource, int(amount))


def _duration(seconds: float) -> str:
    seconds = int(round(seconds))
    days, rest = divmod(seconds, 86400)
    hours, rest = divmod(rest, 3600)
    minutes = rest // 60
    return f"{days}d{hours}h{minutes}m" if days else f"{hours}h{minutes}m"

