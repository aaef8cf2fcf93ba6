"""The StatefulSet controller (``pkg/controller/statefulset``, 1.35 with MaxUnavailableStatefulSet).

A StatefulSet owns pods named ``<set>-<ordinal>`` for ordinals ``ordinals.start`` ..
``start + replicas - 1``; each pod has ``hostname`` its name and ``subdomain`` the set's
``serviceName``, the labels ``statefulset.kubernetes.io/pod-name``,
``apps.kubernetes.io/pod-index`` and ``controller-revision-hash`` (the name of the
ControllerRevision it was made from), and one PersistentVolumeClaim per claim template,
``<template>-<set>-<ordinal>``, created before the pod and kept when it goes. The claims'
owner references follow ``persistentVolumeClaimRetentionPolicy``: ``whenDeleted: Delete``
makes the set an owner, ``whenScaled: Delete`` makes a scaled-down pod the owner, so the
garbage collector removes them.

Each sync (``updateStatefulSet``): claim pods (only those whose name says they belong to the
set) and revisions; find the update revision (a revision equal to the template, its number
bumped on a rollback, else a new one; a hash collision bumps ``collisionCount``) and the
current one (``status.currentRevision``); then

1. every ordinal in range, lowest first: a failed or succeeded pod is deleted (and made again
   on a later sync), a missing one is created (below the partition from the current
   revision, else from the update revision), a pod with a wrong identity or claims is
   updated. With ``OrderedReady`` the pass stops at the first pod it created or that is not
   Running, Ready and available (or is terminating); ``Parallel`` goes on;
2. pods beyond the range are deleted from the highest ordinal down; with ``OrderedReady``
   one at a time, each after its predecessors are healthy;
3. ``RollingUpdate``: when fewer than ``maxUnavailable`` pods in range are unhealthy, pods
   not at the update revision are deleted from the highest ordinal down to the partition,
   up to ``maxUnavailable`` minus the unhealthy ones (their replacements come from step 1).
   ``OnDelete`` stops after step 2.

Status: ``replicas`` (created pods), ``readyReplicas``, ``availableReplicas``,
``currentReplicas``, ``updatedReplicas``, the two revision names, ``collisionCount``,
``observedGeneration``; a finished rolling update makes the update revision current.
Revisions beyond ``revisionHistoryLimit`` that no pod uses are deleted. Events:
``SuccessfulCreate`` "create Pod web-0 in StatefulSet web successful", ``SuccessfulDelete``,
``SuccessfulCreate`` "create Claim www-web-0 Pod web-0 in StatefulSet web success", and
their ``Failed*`` forms; ``RecreatingFailedPod`` / ``RecreatingTerminatedPod`` before a
finished pod is deleted.
"""

from __future__ import annotations

import logging
import re
from typing import Any

from kvert.api.errors import AlreadyExists, ApiError, Conflict, NotFound
from kvert.api.meta import deep_copy, labels_of
from kvert.client.base import Client
from kvert.client.events import EventRecorder
from kvert.clock import Clock
from kvert.controllers import history
from kvert.controllers.base import (
    CONTROLLER_INDEX,
    NAMESPACE_INDEX,
    ORPHAN_INDEX,
    Controller,
    InformerFactory,
    SyncError,
    controller_ref_of,
    index_controller_uid,
    index_namespace,
    index_orphan_namespace,
    object_key,
    safe_handler,
    split_key,
)
from kvert.controllers.claims import candidates, claim, workload_selector
from kvert.controllers.util import (
    is_deleting,
    is_pod_available,
    is_pod_ready,
    pod_from_template,
    prune_empty,
    scaled_value,
    spec_replicas,
    uid_of,
)

log = logging.getLogger(__name__)

STS = "apps/statefulsets"
PVCS = "persistentvolumeclaims"
POD_NAME_LABEL = "statefulset.kubernetes.io/pod-name"
POD_INDEX_LABEL = "apps.kubernetes.io/pod-index"
REVISION_LABEL = history.REVISION_HASH_LABEL
MAX_COLLISIONS = 10
_ORDINAL = re.compile(r"^(.*)-([0-9]+)$")


# ---- identities -------------------------------------------------------------------------------

def parent_and_ordinal(pod: dict) -> tuple[str, int]:
    """``getParentNameAndOrdinal``: ("", -1) for a name without a trailing ordinal."""
    m = _ORDINAL.match((pod.get("metadata") or {}).get("name") or "")
    return (m.group(1), int(m.group(2))) if m else ("", -1)


def start_ordinal(sts: dict) -> int:
    return int(((sts.get("spec") or {}).get("ordinals") or {}).get("start") or 0)


def in_range(sts: dict, pod: dict) -> bool:
    ordinal = parent_and_ordinal(pod)[1]
    return start_ordinal(sts) <= ordinal < start_ordinal(sts) + spec_replicas(sts)


def claim_name(template_name: str, sts_name: str, ordinal: int) -> str:
    return f"{template_name}-{sts_name}-{ordinal}"


def _claim_templates(sts: dict) -> list[dict]:
    return [t for t in (sts.get("spec") or {}).get("volumeClaimTemplates") or [] if isinstance(t, dict)]


def _set_identity(sts: dict, pod: dict, ordinal: int) -> None:
    """``updateIdentity`` and ``initIdentity``'s hostname and subdomain."""
    meta = pod["metadata"]
    meta["name"] = f"{sts['metadata']['name']}-{ordinal}"
    meta["namespace"] = sts["metadata"]["namespace"]
    labels = meta.setdefault("labels", {})
    labels[POD_NAME_LABEL] = meta["name"]
    labels[POD_INDEX_LABEL] = str(ordinal)


def _set_storage(sts: dict, pod: dict, ordinal: int) -> None:
    """``updateStorage``: a volume per claim template, named as it, using the ordinal's claim."""
    spec = pod.setdefault("spec", {})
    templates = _claim_templates(sts)
    names = {(t.get("metadata") or {}).get("name") for t in templates}
    volumes = [v for v in spec.get("volumes") or [] if v.get("name") not in names]
    for t in templates:
        name = (t.get("metadata") or {}).get("name") or ""
        volumes.append({"name": name, "persistentVolumeClaim": {
            "claimName": claim_name(name, sts["metadata"]["name"], ordinal)}})
    if volumes:
        spec["volumes"] = volumes


def identity_matches(sts: dict, pod: dict) -> bool:
    parent, ordinal = parent_and_ordinal(pod)
    meta = pod.get("metadata") or {}
    labels = meta.get("labels") or {}
    return (ordinal >= 0 and parent == sts["metadata"]["name"]
            and meta.get("namespace") == sts["metadata"]["namespace"]
            and labels.get(POD_NAME_LABEL) == meta.get("name")
            and labels.get(POD_INDEX_LABEL) == str(ordinal))


def storage_matches(sts: dict, pod: dict) -> bool:
    ordinal = parent_and_ordinal(pod)[1]
    volumes = {v.get("name"): v for v in (pod.get("spec") or {}).get("volumes") or []}
    for t in _claim_templates(sts):
        name = (t.get("metadata") or {}).get("name") or ""
        volume = volumes.get(name) or {}
        if (volume.get("persistentVolumeClaim") or {}).get("claimName") != \
                claim_name(name, sts["metadata"]["name"], ordinal):
            return False
    return True


def new_pod(sts: dict, revision_set: dict, revision_name: str, ordinal: int) -> dict:
    """``newVersionedStatefulSetPod``: the pod of ``ordinal`` from ``revision_set``'s template."""
    pod = pod_from_template((revision_set.get("spec") or {}).get("template") or {}, sts)
    _set_identity(sts, pod, ordinal)
    pod["spec"]["hostname"] = pod["metadata"]["name"]
    service = (sts.get("spec") or {}).get("serviceName")
    if service:
        pod["spec"]["subdomain"] = service
    _set_storage(sts, pod, ordinal)
    pod["metadata"]["labels"][REVISION_LABEL] = revision_name
    return pod


def new_claims(sts: dict, ordinal: int) -> list[dict]:
    """``getPersistentVolumeClaims``: the template plus the selector's matchLabels."""
    match = ((sts.get("spec") or {}).get("selector") or {}).get("matchLabels") or {}
    claims = []
    for t in _claim_templates(sts):
        pvc = deep_copy(t)
        meta = pvc.setdefault("metadata", {})
        meta["name"] = claim_name(meta.get("name") or "", sts["metadata"]["name"], ordinal)
        meta["namespace"] = sts["metadata"]["namespace"]
        meta["labels"] = {**(meta.get("labels") or {}), **match}
        pvc.pop("status", None)
        pvc["apiVersion"], pvc["kind"] = "v1", "PersistentVolumeClaim"
        claims.append(pvc)
    return claims


def _owner_ref(owner: dict, api_version: str, kind: str) -> dict:
    return {"apiVersion": api_version, "kind": kind, "name": owner["metadata"]["name"],
            "uid": uid_of(owner)}


def retention_owner_refs(claim_obj: dict, sts: dict, pod: dict) -> list[dict]:
    """``updateClaimOwnerRefForSetAndPod``: the claim's owner references under the set's
    retention policy (the set while ``whenDeleted: Delete``, the pod once scaled away while
    ``whenScaled: Delete``)."""
    policy = (sts.get("spec") or {}).get("persistentVolumeClaimRetentionPolicy") or {}
    delete_with_set = policy.get("whenDeleted") == "Delete"
    delete_on_scale = policy.get("whenScaled") == "Delete"
    scaled_down = not in_range(sts, pod)
    owners = {uid_of(sts), uid_of(pod)}
    refs = [r for r in (claim_obj.get("metadata") or {}).get("ownerReferences") or []
            if r.get("uid") not in owners]
    if delete_on_scale and scaled_down:
        refs.append(_owner_ref(pod, "v1", "Pod"))
    elif delete_with_set:
        refs.append(_owner_ref(sts, "apps/v1", "StatefulSet"))
    return refs


# ---- pod states ------------------------------------------------------------------------------

def _phase(pod: dict) -> str:
    return (pod.get("status") or {}).get("phase") or ""


def is_created(pod: dict) -> bool:
    return _phase(pod) != ""


def is_running_and_ready(pod: dict) -> bool:
    return _phase(pod) == "Running" and is_pod_ready(pod)


def is_running_and_available(pod: dict, min_ready: int, now: float) -> bool:
    return _phase(pod) == "Running" and is_pod_available(pod, min_ready, now)


def is_healthy(pod: dict) -> bool:
    return is_running_and_ready(pod) and not is_deleting(pod)


def revision_of(pod: dict) -> str:
    return labels_of(pod).get(REVISION_LABEL, "")


def compute_status(pods: list[dict], min_ready: int, now: float, current: str, update: str) -> dict:
    """``updateStatus`` over the claimed pods (those not created yet do not count)."""
    counts = dict.fromkeys(("replicas", "readyReplicas", "availableReplicas", "currentReplicas",
                            "updatedReplicas"), 0)
    for pod in pods:
        if not is_created(pod):
            continue
        counts["replicas"] += 1
        if is_running_and_ready(pod):
            counts["readyReplicas"] += 1
        if is_running_and_available(pod, min_ready, now):
            counts["availableReplicas"] += 1
        if not is_deleting(pod):
            counts["currentReplicas"] += revision_of(pod) == current
            counts["updatedReplicas"] += revision_of(pod) == update
    return counts


def max_unavailable(sts: dict, replicas: int) -> int:
    """``getStatefulSetMaxUnavailable``: the int or percent (rounded down), at least 1."""
    rolling = (((sts.get("spec") or {}).get("updateStrategy") or {}).get("rollingUpdate") or {})
    value = rolling.get("maxUnavailable")
    return max(1, scaled_value(1 if value is None else value, replicas, False))


def partition(sts: dict) -> int:
    rolling = (((sts.get("spec") or {}).get("updateStrategy") or {}).get("rollingUpdate") or {})
    return int(rolling.get("partition") or 0)


def strategy_type(sts: dict) -> str:
    return ((sts.get("spec") or {}).get("updateStrategy") or {}).get("type") or "RollingUpdate"


class StatefulSetController(Controller):
    name = "statefulset-controller"

    def __init__(self, client: Client, clock: Clock, *, informers: InformerFactory | None = None,
                 workers: int = 1):
        super().__init__(client, clock, informers=informers, workers=workers)
        self.recorder = EventRecorder(client, clock, self.name)
        self.sets = self.use(STS)
        self.pods = self.use("pods")
        self.revisions = self.use(history.REVISIONS)
        self.claims = self.use(PVCS)
        self.sets.add_index(NAMESPACE_INDEX, index_namespace)
        for informer in (self.pods, self.revisions):
            informer.add_index(NAMESPACE_INDEX, index_namespace)
            informer.add_index(CONTROLLER_INDEX, index_controller_uid)
            informer.add_index(ORPHAN_INDEX, index_orphan_namespace)
        self.sets.add_handlers(safe_handler(self._enqueue), safe_handler(lambda old, cur: self._enqueue(cur)),
                               safe_handler(self._enqueue))
        for informer in (self.pods, self.revisions):
            informer.add_handlers(safe_handler(self._owned_changed),
                                  safe_handler(self._owned_updated),
                                  safe_handler(self._owned_changed))

    # ---- handlers ------------------------------------------------------------------------

    def _enqueue(self, sts: dict) -> None:
        self.enqueue(object_key(sts))

    def _owned_changed(self, obj: dict) -> None:
        namespace = obj["metadata"].get("namespace", "")
        ref = controller_ref_of(obj)
        if ref is not None:
            if ref.get("kind") == "StatefulSet":
                sts = self.sets.get(ref.get("name", ""), namespace)
                if sts is not None and uid_of(sts) == ref.get("uid"):
                    self._enqueue(sts)
            return
        for sts in self.sets.by_index(NAMESPACE_INDEX, namespace):
            if workload_selector(sts).matches(labels_of(obj)):
                self._enqueue(sts)

    def _owned_updated(self, old: dict, cur: dict) -> None:
        if controller_ref_of(old) != controller_ref_of(cur):
            self._owned_changed(old)
        self._owned_changed(cur)

    # ---- sync ----------------------------------------------------------------------------

    async def sync(self, key: str) -> None:
        namespace, name = split_key(key)
        sts = self.sets.get(name, namespace)
        if sts is None:
            return
        selector = workload_selector(sts)
        if selector.is_nothing:
            log.warning("%s: %s has an invalid or empty selector", self.name, key)
            return
        pods = await claim(self.client, sts, STS, selector, candidates(self.pods, sts), "pods",
                           accept=lambda p: parent_and_ordinal(p)[0] == name)
        revisions = await claim(self.client, sts, STS, selector, candidates(self.revisions, sts),
                                history.REVISIONS)
        current, update, collisions = await self._revisions(sts, revisions)
        status = await self._update_set(sts, pods, current, update)
        status["collisionCount"] = collisions
        await self._write_status(sts, status)
        live = {current["metadata"]["name"], update["metadata"]["name"]} | {revision_of(p) for p in pods}
        await history.truncate_history(self.client, revisions + [update], live,
                                       int((sts.get("spec") or {}).get("revisionHistoryLimit") or 0))
        min_ready = int((sts.get("spec") or {}).get("minReadySeconds") or 0)
        if min_ready and status.get("availableReplicas", 0) != spec_replicas(sts):
            self.enqueue_after(key, min_ready)

    async def _revisions(self, sts: dict, revisions: list[dict]) -> tuple[dict, dict, int]:
        """``getStatefulSetRevisions``: (current, update, collision count)."""
        revisions = history.sorted_revisions(revisions)
        collisions = int((sts.get("status") or {}).get("collisionCount") or 0)
        number = history.next_revision(revisions)
        data = history.template_patch(sts)
        equal = [r for r in revisions if history.data_bytes(r.get("data")) == history.data_bytes(data)]
        if equal and equal[-1] is revisions[-1]:
            update = equal[-1]
        elif equal:
            rollback = deep_copy(equal[-1])
            rollback["revision"] = number
            update = await self.client.update(history.REVISIONS, rollback)
        else:
            update, collisions = await self._create_revision(sts, number, collisions)
        current_name = (sts.get("status") or {}).get("currentRevision")
        current = next((r for r in revisions if r["metadata"]["name"] == current_name), update)
        return current, update, collisions

    async def _create_revision(self, sts: dict, number: int, collisions: int) -> tuple[dict, int]:
        for _ in range(MAX_COLLISIONS):
            hash_ = history.hash_revision(history.template_patch(sts), collisions)
            name = history.revision_name(sts["metadata"]["name"], hash_)
            try:
                created = await history.create_revision(
                    self.client, sts, history.new_revision(sts, name, hash_, number))
            except AlreadyExists:
                collisions += 1
                continue
            return created, collisions
        raise SyncError(f"too many ControllerRevision name collisions for {object_key(sts)}")

    async def _update_set(self, sts: dict, pods: list[dict], current: dict, update: dict) -> dict:
        """``updateStatefulSet``; returns the status counts and revision names."""
        now = self.clock.now()
        spec = sts.get("spec") or {}
        min_ready = int(spec.get("minReadySeconds") or 0)
        start, count = start_ordinal(sts), spec_replicas(sts)
        current_name, update_name = current["metadata"]["name"], update["metadata"]["name"]
        current_set = history.apply_revision(sts, current)
        by_ordinal = {parent_and_ordinal(p)[1]: p for p in pods}
        rolling = strategy_type(sts) == "RollingUpdate"

        def versioned(ordinal: int) -> dict:
            # below the partition a missing pod comes back at the current revision
            if rolling and ordinal - start < partition(sts):
                return new_pod(sts, current_set, current_name, ordinal)
            return new_pod(sts, sts, update_name, ordinal)

        replicas = [by_ordinal.get(o) or versioned(o) for o in range(start, start + count)]
        condemned = sorted((p for p in pods if not in_range(sts, p) and parent_and_ordinal(p)[1] >= 0),
                           key=lambda p: -parent_and_ordinal(p)[1])
        unhealthy = next((p for p in replicas + condemned if not is_healthy(p)), None)

        def status() -> dict:
            counts = compute_status(replicas + condemned, min_ready, now, current_name, update_name)
            return {**counts, "currentRevision": current_name, "updateRevision": update_name}

        if is_deleting(sts):
            return status()
        monotonic = spec.get("podManagementPolicy", "OrderedReady") != "Parallel"
        for i, pod in enumerate(replicas):
            if await self._process_replica(sts, pod, replicas, i, monotonic, min_ready, now):
                return status()
        for pod in condemned:
            if await self._fix_claims(sts, pod):
                return status()
        for pod in condemned:
            if is_deleting(pod):
                if monotonic:
                    return status()
                continue
            healthy = is_running_and_ready(pod) and is_running_and_available(pod, min_ready, now)
            if monotonic and not healthy and pod is not unhealthy:
                return status()
            await self._delete_pod(sts, pod)
            if monotonic:
                return status()
        if not rolling:
            return status()
        await self._rolling_update(sts, replicas, update_name)
        return status()

    async def _process_replica(self, sts: dict, pod: dict, replicas: list[dict], i: int,
                               monotonic: bool, min_ready: int, now: float) -> bool:
        """``processReplica``; True: stop this pass (wait for the pod)."""
        if _phase(pod) in ("Failed", "Succeeded"):
            if not is_deleting(pod):
                failed = _phase(pod) == "Failed"
                await self.recorder.record(
                    sts, "Warning" if failed else "Normal",
                    "RecreatingFailedPod" if failed else "RecreatingTerminatedPod",
                    f"StatefulSet {sts['metadata']['namespace']}/{sts['metadata']['name']} is recreating "
                    f"{'failed' if failed else 'terminated'} Pod {pod['metadata']['name']}")
                await self._delete_pod(sts, pod)
            return True
        if not is_created(pod):
            created = await self._create_pod(sts, pod)
            if created is not None:
                replicas[i] = created
            return monotonic
        if is_deleting(pod) and monotonic:
            return True
        if monotonic and (not is_running_and_ready(pod) or not is_running_and_available(pod, min_ready, now)):
            return True
        if identity_matches(sts, pod) and storage_matches(sts, pod):
            await self._fix_claims(sts, pod)
            return False
        fixed = deep_copy(pod)
        ordinal = parent_and_ordinal(pod)[1]
        _set_identity(sts, fixed, ordinal)
        _set_storage(sts, fixed, ordinal)
        await self._create_claims(sts, fixed)
        try:
            replicas[i] = await self.client.update("pods", fixed)
        except ApiError as e:
            await self._pod_event(sts, "update", fixed, e)
            raise
        await self._pod_event(sts, "update", fixed, None)
        return False

    async def _rolling_update(self, sts: dict, replicas: list[dict], update_name: str) -> None:
        """``updateStatefulSetAfterInvariantEstablished``."""
        allowed = max_unavailable(sts, spec_replicas(sts))
        unavailable = sum(1 for p in replicas if not is_healthy(p))
        if unavailable >= allowed:
            return
        budget = allowed - unavailable
        for pod in reversed(replicas[partition(sts):]):
            if budget <= 0:
                break
            if revision_of(pod) != update_name and not is_deleting(pod):
                await self._delete_pod(sts, pod)
                budget -= 1

    # ---- writes ---------------------------------------------------------------------------

    async def _pod_event(self, sts: dict, verb: str, pod: dict, error: ApiError | None) -> None:
        pod_name, set_name = pod["metadata"]["name"], sts["metadata"]["name"]
        if error is None:
            await self.recorder.record(sts, "Normal", f"Successful{verb.title()}",
                                       f"{verb} Pod {pod_name} in StatefulSet {set_name} successful")
        else:
            await self.recorder.record(sts, "Warning", f"Failed{verb.title()}",
                                       f"{verb} Pod {pod_name} in StatefulSet {set_name} failed error: {error}")

    async def _create_claims(self, sts: dict, pod: dict) -> None:
        """``createPersistentVolumeClaims``: each missing claim of the pod's ordinal."""
        ordinal = parent_and_ordinal(pod)[1]
        for pvc in new_claims(sts, ordinal):
            name, namespace = pvc["metadata"]["name"], pvc["metadata"]["namespace"]
            if self.claims.get(name, namespace) is not None:
                continue
            refs = retention_owner_refs(pvc, sts, pod)
            if refs:
                pvc["metadata"]["ownerReferences"] = refs
            try:
                await self.client.create(PVCS, pvc, namespace=namespace)
            except AlreadyExists:
                continue
            except ApiError as e:
                await self.recorder.record(
                    sts, "Warning", "FailedCreate",
                    f"create Claim {name} for Pod {pod['metadata']['name']} in StatefulSet "
                    f"{sts['metadata']['name']} failed error: {e}")
                raise
            await self.recorder.record(sts, "Normal", "SuccessfulCreate",
                                       f"create Claim {name} Pod {pod['metadata']['name']} in "
                                       f"StatefulSet {sts['metadata']['name']} success")

    async def _fix_claims(self, sts: dict, pod: dict) -> bool:
        """Owner references of the pod's existing claims as the retention policy says
        (``UpdatePodClaimForRetentionPolicy``); True when a write failed."""
        if not is_created(pod) or not uid_of(pod):
            return False
        ordinal = parent_and_ordinal(pod)[1]
        for pvc in new_claims(sts, ordinal):
            stored = self.claims.get(pvc["metadata"]["name"], pvc["metadata"]["namespace"])
            if stored is None:
                continue
            refs = retention_owner_refs(stored, sts, pod)
            if prune_empty(refs) == prune_empty(stored["metadata"].get("ownerReferences") or []):
                continue
            fixed = deep_copy(stored)
            fixed["metadata"]["ownerReferences"] = refs
            try:
                await self.client.update(PVCS, fixed)
            except (Conflict, NotFound):
                return True
        return False

    async def _create_pod(self, sts: dict, pod: dict) -> dict | None:
        await self._create_claims(sts, pod)
        try:
            created = await self.client.create("pods", pod, namespace=sts["metadata"]["namespace"])
        except AlreadyExists:
            return None     # our cache is behind: the pod shows up on its own
        except ApiError as e:
            await self._pod_event(sts, "create", pod, e)
            raise
        await self._pod_event(sts, "create", pod, None)
        return created

    async def _delete_pod(self, sts: dict, pod: dict) -> None:
        try:
            await self.client.delete("pods", pod["metadata"]["name"], namespace=pod["metadata"]["namespace"])
        except NotFound:
            return
        except ApiError as e:
            await self._pod_event(sts, "delete", pod, e)
            raise
        await self._pod_event(sts, "delete", pod, None)

    async def _write_status(self, sts: dict, counts: dict) -> None:
        """The status as the Go type serializes it (zero counts but ``replicas`` and
        ``availableReplicas`` omitted); a finished rolling update makes the update revision
        current (``completeRollingUpdate``)."""
        status: dict[str, Any] = dict(counts)
        generation = int(sts["metadata"].get("generation") or 0)
        if strategy_type(sts) == "RollingUpdate" and status["updatedReplicas"] == status["replicas"] \
                and status["readyReplicas"] == status["replicas"]:
            status["currentReplicas"] = status["updatedReplicas"]
            status["currentRevision"] = status["updateRevision"]
        status["observedGeneration"] = generation
        for field in ("readyReplicas", "currentReplicas", "updatedReplicas", "observedGeneration"):
            if not status.get(field):
                status.pop(field, None)
        old = sts.get("status") or {}
        kept = {k: v for k, v in old.items() if k == "conditions"}
        if {**status, **kept} == old:
            return
        obj = deep_copy(sts)
        obj["status"] = {**status, **kept}
        try:
            await self.client.update_status(STS, obj)
        except NotFound:
            return
