"""The disruption controller (``pkg/controller/disruption``): PodDisruptionBudget status.

For every PDB it selects the pods of its namespace (an empty selector selects them all,
a missing one none) and writes:

- ``expectedPods``: with an integer ``minAvailable``, the number of selected pods; with
  ``maxUnavailable`` or a percentage ``minAvailable``, the sum of the scales of the pods'
  controllers (a Deployment's ``spec.replicas`` for pods of its ReplicaSets, a
  ReplicaSet's otherwise, else any owner kind with a ``scale`` subresource);
- ``desiredHealthy``: ``minAvailable`` (a percentage of expectedPods rounded up), or
  ``expectedPods - maxUnavailable`` (a percentage rounded up), at least 0;
- ``currentHealthy``: selected pods that are Ready, not being deleted and not in
  ``disruptedPods``;
- ``disruptionsAllowed``: ``currentHealthy - desiredHealthy``, at least 0, and 0 while
  there are no expected pods;
- ``disruptedPods``: the eviction subresource records each pod it evicts there (and
  takes one from disruptionsAllowed). An entry stays while its pod exists and is not yet
  being deleted, for at most 2 minutes (DeletionTimeout); the controller checks again
  when the oldest entry expires;
- ``observedGeneration`` and the condition ``DisruptionAllowed`` (True/SufficientPods,
  False/InsufficientPods, False/SyncFailed when the status cannot be computed: then
  disruptionsAllowed is 0, the fail-safe).

Events: NoPods "No matching pods found", CalculateExpectedPodCountFailed, UnmanagedPods
(pods without a controller under maxUnavailable or a percentage), and NotDeleted on a pod
that outlived its disruptedPods entry.
"""

from __future__ import annotations

import logging
from typing import Any

from kvert.api import kinds
from kvert.api.errors import ApiError, Conflict, NotFound
from kvert.api.meta import deep_copy, format_time, labels_of, parse_time
from kvert.api.selectors import LabelSelector, SelectorError
from kvert.client.base import Client
from kvert.client.events import EventRecorder
from kvert.clock import Clock
from kvert.controllers.base import (
    NAMESPACE_INDEX,
    Controller,
    InformerFactory,
    SyncError,
    controller_ref_of,
    index_namespace,
    object_key,
    safe_handler,
    split_key,
)
from kvert.controllers.util import (
    is_deleting,
    is_pod_ready,
    prune_empty,
    scaled_value,
    set_status_condition,
    spec_replicas,
    uid_of,
)

log = logging.getLogger(__name__)

PDB = "policy/poddisruptionbudgets"
DELETION_TIMEOUT = 120.0
DISRUPTION_ALLOWED = "DisruptionAllowed"
SUFFICIENT_PODS = "SufficientPods"
INSUFFICIENT_PODS = "InsufficientPods"
SYNC_FAILED = "SyncFailed"


class ExpectedCountError(SyncError):
    pass


def _selector_of(pdb: dict) -> LabelSelector:
    return LabelSelector.from_dict((pdb.get("spec") or {}).get("selector"))


def _group_of(api_version: str) -> str:
    return api_version.split("/")[0] if "/" in api_version else ""


class DisruptionController(Controller):
    name = "disruption-controller"

    def __init__(self, client: Client, clock: Clock, *, informers: InformerFactory | None = None,
                 workers: int = 1):
        super().__init__(client, clock, informers=informers, workers=workers)
        # Kubernetes' disruption controller reports as "controllermanager".
        self.recorder = EventRecorder(client, clock, "controllermanager")
        self.pdb_informer = self.use(PDB)
        self.pod_informer = self.use("pods")
        self.rs_informer = self.use("apps/replicasets")
        self.d_informer = self.use("apps/deployments")
        self.pdb_informer.add_index(NAMESPACE_INDEX, index_namespace)
        self.pod_informer.add_index(NAMESPACE_INDEX, index_namespace)
        enqueue = safe_handler(lambda pdb: self.enqueue(object_key(pdb)))
        self.pdb_informer.add_handlers(enqueue, safe_handler(lambda old, cur: self.enqueue(object_key(cur))),
                                       enqueue)
        self.pod_informer.add_handlers(safe_handler(self._pod_changed),
                                       safe_handler(self._update_pod),
                                       safe_handler(self._pod_changed))
        # A scale change of a workload changes expectedPods without touching any pod yet.
        self.rs_informer.add_handlers(None, safe_handler(self._workload_scaled), None)
        self.d_informer.add_handlers(None, safe_handler(self._workload_scaled), None)

    # ---- handlers -------------------------------------------------------------------------

    def _pdbs_for(self, namespace: str, labels: dict) -> list[dict]:
        found = []
        for pdb in self.pdb_informer.by_index(NAMESPACE_INDEX, namespace):
            try:
                if _selector_of(pdb).matches(labels):
                    found.append(pdb)
            except SelectorError:
                continue
        return found

    def _pod_changed(self, pod: dict) -> None:
        namespace = pod["metadata"].get("namespace", "")
        for pdb in self._pdbs_for(namespace, labels_of(pod)):
            self.enqueue(object_key(pdb))

    def _update_pod(self, old: dict, cur: dict) -> None:
        if labels_of(old) != labels_of(cur):
            self._pod_changed(old)
        self._pod_changed(cur)

    def _workload_scaled(self, old: dict, cur: dict) -> None:
        if spec_replicas(old) == spec_replicas(cur):
            return
        namespace = cur["metadata"].get("namespace", "")
        for pdb in self.pdb_informer.by_index(NAMESPACE_INDEX, namespace):
            self.enqueue(object_key(pdb))

    # ---- sync -------------------------------------------------------------------------------

    async def sync(self, key: str) -> None:
        namespace, name = split_key(key)
        pdb = self.pdb_informer.get(name, namespace)
        if pdb is None:
            return
        try:
            await self._try_sync(pdb)
        except Conflict:
            raise  # someone (an eviction) wrote first: retry without the fail-safe
        except (ApiError, ExpectedCountError, SelectorError, ValueError) as e:
            log.warning("%s: failed to sync PDB %s: %s", self.name, key, e)
            await self._fail_safe(pdb, str(e))
            if isinstance(e, (ApiError, SyncError)):
                raise
            raise SyncError(str(e)) from e

    async def _try_sync(self, pdb: dict) -> None:
        namespace = pdb["metadata"]["namespace"]
        selector = _selector_of(pdb)
        pods = [p for p in self.pod_informer.by_index(NAMESPACE_INDEX, namespace)
                if selector.matches(labels_of(p))]
        if not pods:
            await self.recorder.record(pdb, "Normal", "NoPods", "No matching pods found")
        try:
            expected, desired, unmanaged = await self._expected_pod_count(pdb, pods)
        except (ExpectedCountError, ApiError, ValueError) as e:
            await self.recorder.record(pdb, "Warning", "CalculateExpectedPodCountFailed",
                                       f"Failed to calculate the number of expected pods: {e}")
            raise
        if unmanaged:
            await self.recorder.record(
                pdb, "Warning", "UnmanagedPods",
                f"Pods selected by this PodDisruptionBudget (selector: {selector}) were found to be "
                "unmanaged. As a result, the status of the PDB cannot be calculated correctly, "
                "which may result in undefined behavior. To account for these pods please set "
                "\".spec.minAvailable\" field of the PDB to an integer value.")
        now = self.clock.now()
        disrupted, recheck = await self._disrupted_pod_map(pods, pdb, now)
        healthy = _count_healthy(pods, disrupted, now)
        await self._update_status(pdb, healthy, desired, expected, disrupted)
        if recheck is not None:
            self.enqueue_after(object_key(pdb), max(0.0, recheck - now) + 0.001)

    async def _expected_pod_count(self, pdb: dict, pods: list[dict]) -> tuple[int, int, list[str]]:
        spec = pdb.get("spec") or {}
        unmanaged: list[str] = []
        expected = desired = 0
        if spec.get("maxUnavailable") is not None:
            expected, unmanaged = await self._expected_scale(pdb, pods)
            unavailable = scaled_value(spec["maxUnavailable"], expected, True)
            desired = max(0, expected - unavailable)
        elif spec.get("minAvailable") is not None:
            min_available = spec["minAvailable"]
            if isinstance(min_available, int) and not isinstance(min_available, bool):
                desired = min_available
                expected = len(pods)
            else:
                expected, unmanaged = await self._expected_scale(pdb, pods)
                desired = scaled_value(min_available, expected, True)
        return expected, desired, unmanaged

    async def _expected_scale(self, pdb: dict, pods: list[dict]) -> tuple[int, list[str]]:
        """The sum of the scales of the pods' controllers (``getExpectedScale``)."""
        scales: dict[str, int] = {}
        unmanaged: list[str] = []
        for pod in pods:
            ref = controller_ref_of(pod)
            if ref is None:
                unmanaged.append(pod["metadata"]["name"])
                continue
            if ref.get("uid") in scales:
                continue
            found = await self._controller_scale(ref, pod["metadata"].get("namespace", ""))
            if found is None:
                raise ExpectedCountError(f'found no controllers for pod "{pod["metadata"]["name"]}"')
            scales[found[0]] = found[1]
        return sum(scales.values()), unmanaged

    async def _controller_scale(self, ref: dict, namespace: str) -> tuple[str, int] | None:
        """The (uid, scale) of the workload a pod's controllerRef leads to, if any."""
        group, kind = _group_of(ref.get("apiVersion", "")), ref.get("kind")
        if kind == "ReplicaSet" and group in ("apps", "extensions"):
            rs = self.rs_informer.get(ref.get("name", ""), namespace)
            if rs is None or uid_of(rs) != ref.get("uid"):
                return None
            owner = controller_ref_of(rs)
            if owner is not None and owner.get("kind") == "Deployment" and \
                    _group_of(owner.get("apiVersion", "")) in ("apps", "extensions"):
                d = self.d_informer.get(owner.get("name", ""), namespace)
                if d is None or uid_of(d) != owner.get("uid"):
                    return None
                return uid_of(d), spec_replicas(d)
            return uid_of(rs), spec_replicas(rs)
        # Any other owner with a scale subresource (``getScaleController``).
        try:
            rt = kinds.by_gvk(ref.get("apiVersion", ""), kind or "")
        except KeyError as e:
            raise ExpectedCountError(str(e)) from None
        if "scale" not in rt.subresources:
            raise ExpectedCountError(f"{rt.plural}.{rt.group} does not implement the scale subresource"
                                     if rt.group else f"{rt.plural} does not implement the scale "
                                     "subresource")
        try:
            owner_obj = await self.client.get(rt.key, ref.get("name", ""), namespace if rt.namespaced else "")
        except NotFound:
            return None
        if uid_of(owner_obj) != ref.get("uid"):
            return None
        return uid_of(owner_obj), spec_replicas(owner_obj)

    async def _disrupted_pod_map(self, pods: list[dict], pdb: dict,
                                 now: float) -> tuple[dict[str, str], float | None]:
        """``buildDisruptedPodMap``: keep entries of pods that still exist, are not yet being
        deleted and were disrupted less than DeletionTimeout ago."""
        recorded = (pdb.get("status") or {}).get("disruptedPods") or {}
        result: dict[str, str] = {}
        recheck: float | None = None
        if not recorded:
            return result, recheck
        for pod in pods:
            if is_deleting(pod):
                continue
            stamp = recorded.get(pod["metadata"]["name"])
            if stamp is None:
                continue
            try:
                expected_deletion = parse_time(stamp) + DELETION_TIMEOUT
            except ValueError:
                continue
            if expected_deletion < now:
                await self.recorder.record(pod, "Warning", "NotDeleted",
                                           f"Pod was expected by PDB {pdb['metadata']['namespace']}/"
                                           f"{pdb['metadata']['name']} to be deleted but it wasn't")
            else:
                if recheck is None or expected_deletion < recheck:
                    recheck = expected_deletion
                result[pod["metadata"]["name"]] = stamp
        return result, recheck

    async def _update_status(self, pdb: dict, healthy: int, desired: int, expected: int,
                             disrupted: dict[str, str]) -> None:
        allowed = healthy - desired
        if expected <= 0 or allowed <= 0:
            allowed = 0
        generation = int(pdb["metadata"].get("generation") or 0)
        status = pdb.get("status") or {}
        if (int(status.get("currentHealthy") or 0) == healthy
                and int(status.get("desiredHealthy") or 0) == desired
                and int(status.get("expectedPods") or 0) == expected
                and int(status.get("disruptionsAllowed") or 0) == allowed
                and (status.get("disruptedPods") or {}) == disrupted
                and int(status.get("observedGeneration") or 0) == generation
                and _conditions_up_to_date(pdb)):
            return
        new = deep_copy(pdb)
        conditions = [dict(c) for c in status.get("conditions") or []]
        new_status: dict[str, Any] = {
            "observedGeneration": generation, "disruptionsAllowed": allowed,
            "currentHealthy": healthy, "desiredHealthy": desired, "expectedPods": expected,
        }
        if disrupted:
            new_status["disruptedPods"] = disrupted
        sufficient = allowed > 0
        set_status_condition(conditions, {
            "type": DISRUPTION_ALLOWED, "status": "True" if sufficient else "False",
            "reason": SUFFICIENT_PODS if sufficient else INSUFFICIENT_PODS, "message": "",
            "observedGeneration": generation}, format_time(self.clock.now()))
        new_status["conditions"] = conditions
        new["status"] = new_status
        await self.client.update_status(PDB, new)

    async def _fail_safe(self, pdb: dict, message: str) -> None:
        """Whatever went wrong, allow no disruption."""
        new = deep_copy(pdb)
        status = new.setdefault("status", {})
        status["disruptionsAllowed"] = 0
        conditions = status.setdefault("conditions", [])
        set_status_condition(conditions, {
            "type": DISRUPTION_ALLOWED, "status": "False", "reason": SYNC_FAILED,
            "message": message, "observedGeneration": int(status.get("observedGeneration") or 0)},
            format_time(self.clock.now()))
        if prune_empty(new["status"]) == prune_empty(pdb.get("status") or {}):
            return
        try:
            await self.client.update_status(PDB, new)
        except ApiError as e:
            log.info("%s: fail-safe status of %s not written: %s", self.name, object_key(pdb), e)


def _count_healthy(pods: list[dict], disrupted: dict[str, str], now: float) -> int:
    healthy = 0
    for pod in pods:
        if is_deleting(pod):
            continue
        stamp = disrupted.get(pod["metadata"]["name"])
        if stamp is not None and parse_time(stamp) + DELETION_TIMEOUT > now:
            continue
        if is_pod_ready(pod):
            healthy += 1
    return healthy


def _conditions_up_to_date(pdb: dict) -> bool:
    status = pdb.get("status") or {}
    condition = next((c for c in status.get("conditions") or []
                      if c.get("type") == DISRUPTION_ALLOWED), None)
    if condition is None:
        return False
    if int(status.get("observedGeneration") or 0) != int(pdb["metadata"].get("generation") or 0):
        return False
    if int(status.get("disruptionsAllowed") or 0) > 0:
        return condition.get("status") == "True" and condition.get("reason") == SUFFICIENT_PODS
    return condition.get("status") == "False" and condition.get("reason") == INSUFFICIENT_PODS
