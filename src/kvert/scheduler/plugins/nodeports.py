"""NodePorts: host ports already in use on a node. Being built."""

from __future__ import annotations

from kvert.scheduler.framework import Plugin


class NodePorts(Plugin):
    name = "NodePorts"
