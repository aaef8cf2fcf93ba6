"""What the long-running component commands (``kvert scheduler``, ``controller-manager``,
``node-agent``, ``kvert vpa recommender|updater|admission-controller``) share: logging
set-up, the client from ``--kubeconfig`` (or, in a pod, the in-cluster configuration), one
event loop until SIGINT/SIGTERM or a crash, and errors that end them as one line on stderr
with exit code 1."""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import signal
import sys
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any


def run_component(args: argparse.Namespace, serve: Callable[[argparse.Namespace], Coroutine[Any, Any, int]]) -> int:
    logging.basicConfig(level=args.log_level.upper(), format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    try:
        return asyncio.run(serve(args))
    except (OSError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1


async def until_stopped_or_crashed(supervisor) -> int:
    """Wait for SIGINT/SIGTERM (0) or a supervised component's crash (1, said on stderr by
    the component's name)."""
    from kvert.cluster.supervisor import ComponentCrashed
    stop = asyncio.Event()
    stop_on_signals(stop)
    stopped = asyncio.ensure_future(stop.wait())
    crashed = asyncio.ensure_future(supervisor.wait())
    try:
        await asyncio.wait({stopped, crashed}, return_when=asyncio.FIRST_COMPLETED)
        if crashed.done():
            try:
                crashed.result()
            except ComponentCrashed as e:
                print(f"error: {e}", file=sys.stderr, flush=True)
                return 1
        return 0
    finally:
        stopped.cancel()
        crashed.cancel()


def stop_on_signals(stop: asyncio.Event) -> None:
    """SIGINT and SIGTERM set ``stop`` (where the loop can take signal handlers)."""
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        try:
            loop.add_signal_handler(sig, stop.set)
        except (NotImplementedError, RuntimeError):
            pass


def default_kubeconfig() -> Path:
    """kubectl's choice: the first file of ``$KUBECONFIG``, else ``~/.kube/config``."""
    env = os.environ.get("KUBECONFIG", "")
    for part in env.split(os.pathsep):
        if part:
            return Path(part).expanduser()
    return Path.home() / ".kube" / "config"


def _kubeconfig(args: argparse.Namespace) -> Path:
    path = (args.kubeconfig or default_kubeconfig()).expanduser()
    if not path.is_file():
        from kvert.client.http import NOT_IN_CLUSTER
        raise ValueError(f"kubeconfig {path} not found (pass --kubeconfig or set KUBECONFIG), and "
                         f"not running in a pod: {NOT_IN_CLUSTER}")
    return path


def go_bool(text: str) -> bool:
    """Go's ``strconv.ParseBool``, as upstream's boolean flags take it."""
    if text in ("1", "t", "T", "TRUE", "true", "True"):
        return True
    if text in ("0", "f", "F", "FALSE", "false", "False"):
        return False
    raise argparse.ArgumentTypeError(f"invalid boolean value {text!r}")


def _int_at_least(text: str, least: int, what: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a whole number") from None
    if value < least:
        raise argparse.ArgumentTypeError(f"'{text}' {what}")
    return value


def nonnegative_int_arg(text: str) -> int:
    return _int_at_least(text, 0, "must not be negative")


def positive_int_arg(text: str) -> int:
    return _int_at_least(text, 1, "must be at least 1")


def client_from_args(args: argparse.Namespace, manager: str):
    """An HTTP client from ``--kubeconfig`` (else kubectl's default) and ``--context``; in a pod
    (no ``--kubeconfig``, ``$KUBECONFIG`` unset, the kubelet's ``KUBERNETES_SERVICE_*``
    variables set) the in-cluster configuration, as upstream's components: ``--kubeconfig``
    is "only required if out-of-cluster". ValueError naming what is missing or unusable."""
    from kvert.client.http import HttpClient, InClusterError, in_cluster_environment
    if args.kubeconfig is None and not os.environ.get("KUBECONFIG") and in_cluster_environment():
        try:
            return HttpClient.in_cluster(field_manager=manager)
        except InClusterError as e:
            raise ValueError(str(e)) from None
    path = _kubeconfig(args)
    try:
        return HttpClient.from_kubeconfig(path, args.context, field_manager=manager)
    except StopIteration:
        raise ValueError(f"{path}: no context {args.context or '(current-context)'}") from None
    except (KeyError, TypeError, AttributeError) as e:
        raise ValueError(f"{path}: not a usable kubeconfig ({e})") from None


__all__ = ["client_from_args", "default_kubeconfig", "go_bool", "nonnegative_int_arg", "positive_int_arg",
           "run_component", "stop_on_signals", "until_stopped_or_crashed"]
