"""ImageLocality: prefer nodes that already hold the pod's images (``imagelocality/image_locality.go``).

For every container of the pod -- init containers included, as 1.35 counts them -- whose
image the node reports in ``status.images`` (names compared after normalizing: an untagged
``repo`` means ``repo:latest``), the image scores its size scaled by how widely it has spread,
``int64(size * nodesHavingIt / allNodes)``, so a pod is not drawn to the one node that pulled
an image first (the "node heating" problem). The sum is clamped to [23 MiB, 1000 MiB x the
number of containers] and mapped linearly to 0..100 with integer division:

    score = 100 * (clamp(sum) - 23Mi) // (1000Mi * containers - 23Mi)

``allNodes`` is every node of the cluster, not only the feasible ones. There is no
normalization step.

The cache keeps each node's images (``cache.node_images[row]``: name -> size, replaced by a
new dict only when the node's images change) and per image name the number of nodes having
it (``cache.image_node_count``). Scoring reads, per image name the pod uses, a column of
sizes over all node rows; the columns of recently used names are kept and patched for the
rows whose images changed, so a cycle costs a few numpy operations however many nodes there
are.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from kvert.scheduler.framework import MAX_NODE_SCORE, CycleState, Handle, Plugin
from kvert.scheduler.plugins.helper import LRU
from kvert.scheduler.reader import NodeCacheReader
from kvert.scheduler.snapshot import NodeSet
from kvert.scheduler.view import base_cache

MB = 1024 * 1024
MIN_THRESHOLD = 23 * MB
MAX_CONTAINER_THRESHOLD = 1000 * MB


def normalized_image_name(name: str) -> str:
    """``normalizedImageName``: the CRI name of an image reference (``:latest`` if untagged)."""
    if name.rfind(":") <= name.rfind("/"):
        return name + ":latest"
    return name


def calculate_priority(sum_scores: np.ndarray, num_containers: int) -> np.ndarray:
    """``calculatePriority``: the clamped sum mapped to 0..100 (int64 division)."""
    max_threshold = MAX_CONTAINER_THRESHOLD * num_containers
    s = np.where(sum_scores < MIN_THRESHOLD, MIN_THRESHOLD,
                 np.where(sum_scores > max_threshold, max_threshold, sum_scores))
    den = max_threshold - MIN_THRESHOLD
    if den <= 0:   # a pod without containers: the sum is 0, clamped to the minimum
        return np.zeros(len(s), np.int64)
    return (MAX_NODE_SCORE * (s - MIN_THRESHOLD) // den).astype(np.int64)


class _SizeColumns:
    """Per image name: its size on each node row (0 where absent), for the names pods ask
    for, kept in step with the cache's ``node_images``."""

    def __init__(self, size: int = 256):
        self.cache: NodeCacheReader | None = None
        self.columns: LRU = LRU(size)
        self.seen: list = []
        self.ids = np.zeros(0, np.int64)
        self.generation = -1

    def refresh(self, cache: NodeCacheReader) -> None:
        if cache is not self.cache:
            self.cache, self.seen, self.ids, self.generation = cache, [], np.zeros(0, np.int64), -1
            self.columns.clear()
        if cache.node_generation == self.generation:
            return
        images = cache.node_images
        # a row's dict is replaced only when its images change; ``seen`` keeps the old dicts
        # alive, so an id seen before cannot be reused by a new dict
        ids = np.fromiter(map(id, images), np.int64, count=len(images))
        if len(ids) != len(self.ids) or not self.columns:
            self.columns.clear()
        else:
            for r in np.flatnonzero(ids != self.ids).tolist():
                for name, col in self.columns.items():
                    col[r] = (images[r] or {}).get(name, 0)
        self.seen, self.ids = list(images), ids
        self.generation = cache.node_generation

    def column(self, name: str) -> np.ndarray:
        if self.cache is None:
            raise RuntimeError("image size columns read before refresh")
        images = self.cache.node_images
        return self.columns.get_or_create(name, lambda: np.fromiter(
            ((imgs or {}).get(name, 0) for imgs in images), np.int64, count=len(images)))


class ImageLocality(Plugin):
    name = "ImageLocality"

    def __init__(self, args: dict[str, Any] | None = None, handle: Handle | None = None):
        super().__init__(args, handle)
        self._sizes = _SizeColumns()

    def score(self, state: CycleState, pod: dict, nodes: NodeSet) -> np.ndarray:
        spec = pod.get("spec") or {}
        containers = list(spec.get("initContainers") or ()) + list(spec.get("containers") or ())
        cache, rows = nodes.cache, nodes.rows
        base = base_cache(cache)   # views share the cache's images
        total = len(base)
        names = [normalized_image_name(c.get("image") or "") for c in containers]
        if not total or not any(base.image_node_count.get(n, 0) > 0 for n in names):
            # no node has any of the images: every sum is 0, clamped to the minimum: 0
            return np.zeros(len(rows), np.int64)
        sums = np.zeros(len(rows), np.int64)
        self._sizes.refresh(base)
        for name in names:
            having = base.image_node_count.get(name, 0)
            if having <= 0:
                continue
            spread = float(having) / float(total)
            sizes = self._sizes.column(name)[rows]
            sums += (sizes.astype(np.float64) * spread).astype(np.int64)
        return calculate_priority(sums, len(containers))
