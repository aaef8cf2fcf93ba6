"""PodTopologySpread: topology spread constraints (seed 001 §5). Being built."""

from __future__ import annotations

from kvert.scheduler.framework import Plugin


class PodTopologySpread(Plugin):
    name = "PodTopologySpread"
