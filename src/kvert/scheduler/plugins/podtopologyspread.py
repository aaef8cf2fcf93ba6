"""PodTopologySpread: ``spec.topologySpreadConstraints`` (Filter for DoNotSchedule, Score for
ScheduleAnyway), as kube-scheduler 1.35's plugin (``plugin.go``, ``common.go``,
``filtering.go``, ``scoring.go``).

**Constraints.** A constraint's pods are those in the incoming pod's namespace, not being
deleted, whose labels match ``labelSelector`` ANDed with the pod's own values for
``matchLabelKeys`` (kube-apiserver 1.34+ already merges those into the selector; the scheduler
merges again, harmlessly, as 1.35 does for pods created before). A null selector matches no
pod; an empty one matches every pod when the incoming pod is checked against itself but
counts no existing pod (upstream's ``countPodsMatchSelector`` returns 0 for an empty
selector). ``minDomains`` defaults to 1, ``nodeAffinityPolicy`` to Honor (only nodes matching
the pod's nodeSelector / required node affinity are domains and have their pods counted),
``nodeTaintsPolicy`` to Ignore (Honor: nodes with a NoSchedule/NoExecute taint the pod does
not tolerate are left out). A pod without constraints gets the plugin's default constraints
(args ``defaultingType``: ``System`` -- hostname maxSkew 3 and zone maxSkew 5, both
ScheduleAnyway -- or ``List``: ``defaultConstraints``) with the selector of the Services,
ReplicationControllers, ReplicaSets and StatefulSets that select it (``helper.DefaultSelector``);
none of those: no constraints.

**PreFilter** counts, per DoNotSchedule constraint, the matching pods per topology value over
the nodes that carry every constraint's topology key and pass the constraint's inclusion
policies; those values are the constraint's domains. Counting does not walk pods: the cache
keeps per-node counts per selector (``count_matching``), summed per value with ``np.bincount``
over the interned label value ids. **Filter**, for all nodes at once and constraint by
constraint (the first failing one decides): a node without the topology key is
UnschedulableAndUnresolvable ("... (missing required label)"); otherwise ``matching pods in
the node's domain + (1 if the pod matches itself) - global minimum > maxSkew`` is Unschedulable.
The global minimum is the smallest count among the domains, or 0 while there are fewer domains
than ``minDomains``. The PreFilterExtensions add / remove a pod's count on its node's domains
(nominated pods, preemption victims); the state clones its count arrays.

**Score** (ScheduleAnyway constraints): per node, ``Σ count·log(domains + 2) + (maxSkew - 1)``
over the constraints whose key the node has, in float64, rounded as ``math.Round``; ``count``
is the matching pods of the node's domain over all nodes passing the inclusion policies and
``domains`` the number of topology values among the scored nodes -- except for
``kubernetes.io/hostname``, where the count is the node's own pods and ``domains`` the number
of scored nodes. Scored nodes lacking a topology key are ignored (score 0), unless the
constraints are the System defaults (then a missing zone is just another zone, ""). NormalizeScore:
``100·(max + min - score) // max`` (100 for all when max is 0), ignored nodes 0.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from kvert.api.nodeaffinity import RequiredNodeAffinity
from kvert.api.selectors import LabelSelector, SelectorError, validate_label_key
from kvert.api.taints import find_untolerated_taint
from kvert.scheduler.framework import (
    MAX_NODE_SCORE,
    NODE,
    POD,
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
from kvert.scheduler.listers import Listers
from kvert.scheduler.plugins.helper import per_signature
from kvert.scheduler.plugins.nodeaffinity import evaluate_by_projection
from kvert.scheduler.podindex import PodQuery
from kvert.scheduler.reader import NodeCacheReader
from kvert.scheduler.snapshot import NodeSet

NAME = "PodTopologySpread"
REASON_CONSTRAINTS_NOT_MATCH = "node(s) didn't match pod topology spread constraints"
REASON_NODE_LABEL_NOT_MATCH = REASON_CONSTRAINTS_NOT_MATCH + " (missing required label)"
HOSTNAME = "kubernetes.io/hostname"
ZONE = "topology.kubernetes.io/zone"
DO_NOT_SCHEDULE, SCHEDULE_ANYWAY = "DoNotSchedule", "ScheduleAnyway"
HONOR, IGNORE = "Honor", "Ignore"
SYSTEM_DEFAULTING, LIST_DEFAULTING = "System", "List"
SYSTEM_DEFAULT_CONSTRAINTS: tuple[dict, ...] = (
    {"topologyKey": HOSTNAME, "whenUnsatisfiable": SCHEDULE_ANYWAY, "maxSkew": 3},
    {"topologyKey": ZONE, "whenUnsatisfiable": SCHEDULE_ANYWAY, "maxSkew": 5},
)
MAX_INT32 = 2**31 - 1
_FILTER_STATE = "PreFilter" + NAME
_SCORE_STATE = "PreScore" + NAME
# controllers whose selector defaults the spreading selector (helper.DefaultSelector)
_RC, _RS, _SS = ("v1", "ReplicationController"), ("apps/v1", "ReplicaSet"), ("apps/v1", "StatefulSet")


# ---------------------------------------------------------------------------------------------
# Args
# ---------------------------------------------------------------------------------------------


def _go_value(v: Any) -> str:
    """How ``field.Invalid`` prints a value: strings quoted, numbers bare."""
    return f'"{v}"' if isinstance(v, str) else str(v)


def validate_args(args: Mapping[str, Any]) -> None:
    """``ValidatePodTopologySpreadArgs`` (after v1 defaulting: defaultingType System); raises
    ``ValueError`` with every problem, as the Go aggregate prints them (``[a, b]`` for several)."""
    errs: list[str] = []
    defaulting = args.get("defaultingType") or SYSTEM_DEFAULTING
    constraints = args.get("defaultConstraints") or []
    if not isinstance(constraints, list):
        raise TypeError("defaultConstraints: Invalid value: must be a list")
    if defaulting not in (SYSTEM_DEFAULTING, LIST_DEFAULTING):
        errs.append(f"defaultingType: Unsupported value: {_go_value(defaulting)}: supported "
                    f'values: "{SYSTEM_DEFAULTING}", "{LIST_DEFAULTING}"')
    elif defaulting == SYSTEM_DEFAULTING and constraints:
        errs.append(f"defaultingType: Invalid value: {_go_value(defaulting)}: "
                    "when .defaultConstraints are not empty")
    seen: set[tuple[str, str]] = set()
    for i, c in enumerate(constraints):
        p = f"defaultConstraints[{i}]"
        if not isinstance(c, Mapping):
            errs.append(f"{p}: Invalid value: must be a mapping")
            continue
        skew = c.get("maxSkew") or 0
        if not isinstance(skew, int) or isinstance(skew, bool) or skew <= 0:
            errs.append(f"{p}.maxSkew: Invalid value: {_go_value(skew)}: not in valid range (0, inf)")
        key = c.get("topologyKey") or ""
        if not key:
            errs.append(f"{p}.topologyKey: Required value: can not be empty")
        else:
            errs.extend(f"{p}.topologyKey: Invalid value: {_go_value(key)}: {m}"
                        for m in validate_label_key(key))
        when = c.get("whenUnsatisfiable") or ""
        if not when:
            errs.append(f"{p}.whenUnsatisfiable: Required value: can not be empty")
        elif when not in (DO_NOT_SCHEDULE, SCHEDULE_ANYWAY):
            errs.append(f"{p}.whenUnsatisfiable: Unsupported value: {_go_value(when)}: supported "
                        f'values: "{DO_NOT_SCHEDULE}", "{SCHEDULE_ANYWAY}"')
        if c.get("labelSelector") is not None:
            errs.append(f"{p}.labelSelector: Forbidden: constraint must not define a selector, "
                        "as they deduced for each pod")
        if (key, when) in seen:
            errs.append(f'{p}: Duplicate value: "{{{key}, {when}}}"')
        seen.add((key, when))
    if len(errs) == 1:
        raise ValueError(errs[0])
    if errs:
        raise ValueError("[" + ", ".join(errs) + "]")


# ---------------------------------------------------------------------------------------------
# Constraints
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Constraint:
    """``topologySpreadConstraint``: a constraint with its selector parsed and defaults applied."""

    max_skew: int
    topology_key: str
    selector: LabelSelector
    min_domains: int = 1
    node_affinity_policy: str = HONOR
    node_taints_policy: str = IGNORE


def _meta(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    return obj.get("metadata") or {}


def _labels(obj: Mapping[str, Any]) -> Mapping[str, str]:
    return _meta(obj).get("labels") or {}


def _namespace(pod: Mapping[str, Any]) -> str:
    return _meta(pod).get("namespace") or "default"


def _tolerations(pod: Mapping[str, Any]) -> list:
    return (pod.get("spec") or {}).get("tolerations") or []


def parse_constraints(raw: Sequence[Mapping[str, Any]], pod_labels: Mapping[str, str],
                      action: str) -> list[Constraint]:
    """``filterTopologySpreadConstraints``: the constraints with ``whenUnsatisfiable ==
    action``; raises ``SelectorError`` for an invalid selector."""
    out = []
    for c in raw:
        if c.get("whenUnsatisfiable") != action:
            continue
        selector = LabelSelector.from_dict(c.get("labelSelector"))
        match = {k: pod_labels[k] for k in c.get("matchLabelKeys") or () if k in pod_labels}
        if match and not selector.is_nothing:
            selector = LabelSelector.from_set(match).add(*selector.requirements)
        min_domains = c.get("minDomains")
        out.append(Constraint(
            int(c.get("maxSkew") or 0), c.get("topologyKey") or "", selector,
            1 if min_domains is None else int(min_domains),
            c.get("nodeAffinityPolicy") or HONOR, c.get("nodeTaintsPolicy") or IGNORE))
    return out


def _controller_of(pod: Mapping[str, Any]) -> Mapping[str, Any] | None:
    for ref in _meta(pod).get("ownerReferences") or ():
        if isinstance(ref, Mapping) and ref.get("controller") is True:
            return ref
    return None


def default_selector(pod: Mapping[str, Any], listers: Listers | None) -> LabelSelector:
    """``helper.DefaultSelector``: the union of the selectors of the Services selecting the
    pod, and of its controlling ReplicationController, ReplicaSet or StatefulSet."""
    ns = _namespace(pod)
    labels = _labels(pod)
    label_set: dict[str, str] = {}
    listed = (lambda r: listers.list(r, ns)) if listers is not None else (lambda r: [])
    for svc in listed("services"):
        sel = (svc.get("spec") or {}).get("selector")
        # a Service without a selector selects nothing, not everything
        if isinstance(sel, Mapping) and LabelSelector.from_set(sel).matches(labels):
            label_set.update(sel)
    selector = LabelSelector.from_set(label_set)
    owner = _controller_of(pod)
    if owner is None:
        return selector
    gvk = (owner.get("apiVersion") or "", owner.get("kind") or "")
    resource = {_RC: "replicationcontrollers", _RS: "replicasets", _SS: "statefulsets"}.get(gvk)
    if resource is None:
        return selector
    get = getattr(listers, "get", None)
    obj = get(resource, owner.get("name") or "", ns) if callable(get) else \
        next((o for o in listed(resource) if _meta(o).get("name") == owner.get("name")), None)
    if obj is None:
        return selector
    spec_sel = (obj.get("spec") or {}).get("selector")
    if gvk == _RC:
        label_set.update(spec_sel or {})
        return LabelSelector.from_set(label_set)
    try:
        other = LabelSelector.from_dict(spec_sel)
    except SelectorError:
        return selector
    return selector if other.is_nothing else selector.add(*other.requirements)


# ---------------------------------------------------------------------------------------------
# Per-node helpers over a NodeSet
# ---------------------------------------------------------------------------------------------


def _pod_counts(cache: NodeCacheReader, ns: str, selector: LabelSelector) -> np.ndarray | None:
    """Per row, the pods of ``ns`` matching ``selector`` and not terminating; None for none
    (an empty selector counts no pod, as upstream's ``countPodsMatchSelector``)."""
    if selector.empty or selector.is_nothing:
        return None
    return cache.count_matching(PodQuery(frozenset((ns,)), None, selector, True))


def _has_keys(cache: NodeCacheReader, rows: np.ndarray, constraints: Sequence[Constraint]) -> np.ndarray:
    """``nodeLabelsMatchSpreadConstraints`` for every node."""
    ok = np.ones(len(rows), bool)
    for c in constraints:
        ok &= cache.label_ids(c.topology_key)[rows] >= 0
    return ok


def _affinity_keys(pod: Mapping[str, Any]) -> tuple[tuple[str, ...], bool]:
    """The node label keys the pod's nodeSelector and required node affinity read, and whether
    a term reads node fields (then the verdict is per node)."""
    spec = pod.get("spec") or {}
    keys = set(spec.get("nodeSelector") or {})
    fields = False
    req = (((spec.get("affinity") or {}).get("nodeAffinity") or {})
           .get("requiredDuringSchedulingIgnoredDuringExecution")) or {}
    for term in (req.get("nodeSelectorTerms") or []) if isinstance(req, Mapping) else []:
        for r in (term or {}).get("matchExpressions") or []:
            if isinstance(r, Mapping) and isinstance(r.get("key"), str):
                keys.add(r["key"])
        fields = fields or bool((term or {}).get("matchFields"))
    return tuple(sorted(keys)), fields


class _Inclusion:
    """The pod's node inclusion policies over a NodeSet: which nodes match its required node
    affinity, which carry no NoSchedule/NoExecute taint it does not tolerate. Each is
    evaluated once per distinct label projection / taint list, and only if asked for."""

    def __init__(self, pod: Mapping[str, Any], nodes: NodeSet):
        self.pod, self.nodes = pod, nodes
        self._affinity: np.ndarray | None = None
        self._taints: np.ndarray | None = None

    def mask(self, c: Constraint) -> np.ndarray | None:
        """Nodes passing ``c``'s policies (None: all)."""
        out = None
        if c.node_affinity_policy == HONOR:
            out = self.affinity()
        if c.node_taints_policy == HONOR:
            out = self.taints() if out is None else out & self.taints()
        return out

    def affinity(self) -> np.ndarray:
        if self._affinity is None:
            keys, fields = _affinity_keys(self.pod)
            if not keys and not fields:
                # no nodeSelector, no required node affinity: every node matches
                self._affinity = np.ones(len(self.nodes), bool)
            else:
                required = RequiredNodeAffinity(self.pod)
                self._affinity = evaluate_by_projection(self.nodes, keys, fields,
                                                        required.matches, {}, bool)
        return self._affinity

    def taints(self) -> np.ndarray:
        if self._taints is None:
            cache, tols = self.nodes.cache, _tolerations(self.pod)
            self._taints = per_signature(
                cache.taint_sig[self.nodes.rows],
                lambda sig: find_untolerated_taint(cache.taint_sigs[sig], tols) is None,
                dtype=bool, fast_zero=True)
        return self._taints


def _node_included(c: Constraint, pod: Mapping[str, Any], node: Mapping[str, Any],
                   required: RequiredNodeAffinity) -> bool:
    """``matchNodeInclusionPolicies`` for one node (the PreFilterExtensions)."""
    if c.node_affinity_policy == HONOR and not required.matches(node):
        return False
    return c.node_taints_policy != HONOR or find_untolerated_taint(
        (node.get("spec") or {}).get("taints"), _tolerations(pod)) is None


def go_round(x: np.ndarray) -> np.ndarray:
    """``math.Round``: half away from zero, exactly (no ``x + 0.5`` rounding error)."""
    t = np.trunc(x)
    return t + np.where(np.abs(x - t) >= 0.5, np.sign(x), 0.0)


# ---------------------------------------------------------------------------------------------
# Cycle states
# ---------------------------------------------------------------------------------------------


class _FilterState:
    """``preFilterState``: per DoNotSchedule constraint, the matching pods per domain (an
    array indexed by the topology key's label value id) and which values are domains."""

    __slots__ = ("cache", "constraints", "counts", "domains", "required", "self_match")

    def __init__(self, constraints: list[Constraint], counts: list[np.ndarray],
                 domains: list[np.ndarray], self_match: list[bool], cache: NodeCacheReader,
                 required: RequiredNodeAffinity):
        self.constraints, self.counts, self.domains = constraints, counts, domains
        self.self_match, self.cache, self.required = self_match, cache, required

    def clone(self) -> _FilterState:
        return _FilterState(self.constraints, [a.copy() for a in self.counts],
                            [a.copy() for a in self.domains], self.self_match, self.cache,
                            self.required)

    def min_match(self, i: int) -> int:
        """The global minimum of constraint ``i`` (``minMatchNum``): 0 while the domains are
        fewer than minDomains."""
        present = self.domains[i]
        n = int(np.count_nonzero(present))
        if n < self.constraints[i].min_domains:
            return 0
        return int(self.counts[i][present].min()) if n else MAX_INT32

    def match_num(self, i: int, vids: np.ndarray) -> np.ndarray:
        counts = self.counts[i]
        inside = (vids >= 0) & (vids < len(counts))
        return np.where(inside, counts[np.where(inside, vids, 0)], 0) if len(counts) else \
            np.zeros(len(vids), np.int64)

    def update(self, i: int, vid: int, delta: int) -> None:
        if vid >= len(self.counts[i]):
            grow = vid + 1 - len(self.counts[i])
            self.counts[i] = np.concatenate([self.counts[i], np.zeros(grow, np.int64)])
            self.domains[i] = np.concatenate([self.domains[i], np.zeros(grow, bool)])
        self.counts[i][vid] += delta
        self.domains[i][vid] = True

    def value_counts(self, i: int) -> dict[str, int]:
        """Domain -> matching pods (``TpValueToMatchNum[i]``), for tests and explanations."""
        key = self.constraints[i].topology_key
        return {self.cache.label_value(key, int(v)) or "": int(self.counts[i][v])
                for v in np.flatnonzero(self.domains[i])}


@dataclass
class _ScoreState:
    """``preScoreState``: the ScheduleAnyway constraints, their per-domain counts (indexed by
    label value id + 1, 0 standing for "no label"), their weights, the ignored rows."""

    constraints: list[Constraint]
    domain_counts: list[np.ndarray | None]   # None for hostname constraints
    weights: list[float]
    ignored_rows: np.ndarray
    ns: str


def _bucket_ids(cache: NodeCacheReader, key: str, rows: np.ndarray) -> np.ndarray:
    """Label value id + 1 per node, a missing label sharing the "" value's bucket (Go reads a
    missing label as "")."""
    b = cache.label_ids(key)[rows].astype(np.int64) + 1
    missing = b == 0
    if missing.any():
        for vid in np.unique(b[~missing]) - 1:
            if cache.label_value(key, int(vid)) == "":
                b[missing] = vid + 1
                break
    return b


# ---------------------------------------------------------------------------------------------
# The plugin
# ---------------------------------------------------------------------------------------------


class PodTopologySpread(Plugin):
    name = NAME

    def __init__(self, args: dict[str, Any] | None = None, handle: Handle | None = None):
        super().__init__(args, handle)
        validate_args(self.args)
        self.system_defaulted = (self.args.get("defaultingType") or SYSTEM_DEFAULTING) \
            == SYSTEM_DEFAULTING
        self.default_constraints: list[dict] = (
            [dict(c) for c in SYSTEM_DEFAULT_CONSTRAINTS] if self.system_defaulted
            else [dict(c) for c in self.args.get("defaultConstraints") or []])

    # ---- constraints ------------------------------------------------------------------

    def constraints(self, pod: Mapping[str, Any], action: str) -> list[Constraint]:
        """The pod's constraints for ``action``, or the default ones (``getConstraints`` /
        ``buildDefaultConstraints``); raises ``SelectorError``."""
        own = (pod.get("spec") or {}).get("topologySpreadConstraints") or []
        labels = _labels(pod)
        if own:
            return parse_constraints(own, labels, action)
        found = parse_constraints(self.default_constraints, labels, action)
        if not found:
            return []
        selector = default_selector(pod, self.handle.listers if self.handle is not None else None)
        if selector.empty:
            return []
        return [Constraint(c.max_skew, c.topology_key, selector, c.min_domains,
                           c.node_affinity_policy, c.node_taints_policy) for c in found]

    # ---- filter -----------------------------------------------------------------------

    def pre_filter(self, state: CycleState, pod: dict, nodes: NodeSet):
        try:
            constraints = self.constraints(pod, DO_NOT_SCHEDULE)
        except SelectorError as e:
            return None, Status(Code.ERROR, "get constraints from pod: obtaining pod's hard "
                                            f"topology spread constraints: {e}")
        if not constraints:
            return None, Status(Code.SKIP)
        cache, rows = nodes.cache, nodes.rows
        ns = _namespace(pod)
        eligible = _has_keys(cache, rows, constraints)
        inclusion = _Inclusion(pod, nodes)
        counts, domains = [], []
        for c in constraints:
            keep = eligible
            policy = inclusion.mask(c)
            if policy is not None:
                keep = keep & policy
            vids = cache.label_ids(c.topology_key)[rows[keep]].astype(np.int64)
            size = int(vids.max()) + 1 if len(vids) else 0
            per_row = _pod_counts(cache, ns, c.selector)
            weights = np.zeros(len(vids)) if per_row is None else per_row[rows[keep]]
            counts.append(np.bincount(vids, weights, minlength=size).astype(np.int64))
            domains.append(np.bincount(vids, minlength=size) > 0)
        labels = _labels(pod)
        state.write(_FILTER_STATE, _FilterState(
            constraints, counts, domains, [c.selector.matches(labels) for c in constraints],
            cache, RequiredNodeAffinity(pod)))
        return None, None

    def filter(self, state: CycleState, pod: dict, nodes: NodeSet) -> FilterResult:
        s: _FilterState = state.read(_FILTER_STATE)
        n = len(nodes)
        missing, skewed = np.zeros(n, bool), np.zeros(n, bool)
        decided = np.zeros(n, bool)
        for i, c in enumerate(s.constraints):
            vids = nodes.cache.label_ids(c.topology_key)[nodes.rows]
            miss = (vids < 0) & ~decided
            missing |= miss
            decided |= miss
            skew = s.match_num(i, vids) + int(s.self_match[i]) - s.min_match(i)
            bad = (skew > c.max_skew) & ~decided
            skewed |= bad
            decided |= bad
        codes = np.where(missing, np.int8(Code.UNSCHEDULABLE_AND_UNRESOLVABLE),
                         np.where(skewed, np.int8(Code.UNSCHEDULABLE), np.int8(0)))
        return FilterResult(codes.astype(np.int8), [(REASON_NODE_LABEL_NOT_MATCH, missing),
                                                    (REASON_CONSTRAINTS_NOT_MATCH, skewed)])

    def pre_filter_add_pod(self, state: CycleState, pod: dict, other: dict, node: dict):
        return self._update_with_pod(state, pod, other, node, +1)

    def pre_filter_remove_pod(self, state: CycleState, pod: dict, other: dict, node: dict):
        return self._update_with_pod(state, pod, other, node, -1)

    def _update_with_pod(self, state: CycleState, pod: dict, other: dict, node: dict | None,
                         delta: int) -> Status | None:
        """``updateWithPod``: ``other`` now counts (+1) or no longer counts (-1) on ``node``."""
        s: _FilterState | None = state.get(_FILTER_STATE)
        if s is None or not node or _namespace(other) != _namespace(pod):
            return None
        node_labels = _labels(node)
        if any(c.topology_key not in node_labels for c in s.constraints):
            return None
        row = s.cache.row_of.get(_meta(node).get("name") or "")
        if row is None:
            return None
        other_labels = _labels(other)
        for i, c in enumerate(s.constraints):
            if not c.selector.matches(other_labels) or \
                    not _node_included(c, pod, node, s.required):
                continue
            s.update(i, int(s.cache.label_ids(c.topology_key)[row]), delta)
        return None

    # ---- score ------------------------------------------------------------------------

    def pre_score(self, state: CycleState, pod: dict, nodes: NodeSet) -> Status | None:
        cache = nodes.cache
        try:
            constraints = self.constraints(pod, SCHEDULE_ANYWAY)
        except SelectorError as e:
            return Status(Code.ERROR, "calculating preScoreState: obtaining pod's soft topology "
                                      f"spread constraints: {e}")
        if not constraints:
            return Status(Code.SKIP)
        all_rows = np.flatnonzero(np.asarray(cache.valid))
        if len(all_rows) == 0:
            return Status(Code.SKIP)
        # Only explicit (or List-defaulted) constraints need every key on a node: nodes
        # without a zone still get hostname spreading from the System defaults.
        own = bool((pod.get("spec") or {}).get("topologySpreadConstraints"))
        require_all = own or not self.system_defaulted
        rows = nodes.rows
        ignored = require_all & ~_has_keys(cache, rows, constraints)
        scored_rows = rows[~ignored]
        all_nodes = NodeSet(cache, all_rows)
        all_ok = _has_keys(cache, all_rows, constraints) if require_all \
            else np.ones(len(all_rows), bool)
        inclusion = _Inclusion(pod, all_nodes)
        ns = _namespace(pod)
        domain_counts: list[np.ndarray | None] = []
        weights: list[float] = []
        for c in constraints:
            if c.topology_key == HOSTNAME:
                domain_counts.append(None)
                weights.append(math.log(len(scored_rows) + 2))
                continue
            # the domains are the topology values of the scored nodes
            scored_b = _bucket_ids(cache, c.topology_key, scored_rows)
            is_domain = np.zeros(int(scored_b.max()) + 1 if len(scored_b) else 1, bool)
            is_domain[scored_b] = True
            weights.append(math.log(int(np.count_nonzero(is_domain)) + 2))
            # their pods are counted over every node that passes the inclusion policies
            keep = all_ok
            policy = inclusion.mask(c)
            if policy is not None:
                keep = keep & policy
            b = _bucket_ids(cache, c.topology_key, all_rows[keep])
            b_in = b < len(is_domain)
            b_in[b_in] = is_domain[b[b_in]]
            per_row = _pod_counts(cache, ns, c.selector)
            w = np.zeros(int(np.count_nonzero(b_in))) if per_row is None \
                else per_row[all_rows[keep][b_in]]
            domain_counts.append(np.bincount(b[b_in], w, minlength=len(is_domain)).astype(np.int64))
        state.write(_SCORE_STATE, _ScoreState(constraints, domain_counts, weights,
                                              rows[ignored], ns))
        return None

    def score(self, state: CycleState, pod: dict, nodes: NodeSet) -> np.ndarray:
        s: _ScoreState = state.read(_SCORE_STATE)
        cache, rows = nodes.cache, nodes.rows
        total = np.zeros(len(rows), np.float64)
        for c, counts, weight in zip(s.constraints, s.domain_counts, s.weights):
            vids = cache.label_ids(c.topology_key)[rows]
            if counts is None:
                per_row = _pod_counts(cache, s.ns, c.selector)
                cnt = np.zeros(len(rows), np.int64) if per_row is None else per_row[rows]
            else:
                b = _bucket_ids(cache, c.topology_key, rows)
                inside = b < len(counts)
                cnt = np.where(inside, counts[np.where(inside, b, 0)], 0)
            term = cnt.astype(np.float64) * weight + float(c.max_skew - 1)
            total = total + np.where(vids >= 0, term, 0.0)
        out = go_round(total).astype(np.int64)
        out[np.isin(rows, s.ignored_rows)] = 0
        return out

    def normalize_score(self, state: CycleState, pod: dict, nodes: NodeSet,
                        scores: np.ndarray) -> np.ndarray:
        s: _ScoreState = state.read(_SCORE_STATE)
        scores = np.asarray(scores, np.int64)
        valid = ~np.isin(nodes.rows, s.ignored_rows)
        if not valid.any():
            return np.zeros(len(scores), np.int64)
        lo, hi = int(scores[valid].min()), int(scores[valid].max())
        if hi == 0:
            return np.where(valid, MAX_NODE_SCORE, 0).astype(np.int64)
        return np.where(valid, MAX_NODE_SCORE * (hi + lo - scores) // hi, 0).astype(np.int64)

    # ---- queueing ---------------------------------------------------------------------

    def events_to_register(self) -> list[ClusterEventWithHint]:
        pod_actions = (ActionType.ADD | ActionType.UPDATE_POD_LABEL
                       | ActionType.UPDATE_POD_TOLERATION | ActionType.DELETE)
        node_actions = (ActionType.ADD | ActionType.DELETE | ActionType.UPDATE_NODE_LABEL
                        | ActionType.UPDATE_NODE_TAINT)
        return [ClusterEventWithHint(ClusterEvent(POD, pod_actions), self._after_pod_change),
                ClusterEventWithHint(ClusterEvent(NODE, node_actions), self._after_node_change)]

    def _after_pod_change(self, pod: dict, old: dict | None, new: dict | None) -> bool:
        """``isSchedulableAfterPodChange``."""
        uid = _meta(pod).get("uid")

        def involved(other: dict) -> bool:
            return _meta(other).get("uid") == uid or (
                bool((other.get("spec") or {}).get("nodeName"))
                and _namespace(other) == _namespace(pod))

        if (new is not None and not involved(new)) or (old is not None and not involved(old)):
            return QUEUE_SKIP
        try:
            constraints = self.constraints(pod, DO_NOT_SCHEDULE)
        except SelectorError:
            return QUEUE
        if new is not None and old is not None:
            if _meta(new).get("uid") == uid and _tolerations(new) != _tolerations(old) and \
                    any(c.node_taints_policy == HONOR for c in constraints):
                return QUEUE
            if _labels(new) == _labels(old):
                return QUEUE_SKIP
            return QUEUE if any(c.selector.matches(_labels(old)) != c.selector.matches(_labels(new))
                                for c in constraints) else QUEUE_SKIP
        changed = new if new is not None else old
        if changed is None:
            return QUEUE
        return QUEUE if any(c.selector.matches(_labels(changed)) for c in constraints) \
            else QUEUE_SKIP

    def _after_node_change(self, pod: dict, old: dict | None, new: dict | None) -> bool:
        """``isSchedulableAfterNodeChange``."""
        try:
            constraints = self.constraints(pod, DO_NOT_SCHEDULE)
        except SelectorError:
            return QUEUE

        def has_keys(node: dict | None) -> bool:
            return node is not None and all(c.topology_key in _labels(node) for c in constraints)

        was, now = has_keys(old), has_keys(new)
        if old is not None and new is not None:
            if was != now:
                return QUEUE
            keys_changed = any(_labels(old).get(c.topology_key) != _labels(new).get(c.topology_key)
                               for c in constraints)
            taints_changed = (old.get("spec") or {}).get("taints") != \
                (new.get("spec") or {}).get("taints")
            return QUEUE if now and (keys_changed or taints_changed) else QUEUE_SKIP
        if new is not None:
            return QUEUE if now else QUEUE_SKIP
        return QUEUE if was else QUEUE_SKIP


__all__ = ["REASON_CONSTRAINTS_NOT_MATCH", "REASON_NODE_LABEL_NOT_MATCH",
           "SYSTEM_DEFAULT_CONSTRAINTS", "Constraint", "PodTopologySpread", "default_selector",
           "go_round", "parse_constraints", "validate_args"]
