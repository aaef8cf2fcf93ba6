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
* ``RequestedToCapacityRatio``: utilization ``req_r·100 // alloc_r`` (100 when over) mapped
  through the broken-linear ``shape``; resources scoring 0 drop out;
  ``math.Round(Σ w_r·s_r / Σ w_r)``. The shape's scores are written on a 0..10 scale and,
  as kube-scheduler does since 1.22, multiplied by 10 *before* interpolating: seed 001's
  worked example (shape 0->0, 100->10; weights foo 5, memory 1, cpu 3) scores its two
  nodes **60** and **69**.

  Seed 001 itself interpolates on the 0..10 scale and then averages, which gives **5** and
  **7** for that example; ``requestedToCapacityRatio.interpolation: ShapeScore`` (a kvert
  extension; the default is ``NodeScore``) selects that reading, scaled x10 to the node
  score range (50 and 70). The seed's standalone ``RequestedToCapacityRatio`` plugin (args
  ``shape``, ``resources``, ``interpolation``) is served too, as an alias of the strategy.

**Arguments** are validated as kube-scheduler's v1 defaulting and ``ValidateNodeResourcesFitArgs``
/ ``ValidateNodeResourcesBalancedAllocationArgs`` do: no ``scoringStrategy`` means
LeastAllocated over cpu and memory; an empty resource list means cpu and memory; a weight of
0 (or none) means 1; Fit weights must be in (0, 100], BalancedAllocation weights must be 1
and its resources distinct; ``type`` must be one of the three strategies;
``requestedToCapacityRatio`` is required with RequestedToCapacityRatio and forbidden
otherwise; shape points sorted by utilization, utilization in [0, 100], score in [0, 10];
``ignoredResources`` are label names, ``ignoredResourceGroups`` have no '/'. Unknown fields
are refused, as kube-scheduler's strict decoding does. Errors name the field relative to the
args (``scoringStrategy.resources[0].weight: ...``); the configuration prefixes the profile
and pluginConfig index.

**BalancedAllocation**: ``int((1 - std(fractions))·100)`` with fraction = min(req/alloc, 1)
over cpu and memory (plain requests, no defaults); for two resources ``std = |f1 - f2| / 2``.
A BestEffort pod is not scored by it (Skip).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np

from kvert.api.names import is_qualified_name
from kvert.api.resources import parse_resource_list
from kvert.scheduler.cache import (
    CPU,
    EPHEMERAL_STORAGE,
    MEMORY,
    NodeCache,
    is_extended_resource,
    is_scalar_resource,
    non_zero_requests,
    scheduler_requests,
)
from kvert.scheduler.deferred import GATE as RESIZE_PREEMPTION_GATE
from kvert.scheduler.framework import (
    ASSIGNED_POD,
    MAX_CUSTOM_PRIORITY_SCORE,
    MAX_NODE_SCORE,
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
from kvert.scheduler.plugins.helper import LRU
from kvert.scheduler.snapshot import NodeSet

LEAST_ALLOCATED = "LeastAllocated"
MOST_ALLOCATED = "MostAllocated"
REQUESTED_TO_CAPACITY_RATIO = "RequestedToCapacityRatio"
SHAPE_SCORE = "ShapeScore"     # seed 001 (kvert option): interpolate on the 0..10 shape, then x10
NODE_SCORE = "NodeScore"       # kube-scheduler >= 1.22 (default): scale the shape x10, then interpolate
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


# (Row sums are matrix-vector products: numpy's sum(axis=1) over a few columns costs several
# times more.)


def _weighted_mean(s: np.ndarray, counted: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Per node ``Σ w·s // Σ w`` over the counted resources (0 when none is counted)."""
    num = s @ weights
    den = counted.astype(np.int64) @ weights
    return np.where(den == 0, 0, num // np.maximum(den, 1))


def least_allocated(req: np.ndarray, alloc: np.ndarray, weights: np.ndarray) -> np.ndarray:
    valid = alloc != 0
    s = (alloc - req) * MAX_NODE_SCORE // np.where(valid, alloc, 1)
    s[(req > alloc) | ~valid] = 0
    return _weighted_mean(s, valid, weights)


def most_allocated(req: np.ndarray, alloc: np.ndarray, weights: np.ndarray) -> np.ndarray:
    valid = alloc != 0
    s = np.minimum(req, alloc) * MAX_NODE_SCORE // np.where(valid, alloc, 1)
    s[~valid] = 0
    return _weighted_mean(s, valid, weights)


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
                                interpolation: str = NODE_SCORE) -> np.ndarray:
    """Node scores in 0..100. ``shape``: (utilization 0..100, score 0..10) points."""
    factor = MAX_NODE_SCORE // MAX_CUSTOM_PRIORITY_SCORE
    if interpolation == NODE_SCORE:
        shape = [(u, s * factor) for u, s in shape]
    valid = alloc != 0
    safe = np.where(valid, alloc, 1)
    util = np.where(req > alloc, MAX_UTILIZATION, req * MAX_UTILIZATION // safe)
    rs = broken_linear(util, shape)
    counted = valid & (rs > 0)
    num = np.where(counted, rs, 0) @ weights
    den = counted.astype(np.int64) @ weights
    d = np.maximum(den, 1)
    score = np.where(den == 0, 0, (2 * num + d) // (2 * d))   # math.Round, non-negative
    return score * factor if interpolation != NODE_SCORE else score


def balanced_allocation(req: np.ndarray, alloc: np.ndarray) -> np.ndarray:
    n, k = alloc.shape
    valid = alloc != 0
    if k == 2:
        # cpu and memory, the usual case: std = |f1 - f2| / 2 when both count, else 0
        frac = np.minimum(req / np.where(valid, alloc, 1), 1.0)
        both = valid[:, 0] & valid[:, 1]
        std = np.where(both, np.abs((frac[:, 0] - frac[:, 1]) / 2), 0.0)
        return ((1 - std) * float(MAX_NODE_SCORE)).astype(np.int64)
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


def _fail(path: str, kind: str, detail: str = "") -> ConfigError:
    """A ``field.Error``-shaped message: ``path: kind[: detail]``."""
    return ConfigError(f"{path}: {kind}: {detail}" if detail else f"{path}: {kind}")


def _invalid(path: str, value: Any, detail: str) -> ConfigError:
    return _fail(path, f"Invalid value: {value!r}", detail)


def check_fields(obj: Any, known: dict, path: str = "") -> None:
    """Strict decoding: refuse fields the args type does not have. ``known`` maps a field to
    None (a leaf) or to the known fields of the mapping, or of each list item, under it."""
    if not isinstance(obj, dict):
        return
    for key, value in obj.items():
        if key in ("apiVersion", "kind") and not path:
            continue
        where = f"{path}.{key}" if path else str(key)
        if key not in known:
            raise ConfigError(f'strict decoding error: unknown field "{where}"')
        sub = known[key]
        if sub is None:
            continue
        for item in value if isinstance(value, list) else [value]:
            check_fields(item, sub, where)


def _int(value: Any, path: str) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        raise _invalid(path, value, "must be an integer")
    return value


def parse_resources(spec: Any, path: str, *, balanced: bool = False) -> list[tuple[str, int]]:
    """``[{name, weight}]``: none or empty means cpu and memory, a weight of 0 (or none)
    means 1 (v1 defaulting); then ``validateResources`` (Fit: weight in (0, 100]) or the
    BalancedAllocation rules (weight 1, names distinct)."""
    if not spec:
        spec = DEFAULT_RESOURCES
    if not isinstance(spec, list):
        raise _invalid(path, spec, "must be a list of {name, weight}")
    out: list[tuple[str, int]] = []
    seen: set[str] = set()
    for i, r in enumerate(spec):
        if not isinstance(r, dict) or not isinstance(r.get("name", ""), str):
            raise _invalid(f"{path}[{i}]", r, "must be a {name, weight} mapping")
        name = r.get("name") or ""
        w = _int(r.get("weight") or 0, f"{path}[{i}].weight") or 1
        if balanced:
            if name in seen:
                raise _fail(f"{path}[{i}].name", f"Duplicate value: {name!r}")
            if w != 1:
                raise _invalid(f"{path}[{i}].weight", w, "must be 1")
        elif not 0 < w <= 100:
            raise _invalid(f"{path}[{i}].weight", w,
                           f"resource weight of {name} not in valid range (0, 100]")
        seen.add(name)
        out.append((name, w))
    return out


def parse_shape(spec: Any, path: str) -> list[tuple[int, int]]:
    """``validateFunctionShape``: at least one point, utilization increasing and in [0, 100],
    score in [0, 10] (the shape's own scale)."""
    if not spec:
        raise _fail(path, "Required value", "at least one point must be specified")
    if not isinstance(spec, list):
        raise _invalid(path, spec, "must be a list of {utilization, score}")
    points: list[tuple[int, int]] = []
    for i, pt in enumerate(spec):
        if not isinstance(pt, dict):
            raise _invalid(f"{path}[{i}]", pt, "must be a {utilization, score} mapping")
        points.append((_int(pt.get("utilization") or 0, f"{path}[{i}].utilization"),
                       _int(pt.get("score") or 0, f"{path}[{i}].score")))
    for i in range(1, len(points)):
        if points[i - 1][0] >= points[i][0]:
            raise _invalid(f"{path}[{i}].utilization", points[i][0],
                           "values must be sorted in increasing order")
    for i, (u, sc) in enumerate(points):
        if not 0 <= u <= MAX_UTILIZATION:
            raise _invalid(f"{path}[{i}].utilization", u,
                           f"not in valid range [0, {MAX_UTILIZATION}]")
        if not 0 <= sc <= MAX_CUSTOM_PRIORITY_SCORE:
            raise _invalid(f"{path}[{i}].score", sc,
                           f"not in valid range [0, {MAX_CUSTOM_PRIORITY_SCORE}]")
    return points


def parse_interpolation(value: Any, path: str) -> str:
    interp = value or NODE_SCORE
    if interp not in (NODE_SCORE, SHAPE_SCORE):
        raise _fail(path, f"Unsupported value: {interp!r}",
                    f'supported values: "{NODE_SCORE}", "{SHAPE_SCORE}"')
    return interp


def _label_names(values: Any, path: str, groups: bool = False) -> list[str]:
    if values is None:
        return []
    if not isinstance(values, list):
        raise _invalid(path, values, "must be a list of names")
    for i, v in enumerate(values):
        if not isinstance(v, str):
            raise _invalid(f"{path}[{i}]", v, "must be a string")
        if groups and "/" in v:
            raise _invalid(f"{path}[{i}]", v, "resource group name can't contain '/'")
        errs = is_qualified_name(v)
        if errs:
            raise _invalid(f"{path}[{i}]", v, errs[0])
    return list(values)


class _Scorer:
    """A scoring strategy with its resources (``resourceAllocationScorer``)."""

    def __init__(self, strategy: str, resources: list[tuple[str, int]], use_requested: bool,
                 shape: list[tuple[int, int]] | None = None, interpolation: str = NODE_SCORE):
        self.strategy = strategy
        self.resources = resources
        self.names = [r for r, _ in resources]
        self.weights = np.array([w for _, w in resources], np.int64)
        self.use_requested = use_requested
        self.shape = shape
        self.interpolation = interpolation
        # the default resources: cpu and memory are the cache's first two columns, and the
        # first two of its non-zero requests, so one slice gathers them for every node
        self._cpu_memory = self.names == [CPU, MEMORY]

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
        if self._cpu_memory:
            base = cache.req if self.use_requested else cache.nonzero
            return (np.take(base, rows, axis=0)[:, :2] + np.asarray(pod_req, np.int64),
                    np.take(cache.alloc, rows, axis=0)[:, :2])
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


_SHAPE_FIELDS = {"utilization": None, "score": None}
_RESOURCE_FIELDS = {"name": None, "weight": None}
FIT_ARGS_FIELDS = {
    "ignoredResources": None, "ignoredResourceGroups": None,
    "scoringStrategy": {"type": None, "resources": _RESOURCE_FIELDS,
                        "requestedToCapacityRatio": {"shape": _SHAPE_FIELDS,
                                                     "interpolation": None}}}
BALANCED_ARGS_FIELDS = {"resources": _RESOURCE_FIELDS}


def _scoring_strategy(args: dict) -> _Scorer:
    """``scoringStrategy`` after v1 defaulting and ``ValidateNodeResourcesFitArgs``."""
    st = args.get("scoringStrategy")
    path = "scoringStrategy"
    if st is None:
        return _Scorer(LEAST_ALLOCATED, parse_resources(None, f"{path}.resources"),
                       use_requested=False)
    if not isinstance(st, dict):
        raise _invalid(path, st, "must be a mapping")
    kind = st.get("type") or ""
    if kind not in (LEAST_ALLOCATED, MOST_ALLOCATED, REQUESTED_TO_CAPACITY_RATIO):
        raise _fail(f"{path}.type", f"Unsupported value: {kind!r}",
                    f'supported values: "{LEAST_ALLOCATED}", "{MOST_ALLOCATED}", '
                    f'"{REQUESTED_TO_CAPACITY_RATIO}"')
    resources = parse_resources(st.get("resources"), f"{path}.resources")
    rtcr = st.get("requestedToCapacityRatio")
    rpath = f"{path}.requestedToCapacityRatio"
    shape, interp = None, NODE_SCORE
    if kind == REQUESTED_TO_CAPACITY_RATIO:
        if rtcr is None:
            raise _fail(rpath, "Required value",
                        "must be specified when type is RequestedToCapacityRatio")
        if not isinstance(rtcr, dict):
            raise _invalid(rpath, rtcr, "must be a mapping")
        shape = parse_shape(rtcr.get("shape"), f"{rpath}.shape")
        interp = parse_interpolation(rtcr.get("interpolation"), f"{rpath}.interpolation")
    elif rtcr is not None:
        raise _fail(rpath, "Forbidden", "must be nil when type is not RequestedToCapacityRatio")
    return _Scorer(kind, resources, use_requested=False, shape=shape, interpolation=interp)


# ---------------------------------------------------------------------------------------------
# plugins
# ---------------------------------------------------------------------------------------------


class _FitState:
    __slots__ = ("order", "requests")

    def __init__(self, requests: dict[str, int]):
        self.requests = requests
        scalars = sorted(r for r in requests if r not in (CPU, MEMORY, EPHEMERAL_STORAGE))
        self.order = [r for r in (CPU, MEMORY, EPHEMERAL_STORAGE) if requests.get(r, 0) > 0] + \
            [r for r in scalars if requests[r] > 0]


def _assigned_node(pod: dict) -> str:
    return (pod.get("spec") or {}).get("nodeName") or ""


class NodeResourcesFit(Plugin):
    name = "NodeResourcesFit"
    # a Deferred resize's cycle (KEP-5836) checks the pod's node with the delta below
    handles_deferred_resize = True

    def __init__(self, args: dict[str, Any] | None = None, handle: Handle | None = None):
        super().__init__(args, handle)
        check_fields(self.args, FIT_ARGS_FIELDS)
        self.ignored = set(_label_names(self.args.get("ignoredResources"), "ignoredResources"))
        self.ignored_groups = set(_label_names(self.args.get("ignoredResourceGroups"),
                                               "ignoredResourceGroups", groups=True))
        self.scorer = _scoring_strategy(self.args)
        self._empty_nodes = LRU(64)

    def _ignored(self, name: str) -> bool:
        if not is_extended_resource(name):
            return False
        return name in self.ignored or name.split("/")[0] in self.ignored_groups

    def pre_filter(self, state: CycleState, pod: dict, nodes: NodeSet):
        state.write(_FIT_STATE, _FitState(scheduler_requests(pod)))
        return None, None

    def _resize_preemption(self) -> bool:
        return self.handle is not None and self.handle.feature_enabled(RESIZE_PREEMPTION_GATE)

    def _held_on_node(self, pod: dict, cache) -> tuple[int, dict[str, int]] | None:
        """(row, requests the cache already counts for the pod) when the pod is bound to a
        node that holds it (``adjustDeltasToAccomodateCacheDiscrepancy``, KEP-5836)."""
        node = _assigned_node(pod)
        if not node or not self._resize_preemption():
            return None
        entry = cache.entry((pod.get("metadata") or {}).get("uid", ""))
        if entry is None or entry.node != node:
            return None
        row = cache.row_of.get(node)
        return None if row is None else (row, entry.req)

    def filter(self, state: CycleState, pod: dict, nodes: NodeSet) -> FilterResult:
        s: _FitState = state.get(_FIT_STATE) or _FitState(scheduler_requests(pod))
        cache, rows = nodes.cache, nodes.rows
        n = len(rows)
        # A bound pod (a Deferred resize) already counts on its node: only what the resize adds
        # must fit there, never less than nothing (a pending downsize frees nothing yet).
        held = self._held_on_node(pod, cache)
        own = (rows == held[0]) if held is not None else None
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
                need: Any = want
                if own is not None and held is not None:
                    need = np.where(own, max(0, want - held[1].get(res, 0)), want)
                short = need > alloc - cache.req[rows, c]
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
        def elsewhere(pod: dict, other: dict | None) -> bool:
            """A bound pod waiting for its Deferred resize cares only about its own node."""
            mine = _assigned_node(pod)
            return bool(mine) and _assigned_node(other or {}) != mine

        def pod_hint(pod: dict, old: dict | None, new: dict | None) -> bool:
            if new is None:   # an assigned pod was deleted
                if old is None or not (old.get("spec") or {}).get("nodeName") or elsewhere(pod, old):
                    return QUEUE_SKIP
                return QUEUE
            if (new.get("metadata") or {}).get("uid") == (pod.get("metadata") or {}).get("uid"):
                return QUEUE
            if not (new.get("spec") or {}).get("nodeName") or old is None or elsewhere(pod, new):
                return QUEUE_SKIP
            before, after = scheduler_requests(old), scheduler_requests(new)
            for res, v in scheduler_requests(pod).items():
                if v and before.get(res, 0) > after.get(res, 0):
                    return QUEUE
                # another pod of the node grew: a parked Deferred resize may no longer fit
                if v and _assigned_node(pod) and after.get(res, 0) > before.get(res, 0):
                    return QUEUE
            return QUEUE_SKIP

        def node_hint(pod: dict, old: dict | None, new: dict | None) -> bool:
            if new is None or elsewhere(pod, {"spec": {"nodeName": (new.get("metadata") or {}).get("name")}}):
                return QUEUE_SKIP
            if not self._fits_empty(pod, new):
                return QUEUE_SKIP
            if old is None:
                return QUEUE
            a = parse_resource_list((old.get("status") or {}).get("allocatable"))
            b = parse_resource_list((new.get("status") or {}).get("allocatable"))
            if b.get("pods", 0) > a.get("pods", 0):
                return QUEUE
            return QUEUE if any(v and b.get(r, 0) > a.get(r, 0)
                                for r, v in scheduler_requests(pod).items()) else QUEUE_SKIP

        return [
            ClusterEventWithHint(ClusterEvent(ASSIGNED_POD, ActionType.DELETE
                                              | ActionType.UPDATE_POD_SCALE_DOWN
                                              | ActionType.UPDATE_POD_SCALE_UP), pod_hint),
            ClusterEventWithHint(ClusterEvent(NODE, ActionType.ADD
                                              | ActionType.UPDATE_NODE_ALLOCATABLE), node_hint),
        ]


class NodeResourcesBalancedAllocation(Plugin):
    name = "NodeResourcesBalancedAllocation"

    def __init__(self, args: dict[str, Any] | None = None, handle: Handle | None = None):
        super().__init__(args, handle)
        check_fields(self.args, BALANCED_ARGS_FIELDS)
        resources = parse_resources(self.args.get("resources"), "resources", balanced=True)
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
    """Seed 001 §11's plugin: ``args: {shape: [{utilization, score}], resources: [{name, weight}],
    interpolation}`` -- NodeResourcesFit's ``RequestedToCapacityRatio`` scoring strategy on its
    own (kube-scheduler 1.18-1.22 had it as a plugin, interpolating as ``NodeScore`` does)."""

    name = "RequestedToCapacityRatio"
    ARGS_FIELDS: ClassVar[dict] = {"shape": _SHAPE_FIELDS, "resources": _RESOURCE_FIELDS, "interpolation": None}

    def __init__(self, args: dict[str, Any] | None = None, handle: Handle | None = None):
        super().__init__(args, handle)
        check_fields(self.args, self.ARGS_FIELDS)
        self.scorer = _Scorer(REQUESTED_TO_CAPACITY_RATIO,
                              parse_resources(self.args.get("resources"), "resources"),
                              use_requested=False,
                              shape=parse_shape(self.args.get("shape"), "shape"),
                              interpolation=parse_interpolation(self.args.get("interpolation"),
                                                                "interpolation"))

    def score(self, state: CycleState, pod: dict, nodes: NodeSet) -> np.ndarray:
        return self.scorer.score(nodes, self.scorer.pod_requests(pod))
