"""DefaultPreemption (PostFilter): make room for a pod by preempting lower-priority pods.

Seed 001 §12 ("プリエンプション"); kube-scheduler 1.35's ``defaultpreemption`` plugin on top of
the evaluator in :mod:`kvert.scheduler.preemption` (which explains the steps). This module
holds the plugin's policy, as upstream's plugin implements ``preemption.Interface``:

* **Args** ``minCandidateNodesPercentage`` (default 10, 0..100) and
  ``minCandidateNodesAbsolute`` (default 100, >= 0; not both 0): the dry run stops after
  ``max(percentage of the potential nodes, absolute)`` candidates (at most all of them),
  starting at a random node.
* **Eligibility**: ``preemptionPolicy: Never`` -> ``not eligible due to
  preemptionPolicy=Never.``; a pod nominated to a node where a lower-priority pod is still
  terminating because the scheduler preempted it -> ``not eligible due to a terminating
  pod on the nominated node.`` (unless that node is now UnschedulableAndUnresolvable).
* **Victims on a node** (``SelectVictimsOnNode``): every pod of lower priority is a
  potential victim (none: ``No preemption victims found for incoming pod``,
  UnschedulableAndUnresolvable); they are given back, PDB-violating ones first, each
  group most important first (higher priority, then earlier start), and stay victims only
  if the pod no longer fits with them.

The status message, when not empty, is prefixed with ``preemption: `` and becomes the tail
of the FailedScheduling message.

SchedulerAsyncPreemption (1.35 default): the victims' API calls run as a task after the
cycle (``handle.spawn``); while it runs, PreEnqueue keeps the preemptor out of the active
queue ("waiting for the preemption for this pod to be finished"); once it has ended, a
deleted pod (a victim gone) requeues it. Eligibility keeps it from preempting again while
its victims terminate.
The random offset comes from a generator seeded per plugin instance, so ``kvert schedule``
runs are repeatable.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

from kvert.scheduler.algorithm import nominated_node_name
from kvert.scheduler.cache import PodEntry
from kvert.scheduler.framework import (
    ASSIGNED_POD,
    QUEUE,
    QUEUE_SKIP,
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    Code,
    CycleState,
    Diagnosis,
    Handle,
    Plugin,
    PostFilterResult,
    Status,
)
from kvert.scheduler.preemption import (
    NO_VICTIMS,
    Budget,
    Evaluator,
    filter_pods_with_pdb_violation,
    fits_on_node,
    importance_key,
    pod_priority,
    terminating_by_preemption,
)
from kvert.scheduler.view import CacheView

DEFAULT_MIN_CANDIDATE_NODES_PERCENTAGE = 10
DEFAULT_MIN_CANDIDATE_NODES_ABSOLUTE = 100
PREEMPT_NEVER = "Never"


def validate_args(args: dict) -> tuple[int, int]:
    """``ValidateDefaultPreemptionArgs`` (after defaulting); raises ValueError naming the
    field(s), several errors aggregated as Kubernetes prints them."""
    pct = args.get("minCandidateNodesPercentage", DEFAULT_MIN_CANDIDATE_NODES_PERCENTAGE)
    absolute = args.get("minCandidateNodesAbsolute", DEFAULT_MIN_CANDIDATE_NODES_ABSOLUTE)
    for field, value in (("minCandidateNodesPercentage", pct),
                         ("minCandidateNodesAbsolute", absolute)):
        if not isinstance(value, int) or isinstance(value, bool):
            raise ValueError(f"{field}: Invalid value: {value!r}: must be an integer")  # noqa: TRY004 - config errors are ValueErrors
    errs = []
    if not 0 <= pct <= 100:
        errs.append(f"minCandidateNodesPercentage: Invalid value: {pct}: not in valid range [0, 100]")
    if absolute < 0:
        errs.append(f"minCandidateNodesAbsolute: Invalid value: {absolute}: "
                    "not in valid range [0, inf)")
    if pct == 0 and absolute == 0:
        errs.append("minCandidateNodesPercentage: Invalid value: 0: cannot be zero at the same "
                    "time as minCandidateNodesAbsolute")
        errs.append("minCandidateNodesAbsolute: Invalid value: 0: cannot be zero at the same "
                    "time as minCandidateNodesPercentage")
    if errs:
        raise ValueError(errs[0] if len(errs) == 1 else "[" + ", ".join(errs) + "]")
    return pct, absolute


class DefaultPreemption(Plugin):
    name = "DefaultPreemption"

    # preempts for a Deferred in-place resize too (KEP-5836's ResizeInterestedPlugin)
    handles_deferred_resize = True

    def __init__(self, args: dict[str, Any] | None = None, handle: Handle | None = None):
        super().__init__(args, handle)
        self.min_percentage, self.min_absolute = validate_args(self.args)
        self.rng = random.Random(0)
        self.evaluator = Evaluator(self, handle) if handle is not None else None

    # ---- PreEnqueue ---------------------------------------------------------------------

    def pre_enqueue(self, pod: dict) -> Status | None:
        uid = (pod.get("metadata") or {}).get("uid", "")
        if self.evaluator is not None and self.evaluator.is_pod_running_preemption(uid):
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                          "waiting for the preemption for this pod to be finished")
        return None

    # ---- PostFilter ---------------------------------------------------------------------

    def post_filter(self, state: CycleState, pod: dict, diagnosis: Diagnosis
                    ) -> tuple[PostFilterResult | None, Status | None]:
        if self.evaluator is None:
            raise RuntimeError(f"plugin {self.name} was built without a framework handle")
        result, st = self.evaluator.preempt(state, pod, diagnosis)
        if st is not None and st.message():
            return result, Status(st.code, "preemption: " + st.message(), plugin=self.name)
        return result, st

    def events_to_register(self) -> list[ClusterEventWithHint]:
        """A deleted pod matters to a preemptor this plugin holds at PreEnqueue only once its
        preemption's API calls are over (then its victims' deletions requeue it); requeueing
        pods other plugins rejected is up to those plugins."""
        def hint(pod: dict, old: dict | None, new: dict | None) -> bool:
            uid = (pod.get("metadata") or {}).get("uid", "")
            running = self.evaluator is not None and self.evaluator.is_pod_running_preemption(uid)
            return QUEUE_SKIP if running else QUEUE
        return [ClusterEventWithHint(ClusterEvent(ASSIGNED_POD, ActionType.DELETE), hint)]

    # ---- preemption.Interface -------------------------------------------------------------

    def calculate_num_candidates(self, num_nodes: int) -> int:
        n = num_nodes * self.min_percentage // 100
        return min(max(n, self.min_absolute), num_nodes)

    def get_offset_and_num_candidates(self, num_nodes: int) -> tuple[int, int]:
        return self.rng.randrange(num_nodes), self.calculate_num_candidates(num_nodes)

    def pod_eligible_to_preempt_others(self, pod: dict, nominated_status: Status | None
                                       ) -> tuple[bool, str]:
        if (pod.get("spec") or {}).get("preemptionPolicy") == PREEMPT_NEVER:
            return False, "not eligible due to preemptionPolicy=Never."
        nominated = nominated_node_name(self.bound_handle.cache, pod)
        if nominated:
            # a node the filters now reject for good is worth preempting elsewhere for
            if nominated_status is not None and \
                    nominated_status.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
                return True, ""
            prio = pod_priority(pod)
            for e in self.bound_handle.cache.node_entries(nominated):
                if e.priority < prio and terminating_by_preemption(e.pod):
                    return False, "not eligible due to a terminating pod on the nominated node."
        return True, ""

    def select_victims_on_node(self, state: CycleState, pod: dict, view: CacheView, row: int,
                               budgets: Sequence[Budget]
                               ) -> tuple[list[PodEntry], int, Status | None]:
        """``SelectVictimsOnNode`` on a view and a state of its own (both are changed)."""
        fw = self.bound_handle.bound_framework
        name = view.names[row] or ""
        node = view.node_objs[row] or {}
        prio = pod_priority(pod)
        potential = [e for e in view.node_entries(name) if e.priority < prio]
        for e in potential:
            view.remove_pod(e)
            st = fw.run_pre_filter_extension_remove_pod(state, pod, e.pod, node)
            if st is not None and not st.is_success:
                return [], 0, Status(Code.ERROR, st.message())
        if not potential:
            return [], 0, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, NO_VICTIMS)
        # Preemption does not help when the pod does not fit even without them (it does not
        # try to satisfy inter-pod affinity to a victim, as upstream decided).
        st = fits_on_node(fw, state, pod, view, row)
        if st is not None:
            return [], 0, st
        potential.sort(key=importance_key)
        violating, fine = filter_pods_with_pdb_violation(potential, budgets)
        victims: list[PodEntry] = []
        num_violating = 0
        for group, counts in ((violating, True), (fine, False)):
            for e in group:
                view.add_pod(e.pod, name)
                st = fw.run_pre_filter_extension_add_pod(state, pod, e.pod, node)
                if st is not None and not st.is_success:
                    return [], 0, Status(Code.ERROR, st.message())
                if fits_on_node(fw, state, pod, view, row) is None:
                    continue   # reprieved (a filter error counts as not fitting, as upstream)
                view.remove_pod(e)
                st = fw.run_pre_filter_extension_remove_pod(state, pod, e.pod, node)
                if st is not None and not st.is_success:
                    return [], 0, Status(Code.ERROR, st.message())
                victims.append(e)
                num_violating += counts
        if violating and fine:
            victims.sort(key=importance_key)
        return victims, num_violating, None


__all__ = ["DEFAULT_MIN_CANDIDATE_NODES_ABSOLUTE", "DEFAULT_MIN_CANDIDATE_NODES_PERCENTAGE",
           "DefaultPreemption", "validate_args"]
