"""Preemption's evaluator (``pkg/scheduler/framework/preemption``), as DefaultPreemption uses it.

When no node fits a pod, :meth:`Evaluator.preempt` looks for a node where removing pods of
lower priority would make room, as kube-scheduler 1.35 does:

1. **Eligibility** (the plugin's ``pod_eligible_to_preempt_others``): ``preemptionPolicy:
   Never`` pods never preempt; a pod whose earlier preemption is still terminating victims
   on its nominated node waits for them instead of preempting again.
2. **Potential nodes**: those the Filter plugins rejected as ``Unschedulable`` (an
   ``UnschedulableAndUnresolvable`` rejection -- a taint, node affinity -- cannot be cured
   by removing pods). They come from the cycle's Diagnosis as numpy arrays, in walk order.
3. **Dry run** (``DryRunPreemption``): from a random offset, node after node, the plugin's
   ``select_victims_on_node`` removes every lower-priority pod from a copy-on-write
   :class:`~kvert.scheduler.view.CacheView` (the plugins' cycle state follows through their
   PreFilterExtensions on a cloned state), checks the pod fits, then gives pods back, most
   important first, keeping as victims only those that do not fit back. The walk stops once
   it has ``numCandidates`` candidates and at least one violates no PodDisruptionBudget.
   Kubernetes runs the nodes in parallel goroutines; kvert runs them in order, which is
   Kubernetes' parallelism of 1.
4. **Selection** (``pickOneNodeForPreemption``): fewest PDB violations, then the lowest
   highest-victim priority, the smallest sum of priorities (each shifted by 2^31 so negative
   priorities count as small, not as rewards), the fewest victims, the latest start of the
   highest-priority victims, then the first candidate.
5. **Preparation** (``prepareCandidateAsync``, SchedulerAsyncPreemption, on by default
   since 1.33): only with an API client (the live scheduler), as a task outside the
   synchronous cycle -- lower-priority pods nominated to the node lose their nomination,
   waiting pods (Permit) among the victims are rejected, the others get the
   ``DisruptionTarget`` condition and are deleted gracefully, each with a ``Preempted``
   event. ``kvert schedule`` (no client) only reports the victims.

When no candidate exists, the status message is a FitError of the dry run's per-node
reasons, the nodes never tried counting as ``Preemption is not helpful for scheduling``:
``0/3 nodes are available: 1 Insufficient cpu, 2 No preemption victims found for incoming
pod.`` -- DefaultPreemption prefixes it with ``preemption: ``.
"""

from __future__ import annotations

import asyncio
import logging
import math
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from kvert.api.errors import ApiError
from kvert.api.meta import format_time, parse_time
from kvert.api.selectors import LabelSelector, SelectorError
from kvert.scheduler.algorithm import nominated_node_name
from kvert.scheduler.cache import NodeCache, PodEntry, pod_key
from kvert.scheduler.framework import (
    NO_NODE_AVAILABLE_MSG,
    Code,
    CycleState,
    Diagnosis,
    Framework,
    Handle,
    PostFilterResult,
    Status,
    _PluginError,
    is_success,
)
from kvert.scheduler.snapshot import NodeSet
from kvert.scheduler.view import CacheView

log = logging.getLogger(__name__)

PREEMPTION_NOT_HELPFUL = "Preemption is not helpful for scheduling"
NO_VICTIMS = "No preemption victims found for incoming pod"
DISRUPTION_TARGET = "DisruptionTarget"
REASON_PREEMPTION_BY_SCHEDULER = "PreemptionByScheduler"
# priorities are int32: shifting each by 2^31 makes every one non-negative in the sum
_PRIORITY_SHIFT = 2 ** 31


def pod_priority(pod: dict) -> int:
    """``corev1helpers.PodPriority``: ``spec.priority``, 0 when unset."""
    value = (pod.get("spec") or {}).get("priority")
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def start_time(pod: dict) -> float:
    """``GetPodStartTime``: ``status.startTime``; a pod not started yet counts as starting
    now, i.e. after every pod that has started."""
    text = (pod.get("status") or {}).get("startTime")
    if isinstance(text, str) and text:
        try:
            return parse_time(text)
        except ValueError:
            pass
    return math.inf


def importance_key(entry: PodEntry) -> tuple:
    """Sort key for ``MoreImportantPod`` (most important first): higher priority, then the
    earlier start. Kubernetes keeps equal pods in the node's order; kvert's node entries
    have none, so equal pods are ordered by namespace/name, to be repeatable."""
    return -entry.priority, start_time(entry.pod), entry.key


def terminating_by_preemption(pod: dict) -> bool:
    """``podTerminatingByPreemption``: being deleted, with ``DisruptionTarget=True`` set by
    the scheduler's preemption."""
    if not (pod.get("metadata") or {}).get("deletionTimestamp"):
        return False
    for cond in (pod.get("status") or {}).get("conditions") or ():
        if cond.get("type") == DISRUPTION_TARGET:
            return cond.get("status") == "True" and cond.get("reason") == REASON_PREEMPTION_BY_SCHEDULER
    return False


def aggregate_message(messages: Sequence[str]) -> str:
    """``utilerrors.NewAggregate(errs).Error()``: one message as is, several deduplicated in
    brackets."""
    if len(messages) == 1:
        return messages[0]
    unique = list(dict.fromkeys(messages))
    return unique[0] if len(unique) == 1 else "[" + ", ".join(unique) + "]"


# ---------------------------------------------------------------------------------------------
# PodDisruptionBudgets
# ---------------------------------------------------------------------------------------------


@dataclass
class Budget:
    """What preemption reads of a PodDisruptionBudget."""

    namespace: str
    selector: LabelSelector
    allowed: int
    disrupted: frozenset[str]

    @classmethod
    def parse_all(cls, pdbs: Iterable[dict]) -> list[Budget]:
        """The PDBs that can match a pod: a nil, empty or invalid selector matches nothing."""
        out = []
        for pdb in pdbs:
            try:
                sel = LabelSelector.from_dict((pdb.get("spec") or {}).get("selector"))
            except SelectorError:
                continue
            if sel is LabelSelector.everything() or sel is LabelSelector.nothing():
                continue
            status = pdb.get("status") or {}
            allowed = status.get("disruptionsAllowed")
            out.append(cls((pdb.get("metadata") or {}).get("namespace") or "", sel,
                           allowed if isinstance(allowed, int) else 0,
                           frozenset(status.get("disruptedPods") or ())))
        return out


def filter_pods_with_pdb_violation(entries: Sequence[PodEntry], budgets: Sequence[Budget]
                                   ) -> tuple[list[PodEntry], list[PodEntry]]:
    """``filterPodsWithPDBViolation``: (violating, non-violating), each in the given order.
    Every matching budget is charged one disruption per pod (pods it already lists as
    disrupted excepted); a pod violates when some budget goes below zero."""
    allowed = [b.allowed for b in budgets]
    violating: list[PodEntry] = []
    fine: list[PodEntry] = []
    for e in entries:
        violated = False
        if e.labels:
            name = (e.pod.get("metadata") or {}).get("name", "")
            for i, b in enumerate(budgets):
                if b.namespace != e.ns or not b.selector.matches(e.labels) or name in b.disrupted:
                    continue
                allowed[i] -= 1
                if allowed[i] < 0:
                    violated = True
        (violating if violated else fine).append(e)
    return violating, fine


# ---------------------------------------------------------------------------------------------
# Candidates
# ---------------------------------------------------------------------------------------------


@dataclass
class Candidate:
    """A node the pod fits on once ``victims`` (most important first) are gone."""

    node: str
    row: int
    victims: list[PodEntry]
    num_pdb_violations: int = 0


def _earliest_start_of_most_important(victims: Sequence[PodEntry]) -> float:
    """``GetEarliestPodStartTime``: the earliest start among the highest-priority victims."""
    top = max(v.priority for v in victims)
    return min(start_time(v.pod) for v in victims if v.priority == top)


def pick_one_node_for_preemption(candidates: Sequence[Candidate]) -> Candidate | None:
    """``pickOneNodeForPreemption`` with the default score functions (see the module
    docstring); each narrows the candidates to those with the best score, the first
    function to leave one decides."""
    if not candidates:
        return None
    scores = (
        lambda c: -c.num_pdb_violations,
        lambda c: -c.victims[0].priority,
        lambda c: -sum(v.priority + _PRIORITY_SHIFT for v in c.victims),
        lambda c: -len(c.victims),
        lambda c: _earliest_start_of_most_important(c.victims),
    )
    remaining = list(candidates)
    for score in scores:
        values = [score(c) for c in remaining]
        best = max(values)
        remaining = [c for c, v in zip(remaining, values) if v == best]
        if len(remaining) == 1:
            break
    return remaining[0]


def nodes_for_status_code(diagnosis: Diagnosis, order: np.ndarray, capacity: int,
                          code: Code) -> np.ndarray:
    """``NodesForStatusCode``: the rows (in walk order) whose status in the cycle has ``code``;
    rejections come from the Filter records (the first one to reject a node wins), then the
    status of nodes a PreFilter left out."""
    codes = np.zeros(capacity, np.int8)
    if diagnosis.absent_status is not None and diagnosis.absent_rows is not None \
            and len(diagnosis.absent_rows):
        codes[diagnosis.absent_rows] = int(diagnosis.absent_status.code)
    for rec in reversed(diagnosis.records):
        failed = rec.result.codes != 0
        codes[rec.rows[failed]] = rec.result.codes[failed]
    return order[codes[order] == int(code)]


def fit_error_message(num_all_nodes: int, statuses: dict[int, Status]) -> str:
    """``FitError.Error()`` over the dry run's node statuses; nodes without one are absent,
    with ``Preemption is not helpful for scheduling``."""
    counts: Counter = Counter()
    for st in statuses.values():
        counts.update(st.reasons)
    if len(statuses) < num_all_nodes:
        counts[PREEMPTION_NOT_HELPFUL] += num_all_nodes - len(statuses)
    msg = NO_NODE_AVAILABLE_MSG.format(num_all_nodes) + ":"
    parts = sorted(f"{n} {reason}" for reason, n in counts.items())
    if parts:
        msg += " " + ", ".join(parts) + "."
    return msg


# ---------------------------------------------------------------------------------------------
# The evaluator
# ---------------------------------------------------------------------------------------------


class PreemptionPolicy(Protocol):
    """What a PostFilter plugin decides for its Evaluator (upstream's ``preemption.Interface``)."""

    name: str

    def pod_eligible_to_preempt_others(self, pod: dict[str, Any], nominated_status: Status | None
                                       ) -> tuple[bool, str]:
        """Whether ``pod`` may preempt at all, and why not."""

    def get_offset_and_num_candidates(self, num_nodes: int) -> tuple[int, int]:
        """Where in the node order to start looking for candidates, and how many to find."""

    def select_victims_on_node(self, state: CycleState, pod: dict[str, Any], view: CacheView,
                               row: int, budgets: Sequence[Budget]
                               ) -> tuple[list[PodEntry], int, Status | None]:
        """The victims on the node at ``row`` (removed from ``view``), how many of them
        violate a PodDisruptionBudget, and why the node cannot help if it cannot."""


class Evaluator:
    """``preemption.Evaluator`` for one PostFilter plugin, whose policy it asks (see
    :class:`PreemptionPolicy`)."""

    def __init__(self, plugin: PreemptionPolicy, handle: Handle):
        self.plugin = plugin
        self.handle = handle
        # uids of preemptors whose victims' API calls are still running
        self.preempting: set[str] = set()

    def is_pod_running_preemption(self, uid: str) -> bool:
        return uid in self.preempting

    @property
    def cache(self) -> NodeCache:
        return self.handle.cache

    def preempt(self, state: CycleState, pod: dict, diagnosis: Diagnosis
                ) -> tuple[PostFilterResult | None, Status | None]:
        """``Evaluator.Preempt``. Returns (None, Unschedulable) when the pod may not preempt
        now (its nomination stays), (result without a node, Unschedulable) when preemption
        cannot help (the nomination is cleared), (None, Error), or (result, Success)."""
        cache = self.cache
        nominated = nominated_node_name(cache, pod)
        ok, msg = self.plugin.pod_eligible_to_preempt_others(
            pod, self._node_status(diagnosis, nominated) if nominated else None)
        if not ok:
            return None, Status(Code.UNSCHEDULABLE, msg)

        snap = cache.snapshot()
        if len(snap) == 0:
            return None, Status(Code.ERROR, "no nodes available")
        candidates, statuses, errors = self.find_candidates(state, pod, diagnosis, snap.order)
        if errors and not candidates:
            return None, Status(Code.ERROR, aggregate_message(errors))
        if not candidates:
            return PostFilterResult(""), Status(Code.UNSCHEDULABLE,
                                                fit_error_message(len(snap), statuses))
        best = self.select_candidate(candidates)
        if best is None or not best.node:
            return None, Status(Code.UNSCHEDULABLE, "no candidate node for preemption")
        if self.handle.client is not None:
            self.preempting.add((pod.get("metadata") or {}).get("uid", ""))
            self.handle.spawn(self.prepare_candidate_async(best, pod))
        return PostFilterResult(best.node, [v.pod for v in best.victims]), None

    def _node_status(self, diagnosis: Diagnosis, name: str) -> Status:
        row = self.cache.row_of.get(name)
        found = diagnosis.node_status(row) if row is not None else None
        if found is None:
            # a node the cycle has no status for reads as the absent nodes' default
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE)
        plugin, code, reasons = found
        return Status(code, *reasons, plugin=plugin)

    def find_candidates(self, state: CycleState, pod: dict, diagnosis: Diagnosis,
                        order: np.ndarray) -> tuple[list[Candidate], dict[int, Status], list[str]]:
        """``findCandidates``: the dry run over the nodes rejected as Unschedulable."""
        rows = nodes_for_status_code(diagnosis, order, self.cache.capacity, Code.UNSCHEDULABLE)
        if len(rows) == 0:
            return [], {}, []
        budgets = Budget.parse_all(self.handle.listers.list("poddisruptionbudgets"))
        offset, num = self.plugin.get_offset_and_num_candidates(len(rows))
        return self.dry_run_preemption(state, pod, rows, budgets, offset, num)

    def dry_run_preemption(self, state: CycleState, pod: dict, rows: np.ndarray,
                           budgets: Sequence[Budget], offset: int, num_candidates: int
                           ) -> tuple[list[Candidate], dict[int, Status], list[str]]:
        """``DryRunPreemption``: (candidates, the failed nodes' statuses by row, errors);
        candidates violating no PDB come first."""
        cache = self.cache
        fine: list[Candidate] = []
        violating: list[Candidate] = []
        statuses: dict[int, Status] = {}
        errors: list[str] = []
        n = len(rows)
        for i in range(n):
            row = int(rows[(offset + i) % n])
            name = cache.names[row] or ""
            victims, num_violations, st = self.plugin.select_victims_on_node(
                state.clone(), pod, CacheView(cache), row, budgets)
            if is_success(st) and victims:
                group = fine if num_violations == 0 else violating
                if len(group) < num_candidates:
                    group.append(Candidate(name, row, victims, num_violations))
                if fine and len(fine) + len(violating) >= num_candidates:
                    break
                continue
            if st is None or st.is_success:
                st = Status(Code.ERROR, f'expected at least one victim pod on node "{name}"')
            if st.code == Code.ERROR:
                errors.append(st.message())
            statuses[row] = st
        return fine + violating, statuses, errors

    def select_candidate(self, candidates: Sequence[Candidate]) -> Candidate | None:
        if len(candidates) <= 1:
            return candidates[0] if candidates else None
        return pick_one_node_for_preemption(candidates)

    # ---- the API side -------------------------------------------------------------------

    async def prepare_candidate_async(self, c: Candidate, pod: dict) -> None:
        """``prepareCandidateAsync``: victims already being deleted are left alone (when all
        are, nothing is done); lower-priority pods nominated to the node lose their
        nomination; the victims are preempted, all but the last together, the last once
        they succeeded."""
        try:
            await self._prepare_candidate(c, pod)
        finally:
            # from now on PreEnqueue lets the preemptor in; a victim's deletion requeues it
            self.preempting.discard((pod.get("metadata") or {}).get("uid", ""))

    async def _prepare_candidate(self, c: Candidate, pod: dict) -> None:
        victims = [v.pod for v in c.victims
                   if not (v.pod.get("metadata") or {}).get("deletionTimestamp")]
        if not victims:
            return
        await self._clear_lower_priority_nominations(pod, c.node)
        results = await asyncio.gather(*(self.preempt_pod(c, pod, v) for v in victims[:-1]),
                                       return_exceptions=True)
        failed = [r for r in results if isinstance(r, BaseException)]
        for err in failed:
            log.error("preempting a victim for %s failed: %s", pod_key(pod), err)
        if failed:
            return
        try:
            await self.preempt_pod(c, pod, victims[-1])
        except (ApiError, OSError) as err:
            log.error("preempting the last victim for %s failed: %s", pod_key(pod), err)

    async def _clear_lower_priority_nominations(self, pod: dict, node: str) -> None:
        """``getLowerPriorityNominatedPods`` + ``clearNominatedNodeName``: they may not fit
        next to the preemptor any more, so they look for a place again."""
        prio = pod_priority(pod)
        client = self.handle.client
        if client is None:   # preemption acts on the cluster only with a client (preempt())
            return
        for other in self.cache.nominated_pods(node):
            if pod_priority(other) >= prio:
                continue
            self.cache.delete_nominated(other)
            if not (other.get("status") or {}).get("nominatedNodeName"):
                continue
            meta = other.get("metadata") or {}
            try:
                await client.patch("pods", meta.get("name", ""),
                                   {"status": {"nominatedNodeName": None}}, "strategic",
                                   namespace=meta.get("namespace", ""), subresource="status")
            except (ApiError, OSError) as err:
                log.warning("cannot clear the nominated node of %s: %s", pod_key(other), err)

    async def preempt_pod(self, c: Candidate, preemptor: dict, victim: dict) -> None:
        """``PreemptPod``: reject a victim waiting at Permit, otherwise mark it
        ``DisruptionTarget`` and delete it (gracefully); then the ``Preempted`` event."""
        fw: Framework | None = self.handle.framework
        meta = victim.get("metadata") or {}
        uid, name, ns = meta.get("uid", ""), meta.get("name", ""), meta.get("namespace", "")
        if fw is not None and fw.get_waiting_pod(uid) is not None:
            fw.reject_waiting_pod(uid, self.plugin.name, "preempted")
        else:
            client = self.handle.client
            if client is None:   # as above: only a live scheduler deletes victims
                return
            scheduler = (preemptor.get("spec") or {}).get("schedulerName") or "default-scheduler"
            cond = {"type": DISRUPTION_TARGET, "status": "True",
                    "reason": REASON_PREEMPTION_BY_SCHEDULER,
                    "message": f"{scheduler}: preempting to accommodate a higher priority pod"}
            if meta.get("generation"):
                cond["observedGeneration"] = meta["generation"]
            try:
                if _condition_changes(victim, cond):
                    now = self.handle.clock.now() if self.handle.clock is not None else 0.0
                    cond["lastTransitionTime"] = format_time(now)
                    await client.patch("pods", name, {"status": {"conditions": [cond]}},
                                       "strategic", namespace=ns, subresource="status")
                await client.delete("pods", name, namespace=ns)
            except ApiError as err:
                if err.code == 404:
                    return   # already gone: nothing to preempt, no event
                raise
        recorder = self.handle.recorder
        if recorder is not None:
            uid_of = (preemptor.get("metadata") or {}).get("uid", "")
            await recorder.record(victim, "Normal", "Preempted",
                                  f"Preempted by pod {uid_of} on node {c.node}")


def _condition_changes(pod: dict, cond: dict) -> bool:
    """``UpdatePodCondition``'s answer: whether the pod lacks this exact condition."""
    for old in (pod.get("status") or {}).get("conditions") or ():
        if old.get("type") == cond["type"]:
            return any(old.get(k) != cond.get(k)
                       for k in ("status", "reason", "message", "observedGeneration"))
    return True


def fits_on_node(fw: Framework, state: CycleState, pod: dict, view: CacheView,
                 row: int) -> Status | None:
    """``RunFilterPluginsWithNominatedPods`` on one node of ``view``: None when the pod fits,
    else the rejecting plugin's status (or an Error)."""
    diagnosis = Diagnosis()
    try:
        ok = fw.run_filters(state, pod, NodeSet(view, np.array([row], np.int64)), diagnosis)
    except _PluginError as e:
        return Status(Code.ERROR, e.status.message(), plugin=e.status.plugin)
    if len(ok):
        return None
    found = diagnosis.node_status(row)
    if found is None:   # pragma: no cover - a node that failed has a record
        return Status(Code.UNSCHEDULABLE)
    plugin, code, reasons = found
    return Status(code, *reasons, plugin=plugin)


__all__ = [
    "NO_VICTIMS",
    "PREEMPTION_NOT_HELPFUL",
    "Budget",
    "Candidate",
    "Evaluator",
    "aggregate_message",
    "filter_pods_with_pdb_violation",
    "fit_error_message",
    "fits_on_node",
    "importance_key",
    "nodes_for_status_code",
    "pick_one_node_for_preemption",
    "pod_priority",
    "start_time",
    "terminating_by_preemption",
]
