"""The ResourceClaim controller (``pkg/controller/resourceclaim``): claims from templates for
pods, and reservations released when their pods are done.

Pods (``spec.resourceClaims``):

- an entry with ``resourceClaimTemplateName`` gets its own ResourceClaim, created from the
  template: ``generateName`` ``<pod>-<claim>-`` (both parts shortened in proportion when
  longer than 57 characters), the template's labels and annotations plus the annotation
  ``resource.kubernetes.io/pod-claim-name: <claim>``, the template's claim spec, and the pod
  as controlling owner (``blockOwnerDeletion``), so the garbage collector deletes it with the
  pod. The generated name is recorded in ``status.resourceClaimStatuses`` (a strategic merge
  patch of the pod's status). A claim created earlier for the same pod and entry (found by
  owner and annotation) is reused rather than created twice;
- a pod with a node whose claims are allocated but not reserved for it (bound without the
  scheduler) is added to their ``status.reservedFor`` (at most 256 entries) -- unless it has
  terminated. Upstream checks neither there nor before creating claims; kvert leaves
  terminated pods alone (``podNeedsClaims``), or the controller would re-create the claims
  it deletes for them and re-add the reservations it releases, forever;
- a failure to create a claim (a missing template, ...) is recorded on the pod as a Warning
  event ``FailedResourceClaimCreation`` and retried with back-off.

Claims (``status.reservedFor``): entries for pods that are gone (deleted, or replaced by a
namesake with another uid -- checked with a live GET when the cache does not know the pod),
have terminated, or were deleted before being scheduled are removed. When the last entry
goes and the claim carries the ``resource.kubernetes.io/delete-protection`` finalizer (it was
allocated by the scheduler), the allocation is cleared (deallocation) and the finalizer
removed; a claim being deleted loses its allocation and that finalizer once nobody reserves
it. An unreserved claim generated for a pod that has terminated (or was replaced) is deleted
right away, without waiting for the pod to go.

Like every kvert controller it is level-triggered (keys ``("pod", ns, name)`` and
``("claim", ns, name)``) and rebuilds everything from its informers after a restart. Events
are reported as component ``resource_claim``, as upstream. Not implemented: the admin-access
feature gate check (admin access is always allowed) and the metrics.
"""

from __future__ import annotations

import logging
from collections import OrderedDict
from typing import Any

from kvert.api.errors import ApiError, NotFound
from kvert.api.meta import deep_copy
from kvert.client.base import Client
from kvert.client.events import EventRecorder
from kvert.clock import Clock
from kvert.controllers.base import Controller, InformerFactory, SyncError, safe_handler
from kvert.controllers.util import uid_of

log = logging.getLogger(__name__)

CLAIMS = "resource.k8s.io/resourceclaims"
TEMPLATES = "resource.k8s.io/resourceclaimtemplates"
POD_CLAIM_ANNOTATION = "resource.kubernetes.io/pod-claim-name"
FINALIZER = "resource.kubernetes.io/delete-protection"
RESERVED_FOR_MAX = 256
# 63 characters minus the "-" and the 5 random characters the API server appends.
MAX_BASE_LEN = 57

CLAIM_INDEX = "pod-resource-claim"          # pods by "ns/claim" they use
TEMPLATE_INDEX = "pod-resource-claim-template"  # pods by "ns/template" they use
OWNER_POD_INDEX = "claim-pod-owner"         # claims by the uid of their owning pod
DELETED_POD_MEMORY = 10_000


class ClaimNotFound(Exception):
    """A template claim of the pod has no generated claim recorded yet."""


def claim_name(pod: dict, pod_claim: dict) -> tuple[str | None, bool]:
    """``resourceclaim.Name``: the ResourceClaim a pod claim entry refers to and whether its
    owner must be checked. None means no claim is needed (a status entry without a name);
    raises ClaimNotFound while a template claim has no recorded claim."""
    if pod_claim.get("resourceClaimName") is not None:
        return pod_claim["resourceClaimName"], False
    if pod_claim.get("resourceClaimTemplateName") is not None:
        for status in (pod.get("status") or {}).get("resourceClaimStatuses") or []:
            if isinstance(status, dict) and status.get("name") == pod_claim.get("name"):
                return status.get("resourceClaimName"), True
        raise ClaimNotFound(pod_claim.get("name"))
    raise SyncError(f'pod "{_ns(pod)}/{_name(pod)}", spec.resourceClaim '
                    f'"{pod_claim.get("name")}": unsupported PodResourceClaim source')


def owning_pod(claim: dict) -> tuple[str, str]:
    """Name and uid of the pod that controls ``claim`` ("", "" when none)."""
    for ref in (claim.get("metadata") or {}).get("ownerReferences") or []:
        if isinstance(ref, dict) and ref.get("controller") is True and \
                ref.get("apiVersion") == "v1" and ref.get("kind") == "Pod":
            return ref.get("name", ""), ref.get("uid", "")
    return "", ""


def is_for_pod(pod: dict, claim: dict) -> bool:
    return owning_pod(claim)[1] == uid_of(pod)


def is_reserved_for_pod(pod: dict, claim: dict) -> bool:
    return any(isinstance(r, dict) and r.get("uid") == uid_of(pod)
               for r in (claim.get("status") or {}).get("reservedFor") or [])


def is_pod_done(pod: dict) -> bool:
    """No container runs or ever will: terminated, or deleted before it was scheduled."""
    phase = (pod.get("status") or {}).get("phase")
    return phase in ("Succeeded", "Failed") or bool(
        (pod.get("metadata") or {}).get("deletionTimestamp")
        and not (pod.get("spec") or {}).get("nodeName"))


def generate_name(pod_name: str, pod_claim_name: str) -> str:
    """``<pod>-<claim>-``; when too long both parts are cut in proportion to their lengths,
    so neither loses everything (the API server would only cut the end)."""
    base = f"{pod_name}-{pod_claim_name}-"
    if len(base) <= MAX_BASE_LEN:
        return base
    total = len(base)
    return (pod_name[:len(pod_name) * MAX_BASE_LEN // total] + "-"
            + pod_claim_name[:len(pod_claim_name) * MAX_BASE_LEN // total])


def _ns(obj: dict) -> str:
    return (obj.get("metadata") or {}).get("namespace", "") or ""


def _name(obj: dict) -> str:
    return (obj.get("metadata") or {}).get("name", "") or ""


def _pod_claims(pod: dict) -> list[dict]:
    return [c for c in (pod.get("spec") or {}).get("resourceClaims") or [] if isinstance(c, dict)]


def _index_pod_claims(pod: dict) -> list[str]:
    keys = []
    for pod_claim in _pod_claims(pod):
        try:
            name, _ = claim_name(pod, pod_claim)
        except (ClaimNotFound, SyncError):
            continue
        if name is not None:
            keys.append(f"{_ns(pod)}/{name}")
    return keys


def _index_pod_templates(pod: dict) -> list[str]:
    return [f"{_ns(pod)}/{c['resourceClaimTemplateName']}" for c in _pod_claims(pod)
            if isinstance(c.get("resourceClaimTemplateName"), str)]


def _index_owner_pod(claim: dict) -> list[str]:
    uid = owning_pod(claim)[1]
    return [uid] if uid else []


class ResourceClaimController(Controller):
    name = "resource-claim-controller"

    def __init__(self, client: Client, clock: Clock, *, informers: InformerFactory | None = None,
                 workers: int = 1):
        super().__init__(client, clock, informers=informers, workers=workers)
        self.recorder = EventRecorder(client, clock, "resource_claim")
        self.pod_informer = self.use("pods")
        self.claim_informer = self.use(CLAIMS)
        self.template_informer = self.use(TEMPLATES)
        self.pod_informer.add_index(CLAIM_INDEX, _index_pod_claims)
        self.pod_informer.add_index(TEMPLATE_INDEX, _index_pod_templates)
        self.claim_informer.add_index(OWNER_POD_INDEX, _index_owner_pod)
        self.pod_informer.add_handlers(
            safe_handler(lambda pod: self._pod_changed(pod, deleted=False)),
            safe_handler(lambda old, cur: self._pod_changed(cur, deleted=False)),
            safe_handler(lambda pod: self._pod_changed(pod, deleted=True)))
        self.claim_informer.add_handlers(
            safe_handler(lambda claim: self._claim_changed(claim, deleted=False)),
            safe_handler(lambda old, cur: self._claim_changed(cur, deleted=False)),
            safe_handler(lambda claim: self._claim_changed(claim, deleted=True)))
        # A template created after its pods unblocks them at once instead of at the next retry.
        self.template_informer.add_handlers(safe_handler(self._template_added), None, None)
        # Uids of pods seen deleted: their reservations can go without asking the API server.
        self._deleted_pods: OrderedDict[str, None] = OrderedDict()
        # Claims this controller created that its informer may not have seen yet (upstream's
        # mutation cache): without it a lagging cache would make it create a second claim.
        self._created: dict[tuple[str, str], dict] = {}
        self.created: list[tuple[str, str]] = []   # (namespace, name), for tests and explain

    # ---- handlers -------------------------------------------------------------------------

    def _pod_changed(self, pod: dict, *, deleted: bool) -> None:
        claims = _pod_claims(pod)
        if not claims:
            return
        uid = uid_of(pod)
        if deleted:
            self._deleted_pods[uid] = None
            while len(self._deleted_pods) > DELETED_POD_MEMORY:
                self._deleted_pods.popitem(last=False)
        else:
            self._deleted_pods.pop(uid, None)
        if deleted or is_pod_done(pod):
            # Its reservations may have to be released.
            for key in _index_pod_claims(pod):
                namespace, _, name = key.partition("/")
                self.enqueue(("claim", namespace, name))
        if not deleted and self._pod_needs_work(pod):
            self.enqueue(("pod", _ns(pod), _name(pod)))

    def _claim_changed(self, claim: dict, *, deleted: bool) -> None:
        namespace, name = _ns(claim), _name(claim)
        self._created.pop((namespace, name), None)
        if not deleted:
            self.enqueue(("claim", namespace, name))
        for pod in self.pod_informer.by_index(CLAIM_INDEX, f"{namespace}/{name}"):
            self._pod_changed(pod, deleted=False)

    def _template_added(self, template: dict) -> None:
        for pod in self.pod_informer.by_index(TEMPLATE_INDEX, f"{_ns(template)}/{_name(template)}"):
            self._pod_changed(pod, deleted=False)

    def _pod_needs_work(self, pod: dict) -> bool:
        if (pod.get("metadata") or {}).get("deletionTimestamp") or is_pod_done(pod):
            return False
        for pod_claim in _pod_claims(pod):
            try:
                name, check_owner = claim_name(pod, pod_claim)
            except (ClaimNotFound, SyncError):
                return True
            if name is None:
                continue
            claim = self._claim(_ns(pod), name)
            if claim is None:
                # A user-named claim is the user's to create.
                return pod_claim.get("resourceClaimTemplateName") is not None
            if check_owner and not is_for_pod(pod, claim):
                return False   # a conflicting claim the user must remove
            if not (pod.get("spec") or {}).get("nodeName") or is_pod_done(pod):
                # The scheduler reserves claims of pods it schedules; a done pod needs none.
                return False
            if (claim.get("status") or {}).get("allocation") is not None and \
                    not is_reserved_for_pod(pod, claim) and _can_be_reserved(claim):
                return True
        return False

    def _claim(self, namespace: str, name: str) -> dict | None:
        return self.claim_informer.get(name, namespace) or self._created.get((namespace, name))

    # ---- sync --------------------------------------------------------------------------------

    async def sync(self, key: tuple[str, str, str]) -> None:
        kind, namespace, name = key
        if kind == "pod":
            await self._sync_pod(namespace, name)
        else:
            await self._sync_claim(namespace, name)

    async def _sync_pod(self, namespace: str, name: str) -> None:
        pod = self.pod_informer.get(name, namespace)
        if pod is None or (pod.get("metadata") or {}).get("deletionTimestamp") or is_pod_done(pod):
            # A pod that will not run (podNeedsClaims) gets no new claims: its old ones are
            # deleted by _sync_claim and must not come back.
            return
        new_claims: dict[str, str] = {}
        for pod_claim in _pod_claims(pod):
            try:
                await self._handle_claim(pod, pod_claim, new_claims)
            except (SyncError, ApiError) as e:
                await self.recorder.record(pod, "Warning", "FailedResourceClaimCreation",
                                           f"PodResourceClaim {pod_claim.get('name')}: {e}")
                raise SyncError(f"pod {namespace}/{name}, PodResourceClaim "
                                f"{pod_claim.get('name')}: {e}") from e
        if new_claims:
            statuses = [{"name": k, "resourceClaimName": v} for k, v in sorted(new_claims.items())]
            await self.client.patch("pods", name, {"status": {"resourceClaimStatuses": statuses}},
                                    "strategic", namespace=namespace, subresource="status")
            return   # the status update brings the pod back with the names recorded
        if not (pod.get("spec") or {}).get("nodeName") or is_pod_done(pod):
            # Reserving for a pod that will never run again would undo what _sync_claim
            # releases (and loop with it).
            return
        for pod_claim in _pod_claims(pod):
            try:
                claim_ref, check_owner = claim_name(pod, pod_claim)
            except ClaimNotFound:
                continue
            if claim_ref is None:
                continue
            claim = self._claim(namespace, claim_ref)
            if claim is None:
                return
            if check_owner and not is_for_pod(pod, claim):
                raise SyncError(f"ResourceClaim {claim_ref} was not created for pod "
                                f"{namespace}/{name} (pod is not owner)")
            if (claim.get("status") or {}).get("allocation") is not None and \
                    not is_reserved_for_pod(pod, claim) and _can_be_reserved(claim):
                await self._reserve_for_pod(pod, claim)

    async def _handle_claim(self, pod: dict, pod_claim: dict, new_claims: dict[str, str]) -> None:
        namespace = _ns(pod)
        try:
            existing, check_owner = claim_name(pod, pod_claim)
            if existing is None:
                return   # no claim needed
            claim = self._claim(namespace, existing)
            if claim is not None and (not check_owner or is_for_pod(pod, claim)):
                return   # already created
            if claim is not None:
                log.info("%s: claim %s/%s recorded for pod %s is not owned by it; creating "
                         "a new one", self.name, namespace, existing, _name(pod))
        except ClaimNotFound:
            pass
        template_name = pod_claim.get("resourceClaimTemplateName")
        if template_name is None:
            return
        claim = self._find_pod_claim(pod, pod_claim)
        if claim is None:
            template = self.template_informer.get(template_name, namespace)
            if template is None:
                raise SyncError(f'resource claim template "{template_name}": '
                                f'resourceclaimtemplates.resource.k8s.io "{template_name}" not '
                                "found")
            claim = await self._create_claim(pod, pod_claim, template)
        new_claims[pod_claim["name"]] = _name(claim)

    def _find_pod_claim(self, pod: dict, pod_claim: dict) -> dict | None:
        """A claim this controller made for the pod entry before it could record it."""
        uid = uid_of(pod)
        candidates = list(self.claim_informer.by_index(OWNER_POD_INDEX, uid))
        candidates += [c for c in self._created.values() if owning_pod(c)[1] == uid]
        for claim in candidates:
            annotations = (claim.get("metadata") or {}).get("annotations") or {}
            if annotations.get(POD_CLAIM_ANNOTATION) == pod_claim.get("name"):
                return claim
        return None

    async def _create_claim(self, pod: dict, pod_claim: dict, template: dict) -> dict:
        spec = template.get("spec") or {}
        template_meta = spec.get("metadata") or {}
        annotations = dict(template_meta.get("annotations") or {})
        annotations[POD_CLAIM_ANNOTATION] = pod_claim["name"]
        meta: dict[str, Any] = {
            "generateName": generate_name(_name(pod), pod_claim["name"]),
            "namespace": _ns(pod),
            "ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": _name(pod),
                                 "uid": uid_of(pod), "controller": True,
                                 "blockOwnerDeletion": True}],
            "annotations": annotations,
        }
        if template_meta.get("labels"):
            meta["labels"] = dict(template_meta["labels"])
        claim = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": meta,
                 "spec": deep_copy(spec.get("spec") or {})}
        created = await self.client.create(CLAIMS, claim, namespace=_ns(pod))
        key = (_ns(created), _name(created))
        if self.claim_informer.get(key[1], key[0]) is None:
            self._created[key] = created
        self.created.append(key)
        log.info("%s: created ResourceClaim %s/%s for pod %s", self.name, key[0], key[1],
                 _name(pod))
        return created

    async def _reserve_for_pod(self, pod: dict, claim: dict) -> None:
        claim = deep_copy(claim)
        status = claim.setdefault("status", {})
        status["reservedFor"] = list(status.get("reservedFor") or []) + [
            {"resource": "pods", "name": _name(pod), "uid": uid_of(pod)}]
        await self.client.update_status(CLAIMS, claim)

    async def _sync_claim(self, namespace: str, name: str) -> None:
        claim = self.claim_informer.get(name, namespace)
        if claim is None:
            return
        reserved = (claim.get("status") or {}).get("reservedFor") or []
        valid = []
        for ref in reserved:
            if not isinstance(ref, dict) or ref.get("apiGroup") or ref.get("resource") != "pods":
                raise SyncError(f"unsupported ReservedFor entry: {ref}")
            if await self._keep_reservation(namespace, ref):
                valid.append(ref)
        finalizers = list((claim.get("metadata") or {}).get("finalizers") or [])
        deleting = bool((claim.get("metadata") or {}).get("deletionTimestamp"))
        if len(valid) < len(reserved):
            # An update, not a patch: it must fail if the claim changed meanwhile.
            claim = deep_copy(claim)
            status = claim.setdefault("status", {})
            if valid:
                status["reservedFor"] = valid
            else:
                status.pop("reservedFor", None)
                if FINALIZER in finalizers:
                    # Allocated by the scheduler: deallocate as soon as nobody uses it, so the
                    # next consumer gets a fresh allocation wherever it is scheduled.
                    status.pop("allocation", None)
            claim = await self.client.update_status(CLAIMS, claim)
            await self._drop_finalizer_if_unallocated(claim)
        elif FINALIZER in finalizers and deleting and not valid:
            claim = deep_copy(claim)
            if (claim.get("status") or {}).get("allocation") is not None:
                claim["status"].pop("allocation", None)
                claim = await self.client.update_status(CLAIMS, claim)
            await self._drop_finalizer_if_unallocated(claim, force=True)
        if not valid:
            await self._delete_if_pod_done(claim)

    async def _keep_reservation(self, namespace: str, ref: dict) -> bool:
        uid = ref.get("uid", "")
        if uid in self._deleted_pods:
            return False
        pod = self.pod_informer.get(ref.get("name", ""), namespace)
        if pod is None:
            # Not known yet, or gone: only the API server can tell, and releasing a pod the
            # scheduler is placing would be wrong.
            try:
                pod = await self.client.get("pods", ref.get("name", ""), namespace)
            except NotFound:
                return False
            return uid_of(pod) == uid
        return uid_of(pod) == uid and not is_pod_done(pod)

    async def _drop_finalizer_if_unallocated(self, claim: dict, force: bool = False) -> None:
        finalizers = list((claim.get("metadata") or {}).get("finalizers") or [])
        if FINALIZER not in finalizers:
            return
        if not force and (claim.get("status") or {}).get("allocation") is not None:
            return
        claim = deep_copy(claim)
        finalizers.remove(FINALIZER)
        claim["metadata"]["finalizers"] = finalizers
        await self.client.update(CLAIMS, claim)

    async def _delete_if_pod_done(self, claim: dict) -> None:
        pod_name, pod_uid = owning_pod(claim)
        if not pod_name or (claim.get("metadata") or {}).get("deletionTimestamp"):
            return
        pod = self.pod_informer.get(pod_name, _ns(claim))
        if pod is None:
            return   # maybe not known yet; the garbage collector deletes claims of gone pods
        if uid_of(pod) != pod_uid or is_pod_done(pod):
            try:
                await self.client.delete(CLAIMS, _name(claim), namespace=_ns(claim),
                                         preconditions={"uid": uid_of(claim)})
            except NotFound:
                return
            log.info("%s: deleted unused claim %s/%s of pod %s", self.name, _ns(claim),
                     _name(claim), pod_name)


def _can_be_reserved(claim: dict) -> bool:
    return len((claim.get("status") or {}).get("reservedFor") or []) < RESERVED_FOR_MAX
