"""``kvert version``."""

from __future__ import annotations

import argparse
import platform

import kvert
from kvert.api.version import KUBERNETES_VERSION


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("version", help="print kvert's version",
                       description="Print kvert's version, the Kubernetes release it follows and the Python "
                                   "it runs on.",
                       epilog="example: kvert version")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    kubernetes = "v" + ".".join(map(str, KUBERNETES_VERSION))
    print(f"kvert {kvert.__version__} (Kubernetes {kubernetes}, Python {platform.python_version()})")
    return 0
