"""What the long-running component commands (``kvert vpa recommender|updater|
admission-controller``) share: logging set-up, one event loop until SIGINT/SIGTERM, and
errors that end them as one line on stderr with exit code 1."""

from __future__ import annotations

import argparse
import asyncio
import logging
import signal
import sys
from collections.abc import Awaitable, Callable


def run_component(args: argparse.Namespace, serve: Callable[[argparse.Namespace], Awaitable[int]]) -> int:
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


__all__ = ["run_component", "stop_on_signals", "until_stopped_or_crashed"]
