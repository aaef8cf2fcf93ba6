"""The resource types kvert serves: group, version, kind, plural, scope, subresources.

The built-in ones are declared in :mod:`kvert.api.kindspecs`; custom resources are
registered here as their CRDs are served.

A resource is named by its *key*: the plural for the core group (``"pods"``) and
``"GROUP/PLURAL"`` otherwise (``"apps/deployments"``). Stores, clients and the API
server all address objects by key, so custom resources need nothing special.
"""

from __future__ import annotations

from kvert.api.kindspecs import ALL_VERBS, BUILTIN_KINDS, CREATE_ONLY, KindSpec, ResourceType
from kvert.api.types import Obj

__all__ = ["ALL_VERBS", "BUILTIN", "CREATE_ONLY", "KindSpec", "ResourceType", "all_types",
           "by_gvk", "by_key", "for_object", "register", "unregister", "versions_of"]

# The built-in kinds are declared once, with the names of the tables that describe them,
# in kvert.api.kindspecs; this is the resource type of each, in discovery order.
BUILTIN: tuple[ResourceType, ...] = tuple(spec.resource for spec in BUILTIN_KINDS)

_BY_KEY: dict[str, ResourceType] = {rt.key: rt for rt in BUILTIN}
_BY_GVK: dict[tuple[str, str], ResourceType] = {(rt.api_version, rt.kind): rt for rt in BUILTIN}


class _VersionIndex:
    """Every served version by resource key, with the table size it was built from."""

    def __init__(self) -> None:
        self.by_key: dict[str, list[ResourceType]] = {}
        self.size = -1  # never a table's size: built on first use

    def clear(self) -> None:
        self.by_key.clear()
        self.size = -1


_VERSIONS = _VersionIndex()


def register(rt: ResourceType) -> None:
    """Add or replace a type (a custom resource version) in the table every layer uses.

    The key names the storage, shared by every version of a resource: the last version
    registered under a key is the one ``by_key`` returns, so register the storage
    version last.
    """
    _BY_KEY[rt.key] = rt
    _BY_GVK[(rt.api_version, rt.kind)] = rt
    _VERSIONS.clear()


def unregister(key: str) -> None:
    """Stop serving a resource (its CRD was deleted): every version goes."""
    _BY_KEY.pop(key, None)
    for gvk in [gvk for gvk, rt in _BY_GVK.items() if rt.key == key]:
        del _BY_GVK[gvk]
    _VERSIONS.clear()


def by_gvk(api_version: str, kind: str) -> ResourceType:
    try:
        return _BY_GVK[(api_version, kind)]
    except KeyError:
        raise KeyError(f"unknown kind {kind!r} in {api_version!r}") from None


def versions_of(key: str) -> list[ResourceType]:
    """Every served version of a resource (asked on every request: kept by key, rebuilt
    when the table changes)."""
    if _VERSIONS.size != len(_BY_GVK):
        _VERSIONS.clear()
        for rt in _BY_GVK.values():
            _VERSIONS.by_key.setdefault(rt.key, []).append(rt)
        _VERSIONS.size = len(_BY_GVK)
    return list(_VERSIONS.by_key.get(key, ()))


def by_key(key: str) -> ResourceType:
    try:
        return _BY_KEY[key]
    except KeyError:
        raise KeyError(f"unknown resource {key!r}") from None


def for_object(obj: Obj) -> ResourceType:
    """The type of an object from its apiVersion and kind."""
    api_version, kind = obj.get("apiVersion", ""), obj.get("kind", "")
    try:
        return _BY_GVK[(api_version, kind)]
    except KeyError:
        raise KeyError(f"unknown kind {kind!r} in {api_version!r}") from None


def all_types() -> list[ResourceType]:
    return list(_BY_KEY.values())
