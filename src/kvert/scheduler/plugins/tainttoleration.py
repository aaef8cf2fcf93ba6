"""TaintToleration: Filter (NoSchedule/NoExecute) and Score (PreferNoSchedule), seed 001 §6.

Taint checks are per node in Kubernetes; here they are per *taint list*: the cache interns
every node's taints by content (``cache.taint_sig``), so a cycle asks the
``kvert.api.taints`` helpers once per distinct taint list present among the nodes (usually a
handful) and spreads the answers over all nodes with numpy. Answers are memoized per
(tolerations, taint list) across pods.

The Filter reason is kube-scheduler's current one, ``node(s) had untolerated taint(s)``
(Kubernetes 1.34+ keeps taint keys and values out of pod status and events). Set the
plugin arg ``reasonWithTaint: true`` (a kvert extension) for the older, more talkative
``node(s) had untolerated taint {key: value}``. The scheduling explanation annotation names
the taint either way.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from kvert.api.taints import count_intolerable_taints, find_untolerated_taint, taint_to_string
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
    default_normalize_score,
)
from kvert.scheduler.plugins.helper import LRU, canonical, per_signature
from kvert.scheduler.snapshot import NodeSet

REASON_REDACTED = "node(s) had untolerated taint(s)"


def taint_reason(taint: dict) -> str:
    return f"node(s) had untolerated taint {{{taint.get('key', '')}: {taint.get('value', '')}}}"


class TaintToleration(Plugin):
    name = "TaintToleration"

    def __init__(self, args: dict[str, Any] | None = None, handle: Handle | None = None):
        super().__init__(args, handle)
        self.reason_with_taint = bool(self.args.get("reasonWithTaint", False))
        self._untolerated = LRU(1024)   # tolerations key -> {sig: taint | None}
        self._prefer = LRU(1024)        # tolerations key -> {sig: count}

    @staticmethod
    def _tolerations(pod: dict) -> list:
        return (pod.get("spec") or {}).get("tolerations") or []

    def untolerated_taint(self, pod: dict, sig: int, cache) -> dict | None:
        tols = self._tolerations(pod)
        memo = self._untolerated.get_or_create(canonical(tols), dict)
        if sig not in memo:
            memo[sig] = find_untolerated_taint(cache.taint_sigs[sig], tols)
        return memo[sig]

    def filter(self, state: CycleState, pod: dict, nodes: NodeSet) -> FilterResult:
        n = len(nodes)
        cache = nodes.cache
        sigs = cache.taint_sig[nodes.rows]
        if not sigs.any():
            return FilterResult.ok(n)
        uniq, inverse = np.unique(sigs, return_inverse=True)
        inverse = inverse.reshape(-1)
        failed = np.zeros(n, bool)
        by_reason: dict[str, np.ndarray] = {}
        details: dict[int, dict] = {}
        for i, sig in enumerate(uniq):
            taint = self.untolerated_taint(pod, int(sig), cache) if sig else None
            if taint is None:
                continue
            mask = inverse == i
            failed |= mask
            reason = taint_reason(taint) if self.reason_with_taint else REASON_REDACTED
            if reason in by_reason:
                by_reason[reason] |= mask
            else:
                by_reason[reason] = mask
            details[int(sig)] = taint
        state.write("TaintToleration/untolerated", details)
        codes = np.where(failed, np.int8(Code.UNSCHEDULABLE_AND_UNRESOLVABLE), np.int8(0))
        return FilterResult(codes.astype(np.int8), list(by_reason.items()))

    def explain_node(self, state: CycleState, pod: dict, row: int, cache) -> str | None:
        """The untolerated taint of a rejected node, for the explanation."""
        taint = (state.get("TaintToleration/untolerated") or {}).get(int(cache.taint_sig[row]))
        return None if taint is None else f"untolerated taint {taint_to_string(taint)}"

    def score(self, state: CycleState, pod: dict, nodes: NodeSet) -> np.ndarray:
        cache = nodes.cache
        sigs = cache.taint_sig[nodes.rows]
        if not sigs.any():
            return np.zeros(len(sigs), np.int64)
        tols = self._tolerations(pod)
        memo = self._prefer.get_or_create(canonical(tols), dict)

        def count(sig: int) -> int:
            if sig not in memo:
                memo[sig] = count_intolerable_taints(cache.taint_sigs[sig], tols)
            return memo[sig]
        return per_signature(sigs, count, fast_zero=0)

    def normalize_score(self, state, pod, nodes, scores: np.ndarray) -> np.ndarray:
        return default_normalize_score(MAX_NODE_SCORE, True, scores)

    def events_to_register(self) -> list[ClusterEventWithHint]:
        def hint(pod: dict, old: dict | None, new: dict | None) -> bool:
            tols = self._tolerations(pod)
            was = old is None or find_untolerated_taint(
                (old.get("spec") or {}).get("taints"), tols) is not None
            now = new is not None and find_untolerated_taint(
                (new.get("spec") or {}).get("taints"), tols) is not None
            return QUEUE if (was and not now) else QUEUE_SKIP
        return [ClusterEventWithHint(
            ClusterEvent(NODE, ActionType.ADD | ActionType.UPDATE_NODE_TAINT), hint)]
