"""A scenario's nodes: one pool (``nodes: {count, capacity, ...}``) or a list of pools.

::

    nodes:                               # one pool, its nodes named node-1 .. node-N
      count: 3
      capacity: {cpu: "4", memory: 8Gi}  # or "cpu=4,memory=8Gi"
      kubeReserved: {cpu: 100m}          # and the kubelet settings below

    nodes:                               # or pools, as an imported cluster's
      - name: general                    # its nodes: general-1 .. (or names: [...], count = their number)
        count: 2
        capacity: {cpu: "8", memory: 32Gi, pods: "110"}
        allocatable: {cpu: 7910m, memory: 30Gi}   # optional: kubeReserved derived from it
        labels: {topology.kubernetes.io/zone: a, node-role.kubernetes.io/worker: ""}
        taints: [{key: dedicated, value: batch, effect: NoSchedule}]
        unschedulable: false

A pool's kubelet settings: ``kubeReserved``, ``systemReserved``, ``evictionHard``,
``evictionSoft``, ``evictionSoftGracePeriod``, ``evictionMinimumReclaim``,
``evictionMaxPodGracePeriod``, ``evictionPressureTransitionPeriod``, ``featureGates``, and
``systemMemory`` (what the node's own daemons use). ``allocatable`` (what the recorded node
reported) without ``kubeReserved`` gives the node the kube-reserved that makes kvert's Node
Allocatable (capacity - reservations - hard eviction thresholds) come out at it; where the
recorded allocatable is above what kvert's default eviction thresholds leave, the node keeps
kvert's (a little less). Labels, taints and ``unschedulable`` are set on each Node by the
cluster's admin once it registered (a kubelet may not give itself every label: NodeRestriction).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kvert.api.quantity import QuantityError, to_int
from kvert.api.validation.names import validate_labels
from kvert.api.validation.node import validate_taints
from kvert.kubelet.allocatable import allocatable
from kvert.kubelet.config import ConfigError, NodeConfig
from kvert.sim.scenario_fields import (
    ScenarioError,
    as_mapping,
    check_keys,
    dns_label,
    required,
    resource_flag,
    resource_list,
)

# scenario key -> NodeConfig.from_flags argument, for the kubelet settings taken as they are
KUBELET_KEYS = {"evictionSoft": "eviction_soft", "evictionSoftGracePeriod": "eviction_soft_grace_period",
                "evictionMinimumReclaim": "eviction_minimum_reclaim",
                "evictionMaxPodGracePeriod": "eviction_max_pod_grace_period",
                "evictionPressureTransitionPeriod": "eviction_pressure_transition_period",
                "featureGates": "feature_gates"}
POOL_KEYS = {"count", "capacity", "kubeReserved", "systemReserved", "evictionHard", "systemMemory", *KUBELET_KEYS}
LIST_POOL_KEYS = POOL_KEYS | {"name", "names", "allocatable", "labels", "taints", "unschedulable"}
DERIVED_RESERVATION = ("cpu", "memory", "ephemeral-storage")


@dataclass
class NodePool:
    """Nodes alike: ``count`` of them (named ``names``, or ``NAME-1`` ..), one configuration."""
    count: int
    capacity: dict[str, int]
    kube_reserved: str = ""
    system_reserved: str = ""
    eviction_hard: str | None = None
    kubelet: dict[str, Any] = field(default_factory=dict)     # from_flags arguments (KUBELET_KEYS)
    system_memory: int = 0                                   # bytes the node's daemons use
    name: str = "node"
    names: tuple[str, ...] = ()
    labels: dict[str, str] = field(default_factory=dict)     # set on the Node by the cluster's admin
    taints: list[dict] = field(default_factory=list)
    unschedulable: bool = False

    def flags(self) -> dict[str, Any]:
        flags: dict[str, Any] = {"capacity": dict(self.capacity), "kube_reserved": self.kube_reserved,
                                 "system_reserved": self.system_reserved, **self.kubelet}
        if self.eviction_hard is not None:
            flags["eviction_hard"] = self.eviction_hard
        return flags

    def node_names(self) -> list[str]:
        return list(self.names) if self.names else [f"{self.name}-{i}" for i in range(1, self.count + 1)]

    @property
    def admin_changes(self) -> bool:
        """Whether its Nodes need labels, taints or a cordon from the admin."""
        return bool(self.labels or self.taints or self.unschedulable)


def _derived_reservation(pool: NodePool, wanted: dict[str, int]) -> str:
    """The kube-reserved flag that brings kvert's allocatable down to ``wanted``."""
    base = allocatable(NodeConfig.from_flags(node_name="check", **pool.flags()))
    parts = []
    for r in DERIVED_RESERVATION:
        if r in wanted and r in base and base[r] > wanted[r]:
            unit = "m" if r == "cpu" else ""
            parts.append(f"{r}={base[r] - wanted[r]}{unit}")
    return ",".join(parts)


def _pool(doc: object, path: str, *, listed: bool, index: int) -> NodePool:
    doc = as_mapping(doc, path)
    check_keys(doc, LIST_POOL_KEYS if listed else POOL_KEYS, path)
    names: tuple[str, ...] = ()
    if doc.get("names") is not None:
        raw = doc["names"]
        if not isinstance(raw, list) or not raw or not all(isinstance(n, str) and n for n in raw):
            raise ScenarioError(f"{path}.names: expected a non-empty list of node names")
        if len(set(raw)) != len(raw):
            raise ScenarioError(f"{path}.names: duplicate node name")
        names = tuple(raw)
    count = doc.get("count", len(names) or 1)
    if isinstance(count, bool) or not isinstance(count, int) or count < 1:
        raise ScenarioError(f"{path}.count: expected a positive integer, got {count!r}")
    if names and count != len(names):
        raise ScenarioError(f"{path}.count: {count} does not match the {len(names)} names")
    capacity = resource_list(required(doc, "capacity", path), f"{path}.capacity")
    for r in ("cpu", "memory"):
        if r not in capacity:
            raise ScenarioError(f"{path}.capacity.{r}: required")
    cap = {k: to_int(k, v) for k, v in capacity.items()}
    cap.setdefault("pods", 110)
    cap.setdefault("ephemeral-storage", 100 * 2**30)
    eviction = doc.get("evictionHard")
    if eviction is not None and not isinstance(eviction, str):
        raise ScenarioError(f"{path}.evictionHard: expected a string like \"memory.available<100Mi\"")
    # checked below, with the rest, as the kubelet would check them
    kubelet = {arg: doc[key] for key, arg in KUBELET_KEYS.items() if key in doc}
    system_memory = 0
    if "systemMemory" in doc:
        try:
            system_memory = to_int("memory", doc["systemMemory"])
        except QuantityError as e:
            raise ScenarioError(f"{path}.systemMemory: {e}") from None
    labels = {str(k): str(v) for k, v in as_mapping(doc.get("labels") or {}, f"{path}.labels").items()}
    for cause in validate_labels(labels, f"{path}.labels"):
        raise ScenarioError(f"{cause.field}: {cause.message}")
    taints = doc.get("taints") or []
    if not isinstance(taints, list):
        raise ScenarioError(f"{path}.taints: expected a list of taints")
    for cause in validate_taints(taints, f"{path}.taints"):
        raise ScenarioError(f"{cause.field}: {cause.message}")
    unschedulable = doc.get("unschedulable", False)
    if not isinstance(unschedulable, bool):
        raise ScenarioError(f"{path}.unschedulable: expected true or false")
    name = dns_label(doc.get("name", "node" if not listed else f"pool-{index + 1}"), f"{path}.name")
    pool = NodePool(count=count, capacity=cap,
                    kube_reserved=resource_flag(doc.get("kubeReserved"), f"{path}.kubeReserved"),
                    system_reserved=resource_flag(doc.get("systemReserved"), f"{path}.systemReserved"),
                    eviction_hard=eviction, kubelet=kubelet, system_memory=system_memory, name=name, names=names,
                    labels=labels, taints=[dict(t) for t in taints], unschedulable=unschedulable)
    try:
        NodeConfig.from_flags(node_name="check", **pool.flags())
        if doc.get("allocatable") is not None and not pool.kube_reserved:
            wanted = resource_list(doc["allocatable"], f"{path}.allocatable")
            pool.kube_reserved = _derived_reservation(pool, {k: to_int(k, v) for k, v in wanted.items()})
    except (ConfigError, ValueError) as e:
        raise ScenarioError(f"{path}: {e}") from None
    return pool


def parse_pools(doc: object, path: str = "nodes") -> list[NodePool]:
    """The pools of a scenario's ``nodes`` (a mapping: one pool; a list: pools); node names
    unique across them."""
    if isinstance(doc, list):
        if not doc:
            raise ScenarioError(f"{path}: expected at least one pool")
        pools = [_pool(p, f"{path}[{i}]", listed=True, index=i) for i, p in enumerate(doc)]
    else:
        pools = [_pool(doc, path, listed=False, index=0)]
    seen: dict[str, int] = {}
    for i, pool in enumerate(pools):
        for node in pool.node_names():
            if node in seen:
                raise ScenarioError(f"{path}[{i}]: node {node!r} is in pool {seen[node]} too")
            seen[node] = i
    return pools


__all__ = ["KUBELET_KEYS", "NodePool", "parse_pools"]
