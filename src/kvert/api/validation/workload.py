"""Workload (``scheduling.k8s.io/v1alpha1``, KEP-4671 gang scheduling, alpha in 1.35) and the
pod's reference to it, as ``pkg/apis/scheduling/validation`` and ``pkg/apis/core/validation``
check them.

A Workload lists 1..8 pod groups, each a unique DNS-label ``name`` with exactly one policy,
``basic: {}`` or ``gang: {minCount: N > 0}``, and may name its controller
(``controllerRef``: optional DNS-subdomain ``apiGroup``, required path-segment ``kind`` and
``name``). ``podGroups`` and a set ``controllerRef`` are immutable; upstream 1.35 reports
those two changes at the paths ``podGroups`` and ``controllerRef`` (without ``spec.``), and
so does kvert.

A pod's ``spec.workloadRef`` names a Workload (a DNS subdomain), one of its pod groups (a
DNS label) and optionally a ``podGroupReplicaKey`` (a DNS label); like the rest of the pod
spec it cannot change after creation.
"""

from __future__ import annotations

from typing import Any

from kvert.api.types import Obj

from . import names
from .common import (
    IS_NOT_POSITIVE_MSG,
    Causes,
    child,
    dict_field,
    dicts,
    duplicate,
    get_dict,
    get_int,
    get_list,
    get_str,
    immutable,
    invalid,
    required,
    too_many,
    type_error,
)
from .meta import validate_object_meta, validate_object_meta_update

WORKLOAD_MAX_POD_GROUPS = 8


def _path_segment_problems(name: str) -> list[str]:
    """``IsValidPathSegmentName``."""
    if name in (".", ".."):
        return [f"may not be '{name}'"]
    return [f"may not contain '{c}'" for c in ("/", "%") if c in name]


def validate_workload(workload: Obj) -> Causes:
    errs = validate_object_meta(workload, namespaced=True)
    errs.extend(_workload_spec(get_dict(workload, "spec", "", errs), "spec"))
    return errs


def validate_workload_update(new: Obj, old: Obj) -> Causes:
    errs = validate_object_meta_update(new, old)
    spec = get_dict(new, "spec", "", errs)
    old_spec = dict_field(old, "spec")
    errs.extend(_workload_spec(spec, "spec"))
    if old_spec.get("controllerRef") is not None and \
            spec.get("controllerRef") != old_spec.get("controllerRef"):
        errs.append(immutable("controllerRef", spec.get("controllerRef")))
    if (spec.get("podGroups") or []) != (old_spec.get("podGroups") or []):
        errs.append(immutable("podGroups", spec.get("podGroups")))
    return errs


def _workload_spec(spec: Obj, path: str) -> Causes:
    errs: Causes = []
    if spec.get("controllerRef") is not None:
        ref_path = child(path, "controllerRef")
        ref = spec["controllerRef"]
        if isinstance(ref, dict):
            errs.extend(_controller_ref(ref, ref_path))
        else:
            errs.append(type_error(ref_path, ref, "object"))
    groups_path = child(path, "podGroups")
    groups = get_list(spec, "podGroups", path, errs)
    if not groups:
        errs.append(required(groups_path, "must have at least one item"))
    elif len(groups) > WORKLOAD_MAX_POD_GROUPS:
        errs.append(too_many(groups_path, len(groups), WORKLOAD_MAX_POD_GROUPS))
    else:
        seen: set[str] = set()
        for _, p, group in dicts(groups, groups_path, errs):
            errs.extend(_pod_group(group, p, seen))
    return errs


def _controller_ref(ref: Obj, path: str) -> Causes:
    errs: Causes = []
    api_group = get_str(ref, "apiGroup", path, errs)
    if api_group:
        errs.extend(names.validate_dns1123_subdomain(api_group, child(path, "apiGroup")))
    for field in ("kind", "name"):
        value = get_str(ref, field, path, errs)
        if not value:
            errs.append(required(child(path, field)))
        else:
            errs.extend(invalid(child(path, field), value, m) for m in _path_segment_problems(value))
    return errs


def _pod_group(group: Obj, path: str, seen: set[str]) -> Causes:
    errs: Causes = []
    name = get_str(group, "name", path, errs)
    errs.extend(names.validate_with(names.name_is_dns_label, name, child(path, "name")))
    if name in seen:
        errs.append(duplicate(child(path, "name"), name))
    else:
        seen.add(name)
    policy_path = child(path, "policy")
    policy = get_dict(group, "policy", path, errs)
    set_fields = [f"`{f}`" for f in ("basic", "gang") if policy.get(f) is not None]
    if not set_fields:
        errs.append(required(policy_path, "exactly one of `basic`, `gang` is required"))
    elif len(set_fields) > 1:
        errs.append(invalid(policy_path, "{" + ", ".join(set_fields) + "}",
                            "exactly one of `basic`, `gang` is required, but multiple fields are "
                            "set"))
    elif policy.get("gang") is not None:
        gang_path = child(policy_path, "gang")
        gang = get_dict(policy, "gang", policy_path, errs)
        min_count = get_int(gang, "minCount", gang_path, errs, bits=32) or 0
        if min_count <= 0:
            errs.append(invalid(child(gang_path, "minCount"), min_count, IS_NOT_POSITIVE_MSG))
    return errs


def validate_workload_reference(ref: Any, path: str) -> Causes:
    """A pod's ``spec.workloadRef``."""
    if not isinstance(ref, dict):
        return [type_error(path, ref, "object")]
    errs: Causes = []
    for field, check in (("name", names.name_is_dns_subdomain), ("podGroup", names.name_is_dns_label)):
        value = get_str(ref, field, path, errs)
        if not value:
            errs.append(required(child(path, field)))
        else:
            errs.extend(names.validate_with(check, value, child(path, field)))
    replica_key = get_str(ref, "podGroupReplicaKey", path, errs)
    if replica_key:
        errs.extend(names.validate_with(names.name_is_dns_label, replica_key,
                                        child(path, "podGroupReplicaKey")))
    return errs


__all__ = ["WORKLOAD_MAX_POD_GROUPS", "validate_workload", "validate_workload_reference",
           "validate_workload_update"]
