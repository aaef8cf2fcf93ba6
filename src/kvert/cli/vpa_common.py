"""What the VPA components' commands share: common flags, argument types, leader election
and running a component until a stop event."""

from __future__ import annotations

import argparse
import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kvert.cli.component import nonnegative_int_arg, positive_int_arg
from kvert.clock.component import Component

if TYPE_CHECKING:
    from kvert.client.base import Client
    from kvert.clock import Clock


def duration_arg(text: str) -> float:
    from kvert.vpa.recommendation import parse_duration
    try:
        return parse_duration(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def fraction_arg(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a number") from None
    if not 0 <= value <= 1:
        raise argparse.ArgumentTypeError(f"'{text}' must be between 0 and 1")
    return value


def show_default(kind: str, value: Any) -> str:
    if value is None:
        return "none"
    if kind == "duration":
        from kvert.vpa.recommender import _duration as show
        return show(value)
    if kind == "bool":
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def common_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument("--kubeconfig", type=Path, default=None,
                   help="kubeconfig of the API server (default: $KUBECONFIG, else ~/.kube/config)")
    p.add_argument("--context", default=None, help="kubeconfig context (default: the current one)")
    p.add_argument("--log-level", default="info", choices=["debug", "info", "warning", "error"])


def leader_election_flags(p: argparse.ArgumentParser, lease: str) -> None:
    """The autoscaler's --leader-elect* flags (off by default, as upstream's VPA)."""
    from kvert.cli.up import add_leader_election_flags
    add_leader_election_flags(p, default=False)
    p.add_argument("--leader-elect-resource-name", default=lease,
                   help=f"the Lease replicas share (default: {lease})")
    p.add_argument("--leader-elect-resource-namespace", default="kube-system",
                   help="the Lease's namespace (default: kube-system)")


def elected(args: argparse.Namespace, client: Client, clock: Clock,
          make: Callable[[], Component]) -> Component:
    """``make()``'s component, or with --leader-elect one that runs only while it leads
    (a fresh one after each lost lease)."""
    if not args.leader_elect:
        return make()
    from kvert.cli.up import leader_election
    from kvert.cluster import assembly as build
    return build.leader_elected(client, clock, args.leader_elect_resource_name, make,
                                namespace=args.leader_elect_resource_namespace, **leader_election(args))


async def run_until(component: Component, stop: asyncio.Event) -> None:
    """Run ``component.run()`` until ``stop`` is set (or it ends), then stop it."""
    task = asyncio.ensure_future(component.run())
    waiter = asyncio.ensure_future(stop.wait())
    try:
        await asyncio.wait({task, waiter}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        component.stop()
        waiter.cancel()
        if not task.done():
            try:
                await asyncio.wait_for(task, 10)
            except (TimeoutError, asyncio.CancelledError):
                task.cancel()
    if task.done() and not task.cancelled():
        error = task.exception()
        if error is not None:
            raise error


__all__ = ["common_flags", "duration_arg", "elected", "fraction_arg", "leader_election_flags",
           "nonnegative_int_arg", "positive_int_arg", "run_until", "show_default"]
