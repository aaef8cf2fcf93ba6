"""The PersistentVolume binder (``pkg/controller/volume/persistentvolume``, controller
``persistentvolume-binder``, events from ``persistentvolume-controller``).

Claims:

* an unbound claim (no ``pv.kubernetes.io/bind-completed``) without ``spec.volumeName`` gets
  the best matching volume (:func:`find_best_match`: the index by access modes, then
  ``FindMatchingVolume``: a volume pre-bound to the claim wins, else the smallest Available
  volume with enough capacity, the claim's class, volume mode, attributes class and selector).
  No match leaves it Pending with upstream's event: ``WaitForFirstConsumer`` /
  ``WaitForPodScheduled`` for a class with ``volumeBindingMode: WaitForFirstConsumer``,
  ``ExternalProvisioning`` (with the storage-provisioner annotations) or
  ``ProvisioningFailed`` for a claim with a class, ``FailedBinding`` ("no persistent volumes
  available for this claim and no storage class is set") without one;
* a claim with ``spec.volumeName`` binds to that volume when it is free or pre-bound to it
  ("volume \\"X\\" already bound to a different claim." otherwise);
* a claim without ``storageClassName`` gets the default class (the newest class annotated
  ``storageclass.kubernetes.io/is-default-class: "true"``), RetroactiveDefaultStorageClass;
* a bound claim whose volume is gone or taken is ``Lost`` (ClaimLost, ClaimMisbound).

Binding is upstream's four writes: the volume's ``claimRef`` (and
``pv.kubernetes.io/bound-by-controller: "yes"`` when the controller chose it), its phase
Bound, the claim's ``volumeName`` with ``pv.kubernetes.io/bind-completed: "yes"`` (and
bound-by-controller when the claim did not name the volume), its status Bound with the
volume's capacity and access modes. A write that fails is retried; the next sync finishes a
half-done binding.

Volumes: no ``claimRef`` (or one without a uid, pre-bound by a user) is Available; a claim
bound to it keeps it Bound; when its claim is deleted the volume is Released and reclaimed
by its policy: Retain keeps it, Delete deletes the PersistentVolume object (kvert has no
volume plugins, so there is no backing storage to delete), Recycle fails (VolumeFailedRecycle,
"No recycler plugin found for the volume!"). A volume whose claim went to another volume is
unbound (claimRef removed when the controller set it, its uid cleared when a user did).

WaitForFirstConsumer: upstream, the scheduler's VolumeBinding plugin picks the volume for the
node it chose and the controller finishes the binding. kvert's scheduler does not bind
volumes, so this controller binds a delayed claim itself once a pod that uses it is scheduled,
to a volume whose node affinity admits the pod's node (the scheduler path of
``FindMatchingVolume``, access modes checked). kvert provisions nothing: a claim no volume
matches waits for an administrator (or a test) to create one.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from kvert.api.errors import Conflict, NotFound
from kvert.api.meta import deep_copy, parse_time
from kvert.api.nodeaffinity import node_selector_matches
from kvert.api.quantity import Quantity, QuantityError
from kvert.api.selectors import label_selector_from_dict
from kvert.api.storagedefaults import is_default_class
from kvert.api.types import Obj
from kvert.client.base import Client
from kvert.client.events import EventRecorder
from kvert.clock import Clock
from kvert.controllers.base import (
    NAMESPACE_INDEX,
    Controller,
    InformerFactory,
    index_namespace,
    object_key,
    safe_handler,
    split_key,
)
from kvert.controllers.util import is_deleting

PVS = "persistentvolumes"
PVCS = "persistentvolumeclaims"
CLASSES = "storage.k8s.io/storageclasses"
PODS = "pods"
NODES = "nodes"

ANN_BIND_COMPLETED = "pv.kubernetes.io/bind-completed"
ANN_BOUND_BY_CONTROLLER = "pv.kubernetes.io/bound-by-controller"
ANN_STORAGE_PROVISIONER = "volume.kubernetes.io/storage-provisioner"
ANN_BETA_STORAGE_PROVISIONER = "volume.beta.kubernetes.io/storage-provisioner"
ANN_BETA_STORAGE_CLASS = "volume.beta.kubernetes.io/storage-class"
NO_PROVISIONER = "kubernetes.io/no-provisioner"

NO_CLASS_MSG = "no persistent volumes available for this claim and no storage class is set"
FIRST_CONSUMER_MSG = "waiting for first consumer to be created before binding"
RECYCLE_MSG = "No recycler plugin found for the volume!"
CLAIM_LOST_REFERENCE_MSG = "Bound claim has lost reference to PersistentVolume. Data on the volume is lost!"
CLAIM_LOST_VOLUME_MSG = "Bound claim has lost its PersistentVolume. Data on the volume is lost!"
CLAIM_MISBOUND_MSG = "Two claims are bound to the same volume, this one is bound incorrectly"


def external_provisioning_message(provisioner: str) -> str:
    return (f"Waiting for a volume to be created either by the external provisioner "
            f"'{provisioner}' or manually by the system administrator. If volume creation is "
            f"delayed, please verify that the provisioner is running and correctly registered.")


# ---- the matching rules (pkg/controller/volume/persistentvolume/util, index.go) ----------------

def _meta(obj: Obj) -> Obj:
    meta = obj.get("metadata")
    return meta if isinstance(meta, dict) else {}


def _spec(obj: Obj) -> Obj:
    spec = obj.get("spec")
    return spec if isinstance(spec, dict) else {}


def _annotations(obj: Obj) -> dict[str, str]:
    annotations = _meta(obj).get("annotations")
    return annotations if isinstance(annotations, dict) else {}


def _storage(resources: Any) -> Quantity:
    """``resources["storage"]`` as a quantity (absent or malformed: zero)."""
    value = resources.get("storage") if isinstance(resources, dict) else None
    try:
        return Quantity.parse(value) if value is not None else Quantity.from_int(0)
    except QuantityError:
        return Quantity.from_int(0)


def claim_class(claim: Obj) -> str:
    """``GetPersistentVolumeClaimClass``: the beta annotation wins over the field."""
    annotations = _annotations(claim)
    if ANN_BETA_STORAGE_CLASS in annotations:
        return annotations[ANN_BETA_STORAGE_CLASS]
    return _spec(claim).get("storageClassName") or ""


def volume_class(volume: Obj) -> str:
    """``GetPersistentVolumeClass``."""
    annotations = _annotations(volume)
    if ANN_BETA_STORAGE_CLASS in annotations:
        return annotations[ANN_BETA_STORAGE_CLASS]
    return _spec(volume).get("storageClassName") or ""


def is_volume_bound_to_claim(volume: Obj, claim: Obj) -> bool:
    """``IsVolumeBoundToClaim``: the claimRef names the claim (and its uid, when it has one)."""
    ref = _spec(volume).get("claimRef")
    if not isinstance(ref, dict):
        return False
    meta = _meta(claim)
    if ref.get("name") != meta.get("name") or ref.get("namespace") != meta.get("namespace"):
        return False
    return not ref.get("uid") or ref.get("uid") == meta.get("uid")


def _mode(spec: Obj) -> str:
    return spec.get("volumeMode") or "Filesystem"


def _node_affinity_matches(volume: Obj, node: Obj) -> bool:
    """``CheckNodeAffinity``: no affinity, or its required selector matches the node."""
    affinity = _spec(volume).get("nodeAffinity")
    if not isinstance(affinity, dict) or affinity.get("required") is None:
        return True
    return node_selector_matches(affinity["required"], node)


def _has_access_modes(volume: Obj, claim: Obj) -> bool:
    """``CheckAccessModes``: the volume offers every mode the claim asks for."""
    offered = set(_spec(volume).get("accessModes") or [])
    return set(_spec(claim).get("accessModes") or []) <= offered


def find_matching_volume(claim: Obj, volumes: Iterable[Obj], *, node: Obj | None = None,
                         delay_binding: bool = False) -> Obj | None:
    """``FindMatchingVolume``: the volume pre-bound to the claim if one fits, else the
    smallest Available one that fits (capacity, volume mode, not deleting, selector, class,
    volume attributes class; on the scheduler path node affinity and access modes too). A
    delayed claim outside the scheduler path matches only a volume pre-bound to it."""
    spec = _spec(claim)
    requested = _storage((spec.get("resources") or {}).get("requests"))
    wanted_class = claim_class(claim)
    wanted_vac = spec.get("volumeAttributesClassName") or ""
    selector = label_selector_from_dict(spec["selector"]) if spec.get("selector") else None
    smallest: Obj | None = None
    smallest_size: Quantity | None = None
    for volume in volumes:
        vspec = _spec(volume)
        if vspec.get("claimRef") is not None and not is_volume_bound_to_claim(volume, claim):
            continue
        size = _storage(vspec.get("capacity"))
        if size < requested or _mode(vspec) != _mode(spec) or is_deleting(volume):
            continue
        affinity_ok = node is None or _node_affinity_matches(volume, node)
        if is_volume_bound_to_claim(volume, claim):
            return volume if affinity_ok else None
        if node is None and delay_binding:
            continue          # the scheduler path binds it
        if (volume.get("status") or {}).get("phase") != "Available":
            continue
        if selector is not None and not selector.matches(_meta(volume).get("labels") or {}):
            continue
        if volume_class(volume) != wanted_class or (vspec.get("volumeAttributesClassName") or "") != wanted_vac:
            continue
        if not affinity_ok or (node is not None and not _has_access_modes(volume, claim)):
            continue
        if smallest is None or (smallest_size is not None and smallest_size > size):
            smallest, smallest_size = volume, size
    return smallest


def find_best_match(claim: Obj, volumes: Iterable[Obj], *, node: Obj | None = None,
                    delay_binding: bool = False) -> Obj | None:
    """``persistentVolumeOrderedIndex.findByClaim``: the volumes grouped by their access
    modes; the groups whose modes include all the claim asks for, fewest modes first, each
    searched with :func:`find_matching_volume`; the first match wins."""
    wanted = set(_spec(claim).get("accessModes") or [])
    groups: dict[frozenset[str], list[Obj]] = {}
    for volume in volumes:
        groups.setdefault(frozenset(_spec(volume).get("accessModes") or []), []).append(volume)
    for modes in sorted((m for m in groups if wanted <= m), key=len):
        found = find_matching_volume(claim, groups[modes], node=node, delay_binding=delay_binding)
        if found is not None:
            return found
    return None


def default_class(classes: Iterable[Obj]) -> Obj | None:
    """``GetDefaultClass``: of the classes annotated default, the newest (ties: by name)."""
    defaults = [c for c in classes if is_default_class(c)]
    if not defaults:
        return None
    return max(defaults, key=lambda c: (parse_time(_meta(c).get("creationTimestamp") or "") or 0.0,
                                        _meta(c).get("name") or ""))


def claim_ref(claim: Obj) -> Obj:
    """``GetReference`` of a claim, as the binder writes it into ``spec.claimRef``."""
    meta = _meta(claim)
    return {"kind": "PersistentVolumeClaim", "namespace": meta.get("namespace"),
            "name": meta.get("name"), "uid": meta.get("uid"), "apiVersion": "v1",
            "resourceVersion": meta.get("resourceVersion")}


def _uses_claim(pod: Obj, claim_name: str) -> bool:
    for volume in _spec(pod).get("volumes") or []:
        source = volume.get("persistentVolumeClaim") if isinstance(volume, dict) else None
        if isinstance(source, dict) and source.get("claimName") == claim_name:
            return True
    return False


def _terminal(pod: Obj) -> bool:
    return (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed")


# ---- the controller -------------------------------------------------------------------------

class PersistentVolumeController(Controller):
    name = "persistentvolume-controller"

    def __init__(self, client: Client, clock: Clock, *, informers: InformerFactory | None = None,
                 workers: int = 1):
        super().__init__(client, clock, informers=informers, workers=workers)
        self.recorder = EventRecorder(client, clock, self.name)
        self.volumes = self.use(PVS)
        self.claims = self.use(PVCS)
        self.classes = self.use(CLASSES)
        self.pods = self.use(PODS)
        if not self.pods.has_index(NAMESPACE_INDEX):
            self.pods.add_index(NAMESPACE_INDEX, index_namespace)
        self.nodes = self.use(NODES)
        self.volumes.add_handlers(safe_handler(self._volume_changed),
                                  safe_handler(lambda o, n: self._volume_changed(n)),
                                  safe_handler(self._volume_changed))
        self.claims.add_handlers(safe_handler(self._claim_changed),
                                 safe_handler(lambda o, n: self._claim_changed(n)),
                                 safe_handler(self._claim_deleted))
        self.classes.add_handlers(safe_handler(lambda c: self._all_unbound_claims()),
                                  safe_handler(lambda o, n: self._all_unbound_claims()),
                                  safe_handler(lambda c: None))
        self.pods.add_handlers(safe_handler(self._pod_changed),
                               safe_handler(lambda o, n: self._pod_changed(n)),
                               safe_handler(lambda p: None))

    # -- handlers --------------------------------------------------------------------------

    def _volume_changed(self, volume: Obj) -> None:
        self.enqueue(("volume", _meta(volume).get("name") or ""))
        ref = _spec(volume).get("claimRef")
        if isinstance(ref, dict) and ref.get("name"):
            self.enqueue(("claim", f"{ref.get('namespace') or ''}/{ref['name']}"))
        # a volume that became Available (or went away) may be what a pending claim waits for
        self._all_unbound_claims()

    def _claim_changed(self, claim: Obj) -> None:
        self.enqueue(("claim", object_key(claim)))
        volume = _spec(claim).get("volumeName")
        if volume:
            self.enqueue(("volume", volume))

    def _claim_deleted(self, claim: Obj) -> None:
        volume = _spec(claim).get("volumeName")
        if volume:
            self.enqueue(("volume", volume))
        for pv in self.volumes.list():
            if is_volume_bound_to_claim(pv, claim):
                self.enqueue(("volume", _meta(pv).get("name") or ""))

    def _pod_changed(self, pod: Obj) -> None:
        namespace = _meta(pod).get("namespace") or ""
        for volume in _spec(pod).get("volumes") or []:
            source = volume.get("persistentVolumeClaim") if isinstance(volume, dict) else None
            if isinstance(source, dict) and source.get("claimName"):
                self.enqueue(("claim", f"{namespace}/{source['claimName']}"))

    def _all_unbound_claims(self) -> None:
        for claim in self.claims.list():
            if ANN_BIND_COMPLETED not in _annotations(claim):
                self.enqueue(("claim", object_key(claim)))

    # -- sync ------------------------------------------------------------------------------

    async def sync(self, key: Any) -> None:
        kind, name = key
        if kind == "claim":
            namespace, claim_name = split_key(name)
            claim = self.claims.get(claim_name, namespace)
            if claim is not None and not is_deleting(claim):
                await self.sync_claim(claim)
        else:
            volume = self.volumes.get(name)
            if volume is not None:
                await self.sync_volume(volume)

    async def sync_claim(self, claim: Obj) -> None:
        if ANN_BIND_COMPLETED in _annotations(claim):
            await self._sync_bound_claim(claim)
        else:
            await self._sync_unbound_claim(claim)

    def _class(self, name: str) -> Obj | None:
        return self.classes.get(name) if name else None

    async def _sync_unbound_claim(self, claim: Obj) -> None:
        spec = _spec(claim)
        if spec.get("storageClassName") is None and ANN_BETA_STORAGE_CLASS not in _annotations(claim):
            chosen = default_class(self.classes.list())
            if chosen is not None:
                await self._assign_default_class(claim, _meta(chosen).get("name") or "")
                return
        if spec.get("volumeName"):
            await self._sync_prebound_claim(claim)
            return
        class_name = claim_class(claim)
        storage_class = self._class(class_name)
        delay = (storage_class or {}).get("volumeBindingMode") == "WaitForFirstConsumer"
        node, waiting_pods = self._consumer_node(claim) if delay else (None, [])
        volume = find_best_match(claim, self.volumes.list(), node=node, delay_binding=delay)
        if volume is not None:
            await self._bind(volume, claim)
            return
        if delay and node is None:
            if waiting_pods:
                names = ",".join(waiting_pods)
                what = "pods" if len(waiting_pods) > 1 else "pod"
                await self.recorder.record(claim, "Normal", "WaitForPodScheduled",
                                           f"waiting for {what} {names} to be scheduled")
            else:
                await self.recorder.record(claim, "Normal", "WaitForFirstConsumer", FIRST_CONSUMER_MSG)
        elif class_name:
            claim = await self._provision(claim, class_name, storage_class)
        else:
            await self.recorder.record(claim, "Normal", "FailedBinding", NO_CLASS_MSG)
        await self._claim_status(claim, "Pending", None)

    def _consumer_node(self, claim: Obj) -> tuple[Obj | None, list[str]]:
        """The node of a scheduled pod that uses the claim (None if none is), and the
        names of the unscheduled pods that use it (``findNonScheduledPodsByPVC``)."""
        meta = _meta(claim)
        waiting: list[str] = []
        for pod in self.pods.by_index(NAMESPACE_INDEX, meta.get("namespace") or ""):
            if _terminal(pod) or not _uses_claim(pod, meta.get("name") or ""):
                continue
            node_name = _spec(pod).get("nodeName")
            if node_name:
                node = self.nodes.get(node_name)
                return (node if node is not None else {"metadata": {"name": node_name}}), []
            waiting.append(_meta(pod).get("name") or "")
        return None, sorted(waiting)

    async def _provision(self, claim: Obj, class_name: str, storage_class: Obj | None) -> Obj:
        """``provisionClaim`` without provisioners: the class must exist; an external
        provisioner is named on the claim and awaited."""
        if storage_class is None:
            await self.recorder.record(claim, "Warning", "ProvisioningFailed",
                                       f'storageclass.storage.k8s.io "{class_name}" not found')
            return claim
        provisioner = storage_class.get("provisioner") or ""
        if provisioner == NO_PROVISIONER:
            await self.recorder.record(claim, "Warning", "ProvisioningFailed",
                                       f"no volume plugin matched name: {provisioner}")
            return claim
        annotations = _annotations(claim)
        if (annotations.get(ANN_STORAGE_PROVISIONER) != provisioner
                or annotations.get(ANN_BETA_STORAGE_PROVISIONER) != provisioner):
            updated = deep_copy(claim)
            updated["metadata"].setdefault("annotations", {}).update({
                ANN_STORAGE_PROVISIONER: provisioner, ANN_BETA_STORAGE_PROVISIONER: provisioner})
            claim = await self.client.update(PVCS, updated)
        await self.recorder.record(claim, "Normal", "ExternalProvisioning",
                                   external_provisioning_message(provisioner))
        return claim

    async def _assign_default_class(self, claim: Obj, class_name: str) -> None:
        updated = deep_copy(claim)
        updated["spec"]["storageClassName"] = class_name
        await self.client.update(PVCS, updated)

    async def _sync_prebound_claim(self, claim: Obj) -> None:
        name = _spec(claim)["volumeName"]
        volume = self.volumes.get(name)
        if volume is None:
            await self._claim_status(claim, "Pending", None)
            return
        if _spec(volume).get("claimRef") is None or is_volume_bound_to_claim(volume, claim):
            await self._bind(volume, claim)
            return
        await self.recorder.record(claim, "Warning", "FailedBinding",
                                   f'volume "{name}" already bound to a different claim.')
        await self._claim_status(claim, "Pending", None)

    async def _sync_bound_claim(self, claim: Obj) -> None:
        name = _spec(claim).get("volumeName")
        if not name:
            await self._lose(claim, CLAIM_LOST_REFERENCE_MSG)
            return
        volume = self.volumes.get(name)
        if volume is None:
            await self._lose(claim, CLAIM_LOST_VOLUME_MSG)
            return
        if _spec(volume).get("claimRef") is None or is_volume_bound_to_claim(volume, claim):
            await self._bind(volume, claim)
            return
        await self.recorder.record(claim, "Warning", "ClaimMisbound", CLAIM_MISBOUND_MSG)
        await self._claim_status(claim, "Lost", None)

    async def _lose(self, claim: Obj, message: str) -> None:
        if (claim.get("status") or {}).get("phase") != "Lost":
            await self.recorder.record(claim, "Warning", "ClaimLost", message)
        await self._claim_status(claim, "Lost", None)

    # -- binding ---------------------------------------------------------------------------

    async def _bind(self, volume: Obj, claim: Obj) -> None:
        """``bind``: volume claimRef, volume phase, claim volumeName, claim status; each write
        only when it changes something."""
        volume = await self._bind_volume_to_claim(volume, claim)
        volume = await self._volume_phase(volume, "Bound", "")
        claim = await self._bind_claim_to_volume(claim, volume)
        await self._claim_status(claim, "Bound", volume)

    async def _bind_volume_to_claim(self, volume: Obj, claim: Obj) -> Obj:
        ref = _spec(volume).get("claimRef")
        wanted = claim_ref(claim)
        if isinstance(ref, dict) and all(ref.get(k) == wanted[k] for k in ("namespace", "name", "uid")):
            return volume
        updated = deep_copy(volume)
        if ref is None:
            updated["metadata"].setdefault("annotations", {})[ANN_BOUND_BY_CONTROLLER] = "yes"
        updated["spec"]["claimRef"] = wanted
        return await self.client.update(PVS, updated)

    async def _bind_claim_to_volume(self, claim: Obj, volume: Obj) -> Obj:
        name = _meta(volume).get("name")
        annotations = _annotations(claim)
        by_controller = not _spec(claim).get("volumeName")
        if (_spec(claim).get("volumeName") == name and annotations.get(ANN_BIND_COMPLETED) == "yes"):
            return claim
        updated = deep_copy(claim)
        updated["spec"]["volumeName"] = name
        added = updated["metadata"].setdefault("annotations", {})
        added[ANN_BIND_COMPLETED] = "yes"
        if by_controller:
            added[ANN_BOUND_BY_CONTROLLER] = "yes"
        return await self.client.update(PVCS, updated)

    async def _claim_status(self, claim: Obj, phase: str, volume: Obj | None) -> Obj:
        """``updateClaimStatus``: the phase; bound, the volume's access modes and capacity."""
        status = dict(claim.get("status") or {})
        wanted = dict(status, phase=phase)
        if volume is not None:
            vspec = _spec(volume)
            wanted["accessModes"] = list(vspec.get("accessModes") or [])
            wanted["capacity"] = {k: v for k, v in (vspec.get("capacity") or {}).items()
                                  if k == "storage"}
        if wanted == status:
            return claim
        updated = deep_copy(claim)
        updated["status"] = wanted
        try:
            return await self.client.update_status(PVCS, updated)
        except NotFound:
            return claim

    async def _volume_phase(self, volume: Obj, phase: str, message: str) -> Obj:
        status = volume.get("status") or {}
        if status.get("phase") == phase and (status.get("message") or "") == message:
            return volume
        updated = deep_copy(volume)
        new_status = dict(status, phase=phase)
        if message:
            new_status["message"] = message
        else:
            new_status.pop("message", None)
        updated["status"] = new_status
        return await self.client.update_status(PVS, updated)

    # -- volumes ---------------------------------------------------------------------------

    async def sync_volume(self, volume: Obj) -> None:
        ref = _spec(volume).get("claimRef")
        if not isinstance(ref, dict) or not ref.get("uid"):
            # unused, or pre-bound by a user and waiting for its claim
            if not is_deleting(volume):
                await self._volume_phase(volume, "Available", "")
            return
        claim = self.claims.get(ref.get("name") or "", ref.get("namespace") or "")
        if claim is None or _meta(claim).get("uid") != ref.get("uid"):
            claim = await self._fresh_claim(ref)
        if claim is None:
            await self._released(volume)
            return
        claim_volume = _spec(claim).get("volumeName")
        if not claim_volume:
            return          # the claim's sync finishes (or re-establishes) the binding
        if claim_volume == _meta(volume).get("name"):
            await self._volume_phase(volume, "Bound", "")
            return
        await self._unbind(volume)

    async def _fresh_claim(self, ref: Obj) -> Obj | None:
        """The claim from the API server: the informer may not have seen it yet, and a
        volume must not be released for a claim that exists."""
        try:
            claim = await self.client.get(PVCS, ref.get("name") or "", ref.get("namespace") or "")
        except NotFound:
            return None
        return claim if _meta(claim).get("uid") == ref.get("uid") else None

    async def _released(self, volume: Obj) -> None:
        phase = (volume.get("status") or {}).get("phase")
        if phase not in ("Released", "Failed"):
            volume = await self._volume_phase(volume, "Released", "")
            phase = "Released"
        if phase != "Released":
            return
        policy = _spec(volume).get("persistentVolumeReclaimPolicy") or "Retain"
        if policy == "Delete":
            try:
                await self.client.delete(PVS, _meta(volume).get("name") or "",
                                         preconditions={"uid": _meta(volume).get("uid")})
            except (NotFound, Conflict):
                pass
        elif policy == "Recycle":
            await self.recorder.record(volume, "Warning", "VolumeFailedRecycle", RECYCLE_MSG)
            await self._volume_phase(volume, "Failed", RECYCLE_MSG)

    async def _unbind(self, volume: Obj) -> None:
        """``unbindVolume``: the controller's binding is removed; a user's keeps the claim's
        name without its uid. The volume is Available again."""
        updated = deep_copy(volume)
        annotations = updated["metadata"].get("annotations") or {}
        if annotations.pop(ANN_BOUND_BY_CONTROLLER, None) is not None:
            updated["spec"].pop("claimRef", None)
        else:
            updated["spec"]["claimRef"] = {k: v for k, v in updated["spec"]["claimRef"].items()
                                           if k not in ("uid", "resourceVersion")}
        volume = await self.client.update(PVS, updated)
        await self._volume_phase(volume, "Available", "")
