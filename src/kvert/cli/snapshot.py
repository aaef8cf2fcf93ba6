"""``kvert snapshot``: capture a cluster (any API server) as one sanitized ``kind: List`` file.

What is captured, and what is left out, is :mod:`kvert.sim.snapshot`'s; this command reads
the kubeconfig, captures, prints a one-line summary and each warning to stderr, and writes
the file atomically (a temporary file in the same directory, renamed: nothing half-written).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
from pathlib import Path

EXAMPLE = """\
example: kvert snapshot --kubeconfig ~/.kube/config -o cluster.yaml   # the current context's cluster
         kvert snapshot --context prod -n shop -n payments -o -        # two namespaces, to stdout
         kvert snapshot --kubeconfig ~/.kvert/kubeconfig -o cluster.yaml   # kvert up's own cluster

Captured: Nodes (capacity, allocatable, labels, taints, unschedulable), Namespaces,
Deployments, ReplicaSets, StatefulSets, DaemonSets, Jobs, CronJobs, Pods without a
controller (the simulation's controllers recreate the others), VerticalPodAutoscalers,
HorizontalPodAutoscalers (autoscaling/v2), PodDisruptionBudgets, PriorityClasses,
LimitRanges, ResourceQuotas, RuntimeClasses. Left out: managedFields and other server-set
metadata, status (but node capacity and allocatable, pod phase, VPA recommendations and HPA
replicas), Secrets, and every environment variable's value (env entries keep their names).
A kind the server does not serve (no VPA CRD) is a warning; a refusal (401, 403) or no
answer is an error (exit 1, nothing written). 'kvert scenario import' reads this file and
'kubectl get nodes,namespaces,deployments,... -A -o yaml' output alike.
"""


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "snapshot", help="capture a cluster's nodes, workloads and policies as one YAML file",
        description="Read a cluster through its API server (kvert's or any kube-apiserver) and\n"
                    "write the objects a simulation rebuilds it from as one sanitized\n"
                    "'apiVersion: v1, kind: List' YAML file, in a stable order (cluster-scoped\n"
                    "kinds first, then by namespace, kind and name).",
        epilog=EXAMPLE, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--kubeconfig", type=Path, default=None, metavar="FILE",
                   help="kubeconfig to use (default: $KUBECONFIG, else ~/.kube/config)")
    p.add_argument("--context", default=None, metavar="NAME",
                   help="kubeconfig context (default: its current-context)")
    p.add_argument("-n", "--namespace", action="append", dest="namespaces", metavar="NS",
                   help="capture only this namespace's objects (repeatable; cluster-scoped "
                        "kinds are always captured)")
    p.add_argument("-o", "--output", default="-", metavar="FILE",
                   help="file to write ('-', the default: stdout)")
    p.add_argument("--request-timeout", type=float, default=60.0, metavar="SECONDS",
                   help="give up on a request after this long (default 60; 0: never)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from kvert.cli.component import client_from_args
    from kvert.sim.snapshot import CaptureError, capture, counts, dump, plural

    try:
        client = client_from_args(args, "kvert-snapshot")
    except (ValueError, OSError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1

    async def go():
        try:
            return await capture(client, args.namespaces,
                                 request_timeout=args.request_timeout or None)
        finally:
            await client.close()

    try:
        snapshot, warnings = asyncio.run(go())
    except CaptureError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    text = f"# kvert snapshot of {client.server}\n" + dump(snapshot)
    try:
        write_atomically(args.output, text)
    except OSError as e:
        print(f"error: cannot write {args.output}: {e}", file=sys.stderr)
        return 1
    for warning in warnings:
        print(f"warning: {warning}", file=sys.stderr)
    found = counts(snapshot)
    what = ", ".join(f"{n} {kind if n == 1 else plural(kind)}" for kind, n in found.items())
    dest = "stdout" if args.output == "-" else args.output
    print(f"captured {what or 'nothing'} from {client.server} to {dest}", file=sys.stderr)
    return 0


def write_atomically(output: str, text: str) -> None:
    """``text`` to stdout (``-``) or to ``output`` by a rename, so a reader (or an error
    half-way) never sees a partial file; the file gets the mode a new file would."""
    if output == "-":
        sys.stdout.write(text)
        sys.stdout.flush()
        return
    path = Path(output)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent or ".")
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
