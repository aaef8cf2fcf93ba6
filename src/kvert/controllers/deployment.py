"""The Deployment controller (``pkg/controller/deployment``): ReplicaSets per pod template.

A Deployment owns ReplicaSets (``ownerReferences`` with ``controller: true``; orphans its
selector matches are adopted, ReplicaSets it no longer selects are released). The *new*
ReplicaSet is the oldest one whose template equals the Deployment's (ignoring the
``pod-template-hash`` label); it is named ``<deployment>-<hash>`` where the hash is
``controller.ComputeHash``'s: FNV-32a of the pod template (and ``status.collisionCount``,
when set, as 4 little-endian bytes) written as a decimal number and then "safe encoded"
(each digit mapped into ``bcdfghjklmnpqrstvwxz2456789``). Kubernetes hashes Go's
``spew`` rendering of the template struct, which has no Python equivalent: kvert hashes
the template's canonical JSON (sorted keys, no spaces). Names therefore have the same
shape but not the same letters as a real cluster's. The label, the ReplicaSet's selector
and its template carry ``pod-template-hash``; its pods inherit it.

Each sync (``syncDeployment``):

- a Deployment being deleted or paused only has its ReplicaSets scaled / its status
  computed; a change of ``spec.replicas`` (seen through the ReplicaSets'
  ``deployment.kubernetes.io/desired-replicas`` annotation) scales the active
  ReplicaSets proportionally;
- ``RollingUpdate``: scale the new ReplicaSet up while all pods stay within
  ``replicas + maxSurge`` (``reconcileNewReplicaSet``), then scale old ones down while at
  least ``replicas - maxUnavailable`` pods stay available, unhealthy old replicas first
  (``reconcileOldReplicaSets``); ``maxSurge`` rounds up, ``maxUnavailable`` down, and
  both zero means ``maxUnavailable: 1``;
- ``Recreate``: scale every old ReplicaSet to 0, wait until none of their pods runs,
  then create / scale the new one to ``replicas``;
- old ReplicaSets beyond ``revisionHistoryLimit`` with no pods are deleted once the
  rollout is complete.

Revisions: ``deployment.kubernetes.io/revision`` on the new ReplicaSet is one more than the
highest among the old ones and is copied to the Deployment (``revision-history`` keeps a
reused ReplicaSet's earlier numbers). ReplicaSets also carry ``desired-replicas`` and
``max-replicas`` and the Deployment's other annotations.

Status: observedGeneration, replicas, updatedReplicas, readyReplicas,
availableReplicas, unavailableReplicas (sums over the ReplicaSets' statuses),
collisionCount, and the conditions ``Available`` (MinimumReplicasAvailable /
MinimumReplicasUnavailable) and ``Progressing`` (NewReplicaSetCreated,
FoundNewReplicaSet, ReplicaSetUpdated, NewReplicaSetAvailable, ProgressDeadlineExceeded,
ReplicaSetCreateError, DeploymentPaused / DeploymentResumed), and ReplicaFailure copied
from a ReplicaSet. Events: ScalingReplicaSet "Scaled up replica set NAME from 0 to 3" /
"Scaled down replica set NAME from 3 to 2" (today's wording), ReplicaSetCreateError when
the new ReplicaSet cannot be created, SelectingAll for an empty selector.

Where kvert is stricter than Kubernetes: when it decides how far it may scale, it does
not only trust the ReplicaSets' ``spec.replicas`` and status counters, which lag behind
the pods (the controller also reads its pod cache): against ``maxSurge`` a ReplicaSet
counts ``max(spec.replicas, status.replicas, active pods seen)`` pods; against
``maxUnavailable`` it counts ``min(spec.replicas, status.availableReplicas, available
pods seen)`` available ones; and when old ReplicaSets shed unhealthy replicas first, a
pod counts as unhealthy only if neither the status nor the cache shows it available. So
a rolling update keeps to ``replicas + maxSurge`` active pods and ``replicas -
maxUnavailable`` available ones even while caches lag. Pods being deleted do not count
(as in Kubernetes without the TerminatingReplicas feature); ``terminatingReplicas`` is
not reported.
"""

from __future__ import annotations

import json
import logging
import struct
from collections.abc import Sequence
from typing import Any

from kvert.api import conditions
from kvert.api.errors import AlreadyExists, ApiError, NotFound
from kvert.api.meta import deep_copy, format_time, labels_of, parse_time
from kvert.api.selectors import LabelSelector, SelectorError
from kvert.client.base import Client
from kvert.client.events import EventRecorder
from kvert.clock import Clock
from kvert.controllers import claims
from kvert.controllers.base import (
    CONTROLLER_INDEX,
    NAMESPACE_INDEX,
    ORPHAN_INDEX,
    Controller,
    InformerFactory,
    controller_ref_of,
    index_controller_uid,
    index_namespace,
    index_orphan_namespace,
    object_key,
    safe_handler,
    split_key,
)
from kvert.controllers.util import (
    controller_ref,
    creation_time,
    is_deleting,
    is_pod_active,
    is_pod_available,
    is_pod_ready,
    prune_empty,
    scaled_value,
    spec_replicas,
    status_int,
    uid_of,
)

log = logging.getLogger(__name__)

DEPLOY = "apps/deployments"
RS = "apps/replicasets"

POD_TEMPLATE_HASH = "pod-template-hash"
REVISION = "deployment.kubernetes.io/revision"
REVISION_HISTORY = "deployment.kubernetes.io/revision-history"
DESIRED_REPLICAS = "deployment.kubernetes.io/desired-replicas"
MAX_REPLICAS = "deployment.kubernetes.io/max-replicas"
ROLLBACK_TO = "deprecated.deployment.rollback.to"
LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"
_ANNOTATIONS_TO_SKIP = {LAST_APPLIED, REVISION, REVISION_HISTORY, DESIRED_REPLICAS, MAX_REPLICAS,
                        ROLLBACK_TO}
MAX_REVISION_HISTORY_CHARS = 2000
MAX_INT32 = 2**31 - 1

# Condition types and reasons (deploymentutil)
AVAILABLE = "Available"
PROGRESSING = "Progressing"
REPLICA_FAILURE = "ReplicaFailure"
MINIMUM_REPLICAS_AVAILABLE = "MinimumReplicasAvailable"
MINIMUM_REPLICAS_UNAVAILABLE = "MinimumReplicasUnavailable"
NEW_RS_REASON = "NewReplicaSetCreated"
FOUND_NEW_RS_REASON = "FoundNewReplicaSet"
RS_UPDATED_REASON = "ReplicaSetUpdated"
NEW_RS_AVAILABLE_REASON = "NewReplicaSetAvailable"
TIMED_OUT_REASON = "ProgressDeadlineExceeded"
FAILED_RS_CREATE_REASON = "ReplicaSetCreateError"
PAUSED_REASON = "DeploymentPaused"
RESUMED_REASON = "DeploymentResumed"

_SAFE_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"


# ---- hashing and templates ----------------------------------------------------------------


def fnv32a(data: bytes, h: int = 0x811C9DC5) -> int:
    for byte in data:
        h ^= byte
        h = (h * 0x01000193) & 0xFFFFFFFF
    return h


def safe_encode(text: str) -> str:
    """``rand.SafeEncodeString``: no vowels, no look-alikes, so no words and no confusion."""
    return "".join(_SAFE_ALPHABET[ord(ch) % len(_SAFE_ALPHABET)] for ch in text)


def compute_hash(template: dict, collision_count: int | None = None) -> str:
    """``controller.ComputeHash`` over the template's canonical JSON (see the module doc)."""
    data = json.dumps(template or {}, sort_keys=True, separators=(",", ":"),
                      ensure_ascii=False).encode()
    h = fnv32a(data)
    if collision_count is not None:
        h = fnv32a(struct.pack("<I", collision_count & 0xFFFFFFFF), h)
    return safe_encode(str(h))


def _hash_label_dropped(template: dict) -> dict:
    """The template without the pod-template-hash label; shallow (only the labels change)."""
    md = template.get("metadata")
    if not isinstance(md, dict):
        return template
    labels = md.get("labels")
    if not isinstance(labels, dict) or POD_TEMPLATE_HASH not in labels:
        return template
    labels = dict(labels)
    del labels[POD_TEMPLATE_HASH]
    return {**template, "metadata": {**md, "labels": labels}}


def equal_ignore_hash(a: dict, b: dict) -> bool:
    """``EqualIgnoreHash``: templates equal but for the pod-template-hash label (empty and
    absent fields alike, as Go's semantic equality). Plainly equal templates -- a Deployment
    and its current ReplicaSet, at every sync -- are told without copying them."""
    a, b = _hash_label_dropped(a or {}), _hash_label_dropped(b or {})
    return a == b or prune_empty(a) == prune_empty(b)     # prune_empty builds new values


# ---- deploymentutil ------------------------------------------------------------------------


def is_rolling_update(d: dict) -> bool:
    return ((d.get("spec") or {}).get("strategy") or {}).get("type", "RollingUpdate") == "RollingUpdate"


def resolve_fenceposts(max_surge: Any, max_unavailable: Any, desired: int) -> tuple[int, int]:
    surge = scaled_value(max_surge if max_surge is not None else "25%", desired, True)
    unavailable = scaled_value(max_unavailable if max_unavailable is not None else "25%", desired,
                               False)
    if surge == 0 and unavailable == 0:
        # Validation rejects both zero, but percentages can round down to it.
        unavailable = 1
    return surge, unavailable


def _rolling(d: dict) -> dict:
    return ((d.get("spec") or {}).get("strategy") or {}).get("rollingUpdate") or {}


def max_unavailable(d: dict) -> int:
    replicas = spec_replicas(d)
    if not is_rolling_update(d) or replicas == 0:
        return 0
    rolling = _rolling(d)
    _, unavailable = resolve_fenceposts(rolling.get("maxSurge"), rolling.get("maxUnavailable"),
                                        replicas)
    return min(unavailable, replicas)


def max_surge(d: dict) -> int:
    if not is_rolling_update(d):
        return 0
    rolling = _rolling(d)
    surge, _ = resolve_fenceposts(rolling.get("maxSurge"), rolling.get("maxUnavailable"),
                                  spec_replicas(d))
    return surge


def revision_of(obj: dict | None) -> int:
    if obj is None:
        return 0
    value = ((obj.get("metadata") or {}).get("annotations") or {}).get(REVISION, "")
    try:
        return int(value)
    except ValueError:
        return 0


def max_revision(sets: list[dict]) -> int:
    return max((revision_of(rs) for rs in sets), default=0)


def _int_annotation(rs: dict, name: str) -> int | None:
    value = ((rs.get("metadata") or {}).get("annotations") or {}).get(name)
    try:
        return int(value) if value is not None else None
    except ValueError:
        return None


def set_replicas_annotations(rs: dict, desired: int, maximum: int) -> bool:
    annotations = rs["metadata"].setdefault("annotations", {})
    changed = False
    for name, value in ((DESIRED_REPLICAS, str(desired)), (MAX_REPLICAS, str(maximum))):
        if annotations.get(name) != value:
            annotations[name] = value
            changed = True
    return changed


def replicas_annotations_need_update(rs: dict, desired: int, maximum: int) -> bool:
    annotations = (rs.get("metadata") or {}).get("annotations") or {}
    return annotations.get(DESIRED_REPLICAS) != str(desired) or \
        annotations.get(MAX_REPLICAS) != str(maximum)


def _copy_deployment_annotations(d: dict, rs: dict) -> bool:
    changed = False
    annotations = rs["metadata"].setdefault("annotations", {})
    for k, v in ((d.get("metadata") or {}).get("annotations") or {}).items():
        if k in _ANNOTATIONS_TO_SKIP:
            continue
        if annotations.get(k) != v:
            annotations[k] = v
            changed = True
    return changed


def set_new_replica_set_annotations(d: dict, rs: dict, new_revision: str, exists: bool) -> bool:
    """``SetNewReplicaSetAnnotations``; returns whether the ReplicaSet's annotations changed."""
    changed = _copy_deployment_annotations(d, rs)
    annotations = rs["metadata"].setdefault("annotations", {})
    old = annotations.get(REVISION)
    try:
        old_int = int(old) if old else 0
    except ValueError:
        return changed
    new_int = int(new_revision)
    if old_int < new_int:
        annotations[REVISION] = new_revision
        changed = True
    if old is not None and old_int < new_int:
        history = annotations.get(REVISION_HISTORY, "")
        if not history:
            annotations[REVISION_HISTORY] = old
        else:
            parts = history.split(",")
            total = len(history) + len(old) + 1
            start = 0
            while total > MAX_REVISION_HISTORY_CHARS and start < len(parts):
                total -= len(parts[start]) + 1
                start += 1
            if total <= MAX_REVISION_HISTORY_CHARS:
                annotations[REVISION_HISTORY] = ",".join(parts[start:] + [old])
    if not exists and set_replicas_annotations(rs, spec_replicas(d), spec_replicas(d) + max_surge(d)):
        changed = True
    return changed


def is_saturated(d: dict, rs: dict | None) -> bool:
    if rs is None:
        return False
    desired = _int_annotation(rs, DESIRED_REPLICAS)
    replicas = spec_replicas(d)
    return desired == replicas and spec_replicas(rs) == replicas and \
        status_int(rs, "availableReplicas") == replicas


def has_progress_deadline(d: dict) -> bool:
    deadline = (d.get("spec") or {}).get("progressDeadlineSeconds")
    return deadline is not None and deadline != MAX_INT32


get_condition = conditions.find_condition
remove_condition = conditions.remove_condition


def new_condition(ctype: str, status: str, reason: str, message: str, now: str) -> dict[str, Any]:
    return conditions.new_condition(ctype, status, reason, message, now=now,
                                    times=("lastUpdateTime", "lastTransitionTime"))


def set_condition(status: dict[str, Any], condition: dict[str, Any]) -> None:
    """``SetDeploymentCondition``: same status and reason is no change; a status change
    resets lastTransitionTime; the condition moves to the end of the list."""
    conditions.set_condition(status, condition, same=("status", "reason"), to_end=True)


def deployment_complete(d: dict, status: dict) -> bool:
    replicas = spec_replicas(d)
    return (int(status.get("updatedReplicas") or 0) == replicas
            and int(status.get("replicas") or 0) == replicas
            and int(status.get("availableReplicas") or 0) == replicas
            and int(status.get("observedGeneration") or 0) >= int(d["metadata"].get("generation") or 0))


def deployment_progressing(d: dict, new: dict) -> bool:
    old = d.get("status") or {}
    old_old = int(old.get("replicas") or 0) - int(old.get("updatedReplicas") or 0)
    new_old = int(new.get("replicas") or 0) - int(new.get("updatedReplicas") or 0)
    return (int(new.get("updatedReplicas") or 0) > int(old.get("updatedReplicas") or 0)
            or new_old < old_old
            or int(new.get("readyReplicas") or 0) > int(old.get("readyReplicas") or 0)
            or int(new.get("availableReplicas") or 0) > int(old.get("availableReplicas") or 0))


def deployment_timed_out(d: dict, status: dict, now: float) -> bool:
    if not has_progress_deadline(d):
        return False
    condition = get_condition(status, PROGRESSING)
    if condition is None or condition.get("reason") == NEW_RS_AVAILABLE_REASON:
        return False
    if condition.get("reason") == TIMED_OUT_REASON:
        return True
    stamp = condition.get("lastUpdateTime")
    if not stamp:
        return False
    return parse_time(stamp) + int(d["spec"]["progressDeadlineSeconds"]) < now


def _by_creation(sets: list[dict], newest_first: bool = False) -> list[dict]:
    return sorted(sets, key=lambda rs: (creation_time(rs), rs["metadata"]["name"]),
                  reverse=newest_first)


def _active(sets: Sequence[dict | None]) -> list[dict]:
    return [rs for rs in sets if rs is not None and spec_replicas(rs) > 0]


def _sum(sets: Sequence[dict | None], field: str) -> int:
    return sum(status_int(rs, field) for rs in sets if rs is not None)


def _sum_spec(sets: Sequence[dict | None]) -> int:
    return sum(spec_replicas(rs) for rs in sets if rs is not None)


def find_active_or_latest(new_rs: dict | None, old_sets: list[dict]) -> dict | None:
    if new_rs is None and not old_sets:
        return None
    old_sorted = _by_creation(old_sets, newest_first=True)
    active = _active([*old_sorted, new_rs])
    if not active:
        return new_rs if new_rs is not None else old_sorted[0]
    if len(active) == 1:
        return active[0]
    return None


def _round_ratio(numerator: int, denominator: int) -> int:
    """math.Round(n / d) for n >= 0, d > 0, without floats."""
    return (2 * numerator + denominator) // (2 * denominator)


def get_proportion(rs: dict, d: dict, to_add: int, added: int) -> int:
    if spec_replicas(rs) == 0 or to_add == 0 or to_add == added:
        return 0
    fraction = _replica_set_fraction(rs, d)
    allowed = to_add - added
    return min(fraction, allowed) if to_add > 0 else max(fraction, allowed)


def _replica_set_fraction(rs: dict, d: dict) -> int:
    if spec_replicas(d) == 0:
        return -spec_replicas(rs)
    deployment_max = spec_replicas(d) + max_surge(d)
    before = _int_annotation(rs, MAX_REPLICAS)
    if not before:
        before = status_int(d, "replicas")
    if not before:
        return 0
    return _round_ratio(spec_replicas(rs) * deployment_max, before) - spec_replicas(rs)


# ---- the controller ----------------------------------------------------------------------


class DeploymentController(Controller):
    name = "deployment-controller"

    def __init__(self, client: Client, clock: Clock, *, informers: InformerFactory | None = None,
                 workers: int = 1):
        super().__init__(client, clock, informers=informers, workers=workers)
        self.recorder = EventRecorder(client, clock, self.name)
        self.d_informer = self.use(DEPLOY)
        self.rs_informer = self.use(RS)
        self.pod_informer = self.use("pods")
        self.d_informer.add_index(NAMESPACE_INDEX, index_namespace)
        self.rs_informer.add_index(CONTROLLER_INDEX, index_controller_uid)
        self.rs_informer.add_index(ORPHAN_INDEX, index_orphan_namespace)
        self.pod_informer.add_index(CONTROLLER_INDEX, index_controller_uid)
        self.d_informer.add_handlers(safe_handler(self._enqueue_obj),
                                     safe_handler(lambda old, cur: self._enqueue_obj(cur)),
                                     safe_handler(self._enqueue_obj))
        self.rs_informer.add_handlers(safe_handler(self._add_rs), safe_handler(self._update_rs),
                                      safe_handler(self._delete_rs))
        self.pod_informer.add_handlers(safe_handler(self._pod_changed),
                                       safe_handler(self._update_pod),
                                       safe_handler(self._pod_changed))

    # ---- handlers ----------------------------------------------------------------------

    def _enqueue_obj(self, d: dict) -> None:
        self.enqueue(object_key(d))

    def _resolve(self, namespace: str, ref: dict | None) -> dict | None:
        if ref is None or ref.get("kind") != "Deployment" or \
                (ref.get("apiVersion") or "").split("/")[0] not in ("apps", "extensions"):
            return None
        d = self.d_informer.get(ref.get("name", ""), namespace)
        if d is None or uid_of(d) != ref.get("uid"):
            return None
        return d

    def _selecting(self, rs: dict) -> list[dict]:
        namespace = rs["metadata"].get("namespace", "")
        labels = labels_of(rs)
        found = []
        for d in self.d_informer.by_index(NAMESPACE_INDEX, namespace):
            try:
                selector = LabelSelector.from_dict((d.get("spec") or {}).get("selector"))
            except SelectorError:
                continue
            if not selector.empty and selector.matches(labels):
                found.append(d)
        return found

    def _add_rs(self, rs: dict) -> None:
        namespace = rs["metadata"].get("namespace", "")
        ref = controller_ref_of(rs)
        if ref is not None:
            d = self._resolve(namespace, ref)
            if d is not None:
                self._enqueue_obj(d)
            return
        for d in self._selecting(rs):
            self._enqueue_obj(d)

    def _update_rs(self, old: dict, cur: dict) -> None:
        if old["metadata"].get("resourceVersion") == cur["metadata"].get("resourceVersion"):
            return
        namespace = cur["metadata"].get("namespace", "")
        cur_ref, old_ref = controller_ref_of(cur), controller_ref_of(old)
        if cur_ref != old_ref and old_ref is not None:
            d = self._resolve(namespace, old_ref)
            if d is not None:
                self._enqueue_obj(d)
        if cur_ref is not None:
            d = self._resolve(namespace, cur_ref)
            if d is not None:
                self._enqueue_obj(d)
            return
        if labels_of(old) != labels_of(cur) or cur_ref != old_ref:
            for d in self._selecting(cur):
                self._enqueue_obj(d)

    def _delete_rs(self, rs: dict) -> None:
        d = self._resolve(rs["metadata"].get("namespace", ""), controller_ref_of(rs))
        if d is not None:
            self._enqueue_obj(d)

    def _deployment_of_pod(self, pod: dict) -> dict | None:
        namespace = pod["metadata"].get("namespace", "")
        ref = controller_ref_of(pod)
        if ref is None or ref.get("kind") != "ReplicaSet":
            return None
        rs = self.rs_informer.get(ref.get("name", ""), namespace)
        if rs is None or uid_of(rs) != ref.get("uid"):
            return None
        return self._resolve(namespace, controller_ref_of(rs))

    def _pod_changed(self, pod: dict) -> None:
        d = self._deployment_of_pod(pod)
        if d is not None:
            self._enqueue_obj(d)

    def _update_pod(self, old: dict, cur: dict) -> None:
        # Only what the scaling decisions read: readiness, activity, ownership.
        if is_pod_ready(old) != is_pod_ready(cur) or is_pod_active(old) != is_pod_active(cur) \
                or controller_ref_of(old) != controller_ref_of(cur):
            self._pod_changed(cur)

    # ---- sync --------------------------------------------------------------------------

    async def sync(self, key: str) -> None:
        namespace, name = split_key(key)
        cached = self.d_informer.get(name, namespace)
        if cached is None:
            return
        d = deep_copy(cached)
        d.setdefault("status", {})
        try:
            selector = LabelSelector.from_dict((d.get("spec") or {}).get("selector"))
        except SelectorError as e:
            log.warning("%s: invalid selector of %s: %s", self.name, key, e)
            return
        if selector.empty:
            await self.recorder.record(d, "Warning", "SelectingAll",
                                       "This deployment is selecting all pods. A non-empty "
                                       "selector is required.")
            generation = int(d["metadata"].get("generation") or 0)
            if int(d["status"].get("observedGeneration") or 0) < generation:
                d["status"]["observedGeneration"] = generation
                await self._write_status(d)
            return
        rs_list = await self._claim_replica_sets(d, selector)
        if is_deleting(d):
            await self._sync_status_only(d, rs_list)
            return
        await self._check_paused_conditions(d)
        if (d.get("spec") or {}).get("paused"):
            await self._sync(d, rs_list)
            return
        if await self._is_scaling_event(d, rs_list):
            await self._sync(d, rs_list)
            return
        if is_rolling_update(d):
            await self._rollout_rolling(d, rs_list)
        else:
            await self._rollout_recreate(d, rs_list)

    # ---- owning ReplicaSets -------------------------------------------------------------

    async def _claim_replica_sets(self, d: dict, selector: LabelSelector) -> list[dict]:
        """``ClaimReplicaSets`` over the ReplicaSets the Deployment controls and the orphans of
        its namespace (not every ReplicaSet there); copies, which the sync may change."""
        claimed = await claims.claim(self.client, d, DEPLOY, selector,
                                     claims.candidates(self.rs_informer, d), RS)
        return [deep_copy(rs) for rs in claimed]

    def _pods_of(self, rs: dict) -> list[dict]:
        return self.pod_informer.by_index(CONTROLLER_INDEX, uid_of(rs))

    # ---- what the decisions count ---------------------------------------------------------

    def _pod_count(self, rs: dict | None) -> int:
        """Pods a ReplicaSet has or will have: the most of spec, status and the cache."""
        if rs is None:
            return 0
        seen = sum(1 for p in self._pods_of(rs) if is_pod_active(p))
        return max(spec_replicas(rs), status_int(rs, "replicas"), seen)

    def _seen_available(self, rs: dict) -> int:
        min_ready = int((rs.get("spec") or {}).get("minReadySeconds") or 0)
        now = self.clock.now()
        return sum(1 for p in self._pods_of(rs)
                   if is_pod_active(p) and is_pod_available(p, min_ready, now))

    def _available_low(self, rs: dict | None) -> int:
        """Pods surely available: the least of spec, status and the cache (what scaling
        down may spend)."""
        if rs is None:
            return 0
        return min(spec_replicas(rs), status_int(rs, "availableReplicas"), self._seen_available(rs))

    def _available_high(self, rs: dict | None) -> int:
        """Pods possibly available (what cleaning up unhealthy replicas must spare)."""
        if rs is None:
            return 0
        return min(spec_replicas(rs), max(status_int(rs, "availableReplicas"), self._seen_available(rs)))

    def _new_rs_new_replicas(self, d: dict, all_sets: Sequence[dict | None], new_rs: dict) -> int:
        """``NewRSNewReplicas``."""
        if not is_rolling_update(d):
            return spec_replicas(d)
        new_replicas = spec_replicas(new_rs)
        current = sum(self._pod_count(rs) for rs in all_sets if rs is not None and rs is not new_rs)
        current += max(new_replicas, self._pod_count(new_rs) if uid_of(new_rs) else 0)
        max_total = spec_replicas(d) + max_surge(d)
        if current >= max_total:
            return new_replicas
        scale_up = min(max_total - current, spec_replicas(d) - new_replicas)
        return new_replicas + max(0, scale_up)

    # ---- new and old ReplicaSets ------------------------------------------------------------

    def _find_new(self, d: dict, rs_list: list[dict]) -> dict | None:
        template = (d.get("spec") or {}).get("template") or {}
        for rs in _by_creation(rs_list):
            if equal_ignore_hash((rs.get("spec") or {}).get("template") or {}, template):
                return rs
        return None

    async def _get_all_replica_sets(self, d: dict, rs_list: list[dict],
                                    create: bool) -> tuple[dict | None, list[dict]]:
        """``getAllReplicaSetsAndSyncRevision``: the new ReplicaSet (made if asked) and the old."""
        existing = self._find_new(d, rs_list)
        old = [rs for rs in rs_list if rs is not existing]
        new_rs = await self._get_new_replica_set(d, rs_list, old, existing, create)
        # Later steps of this sync read the list again: keep it current.
        if existing is not None and new_rs is not None and new_rs is not existing:
            rs_list[rs_list.index(existing)] = new_rs
        elif existing is None and new_rs is not None:
            rs_list.append(new_rs)
        return new_rs, old

    async def _get_new_replica_set(self, d: dict, rs_list: list[dict], old: list[dict],
                                   existing: dict | None, create: bool) -> dict | None:
        now = format_time(self.clock.now())
        new_revision = str(max_revision(old) + 1)
        if existing is not None:
            rs = existing      # the sync's own copy (_claim_replica_sets): changed in place
            annotations_changed = set_new_replica_set_annotations(d, rs, new_revision, True)
            min_ready = (d.get("spec") or {}).get("minReadySeconds") or 0
            if annotations_changed or ((rs.get("spec") or {}).get("minReadySeconds") or 0) != min_ready:
                rs["spec"]["minReadySeconds"] = min_ready
                return await self.client.update(RS, rs)
            revision_changed = self._set_revision(d, rs["metadata"].get("annotations", {}).get(REVISION, ""))
            status_changed = False
            if has_progress_deadline(d) and get_condition(d["status"], PROGRESSING) is None:
                set_condition(d["status"], new_condition(
                    PROGRESSING, "True", FOUND_NEW_RS_REASON,
                    f'Found new replica set "{rs["metadata"]["name"]}"', now))
                status_changed = True
            await self._write(d, status_changed, revision_changed)
            return rs
        if not create:
            return None

        template = deep_copy((d.get("spec") or {}).get("template") or {})
        collision_count = (d.get("status") or {}).get("collisionCount")
        pod_hash = compute_hash(template, collision_count)
        template.setdefault("metadata", {})
        template["metadata"]["labels"] = dict(template["metadata"].get("labels") or {})
        template["metadata"]["labels"][POD_TEMPLATE_HASH] = pod_hash
        selector = deep_copy(d["spec"]["selector"])
        selector.setdefault("matchLabels", {})[POD_TEMPLATE_HASH] = pod_hash
        name = f"{d['metadata']['name']}-{pod_hash}"
        new_rs: dict[str, Any] = {
            "apiVersion": "apps/v1", "kind": "ReplicaSet",
            "metadata": {"name": name, "namespace": d["metadata"]["namespace"],
                         "labels": dict(template["metadata"]["labels"]),
                         "ownerReferences": [controller_ref(d)]},
            "spec": {"replicas": 0, "minReadySeconds": (d.get("spec") or {}).get("minReadySeconds") or 0,
                     "selector": selector, "template": template},
        }
        replicas = self._new_rs_new_replicas(d, [*old, new_rs], new_rs)
        new_rs["spec"]["replicas"] = replicas
        set_new_replica_set_annotations(d, new_rs, new_revision, False)
        already_exists = False
        try:
            created = await self.client.create(RS, new_rs, namespace=d["metadata"]["namespace"])
        except AlreadyExists:
            already_exists = True
            try:
                found = await self.client.get(RS, name, d["metadata"]["namespace"])
            except NotFound:
                raise
            ref = controller_ref_of(found)
            if ref is not None and ref.get("uid") == uid_of(d) and \
                    equal_ignore_hash(d["spec"]["template"], found["spec"]["template"]):
                created = found
            else:
                # A hash collision: bump collisionCount and try again with another name.
                previous = int(d["status"].get("collisionCount") or 0)
                d["status"]["collisionCount"] = previous + 1
                log.info("%s: hash collision for %s, collisionCount %d -> %d", self.name,
                         object_key(d), previous, previous + 1)
                await self._write_status(d)
                raise
        except ApiError as e:
            message = f'Failed to create new replica set "{name}": {e}'
            if has_progress_deadline(d):
                set_condition(d["status"], new_condition(PROGRESSING, "False",
                                                         FAILED_RS_CREATE_REASON, message, now))
                try:
                    await self._write_status(d)
                except ApiError:
                    pass
            await self.recorder.record(d, "Warning", FAILED_RS_CREATE_REASON, message)
            raise
        if not already_exists and replicas > 0:
            await self.recorder.record(d, "Normal", "ScalingReplicaSet",
                                       f"Scaled up replica set {name} from 0 to {replicas}")
        revision_changed = self._set_revision(d, new_revision)
        status_changed = False
        if not already_exists and has_progress_deadline(d):
            set_condition(d["status"], new_condition(PROGRESSING, "True", NEW_RS_REASON,
                                                     f'Created new replica set "{name}"', now))
            status_changed = True
        await self._write(d, status_changed, revision_changed)
        return created

    def _set_revision(self, d: dict, revision: str) -> bool:
        """``SetDeploymentRevision``: the Deployment shows its new ReplicaSet's revision."""
        annotations = d["metadata"].setdefault("annotations", {})
        if not revision or annotations.get(REVISION) == revision:
            return False
        annotations[REVISION] = revision
        return True

    # ---- writes ----------------------------------------------------------------------------

    async def _write_status(self, d: dict) -> None:
        updated = await self.client.update_status(DEPLOY, d)
        d["metadata"]["resourceVersion"] = updated["metadata"]["resourceVersion"]

    async def _write(self, d: dict, status_changed: bool, revision_changed: bool) -> None:
        """Kubernetes writes the revision annotation through /status; kvert's /status keeps
        metadata, so the annotation goes in a patch of the Deployment itself."""
        if status_changed:
            await self._write_status(d)
        if revision_changed:
            patch = {"metadata": {"annotations": {REVISION: d["metadata"]["annotations"][REVISION]}}}
            updated = await self.client.patch(DEPLOY, d["metadata"]["name"], patch,
                                              namespace=d["metadata"]["namespace"])
            d["metadata"]["resourceVersion"] = updated["metadata"]["resourceVersion"]

    async def _scale(self, rs: dict, new_scale: int, d: dict,
                     operation: str | None = None) -> tuple[bool, dict]:
        """``scaleReplicaSet``: set replicas and the desired/max annotations; event on a change."""
        old_scale = spec_replicas(rs)
        size_changed = old_scale != new_scale
        desired, maximum = spec_replicas(d), spec_replicas(d) + max_surge(d)
        if not size_changed and not replicas_annotations_need_update(rs, desired, maximum):
            return False, rs
        copy = deep_copy(rs)
        copy["spec"]["replicas"] = new_scale
        set_replicas_annotations(copy, desired, maximum)
        updated = await self.client.update(RS, copy)
        if size_changed:
            direction = operation or ("up" if old_scale < new_scale else "down")
            await self.recorder.record(d, "Normal", "ScalingReplicaSet",
                                       f"Scaled {direction} replica set {rs['metadata']['name']} "
                                       f"from {old_scale} to {new_scale}")
        return size_changed, updated

    async def _scale_and_record(self, rs: dict, new_scale: int, d: dict) -> tuple[bool, dict]:
        if spec_replicas(rs) == new_scale:
            return False, rs
        return await self._scale(rs, new_scale, d)

    # ---- status ----------------------------------------------------------------------------

    def _calculate_status(self, all_sets: Sequence[dict | None], new_rs: dict | None, d: dict) -> dict:
        available = _sum(all_sets, "availableReplicas")
        total = _sum_spec(all_sets)
        unavailable = max(0, total - available)
        old = d.get("status") or {}
        status: dict[str, Any] = {}
        values = (("observedGeneration", int(d["metadata"].get("generation") or 0)),
                  ("replicas", _sum(all_sets, "replicas")),
                  ("updatedReplicas", _sum([new_rs], "replicas")),
                  ("readyReplicas", _sum(all_sets, "readyReplicas")),
                  ("availableReplicas", available),
                  ("unavailableReplicas", unavailable))
        for field, value in values:
            if value:
                status[field] = value
        if old.get("collisionCount") is not None:
            status["collisionCount"] = old["collisionCount"]
        if old.get("conditions"):
            status["conditions"] = [dict(c) for c in old["conditions"]]
        now = format_time(self.clock.now())
        if available >= spec_replicas(d) - max_unavailable(d):
            set_condition(status, new_condition(AVAILABLE, "True", MINIMUM_REPLICAS_AVAILABLE,
                                                "Deployment has minimum availability.", now))
        else:
            set_condition(status, new_condition(AVAILABLE, "False", MINIMUM_REPLICAS_UNAVAILABLE,
                                                "Deployment does not have minimum availability.", now))
        return status

    async def _sync_deployment_status(self, all_sets: Sequence[dict | None], new_rs: dict | None,
                                      d: dict) -> None:
        status = self._calculate_status(all_sets, new_rs, d)
        if prune_empty(d.get("status") or {}) == prune_empty(status):
            return
        d["status"] = status
        await self._write_status(d)

    async def _sync_rollout_status(self, all_sets: Sequence[dict | None], new_rs: dict | None,
                                   d: dict) -> None:
        """``syncRolloutStatus``: counts, Available, and the Progressing condition."""
        status = self._calculate_status(all_sets, new_rs, d)
        now_epoch = self.clock.now()
        now = format_time(now_epoch)
        if not has_progress_deadline(d):
            remove_condition(status, PROGRESSING)
        current = get_condition(d.get("status") or {}, PROGRESSING)
        complete_before = int(status.get("replicas") or 0) == int(status.get("updatedReplicas") or 0) \
            and current is not None and current.get("reason") == NEW_RS_AVAILABLE_REASON
        name = d["metadata"]["name"]
        if has_progress_deadline(d) and not complete_before:
            if deployment_complete(d, status):
                message = f'ReplicaSet "{new_rs["metadata"]["name"]}" has successfully progressed.' \
                    if new_rs is not None else f'Deployment "{name}" has successfully progressed.'
                set_condition(status, new_condition(PROGRESSING, "True", NEW_RS_AVAILABLE_REASON,
                                                    message, now))
            elif deployment_progressing(d, status):
                message = f'ReplicaSet "{new_rs["metadata"]["name"]}" is progressing.' \
                    if new_rs is not None else f'Deployment "{name}" is progressing.'
                condition = new_condition(PROGRESSING, "True", RS_UPDATED_REASON, message, now)
                if current is not None:
                    if current.get("status") == "True":
                        condition["lastTransitionTime"] = current.get("lastTransitionTime")
                    remove_condition(status, PROGRESSING)
                set_condition(status, condition)
            elif deployment_timed_out(d, status, now_epoch):
                message = f'ReplicaSet "{new_rs["metadata"]["name"]}" has timed out progressing.' \
                    if new_rs is not None else f'Deployment "{name}" has timed out progressing.'
                set_condition(status, new_condition(PROGRESSING, "False", TIMED_OUT_REASON,
                                                    message, now))
        failures = self._replica_failures(all_sets, new_rs)
        if failures:
            set_condition(status, failures[0])
        else:
            remove_condition(status, REPLICA_FAILURE)
        if prune_empty(d.get("status") or {}) == prune_empty(status):
            self._requeue_stuck(d, status, now_epoch)
            return
        d["status"] = status
        await self._write_status(d)

    def _replica_failures(self, all_sets: Sequence[dict | None], new_rs: dict | None) -> list[dict]:
        def convert(c: dict) -> dict:
            stamp = c.get("lastTransitionTime")
            return {"type": REPLICA_FAILURE, "status": c.get("status"), "lastUpdateTime": stamp,
                    "lastTransitionTime": stamp, "reason": c.get("reason"), "message": c.get("message")}
        sources = ([new_rs] if new_rs is not None else []) + [rs for rs in all_sets if rs is not None]
        for rs in sources:
            found = [convert(c) for c in (rs.get("status") or {}).get("conditions") or []
                     if c.get("type") == REPLICA_FAILURE]
            if found:
                return found
        return []

    def _requeue_stuck(self, d: dict, status: dict, now: float) -> None:
        """``requeueStuckDeployment``: check again when the progress deadline passes.

        Unlike upstream, not while the Progressing condition says the last rollout completed
        (NewReplicaSetAvailable) though a replica has since become unavailable: no deadline
        runs then (``deployment_timed_out`` is False for that reason whatever the time), so
        upstream's immediate rate-limited requeue only re-syncs to no effect, as fast as the
        queue's token bucket allows, until some event changes the Deployment."""
        current = get_condition(d.get("status") or {}, PROGRESSING)
        if not has_progress_deadline(d) or current is None:
            return
        if deployment_complete(d, status) or current.get("reason") in (TIMED_OUT_REASON,
                                                                       NEW_RS_AVAILABLE_REASON):
            return
        stamp = current.get("lastUpdateTime")
        if not stamp:
            return
        after = parse_time(stamp) + int(d["spec"]["progressDeadlineSeconds"]) - now
        key = object_key(d)
        if after < 1:
            self.queue.add_rate_limited(key)
        else:
            self.enqueue_after(key, after + 1)

    async def _check_paused_conditions(self, d: dict) -> None:
        if not has_progress_deadline(d):
            return
        current = get_condition(d["status"], PROGRESSING)
        if current is not None and current.get("reason") == TIMED_OUT_REASON:
            return
        paused_cond = current is not None and current.get("reason") == PAUSED_REASON
        paused = bool((d.get("spec") or {}).get("paused"))
        now = format_time(self.clock.now())
        if paused and not paused_cond:
            set_condition(d["status"], new_condition(PROGRESSING, "Unknown", PAUSED_REASON,
                                                     "Deployment is paused", now))
        elif not paused and paused_cond:
            set_condition(d["status"], new_condition(PROGRESSING, "Unknown", RESUMED_REASON,
                                                     "Deployment is resumed", now))
        else:
            return
        await self._write_status(d)

    async def _sync_status_only(self, d: dict, rs_list: list[dict]) -> None:
        new_rs, old = await self._get_all_replica_sets(d, rs_list, False)
        await self._sync_deployment_status([*old, new_rs], new_rs, d)

    # ---- scaling events ----------------------------------------------------------------------

    async def _is_scaling_event(self, d: dict, rs_list: list[dict]) -> bool:
        new_rs, old = await self._get_all_replica_sets(d, rs_list, False)
        for rs in _active([*old, new_rs]):
            desired = _int_annotation(rs, DESIRED_REPLICAS)
            if desired is not None and desired != spec_replicas(d):
                return True
        return False

    async def _sync(self, d: dict, rs_list: list[dict]) -> None:
        """``sync``: scaling (and paused deployments), no rollout."""
        new_rs, old = await self._get_all_replica_sets(d, rs_list, False)
        await self._scale_deployment(d, new_rs, old)
        if (d.get("spec") or {}).get("paused"):
            await self._cleanup(old, d)
        await self._sync_deployment_status([*old, new_rs], new_rs, d)

    async def _scale_deployment(self, d: dict, new_rs: dict | None, old: list[dict]) -> None:
        """``scale``: proportional scaling of every active ReplicaSet."""
        target = find_active_or_latest(new_rs, old)
        if target is not None:
            if spec_replicas(target) != spec_replicas(d):
                await self._scale_and_record(target, spec_replicas(d), d)
            return
        if is_saturated(d, new_rs):
            for rs in _active(old):
                await self._scale_and_record(rs, 0, d)
            return
        if not is_rolling_update(d):
            return
        all_sets = _active([*old, new_rs])
        current = _sum_spec(all_sets)
        allowed = spec_replicas(d) + max_surge(d) if spec_replicas(d) > 0 else 0
        to_add = allowed - current
        operation = None
        if to_add > 0:
            # bigger first; among equals the newer first
            all_sets.sort(key=lambda rs: (-spec_replicas(rs), -creation_time(rs), rs["metadata"]["name"]))
            operation = "up"
        elif to_add < 0:
            all_sets.sort(key=lambda rs: (-spec_replicas(rs), creation_time(rs), rs["metadata"]["name"]))
            operation = "down"
        added = 0
        sizes: dict[str, int] = {}
        for rs in all_sets:
            if to_add != 0:
                proportion = get_proportion(rs, d, to_add, added)
                sizes[rs["metadata"]["name"]] = spec_replicas(rs) + proportion
                added += proportion
            else:
                sizes[rs["metadata"]["name"]] = spec_replicas(rs)
        for i, rs in enumerate(all_sets):
            name = rs["metadata"]["name"]
            if i == 0 and to_add != 0:
                sizes[name] = max(0, sizes[name] + to_add - added)
            await self._scale(rs, sizes[name], d, operation)

    # ---- rollouts ------------------------------------------------------------------------------

    async def _rollout_rolling(self, d: dict, rs_list: list[dict]) -> None:
        new_rs, old = await self._get_all_replica_sets(d, rs_list, True)
        all_sets: list[dict | None] = [*old, new_rs]
        if new_rs is not None:
            scaled, new_rs = await self._reconcile_new_replica_set(all_sets, new_rs, d)
            all_sets = [*old, new_rs]
            if scaled:
                await self._sync_rollout_status(all_sets, new_rs, d)
                return
            scaled, old = await self._reconcile_old_replica_sets(all_sets, _active(old), old, new_rs, d)
            all_sets = [*old, new_rs]
            if scaled:
                await self._sync_rollout_status(all_sets, new_rs, d)
                return
        if deployment_complete(d, d.get("status") or {}):
            await self._cleanup(old, d)
        await self._sync_rollout_status(all_sets, new_rs, d)

    async def _reconcile_new_replica_set(self, all_sets: Sequence[dict | None], new_rs: dict,
                                         d: dict) -> tuple[bool, dict]:
        if spec_replicas(new_rs) == spec_replicas(d):
            return False, new_rs
        if spec_replicas(new_rs) > spec_replicas(d):
            return await self._scale_and_record(new_rs, spec_replicas(d), d)
        count = self._new_rs_new_replicas(d, all_sets, new_rs)
        return await self._scale_and_record(new_rs, count, d)

    async def _reconcile_old_replica_sets(self, all_sets: Sequence[dict | None], active_old: list[dict],
                                          old: list[dict], new_rs: dict,
                                          d: dict) -> tuple[bool, list[dict]]:
        if _sum_spec(active_old) == 0:
            return False, old
        all_pods = _sum_spec(all_sets)
        min_available = spec_replicas(d) - max_unavailable(d)
        new_unavailable = spec_replicas(new_rs) - self._available_low(new_rs)
        max_scaled_down = all_pods - min_available - new_unavailable
        if max_scaled_down <= 0:
            return False, old
        updated: dict[str, dict] = {}
        cleaned = 0
        # Unhealthy old replicas first: removing them costs no availability.
        for rs in _by_creation(active_old):
            if cleaned >= max_scaled_down:
                break
            if spec_replicas(rs) == 0:
                continue
            unhealthy = spec_replicas(rs) - self._available_high(rs)
            if unhealthy <= 0:
                continue
            count = min(max_scaled_down - cleaned, unhealthy)
            _, rs2 = await self._scale_and_record(rs, spec_replicas(rs) - count, d)
            updated[uid_of(rs)] = rs2
            cleaned += count
        active_old = [updated.get(uid_of(rs), rs) for rs in active_old]
        scaled_down = await self._scale_down_old_for_rolling([*active_old, new_rs], active_old, d,
                                                             updated)
        old = [updated.get(uid_of(rs), rs) for rs in old]
        return cleaned + scaled_down > 0, old

    async def _scale_down_old_for_rolling(self, all_sets: list[dict], active_old: list[dict],
                                          d: dict, updated: dict[str, dict]) -> int:
        min_available = spec_replicas(d) - max_unavailable(d)
        available = sum(self._available_low(rs) for rs in all_sets)
        if available <= min_available:
            return 0
        total = available - min_available
        done = 0
        for rs in _by_creation(active_old):
            if done >= total:
                break
            if spec_replicas(rs) == 0:
                continue
            count = min(spec_replicas(rs), total - done)
            _, rs2 = await self._scale_and_record(rs, spec_replicas(rs) - count, d)
            updated[uid_of(rs)] = rs2
            done += count
        return done

    async def _rollout_recreate(self, d: dict, rs_list: list[dict]) -> None:
        new_rs, old = await self._get_all_replica_sets(d, rs_list, False)
        all_sets: list[dict | None] = [*old, new_rs]
        scaled = False
        for i, rs in enumerate(old):
            if spec_replicas(rs) == 0:
                continue
            changed, old[i] = await self._scale_and_record(rs, 0, d)
            scaled = scaled or changed
        if scaled:
            await self._sync_rollout_status([*old, new_rs], new_rs, d)
            return
        if self._old_pods_running(new_rs, old):
            await self._sync_rollout_status(all_sets, new_rs, d)
            return
        if new_rs is None:
            new_rs, old = await self._get_all_replica_sets(d, rs_list, True)
        all_sets = [*old, new_rs]
        if new_rs is not None:
            _, new_rs = await self._scale_and_record(new_rs, spec_replicas(d), d)
            all_sets = [*old, new_rs]
        if deployment_complete(d, d.get("status") or {}):
            await self._cleanup(old, d)
        await self._sync_rollout_status(all_sets, new_rs, d)

    def _old_pods_running(self, new_rs: dict | None, old: list[dict]) -> bool:
        """``oldPodsRunning``: any old pod not yet terminal (terminating pods included)."""
        if _sum(old, "replicas") > 0:
            return True
        for rs in old:
            for pod in self._pods_of(rs):
                if (pod.get("status") or {}).get("phase") not in ("Failed", "Succeeded"):
                    return True
        return False

    async def _cleanup(self, old: list[dict], d: dict) -> None:
        """``cleanupDeployment``: keep at most revisionHistoryLimit old, empty ReplicaSets."""
        limit = (d.get("spec") or {}).get("revisionHistoryLimit")
        if limit is None:
            return
        cleanable = [rs for rs in old if not is_deleting(rs)]
        diff = len(cleanable) - int(limit)
        if diff <= 0:
            return
        cleanable.sort(key=lambda rs: (revision_of(rs), creation_time(rs), rs["metadata"]["name"]))
        for rs in cleanable[:diff]:
            if status_int(rs, "replicas") != 0 or spec_replicas(rs) != 0 or \
                    int(rs["metadata"].get("generation") or 0) > status_int(rs, "observedGeneration"):
                continue
            try:
                await self.client.delete(RS, rs["metadata"]["name"], namespace=rs["metadata"]["namespace"])
            except NotFound:
                pass
