"""``kvert schedule CLUSTER.yaml``: where would kube-scheduler put the pending pods, and why.

Reads a cluster snapshot (``kubectl get nodes,pods,pdb,priorityclasses,namespaces,services
-A -o yaml > cluster.yaml``, or hand-written YAML), schedules its pending pods one at a time
in queue order with kube-scheduler 1.36's default profile (or ``--config``; ``--feature-gates``
as kube-scheduler's), and prints for
each pod the node, every rejected node's filter reasons, every scored node's per-plugin
scores (after NormalizeScore, before weights) and weighted total, the preemption outcome
(nominated node, victims) and the FailedScheduling message. Nothing is written to any
cluster.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

EXIT_BAD_INPUT = 2


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "schedule", help="schedule a cluster snapshot's pending pods offline and explain it",
        description="Schedule the pending pods (no spec.nodeName) of a cluster snapshot one at "
                    "a time, in the scheduling queue's order (priority, then creationTimestamp), "
                    "each seeing the placements before it, with kube-scheduler 1.36's default "
                    "profile or a KubeSchedulerConfiguration; print where each pod goes and why: "
                    "filter reasons per rejected node, per-plugin scores and totals per scored "
                    "node, preemption (nominated node and victims) and the FailedScheduling "
                    "message. Preempted pods leave the snapshot at once. Nothing is written.",
        epilog="example: kvert schedule cluster.yaml --config sched.yaml -o table   (with "
               "cluster.yaml from: kubectl get nodes,pods,pdb,priorityclasses,namespaces,services "
               "-A -o yaml > cluster.yaml)")
    p.add_argument("snapshot", type=Path,
                   help="YAML stream or kind: List of Nodes, Pods, PodDisruptionBudgets, "
                        "PriorityClasses, Namespaces, Services, ReplicaSets, StatefulSets")
    p.add_argument("--config", type=Path, default=None,
                   help="a KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1) file")
    p.add_argument("-o", "--output", choices=["json", "table"], default="table",
                   help="json: the machine-readable report; table: the same for a person")
    p.add_argument("--feature-gates", default="", metavar="GATES",
                   help="kube-scheduler's --feature-gates, e.g. NodeDeclaredFeatures=false,"
                        "PodLevelResources=false (default: Kubernetes 1.36's defaults)")
    p.add_argument("--seed", type=int, default=0,
                   help="seed for breaking ties between equally scored nodes (default 0)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from kvert.api.features import parse_feature_gates
    from kvert.scheduler.offline import SnapshotError, load_objects, schedule_snapshot
    try:
        gates = parse_feature_gates(args.feature_gates)
        objects = load_objects(args.snapshot)
        report = schedule_snapshot(objects, args.config, seed=args.seed, gates=gates)
    except (SnapshotError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return EXIT_BAD_INPUT
    if args.output == "json":
        print(json.dumps(report, indent=2))
    else:
        print_table(report)
    return 0


def print_table(report: dict, out=None) -> None:
    out = out or sys.stdout
    pods = report.get("pods") or []
    if not pods:
        print("no pending pods", file=out)
        return
    for i, p in enumerate(pods):
        if i:
            print(file=out)
        name = f"{p['namespace']}/{p['name']}"
        if p["node"]:
            print(f"{name} -> {p['node']}", file=out)
        else:
            print(f"{name} -> (pending)", file=out)
        if p.get("nominatedNode"):
            victims = ", ".join(p.get("victims") or []) or "none"
            print(f"  preemption: nominated {p['nominatedNode']}, victims: {victims}", file=out)
        if p.get("message"):
            print(f"  {p['message']}", file=out)
        totals, scores = p.get("totals") or {}, p.get("scores") or {}
        if scores:
            plugins = list(next(iter(scores.values())))
            rows = [["NODE", "TOTAL", *plugins]]
            rows += [[n, str(totals.get(n, "")), *(str(s.get(pl, "")) for pl in plugins)]
                     for n, s in scores.items()]
            _print_rows(rows, out)
        for node, reasons in (p.get("filtered") or {}).items():
            print(f"  {node}: {', '.join(reasons)}", file=out)


def _print_rows(rows: list[list[str]], out) -> None:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for r in rows:
        print("  " + "  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip(), file=out)
