"""Strategic merge patch (``application/strategic-merge-patch+json``), as the API server
applies it (apimachinery ``pkg/util/strategicpatch``, server options: parallel lists are
merged and unmatched nulls ignored).

* Maps merge key by key; ``null`` deletes a key; a scalar or a value of another type
  replaces.
* A list whose field has ``patchStrategy: merge`` (see ``kvert.api.patchmeta``) merges:
  lists of maps by their ``patchMergeKey`` (an item with the key of an existing item is
  merged into it, others are added), lists of scalars as a set union. Every other list
  is replaced whole (``tolerations``, ``args``, ...).
* Directives: ``$patch: replace`` in a map or as a list item replaces the map or list;
  ``$patch: delete`` in a map empties it, as a list item removes the items with its merge
  key; ``$deleteFromPrimitiveList/<field>: [...]`` removes scalars from a merged list;
  ``$setElementOrder/<field>: [...]`` orders a merged list; ``$retainKeys: [...]`` drops
  the keys of a map it does not name.
* Merged lists keep Kubernetes' order: items named in the patch in the patch's (or
  ``$setElementOrder``'s) order, server-only items interleaved where they were, so a new
  container lands first, as ``kubectl patch`` shows it.

Errors are ``BadRequest`` with the message apimachinery gives. ``create_two_way_merge_patch``
computes the patch from one object to another (what ``kubectl`` sends).

Differences from apimachinery, all in corners no client produces: a value added under a
key the original lacks is cleaned of nulls and directives the same way a merged one is
(``$patch: replace`` on an absent map yields the map rather than dropping it); a
``$deleteFromPrimitiveList`` always removes from the list (Go replaces a non-merging list
by the delete list); deletion lists apply after the merge of the same field whatever the
key order; unknown ``$`` directives are refused.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from kvert.api.errors import BadRequest, UnsupportedMediaType
from kvert.api.meta import deep_copy
from kvert.api.patchmeta import PatchMeta, patch_meta, supports_strategic
from kvert.api.types import Obj

__all__ = ["strategic_merge_patch", "create_two_way_merge_patch", "DIRECTIVE",
           "DELETE_FROM_PRIMITIVE_LIST", "SET_ELEMENT_ORDER", "RETAIN_KEYS"]

DIRECTIVE = "$patch"
REPLACE = "replace"
DELETE = "delete"
MERGE = "merge"
DELETE_FROM_PRIMITIVE_LIST = "$deleteFromPrimitiveList"
SET_ELEMENT_ORDER = "$setElementOrder"
RETAIN_KEYS = "$retainKeys"

_MISSING = object()
_NON_STRATEGIC_TYPES = ("application/json-patch+json, application/merge-patch+json, "
                        "application/apply-patch+yaml")

Meta = Callable[[tuple[str, ...]], PatchMeta]


def strategic_merge_patch(original: Obj, patch: Obj, api_version: str, kind: str) -> Obj:
    """Return ``original`` with ``patch`` applied; neither argument is modified."""
    if not supports_strategic(api_version, kind):
        raise UnsupportedMediaType(
            "the body of the request was in an unknown format - accepted media types "
            f"include: {_NON_STRATEGIC_TYPES}")
    if not isinstance(patch, dict):
        raise BadRequest("strategic merge patch must be a JSON object")

    def meta(path: tuple[str, ...]) -> PatchMeta:
        return patch_meta(api_version, kind, path)

    result = _Merger(meta).merge_map(deep_copy(original or {}), deep_copy(patch), ())
    return result


# ---- applying a patch ----------------------------------------------------------------


def _show(value: Any) -> str:
    try:
        return json.dumps(value, sort_keys=True)
    except (TypeError, ValueError):
        return repr(value)


def _no_merge_key(item: Any, key: str) -> BadRequest:
    return BadRequest(f"map: {_show(item)} does not contain declared merge key: {key}")


def _where(path: tuple[str, ...]) -> str:
    return "." + ".".join(path) if path else "the object"


class _Merger:
    def __init__(self, meta: Meta):
        self.meta = meta

    # -- maps ---------------------------------------------------------------------------

    def merge_map(self, original: Obj, patch: Obj, path: tuple[str, ...]) -> Obj:
        if DIRECTIVE in patch:
            directive = patch[DIRECTIVE]
            if directive == REPLACE:
                rest = {k: v for k, v in patch.items() if k != DIRECTIVE}
                return self.merge_map({}, rest, path)
            if directive == DELETE:
                return {}
            raise BadRequest(f"unknown patch type: {_show(directive)} in map: {_show(patch)}")
        if not isinstance(original, dict):
            original = {}
        self._retain_keys(original, patch, path)
        self._set_element_orders(original, patch, path)

        deletions: list[tuple[str, Any]] = []
        for key, value in patch.items():
            if key.startswith(DELETE_FROM_PRIMITIVE_LIST):
                deletions.append((_directive_field(key, DELETE_FROM_PRIMITIVE_LIST), value))
                continue
            if key.startswith("$"):
                raise BadRequest(f"unknown patch directive {key!r} at {_where(path)}")
            child = path + (key,)
            if value is None:
                original.pop(key, None)
                continue
            if key not in original or original[key] is None:
                fresh = self.fresh(value, child)
                if fresh is _MISSING:
                    original.pop(key, None)
                else:
                    original[key] = fresh
                continue
            current = original[key]
            if isinstance(current, dict) and isinstance(value, dict):
                if self.meta(child).replaces:
                    original[key] = self.merge_map({}, value, child)
                else:
                    original[key] = self.merge_map(current, value, child)
            elif isinstance(current, list) and isinstance(value, list):
                meta = self.meta(child)
                if meta.merges:
                    original[key] = self.merge_list(current, value, child, meta.merge_key)
                else:
                    original[key] = self.fresh(value, child)
            else:
                fresh = self.fresh(value, child)
                if fresh is _MISSING:
                    original.pop(key, None)
                else:
                    original[key] = fresh
        for field, values in deletions:
            if not isinstance(values, list):
                raise BadRequest("invalid patch format of primitive list")
            current = original.get(field)
            if isinstance(current, list):
                original[field] = [v for v in current if v not in values]
        return original

    def fresh(self, value: Any, path: tuple[str, ...]) -> Any:
        """A patch value for a key the original lacks (or holds another type under)."""
        if isinstance(value, dict):
            if value.get(DIRECTIVE) == DELETE:
                return _MISSING
            return self.merge_map({}, value, path)
        if isinstance(value, list):
            meta = self.meta(path)
            if meta.merges:
                return self.merge_list([], value, path, meta.merge_key)
            return [_clean(v) for v in value if not _is_directive(v)]
        return value

    def _retain_keys(self, original: Obj, patch: Obj, path: tuple[str, ...]) -> None:
        if RETAIN_KEYS not in patch:
            return
        keep = patch.pop(RETAIN_KEYS)
        if not isinstance(keep, list):
            raise BadRequest("invalid patch format of retainKeys")
        allowed = set(k for k in keep if isinstance(k, str))
        for key, value in patch.items():
            if value is None or key.startswith(DELETE_FROM_PRIMITIVE_LIST) or \
                    key.startswith(SET_ELEMENT_ORDER) or key == DIRECTIVE:
                continue
            if key not in allowed:
                raise BadRequest("invalid patch format of retainKeys")
        for key in [k for k in original if k not in allowed]:
            del original[key]

    # -- lists ----------------------------------------------------------------------------

    def merge_list(self, original: list[Any], patch: list[Any], path: tuple[str, ...],
                   merge_key: str | None) -> list[Any]:
        if not original and not patch:
            return list(original)
        kind = _element_kind(original, patch, path)
        if kind == "map":
            if not merge_key:
                raise BadRequest(f"cannot merge lists without merge key for {_where(path)}")
            original, items = self._special_elements(list(original), patch, merge_key, path)
            server_order = list(original)
            for item in items:
                if merge_key not in item:
                    raise _no_merge_key(item, merge_key)
                at = _find(original, merge_key, item[merge_key])
                if at is None:
                    original.append(self.merge_map({}, item, path))
                else:
                    original[at] = self.merge_map(original[at], item, path)
            merged, order = original, items
        else:
            merged = _dedupe(list(original) + list(patch))
            order, server_order = patch, original
        return _normalize(merged, order, server_order, merge_key if kind == "map" else None)

    def _special_elements(self, original: list[Any], patch: list[Any], merge_key: str,
                          path: tuple[str, ...]) -> tuple[list[Any], list[Any]]:
        items, replace = [], False
        for item in patch:
            if DIRECTIVE not in item:
                items.append(item)
                continue
            directive = item[DIRECTIVE]
            if directive == DELETE:
                if merge_key not in item:
                    raise _no_merge_key(item, merge_key)
                original = [o for o in original
                            if not (isinstance(o, dict) and o.get(merge_key) == item[merge_key])]
            elif directive == REPLACE:
                replace = True
            elif directive == MERGE:
                raise BadRequest("merging lists cannot yet be specified in the patch")
            else:
                raise BadRequest(f"unknown patch type: {_show(directive)} in map: {_show(item)}")
        if replace:
            return [self.merge_map({}, i, path) if isinstance(i, dict) else i for i in items], []
        return original, items

    def _set_element_orders(self, original: Obj, patch: Obj, path: tuple[str, ...]) -> None:
        for key in [k for k in patch if k.startswith(SET_ELEMENT_ORDER)]:
            order = patch.pop(key)
            field = _directive_field(key, SET_ELEMENT_ORDER)
            if not isinstance(order, list):
                raise BadRequest("invalid patch format of setElementOrder list")
            child = path + (field,)
            meta = self.meta(child)
            merge_key = meta.merge_key
            current, patch_list = original.get(field, _MISSING), patch.get(field, _MISSING)
            if current is not _MISSING and current is not None and not isinstance(current, list):
                raise BadRequest(f"{_where(child)} is not a list")
            if patch_list is not _MISSING and patch_list is not None \
                    and not isinstance(patch_list, list):
                raise BadRequest(f"{_where(child)} in the patch is not a list")
            # None from here on: absent or null, nothing to merge
            current_list = current if isinstance(current, list) else None
            patch_items = patch_list if isinstance(patch_list, list) else None
            _validate_order(patch_items if patch_items is not None else [], order, merge_key)
            merged: list[Any]
            if patch_items is None:
                if current_list is None:
                    continue
                merged = list(current_list)
            elif current_list is None:
                merged = self.fresh(patch_items, child)
            elif meta.merges:
                merged = self.merge_list(current_list, patch_items, child, merge_key)
            else:
                merged = self.fresh(patch_items, child)
            keyed = bool(merge_key) and any(isinstance(m, dict) for m in merged)
            original[field] = _normalize(merged, order,
                                         current_list if current_list is not None else [],
                                         merge_key if keyed else None)
            patch.pop(field, None)


# ---- helpers ------------------------------------------------------------------------------


def _directive_field(key: str, prefix: str) -> str:
    head, sep, field = key.partition("/")
    if head != prefix or not sep or not field:
        if prefix == DELETE_FROM_PRIMITIVE_LIST:
            raise BadRequest("invalid patch format of primitive list")
        raise BadRequest("invalid patch format of setElementOrder list")
    return field


def _is_directive(value: Any) -> bool:
    return isinstance(value, dict) and DIRECTIVE in value


def _clean(value: Any) -> Any:
    """Drop nulls and directive maps from a value taken over whole."""
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items()
                if v is not None and not k.startswith("$") and not _is_directive(v)}
    if isinstance(value, list):
        return [_clean(v) for v in value if not _is_directive(v)]
    return value


def _element_kind(original: list[Any], patch: list[Any], path: tuple[str, ...]) -> str:
    kinds = set()
    for item in list(original) + list(patch):
        if isinstance(item, list):
            raise BadRequest("lists of lists are not supported")
        kinds.add("map" if isinstance(item, dict) else "scalar")
    if len(kinds) > 1:
        raise BadRequest(f"list element types are not identical at {_where(path)}")
    return kinds.pop() if kinds else "scalar"


def _find(items: list[Any], key: str, value: Any) -> int | None:
    for i, item in enumerate(items):
        if isinstance(item, dict) and key in item and item[key] == value:
            return i
    return None


def _dedupe(items: list[Any]) -> list[Any]:
    out: list[Any] = []
    for item in items:
        if item not in out:
            out.append(item)
    return out


def _ident(item: Any, merge_key: str | None) -> Any:
    if merge_key is not None:
        return item.get(merge_key, _MISSING) if isinstance(item, dict) else _MISSING
    return item


def _index(items: list[Any], item: Any, merge_key: str | None) -> int:
    want = _ident(item, merge_key)
    if want is _MISSING:
        return -1
    for i, other in enumerate(items):
        if _ident(other, merge_key) == want:
            return i
    return -1


def _normalize(merged: list[Any], order: list[Any], server_order: list[Any],
               merge_key: str | None) -> list[Any]:
    """Kubernetes' ordering of a merged list (``normalizeElementOrder``).

    Items present in ``order`` (the patch list or ``$setElementOrder``) follow that order;
    the other (server-only) items keep their order in the live list and are interleaved
    with the first group by their live positions where both are known.
    """
    in_order = [m for m in merged if _index(order, m, merge_key) >= 0]
    server_only = [m for m in merged if _index(order, m, merge_key) < 0]
    big = len(order) + len(server_order) + 1
    in_order.sort(key=lambda m: _index(order, m, merge_key))
    server_only.sort(key=lambda m: (i if (i := _index(server_order, m, merge_key)) >= 0 else big))
    out: list[Any] = []
    i = j = 0
    while i < len(server_only) or j < len(in_order):
        if i >= len(server_only):
            out.append(in_order[j])
            j += 1
        elif j >= len(in_order):
            out.append(server_only[i])
            i += 1
        else:
            li = _index(server_order, server_only[i], merge_key)
            ri = _index(server_order, in_order[j], merge_key)
            if li >= 0 and ri >= 0 and li < ri:
                out.append(server_only[i])
                i += 1
            else:
                out.append(in_order[j])
                j += 1
    return out


def _validate_order(patch_list: list[Any], order: list[Any], merge_key: str | None) -> None:
    """The patch list's items must appear in ``$setElementOrder`` in the same order."""
    if not order or not patch_list:
        return
    items = [p for p in patch_list
             if not (isinstance(p, dict) and p.get(DIRECTIVE) == DELETE)] if merge_key \
        else list(patch_list)
    pi = oi = 0
    while pi < len(items) and oi < len(order):
        if _is_directive(items[pi]):
            pi += 1
            continue
        if merge_key:
            for item in (items[pi], order[oi]):
                if not isinstance(item, dict) or merge_key not in item:
                    raise _no_merge_key(item, merge_key)
            same = items[pi][merge_key] == order[oi][merge_key]
        else:
            same = items[pi] == order[oi]
        if same:
            pi += 1
        oi += 1
    if pi < len(items):
        raise BadRequest(f"the order in patch list:\n{_show(patch_list)}\n doesn't match "
                         f"{SET_ELEMENT_ORDER} list:\n{_show(order)}")


# ---- computing a patch -----------------------------------------------------------------------


def create_two_way_merge_patch(original: Obj, modified: Obj, api_version: str,
                               kind: str) -> Obj:
    """The strategic merge patch that turns ``original`` into ``modified``.

    Like apimachinery's ``CreateTwoWayMergePatch``: removed keys become ``null``, merged
    lists carry ``$patch: delete`` items or ``$deleteFromPrimitiveList`` and a
    ``$setElementOrder`` with the full new order, ``retainKeys`` maps carry ``$retainKeys``,
    other lists and changed scalars are sent whole.
    """

    def meta(path: tuple[str, ...]) -> PatchMeta:
        return patch_meta(api_version, kind, path)

    return _diff_maps(original or {}, modified or {}, (), meta)


def _diff_maps(old: Obj, new: Obj, path: tuple[str, ...], meta: Meta) -> Obj:
    patch: Obj = {}
    for key in old:
        if key not in new:
            patch[key] = None
    for key, value in new.items():
        child = path + (key,)
        if key not in old:
            patch[key] = deep_copy(value)
            continue
        before = old[key]
        if before == value:
            continue
        if isinstance(before, dict) and isinstance(value, dict):
            field_meta = meta(child)
            if field_meta.replaces:
                patch[key] = deep_copy(value)
                continue
            sub = _diff_maps(before, value, child, meta)
            if sub:
                if field_meta.retains_keys:
                    sub[RETAIN_KEYS] = sorted(value)
                patch[key] = sub
        elif isinstance(before, list) and isinstance(value, list) and meta(child).merges:
            _diff_lists(patch, key, before, value, child, meta)
        else:
            patch[key] = deep_copy(value)
    return patch


def _diff_lists(patch: Obj, key: str, old: list[Any], new: list[Any], path: tuple[str, ...],
                meta: Meta) -> None:
    merge_key = meta(path).merge_key
    if any(isinstance(v, dict) for v in old + new):
        if not merge_key:
            patch[key] = deep_copy(new)
            return
        for item in old + new:
            if not isinstance(item, dict) or merge_key not in item:
                raise _no_merge_key(item, merge_key)
        old_by = {item[merge_key]: item for item in old}
        new_keys = [item[merge_key] for item in new]
        changes: list[Any] = []
        for item in new:
            before = old_by.get(item[merge_key])
            if before is None:
                changes.append(deep_copy(item))
            elif before != item:
                sub = _diff_maps(before, item, path, meta)
                sub[merge_key] = item[merge_key]
                changes.append(sub)
        for item in old:
            if item[merge_key] not in new_keys:
                changes.append({merge_key: item[merge_key], DIRECTIVE: DELETE})
        if changes or [item[merge_key] for item in old] != new_keys:
            if changes:
                patch[key] = changes
            patch[f"{SET_ELEMENT_ORDER}/{key}"] = [{merge_key: k} for k in new_keys]
        return
    added = [v for v in new if v not in old]
    removed = [v for v in old if v not in new]
    if added:
        patch[key] = added
    if removed:
        patch[f"{DELETE_FROM_PRIMITIVE_LIST}/{key}"] = removed
    if added or removed or old != new:
        patch[f"{SET_ELEMENT_ORDER}/{key}"] = list(new)
