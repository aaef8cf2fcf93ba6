"""``ControllerRefManager.Claim*``: which of the candidate objects an owner controls.

An object controlled by the owner stays claimed while the selector (and ``accept``) still
matches it, else it is released (its controller reference removed). An orphan the selector
matches is adopted, once a fresh read shows the owner exists and is not being deleted.
ReplicaSets, ReplicationControllers, StatefulSets and DaemonSets claim pods this way, the
last two also their ControllerRevisions, and Deployments their ReplicaSets.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from kvert.api.errors import ApiError, NotFound
from kvert.api.meta import labels_of
from kvert.api.selectors import LabelSelector, SelectorError
from kvert.client.base import Client
from kvert.client.informer import Informer
from kvert.controllers.base import CONTROLLER_INDEX, ORPHAN_INDEX, controller_ref_of, object_key
from kvert.controllers.util import controller_ref, is_deleting, uid_of

log = logging.getLogger(__name__)


def candidates(informer: Informer, owner: dict[str, Any]) -> list[dict[str, Any]]:
    """What an owner may claim: the objects it controls and the orphans of its namespace
    (from the informer's controller and orphan indexes, not the whole namespace)."""
    return informer.by_index(CONTROLLER_INDEX, uid_of(owner)) + \
        informer.by_index(ORPHAN_INDEX, owner["metadata"].get("namespace", ""))


async def claim(client: Client, owner: dict, owner_resource: str, selector: LabelSelector,
                candidates: list[dict], resource: str,
                accept: Callable[[dict], bool] = lambda obj: True) -> list[dict]:
    claimed: list[dict] = []
    uid = uid_of(owner)
    can_adopt: bool | None = None
    for obj in candidates:
        ref = controller_ref_of(obj)
        matches = not selector.empty and selector.matches(labels_of(obj)) and accept(obj)
        if ref is not None:
            if ref.get("uid") != uid:
                continue
            if matches:
                claimed.append(obj)
            elif not is_deleting(owner):
                await _patch_refs(client, resource, obj, {"$patch": "delete", "uid": uid}, "release")
            continue
        if not matches or is_deleting(owner) or is_deleting(obj):
            continue
        if can_adopt is None:
            can_adopt = await _can_adopt(client, owner, owner_resource)
        if not can_adopt:
            continue
        adopted = await _patch_refs(client, resource, obj, controller_ref(owner), "adopt")
        if adopted is not None:
            claimed.append(adopted)
    return claimed


async def _can_adopt(client: Client, owner: dict, owner_resource: str) -> bool:
    """Adoption re-reads the owner: it must still exist and not be being deleted."""
    try:
        fresh = await client.get(owner_resource, owner["metadata"]["name"], owner["metadata"]["namespace"])
    except NotFound:
        return False
    return uid_of(fresh) == uid_of(owner) and not is_deleting(fresh)


async def _patch_refs(client: Client, resource: str, obj: dict, ref: dict, what: str) -> dict | None:
    patch = {"metadata": {"ownerReferences": [ref], "uid": uid_of(obj)}}
    try:
        return await client.patch(resource, obj["metadata"]["name"], patch, "strategic",
                                  namespace=obj["metadata"]["namespace"])
    except ApiError as e:
        log.info("could not %s %s %s: %s", what, resource, object_key(obj), e)
        return None


def workload_selector(owner: dict) -> LabelSelector:
    """An apps/v1 owner's ``spec.selector``; an invalid or empty one selects nothing (such an
    owner claims no pods)."""
    try:
        selector = LabelSelector.from_dict((owner.get("spec") or {}).get("selector"))
    except SelectorError:
        return LabelSelector.nothing()
    return LabelSelector.nothing() if selector.empty else selector
