"""ResourceClaims as the scheduler sees them: a pod's claims, reservations, in-flight work.

The helpers follow ``k8s.io/dynamic-resource-allocation/resourceclaim`` (:func:`claim_name`,
:func:`is_for_pod`, :func:`is_reserved_for_pod`, :func:`can_be_reserved`) with upstream's
messages. :class:`ClaimTracker` is the scheduler's ``SharedDRAManager`` for claims: the
listed claims overlaid with what the scheduler itself wrote or decided (an *assume cache*:
a claim the scheduler updated is read in its updated form until the informer catches up,
and offline, where nothing is written, for good) and the allocations *in flight* (reserved
for a pod, not yet written), whose devices count as taken and whose claims other pods must
wait for.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from kvert.scheduler.dra.allocator import DeviceID, allocated_device_ids
from kvert.scheduler.listers import Listers

FINALIZER = "resource.kubernetes.io/delete-protection"
RESERVED_FOR_MAX_SIZE = 256       # resourceapi.ResourceClaimReservedForMaxSize
RESOURCE = "resource.k8s.io/resourceclaims"


class ClaimError(Exception):
    """A pod's claims cannot be used (yet); the message is upstream's."""


def _meta(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    return obj.get("metadata") or {}


def obj_key(obj: Mapping[str, Any]) -> str:
    """``klog.KObj``: ``namespace/name``."""
    meta = _meta(obj)
    return f"{meta.get('namespace', '')}/{meta.get('name', '')}" if meta.get("namespace") \
        else str(meta.get("name", ""))


def pod_claims(pod: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    return list((pod.get("spec") or {}).get("resourceClaims") or ())


def claim_name(pod: Mapping[str, Any], pod_claim: Mapping[str, Any]) -> tuple[str | None, bool]:
    """``resourceclaim.Name``: the claim a ``spec.resourceClaims`` entry refers to (None when
    its template produced none) and whether the claim must be owned by the pod."""
    if pod_claim.get("resourceClaimName"):
        return str(pod_claim["resourceClaimName"]), False
    if pod_claim.get("resourceClaimTemplateName"):
        for status in (pod.get("status") or {}).get("resourceClaimStatuses") or ():
            if status.get("name") == pod_claim.get("name"):
                return status.get("resourceClaimName") or None, True
        raise ClaimError(f'pod "{obj_key(pod)}": ResourceClaim not created yet')
    raise ClaimError(f'pod "{obj_key(pod)}", spec.resourceClaim {pod_claim.get("name", "")!r}: '
                     "resource claim reference not supported")


def is_for_pod(pod: Mapping[str, Any], claim: Mapping[str, Any]) -> None:
    """``resourceclaim.IsForPod``: the claim's controller must be the pod."""
    uid = _meta(pod).get("uid")
    if not any(ref.get("controller") and ref.get("uid") == uid
               for ref in _meta(claim).get("ownerReferences") or ()):
        raise ClaimError(f"ResourceClaim {obj_key(claim)} was not created for pod {obj_key(pod)} "
                         "(pod is not owner)")


def reserved_for(claim: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    return list((claim.get("status") or {}).get("reservedFor") or ())


def is_reserved_for_pod(pod: Mapping[str, Any], claim: Mapping[str, Any]) -> bool:
    uid = _meta(pod).get("uid")
    return any(r.get("uid") == uid for r in reserved_for(claim))


def can_be_reserved(claim: Mapping[str, Any]) -> bool:
    return len(reserved_for(claim)) < RESERVED_FOR_MAX_SIZE


def allocation(claim: Mapping[str, Any]) -> Mapping[str, Any] | None:
    return (claim.get("status") or {}).get("allocation") or None


def with_reservation(claim: Mapping[str, Any], pod: Mapping[str, Any],
                     alloc: Mapping[str, Any] | None = None) -> dict:
    """A copy of the claim allocated (when ``alloc`` is given, with the finalizer) and
    reserved for the pod, as ``bindClaim`` writes it."""
    out = copy.deepcopy(dict(claim))
    meta = out.setdefault("metadata", {})
    status = out.setdefault("status", {})
    if alloc is not None:
        if FINALIZER not in (meta.get("finalizers") or []):
            meta["finalizers"] = list(meta.get("finalizers") or []) + [FINALIZER]
        status["allocation"] = copy.deepcopy(dict(alloc))
    pm = _meta(pod)
    if not is_reserved_for_pod(pod, out):
        status["reservedFor"] = reserved_for(out) + [
            {"resource": "pods", "name": pm.get("name", ""), "uid": pm.get("uid", "")}]
    return out


def _rv(obj: Mapping[str, Any]) -> int | None:
    rv = _meta(obj).get("resourceVersion")
    if rv is None:
        return None
    try:
        return int(rv)
    except (TypeError, ValueError):
        return None


class ClaimTracker:
    """Listed claims + the scheduler's assumed versions + in-flight allocations."""

    def __init__(self) -> None:
        # (namespace, name) -> (claim, the listed resourceVersion from which the informer's
        # copy supersedes it; None: never)
        self.assumed: dict[tuple[str, str], tuple[dict, int | None]] = {}
        self.pending: dict[str, dict] = {}      # claim uid -> claim with its allocation

    def _current(self, listed: Mapping[str, Any] | None, key: tuple[str, str]) -> Any:
        entry = self.assumed.get(key)
        if entry is None:
            return listed
        mine, until = entry
        if listed is not None and until is not None:
            theirs = _rv(listed)
            if theirs is not None and theirs >= until:
                del self.assumed[key]           # the informer caught up
                return listed
        return mine

    def get(self, listers: Listers, namespace: str, name: str) -> Mapping[str, Any] | None:
        getter = getattr(listers, "get", None)
        if callable(getter):
            listed = getter("resourceclaims", name, namespace)
        else:
            listed = next((c for c in listers.list("resourceclaims", namespace)
                           if _meta(c).get("name") == name), None)
        return self._current(listed, (namespace, name))

    def list(self, listers: Listers) -> list[Mapping[str, Any]]:
        out = []
        seen = set()
        for c in listers.list("resourceclaims"):
            key = (_meta(c).get("namespace", ""), _meta(c).get("name", ""))
            seen.add(key)
            current = self._current(c, key)
            if current is not None:
                out.append(current)
        out.extend(c for key, (c, _) in self.assumed.items() if key not in seen)
        return out

    def allocated_devices(self, listers: Listers) -> set[DeviceID]:
        """``ListAllAllocatedDevices``: devices of allocated claims and of in-flight ones."""
        return allocated_device_ids(list(self.list(listers)) + list(self.pending.values()))

    def has_pending(self, uid: str) -> bool:
        return uid in self.pending

    def signal_pending(self, uid: str, claim: dict) -> None:
        self.pending[uid] = claim

    def remove_pending(self, uid: str) -> bool:
        return self.pending.pop(uid, None) is not None

    def assume(self, claim: Mapping[str, Any], written: bool = True) -> tuple | None:
        """Read ``claim`` instead of the listed one until the informer delivers its
        resourceVersion (``written``: the API server returned it) or a newer one (a change
        made only in memory); the entry it replaces, if any."""
        key = (_meta(claim).get("namespace", ""), _meta(claim).get("name", ""))
        previous = self.assumed.get(key)
        rv = _rv(claim)
        until = rv if written else (rv + 1 if rv is not None else None)
        self.assumed[key] = (dict(claim), until)
        return previous

    def restore(self, namespace: str, name: str, previous: tuple | None = None) -> None:
        """Forget the assumed version (or go back to the ``previous`` entry)."""
        if previous is None:
            self.assumed.pop((namespace, name), None)
        else:
            self.assumed[(namespace, name)] = previous


__all__ = ["ClaimError", "ClaimTracker", "FINALIZER", "RESERVED_FOR_MAX_SIZE", "RESOURCE",
           "allocation", "can_be_reserved", "claim_name", "is_for_pod", "is_reserved_for_pod",
           "obj_key", "pod_claims", "reserved_for", "with_reservation"]
