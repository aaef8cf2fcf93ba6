"""A one-line progress bar on stderr; silent when the stream is not a terminal."""

from __future__ import annotations

import sys
from typing import TextIO


class ProgressBar:
    def __init__(self, policies: list[str], stream: TextIO | None = None, width: int = 30,
                 enabled: bool | None = None, noun: str = "policy"):
        self.policies = list(policies)
        self.noun = noun                 # what the parts are: policies, or the phases of an import
        self.stream = stream if stream is not None else sys.stderr
        self.width = width
        self.enabled = (hasattr(self.stream, "isatty") and self.stream.isatty()) if enabled is None else enabled
        self._last = ""

    def __call__(self, policy: str, fraction: float) -> None:
        self.update(policy, fraction)

    def update(self, policy: str, fraction: float) -> None:
        if not self.enabled:
            return
        index = self.policies.index(policy) if policy in self.policies else 0
        total = len(self.policies) or 1
        overall = (index + min(max(fraction, 0.0), 1.0)) / total
        self._show(overall, f"{self.noun} {index + 1}/{total} {policy} {fraction * 100:3.0f}%")

    def _show(self, overall: float, text: str) -> None:
        filled = int(round(overall * self.width))
        line = f"\r[{'#' * filled}{'.' * (self.width - filled)}] {overall * 100:5.1f}%  {text}"
        if line != self._last:
            self.stream.write(line.ljust(len(self._last)))
            self.stream.flush()
            self._last = line

    def close(self) -> None:
        if self.enabled and self._last:
            self.stream.write("\n")
            self.stream.flush()
            self._last = ""


class SweepProgress(ProgressBar):
    """The bar over simulations that may run at once and end in any order."""

    def __init__(self, labels: list[str], stream: TextIO | None = None, width: int = 30,
                 enabled: bool | None = None):
        super().__init__(labels, stream, width, enabled, noun="simulation")
        self.done = {label: 0.0 for label in labels}

    def update(self, label: str, fraction: float) -> None:
        if not self.enabled:
            return
        self.done[label] = min(max(fraction, 0.0), 1.0)
        total = len(self.done) or 1
        finished = sum(1 for v in self.done.values() if v >= 1.0)
        self._show(sum(self.done.values()) / total,
                   f"{finished}/{total} simulations  {label} {fraction * 100:3.0f}%")
