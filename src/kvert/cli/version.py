"""``kvert version``."""

from __future__ import annotations

import argparse
import platform

import kvert


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("version", help="print kvert's version",
                       description="Print kvert's version and the Python it runs on.",
                       epilog="example: kvert version")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    print(f"kvert {kvert.__version__} (Python {platform.python_version()})")
    return 0
