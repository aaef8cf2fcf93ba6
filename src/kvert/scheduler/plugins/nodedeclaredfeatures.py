"""NodeDeclaredFeatures: PreFilter and Filter on the features nodes declare (KEP-5328, alpha
in 1.35; beta and on in 1.36, so in the default profile, after DefaultBinder, unless the
scheduler's NodeDeclaredFeatures gate is off).

A kubelet publishes ``status.declaredFeatures``: the names of the node-level features it
supports (``DiscoverNodeFeatures``). The scheduler infers from the pod's spec which of them
the pod needs (``InferForPodScheduling`` of ``k8s.io/component-helpers/nodedeclaredfeatures``)
and keeps the pod off nodes that do not declare them all, with the reason
``node(s) didn't match Pod's required features`` (UnschedulableAndUnresolvable).

Which features are inferred is a registry (:data:`FEATURES`). kvert's holds 1.35's one feature,
``GuaranteedQoSPodCPUResize``, which matters only to resizes (the API server's admission
checks it); nothing is inferred for scheduling, so in 1.35 PreFilter always returns Skip and
the Filter never runs. A feature whose ``max_version`` is below the scheduler's version
(:data:`KUBE_VERSION`) is no longer required: every node of that version has it. Tests and
future releases give the plugin other registries (``NodeDeclaredFeatures(features=...)``).

A pod's requirements and a node's declarations are bit sets over the registry (bits in the
registry's name order, as upstream's FeatureMapper does); the nodes' sets are one uint64 array
rebuilt only when a node changes (``cache.node_generation``), so Filter is one numpy
comparison over all nodes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from kvert.api.version import KUBERNETES_VERSION
from kvert.scheduler.framework import (
    NODE,
    QUEUE,
    QUEUE_SKIP,
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    Code,
    CycleState,
    FilterResult,
    Handle,
    Plugin,
    Status,
)
from kvert.scheduler.snapshot import NodeSet

ERR_REASON_UNSATISFIED = "node(s) didn't match Pod's required features"
STATE_KEY = "PreFilterNodeDeclaredFeatures"
# the version requirements are inferred for (upstream: the scheduler binary's version)
KUBE_VERSION = KUBERNETES_VERSION
# the event of a pod's own update (the queue requeues such a pod itself; registered for the hint)
UNSCHEDULED_POD = "UnscheduledPod"


@dataclass(frozen=True)
class Feature:
    """One declared feature: its name, whether a pod's spec needs it, and the last version in
    which nodes may lack it (None: no such version yet)."""

    name: str
    infer_for_scheduling: Callable[[dict], bool]
    max_version: tuple[int, int, int] | None = None


# inplacepodresize/guaranteed_cpu_resize.go: only resizes of Guaranteed pods need it
GUARANTEED_QOS_POD_CPU_RESIZE = Feature("GuaranteedQoSPodCPUResize", lambda spec: False)
FEATURES: tuple[Feature, ...] = (GUARANTEED_QOS_POD_CPU_RESIZE,)


def parse_version(text: str) -> tuple[int, int, int]:
    """``1.35.0`` (or ``v1.35.0-extra``) -> (1, 35, 0)."""
    core = text.lstrip("v").split("-")[0].split("+")[0]
    parts = [int(p) for p in core.split(".")]
    if not 1 <= len(parts) <= 3:
        raise ValueError(f"invalid version {text!r}")
    return tuple(parts + [0] * (3 - len(parts)))  # type: ignore[return-value]


class FeatureRegistry:
    """The features in name order, mapping names to bits (``ndf.Framework``)."""

    def __init__(self, features: Iterable[Feature]):
        self.features = sorted(features, key=lambda f: f.name)
        if len(self.features) > 64:
            raise ValueError("at most 64 declared features fit a node's bit set")
        self.bit = {f.name: 1 << i for i, f in enumerate(self.features)}

    def infer_for_pod_scheduling(self, pod: dict, version: tuple[int, int, int] | None) -> int:
        """The bits of the features ``pod`` needs on nodes of ``version``."""
        if version is None:
            raise ValueError("target version cannot be nil")
        spec = pod.get("spec") or {}
        bits = 0
        for i, f in enumerate(self.features):
            if f.max_version is not None and version > f.max_version:
                continue
            if f.infer_for_scheduling(spec):
                bits |= 1 << i
        return bits

    def node_bits(self, names: Sequence[str] | None) -> int:
        """A node's declared features as bits (names outside the registry cannot be required)."""
        bits = 0
        for name in names or ():
            bits |= self.bit.get(name, 0)
        return bits

    def names(self, bits: int) -> list[str]:
        return [f.name for i, f in enumerate(self.features) if bits >> i & 1]


def declared_features(node: dict | None) -> list[str]:
    return list(((node or {}).get("status") or {}).get("declaredFeatures") or [])


class NodeDeclaredFeatures(Plugin):
    name = "NodeDeclaredFeatures"

    def __init__(self, args: dict[str, Any] | None = None, handle: Handle | None = None, *,
                 features: Iterable[Feature] | None = None,
                 version: tuple[int, int, int] | None = KUBE_VERSION):
        super().__init__(args, handle)
        self.registry = FeatureRegistry(FEATURES if features is None else features)
        self.version = version
        self._nodes_key: tuple | None = None
        self._node_bits = np.zeros(0, np.uint64)
        self._memo: dict[tuple[str, ...], int] = {}

    def pre_filter(self, state: CycleState, pod: dict, nodes: NodeSet):
        try:
            reqs = self.registry.infer_for_pod_scheduling(pod, self.version)
        except ValueError as e:
            return None, Status.as_status(e)
        if not reqs:
            return None, Status(Code.SKIP)
        state.write(STATE_KEY, reqs)
        return None, None

    def _bits_of_rows(self, cache) -> np.ndarray:
        """Every row's declared features, rebuilt when a node was added, changed or removed."""
        key = (id(cache.node_objs), cache.node_generation, len(cache.node_objs))
        if key != self._nodes_key:
            bits = np.zeros(len(cache.node_objs), np.uint64)
            for row, node in enumerate(cache.node_objs):
                if node is None:
                    continue
                names = tuple(declared_features(node))
                if names not in self._memo:
                    self._memo[names] = self.registry.node_bits(names)
                bits[row] = self._memo[names]
            self._node_bits, self._nodes_key = bits, key
        return self._node_bits

    def filter(self, state: CycleState, pod: dict, nodes: NodeSet) -> FilterResult:
        reqs = state.get(STATE_KEY)
        if reqs is None:
            raise RuntimeError(f'error reading "{STATE_KEY}" from cycle-state: not found')
        req = np.uint64(reqs)
        have = self._bits_of_rows(nodes.cache)[nodes.rows]
        return FilterResult.reject((have & req) != req, ERR_REASON_UNSATISFIED)

    def explain_node(self, state: CycleState, pod: dict, row: int, cache) -> str | None:
        """The required features a rejected node does not declare."""
        reqs = state.get(STATE_KEY)
        if not reqs:
            return None
        missing = reqs & ~self.registry.node_bits(declared_features(cache.node_objs[row]))
        return "missing declared features " + ", ".join(self.registry.names(missing))

    # ---- queueing hints -------------------------------------------------------------------

    def is_schedulable_after_node_change(self, pod: dict, old: dict | None, new: dict) -> bool:
        if old is not None and declared_features(old) == declared_features(new):
            return QUEUE_SKIP
        return QUEUE

    def is_schedulable_after_target_pod_update(self, pod: dict, old: dict, new: dict) -> bool:
        try:
            before = self.registry.infer_for_pod_scheduling(old, self.version)
            after = self.registry.infer_for_pod_scheduling(new, self.version)
        except ValueError:
            return QUEUE
        return QUEUE_SKIP if before == after else QUEUE

    def events_to_register(self) -> list[ClusterEventWithHint]:
        # kube-scheduler has a node update action of its own for declared features; until the
        # framework has one, any node update is offered and the hint keeps the relevant ones
        node_update = ActionType.UPDATE_NODE_DECLARED_FEATURE
        return [
            ClusterEventWithHint(ClusterEvent(NODE, ActionType.ADD | node_update),
                                 self.is_schedulable_after_node_change),
            ClusterEventWithHint(ClusterEvent(UNSCHEDULED_POD, ActionType.UPDATE),
                                 self.is_schedulable_after_target_pod_update),
        ]


__all__ = [
    "ERR_REASON_UNSATISFIED",
    "FEATURES",
    "KUBE_VERSION",
    "Feature",
    "FeatureRegistry",
    "NodeDeclaredFeatures",
    "parse_version",
]
