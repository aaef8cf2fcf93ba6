"""Counts of the pods on every node that match a query, kept up to date as pods come and go.

Inter-pod affinity and topology spreading both ask, every cycle, "how many pods in these
namespaces with these labels run on each node?". kube-scheduler answers by walking every
pod of every node in PreFilter (a cycle costs O(pods)); kvert keeps the answer per query as
a per-row array that the node cache updates when it accounts a pod on a row or takes it off
(:meth:`PodCounts.account`), so a cycle costs O(queries) and a query's first use one pass
over the pods. Queries are remembered in LRU order, at most :data:`MAX_QUERIES` of them.

A :class:`PodQuery` matches a pod as an ``AffinityTerm`` does (``Matches``): the pod's
namespace is one of ``namespaces`` or its namespace's labels match ``ns_selector``, and its
labels match ``selector``; ``skip_terminating`` leaves out pods being deleted, as
PodTopologySpread counts.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping
from typing import Any, NamedTuple

import numpy as np

from kvert.api.selectors import LabelSelector
from kvert.scheduler.podentry import PodEntry

MAX_QUERIES = 512


class PodQuery(NamedTuple):
    namespaces: frozenset[str]
    ns_selector: LabelSelector | None
    selector: LabelSelector
    skip_terminating: bool = False

    def matches_namespace(self, namespace: str, ns_labels: Callable[[str], Mapping[str, str]]) -> bool:
        if namespace in self.namespaces:
            return True
        return self.ns_selector is not None and self.ns_selector.matches(ns_labels(namespace))

    def matches(self, entry: PodEntry, ns_labels: Callable[[str], Mapping[str, str]]) -> bool:
        if self.skip_terminating and entry.terminating:
            return False
        return self.matches_namespace(entry.ns, ns_labels) and self.selector.matches(entry.labels)


class PodCounts:
    """Per-query, per-row counts of matching pods (see the module docstring)."""

    def __init__(self, capacity: int, ns_labels: Callable[[str], Mapping[str, str]]):
        self.capacity = capacity
        self._ns_labels = ns_labels
        self._counts: OrderedDict[PodQuery, np.ndarray] = OrderedDict()
        # the queries a pod can match, found by its namespace and label pairs: those that
        # require one of its key=value pairs, those that require none, those selecting namespaces
        self._by_pair: dict[tuple[str, str, str], set[PodQuery]] = {}
        self._by_ns: dict[str, set[PodQuery]] = {}
        self._ns_selecting: set[PodQuery] = set()
        # the accounted pods by (namespace, key, value) of each label, uid -> (pod, row): a
        # query's first count reads the pods having a pair it requires, not every pod (a
        # thousand Deployments' spreading queries outgrow the LRU, and every miss would
        # otherwise walk the whole cluster)
        self._pods_by_pair: dict[tuple[str, str, str], dict[str, tuple[PodEntry, int]]] = {}
        self._row_pods: dict[int, dict[str, PodEntry]] = {}

    def __len__(self) -> int:
        return len(self._counts)

    def counts(self, query: PodQuery, entries: Callable[[], Iterable[tuple[PodEntry, int]]]
               ) -> np.ndarray:
        """Per row, how many accounted pods match ``query`` (read-only: do not modify).
        ``entries`` yields (pod, row) for every accounted pod; it is used on a query's first use."""
        arr = self._counts.get(query)
        if arr is not None:
            self._counts.move_to_end(query)
            return arr
        arr = np.zeros(self.capacity, np.int64)
        for entry, row in self._candidates(query, entries):
            if query.matches(entry, self._ns_labels):
                arr[row] += 1
        self._track(query, arr)
        return arr

    def _candidates(self, query: PodQuery, entries: Callable[[], Iterable[tuple[PodEntry, int]]]
                    ) -> Iterable[tuple[PodEntry, int]]:
        """(pod, row) of every accounted pod that could match ``query``: those having a
        label pair it requires (a pod has one namespace and one value per key, so it is
        under one of them at most), or all of them."""
        required = query.selector.required_values()
        if required is None or query.ns_selector is not None:
            return entries()
        label, values = required
        by_pair = self._pods_by_pair
        return [found for ns in query.namespaces for v in values
                for found in by_pair.get((ns, label, v), {}).values()]

    def _keys(self, query: PodQuery) -> list[tuple[dict, Any]]:
        """The index entries (dict, key) that list ``query``."""
        required = query.selector.required_values()
        if required is None:
            return [(self._by_ns, ns) for ns in query.namespaces]
        label, values = required
        return [(self._by_pair, (ns, label, v)) for ns in query.namespaces for v in values]

    def _track(self, query: PodQuery, arr: np.ndarray) -> None:
        self._counts[query] = arr
        for index, key in self._keys(query):
            index.setdefault(key, set()).add(query)
        if query.ns_selector is not None:
            self._ns_selecting.add(query)
        while len(self._counts) > MAX_QUERIES:
            old, _ = self._counts.popitem(last=False)
            self._untrack(old)

    def _untrack(self, query: PodQuery) -> None:
        for index, key in self._keys(query):
            members = index.get(key)
            if members is not None:
                members.discard(query)
                if not members:
                    del index[key]
        self._ns_selecting.discard(query)

    def account(self, entry: PodEntry, row: int, sign: int) -> None:
        """The cache put ``entry`` on ``row`` (sign +1) or took it off (-1)."""
        if sign > 0:
            self._row_pods.setdefault(row, {})[entry.uid] = entry
            by_pair = self._pods_by_pair
            for label, value in entry.labels.items():
                by_pair.setdefault((entry.ns, label, value), {})[entry.uid] = (entry, row)
        else:
            on_row = self._row_pods.get(row)
            if on_row is not None and on_row.pop(entry.uid, None) is not None and not on_row:
                del self._row_pods[row]
            self._unpair(entry)
        if not self._counts:
            return
        candidates: set[PodQuery] = set(self._by_ns.get(entry.ns, ()))
        for pair in entry.labels.items():
            candidates.update(self._by_pair.get((entry.ns, *pair), ()))
        candidates.update(self._ns_selecting)
        for q in candidates:
            if q.matches(entry, self._ns_labels):
                self._counts[q][row] += sign

    def clear_row(self, row: int) -> None:
        for arr in self._counts.values():
            arr[row] = 0
        for entry in self._row_pods.pop(row, {}).values():
            self._unpair(entry)

    def _unpair(self, entry: PodEntry) -> None:
        by_pair = self._pods_by_pair
        for label, value in entry.labels.items():
            key = (entry.ns, label, value)
            bucket = by_pair.get(key)
            if bucket is not None and bucket.pop(entry.uid, None) is not None and not bucket:
                del by_pair[key]

    def grow(self, capacity: int) -> None:
        if capacity <= self.capacity:
            return
        for q, arr in list(self._counts.items()):
            b = np.zeros(capacity, np.int64)
            b[: len(arr)] = arr
            self._counts[q] = b
        self.capacity = capacity

    def namespaces_changed(self) -> None:
        """Namespace labels changed: queries selecting namespaces by label are recounted."""
        for q in list(self._ns_selecting):
            self._counts.pop(q, None)
            self._untrack(q)


def query_for_term(term: Mapping[str, Any], owner_namespace: str, *,
                   skip_terminating: bool = False) -> PodQuery:
    """The query of a ``PodAffinityTerm`` of a pod in ``owner_namespace``
    (``framework.NewAffinityTerm``): no namespaces and no namespaceSelector mean the owner's
    namespace; an empty namespaceSelector selects every namespace."""
    namespaces = frozenset(term.get("namespaces") or ())
    ns_sel_raw = term.get("namespaceSelector")
    ns_selector = None if ns_sel_raw is None else LabelSelector.from_dict(ns_sel_raw)
    if not namespaces and ns_selector is None:
        namespaces = frozenset((owner_namespace,))
    return PodQuery(namespaces, ns_selector, LabelSelector.from_dict(term.get("labelSelector")),
                    skip_terminating)


__all__ = ["MAX_QUERIES", "PodCounts", "PodQuery", "query_for_term"]
