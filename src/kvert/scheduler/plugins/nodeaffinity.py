"""NodeAffinity: ``spec.nodeSelector`` and required node affinity (Filter), preferred node
affinity (Score), the profile's ``addedAffinity`` (seed 001 §2, "ノードアフィニティ").

Selector semantics are ``kvert.api.nodeaffinity``'s (RequiredNodeAffinity, NodeSelector,
PreferredSchedulingTerms). To avoid calling them once per node, a selector is evaluated per
*projection*: a selector's verdict on a node depends only on the node's values for the label
keys the selector names, so the nodes are grouped by those values (the cache keeps an
interned value-id column per label key; ``np.unique`` groups the rows), the helper runs once
per distinct group on a node carrying just those labels, and the result is spread back over
the rows. Verdicts are memoized per selector across pods (a Deployment's pods share one).
A selector with ``matchFields`` (``metadata.name``) depends on the node's name: it runs per
node, but PreFilter first narrows the nodes to the names it lists (``In``), as Kubernetes does.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from kvert.api.nodeaffinity import NodeSelector, PreferredSchedulingTerms, RequiredNodeAffinity
from kvert.scheduler.framework import (
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
    PreFilterResult,
    Status,
    default_normalize_score,
)
from kvert.scheduler.plugins.helper import LRU, canonical
from kvert.scheduler.snapshot import NodeSet

REASON_POD = "node(s) didn't match Pod's node affinity/selector"
REASON_ENFORCED = "node(s) didn't match scheduler-enforced node affinity"
REASON_CONFLICT = "pod affinity terms conflict"
_STATE = "PreFilterNodeAffinity"
_SCORE_STATE = "PreScoreNodeAffinity"


def _terms_keys(terms: Iterable[Any] | None) -> tuple[set[str], bool]:
    """Label keys the selector terms read, and whether any term reads node fields."""
    keys: set[str] = set()
    fields = False
    for term in terms or ():
        if not isinstance(term, dict):
            continue
        for req in term.get("matchExpressions") or []:
            if isinstance(req, dict) and isinstance(req.get("key"), str):
                keys.add(req["key"])
        if term.get("matchFields"):
            fields = True
    return keys, fields


def _node_affinity(pod: dict) -> dict:
    return ((pod.get("spec") or {}).get("affinity") or {}).get("nodeAffinity") or {}


def _required_terms(affinity: dict) -> list | None:
    req = affinity.get("requiredDuringSchedulingIgnoredDuringExecution")
    if req is None:
        return None
    return (req.get("nodeSelectorTerms") or []) if isinstance(req, dict) else []


def _preferred(affinity: dict) -> list:
    return affinity.get("preferredDuringSchedulingIgnoredDuringExecution") or []


class _State:
    __slots__ = ("required", "keys", "fields", "sig")

    def __init__(self, required: RequiredNodeAffinity, keys: tuple[str, ...], fields: bool, sig: str):
        self.required, self.keys, self.fields, self.sig = required, keys, fields, sig


def evaluate_by_projection(nodes: NodeSet, keys: tuple[str, ...], fields: bool,
                           fn: Callable[[dict], Any], memo: dict, dtype: Any) -> np.ndarray:
    """``fn(node)`` for every node, calling it once per distinct projection of the nodes onto
    ``keys`` (per node when ``fields``: the verdict depends on the node's name)."""
    cache, rows = nodes.cache, nodes.rows
    n = len(rows)
    if n == 0:
        return np.zeros(0, dtype)
    if fields:
        objs = cache.node_objs
        return np.fromiter((fn(objs[int(r)] or {}) for r in rows), dtype=dtype, count=n)
    if not keys:
        v = memo.get(())
        if v is None:
            v = memo[()] = fn({"metadata": {"labels": {}}})
        return np.full(n, v, dtype)
    cols = [cache.label_ids(k)[rows] for k in keys]
    if len(cols) == 1:
        uniq, inverse = np.unique(cols[0], return_inverse=True)
        combos: list[tuple[int, ...]] = [(int(u),) for u in uniq]
    else:
        uniq, inverse = np.unique(np.stack(cols, axis=1), axis=0, return_inverse=True)
        combos = [tuple(int(x) for x in u) for u in uniq]
    out = np.empty(len(combos), dtype)
    for i, combo in enumerate(combos):
        v = memo.get(combo)
        if v is None:
            labels = {k: cache.label_value(k, vid) for k, vid in zip(keys, combo) if vid >= 0}
            v = memo[combo] = fn({"metadata": {"name": "", "labels": labels}})
        out[i] = v
    return out[inverse.reshape(-1)]


class NodeAffinity(Plugin):
    name = "NodeAffinity"

    def __init__(self, args: dict[str, Any] | None = None, handle: Handle | None = None):
        super().__init__(args, handle)
        added = self.args.get("addedAffinity") or {}
        req = added.get("requiredDuringSchedulingIgnoredDuringExecution")
        self.added_selector = NodeSelector(req, "addedAffinity.requiredDuringScheduling"
                                                "IgnoredDuringExecution") if req else None
        self.added_keys, self.added_fields = _terms_keys(
            (req or {}).get("nodeSelectorTerms") if isinstance(req, dict) else None)
        pref = added.get("preferredDuringSchedulingIgnoredDuringExecution")
        self.added_pref = PreferredSchedulingTerms(pref) if pref else None
        self.added_pref_keys, self.added_pref_fields = _terms_keys(
            [t.get("preference") for t in pref or [] if isinstance(t, dict)])
        self._filter_memo = LRU(512)
        self._score_memo = LRU(512)

    # ---- filter -------------------------------------------------------------------------

    def pre_filter(self, state: CycleState, pod: dict, nodes: NodeSet):
        spec = pod.get("spec") or {}
        affinity = _node_affinity(pod)
        terms = _required_terms(affinity)
        if terms is None and self.added_selector is None and not spec.get("nodeSelector"):
            return None, Status(Code.SKIP)
        keys, fields = _terms_keys(terms)
        keys |= set(spec.get("nodeSelector") or {})
        keys |= self.added_keys
        fields = fields or self.added_fields
        sig = canonical([spec.get("nodeSelector"), terms])
        state.write(_STATE, _State(RequiredNodeAffinity(pod), tuple(sorted(keys)), fields, sig))
        if not terms:
            return None, None
        names: set[str] | None = None
        for term in terms:
            term_names: set[str] | None = None
            for r in (term or {}).get("matchFields") or []:
                if r.get("key") == "metadata.name" and r.get("operator") == "In":
                    s = set(r.get("values") or [])
                    term_names = s if term_names is None else term_names & s
            if term_names is None:
                return None, None   # this term does not pin names; terms are ORed
            names = term_names if names is None else names | term_names
        if names is not None and not names:
            return None, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, REASON_CONFLICT)
        return (PreFilterResult(names) if names else None), None

    def filter(self, state: CycleState, pod: dict, nodes: NodeSet) -> FilterResult:
        s: _State = state.read(_STATE)
        added = self.added_selector

        def verdict(node: dict) -> int:
            if added is not None and not added.matches(node):
                return 1
            return 0 if s.required.matches(node) else 2

        memo = self._filter_memo.get_or_create((s.sig, s.keys), dict)
        v = evaluate_by_projection(nodes, s.keys, s.fields, verdict, memo, np.int8)
        failed = v != 0
        codes = np.where(failed, np.int8(Code.UNSCHEDULABLE_AND_UNRESOLVABLE), np.int8(0))
        return FilterResult(codes.astype(np.int8), [(REASON_ENFORCED, v == 1), (REASON_POD, v == 2)])

    # ---- score --------------------------------------------------------------------------

    def pre_score(self, state: CycleState, pod: dict, nodes: NodeSet) -> Status | None:
        pref = _preferred(_node_affinity(pod))
        if not pref and self.added_pref is None:
            return Status(Code.SKIP)
        terms = PreferredSchedulingTerms.for_pod(pod)
        keys, fields = _terms_keys([t.get("preference") for t in pref if isinstance(t, dict)])
        keys |= self.added_pref_keys
        state.write(_SCORE_STATE, (terms, tuple(sorted(keys)), fields or self.added_pref_fields,
                                   canonical(pref)))
        return None

    def score(self, state: CycleState, pod: dict, nodes: NodeSet) -> np.ndarray:
        terms, keys, fields, sig = state.read(_SCORE_STATE)
        added = self.added_pref

        def weight(node: dict) -> int:
            return terms.score(node) + (added.score(node) if added is not None else 0)

        memo = self._score_memo.get_or_create((sig, keys), dict)
        return evaluate_by_projection(nodes, keys, fields, weight, memo, np.int64)

    def normalize_score(self, state, pod, nodes, scores: np.ndarray) -> np.ndarray:
        return default_normalize_score(MAX_NODE_SCORE, False, scores)

    # ---- queueing -----------------------------------------------------------------------

    def _matches(self, pod: dict, node: dict | None) -> bool:
        if node is None:
            return False
        if self.added_selector is not None and not self.added_selector.matches(node):
            return False
        return RequiredNodeAffinity(pod).matches(node)

    def events_to_register(self) -> list[ClusterEventWithHint]:
        def hint(pod: dict, old: dict | None, new: dict | None) -> bool:
            if not self._matches(pod, new):
                return QUEUE_SKIP
            return QUEUE if (old is None or not self._matches(pod, old)) else QUEUE_SKIP
        return [ClusterEventWithHint(
            ClusterEvent(NODE, ActionType.ADD | ActionType.UPDATE_NODE_LABEL), hint)]
