"""What plugins read of the node cache: the :class:`NodeCacheReader` contract.

Filter and Score plugins get a :class:`~kvert.scheduler.snapshot.NodeSet` whose ``cache`` is
either the scheduler's :class:`~kvert.scheduler.cache.NodeCache` or a
:class:`~kvert.scheduler.view.CacheView` over it ("as if these pods were gone / those were
there"). Both answer to this Protocol, and a plugin names only it: the members below are
exactly what the in-tree plugins, the framework and :class:`NodeSet` read (a plugin that needs
more is a sign the cache grew a fact that belongs here, not a reason to import the concrete
cache). Arrays are indexed by node row and are read-only to plugins; properties rather than
attributes so that a view may compute or share them.

It lives below the snapshot and the cache so that both can name it without importing each
other.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any, Protocol

import numpy as np

from kvert.scheduler.nodeinfo import NodeInfo
from kvert.scheduler.podentry import HostPort, PodEntry
from kvert.scheduler.podindex import PodQuery


class PodListener(Protocol):
    """An index kept over the pods the cache counts (``NodeCache.add_pod_listener``)."""

    def account(self, entry: PodEntry, row: int, sign: int) -> None:
        """``entry`` was counted on ``row`` (sign +1) or taken off it (-1)."""

    def clear_row(self, row: int) -> None:
        """The node at ``row`` went away or is recounted from nothing."""

    def grow(self, capacity: int) -> None:
        """Rows were added: arrays indexed by row need ``capacity`` entries."""


class NodeCacheReader(Protocol):
    """The node cache as plugins read it (see the module docstring)."""

    # ---- sizes and change counters ----
    def __len__(self) -> int:
        """Number of nodes."""

    @property
    def capacity(self) -> int:
        """Number of rows (the length of every per-row array)."""

    @property
    def node_generation(self) -> int:
        """Bumps when a node is added, changed or removed (for per-node memos)."""

    # ---- nodes ----
    @property
    def valid(self) -> np.ndarray:
        """Per row: a node lives there."""

    @property
    def names(self) -> list[str | None]:
        """Per row: the node's name (None for a free row)."""

    @property
    def node_objs(self) -> list[dict[str, Any] | None]:
        """Per row: the Node object."""

    @property
    def row_of(self) -> Mapping[str, int]:
        """Node name -> row."""

    @property
    def unschedulable(self) -> np.ndarray:
        """Per row: ``spec.unschedulable``."""

    @property
    def taint_sig(self) -> np.ndarray:
        """Per row: the id of the node's taint list in :attr:`taint_sigs`."""

    @property
    def taint_sigs(self) -> list[tuple[dict[str, Any], ...]]:
        """Taint lists interned by content (id 0: no taints)."""

    def label_ids(self, key: str) -> np.ndarray:
        """Per row: the interned id of the node's value for label ``key`` (-1: absent)."""

    def label_value(self, key: str, vid: int) -> str | None:
        """The label value an id of :meth:`label_ids` stands for."""

    @property
    def node_images(self) -> list[dict[str, int] | None]:
        """Per row: image name -> size (``status.images``)."""

    @property
    def image_node_count(self) -> Counter[str]:
        """Image name -> number of nodes having it."""

    def node_info(self, row: int) -> NodeInfo:
        """The node at ``row`` as a per-node plugin sees it."""

    # ---- resources (columns: :meth:`col`) ----
    def col(self, name: str) -> int:
        """Column of a resource, or -1 if no node or pod has mentioned it yet."""

    @property
    def alloc(self) -> np.ndarray:
        """[row, col]: allocatable."""

    @property
    def alloc_has(self) -> np.ndarray:
        """[row, col]: the node lists the resource in its allocatable."""

    @property
    def req(self) -> np.ndarray:
        """[row, col]: the requests of the pods on the node."""

    @property
    def nonzero(self) -> np.ndarray:
        """[row, 0|1]: cpu / memory requests with the non-zero defaults (scoring)."""

    @property
    def pod_count(self) -> np.ndarray:
        """Per row: pods on the node."""

    @property
    def allowed_pods(self) -> np.ndarray:
        """Per row: allocatable ``pods``."""

    @property
    def used_ports(self) -> Mapping[str, Counter[HostPort]]:
        """Node name -> host ports in use."""

    # ---- pods ----
    def entry(self, uid: str) -> PodEntry | None:
        """The counted pod with ``uid``."""

    def node_entries(self, name: str) -> list[PodEntry]:
        """The pods counted on node ``name``."""

    def count_matching(self, query: PodQuery) -> np.ndarray:
        """Per row: pods matching ``query`` (read-only)."""

    @property
    def namespace_labels(self) -> Mapping[str, Mapping[str, str]]:
        """Namespace name -> its labels (namespaceSelector)."""

    def add_pod_listener(self, listener: PodListener) -> None:
        """Keep ``listener`` told of every pod counted or taken off a row."""

    # ---- nominated pods (preemption) ----
    @property
    def nominated(self) -> Mapping[str, Mapping[str, dict[str, Any]]]:
        """Node name -> uid -> the pod nominated to it."""

    def nominated_pods(self, node: str) -> list[dict[str, Any]]:
        """The pods nominated to ``node``."""


__all__ = ["NodeCacheReader", "PodListener"]
