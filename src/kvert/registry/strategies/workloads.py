"""Kinds created with the empty status Go encodes for them, and the Job's and the CRD's
create rules."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kvert.api import jobs
from kvert.api.kinds import ResourceType
from kvert.api.types import Obj
from kvert.auth.user import User
from kvert.registry.deletion import ORPHAN
from kvert.registry.strategies.base import DefaultStrategy


class CreatedWithStatus(DefaultStrategy):
    """Create replaces whatever status was sent by ``status``: the members of the kind's
    status that are not omitempty, as Go encodes an empty one. Clients read them at once
    (kubectl wait --for=jsonpath='{.status.availableReplicas}'=3)."""

    def __init__(self, status: Mapping[str, Any]):
        self.status = dict(status)

    def prepare_for_create(self, rt: ResourceType, obj: Obj, requester: User | None) -> None:
        obj["status"] = dict(self.status)


class ReplicationControllerStrategy(CreatedWithStatus):
    """An RC orphans its pods when deleted without a propagation policy, kept from before
    garbage collection for backward compatibility."""

    def gc_policy(self, rt: ResourceType) -> str:
        return ORPHAN


class JobStrategy(DefaultStrategy):
    """A Job without ``manualSelector: true`` gets the selector and template labels of its
    uid (``generateSelector``), so its uid is known before validation."""

    def names_own_uid(self, rt: ResourceType) -> bool:
        return True

    def prepare_for_create(self, rt: ResourceType, obj: Obj, requester: User | None) -> None:
        super().prepare_for_create(rt, obj, requester)
        jobs.generate_selector(obj)


class CustomResourceDefinitionStrategy(DefaultStrategy):
    def prepare_for_create(self, rt: ResourceType, obj: Obj, requester: User | None) -> None:
        # an empty status recording the storage version
        versions = (obj.get("spec") or {}).get("versions")
        storage = next((v.get("name") for v in versions if isinstance(v, dict) and v.get("storage")),
                       None) if isinstance(versions, list) else None
        obj["status"] = {"acceptedNames": {"plural": "", "kind": ""},
                         "storedVersions": [storage] if isinstance(storage, str) else []}
