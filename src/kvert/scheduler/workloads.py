"""The pods of every Workload pod group, kept by the scheduler from pod events.

GangScheduling reads them through ``handle.workload_manager``; the scheduler (and
``kvert schedule``) feeds them. Below the framework and the plugins, so the Handle can name
:class:`WorkloadManager` and the plugin can share it.
"""

from __future__ import annotations

from kvert.api.meta import namespace_of
from kvert.scheduler.podentry import pod_uid

DEFAULT_SCHEDULING_TIMEOUT = 5 * 60.0
WORKLOAD = "Workload"


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
    return ra is not None and rb is not None and namespace_of(a) == namespace_of(b) \
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
            self.groups.setdefault(group_key(namespace_of(pod), ref), PodGroupInfo()).add_pod(pod)

    def update_pod(self, old: dict | None, new: dict) -> None:
        ref = workload_ref(new)
        if ref is None:
            return
        info = self.groups.get(group_key(namespace_of(new), ref))
        if info is None or pod_uid(new) not in info.all_pods:
            self.add_pod(new)
        else:
            info.update_pod(old, new)

    def delete_pod(self, pod: dict) -> None:
        ref = workload_ref(pod)
        if ref is None:
            return
        key = group_key(namespace_of(pod), ref)
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


__all__ = ["DEFAULT_SCHEDULING_TIMEOUT", "WORKLOAD", "GroupKey", "PodGroupInfo", "WorkloadManager",
           "gang_min_count", "group_key", "pod_group_policy", "same_group", "workload_ref"]
