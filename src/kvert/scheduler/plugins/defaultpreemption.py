"""DefaultPreemption (PostFilter): seed 001 §12. Being built."""

from __future__ import annotations

from kvert.scheduler.framework import Plugin


class DefaultPreemption(Plugin):
    name = "DefaultPreemption"
