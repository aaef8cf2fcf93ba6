"""The ``kvert`` command: one entry point, one module per subcommand."""

from __future__ import annotations

import argparse
import sys

from kvert.cli import (
    apiserver,
    components,
    demo,
    explain,
    pki,
    scenario,
    schedule,
    simulate,
    snapshot,
    stress,
    up,
    version,
    vpa,
)

# Each module adds its subcommand with ``register(subparsers)`` and sets ``func``.
COMMANDS = (version, up, apiserver, components, simulate, demo, schedule, explain, vpa, stress, snapshot, scenario,
            pki)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="kvert",
        description="Kubernetes vertical resource management: in-place pod resize, the Vertical "
                    "Pod Autoscaler, scheduling and eviction, as a live local cluster or a "
                    "virtual-time simulation.",
        epilog="Run 'kvert COMMAND --help' for a command's options and an example.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for module in COMMANDS:
        module.register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 0
    return int(args.func(args) or 0)


if __name__ == "__main__":
    sys.exit(main())
