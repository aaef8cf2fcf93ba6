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

from kvert.scheduler.cache import pod_uid
from kvert.scheduler.framework import (
    POD, ActionType, ClusterEvent, ClusterEventWithHint, Code, CycleState, Plugin, QUEUE,
    QUEUE_SKIP, Status,
)

log = logging.getLogger(__name__)

DEFAULT_SCHEDULING_TIMEOUT = 5 * 60.0
WORKLOAD = "Workload"
WAITING_ON_PERMIT = "waiting for minCount pods from a gang to be waiting on permit"
WAITING_IN_QUEUE = "waiting for minCount pods from a gang to appear in scheduling queue"


def _go_quote(s: str) -> str:
    """Go's ``%q`` for the names that appear in messages."""
    return json.dumps(s, ensure_ascii=False)


def _ns(obj: dict) -> str:
    return (obj.get("metadata") or {}).get("namespace") or ""


def workload_ref(pod: dict | None) -> dict | None:
    ref = ((pod or {}).get("spec") or {}).get("workloadRef")
    return ref if isinstance(ref, dict) else None


GroupKey = tuple[str, str, str, str]


def group_key(namespace: str, ref: dict) -> GroupKey:
    """One instance of a pod group: the replica key splits a group into independent gangs."""
    return (namespace, ref.get("name") or "", ref.get("podGroup") or "",
            ref.get("podGroupReplicaKey") or "")


def same_group(a: dict, b: dict) -> bool:
    """``matchingWorkloadReference``: same namespace, workload, pod group and replica key."""
    ra, rb = workload_ref(a), workload_ref(b)
    return ra is not None and rb is not None and _ns(a) == _ns(b) \
        and group_key("", ra) == group_key("", rb)


def pod_group_policy(workload: dict, pod_group: str) -> dict | None:
    """The policy of the Workload's pod group ``pod_group`` (None: no such group)."""
    for group in (workload.get("spec") or {}).get("podGroups") or []:
        if isinstance(group, dict) and group.get("name") == pod_group:
            return group.get("policy") or {}
    return None


def gang_min_count(policy: dict) -> int | None:
    gang = policy.get("gang")
    if not isinstance(gang, dict):
        return None
    return int(gang.get("minCount") or 0)


class PodGroupInfo:
    """The runtime state of one pod group (upstream ``podGroupInfo``)."""

    __slots__ = ("all_pods", "assigned", "assumed", "deadline", "unscheduled")

    def __init__(self) -> None:
        self.all_pods: dict[str, dict] = {}
        self.unscheduled: set[str] = set()   # neither assumed nor assigned
        self.assumed: set[str] = set()       # past Reserve, waiting for the rest of the gang
        self.assigned: set[str] = set()      # bound
        self.deadline: float | None = None

    def add_pod(self, pod: dict) -> None:
        uid = pod_uid(pod)
        self.all_pods[uid] = pod
        if (pod.get("spec") or {}).get("nodeName"):
            self.assigned.add(uid)
        else:
            self.unscheduled.add(uid)

    def update_pod(self, old: dict | None, new: dict) -> None:
        uid = pod_uid(new)
        self.all_pods[uid] = new
        if not ((old or {}).get("spec") or {}).get("nodeName") \
                and (new.get("spec") or {}).get("nodeName"):
            self.assigned.add(uid)
            self.unscheduled.discard(uid)
            self.assumed.discard(uid)

    def delete_pod(self, uid: str) -> bool:
        """Forget the pod; True when the group is empty."""
        self.all_pods.pop(uid, None)
        self.unscheduled.discard(uid)
        self.assumed.discard(uid)
        self.assigned.discard(uid)
        return not self.all_pods

    def unscheduled_pods(self) -> list[dict]:
        return [self.all_pods[u] for u in self.unscheduled if u in self.all_pods]

    def assume_pod(self, uid: str) -> None:
        self.assumed.add(uid)
        self.unscheduled.discard(uid)

    def forget_pod(self, uid: str) -> None:
        self.unscheduled.add(uid)
        self.assumed.discard(uid)

    def scheduling_timeout(self, now: float) -> float:
        """Seconds left until the group times out; a new deadline once the last one passed,
        so a gang that timed out gets a fresh attempt."""
        if self.deadline is None or self.deadline < now:
            self.deadline = now + DEFAULT_SCHEDULING_TIMEOUT
        return self.deadline - now


class WorkloadManager:
    """Pod groups by (namespace, workload, pod group, replica key), fed with pod events."""

    def __init__(self) -> None:
        self.groups: dict[GroupKey, PodGroupInfo] = {}

    def add_pod(self, pod: dict) -> None:
        ref = workload_ref(pod)
        if ref is not None:
            self.groups.setdefault(group_key(_ns(pod), ref), PodGroupInfo()).add_pod(pod)

    def update_pod(self, old: dict | None, new: dict) -> None:
        ref = workload_ref(new)
        if ref is None:
            return
        info = self.groups.get(group_key(_ns(new), ref))
        if info is None or pod_uid(new) not in info.all_pods:
            self.add_pod(new)
        else:
            info.update_pod(old, new)

    def delete_pod(self, pod: dict) -> None:
        ref = workload_ref(pod)
        if ref is None:
            return
        key = group_key(_ns(pod), ref)
        info = self.groups.get(key)
        if info is not None and info.delete_pod(pod_uid(pod)):
            del self.groups[key]

    def pod_group_info(self, namespace: str, ref: dict) -> PodGroupInfo:
        key = group_key(namespace, ref)
        info = self.groups.get(key)
        if info is None:
            raise LookupError(f"pod group {key[2]!r} of workload {namespace}/{key[1]} "
                              f"(replica key {key[3]!r}) is not tracked by the scheduler")
        return info


class _CacheFeed:
    """Tells the manager of the pods the cache counts on nodes: bound pods join (or move to
    assigned in) their group; a bound pod that leaves the cache leaves its group. Assumed
    pods are Reserve's and Unreserve's business."""

    def __init__(self, manager: WorkloadManager, cache: Any):
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

    def __init__(self, args: dict | None = None, handle=None):
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
        namespace = _ns(pod)
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
            info = self.manager.pod_group_info(_ns(pod), ref)
        except LookupError as e:
            return Status.as_status(e)
        info.assume_pod(pod_uid(pod))
        return None

    def unreserve(self, state: CycleState, pod: dict, node: str) -> None:
        ref = workload_ref(pod)
        if ref is None:
            return
        try:
            info = self.manager.pod_group_info(_ns(pod), ref)
        except LookupError:
            log.exception("GangScheduling: unreserving %s/%s", _ns(pod),
                          (pod.get("metadata") or {}).get("name"))
            return
        info.forget_pod(pod_uid(pod))

    # ---- Permit -----------------------------------------------------------------------------

    def permit(self, state: CycleState, pod: dict, node: str) -> tuple[Status | None, float]:
        ref = workload_ref(pod)
        if ref is None:
            return None, 0.0
        namespace, name = _ns(pod), ref.get("name") or ""
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
        if ref is None or not isinstance(new, dict) or _ns(pod) != _ns(new) \
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
