"""``kvert scenario import``: a cluster snapshot and its recorded usage as a scenario directory.

Reads one or more snapshot files (``kvert snapshot``'s, or ``kubectl get ... -A -o yaml``) and
the usage history of the same cluster (a Prometheus server with cAdvisor's and
kube-state-metrics' series, or a samples CSV file) over a window, and writes DIR/scenario.yaml,
DIR/traces/ and DIR/import-warnings.txt (``kvert.sim.importer``): ``kvert simulate DIR`` then
replays the cluster as it was and under the what-if policies.
"""

from __future__ import annotations

import argparse
import asyncio
import math
import sys
from pathlib import Path

EXAMPLE = """\
example: kvert snapshot --kubeconfig ~/.kube/config -o cluster.yaml
         kvert scenario import cluster.yaml --prometheus http://prometheus.monitoring:9090 --last 7d -o replay
         kvert simulate replay -o replay/report

         kvert scenario import cluster.yaml --samples usage.csv --step 5m -o replay   # a samples CSV instead
         kvert scenario import cluster.yaml --prometheus URL --from 2026-11-23T00:00:00Z \\
             --to 2026-11-30T00:00:00Z --select-namespace shop --select-kind Deployment -o shop

The scenario compares the policies 'as is' (the snapshot's own requests, limits, VPAs and HPAs),
'no VPA', 'Recreate', 'InPlaceOrRecreate', 'InPlace' and 'kvert in-place'; --select-* limit the
what-if policies' VPAs to the workloads named (the others keep theirs). Every assumption the
import makes (owners inferred from pod names, gaps held, containers never recorded, ...) is a line
of DIR/import-warnings.txt, printed too. Nothing is written unless the whole directory is.
"""


def register(sub: argparse._SubParsersAction) -> None:
    from kvert.sim.prometheus_history import add_prometheus_flags

    p = sub.add_parser("scenario", help="make simulation scenarios (import a recorded cluster)",
                       description="Make simulation scenarios.", epilog="example: kvert scenario import --help",
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    verbs = p.add_subparsers(dest="verb", metavar="VERB")
    imp = verbs.add_parser(
        "import", help="a cluster snapshot and its usage history as a scenario directory",
        description="Turn a cluster snapshot (kvert snapshot, or kubectl get ... -A -o yaml) and the "
                    "usage history of that cluster (Prometheus with cAdvisor and kube-state-metrics "
                    "series, or a samples CSV) into an editable scenario directory for kvert simulate: "
                    "node pools, workloads, HPAs, VPAs, PDBs and priorities from the snapshot, each "
                    "workload's recorded usage per replica as a Parquet trace, and what the cluster "
                    "recorded (for the replay-fidelity table).",
        epilog=EXAMPLE, formatter_class=argparse.RawDescriptionHelpFormatter)
    imp.add_argument("snapshot", nargs="+", type=Path, metavar="CLUSTER.yaml", help="the snapshot file(s)")
    source = imp.add_mutually_exclusive_group(required=True)
    source.add_argument("--prometheus", metavar="URL", help="the Prometheus server holding the cluster's history")
    source.add_argument("--samples", metavar="FILE.csv", type=Path,
                        help="a samples CSV (the 'kvert vpa recommend --samples' format with a namespace column)")
    window = imp.add_argument_group("the window (default: the last 7 days; a samples file: all of it)")
    window.add_argument("--from", dest="start", metavar="TIME", help="its start: RFC 3339 or unix seconds")
    window.add_argument("--to", dest="end", metavar="TIME", help="its end (default: now)")
    window.add_argument("--last", metavar="DURATION", help="the DURATION before --to (e.g. 7d, 36h)")
    imp.add_argument("--step", default="1m", metavar="DURATION",
                     help="the history's resolution, and the scenario's sample interval (default: 1m)")
    imp.add_argument("--rate-window", metavar="DURATION", default=None,
                     help="the CPU rate() window (default: the step; at least two scrape intervals)")
    imp.add_argument("-n", "--namespace", action="append", metavar="NS",
                     help="import only this namespace's workloads and usage (repeatable)")
    sel = imp.add_argument_group("which workloads the what-if policies give a VPA (default: all)")
    sel.add_argument("--select-namespace", action="append", metavar="NS")
    sel.add_argument("--select-kind", action="append", metavar="KIND", help="Deployment, StatefulSet, ...")
    sel.add_argument("--select-labels", metavar="SELECTOR", help="a label selector on the workloads' labels")
    cost = imp.add_argument_group("prices, for the report's costs")
    cost.add_argument("--price-cpu-core-hour", type=float, metavar="PRICE")
    cost.add_argument("--price-memory-gib-hour", type=float, metavar="PRICE")
    imp.add_argument("-o", "--output", type=Path, required=True, metavar="DIR", help="the scenario directory")
    imp.add_argument("--force", action="store_true", help="replace DIR if it exists and is not empty")
    imp.add_argument("--no-progress", action="store_true", help="no progress bar")
    add_prometheus_flags(imp.add_argument_group("Prometheus (upstream VPA recommender's flag names)"))
    p.set_defaults(func=lambda args: run_import(args) if args.verb == "import" else (p.print_help(), 0)[1])


def _time(text: str, flag: str) -> float:
    from kvert.api.meta import parse_time
    try:
        return float(text)
    except ValueError:
        pass
    try:
        return parse_time(text)
    except ValueError:
        raise ValueError(f"{flag}: {text!r} is not an RFC 3339 time (2026-11-24T00:00:00Z) or unix seconds") from None


def _window(args: argparse.Namespace, step: float) -> tuple[float | None, float | None]:
    from kvert.clock import WallClock
    from kvert.vpa.history import parse_duration
    if args.last and args.start:
        raise ValueError("--last and --from: give one of them")
    end = _time(args.end, "--to") if args.end else None
    start = _time(args.start, "--from") if args.start else None
    if args.samples is not None and start is None and not args.last:
        return start, end                     # the whole file
    if end is None:
        end = math.floor(WallClock().now() / step) * step
    if start is None:
        try:
            start = end - parse_duration(args.last or "7d")
        except ValueError as e:
            raise ValueError(f"--last: {e}") from None
    if start >= end:
        raise ValueError(f"--from/--last: the window is empty ({start:.0f} to {end:.0f})")
    return start, end


def _select(args: argparse.Namespace) -> dict | None:
    select: dict = {}
    if args.select_namespace:
        select["namespaces"] = list(args.select_namespace)
    if args.select_kind:
        select["kinds"] = list(args.select_kind)
    if args.select_labels:
        select["labelSelector"] = args.select_labels
    return select or None


def _only_namespaces(objects: dict[str, list[dict]], namespaces: list[str]) -> dict[str, list[dict]]:
    from kvert.api.kinds import all_types
    cluster_scoped = {rt.kind for rt in all_types() if not rt.namespaced}
    out = {}
    for kind, items in objects.items():
        if kind == "Namespace":
            out[kind] = [o for o in items if (o.get("metadata") or {}).get("name") in namespaces]
        elif kind in cluster_scoped:
            out[kind] = items
        else:
            out[kind] = [o for o in items if ((o.get("metadata") or {}).get("namespace") or "default") in namespaces]
    return out


def run_import(args: argparse.Namespace) -> int:
    from kvert.sim.importer import ScenarioImportError, import_scenario
    from kvert.sim.progress import ProgressBar
    from kvert.sim.prometheus_history import prometheus_options, read_prometheus
    from kvert.sim.recorded import HistoryImportError
    from kvert.sim.samples_history import read_samples_file
    from kvert.sim.snapshot import SnapshotError, load_snapshot
    from kvert.vpa.history import parse_duration

    try:
        step = parse_duration(args.step)
    except ValueError as e:
        print(f"error: --step: {e}", file=sys.stderr)
        return 2
    try:
        start, end = _window(args, step)
        rate_window = parse_duration(args.rate_window) if args.rate_window else None
        options = prometheus_options(args) if args.prometheus else {}
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    try:
        snapshot = load_snapshot(args.snapshot)
    except SnapshotError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    objects = _only_namespaces(snapshot.objects, args.namespace) if args.namespace else snapshot.objects
    bar = ProgressBar(["reading the history"], enabled=False if args.no_progress else None, noun="step")
    try:
        if args.prometheus:
            assert start is not None and end is not None
            history = asyncio.run(read_prometheus(args.prometheus, start=start, end=end, step=step,
                                                  namespaces=args.namespace, rate_window=rate_window,
                                                  progress=lambda f: bar("reading the history", f), **options))
        else:
            history = read_samples_file(args.samples, start=start, end=end, step=step)
            if args.namespace:
                history.containers = [c for c in history.containers if c.namespace in args.namespace]
    except (HistoryImportError, ValueError) as e:
        bar.close()
        print(f"error: {e}", file=sys.stderr)
        return 1
    bar.close()
    prices = {k: v for k, v in (("cpuCoreHour", args.price_cpu_core_hour),
                                ("memoryGiBHour", args.price_memory_gib_hour)) if v is not None}
    source = args.prometheus or str(args.samples)
    description = (f"imported from {', '.join(map(str, args.snapshot))} and {source}: "
                   f"{_iso(history.start)} to {_iso(history.end)}, every {step:g}s")
    try:
        result = import_scenario(objects, history, args.output, description=description, select=_select(args),
                                 prices=prices or None, force=args.force, extra_warnings=snapshot.warnings)
    except ScenarioImportError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    except OSError as e:
        print(f"error: {args.output}: {e.strerror or e}", file=sys.stderr)
        return 1
    for w in result.warnings:
        print(f"warning: {w}", file=sys.stderr)
    print(f"imported {result.workloads} workloads on {result.nodes} nodes ({result.traces} with recorded usage) "
          f"over {_iso(history.start)} .. {_iso(history.end)} into {result.directory}; "
          f"{len(result.warnings)} warnings (import-warnings.txt)")
    print(f"next: kvert simulate {result.directory}")
    return 0


def _iso(seconds: float) -> str:
    from kvert.api.meta import format_time
    return format_time(seconds)


__all__ = ["register", "run_import"]
