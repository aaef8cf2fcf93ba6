"""``kvert explain pod NAME``: why a pod is where it is and has what it has.

Components write their last decision about a pod into annotations (``explain.kvert.io/*``):
the scheduler its per-node filter results and scores, the node agent the QoS class,
oom_score_adj, cgroup values and its last resize decision. This command reads them
through the API, with the pod's own status, and prints them.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
from pathlib import Path

import yaml

from kvert.api.errors import ApiError

PREFIX = "explain.kvert.io/"


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "explain", help="explain the decisions behind a pod",
        description="Print how kvert's components decided about a pod: the scheduler's filter "
                    "result and scores per node for its last attempt, and the node agent's QoS "
                    "class, oom_score_adj, cgroup values and last resize decision.",
        epilog="example: kvert explain pod hamster-1 -n default -o json")
    p.add_argument("kind", choices=["pod"], help="what to explain (pods, for now)")
    p.add_argument("name", help="the pod's name")
    p.add_argument("-n", "--namespace", default="default", help="the pod's namespace")
    p.add_argument("-o", "--output", choices=["json", "yaml"], default="yaml", help="output format")
    p.add_argument("--kubeconfig", type=Path,
                   default=Path(os.environ.get("KUBECONFIG", Path.home() / ".kvert" / "kubeconfig")),
                   help="kubeconfig of the cluster ($KUBECONFIG, else ~/.kvert/kubeconfig)")
    p.set_defaults(func=run)


def explanation(pod: dict) -> dict:
    """The explanation of a pod, from its annotations and status (JSON-friendly)."""
    meta = pod.get("metadata") or {}
    out: dict = {"pod": f"{meta.get('namespace', '')}/{meta.get('name', '')}",
                 "nodeName": (pod.get("spec") or {}).get("nodeName", ""),
                 "phase": (pod.get("status") or {}).get("phase", ""),
                 "qosClass": (pod.get("status") or {}).get("qosClass", "")}
    conditions = [c for c in (pod.get("status") or {}).get("conditions") or []
                  if c.get("type") in ("PodScheduled", "PodResizePending", "PodResizeInProgress")]
    if conditions:
        out["conditions"] = conditions
    for key, value in sorted((meta.get("annotations") or {}).items()):
        if key.startswith(PREFIX):
            try:
                out[key[len(PREFIX):]] = json.loads(value)
            except ValueError:
                out[key[len(PREFIX):]] = value
    return out


def run(args: argparse.Namespace) -> int:
    from kvert.client.http import HttpClient

    async def fetch() -> dict:
        client = HttpClient.from_kubeconfig(args.kubeconfig)
        try:
            return await client.get("pods", args.name, args.namespace)
        finally:
            await client.close()

    try:
        pod = asyncio.run(fetch())
    except ApiError as e:
        print(f"Error from server ({e.reason}): {e}")
        return 1
    except (OSError, KeyError, StopIteration) as e:
        print(f"error: cannot reach the cluster with {args.kubeconfig}: {e}")
        return 1
    result = explanation(pod)
    if args.output == "json":
        print(json.dumps(result, indent=2, sort_keys=True))
    else:
        _print_text(result)
    return 0


def _print_text(result: dict) -> None:
    print(yaml.safe_dump(result, sort_keys=False, default_flow_style=False), end="")
