"""Patch documents applied to objects: JSON merge patch (RFC 7386) and JSON patch (RFC 6902).

Strategic merge patch and server-side apply are the API server's (they need list
merge keys per field); they plug in here by patch type.
"""

from __future__ import annotations

import copy
from typing import Any, Callable

import jsonpatch

from kvert.api.errors import BadRequest, UnsupportedMediaType

MERGE = "application/merge-patch+json"
JSON = "application/json-patch+json"
STRATEGIC = "application/strategic-merge-patch+json"
APPLY = "application/apply-patch+yaml"

# Short names accepted by in-process callers, as ``kubectl patch --type`` spells them.
_ALIASES = {"merge": MERGE, "json": JSON, "strategic": STRATEGIC, "apply": APPLY}

PatchFn = Callable[[dict, Any], dict]
_EXTRA: dict[str, PatchFn] = {}


def register_patch_type(content_type: str, fn: PatchFn) -> None:
    """Add a patch type (strategic merge, apply) implemented by a higher layer."""
    _EXTRA[content_type] = fn


def content_type_of(patch_type: str) -> str:
    return _ALIASES.get(patch_type, patch_type)


def merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386: objects merge key by key, ``null`` removes a key, anything else replaces."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    result = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = merge_patch(result.get(key), value)
    return result


def json_patch(target: dict, operations: Any) -> dict:
    if not isinstance(operations, list):
        raise BadRequest("json patch must be a list of operations")
    try:
        return jsonpatch.JsonPatch(operations).apply(target)
    except (jsonpatch.JsonPatchException, jsonpatch.JsonPointerException) as e:
        raise BadRequest(f"the server rejected our request due to an error in our request: {e}") from e
    except (TypeError, KeyError, IndexError) as e:
        raise BadRequest(f"invalid json patch: {e}") from e


def apply_patch(target: dict, patch: Any, patch_type: str) -> dict:
    """Return a patched copy of ``target``; ``target`` is never modified."""
    content_type = content_type_of(patch_type)
    if content_type == MERGE:
        if not isinstance(patch, dict):
            raise BadRequest("merge patch must be a JSON object")
        return merge_patch(target, patch)
    if content_type == JSON:
        return json_patch(copy.deepcopy(target), patch)
    if content_type in _EXTRA:
        return _EXTRA[content_type](copy.deepcopy(target), patch)
    raise UnsupportedMediaType(f"the body of the request was in an unknown format - accepted media "
                               f"types include: {', '.join([JSON, MERGE, *_EXTRA])}")
