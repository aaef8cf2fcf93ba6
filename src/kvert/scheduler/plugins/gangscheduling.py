"""GangScheduling: all-or-nothing scheduling of a Workload's gang pod groups (KEP-4671, alpha in
1.35 behind the GenericWorkload and GangScheduling gates, so not in the default profile).

A pod joins a pod group with ``spec.workloadRef {name, podGroup, podGroupReplicaKey}``: the
Workload (``scheduling.k8s.io/v1alpha1``) ``name`` in the pod's namespace lists its
``spec.podGroups[] {name, policy}``; a group's policy is ``basic: {}`` (pods schedule one by
one, this plugin does nothing) or ``gang: {minCount}``. Each replica key is a group of its
own. For a gang:

* **PreEnqueue** keeps the pod out of the active queue until the Workload exists and at
  least ``minCount`` pods of the group are known to the scheduler;
* **Reserve** marks the pod assumed in its group, **Unreserve** forgets it;
* **Permit** makes the pod Wait until ``minCount`` pods of the group are assumed or already
  bound; the pod that completes the quorum allows every waiting one, so they bind together.
  A waiting pod also activates the group's pods still in the queue. The group's deadline is
  set when its first pod waits (5 minutes, ``DefaultSchedulingTimeoutDuration``) and shared
  by all of them: when it passes, every waiting pod of the group is rejected, unreserved and
  requeued, and the next attempt gets a new deadline;
* queueing hints: a pod of the same group added, its Workload created.

What the scheduler knows of each group is a :class:`WorkloadManager` (upstream
``backend/workloadmanager``): per group the pods known, those unscheduled, assumed and
assigned. It should be fed by the scheduler's pod event handlers (one per scheduler, as
``handle.workload_manager``); until the scheduler does, the plugin keeps its own and feeds it
from what it sees: every unscheduled pod passes its PreEnqueue when it enters the queue, and
the cache tells it of every pod bound to or removed from a node (a cache pod listener). A
pending pod deleted before it was scheduled stays counted then.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Iterable
from typing import Any

from kvert.api.meta import namespace_of
from kvert.scheduler.framework import (
    POD,
    QUEUE,
    QUEUE_SKIP,
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    Code,
    CycleState,
    Handle,
    Plugin,
    Status,
)
from kvert.scheduler.podentry import pod_uid
from kvert.scheduler.reader import NodeCacheReader
from kvert.scheduler.workloads import (  # noqa: F401  (re-exported: the plugin's names)
    DEFAULT_SCHEDULING_TIMEOUT,
    WORKLOAD,
    GroupKey,
    PodGroupInfo,
    WorkloadManager,
    gang_min_count,
    group_key,
    pod_group_policy,
    same_group,
    workload_ref,
)

log = logging.getLogger(__name__)

WAITING_ON_PERMIT = "waiting for minCount pods from a gang to be waiting on permit"
WAITING_IN_QUEUE = "waiting for minCount pods from a gang to appear in scheduling queue"


def _go_quote(s: str) -> str:
    """Go's ``%q`` for the names that appear in messages."""
    return json.dumps(s, ensure_ascii=False)


class _CacheFeed:
    """Tells the manager of the pods the cache counts on nodes: bound pods join (or move to
    assigned in) their group; a bound pod that leaves the cache leaves its group. Assumed
    pods are Reserve's and Unreserve's business."""

    def __init__(self, manager: WorkloadManager, cache: NodeCacheReader):
        self.manager = manager
        self.cache = cache

    def account(self, entry: Any, row: int, sign: int) -> None:
        if entry.assumed or workload_ref(entry.pod) is None:
            return
        if sign > 0:
            self.manager.update_pod(None, entry.pod)
        elif self.cache.entry(entry.uid) is None:
            # taken off without a replacement: deleted (an update re-adds it right after)
            self.manager.delete_pod(entry.pod)

    def clear_row(self, row: int) -> None:
        pass    # a node went away; its pods are still pods

    def grow(self, capacity: int) -> None:
        pass


class GangScheduling(Plugin):
    name = "GangScheduling"

    def __init__(self, args: dict[str, Any] | None = None, handle: Handle | None = None):
        super().__init__(args, handle)
        shared = getattr(handle, "workload_manager", None)
        self.manager: WorkloadManager = shared if shared is not None else WorkloadManager()
        # without a manager fed by the scheduler, feed our own (see the module docstring)
        self._self_fed = shared is None
        if self._self_fed and handle is not None and hasattr(handle.cache, "add_pod_listener"):
            handle.cache.add_pod_listener(_CacheFeed(self.manager, handle.cache))

    # ---- helpers ----------------------------------------------------------------------------

    def _workload(self, namespace: str, name: str) -> dict | None:
        listers = getattr(self.handle, "listers", None)
        if listers is None:
            return None
        get = getattr(listers, "get", None)
        if callable(get):
            return get("workloads", name, namespace)
        return next((w for w in listers.list("workloads", namespace)
                     if (w.get("metadata") or {}).get("name") == name), None)

    def _now(self) -> float:
        clock = getattr(self.handle, "clock", None)
        if clock is not None:
            return clock.now()
        try:    # the time WaitingPod timers run on
            return asyncio.get_running_loop().time()
        except RuntimeError:    # no loop: nothing waits, any origin will do
            return 0.0

    def _activate(self, pods: list[dict]) -> None:
        activate = getattr(self.handle, "activate", None)
        if callable(activate) and pods:
            activate(pods)

    def _waiting_pod(self, uid: str) -> Any:
        fw = getattr(self.handle, "framework", None)
        return None if fw is None else fw.get_waiting_pod(uid)

    # ---- PreEnqueue -------------------------------------------------------------------------

    def pre_enqueue(self, pod: dict) -> Status | None:
        ref = workload_ref(pod)
        if ref is None:
            return None
        namespace = namespace_of(pod)
        if self._self_fed:
            self.manager.update_pod(None, pod)
        workload = self._workload(namespace, ref.get("name") or "")
        if workload is None:
            # the pod waits until its Workload is created
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                          f"waiting for pods's workload {_go_quote(ref.get('name') or '')} "
                          "to appear in scheduling queue")
        policy = pod_group_policy(workload, ref.get("podGroup") or "")
        if policy is None:
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                          f"pod group {_go_quote(ref.get('podGroup') or '')} doesn't exist for a "
                          f"workload {_go_quote((workload.get('metadata') or {}).get('name', ''))}")
        min_count = gang_min_count(policy)
        if min_count is None:
            return None
        try:
            info = self.manager.pod_group_info(namespace, ref)
        except LookupError as e:
            return Status.as_status(e)
        if len(info.all_pods) < min_count:
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, WAITING_IN_QUEUE)
        return None

    # ---- Reserve ----------------------------------------------------------------------------

    def reserve(self, state: CycleState, pod: dict, node: str) -> Status | None:
        ref = workload_ref(pod)
        if ref is None:
            return None
        try:
            info = self.manager.pod_group_info(namespace_of(pod), ref)
        except LookupError as e:
            return Status.as_status(e)
        info.assume_pod(pod_uid(pod))
        return None

    def unreserve(self, state: CycleState, pod: dict, node: str) -> None:
        ref = workload_ref(pod)
        if ref is None:
            return
        try:
            info = self.manager.pod_group_info(namespace_of(pod), ref)
        except LookupError:
            log.exception("GangScheduling: unreserving %s/%s", namespace_of(pod),
                          (pod.get("metadata") or {}).get("name"))
            return
        info.forget_pod(pod_uid(pod))

    # ---- Permit -----------------------------------------------------------------------------

    def permit(self, state: CycleState, pod: dict, node: str) -> tuple[Status | None, float]:
        ref = workload_ref(pod)
        if ref is None:
            return None, 0.0
        namespace, name = namespace_of(pod), ref.get("name") or ""
        workload = self._workload(namespace, name)
        if workload is None:
            # removed meanwhile: an error retries the pod once the Workload is back
            return Status(Code.ERROR, f"failed to get workload {namespace}/{name}: "
                                      f"workload.scheduling.k8s.io {_go_quote(name)} not found"), 0.0
        policy = pod_group_policy(workload, ref.get("podGroup") or "")
        if policy is None:
            return Status(Code.ERROR, f"pod group {_go_quote(ref.get('podGroup') or '')} doesn't "
                                      f"exist for a workload {_go_quote(name)}"), 0.0
        min_count = gang_min_count(policy)
        if min_count is None:
            return None, 0.0
        try:
            info = self.manager.pod_group_info(namespace, ref)
        except LookupError as e:
            return Status.as_status(e), 0.0
        assumed = set(info.assumed)
        if len(assumed | info.assigned) < min_count:
            # the rest of the gang may be waiting in the queue for this pod to be placed
            self._activate(info.unscheduled_pods())
            return Status(Code.WAIT, WAITING_ON_PERMIT), info.scheduling_timeout(self._now())
        for uid in assumed:
            waiting = self._waiting_pod(uid)
            if waiting is not None:
                waiting.allow(self.name)
        return None, 0.0

    # ---- queueing hints ---------------------------------------------------------------------

    def is_schedulable_after_pod_added(self, pod: dict, old: Any, new: Any) -> bool:
        return QUEUE if isinstance(new, dict) and same_group(pod, new) else QUEUE_SKIP

    def is_schedulable_after_workload_added(self, pod: dict, old: Any, new: Any) -> bool:
        ref = workload_ref(pod)
        if ref is None or not isinstance(new, dict) or namespace_of(pod) != namespace_of(new) \
                or ref.get("name") != (new.get("metadata") or {}).get("name"):
            return QUEUE_SKIP
        return QUEUE

    def events_to_register(self) -> list[ClusterEventWithHint]:
        # workloadRef and a Workload's pod groups are immutable: additions are all that matter
        return [
            ClusterEventWithHint(ClusterEvent(POD, ActionType.ADD),
                                 self.is_schedulable_after_pod_added),
            ClusterEventWithHint(ClusterEvent(WORKLOAD, ActionType.ADD),
                                 self.is_schedulable_after_workload_added),
        ]


def feed(manager: WorkloadManager, pods: Iterable[dict]) -> None:
    """Tell ``manager`` of pods that exist (a snapshot's, or an informer's initial list)."""
    for pod in pods:
        manager.update_pod(None, pod)


__all__ = [
    "DEFAULT_SCHEDULING_TIMEOUT",
    "WAITING_IN_QUEUE",
    "WAITING_ON_PERMIT",
    "GangScheduling",
    "PodGroupInfo",
    "WorkloadManager",
    "feed",
    "group_key",
    "pod_group_policy",
    "same_group",
    "workload_ref",
]
