"""The ReplicaSet controller (``pkg/controller/replicaset``): keep ``spec.replicas`` pods.

For each ReplicaSet key a sync:

1. claims pods: active pods (not terminal, not being deleted) of its namespace that it
   controls (``ownerReferences`` with ``controller: true`` and its uid) and still selects;
   orphans its selector matches are adopted (after re-reading the ReplicaSet to be sure it
   is not being deleted); pods it controls but no longer selects are released;
2. when its expectations are met and it is not being deleted, creates the missing pods
   from the template (named ``<rs>-<5 random>``, in "slow start" batches of 1, 2, 4, ...
   that stop at the first error; at most 500 per sync) or deletes the surplus, choosing
   pods in Kubernetes' order (unassigned, pending, not ready, lower deletion cost,
   doubled-up, recently ready, restarting, newest first);
3. writes ``status``: replicas, fullyLabeledReplicas, readyReplicas, availableReplicas
   (ready for ``minReadySeconds``), observedGeneration, and the ReplicaFailure condition
   (FailedCreate / FailedDelete) while creating or deleting fails.

So a deleted pod, a pod that failed (phase Failed, including pods the node agent evicted)
and a pod evicted through the API are all replaced: they stop counting as active. As in
Kubernetes, failed pods are left for the pod garbage collector (or the ReplicaSet's
deletion) to remove. Events: SuccessfulCreate "Created pod: NAME", SuccessfulDelete
"Deleted pod: NAME", FailedCreate "Error creating: ...", FailedDelete "Error deleting: ...".
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from kvert.api.errors import ApiError, Conflict, NotFound
from kvert.api.meta import deep_copy, format_time, labels_of
from kvert.api.selectors import LabelSelector, SelectorError
from kvert.client.base import Client
from kvert.client.events import EventRecorder
from kvert.clock import Clock
from kvert.controllers.base import (
    CONTROLLER_INDEX,
    NAMESPACE_INDEX,
    ORPHAN_INDEX,
    Controller,
    Expectations,
    InformerFactory,
    controller_ref_of,
    index_controller_uid,
    index_namespace,
    index_orphan_namespace,
    object_key,
    safe_handler,
    split_key,
)
from kvert.controllers.claims import candidates, claim
from kvert.controllers.podcontrol import create_pod, delete_pod
from kvert.controllers.util import (
    available_at,
    deletion_order,
    is_deleting,
    is_pod_active,
    is_pod_available,
    is_pod_ready,
    pod_from_template,
    pod_key,
    prune_empty,
    spec_replicas,
    uid_of,
)

log = logging.getLogger(__name__)

RS = "apps/replicasets"
BURST_REPLICAS = 500
SLOW_START_INITIAL_BATCH_SIZE = 1
STATUS_UPDATE_RETRIES = 1
REPLICA_FAILURE = "ReplicaFailure"


async def slow_start_batch(count: int, initial_batch_size: int,
                           fn: Callable[[], Awaitable[Any]]) -> tuple[int, ApiError | None]:
    """Call ``fn`` ``count`` times in batches of 1, 2, 4, ... run concurrently; stop after the
    first batch with an error. Returns (successes, first error)."""
    remaining, successes = count, 0
    batch = min(remaining, initial_batch_size)
    while batch > 0:
        results = await asyncio.gather(*(fn() for _ in range(batch)), return_exceptions=True)
        errors = [r for r in results if isinstance(r, BaseException)]
        for e in errors:
            if not isinstance(e, ApiError):
                raise e
        successes += batch - len(errors)
        if errors:
            return successes, errors[0]  # type: ignore[return-value]
        remaining -= batch
        batch = min(2 * batch, remaining)
    return successes, None


class ReplicaSetController(Controller):
    """Also the ReplicationController controller (upstream runs RCs through this code too):
    a subclass names the resource, kind, API groups and selector form."""

    name = "replicaset-controller"
    resource = RS
    kind = "ReplicaSet"
    groups: tuple[str, ...] = ("apps", "extensions")

    @staticmethod
    def selector_of(owner: dict) -> LabelSelector:
        return LabelSelector.from_dict((owner.get("spec") or {}).get("selector"))

    def __init__(self, client: Client, clock: Clock, *, informers: InformerFactory | None = None,
                 workers: int = 1, burst_replicas: int = BURST_REPLICAS):
        super().__init__(client, clock, informers=informers, workers=workers)
        self.burst_replicas = burst_replicas
        self.expectations = Expectations(clock)
        self.recorder = EventRecorder(client, clock, self.name)
        self.rs_informer = self.use(self.resource)
        self.pod_informer = self.use("pods")
        self.rs_informer.add_index(NAMESPACE_INDEX, index_namespace)
        self.rs_informer.add_index(CONTROLLER_INDEX, index_controller_uid)
        self.pod_informer.add_index(NAMESPACE_INDEX, index_namespace)
        self.pod_informer.add_index(CONTROLLER_INDEX, index_controller_uid)
        self.pod_informer.add_index(ORPHAN_INDEX, index_orphan_namespace)
        self.rs_informer.add_handlers(safe_handler(self._add_rs), safe_handler(self._update_rs),
                                      safe_handler(self._delete_rs))
        self.pod_informer.add_handlers(safe_handler(self._add_pod), safe_handler(self._update_pod),
                                       safe_handler(self._delete_pod))

    # ---- informer handlers -------------------------------------------------------------

    def _add_rs(self, rs: dict) -> None:
        self.enqueue(object_key(rs))

    def _update_rs(self, old: dict, cur: dict) -> None:
        if uid_of(old) != uid_of(cur):
            self._delete_rs(old)
        self.enqueue(object_key(cur))

    def _delete_rs(self, rs: dict) -> None:
        key = object_key(rs)
        self.expectations.delete(key)
        self.enqueue(key)

    def _resolve(self, namespace: str, ref: dict | None) -> dict | None:
        """The ReplicaSet a controllerRef points at, if it is one of ours and still exists."""
        api_version = (ref or {}).get("apiVersion") or ""
        if ref is None or ref.get("kind") != self.kind or \
                (api_version.split("/")[0] if "/" in api_version else "") not in self.groups:
            return None
        rs = self.rs_informer.get(ref.get("name", ""), namespace)
        if rs is None or uid_of(rs) != ref.get("uid"):
            return None
        return rs

    def _selecting(self, pod: dict) -> list[dict]:
        """ReplicaSets whose selector matches an orphan pod (``GetPodReplicaSets``)."""
        namespace = pod["metadata"].get("namespace", "")
        labels = labels_of(pod)
        found = []
        for rs in self.rs_informer.by_index(NAMESPACE_INDEX, namespace):
            try:
                selector = self.selector_of(rs)
            except SelectorError:
                continue
            if not selector.empty and selector.matches(labels):
                found.append(rs)
        return found

    def _add_pod(self, pod: dict) -> None:
        if is_deleting(pod):
            # A restarted controller may first see a pod already being deleted.
            self._delete_pod(pod)
            return
        namespace = pod["metadata"].get("namespace", "")
        ref = controller_ref_of(pod)
        if ref is not None:
            rs = self._resolve(namespace, ref)
            if rs is not None:
                key = object_key(rs)
                self.expectations.creation_observed(key)
                self.enqueue(key)
            return
        for rs in self._selecting(pod):
            self.enqueue(object_key(rs))

    def _update_pod(self, old: dict, cur: dict) -> None:
        if old["metadata"].get("resourceVersion") == cur["metadata"].get("resourceVersion"):
            return
        namespace = cur["metadata"].get("namespace", "")
        labels_changed = labels_of(old) != labels_of(cur)
        if is_deleting(cur):
            self._delete_pod(cur)
            if labels_changed:
                self._delete_pod(old)
            return
        cur_ref, old_ref = controller_ref_of(cur), controller_ref_of(old)
        ref_changed = cur_ref != old_ref
        if ref_changed and old_ref is not None:
            rs = self._resolve(namespace, old_ref)
            if rs is not None:
                self.enqueue(object_key(rs))
        if cur_ref is not None:
            rs = self._resolve(namespace, cur_ref)
            if rs is not None:
                self.enqueue(object_key(rs))
                min_ready = int((rs.get("spec") or {}).get("minReadySeconds") or 0)
                if min_ready and not is_pod_ready(old) and is_pod_ready(cur):
                    self.enqueue_after(object_key(rs), min_ready + 0.001)
            return
        if labels_changed or ref_changed:
            for rs in self._selecting(cur):
                self.enqueue(object_key(rs))

    def _delete_pod(self, pod: dict) -> None:
        namespace = pod["metadata"].get("namespace", "")
        rs = self._resolve(namespace, controller_ref_of(pod))
        if rs is None:
            return
        key = object_key(rs)
        self.expectations.deletion_observed(key, pod_key(pod))
        self.enqueue(key)

    # ---- sync ----------------------------------------------------------------------------

    async def sync(self, key: str) -> None:
        namespace, name = split_key(key)
        rs = self.rs_informer.get(name, namespace)
        if rs is None:
            self.expectations.delete(key)
            return
        needs_sync = self.expectations.satisfied(key)
        try:
            selector = self.selector_of(rs)
        except SelectorError as e:
            log.warning("%s: invalid selector of %s: %s", self.name, key, e)
            return
        pods = [p for p in candidates(self.pod_informer, rs) if is_pod_active(p)]
        pods = await claim(self.client, rs, self.resource, selector, pods, "pods")
        manage_error: ApiError | None = None
        if needs_sync and not is_deleting(rs):
            try:
                await self._manage_replicas(pods, rs)
            except ApiError as e:
                manage_error = e
        now = self.clock.now()
        status = calculate_status(rs, pods, manage_error, now, format_time(now))
        updated = await self._update_status(rs, status)
        if manage_error is None and updated is not None:
            self._requeue_for_availability(key, updated, pods, now)
        if manage_error is not None:
            raise manage_error

    def _requeue_for_availability(self, key: str, rs: dict, pods: list[dict], now: float) -> None:
        """Sync again when the next ready pod has been ready for minReadySeconds."""
        min_ready = int((rs.get("spec") or {}).get("minReadySeconds") or 0)
        if not min_ready:
            return
        pending = [t for p in pods if not is_pod_available(p, min_ready, now)
                   for t in [available_at(p, min_ready)] if t is not None]
        if pending:
            self.enqueue_after(key, max(0.0, min(pending) - now) + 0.001)

    async def _manage_replicas(self, pods: list[dict], rs: dict) -> None:
        key = object_key(rs)
        diff = len(pods) - spec_replicas(rs)
        if diff < 0:
            count = min(-diff, self.burst_replicas)
            self.expectations.expect_creations(key, count)
            log.info("%s: %s has %d of %d pods, creating %d", self.name, key, len(pods),
                     spec_replicas(rs), count)
            successes, error = await slow_start_batch(count, SLOW_START_INITIAL_BATCH_SIZE,
                                                      lambda: self._create_pod(rs))
            for _ in range(count - successes):
                # never attempted or failed: the informer will not see these
                self.expectations.creation_observed(key)
            if error is not None:
                raise error
        elif diff > 0:
            count = min(diff, self.burst_replicas)
            log.info("%s: %s has %d of %d pods, deleting %d", self.name, key, len(pods),
                     spec_replicas(rs), count)
            victims = deletion_order(pods, self._related_pods(rs), self.clock.now())[:count]
            self.expectations.expect_deletions(key, [pod_key(p) for p in victims])
            results = await asyncio.gather(*(self._delete_pod_of(rs, p) for p in victims),
                                           return_exceptions=True)
            first: BaseException | None = None
            for pod, result in zip(victims, results):
                if isinstance(result, BaseException):
                    self.expectations.deletion_observed(key, pod_key(pod))
                    if not isinstance(result, NotFound) and first is None:
                        first = result
            if first is not None:
                raise first

    def _related_pods(self, rs: dict) -> list[dict]:
        """Pods of every ReplicaSet with the same controller (``getIndirectlyRelatedPods``)."""
        ref = controller_ref_of(rs)
        sets = [rs]
        if ref is not None:
            sets = self.rs_informer.by_index(CONTROLLER_INDEX, ref.get("uid", "")) or [rs]
        pods: dict[str, dict] = {}
        for related in sets:
            for pod in self.pod_informer.by_index(CONTROLLER_INDEX, uid_of(related)):
                pods.setdefault(uid_of(pod), pod)
        return list(pods.values())

    async def _create_pod(self, rs: dict) -> dict:
        pod = pod_from_template((rs.get("spec") or {}).get("template") or {}, rs)
        return await create_pod(self.client, self.recorder, rs, pod)

    async def _delete_pod_of(self, rs: dict, pod: dict) -> None:
        await delete_pod(self.client, self.recorder, rs, pod)

    async def _update_status(self, rs: dict, status: dict) -> dict | None:
        """Write the status unless it (and observedGeneration) is already current."""
        generation = int(rs["metadata"].get("generation") or 0)
        status = dict(status)
        if generation:
            status["observedGeneration"] = generation
        if prune_empty(rs.get("status") or {}) == prune_empty(status):
            return rs
        obj = deep_copy(rs)
        for attempt in range(STATUS_UPDATE_RETRIES + 1):
            obj["status"] = status
            try:
                return await self.client.update_status(self.resource, obj)
            except NotFound:
                return None
            except Conflict:
                if attempt == STATUS_UPDATE_RETRIES:
                    raise
                try:
                    obj = await self.client.get(self.resource, rs["metadata"]["name"],
                                                rs["metadata"]["namespace"])
                except NotFound:
                    return None
                if uid_of(obj) != uid_of(rs):
                    return None
                fresh_generation = int(obj["metadata"].get("generation") or 0)
                if fresh_generation:
                    status["observedGeneration"] = fresh_generation
        return None


def calculate_status(rs: dict, pods: list[dict], manage_error: ApiError | None, now: float,
                     now_text: str) -> dict:
    """``calculateStatus``: counts of the claimed active pods, and ReplicaFailure."""
    spec = rs.get("spec") or {}
    template_labels = ((spec.get("template") or {}).get("metadata") or {}).get("labels") or {}
    min_ready = int(spec.get("minReadySeconds") or 0)
    fully_labeled = ready = available = 0
    for pod in pods:
        labels = labels_of(pod)
        if all(labels.get(k) == v for k, v in template_labels.items()):
            fully_labeled += 1
        if is_pod_ready(pod):
            ready += 1
            if is_pod_available(pod, min_ready, now):
                available += 1
    old = rs.get("status") or {}
    conditions = [dict(c) for c in old.get("conditions") or []]
    failure = next((c for c in conditions if c.get("type") == REPLICA_FAILURE), None)
    if manage_error is not None and failure is None:
        diff = len(pods) - spec_replicas(rs)
        reason = "FailedCreate" if diff < 0 else "FailedDelete"
        conditions.append({"type": REPLICA_FAILURE, "status": "True",
                           "lastTransitionTime": now_text, "reason": reason,
                           "message": str(manage_error)})
    elif manage_error is None and failure is not None:
        conditions = [c for c in conditions if c.get("type") != REPLICA_FAILURE]
    status: dict[str, Any] = {"replicas": len(pods)}
    if fully_labeled:
        status["fullyLabeledReplicas"] = fully_labeled
    if ready:
        status["readyReplicas"] = ready
    if available:
        status["availableReplicas"] = available
    if conditions:
        status["conditions"] = conditions
    return status


class ReplicationControllerController(ReplicaSetController):
    """``pkg/controller/replication``: ReplicationControllers through the ReplicaSet logic; an
    RC's selector is a plain label map (``labels.SelectorFromSet``)."""

    name = "replication-controller"
    resource = "replicationcontrollers"
    kind = "ReplicationController"
    groups = ("",)

    @staticmethod
    def selector_of(owner: dict) -> LabelSelector:
        selector = (owner.get("spec") or {}).get("selector")
        if selector is not None and not isinstance(selector, dict):
            raise SelectorError("an RC's selector must be a map of labels")
        return LabelSelector.from_set(selector)
