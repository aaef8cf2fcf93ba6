"""The recommender's usage-history flags, shared by ``kvert up`` (``--vpa-history-*``) and
``kvert vpa recommender`` (``--history-*``): ``--PREFIXhistory-prometheus URL`` or
``--PREFIXhistory-file FILE.csv``, ``--PREFIXhistory-length`` and
``--PREFIXhistory-resolution``; the provider is built by :func:`kvert.vpa.history.history_provider`.
"""

from __future__ import annotations

import argparse
from pathlib import Path


def add_history_flags(group: argparse._ActionsContainer, prefix: str = "") -> None:
    """Add the history flags to ``group`` (``prefix``: ``"vpa-"`` for ``kvert up``)."""
    source = group.add_mutually_exclusive_group()
    source.add_argument(f"--{prefix}history-prometheus", metavar="URL", default=None,
                        help="at start, the recommender loads the usage history of VPAs without "
                             "checkpoints from this Prometheus server (range queries of the cAdvisor "
                             "metrics the nodes export; upstream's --storage=prometheus)")
    source.add_argument(f"--{prefix}history-file", metavar="FILE.csv", type=Path, default=None,
                        help="at start, the recommender loads the usage history of VPAs without "
                             "checkpoints from this trace file (the 'kvert vpa recommend --samples' "
                             "format, with an optional namespace column)")
    group.add_argument(f"--{prefix}history-length", metavar="DURATION", default="8d",
                       help="how much history to load, a Prometheus duration (default: 8d, upstream's "
                            "--history-length)")
    group.add_argument(f"--{prefix}history-resolution", metavar="DURATION", default="1h",
                       help=f"with --{prefix}history-prometheus: the step between samples and the CPU "
                            "rate window (default: 1h, upstream's --history-resolution)")


def history_from_args(args: argparse.Namespace, prefix: str = ""):
    """The history provider the flags ask for (None without a source). Raises ValueError
    whose message names the flags."""
    from kvert.vpa.history import history_provider
    dest = prefix.replace("-", "_")
    url = getattr(args, f"{dest}history_prometheus", None)
    path = getattr(args, f"{dest}history_file", None)
    try:
        return history_provider(url, path, history_length=getattr(args, f"{dest}history_length", "8d"),
                                resolution=getattr(args, f"{dest}history_resolution", "1h"))
    except ValueError as e:               # HistoryError or a bad duration
        flag = f"--{prefix}history-prometheus" if url else (f"--{prefix}history-file" if path else "")
        flags = f"--{prefix}history-length/--{prefix}history-resolution"
        where = f"{flag} (with {flags})" if flag else flags
        raise ValueError(f"{where}: {e}") from None


__all__ = ["add_history_flags", "history_from_args"]
