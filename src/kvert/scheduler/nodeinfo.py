"""One node as a per-node (slow path) plugin sees it (``framework.NodeInfo``).

Its own module so that the node cache, its views and the reader contract
(:mod:`kvert.scheduler.reader`) can all name it from below the snapshot.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class NodeInfo:
    """One node as a per-node (slow path) plugin sees it (``framework.NodeInfo``)."""

    node: dict[str, Any]
    row: int
    allocatable: dict[str, int]
    requested: dict[str, int]
    non_zero_requested: dict[str, int]
    allowed_pod_number: int
    pods: list[dict[str, Any]] = field(default_factory=list)

    @property
    def name(self) -> str:
        return (self.node.get("metadata") or {}).get("name", "")


__all__ = ["NodeInfo"]
