"""NodeResourcesFit and NodeResourcesBalancedAllocation, over the cache's arrays.

**Filter** (``fitsRequest``): for every node at once, ``pods + 1 > allowed pods`` is "Too many
pods"; then for each resource the pod requests (> 0, not ignored): ``request > allocatable -
requested`` is "Insufficient <resource>" (cpu, memory, ephemeral-storage, then extended
resources, hugepages...). A node keeps all its reasons. The status is Unschedulable, or
UnschedulableAndUnresolvable when the request exceeds the node's whole allocatable (no
preemption could help).

**Score** (``scoringStrategy``), every formula in integers as kube-scheduler computes it,
per resource ``r`` with weight ``w_r`` over the resources the node has (allocatable != 0),
``req`` = the node's requests + the pod's (cpu/memory counted with the non-zero defaults):

* ``LeastAllocated`` (default): ``Σ w_r·((alloc_r - req_r)·100 // alloc_r) // Σ w_r`` (0 if over)
* ``MostAllocated``: ``Σ w_r·(min(req_r, alloc_r)·100 // alloc_r) // Σ w_r``
* ``RequestedToCapacityRatio``: utilization ``req_r·100 // alloc_r`` mapped through the
  broken-linear ``shape``; resources scoring 0 drop out; ``round(Σ w_r·s_r / Σ w_r)``.

  Seed 001's worked example gives node scores **5** and **7**: it interpolates on the
  shape's own 0..10 scores and then averages. kvert does exactly that by default and scales
  the result by 10 to the 0..100 node score range (50 and 70). kube-scheduler 1.22+ instead
  scales the shape points to 0..100 before interpolating (60 and 69 for the same example);
  ``requestedToCapacityRatio.interpolation: NodeScore`` (a kvert extension) selects that.
  The seed's standalone ``RequestedToCapacityRatio`` plugin (args ``shape``, ``resources``)
  is served too, as an alias of the strategy.

**BalancedAllocation**: ``int((1 - std(fractions))·100)`` with fraction = min(req/alloc, 1)
over cpu and memory (plain requests, no defaults); for two resources ``std = |f1 - f2| / 2``.
A BestEffort pod is not scored by it (Skip).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from kvert.scheduler.cache import (
    CPU, EPHEMERAL_STORAGE, MEMORY, is_extended_resource, is_scalar_resource, non_zero_requests,
    scheduler_requests,
)
from kvert.scheduler.framework import (
    ASSIGNED_POD, MAX_CUSTOM_PRIORITY_SCORE, MAX_NODE_SCORE, NODE, ActionType, ClusterEvent,
    ClusterEventWithHint, Code, CycleState, FilterResult, Plugin, QUEUE, QUEUE_SKIP, Status,
)
from kvert.scheduler.plugins.helper import LRU
from kvert.scheduler.snapshot import NodeSet

LEAST_ALLOCATED = "LeastAllocated"
MOST_ALLOCATED = "MostAllocated"
REQUESTED_TO_CAPACITY_RATIO = "RequestedToCapacityRatio"
SHAPE_SCORE = "ShapeScore"     # seed 001: interpolate on the 0..10 shape, then x10
NODE_SCORE = "NodeScore"       # kube-scheduler >= 1.22: scale the shape x10, then interpolate
DEFAULT_RESOURCES = [{"name": CPU, "weight": 1}, {"name": MEMORY, "weight": 1}]
MAX_UTILIZATION = 100
_FIT_STATE = "PreFilterNodeResourcesFit"
_SCORE_STATE = "PreScoreNodeResourcesFit"
_BALANCED_STATE = "PreScoreNodeResourcesBalancedAllocation"


class ConfigError(ValueError):
    pass


# ---------------------------------------------------------------------------------------------
# scorers over (n nodes x k resources) int64 matrices
# ---------------------------------------------------------------------------------------------


def _div_trunc(a: np.ndarray, b: Any) -> np.ndarray:
    """Go's integer division (truncates toward zero); ``b`` > 0."""
    return np.where(a >= 0, a // b, -((-a) // b))


def least_allocated(req: np.ndarray, alloc: np.ndarray, weights: np.ndarray) -> np.ndarray:
    valid = alloc != 0
    safe = np.where(valid, alloc, 1)
    s = np.where(req > alloc, 0, (alloc - req) * MAX_NODE_SCORE // safe)
    s = np.where(valid, s, 0)
    num = (s * weights).sum(axis=1)
    den = (valid * weights).sum(axis=1)
    return np.where(den == 0, 0, num // np.maximum(den, 1))


def most_allocated(req: np.ndarray, alloc: np.ndarray, weights: np.ndarray) -> np.ndarray:
    valid = alloc != 0
    safe = np.where(valid, alloc, 1)
    s = np.where(valid, np.minimum(req, alloc) * MAX_NODE_SCORE // safe, 0)
    num = (s * weights).sum(axis=1)
    den = (valid * weights).sum(axis=1)
    return np.where(den == 0, 0, num // np.maximum(den, 1))


def broken_linear(p: np.ndarray, shape: Sequence[tuple[int, int]]) -> np.ndarray:
    """``helper.BuildBrokenLinearFunction``: shape[0].score below the first point, the last
    score above the last, linear (integer, truncating) in between."""
    out = np.full(p.shape, shape[-1][1], np.int64)
    for i in range(len(shape) - 1, -1, -1):
        u_i, s_i = shape[i]
        if i == 0:
            val: Any = shape[0][1]
        else:
            u0, s0 = shape[i - 1]
            val = s0 + _div_trunc((s_i - s0) * (p - u0), u_i - u0)
        out = np.where(p <= u_i, val, out)
    return out


def requested_to_capacity_ratio(req: np.ndarray, alloc: np.ndarray, weights: np.ndarray,
                                shape: Sequence[tuple[int, int]],
                                interpolation: str = SHAPE_SCORE) -> np.ndarray:
    """Node scores in 0..100. ``shape``: (utilization 0..100, score 0..10) points."""
    factor = MAX_NODE_SCORE // MAX_CUSTOM_PRIORITY_SCORE
    if interpolation == NODE_SCORE:
        shape = [(u, s * factor) for u, s in shape]
    valid = alloc != 0
    safe = np.where(valid, alloc, 1)
    util = np.where(req > alloc, MAX_UTILIZATION, req * MAX_UTILIZATION // safe)
    rs = broken_linear(util, shape)
    counted = valid & (rs > 0)
    num = (rs * weights * counted).sum(axis=1)
    den = (weights * counted).sum(axis=1)
    d = np.maximum(den, 1)
    score = np.where(den == 0, 0, (2 * num + d) // (2 * d))   # math.Round, non-negative
    return score * factor if interpolation != NODE_SCORE else score


def balanced_allocation(req: np.ndarray, alloc: np.ndarray) -> np.ndarray:
    n, k = alloc.shape
    valid = alloc != 0
    frac = np.where(valid, req / np.where(valid, alloc, 1), 0.0)
    frac = np.minimum(frac, 1.0)
    count = valid.sum(axis=1)
    # first and second valid fractions, in resource order (the two-resource formula)
    first = np.zeros(n)
    second = np.zeros(n)
    seen = np.zeros(n, np.int64)
    total = np.zeros(n)
    for j in range(k):
        v = valid[:, j]
        f = frac[:, j]
        first = np.where(v & (seen == 0), f, first)
        second = np.where(v & (seen == 1), f, second)
        total = np.where(v, total + f, total)
        seen = seen + v
    std = np.zeros(n)
    two = count == 2
    std = np.where(two, np.abs((first - second) / 2), std)
    many = count > 2
    if many.any():
        mean = total / np.maximum(count, 1)
        acc = np.zeros(n)
        for j in range(k):
            d = frac[:, j] - mean
            acc = np.where(valid[:, j], acc + d * d, acc)
        std = np.where(many, np.sqrt(acc / np.maximum(count, 1)), std)
    return ((1 - std) * float(MAX_NODE_SCORE)).astype(np.int64)


# ---------------------------------------------------------------------------------------------
# arguments
# ---------------------------------------------------------------------------------------------


def parse_resources(spec: Any, path: str) -> list[tuple[str, int]]:
    if spec is None:
        spec = DEFAULT_RESOURCES
    if not isinstance(spec, list):
        raise ConfigError(f"{path}: must be a list of {{name, weight}}")
    out: list[tuple[str, int]] = []
    seen: set[str] = set()
    for i, r in enumerate(spec):
        if not isinstance(r, dict) or not isinstance(r.get("name"), str) or not r["name"]:
            raise ConfigError(f"{path}[{i}].name: Required value")
        w = r.get("weight", 1)
        if w is None:
            w = 1
        if not isinstance(w, int) or isinstance(w, bool) or not 1 <= w <= 100:
            raise ConfigError(f"{path}[{i}].weight: Invalid value: {w!r}: resource weight of "
                              f"{r['name']} should be in the range of [1, 100]")
        if r["name"] in seen:
            raise ConfigError(f"{path}[{i}].name: Duplicate value: {r['name']!r}")
        seen.add(r["name"])
        out.append((r["name"], w))
    return out


def parse_shape(spec: Any, path: str) -> list[tuple[int, int]]:
    if not isinstance(spec, list) or not spec:
        raise ConfigError(f"{path}: Required value: at least one point must be specified")
    points: list[tuple[int, int]] = []
    for i, pt in enumerate(spec):
        u, s = (pt or {}).get("utilization"), (pt or {}).get("score")
        if not isinstance(u, int) or isinstance(u, bool) or not 0 <= u <= 100:
            raise ConfigError(f"{path}[{i}].utilization: Invalid value: {u!r}: "
                              "utilization values must be in the range [0, 100]")
        if not isinstance(s, int) or isinstance(s, bool) or not 0 <= s <= MAX_CUSTOM_PRIORITY_SCORE:
            raise ConfigError(f"{path}[{i}].score: Invalid value: {s!r}: score values must be "
                              f"in the range [0, {MAX_CUSTOM_PRIORITY_SCORE}]")
        if points and u <= points[-1][0]:
            raise ConfigError(f"{path}[{i}].utilization: Invalid value: {u!r}: utilization "
                              "values must be sorted in increasing order")
        points.append((u, s))
    return points


class _Scorer:
    """A scoring strategy with its resources (``resourceAllocationScorer``)."""

    def __init__(self, strategy: str, resources: list[tuple[str, int]], use_requested: bool,
                 shape: list[tuple[int, int]] | None = None, interpolation: str = SHAPE_SCORE):
        self.strategy = strategy
        self.resources = resources
        self.names = [r for r, _ in resources]
        self.weights = np.array([w for _, w in resources], np.int64)
        self.use_requested = use_requested
        self.shape = shape
        self.interpolation = interpolation

    def pod_requests(self, pod: dict) -> list[int]:
        reqs = scheduler_requests(pod)
        if not self.use_requested and (CPU in self.names or MEMORY in self.names):
            nz_cpu, nz_mem = non_zero_requests(pod)
            reqs = {**reqs, CPU: nz_cpu, MEMORY: nz_mem}
        return [int(reqs.get(r, 0)) for r in self.names]

    def matrices(self, nodes: NodeSet, pod_req: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
        """(requested incl. the pod, allocatable) per node and resource; allocatable 0 where a
        resource is not scored on a node (``calculateResourceAllocatableRequest``)."""
        cache, rows = nodes.cache, nodes.rows
        n, k = len(rows), len(self.names)
        alloc = np.zeros((n, k), np.int64)
        req = np.zeros((n, k), np.int64)
        for j, name in enumerate(self.names):
            pr = pod_req[j]
            if pr == 0 and is_scalar_resource(name):
                continue
            c = cache.col(name)
            if c < 0:
                continue
            if name in (CPU, MEMORY):
                base = cache.req[rows, c] if self.use_requested else \
                    cache.nonzero[rows, 0 if name == CPU else 1]
                alloc[:, j] = cache.alloc[rows, c]
                req[:, j] = base + pr
            elif name == EPHEMERAL_STORAGE:
                alloc[:, j] = cache.alloc[rows, c]
                req[:, j] = cache.req[rows, c] + pr
            elif is_scalar_resource(name):
                has = cache.alloc_has[rows, c]
                alloc[:, j] = np.where(has, cache.alloc[rows, c], 0)
                req[:, j] = np.where(has, cache.req[rows, c] + pr, 0)
        return req, alloc

    def score(self, nodes: NodeSet, pod_req: Sequence[int]) -> np.ndarray:
        req, alloc = self.matrices(nodes, pod_req)
        if self.strategy == LEAST_ALLOCATED:
            return least_allocated(req, alloc, self.weights)
        if self.strategy == MOST_ALLOCATED:
            return most_allocated(req, alloc, self.weights)
        if self.strategy == REQUESTED_TO_CAPACITY_RATIO:
            return requested_to_capacity_ratio(req, alloc, self.weights, self.shape or [],
                                               self.interpolation)
        return balanced_allocation(req, alloc)


def _scoring_strategy(args: dict) -> _Scorer:
    st = args.get("scoringStrategy") or {}
    kind = st.get("type") or LEAST_ALLOCATED
    path = "pluginConfig[NodeResourcesFit].args.scoringStrategy"
    if kind not in (LEAST_ALLOCATED, MOST_ALLOCATED, REQUESTED_TO_CAPACITY_RATIO):
        raise ConfigError(f"{path}.type: Unsupported value: {kind!r}: supported values: "
                          f'"{LEAST_ALLOCATED}", "{MOST_ALLOCATED}", "{REQUESTED_TO_CAPACITY_RATIO}"')
    resources = parse_resources(st.get("resources"), f"{path}.resources")
    shape, interp = None, SHAPE_SCORE
    if kind == REQUESTED_TO_CAPACITY_RATIO:
        rtcr = st.get("requestedToCapacityRatio") or {}
        shape = parse_shape(rtcr.get("shape"), f"{path}.requestedToCapacityRatio.shape")
        interp = rtcr.get("interpolation") or SHAPE_SCORE
        if interp not in (SHAPE_SCORE, NODE_SCORE):
            raise ConfigError(f"{path}.requestedToCapacityRatio.interpolation: Unsupported value: "
                              f'{interp!r}: supported values: "{SHAPE_SCORE}", "{NODE_SCORE}"')
    return _Scorer(kind, resources, use_requested=False, shape=shape, interpolation=interp)


# ---------------------------------------------------------------------------------------------
# plugins
# ---------------------------------------------------------------------------------------------


class _FitState:
    __slots__ = ("requests", "order")

    def __init__(self, requests: dict[str, int]):
        self.requests = requests
        scalars = sorted(r for r in requests if r not in (CPU, MEMORY, EPHEMERAL_STORAGE))
        self.order = [r for r in (CPU, MEMORY, EPHEMERAL_STORAGE) if requests.get(r, 0) > 0] + \
            [r for r in scalars if requests[r] > 0]


class NodeResourcesFit(Plugin):
    name = "NodeResourcesFit"

    def __init__(self, args: dict | None = None, handle=None):
        super().__init__(args, handle)
        self.ignored = set(self.args.get("ignoredResources") or [])
        self.ignored_groups = set(self.args.get("ignoredResourceGroups") or [])
        self.scorer = _scoring_strategy(self.args)
        self._empty_nodes = LRU(64)

    def _ignored(self, name: str) -> bool:
        if not is_extended_resource(name):
            return False
        return name in self.ignored or name.split("/")[0] in self.ignored_groups

    def pre_filter(self, state: CycleState, pod: dict, nodes: NodeSet):
        state.write(_FIT_STATE, _FitState(scheduler_requests(pod)))
        return None, None

    def filter(self, state: CycleState, pod: dict, nodes: NodeSet) -> FilterResult:
        s: _FitState = state.get(_FIT_STATE) or _FitState(scheduler_requests(pod))
        cache, rows = nodes.cache, nodes.rows
        n = len(rows)
        reasons: list[tuple[str, np.ndarray]] = []
        too_many = cache.pod_count[rows] + 1 > cache.allowed_pods[rows]
        reasons.append(("Too many pods", too_many))
        failed = too_many.copy()
        unresolvable = np.zeros(n, bool)
        for res in s.order:
            if self._ignored(res):
                continue
            want = s.requests[res]
            c = cache.col(res)
            if c < 0:
                short = np.ones(n, bool)
                over = short
            else:
                alloc = cache.alloc[rows, c]
                short = want > alloc - cache.req[rows, c]
                over = want > alloc
            reasons.append((f"Insufficient {res}", short))
            failed |= short
            unresolvable |= short & over
        codes = np.where(failed, np.where(unresolvable, np.int8(Code.UNSCHEDULABLE_AND_UNRESOLVABLE),
                                          np.int8(Code.UNSCHEDULABLE)), np.int8(0))
        return FilterResult(codes.astype(np.int8), reasons)

    def explain_node(self, state: CycleState, pod: dict, row: int, cache) -> str | None:
        s: _FitState | None = state.get(_FIT_STATE)
        if s is None:
            return None
        parts = []
        if cache.pod_count[row] + 1 > cache.allowed_pods[row]:
            parts.append(f"pods {int(cache.pod_count[row])}/{int(cache.allowed_pods[row])}")
        for res in s.order:
            c = cache.col(res)
            alloc = int(cache.alloc[row, c]) if c >= 0 else 0
            used = int(cache.req[row, c]) if c >= 0 else 0
            if s.requests[res] > alloc - used:
                parts.append(f"{res}: requested {s.requests[res]}, used {used}, allocatable {alloc}")
        return "; ".join(parts) or None

    def pre_score(self, state: CycleState, pod: dict, nodes: NodeSet) -> Status | None:
        state.write(_SCORE_STATE, self.scorer.pod_requests(pod))
        return None

    def score(self, state: CycleState, pod: dict, nodes: NodeSet) -> np.ndarray:
        pod_req = state.get(_SCORE_STATE)
        if pod_req is None:
            pod_req = self.scorer.pod_requests(pod)
        return self.scorer.score(nodes, pod_req)

    # ---- queueing -----------------------------------------------------------------------

    def _fits_empty(self, pod: dict, node: dict) -> bool:
        """``isFit``: would the pod fit the node if nothing ran on it?"""
        from kvert.scheduler.cache import NodeCache
        meta = node.get("metadata") or {}
        key = (meta.get("name"), meta.get("resourceVersion")) if meta.get("resourceVersion") else None

        def empty() -> NodeCache:
            c = NodeCache(capacity=8)
            c.add_node(node)
            return c
        c = self._empty_nodes.get_or_create(key, empty) if key else empty()
        res = self.filter(CycleState(), pod, c.snapshot().all())
        return bool(res.passed.all())

    def events_to_register(self) -> list[ClusterEventWithHint]:
        def pod_hint(pod: dict, old: dict | None, new: dict | None) -> bool:
            if new is None:   # an assigned pod was deleted
                return QUEUE if old is not None and (old.get("spec") or {}).get("nodeName") \
                    else QUEUE_SKIP
            if (new.get("metadata") or {}).get("uid") == (pod.get("metadata") or {}).get("uid"):
                return QUEUE
            if not (new.get("spec") or {}).get("nodeName") or old is None:
                return QUEUE_SKIP
            before, after = scheduler_requests(old), scheduler_requests(new)
            for res, v in scheduler_requests(pod).items():
                if v and before.get(res, 0) > after.get(res, 0):
                    return QUEUE
            return QUEUE_SKIP

        def node_hint(pod: dict, old: dict | None, new: dict | None) -> bool:
            if new is None or not self._fits_empty(pod, new):
                return QUEUE_SKIP
            if old is None:
                return QUEUE
            from kvert.api.resources import parse_resource_list
            a = parse_resource_list((old.get("status") or {}).get("allocatable"))
            b = parse_resource_list((new.get("status") or {}).get("allocatable"))
            if b.get("pods", 0) > a.get("pods", 0):
                return QUEUE
            return QUEUE if any(v and b.get(r, 0) > a.get(r, 0)
                                for r, v in scheduler_requests(pod).items()) else QUEUE_SKIP

        return [
            ClusterEventWithHint(ClusterEvent(ASSIGNED_POD, ActionType.DELETE
                                              | ActionType.UPDATE_POD_SCALE_DOWN), pod_hint),
            ClusterEventWithHint(ClusterEvent(NODE, ActionType.ADD
                                              | ActionType.UPDATE_NODE_ALLOCATABLE), node_hint),
        ]


class NodeResourcesBalancedAllocation(Plugin):
    name = "NodeResourcesBalancedAllocation"

    def __init__(self, args: dict | None = None, handle=None):
        super().__init__(args, handle)
        resources = parse_resources(self.args.get("resources"),
                                    "pluginConfig[NodeResourcesBalancedAllocation].args.resources")
        self.scorer = _Scorer("BalancedAllocation", resources, use_requested=True)

    def pre_score(self, state: CycleState, pod: dict, nodes: NodeSet) -> Status | None:
        pod_req = self.scorer.pod_requests(pod)
        if not any(pod_req):
            return Status(Code.SKIP)   # BestEffort pods are not balanced (kubernetes#129138)
        state.write(_BALANCED_STATE, pod_req)
        return None

    def score(self, state: CycleState, pod: dict, nodes: NodeSet) -> np.ndarray:
        pod_req = state.get(_BALANCED_STATE)
        if pod_req is None:
            pod_req = self.scorer.pod_requests(pod)
            if not any(pod_req):
                return np.zeros(len(nodes), np.int64)
        return self.scorer.score(nodes, pod_req)


class RequestedToCapacityRatio(Plugin):
    """Seed 001 §11's plugin: ``args: {shape: [{utilization, score}], resources: [{name, weight}]}``
    -- today NodeResourcesFit's ``RequestedToCapacityRatio`` scoring strategy."""

    name = "RequestedToCapacityRatio"

    def __init__(self, args: dict | None = None, handle=None):
        super().__init__(args, handle)
        path = "pluginConfig[RequestedToCapacityRatio].args"
        interp = self.args.get("interpolation") or SHAPE_SCORE
        if interp not in (SHAPE_SCORE, NODE_SCORE):
            raise ConfigError(f"{path}.interpolation: Unsupported value: {interp!r}")
        self.scorer = _Scorer(REQUESTED_TO_CAPACITY_RATIO,
                              parse_resources(self.args.get("resources"), f"{path}.resources"),
                              use_requested=False,
                              shape=parse_shape(self.args.get("shape"), f"{path}.shape"),
                              interpolation=interp)

    def score(self, state: CycleState, pod: dict, nodes: NodeSet) -> np.ndarray:
        return self.scorer.score(nodes, self.scorer.pod_requests(pod))
