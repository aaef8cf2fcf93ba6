"""CertificateSigningRequests (``csrStrategy`` and its status and approval strategies): a CSR
is created with its requester's identity in the spec and an empty status; afterwards its
spec never changes, ``/status`` keeps the Approved/Denied conditions and ``/approval``
takes only the conditions; conditions get their timestamps from the server."""

from __future__ import annotations

from kvert.api import validation
from kvert.api.conditions import Condition, conditions_of
from kvert.api.errors import Cause
from kvert.api.kinds import ResourceType
from kvert.api.meta import deep_copy, format_time
from kvert.api.types import Obj
from kvert.auth.user import User
from kvert.clock import Clock
from kvert.registry.strategies.base import (
    DefaultStrategy,
    StatusStrategy,
    SubresourceStrategy,
    copy_free_update,
    merge_status_update,
    with_resource_version_of,
)

# The conditions only ``/approval`` may change.
_APPROVAL = ("Approved", "Denied")

_validate_csr_approval = copy_free_update(validation.validate_csr_approval)


class CertificateSigningRequestStrategy(DefaultStrategy):
    def prepare_for_create(self, rt: ResourceType, obj: Obj, requester: User | None) -> None:
        _set_requester(obj, requester)
        # users cannot create pre-approved requests
        obj["status"] = {}

    def prepare_for_update(self, rt: ResourceType, new: Obj, old: Obj, clock: Clock) -> Obj:
        new = super().prepare_for_update(rt, new, old, clock)
        if isinstance(old.get("spec"), dict):
            new["spec"] = deep_copy(old["spec"])
        return new


class CertificateSigningRequestStatusStrategy(StatusStrategy):
    def prepare_for_update(self, rt: ResourceType, new: Obj, old: Obj, clock: Clock) -> Obj:
        return merge_csr_status(new, old, format_time(clock.now()))


class CertificateSigningRequestApprovalStrategy(SubresourceStrategy):
    def prepare_for_update(self, rt: ResourceType, new: Obj, old: Obj, clock: Clock) -> Obj:
        return merge_csr_approval(new, old, format_time(clock.now()))

    def validate_update(self, rt: ResourceType, new: Obj, old: Obj) -> list[Cause]:
        return _validate_csr_approval(new, old)


def _set_requester(csr: Obj, requester: User | None) -> None:
    """Whatever the client sent, the spec names the user whose request created the object."""
    spec = csr.setdefault("spec", {})
    for field in ("username", "uid", "groups", "extra"):
        spec.pop(field, None)
    if requester is None:
        return
    if requester.name:
        spec["username"] = requester.name
    if requester.uid:
        spec["uid"] = requester.uid
    if requester.groups:
        spec["groups"] = list(requester.groups)
    if requester.extra:
        spec["extra"] = requester.extra_dict()


def _conditions(obj: Obj) -> list[Condition]:
    status = obj.get("status") or {}
    # any other shape is validation's to refuse, after the stamping
    return conditions_of(status) if isinstance(status.get("conditions"), list) else []


def _stamp_conditions(new: Obj, old: Obj, now: str) -> None:
    """populateConditionTimestamps: a condition without times is stamped now, keeping the
    transition time of an old condition of the same type and status."""
    before = {c.get("type"): c for c in _conditions(old)}
    for condition in _conditions(new):
        if not condition.get("lastUpdateTime"):
            condition["lastUpdateTime"] = now
        if not condition.get("lastTransitionTime"):
            previous = before.get(condition.get("type"))
            if previous is not None and previous.get("status") == condition.get("status") \
                    and previous.get("lastTransitionTime"):
                condition["lastTransitionTime"] = previous["lastTransitionTime"]
            else:
                condition["lastTransitionTime"] = now


def merge_csr_status(new: Obj, old: Obj, now: str) -> Obj:
    """A CSR's ``/status`` write: the new status, but the stored Approved/Denied conditions
    (changing those is the approval subresource's job)."""
    merged = merge_status_update(new, old)
    kept = [c for c in _conditions(merged) if c.get("type") not in _APPROVAL]
    kept += [deep_copy(c) for c in _conditions(old) if c.get("type") in _APPROVAL]
    if kept or "conditions" in (merged.get("status") or {}):
        merged.setdefault("status", {})["conditions"] = kept
    _stamp_conditions(merged, old, now)
    return merged


def merge_csr_approval(new: Obj, old: Obj, now: str) -> Obj:
    """A CSR's ``/approval`` write: the stored object with the new conditions only."""
    merged = deep_copy(old)
    conditions = (new.get("status") or {}).get("conditions")
    status = merged.setdefault("status", {})
    if conditions is None:
        status.pop("conditions", None)
    else:
        status["conditions"] = deep_copy(conditions)
    _stamp_conditions(merged, old, now)
    return with_resource_version_of(merged, new)
