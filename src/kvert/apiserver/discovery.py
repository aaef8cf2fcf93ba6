"""API discovery documents: what groups, versions and resources the server serves.

Two forms exist and kubectl uses both:

* legacy discovery: ``GET /api`` (APIVersions), ``GET /apis`` (APIGroupList),
  ``GET /apis/{group}`` (APIGroup) and one APIResourceList per group version
  (``GET /api/v1``, ``GET /apis/{group}/{version}``);
* aggregated discovery (KEP-3352): ``GET /api`` and ``GET /apis`` with
  ``Accept: application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList`` answer
  everything in one APIGroupDiscoveryList. The response must carry that media type as its
  Content-Type, or clients treat the body as the legacy form.

Every function takes the served types (``kvert.api.kinds.all_types()``, plus the unstored
``metrics.k8s.io`` types when the server has a metrics provider); other registered
versions of the same resources are included (a custom resource may serve several).
"""

from __future__ import annotations

import base64
import hashlib
import re
from collections.abc import Iterable
from typing import Any

from kvert.api import kinds as kinds_mod

from .openapi.builder import expand_types

AGGREGATED_MEDIA_TYPE = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
AGGREGATED_MEDIA_TYPE_V2BETA1 = \
    "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList"

# Where kube-apiserver lists its groups; others (custom resources) follow, by name.
_GROUP_ORDER = (
    "apiregistration.k8s.io", "apps", "events.k8s.io", "authentication.k8s.io",
    "authorization.k8s.io", "autoscaling", "batch", "certificates.k8s.io", "networking.k8s.io",
    "policy", "rbac.authorization.k8s.io", "storage.k8s.io", "admissionregistration.k8s.io",
    "apiextensions.k8s.io", "scheduling.k8s.io", "coordination.k8s.io", "node.k8s.io",
    "discovery.k8s.io", "flowcontrol.apiserver.k8s.io", "resource.k8s.io",
)

# subresource -> (verbs, (group, version, kind) of what it reads/writes or None for the parent)
_SUBRESOURCES: dict[str, tuple[tuple[str, ...], tuple[str, str, str] | None]] = {
    "status": (("get", "patch", "update"), None),
    "resize": (("get", "patch", "update"), None),
    "scale": (("get", "patch", "update"), ("autoscaling", "v1", "Scale")),
    "binding": (("create",), ("", "v1", "Binding")),
    "eviction": (("create",), ("policy", "v1", "Eviction")),
    "token": (("create",), ("authentication.k8s.io", "v1", "TokenRequest")),
    "log": (("get",), None),
    "exec": (("create", "get"), ("", "v1", "PodExecOptions")),
    "attach": (("create", "get"), ("", "v1", "PodAttachOptions")),
    "portforward": (("create", "get"), ("", "v1", "PodPortForwardOptions")),
    "ephemeralcontainers": (("get", "patch", "update"), None),
    "finalize": (("update",), None),
}


def _version_key(version: str) -> tuple:
    """Kubernetes' version priority: GA before beta before alpha, higher numbers first;
    versions not of the form v<N>[alpha|beta<M>] last, alphabetically."""
    m = re.fullmatch(r"v(\d+)(?:(alpha|beta)(\d+))?", version)
    if not m:
        return (3, 0, 0, version)
    major = int(m.group(1))
    stage = {None: 0, "beta": 1, "alpha": 2}[m.group(2)]
    minor = int(m.group(3) or 0)
    return (stage, -major, -minor, version)


def _group_key(group: str) -> tuple:
    try:
        return (0, _GROUP_ORDER.index(group), group)
    except ValueError:
        return (1, 0, group)


def storage_version_hash(group: str, version: str, kind: str) -> str:
    """The opaque ``storageVersionHash`` of a resource: the first 8 bytes of the SHA-256 of
    "group/version/kind" of its storage version, base64-encoded."""
    digest = hashlib.sha256(f"{group}/{version}/{kind}".encode()).digest()
    return base64.b64encode(digest[:8]).decode()


def _storage_of(rt):
    try:
        stored = kinds_mod.by_key(rt.key)
    except KeyError:
        return rt
    return stored if stored.group == rt.group else rt


def _by_group(types: Iterable) -> dict[str, dict[str, list]]:
    out: dict[str, dict[str, list]] = {}
    for rt in expand_types(types):
        out.setdefault(rt.group, {}).setdefault(rt.version, []).append(rt)
    for versions in out.values():
        for items in versions.values():
            items.sort(key=lambda rt: rt.plural)
    return out


def _sorted_versions(versions: Iterable[str]) -> list[str]:
    return sorted(versions, key=_version_key)


def _group_entry(group: str, versions: Iterable[str]) -> dict:
    listed = [{"groupVersion": f"{group}/{v}", "version": v} for v in _sorted_versions(versions)]
    return {"name": group, "versions": listed, "preferredVersion": listed[0]}


# -- legacy discovery ------------------------------------------------------------------------

def api_versions(server_address: str) -> dict:
    """``GET /api``: the core API's versions and the address clients should use."""
    return {
        "kind": "APIVersions",
        "versions": ["v1"],
        "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0",
                                        "serverAddress": server_address}],
    }


def api_group_list(types) -> dict:
    """``GET /apis``: every named group with its versions, the preferred version first."""
    groups = _by_group(types)
    return {
        "kind": "APIGroupList",
        "apiVersion": "v1",
        "groups": [_group_entry(g, groups[g]) for g in sorted(groups, key=_group_key) if g],
    }


def api_group(types, group: str) -> dict | None:
    """``GET /apis/{group}``, or None if the group is not served."""
    if not group:
        return None
    versions = _by_group(types).get(group)
    if not versions:
        return None
    return {"kind": "APIGroup", "apiVersion": "v1", **_group_entry(group, versions)}


def _resource_entry(rt) -> dict:
    entry: dict[str, Any] = {
        "name": rt.plural,
        "singularName": rt.singular,
        "namespaced": rt.namespaced,
        "kind": rt.kind,
        "verbs": sorted(rt.verbs),
    }
    if rt.short_names:
        entry["shortNames"] = list(rt.short_names)
    if rt.categories:
        entry["categories"] = list(rt.categories)
    if rt.stored:   # types served without storage (metrics.k8s.io) have no storage version
        stored = _storage_of(rt)
        entry["storageVersionHash"] = storage_version_hash(stored.group, stored.version, stored.kind)
    return entry


def _subresource_spec(rt, sub: str) -> tuple[tuple[str, ...], tuple[str, str, str]]:
    verbs, target = _SUBRESOURCES.get(sub, (("get",), None))
    return verbs, target or (rt.group, rt.version, rt.kind)


def api_resource_list(types, group: str, version: str) -> dict | None:
    """``GET /api/v1`` or ``GET /apis/{group}/{version}``: the resources of one group version,
    each subresource as its own ``resource/subresource`` entry. None if not served."""
    items = _by_group(types).get(group, {}).get(version)
    if not items:
        return None
    resources = []
    for rt in items:
        resources.append(_resource_entry(rt))
        for sub in sorted(rt.subresources):
            verbs, (g, v, k) = _subresource_spec(rt, sub)
            entry: dict[str, Any] = {"name": f"{rt.plural}/{sub}", "singularName": "",
                                     "namespaced": rt.namespaced}
            if (g, v) != (rt.group, rt.version):
                entry["group"] = g
                entry["version"] = v
            entry["kind"] = k
            entry["verbs"] = list(verbs)
            resources.append(entry)
    out: dict[str, Any] = {"kind": "APIResourceList"}
    if group:
        out["apiVersion"] = "v1"
    out["groupVersion"] = f"{group}/{version}" if group else version
    out["resources"] = resources
    return out


# -- aggregated discovery --------------------------------------------------------------------

def _gvk(group: str, version: str, kind: str) -> dict:
    return {"group": group, "version": version, "kind": kind}


def _discovery_resource(rt) -> dict:
    entry: dict[str, Any] = {
        "resource": rt.plural,
        "responseKind": _gvk(rt.group, rt.version, rt.kind),
        "scope": "Namespaced" if rt.namespaced else "Cluster",
        "singularResource": rt.singular,
        "verbs": sorted(rt.verbs),
    }
    if rt.short_names:
        entry["shortNames"] = list(rt.short_names)
    if rt.categories:
        entry["categories"] = list(rt.categories)
    subs = []
    for sub in sorted(rt.subresources):
        verbs, (g, v, k) = _subresource_spec(rt, sub)
        subs.append({"subresource": sub, "responseKind": _gvk(g, v, k), "verbs": list(verbs)})
    if subs:
        entry["subresources"] = subs
    return entry


def _group_discovery(group: str, versions: dict[str, list]) -> dict:
    metadata: dict[str, Any] = {"name": group} if group else {}
    metadata["creationTimestamp"] = None
    return {
        "metadata": metadata,
        "versions": [{"version": v,
                      "resources": [_discovery_resource(rt) for rt in versions[v]],
                      "freshness": "Current"}
                     for v in _sorted_versions(versions)],
    }


def aggregated_discovery(types, legacy: bool, version: str = "v2") -> dict:
    """The APIGroupDiscoveryList of ``/api`` (``legacy``: the core group) or ``/apis`` (every
    named group), in ``apidiscovery.k8s.io`` ``version`` v2 or v2beta1 (same shape)."""
    if version not in ("v2", "v2beta1"):
        raise ValueError(f"unsupported aggregated discovery version {version!r}")
    groups = _by_group(types)
    if legacy:
        items = [_group_discovery("", groups[""])] if "" in groups else []
    else:
        items = [_group_discovery(g, groups[g]) for g in sorted(groups, key=_group_key) if g]
    return {
        "kind": "APIGroupDiscoveryList",
        "apiVersion": f"apidiscovery.k8s.io/{version}",
        "metadata": {},
        "items": items,
    }


def aggregated_media_type(version: str = "v2") -> str:
    """The Content-Type of an aggregated discovery response."""
    return AGGREGATED_MEDIA_TYPE if version == "v2" else AGGREGATED_MEDIA_TYPE_V2BETA1
