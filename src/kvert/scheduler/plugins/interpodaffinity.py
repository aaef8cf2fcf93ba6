"""InterPodAffinity: required and preferred pod (anti-)affinity (seed 001 §4). Being built."""

from __future__ import annotations

from kvert.scheduler.framework import Plugin


class InterPodAffinity(Plugin):
    name = "InterPodAffinity"
