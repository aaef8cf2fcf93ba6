"""PodDisruptionBudget (policy/v1), PriorityClass (scheduling.k8s.io/v1) and RuntimeClass
(node.k8s.io/v1).

PDB: as in Kubernetes, ``minAvailable`` and ``maxUnavailable`` may not both be set, and
setting neither is accepted (the disruption controller then allows no disruption).
"""

from __future__ import annotations

import re
from typing import Any

from kvert.api.types import Obj

from . import names
from .common import (
    Causes,
    child,
    dicts,
    duplicate,
    forbidden,
    get_bool,
    get_dict,
    get_int,
    get_list,
    get_str,
    get_str_map,
    immutable,
    invalid,
    not_supported,
    parse_time,
    required,
    type_error,
)
from .meta import validate_label_selector, validate_object_meta, validate_object_meta_update
from .pod import PREEMPTION_POLICIES, validate_tolerations
from .resourcelist import parse_resource_list
from .workloads import int_or_percent, not_more_than_100_percent

UNHEALTHY_POD_EVICTION_POLICIES = ("AlwaysAllow", "IfHealthyBudget")
HIGHEST_USER_DEFINABLE_PRIORITY = 1_000_000_000
SYSTEM_PRIORITY_CLASS_PREFIX = "system-"
SYSTEM_PRIORITY_CLASSES = {
    "system-node-critical": 2_000_001_000,
    "system-cluster-critical": 2_000_000_000,
}


# -- PodDisruptionBudget ------------------------------------------------------------------------

def validate_pdb(pdb: Obj) -> Causes:
    errs = validate_object_meta(pdb, namespaced=True)
    errs.extend(_validate_pdb_spec(get_dict(pdb, "spec", "", errs), "spec"))
    return errs


def validate_pdb_update(new: Obj, old: Obj) -> Causes:
    errs = validate_object_meta_update(new, old)
    errs.extend(_validate_pdb_spec(get_dict(new, "spec", "", errs), "spec"))
    return errs


def _validate_pdb_spec(spec: Obj, path: str) -> Causes:
    errs: Causes = []
    if spec.get("minAvailable") is not None and spec.get("maxUnavailable") is not None:
        errs.append(invalid(path, spec, "minAvailable and maxUnavailable cannot be both set"))
    for field in ("minAvailable", "maxUnavailable"):
        value = spec.get(field)
        if value is None:
            continue
        p = child(path, field)
        field_errs, number, pct = int_or_percent(value, p)
        errs.extend(field_errs)
        errs.extend(not_more_than_100_percent(value, number, pct, p))
    errs.extend(validate_label_selector(spec.get("selector"), child(path, "selector")))
    policy = spec.get("unhealthyPodEvictionPolicy")
    if policy is not None and policy not in UNHEALTHY_POD_EVICTION_POLICIES:
        errs.append(not_supported(child(path, "unhealthyPodEvictionPolicy"), policy,
                                  UNHEALTHY_POD_EVICTION_POLICIES))
    return errs


def validate_pdb_status_update(new: Obj, old: Obj) -> Causes:
    errs = validate_object_meta_update(new, old)
    status = get_dict(new, "status", "", errs)
    for field in ("disruptionsAllowed", "currentHealthy", "desiredHealthy", "expectedPods",
                  "observedGeneration"):
        value = get_int(status, field, "status", errs, bits=32 if field != "observedGeneration" else 64)
        if value is not None and value < 0:
            errs.append(invalid(f"status.{field}", value, "must be greater than or equal to 0"))
    errs.extend(validate_conditions(get_list(status, "conditions", "status", errs), "status.conditions"))
    return errs


_CONDITION_STATUSES = ("False", "True", "Unknown")
_REASON_FMT = "[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?"
_REASON_RE = re.compile(_REASON_FMT)


def validate_conditions(conditions: list[Any], path: str) -> Causes:
    """``metav1.Condition`` lists (``ValidateConditions``)."""
    errs: Causes = []
    seen: set[str] = set()
    for _, p, cond in dicts(conditions, path, errs):
        ctype = get_str(cond, "type", p, errs)
        if ctype in seen:
            errs.append(duplicate(child(p, "type"), ctype))
        seen.add(ctype)
        errs.extend(names.validate_label_name(ctype, child(p, "type")))
        status = cond.get("status")
        if status not in _CONDITION_STATUSES:
            errs.append(not_supported(child(p, "status"), status, _CONDITION_STATUSES))
        generation = get_int(cond, "observedGeneration", p, errs)
        if generation is not None and generation < 0:
            errs.append(invalid(child(p, "observedGeneration"), generation,
                                "must be greater than or equal to zero"))
        if parse_time(cond.get("lastTransitionTime")) is None:
            errs.append(required(child(p, "lastTransitionTime"), "must be set"))
        reason = get_str(cond, "reason", p, errs)
        if not reason:
            errs.append(required(child(p, "reason"), "must be set"))
        elif not _REASON_RE.fullmatch(reason):
            errs.append(invalid(child(p, "reason"), reason, names.regex_error(
                "a condition reason must start with alphabetic character, optionally followed by a "
                "string of alphanumeric characters or '_,:', and must end with an alphanumeric "
                "character or '_'", _REASON_FMT, "my_name", "MY_NAME",
                "MyName", "ReasonA,ReasonB", "ReasonA:ReasonB")))
    return errs


# -- PriorityClass -----------------------------------------------------------------------------

def validate_priority_class(pc: Obj) -> Causes:
    errs = validate_object_meta(pc, namespaced=False)
    value = get_int(pc, "value", "", errs, bits=32)
    value = value if value is not None else 0
    global_default = get_bool(pc, "globalDefault", "", errs) or False
    name = ""
    if isinstance(pc.get("metadata"), dict) and isinstance(pc["metadata"].get("name"), str):
        name = pc["metadata"]["name"]
    if name.startswith(SYSTEM_PRIORITY_CLASS_PREFIX):
        problem = _system_class_problem(name, value, global_default)
        if problem:
            errs.append(forbidden("metadata.name", "priority class names with 'system-' prefix are "
                                                   f"reserved for system use only. error: {problem}"))
    elif value > HIGHEST_USER_DEFINABLE_PRIORITY:
        errs.append(forbidden("value", "maximum allowed value of a user defined priority is "
                                       f"{HIGHEST_USER_DEFINABLE_PRIORITY}"))
    policy = pc.get("preemptionPolicy")
    if policy is not None and policy not in PREEMPTION_POLICIES:
        errs.append(not_supported("preemptionPolicy", policy, PREEMPTION_POLICIES))
    get_str(pc, "description", "", errs)
    return errs


def _system_class_problem(name: str, value: int, global_default: bool) -> str:
    expected = SYSTEM_PRIORITY_CLASSES.get(name)
    if expected is None:
        return f"{name} is not a known system priority class"
    if value != expected:
        return f"value of {name} PriorityClass must be {expected}"
    if global_default:
        return f"globalDefault of {name} PriorityClass must be false"
    return ""


def validate_priority_class_update(new: Obj, old: Obj) -> Causes:
    errs = validate_object_meta_update(new, old)
    if new.get("value", 0) != old.get("value", 0):
        errs.append(forbidden("value", "may not be changed in an update."))
    new_policy = new.get("preemptionPolicy") or "PreemptLowerPriority"
    old_policy = old.get("preemptionPolicy") or "PreemptLowerPriority"
    if new_policy != old_policy:
        errs.append(immutable("preemptionPolicy", new.get("preemptionPolicy")))
    return errs


# -- RuntimeClass --------------------------------------------------------------------------------

def validate_runtime_class(rc: Obj) -> Causes:
    errs = validate_object_meta(rc, namespaced=False)
    handler = get_str(rc, "handler", "", errs)
    if not handler:
        errs.append(required("handler"))
    else:
        errs.extend(names.validate_with(names.name_is_dns_label, handler, "handler"))
    overhead = rc.get("overhead")
    if overhead is not None:
        if not isinstance(overhead, dict):
            errs.append(type_error("overhead", overhead, "object"))
        elif "podFixed" in overhead:
            parse_resource_list(overhead.get("podFixed"), "overhead.podFixed", errs)
    scheduling = rc.get("scheduling")
    if scheduling is not None:
        if not isinstance(scheduling, dict):
            errs.append(type_error("scheduling", scheduling, "object"))
        else:
            errs.extend(names.validate_labels(get_str_map(scheduling, "nodeSelector", "scheduling",
                                                          errs), "scheduling.nodeSelector"))
            errs.extend(validate_tolerations(get_list(scheduling, "tolerations", "scheduling", errs),
                                             "scheduling.tolerations"))
    return errs


def validate_runtime_class_update(new: Obj, old: Obj) -> Causes:
    errs = validate_object_meta_update(new, old)
    if new.get("handler") != old.get("handler"):
        errs.append(immutable("handler", new.get("handler")))
    body = validate_runtime_class(new)
    errs.extend(c for c in body if not c.field.startswith("metadata"))
    return errs

