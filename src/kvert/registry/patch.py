"""Patch documents applied to objects: JSON merge patch (RFC 7386), JSON patch (RFC 6902),
strategic merge patch (``kvert.registry.strategic``) and server-side apply
(``kvert.registry.apply``); the last two take their list merge keys per field from
``kvert.api.patchmeta``. Other layers may add types with ``register_patch_type``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import jsonpatch

from kvert.api.errors import BadRequest, Invalid, UnsupportedMediaType, forbidden
from kvert.api.meta import deep_copy
from kvert.api.types import Obj
from kvert.registry.apply import server_side_apply
from kvert.registry.strategic import strategic_merge_patch

MERGE = "application/merge-patch+json"
JSON = "application/json-patch+json"
STRATEGIC = "application/strategic-merge-patch+json"
APPLY = "application/apply-patch+yaml"

# Short names accepted by in-process callers, as ``kubectl patch --type`` spells them.
_ALIASES = {"merge": MERGE, "json": JSON, "strategic": STRATEGIC, "apply": APPLY}

# (a copy of the target, the patch document) -> the patched object
PatchFn = Callable[[Obj, Any], Obj]
_EXTRA: dict[str, PatchFn] = {}


def register_patch_type(content_type: str, fn: PatchFn) -> None:
    """Add a patch type (strategic merge, apply) implemented by a higher layer."""
    _EXTRA[content_type] = fn


def content_type_of(patch_type: str) -> str:
    return _ALIASES.get(patch_type, patch_type)


def merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386: objects merge key by key, ``null`` removes a key, anything else replaces."""
    if not isinstance(patch, dict):
        return deep_copy(patch)
    result = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = merge_patch(result.get(key), value)
    return result


def json_patch(target: Obj, operations: Any) -> Any:
    """``target`` with the RFC 6902 operations applied: changed in place (pass a copy). An
    operation on the root may make it any JSON value."""
    if not isinstance(operations, list):
        raise BadRequest("json patch must be a list of operations")
    if len(operations) == 1 and _sets_a_top_level_member(target, operations[0]):
        target[operations[0]["path"][1:]] = deep_copy(operations[0]["value"])
        return target
    try:
        return jsonpatch.JsonPatch(operations).apply(target, in_place=True)
    except (jsonpatch.JsonPatchException, jsonpatch.JsonPointerException) as e:
        raise BadRequest(f"the server rejected our request due to an error in our request: {e}") from e
    except (TypeError, KeyError, IndexError) as e:
        raise BadRequest(f"invalid json patch: {e}") from e


def _sets_a_top_level_member(target: Any, op: Any) -> bool:
    """One ``add`` (or ``replace`` of a present member) of a top-level member, such as the
    VPA recommender's ``add /status`` every time a recommendation moves: applied here, the
    value copied by ``deep_copy`` instead of the library's ``copy.deepcopy`` (a third of
    the time). Everything else, errors included, goes to the library."""
    if not isinstance(target, dict) or not isinstance(op, dict) or "value" not in op:
        return False
    path, kind = op.get("path"), op.get("op")
    if not isinstance(path, str) or len(path) < 2 or path[0] != "/" or "/" in path[1:] or "~" in path:
        return False
    return kind == "add" or (kind == "replace" and path[1:] in target)


def apply_patch(target: Obj | None, patch: Any, patch_type: str, *,
                field_manager: str | None = None, force: bool = False,
                now: str | None = None, subresource: str = "",
                api_version: str | None = None, kind: str | None = None) -> Any:
    """Return a patched copy of ``target``; ``target`` is never modified. A JSON patch of
    the root may make it any JSON value: the caller checks that it is still an object.

    ``api_version`` and ``kind`` default to the target's (strategic merge patch and apply
    need them for the field semantics). Apply also takes the field manager (required),
    ``force``, the time to record in managedFields and the subresource; applying to a
    missing object (``target`` None) creates it.
    """
    content_type = content_type_of(patch_type)
    if content_type == APPLY:
        api_version = api_version or (target or {}).get("apiVersion", "")
        kind = kind or (target or {}).get("kind", "")
        return server_side_apply(target, patch, field_manager or "", force, api_version, kind,
                                 now, subresource=subresource)
    if force:
        raise Invalid("PatchOptions", "", [forbidden("force", "may not be specified for "
                                                              "non-apply patch")],
                      group="meta.k8s.io")
    if target is None:
        raise BadRequest("only an apply patch can create an object")
    if content_type == STRATEGIC:
        if isinstance(patch, (bytes, bytearray, str)):
            patch = _decode_json(patch)
        return strategic_merge_patch(target, patch, api_version or target.get("apiVersion", ""),
                                     kind or target.get("kind", ""))
    if content_type == MERGE:
        if not isinstance(patch, dict):
            raise BadRequest("merge patch must be a JSON object")
        return merge_patch(target, patch)
    if content_type == JSON:
        return json_patch(deep_copy(target), patch)
    if content_type in _EXTRA:
        return _EXTRA[content_type](deep_copy(target), patch)
    accepted = ", ".join([JSON, MERGE, STRATEGIC, APPLY, *_EXTRA])
    raise UnsupportedMediaType(f"the body of the request was in an unknown format - accepted media "
                               f"types include: {accepted}")


def _decode_json(body: bytes | bytearray | str) -> Any:
    try:
        return json.loads(body)
    except ValueError as e:
        raise BadRequest(f"error decoding patch: {e}") from e
