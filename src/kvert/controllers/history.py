"""ControllerRevisions of StatefulSets and DaemonSets (``pkg/controller/history`` and the two
controllers' ``getPatch``).

A revision's ``data`` is the strategic merge patch that restores the owner's pod template:
``{"spec": {"template": {..., "$patch": "replace"}}}``. Two revisions are equal when their
data are. A StatefulSet's revision is named ``<set>-<hash>`` with ``HashControllerRevision``
(FNV-32, not FNV-32a, of the data's JSON and of the collision count written in decimal), and
its pods carry the revision's *name* in ``controller-revision-hash``; a DaemonSet's revision
is named with ``controller.ComputeHash`` of its template, and its pods carry that *hash*.
Kubernetes hashes Go's JSON of the patch; kvert hashes the canonical JSON (sorted keys, no
spaces), so the names have the same shape, not the same letters.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from kvert.api.errors import AlreadyExists, NotFound
from kvert.api.meta import deep_copy
from kvert.client.base import Client
from kvert.controllers.base import controller_ref_of
from kvert.controllers.deployment import safe_encode
from kvert.controllers.util import controller_ref, uid_of

log = logging.getLogger(__name__)

REVISIONS = "apps/controllerrevisions"
REVISION_HASH_LABEL = "controller-revision-hash"
MAX_NAME_PREFIX = 223   # ControllerRevisionName keeps the hash within a 253-character name


def template_patch(owner: dict) -> dict:
    """``getPatch``: the owner's template, replacing the whole template when applied."""
    template = deep_copy((owner.get("spec") or {}).get("template") or {})
    template["$patch"] = "replace"
    return {"spec": {"template": template}}


def data_bytes(data: Any) -> bytes:
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def fnv32(data: bytes, h: int = 0x811C9DC5) -> int:
    """FNV-1 (multiply, then xor), as Go's ``fnv.New32``."""
    for byte in data:
        h = (h * 0x01000193) & 0xFFFFFFFF
        h ^= byte
    return h


def hash_revision(data: Any, collision_count: int | None) -> str:
    """``HashControllerRevision``."""
    h = fnv32(data_bytes(data))
    if collision_count is not None:
        h = fnv32(str(collision_count).encode(), h)
    return safe_encode(str(h))


def revision_name(owner_name: str, hash_: str) -> str:
    return f"{owner_name[:MAX_NAME_PREFIX]}-{hash_}"


def new_revision(owner: dict, name: str, hash_: str, revision: int) -> dict:
    """``NewControllerRevision``: the owner's template labels plus the hash label, its
    annotations, a controller reference to it."""
    meta = owner["metadata"]
    labels = dict(((owner.get("spec") or {}).get("template") or {}).get("metadata", {}).get("labels") or {})
    labels[REVISION_HASH_LABEL] = hash_
    rev_meta: dict[str, Any] = {"name": name, "namespace": meta.get("namespace"), "labels": labels,
                                "ownerReferences": [controller_ref(owner)]}
    if meta.get("annotations"):
        rev_meta["annotations"] = dict(meta["annotations"])
    return {"apiVersion": "apps/v1", "kind": "ControllerRevision", "metadata": rev_meta,
            "data": template_patch(owner), "revision": revision}


def equal_revision(a: dict, b: dict) -> bool:
    return data_bytes(a.get("data")) == data_bytes(b.get("data"))


def sorted_revisions(revisions: list[dict]) -> list[dict]:
    """By revision number, then name (``history.SortControllerRevisions``)."""
    return sorted(revisions, key=lambda r: (int(r.get("revision") or 0), r["metadata"]["name"]))


def next_revision(revisions: list[dict]) -> int:
    return int(sorted_revisions(revisions)[-1].get("revision") or 0) + 1 if revisions else 1


def apply_revision(owner: dict, revision: dict) -> dict:
    """``ApplyRevision``: the owner with the revision's template."""
    out = deep_copy(owner)
    template = deep_copy(((revision.get("data") or {}).get("spec") or {}).get("template") or {})
    template.pop("$patch", None)
    out.setdefault("spec", {})["template"] = template
    return out


async def create_revision(client: Client, owner: dict, revision: dict) -> dict:
    """Create a revision; an existing one the owner controls with the same data is returned
    instead. Any other existing one (a hash collision) raises AlreadyExists: the caller bumps
    its collision count."""
    namespace = owner["metadata"]["namespace"]
    try:
        return await client.create(REVISIONS, revision, namespace=namespace)
    except AlreadyExists:
        try:
            existing = await client.get(REVISIONS, revision["metadata"]["name"], namespace)
        except NotFound:
            raise AlreadyExists(REVISIONS, revision["metadata"]["name"]) from None
        ref = controller_ref_of(existing)
        if ref is not None and ref.get("uid") == uid_of(owner) and equal_revision(existing, revision):
            return existing
        raise


async def truncate_history(client: Client, revisions: list[dict], live: set[str], limit: int) -> None:
    """Delete the oldest revisions no pod, current or update revision uses, beyond ``limit``."""
    history = [r for r in sorted_revisions(revisions) if r["metadata"]["name"] not in live]
    for rev in history[:max(0, len(history) - limit)]:
        try:
            await client.delete(REVISIONS, rev["metadata"]["name"], namespace=rev["metadata"]["namespace"])
        except NotFound:
            pass
