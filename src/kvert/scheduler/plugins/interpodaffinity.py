"""InterPodAffinity: required pod (anti-)affinity (Filter) and preferred pod (anti-)affinity
(Score), as kube-scheduler 1.35's ``interpodaffinity`` plugin (seed 001 §4).

Filter. PreFilter counts, per topology pair (topologyKey, value), (1) existing pods whose
required anti-affinity terms match the incoming pod, (2) existing pods matching *all* of the
incoming pod's required affinity terms (counted once per term, at each term's key), (3)
existing pods matching each of its required anti-affinity terms. A node then fails with
``node(s) didn't match pod affinity rules`` (UnschedulableAndUnresolvable) when it lacks a
term's topology key or no matching pod shares its value -- unless no matching pod exists
anywhere and the pod matches its own terms (the first pod of a group) --, else with ``node(s)
didn't match pod anti-affinity rules`` or ``node(s) didn't satisfy existing pods anti-affinity
rules`` (Unschedulable). PreFilter skips the plugin when the pod has no required terms and no
existing pod's anti-affinity matches it. Terminating pods count, as in kube-scheduler.

Score. Per topology pair, the weights of the incoming pod's preferred terms matched by existing
pods (anti-affinity negative), plus the existing pods' preferred terms the incoming pod
matches and their required affinity terms weighted by ``hardPodAffinityWeight``; a node scores
the sum over its labels, normalized by min/max in float64. PreScore skips when nothing
matches, or when ``ignorePreferredTermsOfExistingPods`` is set and the pod has no preferred
terms.

Namespaces. A term without namespaces and namespaceSelector means its pod's namespace; for the
incoming pod a non-empty namespaceSelector is resolved against the known namespaces (as
kube-scheduler merges it into the term's namespaces), for existing pods' terms it is matched
against the incoming pod's namespace labels. ``matchLabelKeys``/``mismatchLabelKeys`` are
merged into the labelSelector by the API server at pod creation; the scheduler ignores them.

Queueing hints (``isSchedulableAfterPodChange`` / ``...NodeChange``): an assigned pod added
that matches all the pod's affinity terms, updated into matching them or out of matching all
its anti-affinity terms, or deleted while matching them (or while its own anti-affinity matched
the pod); a node added with an affinity topology key (any node, for anti-affinity) or whose
topology value changed, appeared (affinity) or went away (anti-affinity).

Speed. Nothing per cycle walks the pods. The incoming pod's terms are per-row counts from the
cache's incremental pod index (:meth:`NodeCache.count_matching`); existing pods' terms are
kept by :class:`ExistingPodTerms`, a pod listener of the cache that groups them by (kind,
term, weight) with sparse per-row counts, so a cycle matches each distinct term against the
pod once. Per-row counts become per-value counts with ``np.bincount`` over the cache's interned
label ids of the topology key, and nodes read them back by the same ids.
"""

from __future__ import annotations

import logging
import weakref
from collections.abc import Iterable, Mapping
from typing import Any, NamedTuple

import numpy as np

from kvert.api.selectors import LabelSelector, SelectorError, validate_label_value
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
from kvert.scheduler.plugins.helper import LRU, canonical
from kvert.scheduler.podindex import PodQuery, query_for_term
from kvert.scheduler.reader import NodeCacheReader
from kvert.scheduler.snapshot import NodeSet
from kvert.scheduler.view import base_cache

log = logging.getLogger(__name__)

REASON_AFFINITY = "node(s) didn't match pod affinity rules"
REASON_ANTI_AFFINITY = "node(s) didn't match pod anti-affinity rules"
REASON_EXISTING_ANTI_AFFINITY = "node(s) didn't satisfy existing pods anti-affinity rules"
_STATE = "PreFilterInterPodAffinity"
_SCORE_STATE = "PreScoreInterPodAffinity"
ARGS_PATH = "pluginConfig[InterPodAffinity].args"
DEFAULT_HARD_POD_AFFINITY_WEIGHT = 1

# kinds of terms, in PodTerms order
REQ_AFF, REQ_ANTI, PREF_AFF, PREF_ANTI = range(4)
_KIND_NAMES = ("requiredAffinityTerms", "requiredAntiAffinityTerms", "preferredAffinityTerms",
               "preferredAntiAffinityTerms")
_NO_LABELS: Mapping[str, str] = {}


# ---------------------------------------------------------------------------------------------
# terms
# ---------------------------------------------------------------------------------------------


class Term(NamedTuple):
    """An ``AffinityTerm`` (``WeightedAffinityTerm`` with its weight; 1 for required terms)."""

    key: str
    query: PodQuery
    weight: int = 1


class PodTerms(NamedTuple):
    req_aff: tuple[Term, ...] = ()
    req_anti: tuple[Term, ...] = ()
    pref_aff: tuple[Term, ...] = ()
    pref_anti: tuple[Term, ...] = ()


NO_TERMS = PodTerms()
_TERMS_MEMO = LRU(4096)


def _selector(raw: Any) -> LabelSelector:
    """``LabelSelectorAsSelector``, reporting a bad value the way Kubernetes words it (the
    label-value check runs first there)."""
    if isinstance(raw, Mapping):
        for expr in raw.get("matchExpressions") or ():
            if not isinstance(expr, Mapping) or expr.get("operator") not in ("In", "NotIn"):
                continue
            for i, v in enumerate(expr.get("values") or ()):
                problems = validate_label_value(v)
                if problems:
                    raise SelectorError(f'values[{i}][{expr.get("key", "")}]: Invalid value: '
                                        f'"{v}": ' + "; ".join(problems))
    return LabelSelector.from_dict(raw)


def _term(raw: Any, owner_ns: str, weight: int = 1) -> Term:
    raw = raw if isinstance(raw, Mapping) else {}
    _selector(raw.get("labelSelector"))
    if raw.get("namespaceSelector") is not None:
        _selector(raw.get("namespaceSelector"))
    return Term(str(raw.get("topologyKey") or ""), query_for_term(raw, owner_ns), weight)


def _weighted(items: Any, owner_ns: str) -> tuple[Term, ...]:
    out = []
    for w in items or ():
        w = w if isinstance(w, Mapping) else {}
        weight = w.get("weight")
        out.append(_term(w.get("podAffinityTerm"), owner_ns,
                         weight if isinstance(weight, int) and not isinstance(weight, bool) else 0))
    return tuple(out)


def pod_terms(pod: Mapping[str, Any]) -> PodTerms:
    """The pod's parsed (anti-)affinity terms (``NewPodInfo``); raises :class:`SelectorError`
    (the message names the kind of term, as kube-scheduler's does)."""
    aff = (pod.get("spec") or {}).get("affinity") or {}
    pa, paa = aff.get("podAffinity") or {}, aff.get("podAntiAffinity") or {}
    if not pa and not paa:
        return NO_TERMS
    ns = (pod.get("metadata") or {}).get("namespace") or ""
    memo_key = (ns, canonical([pa, paa]))
    hit = _TERMS_MEMO.get(memo_key)
    if hit is not None:
        return hit
    raws = (pa.get("requiredDuringSchedulingIgnoredDuringExecution"),
            paa.get("requiredDuringSchedulingIgnoredDuringExecution"),
            pa.get("preferredDuringSchedulingIgnoredDuringExecution"),
            paa.get("preferredDuringSchedulingIgnoredDuringExecution"))
    parts: list[tuple[Term, ...]] = []
    errors: list[str] = []
    for kind, raw in enumerate(raws):
        try:
            parts.append(tuple(_term(t, ns) for t in raw or ()) if kind < PREF_AFF
                         else _weighted(raw, ns))
        except SelectorError as e:
            errors.append(f"{_KIND_NAMES[kind]}: {e}")
            parts.append(())
    if errors:
        # utilerrors.NewAggregate: one error as is, several as a list
        raise SelectorError(errors[0] if len(errors) == 1 else "[" + ", ".join(errors) + "]")
    terms = PodTerms(*parts)
    _TERMS_MEMO[memo_key] = terms
    if len(_TERMS_MEMO) > _TERMS_MEMO.size:
        _TERMS_MEMO.popitem(last=False)
    return terms


def _matches(q: PodQuery, ns: str, labels: Mapping[str, str], ns_labels: Mapping[str, str]) -> bool:
    """``AffinityTerm.Matches``: a pod in ``ns`` with ``labels`` (``ns_labels``: its namespace's)."""
    return q.matches_namespace(ns, lambda _: ns_labels) and q.selector.matches(labels)


def _matches_all(terms: Iterable[Term], ns: str, labels: Mapping[str, str]) -> bool:
    """``podMatchesAllAffinityTerms`` (false without terms; no namespace labels)."""
    terms = tuple(terms)
    return bool(terms) and all(_matches(t.query, ns, labels, _NO_LABELS) for t in terms)


def _merged(q: PodQuery, namespace_labels: Mapping[str, Mapping[str, str]]) -> PodQuery:
    """``mergeAffinityTermNamespacesIfNotEmpty``: the incoming pod's namespaceSelector becomes
    the namespaces it selects now; an empty one (all namespaces) stays."""
    sel = q.ns_selector
    if sel is None or sel.empty:
        return q
    picked = frozenset(ns for ns, labels in namespace_labels.items() if sel.matches(labels))
    return PodQuery(q.namespaces | picked, None, q.selector, q.skip_terminating)


def _conjunction(queries: list[PodQuery]) -> PodQuery:
    """One query matching the pods that match every query (the affinity terms are ANDed)."""
    if len(queries) == 1:
        return queries[0]
    namespaces: frozenset[str] | None = None   # None: any namespace
    selector = LabelSelector.everything()
    for q in queries:
        if not (q.ns_selector is not None and q.ns_selector.empty):
            namespaces = q.namespaces if namespaces is None else namespaces & q.namespaces
        selector = LabelSelector.nothing() if q.selector.is_nothing \
            else selector.add(*q.selector.requirements)
    if namespaces is None:
        return PodQuery(frozenset(), LabelSelector.everything(), selector)
    return PodQuery(namespaces, None, selector)


def _meta(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    return obj.get("metadata") or {}


# ---------------------------------------------------------------------------------------------
# existing pods' terms: an incremental index over the cache's pods
# ---------------------------------------------------------------------------------------------


class _Group:
    """The pods carrying one term: how many per node row (sparse: a term lives on few rows)."""

    __slots__ = ("pods", "rows")

    def __init__(self) -> None:
        self.rows: dict[int, int] = {}
        self.pods = 0

    def arrays(self) -> tuple[np.ndarray, np.ndarray]:
        n = len(self.rows)
        return (np.fromiter(self.rows.keys(), np.int64, n),
                np.fromiter(self.rows.values(), np.int64, n))


class ExistingPodTerms:
    """The (anti-)affinity terms of the pods counted on the cache's node rows, grouped per kind
    by term (topology key, namespaces and selectors, owner namespace when it matters, weight),
    each with the number of pods carrying it per row. A pod listener of the cache
    (``account``/``clear_row``/``grow``)."""

    def __init__(self) -> None:
        self.by_kind: tuple[dict[Term, _Group], ...] = ({}, {}, {}, {})

    def account(self, entry: Any, row: int, sign: int) -> None:
        aff = (entry.pod.get("spec") or {}).get("affinity")
        if not aff or not (aff.get("podAffinity") or aff.get("podAntiAffinity")):
            return
        try:
            terms = pod_terms(entry.pod)
        except SelectorError as e:
            # the API server rejects such pods; one that got through has no usable terms
            log.debug("pod %s: ignoring its pod affinity terms: %s", entry.key, e)
            return
        for kind, ts in enumerate(terms):
            groups = self.by_kind[kind]
            for t in ts:
                g = groups.get(t)
                if g is None:
                    if sign < 0:
                        continue
                    g = groups[t] = _Group()
                count = g.rows.get(row, 0) + sign
                if count:
                    g.rows[row] = count
                else:
                    g.rows.pop(row, None)
                g.pods += sign
                if g.pods <= 0:
                    del groups[t]

    def clear_row(self, row: int) -> None:
        for groups in self.by_kind:
            for t, g in list(groups.items()):
                g.pods -= g.rows.pop(row, 0)
                if g.pods <= 0:
                    del groups[t]

    def grow(self, capacity: int) -> None:
        pass     # counts are keyed by row, nothing to resize


_INDEXES: weakref.WeakKeyDictionary[NodeCacheReader, ExistingPodTerms] = weakref.WeakKeyDictionary()


def existing_pod_terms(cache: NodeCacheReader) -> ExistingPodTerms:
    """The index of ``cache`` (a NodeCache), registered on first use and shared by the
    profiles scheduling from that cache."""
    index = _INDEXES.get(cache)
    if index is None:
        index = _INDEXES[cache] = ExistingPodTerms()
        cache.add_pod_listener(index)
    return index


# ---------------------------------------------------------------------------------------------
# counts per topology pair
# ---------------------------------------------------------------------------------------------


class _PerKey:
    """Weighted per-row counts per topology key, turned into per-value sums."""

    __slots__ = ("cache", "hits", "rows")

    def __init__(self, cache: NodeCacheReader):
        self.cache = cache
        self.rows: dict[str, np.ndarray] = {}
        self.hits: dict[str, np.ndarray] = {}

    def _arrays(self, key: str) -> tuple[np.ndarray, np.ndarray]:
        rows = self.rows.get(key)
        if rows is None:
            cap = self.cache.capacity
            rows = self.rows[key] = np.zeros(cap, np.int64)
            self.hits[key] = np.zeros(cap, np.int64)
        return rows, self.hits[key]

    def add(self, key: str, counts: np.ndarray, weight: int = 1) -> None:
        """Add per-row ``counts`` (an array over the cache's rows) times ``weight``."""
        rows, hits = self._arrays(key)
        c = counts[: len(rows)]
        rows[: len(c)] += weight * c
        hits[: len(c)] += c

    def add_group(self, key: str, group: _Group, weight: int = 1) -> None:
        rows, hits = self._arrays(key)
        idx, counts = group.arrays()
        np.add.at(rows, idx, weight * counts)
        np.add.at(hits, idx, counts)

    def touched(self) -> bool:
        """Whether any counted pod sits on a node having the term's topology key."""
        for key, hits in self.hits.items():
            if hits[self.cache.label_ids(key) >= 0].any():
                return True
        return False

    def by_value(self) -> dict[str, np.ndarray]:
        out = {}
        for key, rows in self.rows.items():
            ids = self.cache.label_ids(key)
            has = ids >= 0
            size = int(ids[has].max()) + 1 if has.any() else 0
            sums = np.bincount(ids[has], weights=rows[has], minlength=size)
            out[key] = np.rint(sums).astype(np.int64)
        return out


def _lookup(per_value: np.ndarray | None, ids: np.ndarray) -> np.ndarray:
    """Per node: the value-indexed count at the node's label id (0 without the label)."""
    out = np.zeros(len(ids), np.int64)
    if per_value is None or len(per_value) == 0:
        return out
    ok = (ids >= 0) & (ids < len(per_value))
    out[ok] = per_value[ids[ok]]
    return out


def _any(counts: Mapping[str, np.ndarray]) -> bool:
    return any(a.any() for a in counts.values())


class _FilterState:
    """``preFilterState``: counts per topology key, indexed by the cache's label value ids."""

    __slots__ = ("aff_keys", "aff_query", "affinity", "anti", "anti_terms", "cache", "existing",
                 "labels", "matches_own", "ns", "ns_labels")
    # set by PreFilter (the state is built without __init__, field by field)
    aff_keys: tuple[str, ...]
    aff_query: PodQuery | None
    affinity: dict[str, np.ndarray]
    anti: dict[str, np.ndarray]
    anti_terms: tuple[tuple[str, PodQuery], ...]
    cache: NodeCacheReader
    existing: dict[str, np.ndarray]
    labels: Mapping[str, str]
    matches_own: bool
    ns: str
    ns_labels: Mapping[str, str]

    def clone(self) -> _FilterState:
        other = _FilterState.__new__(_FilterState)
        for name in self.__slots__:
            setattr(other, name, getattr(self, name))
        other.existing = {k: a.copy() for k, a in self.existing.items()}
        other.affinity = {k: a.copy() for k, a in self.affinity.items()}
        other.anti = {k: a.copy() for k, a in self.anti.items()}
        return other

    def _bump(self, counts: dict[str, np.ndarray], key: str, row: int, sign: int) -> None:
        vid = int(self.cache.label_ids(key)[row])
        if vid < 0:
            return
        arr = counts.get(key)
        if arr is None or vid >= len(arr):
            grown = np.zeros(vid + 1, np.int64)
            if arr is not None:
                grown[: len(arr)] = arr
            arr = counts[key] = grown
        arr[vid] += sign

    def update_with_pod(self, pod: Any, node: Mapping[str, Any], sign: int) -> None:
        """``updateWithPod``: ``pod`` (a pod or a cache PodEntry) now counts (+1) or no longer
        counts (-1) on ``node``."""
        pod = getattr(pod, "pod", pod)
        row = self.cache.row_of.get(_meta(node).get("name", ""))
        if row is None:
            return
        try:
            terms = pod_terms(pod)
        except SelectorError:
            terms = NO_TERMS
        for t in terms.req_anti:
            if _matches(t.query, self.ns, self.labels, self.ns_labels):
                self._bump(self.existing, t.key, row, sign)
        ns = _meta(pod).get("namespace") or ""
        labels = _meta(pod).get("labels") or {}
        if self.aff_keys and self.aff_query is not None \
                and _matches(self.aff_query, ns, labels, _NO_LABELS):
            for key in self.aff_keys:
                self._bump(self.affinity, key, row, sign)
        for key, q in self.anti_terms:
            if _matches(q, ns, labels, _NO_LABELS):
                self._bump(self.anti, key, row, sign)


# ---------------------------------------------------------------------------------------------
# the plugin
# ---------------------------------------------------------------------------------------------


def _parse_args(args: Mapping[str, Any]) -> tuple[int, bool]:
    """``InterPodAffinityArgs`` with v1 defaults, validated as ``ValidateInterPodAffinityArgs``."""
    w = args.get("hardPodAffinityWeight")
    if w is None:
        w = DEFAULT_HARD_POD_AFFINITY_WEIGHT
    if not isinstance(w, int) or isinstance(w, bool):
        raise TypeError(f"{ARGS_PATH}.hardPodAffinityWeight: Invalid value: {w!r}: "
                        "must be an integer")
    if not 0 <= w <= 100:
        raise ValueError(f"{ARGS_PATH}.hardPodAffinityWeight: Invalid value: {w}: "
                         "not in valid range [0-100]")
    ignore = args.get("ignorePreferredTermsOfExistingPods", False)
    if ignore is None:
        ignore = False
    if not isinstance(ignore, bool):
        raise TypeError(f"{ARGS_PATH}.ignorePreferredTermsOfExistingPods: Invalid value: "
                        f"{ignore!r}: must be a boolean")
    return w, ignore


class InterPodAffinity(Plugin):
    name = "InterPodAffinity"

    def __init__(self, args: dict[str, Any] | None = None, handle: Handle | None = None):
        super().__init__(args, handle)
        self.hard_pod_affinity_weight, self.ignore_preferred_terms_of_existing_pods = \
            _parse_args(self.args)

    # ---- filter -------------------------------------------------------------------------

    def pre_filter(self, state: CycleState, pod: dict, nodes: NodeSet):
        try:
            terms = pod_terms(pod)
        except SelectorError as e:
            return None, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, f"parsing pod: {e}")
        cache = base_cache(nodes.cache)
        ns = _meta(pod).get("namespace") or ""
        labels = _meta(pod).get("labels") or {}
        ns_labels = cache.namespace_labels.get(ns) or _NO_LABELS

        existing = _PerKey(cache)
        for t, g in existing_pod_terms(cache).by_kind[REQ_ANTI].items():
            if _matches(t.query, ns, labels, ns_labels):
                existing.add_group(t.key, g)
        existing_counts = existing.by_value()
        if not terms.req_aff and not terms.req_anti and not _any(existing_counts):
            return None, Status(Code.SKIP)

        s = _FilterState.__new__(_FilterState)
        s.cache, s.ns, s.labels, s.ns_labels = cache, ns, labels, ns_labels
        s.existing = existing_counts
        affinity = _PerKey(cache)
        s.aff_keys = tuple(t.key for t in terms.req_aff)
        s.aff_query = None
        s.matches_own = False
        if terms.req_aff:
            s.aff_query = _conjunction([_merged(t.query, cache.namespace_labels)
                                        for t in terms.req_aff])
            matching = cache.count_matching(s.aff_query)
            for key in s.aff_keys:
                affinity.add(key, matching)
            s.matches_own = _matches(s.aff_query, ns, labels, _NO_LABELS)
        s.affinity = affinity.by_value()
        anti = _PerKey(cache)
        s.anti_terms = tuple((t.key, _merged(t.query, cache.namespace_labels))
                             for t in terms.req_anti)
        for key, q in s.anti_terms:
            anti.add(key, cache.count_matching(q))
        s.anti = anti.by_value()
        state.write(_STATE, s)
        return None, None

    def _state(self, state: CycleState) -> _FilterState:
        s = state.get(_STATE)
        if s is None:
            raise RuntimeError(f'error reading "{_STATE}" from cycleState: not found')
        return s

    def pre_filter_add_pod(self, state: CycleState, pod: dict, other: dict, node: dict):
        self._state(state).update_with_pod(other, node, +1)

    def pre_filter_remove_pod(self, state: CycleState, pod: dict, other: dict, node: dict):
        self._state(state).update_with_pod(other, node, -1)

    def filter(self, state: CycleState, pod: dict, nodes: NodeSet) -> FilterResult:
        s = self._state(state)
        cache, rows = nodes.cache, nodes.rows
        n = len(rows)
        aff_fail = np.zeros(n, bool)
        if s.aff_keys:
            missing = np.zeros(n, bool)
            found = np.ones(n, bool)
            for key in s.aff_keys:
                ids = cache.label_ids(key)[rows]
                missing |= ids < 0
                found &= _lookup(s.affinity.get(key), ids) > 0
            # the first pod of a group: nothing matches anywhere, but the pod matches itself
            first_pod = s.matches_own and not _any(s.affinity)
            aff_fail = missing | (~found & (not first_pod))
        anti_fail = np.zeros(n, bool)
        for key, _ in s.anti_terms:
            anti_fail |= _lookup(s.anti.get(key), cache.label_ids(key)[rows]) > 0
        existing_fail = np.zeros(n, bool)
        for key, counts in s.existing.items():
            if counts.any():
                existing_fail |= _lookup(counts, cache.label_ids(key)[rows]) > 0
        anti_fail &= ~aff_fail
        existing_fail &= ~(aff_fail | anti_fail)
        codes = np.zeros(n, np.int8)
        codes[anti_fail | existing_fail] = Code.UNSCHEDULABLE
        codes[aff_fail] = Code.UNSCHEDULABLE_AND_UNRESOLVABLE
        return FilterResult(codes, [(REASON_AFFINITY, aff_fail), (REASON_ANTI_AFFINITY, anti_fail),
                                    (REASON_EXISTING_ANTI_AFFINITY, existing_fail)])

    # ---- score --------------------------------------------------------------------------

    def pre_score(self, state: CycleState, pod: dict, nodes: NodeSet) -> Status | None:
        try:
            terms = pod_terms(pod)
        except SelectorError as e:
            return Status(Code.ERROR, str(e))
        has_constraints = bool(terms.pref_aff or terms.pref_anti)
        if self.ignore_preferred_terms_of_existing_pods and not has_constraints:
            return Status(Code.SKIP)
        cache = base_cache(nodes.cache)
        ns = _meta(pod).get("namespace") or ""
        labels = _meta(pod).get("labels") or {}
        ns_labels = cache.namespace_labels.get(ns) or _NO_LABELS
        score = _PerKey(cache)
        for ts, sign in ((terms.pref_aff, 1), (terms.pref_anti, -1)):
            for t in ts:
                q = _merged(t.query, cache.namespace_labels)
                score.add(t.key, cache.count_matching(q), sign * t.weight)
        index = existing_pod_terms(cache)
        kinds = [(PREF_AFF, 1), (PREF_ANTI, -1)]
        if self.hard_pod_affinity_weight > 0:
            kinds.append((REQ_AFF, 1))
        for kind, sign in kinds:
            for t, g in index.by_kind[kind].items():
                if _matches(t.query, ns, labels, ns_labels):
                    w = self.hard_pod_affinity_weight if kind == REQ_AFF else t.weight
                    score.add_group(t.key, g, sign * w)
        if not score.touched():
            return Status(Code.SKIP)
        state.write(_SCORE_STATE, score.by_value())
        return None

    def score(self, state: CycleState, pod: dict, nodes: NodeSet) -> np.ndarray:
        per_key: dict[str, np.ndarray] = state.read(_SCORE_STATE)
        total = np.zeros(len(nodes), np.int64)
        for key, per_value in per_key.items():
            total += _lookup(per_value, nodes.cache.label_ids(key)[nodes.rows])
        return total

    def normalize_score(self, state, pod, nodes, scores: np.ndarray) -> np.ndarray:
        scores = np.asarray(scores, np.int64)
        if len(scores) == 0:
            return scores
        lo, hi = int(scores.min()), int(scores.max())
        if hi - lo <= 0:
            return np.zeros(len(scores), np.int64)
        # float64(MaxNodeScore) * (float64(score-min) / float64(max-min)), truncated
        ratio = (scores - lo).astype(np.float64) / np.float64(hi - lo)
        return (np.float64(MAX_NODE_SCORE) * ratio).astype(np.int64)

    # ---- queueing -----------------------------------------------------------------------

    def _ns_labels(self, ns: str) -> Mapping[str, str]:
        cache = getattr(self.handle, "cache", None)
        return (cache.namespace_labels.get(ns) if cache is not None else None) or _NO_LABELS

    def events_to_register(self) -> list[ClusterEventWithHint]:
        def pod_hint(pod: dict, old: dict | None, new: dict | None) -> bool:
            if new is not None and _meta(new).get("uid") and \
                    _meta(new).get("uid") == _meta(pod).get("uid"):
                return QUEUE     # the pod's own labels changed
            if any(p is not None and not (p.get("spec") or {}).get("nodeName")
                   for p in (old, new)):
                return QUEUE_SKIP    # an unscheduled pod changes nothing
            try:
                terms = pod_terms(pod)
            except SelectorError:
                return QUEUE

            def all_match(ts: tuple[Term, ...], p: dict) -> bool:
                return _matches_all(ts, _meta(p).get("namespace") or "",
                                    _meta(p).get("labels") or {})
            if old is not None and new is not None:
                if not all_match(terms.req_aff, old) and all_match(terms.req_aff, new):
                    return QUEUE
                return QUEUE if (all_match(terms.req_anti, old)
                                 and not all_match(terms.req_anti, new)) else QUEUE_SKIP
            if new is not None:
                return QUEUE if all_match(terms.req_aff, new) else QUEUE_SKIP
            if old is None:
                return QUEUE
            if all_match(terms.req_anti, old):
                return QUEUE
            # the deleted pod's own anti-affinity may have kept this pod out
            try:
                theirs = pod_terms(old).req_anti
            except SelectorError:
                return QUEUE
            ns = _meta(pod).get("namespace") or ""
            labels = _meta(pod).get("labels") or {}
            return QUEUE if any(_matches(t.query, ns, labels, self._ns_labels(ns))
                                for t in theirs) else QUEUE_SKIP

        def node_hint(pod: dict, old: dict | None, new: dict | None) -> bool:
            try:
                terms = pod_terms(pod)
            except SelectorError:
                return QUEUE
            now = _meta(new or {}).get("labels") or {}
            before = (_meta(old).get("labels") or {}) if old is not None else None
            for t in terms.req_aff:
                # a node with the key (or a new value of it) may hold the matching pods' domain
                if t.key in now and (before is None or before.get(t.key) != now[t.key]):
                    return QUEUE
            for t in terms.req_anti:
                # a new node, or one leaving an anti-affinity domain, may be free of them
                if before is None or (t.key in before and before[t.key] != now.get(t.key)):
                    return QUEUE
            return QUEUE_SKIP

        return [
            ClusterEventWithHint(ClusterEvent(POD, ActionType.ADD | ActionType.UPDATE_POD_LABEL
                                              | ActionType.DELETE), pod_hint),
            ClusterEventWithHint(ClusterEvent(NODE, ActionType.ADD | ActionType.UPDATE_NODE_LABEL),
                                 node_hint),
        ]
