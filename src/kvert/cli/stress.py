"""``kvert stress``: a load generator that uses the cpu and memory of a usage profile.

It reads one container's usage profile (the entry of the ``kvert.io/usage`` annotation the
sim runtime follows; ``kvert.kubelet.usage``) and, every second, burns that much cpu and
holds that much memory: cpu in worker processes, one per core the target needs, each busy
for its share of every 100 ms slice (so a cpu limit below the demand shows as CFS
throttling); memory as touched pages in the main process, the target less what the
process used at start (so the container's working set is near the target). With
``exitAfter`` it exits with ``exitCode`` once that long has passed. The cgroupfs runtime
runs it for the image ``kvert/stress`` with the profile in ``KVERT_USAGE``.
"""

from __future__ import annotations

import argparse
import asyncio
import mmap
import os
import struct
import sys

from kvert.clock import WallClock
from kvert.kubelet.usage import UsageBatch, UsageError, parse_container_usage

SLICE = 0.1                   # seconds: a worker's busy/idle cycle (the CFS period)
PAGE = 4096
BLOCK = 1 << 20
REPORT_EVERY = 60.0           # seconds between usage lines, as the sim runtime's logs


EPILOG = ("example: kvert stress --usage '{\"cpu\": \"1\", \"memory\": \"64Mi\"}'\n"
          "         KVERT_USAGE='{\"cpu\": {\"profile\": \"spikes\", \"base\": \"100m\", \"peak\": \"2\", "
          "\"every\": \"1m\", \"duration\": \"10s\"}, \"memory\": \"32Mi\"}' kvert stress")


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("stress", help="burn the cpu and hold the memory of a usage profile",
                       description=__doc__.split("\n\n", 1)[1], epilog=EPILOG,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    _arguments(p)
    p.set_defaults(func=run)


def main(argv: list[str] | None = None) -> int:
    """``python -m kvert.cli.stress``: the command alone, without importing the whole CLI (the
    cgroupfs runtime's entrypoint for ``kvert/stress``: under a 200m cpu limit, importing every
    command took seconds before the first usage line)."""
    p = argparse.ArgumentParser(prog="kvert stress", description=__doc__.split("\n\n", 1)[1], epilog=EPILOG,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    _arguments(p)
    return run(p.parse_args(argv))


def _arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--usage", default=None, metavar="JSON",
                   help="one container's usage profile, as in the kvert.io/usage annotation "
                        "(default: $KVERT_USAGE)")
    p.add_argument("--interval", type=float, default=1.0,
                   help="seconds between re-reading the profile (default: 1)")


def run(args: argparse.Namespace) -> int:
    spec = args.usage if args.usage is not None else os.environ.get("KVERT_USAGE")
    if not spec:
        print("error: no usage profile: pass --usage JSON or set KVERT_USAGE", file=sys.stderr)
        return 2
    try:
        usage = parse_container_usage(spec, "", "--usage")
    except UsageError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    if args.interval <= 0:
        print("error: --interval must be positive", file=sys.stderr)
        return 2
    workers = len(os.sched_getaffinity(0))
    duties = mmap.mmap(-1, 8 * workers)
    parent = os.getpid()
    for i in range(workers):
        if os.fork() == 0:
            asyncio.run(_burn(duties, i, parent))
            os._exit(0)
    return asyncio.run(_follow(usage, duties, workers, args.interval))


async def _burn(duties: mmap.mmap, index: int, parent: int) -> None:
    """One worker: busy for ``duty`` of every slice, idle for the rest, while the parent lives."""
    clock = WallClock()
    while os.getppid() == parent:
        (duty,) = struct.unpack_from("d", duties, 8 * index)
        start = clock.now()
        while clock.now() - start < SLICE * duty:
            pass
        rest = SLICE - (clock.now() - start)
        if rest > 0:
            await clock.sleep(rest)


def _rss() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * PAGE


async def _follow(usage, duties: mmap.mmap, workers: int, interval: float) -> int:
    clock = WallClock()
    batch = UsageBatch([usage])
    start = clock.now()
    baseline = _rss()
    held: list[bytearray] = []
    reported = -REPORT_EVERY
    while True:
        now = clock.now()
        cpu, memory = (float(x[0]) for x in batch.evaluate(now, start))
        cores = cpu / 1000.0
        for i in range(workers):
            struct.pack_into("d", duties, 8 * i, min(1.0, max(0.0, cores - i)))
        if now - reported >= REPORT_EVERY:
            reported = now
            print(f"usage: cpu={int(round(cpu))}m memory={int(memory) // 2**20}Mi", flush=True)
        blocks = max(0, int(memory) - baseline) // BLOCK
        while len(held) < blocks:
            block = bytearray(BLOCK)
            block[::PAGE] = b"\x01" * (BLOCK // PAGE)     # touched, so resident and charged
            held.append(block)
        del held[blocks:]
        if usage.exit_after is not None and now - start >= usage.exit_after:
            print(f"exiting with code {usage.exit_code}", flush=True)
            return usage.exit_code
        await clock.sleep(interval)


__all__ = ["main", "register", "run"]

if __name__ == "__main__":
    sys.exit(main())
