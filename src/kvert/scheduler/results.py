"""What the extension points return beyond a Status: PreFilter's node restriction,
PostFilter's nomination, a vectorized Filter's verdict, and why a pod fits nowhere."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from kvert.scheduler.status import Code, Status

MAX_NODE_SCORE = 100
MIN_NODE_SCORE = 0


@dataclass
class PreFilterResult:
    """Restricts the nodes worth filtering (``None`` node_names: all nodes)."""

    node_names: set[str] | None = None

    def all_nodes(self) -> bool:
        return self.node_names is None

    def merge(self, other: PreFilterResult | None) -> PreFilterResult:
        if other is None or other.all_nodes():
            return self
        if self.all_nodes():
            return PreFilterResult(set(other.node_names or ()))
        return PreFilterResult(set(self.node_names or ()) & set(other.node_names or ()))


@dataclass
class PostFilterResult:
    """``PostFilterResult``: the node the pod is nominated to; ``victims`` (a kvert addition,
    for explanations and ``kvert schedule``) are the pods preemption removes from it."""

    nominated_node_name: str = ""
    victims: list[dict] = field(default_factory=list)


class FilterResult:
    """One Filter plugin's verdict over a NodeSet.

    ``codes[i]`` is ``Code.SUCCESS`` (0) for a node that passes, else ``UNSCHEDULABLE`` or
    ``UNSCHEDULABLE_AND_UNRESOLVABLE``; ``reasons`` lists ``(reason, mask)`` pairs, a node
    carrying every reason whose mask is set for it (NodeResourcesFit reports "Insufficient
    cpu" and "Insufficient memory" together, as Kubernetes keeps all failure reasons).
    """

    __slots__ = ("codes", "reasons")

    def __init__(self, codes: np.ndarray, reasons: Sequence[tuple[str, np.ndarray]] = ()):
        self.codes = codes
        self.reasons = [(r, m) for r, m in reasons if m.any()]

    @classmethod
    def ok(cls, n: int) -> FilterResult:
        return cls(np.zeros(n, np.int8))

    @classmethod
    def reject(cls, failed: np.ndarray, reason: str,
               code: Code = Code.UNSCHEDULABLE_AND_UNRESOLVABLE) -> FilterResult:
        codes = np.where(failed, np.int8(code), np.int8(0)).astype(np.int8)
        return cls(codes, [(reason, failed)])

    @property
    def passed(self) -> np.ndarray:
        return self.codes == 0

    def node_reasons(self, i: int) -> list[str]:
        return [r for r, m in self.reasons if m[i]]


@dataclass
class NodeFilterRecord:
    """Where in a cycle a Filter plugin rejected nodes: global rows and its FilterResult."""

    plugin: str
    rows: np.ndarray
    result: FilterResult


@dataclass
class Diagnosis:
    """Why a pod fits nowhere (``framework.Diagnosis``), kept as arrays.

    ``records`` hold each Filter plugin's rejections (rows are the cache's node rows);
    ``absent_status`` is the status of nodes a PreFilterResult excluded.
    """

    num_all_nodes: int = 0
    records: list[NodeFilterRecord] = field(default_factory=list)
    absent_rows: np.ndarray | None = None
    absent_status: Status | None = None
    unschedulable_plugins: set[str] = field(default_factory=set)
    pending_plugins: set[str] = field(default_factory=set)
    pre_filter_msg: str = ""
    post_filter_msg: str = ""
    pre_filter_status: Status | None = None

    def add_plugin_status(self, status: Status) -> None:
        if not status.plugin:
            return
        if status.is_rejected:
            self.unschedulable_plugins.add(status.plugin)
        if status.code == Code.PENDING:
            self.pending_plugins.add(status.plugin)

    def reason_histogram(self, rows: np.ndarray | None = None) -> dict[str, int]:
        """Reason -> number of nodes carrying it (optionally only among ``rows``)."""
        counts: dict[str, int] = {}
        for rec in self.records:
            keep = None if rows is None else np.isin(rec.rows, rows)
            for reason, mask in rec.result.reasons:
                m = mask if keep is None else (mask & keep)
                c = int(np.count_nonzero(m))
                if c:
                    counts[reason] = counts.get(reason, 0) + c
        if self.absent_status is not None and self.absent_rows is not None and len(self.absent_rows):
            n = len(self.absent_rows) if rows is None else int(np.isin(self.absent_rows, rows).sum())
            for reason in self.absent_status.reasons:
                counts[reason] = counts.get(reason, 0) + n
        return counts

    def plugin_histogram(self) -> dict[str, dict[str, int]]:
        """Plugin -> reason -> nodes, for the explanation."""
        out: dict[str, dict[str, int]] = {}
        for rec in self.records:
            for reason, mask in rec.result.reasons:
                c = int(np.count_nonzero(mask))
                if c:
                    d = out.setdefault(rec.plugin, {})
                    d[reason] = d.get(reason, 0) + c
        if self.absent_status is not None and self.absent_rows is not None and len(self.absent_rows):
            d = out.setdefault(self.absent_status.plugin or "PreFilter", {})
            for reason in self.absent_status.reasons:
                d[reason] = d.get(reason, 0) + len(self.absent_rows)
        return out

    def rejected_rows(self) -> np.ndarray:
        parts = [rec.rows[rec.result.codes != 0] for rec in self.records]
        if self.absent_rows is not None:
            parts.append(self.absent_rows)
        return np.concatenate(parts) if parts else np.zeros(0, np.int64)

    def node_status(self, row: int) -> tuple[str, Code, list[str]] | None:
        """(plugin, code, reasons) of the node at ``row``, or None if it passed."""
        for rec in self.records:
            hit = np.nonzero(rec.rows == row)[0]
            if len(hit):
                i = int(hit[0])
                code = Code(int(rec.result.codes[i]))
                if code != Code.SUCCESS:
                    return rec.plugin, code, rec.result.node_reasons(i)
        if self.absent_rows is not None and self.absent_status is not None \
                and np.any(self.absent_rows == row):
            return self.absent_status.plugin, self.absent_status.code, list(self.absent_status.reasons)
        return None


NO_NODE_AVAILABLE_MSG = "0/{} nodes are available"


class FitError(Exception):
    """No node fits the pod; ``str()`` is kube-scheduler's FailedScheduling message.

    Format (``FitError.Error()``): ``0/N nodes are available: <PreFilter msg>.`` or, when
    PreFilter passed, the sorted histogram ``<count> <reason>`` joined by ", " and ended by
    ".", then `` <PostFilter msg>`` (e.g. DefaultPreemption's ``preemption: 0/N nodes are
    available: N Preemption is not helpful for scheduling.``).
    """

    def __init__(self, pod: dict, num_all_nodes: int, diagnosis: Diagnosis):
        self.pod = pod
        self.num_all_nodes = num_all_nodes
        self.diagnosis = diagnosis
        super().__init__()

    def __str__(self) -> str:
        msg = NO_NODE_AVAILABLE_MSG.format(self.num_all_nodes) + ":"
        d = self.diagnosis
        if d.pre_filter_msg:
            msg += f" {d.pre_filter_msg}."
        else:
            hist = d.reason_histogram()
            parts = sorted(f"{count} {reason}" for reason, count in hist.items())
            if parts:
                msg += " " + ", ".join(parts) + "."
        if d.post_filter_msg:
            msg += f" {d.post_filter_msg}"
        return msg


__all__ = ["MAX_NODE_SCORE", "MIN_NODE_SCORE", "NO_NODE_AVAILABLE_MSG", "Diagnosis", "FilterResult",
           "FitError", "NodeFilterRecord", "PostFilterResult", "PreFilterResult"]
